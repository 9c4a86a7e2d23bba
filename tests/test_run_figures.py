"""bin/run_tests.py ends with the figures a run's time is read by: its wall time, the CPU of its processes,
and the time of a fixed loop on the same machine (the machines the suite runs on change speed)."""

import re
import subprocess

from . import nested_run

BUSY = """
import time


def test_busy():
    started = time.process_time()
    while time.process_time() - started < 0.5:
        pass
"""


def test_a_run_ends_with_its_wall_time_its_cpu_and_the_reference_loop(tmp_path):
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "test_busy.py").write_text(BUSY)
    run = subprocess.run(
        nested_run.command("-q"),
        cwd=tmp_path,
        env=nested_run.environment(workers=1),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    last = run.stdout.strip().splitlines()[-1]
    figures = re.fullmatch(
        r"this run: ([\d.]+) s wall, ([\d.]+) core-seconds of CPU in its processes; the reference loop "
        r"\(10,000,000 additions on each core at once\) took ([\d.]+) s before it and ([\d.]+) s after",
        last,
    )
    assert figures, last
    wall, cpu, before, after = map(float, figures.groups())
    assert wall >= 0.5 and cpu >= 0.5  # the test's own half-second of CPU, in pytest's process
    assert before > 0 and after > 0
