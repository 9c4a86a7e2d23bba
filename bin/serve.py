#!/usr/bin/env python
"""The embedded portal in one process tree (`make run`): the web server, a Celery worker, Celery beat and
the worker of beat's own queue ("clock": the sweeper, the publication minute), which user work never delays.

Supervised so that stopping it, however it is stopped, leaves nothing behind:
- SIGTERM, SIGINT or SIGHUP here stops each child's process group and waits for it;
- each child is told by the kernel to stop when this process dies, even by SIGKILL (Linux);
- a worker or beat that exits is started again; when the web server exits, everything stops.
Beat runs as its own process, not inside the worker (`-B`), where it outlived a killed worker.

With --load, `manage.py load_sample_data` runs once beside them (not started again when it exits): it
submits the shared rounds, and the worker ingests them behind the pages, which answer at once.

Usage: serve.py [PORT] [--load]. Reads VAR_DIR (default ./var) for the beat's schedule file.
"""

import ctypes
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PR_SET_PDEATHSIG = 1
RESTART_PAUSE_S = 5  # a child that keeps failing is not restarted in a tight loop
STOP_GRACE_S = (
    15  # a worker finishes its task on SIGTERM; past this it is killed (its task is queued again)
)


def commands(port: str) -> dict[str, list[str]]:
    var = Path(os.environ.get("VAR_DIR", ROOT / "var"))
    var.mkdir(parents=True, exist_ok=True)
    celery = [sys.executable, "-m", "celery", "-A", "portal"]
    return {
        "web": [sys.executable, "manage.py", "runserver", "--noreload", port],
        "worker": [
            *celery,
            "worker",
            "-Q",
            "ingest,checks,celery",
            "--pool=solo",
            "--loglevel=WARNING",
        ],
        "clock": [
            *celery,
            "worker",
            "-Q",
            "clock",
            "-n",
            "clock@%h",
            "--pool=solo",
            "--loglevel=WARNING",
        ],
        "beat": [*celery, "beat", "-s", str(var / "celerybeat-schedule"), "--loglevel=WARNING"],
    }


def _stop_with_parent(parent: int):
    def preexec():
        try:
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        except (OSError, AttributeError):  # not Linux: the signal handlers still stop the children
            pass
        if os.getppid() != parent:  # the supervisor died before the request was made
            os._exit(1)

    return preexec


def start(command: list[str]) -> subprocess.Popen:
    return subprocess.Popen(
        command, cwd=ROOT, start_new_session=True, preexec_fn=_stop_with_parent(os.getpid())
    )


def stop(children: dict[str, subprocess.Popen]) -> None:
    for child in children.values():
        _signal_group(child, signal.SIGTERM)
    deadline = time.monotonic() + STOP_GRACE_S
    for child in children.values():
        try:
            child.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
        _signal_group(child, signal.SIGKILL)  # whatever is left of its group
        child.wait()


def _signal_group(child: subprocess.Popen, signum: int) -> None:
    try:
        os.killpg(child.pid, signum)
    except ProcessLookupError:
        pass


ONCE = {"load"}  # children that run to their end and are not started again


def main() -> int:
    args = sys.argv[1:]
    load = "--load" in args
    port = next((a for a in args if a != "--load"), "8000")
    stopping = []
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, lambda signum, _frame: stopping.append(signum))
    plan = commands(port)
    if load:
        plan["load"] = [sys.executable, "manage.py", "load_sample_data"]
    children = {name: start(command) for name, command in plan.items()}
    started = {name: time.monotonic() for name in children}
    try:
        while not stopping:
            time.sleep(0.5)
            for name, child in list(children.items()):
                if child.poll() is None:
                    continue
                if name in ONCE:
                    if child.returncode:
                        print(f"serve: the {name} exited ({child.returncode})", file=sys.stderr)
                    del children[name]
                    continue
                if name == "web":
                    print(
                        f"serve: the web server exited ({child.returncode}); stopping",
                        file=sys.stderr,
                    )
                    stopping.append(None)
                    break
                if time.monotonic() - started[name] >= RESTART_PAUSE_S:
                    print(
                        f"serve: the {name} exited ({child.returncode}); starting it again",
                        file=sys.stderr,
                    )
                    children[name], started[name] = start(plan[name]), time.monotonic()
    finally:
        stop(children)
    return 0


if __name__ == "__main__":
    sys.exit(main())
