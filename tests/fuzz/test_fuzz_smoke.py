"""Each fuzz target runs its seeds and a few hundred inputs made from them without a crash (bin/fuzz.py
runs them longer in CI: `make fuzz`)."""

import re
import subprocess
import sys

import pytest

from ..conftest import ROOT

TARGETS = sorted(p.stem.removeprefix("fuzz_") for p in (ROOT / "tests" / "fuzz").glob("fuzz_*.py"))

RUNS = 300

pytest.importorskip("atheris", reason="atheris is not installed (requirements-dev.txt)")


def test_every_reader_the_issue_names_has_a_target():
    assert TARGETS == ["layout", "logs", "systems", "unpack"]


@pytest.mark.parametrize("target", TARGETS)
def test_the_target_runs_from_its_seeds_without_a_crash(target, tmp_path):
    run = subprocess.run(
        [
            sys.executable,
            "bin/fuzz.py",
            # A count of inputs rather than a time: the same work on any machine. 300 took 1.4-2.9 s a
            # target here; 3 s of fuzzing (before) made 1,200-13,000 inputs and 4.8-5.4 s of CPU a target.
            "--runs",
            str(RUNS),
            "--seconds",
            "60",  # a bound only
            "--artifacts",
            str(tmp_path / "crashes"),
            target,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    executions = int(
        re.search(rf"^{target}\s+([\d,]+) executions", run.stdout, re.M).group(1).replace(",", "")
    )
    assert executions == RUNS, run.stdout  # the seeds (4 to 6) and inputs made from them
    assert not list((tmp_path / "crashes").glob("*"))
