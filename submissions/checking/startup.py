"""The start-up speed-ups: each trades a little plainness for time, so each is here with what it saves.

Measured on the 2-core development machine (bench/ingest.py ingests the v5.1 round, 373 MB in 1,669 logs;
the ingest takes 7-10 s there). Drop one when a measurement says it no longer pays.

The target they serve: issue 27's ingest of the whole v5.1 round through two workers within 3.5× the
decompress-and-read floor (bench/ingest.py prints the ratio). Not re-measured without them yet: that
measurement decides whether each stays.

- **No system checks on ingest** (`SKIP_SYSTEM_CHECKS`): Django's checks (URLs, admin, templates) say nothing
  about a bundle; importing what they inspect costs 0.45 s before the first part reaches a worker.
  `manage.py check` and runserver still run them.
- **Freeze at exit** (`freeze_at_exit`): Python's exit runs the cycle collector over every object left
  (Django, Celery, the rules: about 110,000); frozen, they are passed over. 0.25 s of each manage.py command
  (1.26 s against 1.54 s for a command that loads what an eager ingest loads, mean of 8 each).
- **Freeze before the pool forks** (`before_forking`, at worker_init): the RCP checker's scipy is imported
  once in the worker's main process, then every object made so far is frozen, as Python's gc docs advise
  before a fork: the pool processes' collections no longer walk them, nor write to the memory pages they
  share with the main process. One full collection in a forked child: 70 ms and 35 MB of pages copied from
  the parent unfrozen, 1 ms and 1 MB frozen.
- **No cycle collection while a log is checked** (`no_cycle_collection`, around check_run): a log's events
  are a few hundred thousand small dicts and lists, none in a cycle; while they are built the cycle collector
  would scan them again and again. Reference counting still frees them; cycles made meanwhile are collected
  afterwards.
"""

from __future__ import annotations

import contextlib
import gc

# For a management command's `requires_system_checks`: none of Django's system checks before it runs.
SKIP_SYSTEM_CHECKS: list[str] = []


def freeze_at_exit() -> None:
    """Called last in manage.py: Python's exit then leaves what is still alive to reference counting."""
    gc.freeze()


def before_forking() -> None:
    """Called at worker_init, in the worker's main process, before the pool forks."""
    from .rules import rcp

    rcp.preload()  # scipy: a second to import, once here instead of in each pool process
    gc.freeze()


@contextlib.contextmanager
def no_cycle_collection():
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
