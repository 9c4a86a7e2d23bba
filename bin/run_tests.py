#!/usr/bin/env python
"""Run the test suite against PostgreSQL and Redis when they answer, else embedded, in parallel processes.

Prints which services are used, so that a run without them says so instead of
passing silently; the tests that need them skip with that reason. Ends with the run's wall time, the CPU
of its processes and a fixed loop's time on this machine (summary), to read beside the run's times.

One pytest-xdist worker process per Redis database pair, two per core: TEST_BROKER_URL and TEST_CACHE_URL
each name one database per worker, comma-separated (by default four workers: 15, 13, 11 and 9 for the
brokers, 14, 12, 10 and 8 for the shared cache); one of each runs the suite in one process. Each worker
takes its own from
TEST_BROKER_URLS and TEST_CACHE_URLS (tests/conftest.py), and pytest-django gives it its own test
database (test_<name>_gw0, ...).

Stopped (Ctrl-C, or SIGTERM as `make` passes on), it stops pytest and its workers as Ctrl-C would,
lets them end their fixtures, then ends any process a test started that is still there: every one
carries TEST_RUN_MARKER in its environment.
"""

import os
import signal
import subprocess
import sys
import time
import uuid
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from services import answers  # bin/services.py, beside this script

# synchronous_commit off, a setting of each connection (not of the server): a commit returns before its WAL
# reaches the disk, which a test database that is thrown away never needs. Transactional tests commit, and
# empty their tables, hundreds of times: the leaderboard, review and accounts tests 108 s with it on, 92 s off.
NO_SYNC = "options=-c%20synchronous_commit%3Doff"
PG_URL = os.environ.get("TEST_DATABASE_URL", f"postgres://postgres@127.0.0.1:5432/portal?{NO_SYNC}")
BROKER_URLS = os.environ.get(
    "TEST_BROKER_URL", ",".join(f"redis://127.0.0.1:6379/{n}" for n in (15, 13, 11, 9))
).split(",")
# Redis databases the tests of the shared cache (tests/portal/test_shared_cache.py) may empty.
CACHE_URLS = os.environ.get(
    "TEST_CACHE_URL", ",".join(f"redis://127.0.0.1:6379/{n}" for n in (14, 12, 10, 8))
).split(",")
# Workers per core. A third of the suite's time is tests waiting on processes of their own (workers killed
# and replaced, a database cut for 30 s, leases running out) with a core free: on two cores, from a fresh
# clone, quiet, 1,840 tests took 681 s on two workers, 574-593 s on four, 681 s on six (the cores then
# saturated: 17 min 09 s of user and system CPU against 14 min 29 s on four).
WORKERS_PER_CORE = 2
# A stopped run's fixtures get this long to stop what they started before the rest is killed.
STOP_GRACE_S = 30
# A fixed piece of Python work, timed on every core at once before and after the tests and printed
# beside the run's wall and CPU times: the machines the suite has run on changed speed by up to 1.6x
# within minutes and 2.5x between sessions. On this one the loop took 0.44-0.68 s alone and 0.9-1.8 s
# on both cores at once (two hyperthreads of one core, or a shared host), so it runs on every core, as
# the suite does. About 2-3 s a run. It is a reading, not a scale: it took 0.43-0.46 s beside a run of
# 807 s here, about 0.67 s beside runs of 475 s.
REFERENCE_ADDITIONS = 10_000_000


def workers(args: list[str]) -> list[str]:
    """pytest-xdist's options: as many workers as Redis database pairs, at most WORKERS_PER_CORE a core,
    none where the arguments choose (-n, -p no:xdist, --pdb, --trace) or xdist is not installed."""
    count = min(len(BROKER_URLS), len(CACHE_URLS), WORKERS_PER_CORE * (os.cpu_count() or 1))
    chosen = {"--numprocesses", "no:xdist", "--pdb", "--trace", "--collect-only", "--co"}
    if count < 2 or chosen & set(args) or any(a.startswith("-n") for a in args):
        return []
    try:
        import xdist  # noqa: F401
    except ImportError:
        print("pytest-xdist is not installed: one process (pip install -r requirements-dev.txt)")
        return []
    # loadgroup: tests spread one at a time, except those of a group (tests/conftest.py's
    # pytest_collection_modifyitems), which share a costly fixture and run in one worker.
    return ["-n", str(count), "--dist", "loadgroup"]


def environment() -> dict[str, str]:
    env = dict(os.environ)
    for name, urls in (
        ("PostgreSQL", [PG_URL]),
        ("Redis", BROKER_URLS),
        ("Redis for the shared cache", CACHE_URLS),
    ):
        for url in urls:
            state = "used" if answers(url) else "NOT REACHABLE: tests that need it will skip"
            print(f"{name} at {url}: {state}")
    if answers(PG_URL):
        env["DATABASE_URL"] = PG_URL
    if all(map(answers, BROKER_URLS)):
        env["CELERY_BROKER_URL"] = BROKER_URLS[0]  # the first worker's, and a lone process's
        env["TEST_BROKER_URLS"] = ",".join(BROKER_URLS)
    # The suite runs on each process's own cache; the shared cache's tests give theirs to the
    # servers they start.
    for name in ("CACHE_URL", "TEST_CACHE_URL", "TEST_CACHE_URLS"):
        env.pop(name, None)
    if all(map(answers, CACHE_URLS)):
        env["TEST_CACHE_URL"] = CACHE_URLS[0]
        env["TEST_CACHE_URLS"] = ",".join(CACHE_URLS)
    env.setdefault("MEDIA_ROOT", os.path.abspath("var/test-media"))
    # Bytecode is written as Python does by default, where the machine's image turned it off: the suite starts
    # about 150 Python processes (Celery workers, servers, commands), each of which otherwise compiled the
    # portal's modules from source again.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["TEST_RUN_MARKER"] = uuid.uuid4().hex
    return env


def left_behind(marker: str) -> list[int]:
    """Pids of the processes, other than this one, whose environment holds the run's marker (Linux's
    /proc; elsewhere none are found)."""
    needle = f"TEST_RUN_MARKER={marker}".encode()
    found = []
    for environ in Path("/proc").glob("[0-9]*/environ"):
        try:
            if needle in environ.read_bytes().split(b"\0"):
                found.append(int(environ.parent.name))
        except OSError:  # gone meanwhile, or not ours to read
            pass
    return [pid for pid in found if pid != os.getpid()]


def end_left_behind(marker: str) -> None:
    """SIGTERM what the run left, then SIGKILL what is still there after 5 s."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        pids = left_behind(marker)
        if not pids:
            return
        if sig == signal.SIGTERM:
            print(f"ending {len(pids)} processes the tests left behind: {pids}", file=sys.stderr)
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 5
        while left_behind(marker) and time.monotonic() < deadline:
            time.sleep(0.1)


def reference_loop_s() -> float:
    """CPU seconds this process takes to add up REFERENCE_ADDITIONS numbers in a Python loop."""
    started = time.process_time()
    total = 0
    for number in range(REFERENCE_ADDITIONS):
        total += number
    return time.process_time() - started


def reference_s() -> float:
    """The mean of reference_loop_s over one process per core, all at once."""
    cores = os.cpu_count() or 1
    with ProcessPoolExecutor(cores) as pool:
        times = [pool.submit(reference_loop_s) for _ in range(cores)]
        return sum(t.result() for t in times) / cores


def children_cpu_s() -> float:
    """User and system CPU of the processes this one has waited for, and those they waited for."""
    used = os.times()
    return used.children_user + used.children_system


def summary(wall_s: float, cpu_s: float, before_s: float, after_s: float) -> str:
    """The run's wall time, the CPU of the processes it waited for (pytest, its workers and what they
    started and reaped: servers, Celery workers, Chromium's driver), and the reference loop's times."""
    return (
        f"this run: {wall_s:.1f} s wall, {cpu_s:.1f} core-seconds of CPU in its processes; "
        f"the reference loop ({REFERENCE_ADDITIONS:,} additions on each core at once) took {before_s:.2f} s "
        f"before it and {after_s:.2f} s after"
    )


def main() -> int:
    args = sys.argv[1:]
    env = environment()
    command = [sys.executable, "-m", "pytest", *workers(args), *args]
    if {"--pdb", "--trace"} & set(args):
        # A debugger reads the terminal, which only its foreground process group may: as before.
        return subprocess.call(command, env=env)
    before_s = reference_s()
    # The loop's processes are reaped children too: the run's CPU is counted from here.
    started, cpu_before_s = time.monotonic(), children_cpu_s()
    # A stop is a SIGINT to pytest, which a process inherits ignored where it was started in the
    # background of a shell without job control (`make test &` in a script): pytest then ran on to the
    # grace's SIGKILL, its fixtures never ended. A handler of Python's own is not inherited across
    # exec: pytest starts with the default.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    # pytest in a process group of its own, with its workers: a stop reaches them all at once, as
    # Ctrl-C in a terminal would, and nothing else.
    pytest = subprocess.Popen(command, env=env, process_group=0)
    stopped = []

    def stop(signum, frame):
        stopped.append(signum)
        if len(stopped) == 1:  # pytest and its workers end their fixtures (KeyboardInterrupt)
            os.killpg(pytest.pid, signal.SIGINT)
        else:  # asked again: at once
            os.killpg(pytest.pid, signal.SIGKILL)

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, stop)
    try:
        deadline = None
        while (code := pytest.poll()) is None:
            if stopped and deadline is None:
                deadline = time.monotonic() + STOP_GRACE_S
            if deadline is not None and time.monotonic() > deadline:
                os.killpg(pytest.pid, signal.SIGKILL)
            time.sleep(0.2)
    finally:
        end_left_behind(env["TEST_RUN_MARKER"])
    wall_s, cpu_s = time.monotonic() - started, children_cpu_s() - cpu_before_s
    print(summary(wall_s, cpu_s, before_s, reference_s()))
    return 128 + stopped[0] if stopped else code


if __name__ == "__main__":
    sys.exit(main())
