"""Access to mlperf-logging: the import guard, its rule folders, and the temporary patches we run it under.

mlperf-logging is written as command-line tools: module-global state, files read by name,
reports through `logging` and `print`. We call its lower-level pieces inside the worker
process instead, and the few module attributes we swap for that (its YAML loader, its config
queue, a regular expression that is quadratic on long lines) are swapped only for the
duration of one call and always put back. Workers are processes (Celery prefork), never
threads, so no other code runs while a swap is in place.

The targets they serve: issue 27's validation at 8× or more mlperf-logging's checker alone with identical
verdicts (bench/validate.py), and no log that takes minutes (LinearRe: a 300 KB line took half a minute).
The swaps are the library's internals, so they live here alone; not re-measured without them yet.
"""

from __future__ import annotations

import contextlib
import functools
import io
import logging
import os
import re
from pathlib import Path

try:
    import mlperf_logging
    from mlperf_logging.compliance_checker import mlp_compliance
except ImportError:  # reported as a finding by the callers, never a crash
    mlperf_logging = mlp_compliance = None

USAGE = "training"


def available() -> bool:
    return mlp_compliance is not None


@functools.lru_cache(maxsize=1)
def version() -> str:
    try:
        from importlib.metadata import version as dist_version

        return dist_version("mlperf-logging")
    except Exception:  # not installed as a distribution (e.g. a source checkout)
        return "?"


@functools.lru_cache(maxsize=1)
def compliance_dir() -> Path:
    return Path(mlp_compliance.__file__).resolve().parent


def ruleset_tuple(ruleset: str) -> tuple[int, ...]:
    """'5.1.0' -> (5, 1, 0); anything odd -> () (sorts before every real ruleset)."""
    try:
        return tuple(int(part) for part in ruleset.split("."))
    except ValueError:
        return ()


_ABSENT = object()


@contextlib.contextmanager
def patched(target, name: str, value):
    """Set target.name = value for the duration of the block (module attributes of the library).
    A name the module does not have (e.g. `eval`, which shadows the builtin) is removed again."""
    old = getattr(target, name, _ABSENT) if name in vars(target) else _ABSENT
    setattr(target, name, value)
    try:
        yield value
    finally:
        if old is _ABSENT:
            delattr(target, name)
        else:
            setattr(target, name, old)


_STOPS = frozenset({"SoftTimeLimitExceeded", "TimeLimitExceeded", "Terminated", "WorkerLostError"})


def is_stop(exc: BaseException) -> bool:
    """An exception that must end the task (a time limit, an interrupt), never become a finding."""
    return not isinstance(exc, Exception) or type(exc).__name__ in _STOPS


class LinearRe:
    """Stands in for the `re` module inside mlperf-logging readers that strip a line's prefix with
    re.sub(".*" + TOKEN, TOKEN, line): that search restarts at every position after the match and
    is quadratic in the line length (a 300 KB line takes half a minute). The same result in
    linear time: keep the text from the last TOKEN on. Any other call goes to the real module."""

    def __init__(self, token: str):
        self.token = token
        self.pattern = ".*" + token

    def sub(self, pattern, repl, string, *args, **kwargs):
        if (
            pattern == self.pattern
            and repl == self.token
            and not args
            and not kwargs
            and "\n" not in string[:-1]
        ):
            i = string.rfind(self.token)
            return string if i < 0 else string[i:]
        return re.sub(pattern, repl, string, *args, **kwargs)  # noqa: B034 - re.sub's own signature, passed on

    def __getattr__(self, name):
        return getattr(re, name)


class Capture(logging.Handler):
    """Takes what the library logs (through the root logger, WARNING and up) and prints while it runs,
    so that none of it reaches the worker's own log; records of other code pass through unchanged."""

    def __init__(self):
        super().__init__(logging.NOTSET)
        self.records: list[logging.LogRecord] = []
        self.stdout = io.StringIO()
        self._stack = contextlib.ExitStack()
        self._saved: list[logging.Handler] = []

    def emit(self, record: logging.LogRecord) -> None:
        if _LIBRARY_PATH in (record.pathname or ""):
            if record.levelno >= logging.WARNING:
                self.records.append(record)
            return
        for handler in self._saved:
            if record.levelno >= handler.level:
                handler.handle(record)

    def messages(self) -> list[str]:
        out = []
        for record in self.records:
            try:
                out.append(record.getMessage())
            except Exception:  # a bad format string in the library's call
                out.append(str(record.msg))
        return out

    def printed(self) -> list[str]:
        return [line for line in self.stdout.getvalue().splitlines() if line.strip()]

    def __enter__(self):
        root = logging.getLogger()
        self._saved = root.handlers[:]
        root.handlers[:] = [self]
        self._stack.callback(root.handlers.__setitem__, slice(None), self._saved)
        self._stack.enter_context(contextlib.redirect_stdout(self.stdout))
        return self

    def __exit__(self, *exc):
        self._stack.close()
        return False


_LIBRARY_PATH = f"{os.sep}mlperf_logging{os.sep}"
