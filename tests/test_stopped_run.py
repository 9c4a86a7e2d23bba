"""A test run stopped mid-way leaves no process behind: bin/run_tests.py (what `make test` runs) stopped by
SIGTERM (`kill` of make, which passes it on), also when started in the background of a script (SIGINT
ignored), or by Ctrl-C in its terminal (SIGINT to its process group), while its two xdist workers each
hold a server started in a session of its own, one by a fixture that stops it and one that no one stops
(as a test's own `make run` or moto's server were left)."""

import os
import signal
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from . import nested_run

HOLDING = '''
import os, subprocess, sys, time
from pathlib import Path

import pytest

STARTED = Path(os.environ["STOP_TEST_STARTED"])


def server():
    """A process in a session of its own, as tests/server.py and tests/worker.py start theirs."""
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True)


@pytest.fixture
def stopped_by_its_fixture():
    process = server()
    yield process
    process.terminate()
    process.wait()
    (STARTED / f"torn-down-{os.getpid()}").write_text("")


@pytest.mark.parametrize("n", [1, 2])
def test_holds_two_servers(n, stopped_by_its_fixture):
    server()  # no one stops this one
    (STARTED / f"started-{n}").write_text(str(os.getpid()))
    time.sleep(600)
'''


def _processes_with(marker: str) -> list[int]:
    found = []
    for environ in Path("/proc").glob("[0-9]*/environ"):
        try:
            if marker.encode() in environ.read_bytes().split(b"\0"):
                found.append(int(environ.parent.name))
        except OSError:  # gone meanwhile, or not ours to read
            pass
    return found


def _in_the_background():
    """SIGINT ignored, as a shell without job control starts `make test &` (a script's, CI's)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.skipif(
    not Path("/proc/self/environ").exists(), reason="finds the processes through /proc (Linux)"
)
@pytest.mark.parametrize("how", ["sigterm", "ctrl-c", "sigterm-in-the-background"])
def test_a_stopped_run_leaves_no_process_behind(tmp_path, how):
    pytest.importorskip("xdist", reason="pytest-xdist is not installed (requirements-dev.txt)")
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "run" / "test_holding.py").write_text(HOLDING)
    started = tmp_path / "started"
    started.mkdir()
    marker = f"STOP_TEST_MARKER={uuid.uuid4().hex}"
    env = nested_run.environment(
        workers=2,
        STOP_TEST_STARTED=str(started),
        STOP_TEST_MARKER=marker.split("=", 1)[1],
    )
    run = subprocess.Popen(
        nested_run.command("-p", "xdist", str(tmp_path / "run")),
        cwd=tmp_path / "run",
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group, as make's in a terminal
        preexec_fn=_in_the_background if how == "sigterm-in-the-background" else None,
    )
    try:
        deadline = time.monotonic() + 120
        while len(list(started.glob("started-*"))) < 2:
            assert run.poll() is None, run.stdout.read().decode()
            assert time.monotonic() < deadline, "the two tests did not start within 2 minutes"
            time.sleep(0.2)
        pids = {p.read_text() for p in started.glob("started-*")}
        assert len(pids) == 2, "both tests ran in one process: not two workers"
        assert len(_processes_with(marker)) >= 7  # run_tests, pytest, 2 workers, 4 servers

        if how.startswith("sigterm"):
            run.send_signal(signal.SIGTERM)
        else:
            os.killpg(run.pid, signal.SIGINT)
        output = run.communicate(timeout=90)[0].decode()
        assert run.returncode != 0, output
        assert {p.name.removeprefix("torn-down-") for p in started.glob("torn-down-*")} == pids, (
            "a worker's fixtures were not ended:\n" + output
        )
        left = _processes_with(marker)
        assert left == [], f"left behind: {left}\n{output}"
    finally:
        for pid in _processes_with(marker):
            os.kill(pid, signal.SIGKILL)
