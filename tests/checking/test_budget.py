"""The budget of a step that reads a bundle (submissions/checking/budget.py), in this process: each limit ends
the step, or fails what passes it, and every limit is as it was afterwards. Through a run's check: power logs
past its memory end with the finding that names the limit and the file.

A budget is address space beyond what the process holds when the step starts, and a process keeps what it
freed: the check past it here allocates large blocks, which glibc maps anew whatever the process holds."""

import contextlib
import errno
import os
import re
import resource
import time

import pytest

from submissions.checking.budget import Budget, OverBudget, is_stop, within
from submissions.checking.bundles import FolderFiles
from submissions.checking.pipeline import checks
from submissions.checking.rules.mlperf import rcp
from submissions.synthetic.bundles import SystemSpec, write_bundle

LIMITS = (resource.RLIMIT_AS, resource.RLIMIT_CPU, resource.RLIMIT_NOFILE)


@pytest.fixture
def limits_kept():
    """Every limit the budget sets is as it was once the step has ended."""
    before = [resource.getrlimit(which) for which in LIMITS]
    yield
    assert [resource.getrlimit(which) for which in LIMITS] == before


def test_memory_past_the_budget_ends_the_step_and_is_there_again_after(limits_kept):
    with pytest.raises(OverBudget) as over:
        with within(Budget(memory_bytes=64 << 20)):
            bytearray(512 << 20)
    assert over.value.limit == "memory" and over.value.text == "more than its 64 MiB of memory"
    assert len(bytearray(512 << 20)) == 512 << 20  # the limit is lifted


def test_a_memory_error_is_a_stop_that_no_check_makes_a_finding_of():
    assert (
        is_stop(MemoryError()) and is_stop(OverBudget("memory", "")) and not is_stop(ValueError())
    )


def test_cpu_seconds_past_the_budget_end_the_step(limits_kept):
    started = time.process_time()
    with pytest.raises(OverBudget) as over:
        with within(Budget(cpu_s=1)):
            while time.process_time() - started < 30:  # the budget ends it in 1-2 s of CPU
                pass
    assert over.value.limit == "CPU time" and "1 s of CPU time" in over.value.text
    assert time.process_time() - started < 10


def test_files_past_the_budget_do_not_open(limits_kept):
    with within(Budget(open_files=8)), contextlib.ExitStack() as opened:
        with pytest.raises(OSError) as error:
            for _ in range(64):
                opened.enter_context(open(os.devnull, "rb"))
    assert error.value.errno == errno.EMFILE


def test_no_budget_sets_no_limit(limits_kept):
    with within(Budget()):
        assert len(bytearray(256 << 20)) == 256 << 20


RUN = {
    "pk": 1,
    "path": "Acme/results/alpha/retinanet/result_0.txt",
    "result__benchmark__key": "retinanet",
    "result__benchmark__quality_target": 0.34,
    "result__benchmark__higher_is_better": True,
    "result__system__division": "closed",
    "result__system__round__ruleset": "5.1.0",
    "result__system__round__require_init_stop_before_run_start": False,
    "result__system__round__history": False,
    "result__power_result": True,
    "result__system__nodes": 1,
    "power_files": ["Acme/results/alpha/retinanet/power/result_0/node_0.txt"],
}


def power_log(run_log: str, readings: int) -> str:
    """A node read every millisecond from run_start on, `readings` times, with watts that vary."""
    start = int(re.search(r'"time_ms": ?(\d+)[^\n]*"key": ?"run_start"', run_log).group(1))
    lines = [
        f':::MLLOG {{"key": "power_measurement_start", "time_ms": {start - 1000}, "value": null}}'
    ]
    lines += [
        f':::MLLOG {{"key": "power_reading", "time_ms": {start + k}, "value": {4000 + k % 97}.5}}'
        for k in range(readings)
    ]
    return "\n".join(lines) + "\n"


def test_a_check_past_its_memory_is_a_finding_naming_the_limit_and_the_file(settings, tmp_path):
    """A power log whose check needs more memory than the budget (52 MB held twice over, as the file and its
    records) gets power.over-budget, a warning on that file: the run keeps its time, not its energy. The
    run's log is checked as usual under the same budget."""
    write_bundle(tmp_path, "Acme", [SystemSpec("alpha", results={"retinanet": [10.0] * 5})], {})
    files = FolderFiles(tmp_path)
    names = frozenset({"retinanet"})
    power = tmp_path / RUN["power_files"][0]
    power.parent.mkdir(parents=True)
    power.write_text(power_log((tmp_path / RUN["path"]).read_text(), 600_000))
    # The checks' libraries imported first, as a worker imports them before its tasks: OpenBLAS, imported
    # inside a budget too small for its buffers, ends the process.
    rcp.preload()
    checks._check({**RUN, "result__power_result": False}, names, files)
    settings.CHECK_MEMORY_BYTES = 64 << 20
    fields, found = checks._check(RUN, names, files)
    assert [(f.rule, f.severity, f.file) for f in found] == [
        ("power.over-budget", "warning", RUN["power_files"][0])
    ]
    assert "more than its 64 MiB of memory" in found[0].message
    assert fields["success"] and fields["energy_j"] is None
