"""The budget of a step that reads a bundle: memory, CPU seconds and open files, set with setrlimit in the
process that runs the step (a Celery pool process, or the one running `manage.py ingest`) and restored when
the step ends.

A bundle is untrusted input: a number read from a name or a file must not size a loop or an allocation
(issue 34: one power log named node_99999999999999999999999.txt grew a pool process to 20 GB, the kernel
killed it, and the next one took the task and grew too). Each limit is counted from what the process holds
when the step starts, so that a long-lived worker's own memory and files are not charged to the step:

- memory: the address space (RLIMIT_AS) may grow by `memory_bytes`; an allocation past it raises
  MemoryError where it is made, and the memory taken so far is given back as that exception unwinds;
- CPU: `cpu_s` more seconds (RLIMIT_CPU): the kernel signals SIGXCPU, whose handler raises. Only in the
  main thread, where Python runs signal handlers (a step run in a web thread has Celery's limits instead);
- open files: `open_files` more descriptors (RLIMIT_NOFILE): an open past it fails with EMFILE, an OSError
  that the readers already say as an unreadable file.

A library imported for the first time inside a budget too small for it may end the process (OpenBLAS exits
when its buffers are refused): a worker imports the checks' libraries before its tasks (tasks.py). Starting a
thread needs 128 MiB of address space for glibc's arena (settings: TASK_MEMORY_BYTES's floor).

Either of the first two ends the step with OverBudget, which names the limit; the step says it as a finding
on the file it was reading. Wall time is Celery's time limits (CELERY_TASK_TIME_LIMIT,
CHECK_SOFT_TIME_LIMIT); bytes written are counted, as they are written, against the bundle's limits
(bundles/limits.py). No Django: the caller gives the budget (pipeline/common.py reads it from settings).
"""

from __future__ import annotations

import os
import resource
import signal
import threading
from dataclasses import dataclass

# What must end a step rather than become a finding of a check that caught it: Celery's time limits and a
# worker's end (by name: the domain does not import Celery), an interrupt, and a budget passed.
_STOPS = frozenset({"SoftTimeLimitExceeded", "TimeLimitExceeded", "Terminated", "WorkerLostError"})


def is_stop(exc: BaseException) -> bool:
    """An exception that must end the step (a time limit, a budget passed, an interrupt), never become a
    finding of the code that caught it. Out of memory is one: a MemoryError, or, while the address space is
    limited, a SystemError ("error return without exception set": msgspec's decoder, when an allocation of
    its fails, returns without saying so)."""
    return (
        not isinstance(exc, Exception)
        or isinstance(exc, MemoryError)
        or (isinstance(exc, SystemError) and _memory_limited())
        or type(exc).__name__ in _STOPS
    )


def _memory_limited() -> bool:
    return resource.getrlimit(resource.RLIMIT_AS)[0] != resource.RLIM_INFINITY


@dataclass(frozen=True)
class Budget:
    """What a step may add to its process; None (or 0) for no limit."""

    memory_bytes: int | None = None
    cpu_s: int | None = None
    open_files: int | None = None


class OverBudget(BaseException):
    """A step passed a limit of its budget. A BaseException, as Celery's time limits: the checks' own
    `except Exception` lets it through. `limit`: "memory", "CPU time" (or "time": Celery's soft time limit,
    said the same way by the tasks); `text`: the limit in words."""

    def __init__(self, limit: str, text: str):
        super().__init__(text)
        self.limit = limit
        self.text = text


def _address_space() -> int | None:
    """The process's address space now, in bytes (Linux); None where it cannot be read."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[0]) * resource.getpagesize()
    except (OSError, ValueError, IndexError):
        return None


def _highest_fd() -> int:
    try:
        return max(map(int, os.listdir("/proc/self/fd")), default=2)
    except (OSError, ValueError):
        return 2


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _mib(size: int | None) -> str:
    return f"{(size or 0) / 2**20:,.0f} MiB"


def _over_cpu(seconds: int):
    def handler(signum, frame):
        raise OverBudget("CPU time", f"more than its {seconds} s of CPU time")

    return handler


def within(budget: Budget) -> _Within:
    """Run the block inside `budget`, restored after; OverBudget when it passes the memory or the CPU limit."""
    return _Within(budget)


class _Within:
    """within()'s context manager. A class, not a generator: an allocation refused leaves the block with the
    memory it took still held (its traceback keeps its frames), so the way out allocates nothing before the
    limits are restored, from tuples made on the way in (a generator's way out, through contextlib, could
    fail to allocate first and leave the limit on the process)."""

    def __init__(self, budget: Budget):
        self.budget = budget
        self.restore: list[tuple[int, tuple[int, int]]] = []  # (limit, as it was), in the order set
        self.handler = None  # SIGXCPU's handler before the block, while the block has its own
        self.memory = False

    def __enter__(self):
        budget = self.budget
        if budget.open_files:
            self._lower(resource.RLIMIT_NOFILE, _highest_fd() + 1 + budget.open_files)
        if budget.cpu_s and threading.current_thread() is threading.main_thread():
            self.handler = signal.signal(signal.SIGXCPU, _over_cpu(budget.cpu_s))
            self._lower(resource.RLIMIT_CPU, int(_cpu_s()) + 1 + budget.cpu_s)
        held = _address_space() if budget.memory_bytes else None
        if held is not None:
            self._lower(resource.RLIMIT_AS, held + budget.memory_bytes)
            self.memory = True
        return self

    def _lower(self, which: int, soft: int) -> None:
        """The soft limit `which` lowered to `soft`, never above the hard limit."""
        before = resource.getrlimit(which)
        hard = before[1]
        if hard != resource.RLIM_INFINITY:
            soft = min(soft, hard)
        self.restore.append((which, before))
        resource.setrlimit(which, (soft, hard))

    def __exit__(self, kind, error, traceback):
        while self.restore:  # the last set first: the address space
            which, before = self.restore.pop()
            resource.setrlimit(which, before)
        if self.handler is not None:
            signal.signal(signal.SIGXCPU, self.handler)
        # Out of memory: a MemoryError, or a SystemError from a C extension that did not say so (is_stop).
        if self.memory and kind is not None and issubclass(kind, (MemoryError, SystemError)):
            error.with_traceback(None)  # the block's frames, and the memory they hold, go now
            raise OverBudget(
                "memory", f"more than its {_mib(self.budget.memory_bytes)} of memory"
            ) from None
        return False
