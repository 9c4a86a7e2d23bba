"""check_run as a declared pipeline (issue 35, item 1): its steps in order, each run alone on a state of the run
built by hand or by the steps before it, and the state the only thing that passes between them (no Django)."""

import pytest

from submissions.checking.rules import RunContext, check_run, clock
from submissions.checking.rules import run as run_rules
from submissions.checking.rules.findings import Findings
from submissions.checking.rules.run import STEPS, RunState

from ...mllogs import REL, V51_KEYS, generated_rgat_log, mllog, write

RGAT = RunContext(ruleset="5.1.0", benchmark="rgat", benchmark_keys=V51_KEYS, quality_target=0.72)


@pytest.fixture
def media():
    """Shadow the project-wide autouse fixture that needs Django settings: these tests are pure Python."""


def state_of(path, ctx=RGAT, upto: str | None = None) -> RunState:
    """The state after the steps before `upto` (all of them when None)."""
    state = RunState(path, REL, ctx, Findings(REL))
    for step in STEPS:
        if step.name == upto:
            break
        if step.applies(state):
            step.run(state)
    return state


def step(name):
    return next(s for s in STEPS if s.name == name)


def test_the_steps_are_declared_in_order():
    assert [s.name for s in STEPS] == [
        "read the log",
        "report what the scan saw",
        "start and stop",
        "clock",
        "pace",
        "quality target",
        "benchmark key",
        "v0.5 rules",
        "compliance",
        "as in history",
        "success",
        "RCP facts",
    ]
    assert all(s.adds for s in STEPS)


def test_reading_the_log_adds_the_scan_the_log_its_lines_and_the_summary_and_no_finding(tmp_path):
    state = RunState(write(tmp_path, generated_rgat_log()), REL, RGAT, Findings(REL))
    step("read the log").run(state)
    assert state.scan is not None and state.log is not None and state.summary is not None
    # The lines the checker and the RCP reader take, as a tuple no later step can add to.
    assert isinstance(state.mllog_lines, tuple) and len(state.mllog_lines) > 10
    assert state.summary.time_to_train_s > 0
    assert list(state.found) == []


def test_a_v05_log_keeps_no_lines_for_the_checker(tmp_path):
    ctx = RunContext(ruleset="0.5.0", benchmark="resnet", benchmark_keys=frozenset({"resnet"}))
    state = RunState(write(tmp_path, "no events\n"), REL, ctx, Findings(REL))
    step("read the log").run(state)
    assert state.mllog_lines is None
    assert step("v0.5 rules").applies(state) and not step("compliance").applies(state)


def test_start_and_stop_alone_reports_a_missing_run_stop(tmp_path):
    text = "\n".join(line for line in generated_rgat_log().splitlines() if '"run_stop"' not in line)
    state = state_of(write(tmp_path, text + "\n"), upto="start and stop")
    assert list(state.found) == []
    step("start and stop").run(state)
    assert [f.rule for f in state.found] == ["run.no-run-stop"]


def test_pace_applies_only_to_a_run_whose_time_counts(tmp_path):
    state = state_of(write(tmp_path, generated_rgat_log()), upto="pace")
    assert step("pace").applies(state) and clock.paced(state.summary)
    state.summary.status = "aborted"
    assert not step("pace").applies(state)


def test_compliance_alone_takes_the_lines_from_the_state_with_the_verdict_of_reading_the_file(
    tmp_path,
):
    path = write(tmp_path, generated_rgat_log().replace('"submission_org"', '"submission_orgs"'))
    state = state_of(path, upto="compliance")
    step("compliance").run(state)
    from_state = [f for f in state.found if f.rule == "mlperf.compliance"]
    assert from_state and state.refused == from_state[0]

    again = state_of(path, upto="compliance")
    again.mllog_lines = None  # the checker reads the file itself
    step("compliance").run(again)
    assert [f for f in again.found if f.rule == "mlperf.compliance"] == from_state


def test_success_alone_fails_a_run_the_checker_refused(tmp_path):
    state = state_of(write(tmp_path, generated_rgat_log()), upto="success")
    assert state.summary.success and state.refused is None
    state.refused = run_rules.Finding("error", "mlperf.compliance", "a refusal", file=REL)
    step("success").run(state)
    assert not state.summary.success and "a refusal" in state.summary.failure_reason


def test_as_in_history_applies_only_in_history(tmp_path):
    path = write(tmp_path, generated_rgat_log())
    assert not step("as in history").applies(state_of(path, upto="as in history"))
    history = RunContext(
        ruleset="5.1.0",
        benchmark="rgat",
        benchmark_keys=V51_KEYS,
        quality_target=0.72,
        history=True,
    )
    assert step("as in history").applies(state_of(path, ctx=history, upto="as in history"))


def test_rcp_facts_read_the_lines_of_the_state(tmp_path):
    state = state_of(write(tmp_path, generated_rgat_log()), upto="RCP facts")
    assert step("RCP facts").applies(state)
    step("RCP facts").run(state)
    assert state.convergence and not state.convergence.get("unreadable")


def test_check_run_is_the_steps_in_order(tmp_path):
    path = write(tmp_path, generated_rgat_log())
    whole = check_run(path, REL, RGAT)
    state = state_of(path)
    assert state.outcome().findings == whole.findings
    assert state.outcome().summary == whole.summary
    assert state.outcome().convergence == whole.convergence
    # A pipeline of fewer steps is a pipeline too: reading alone finds nothing and settles nothing.
    read_only = check_run(path, REL, RGAT, steps=STEPS[:1])
    assert read_only.findings == [] and read_only.convergence is None


def test_a_line_the_parser_cannot_read_is_reported_by_its_step(tmp_path):
    lines = [mllog("init_start", None, 1), ':::MLLOG {"key": "broken', mllog("init_stop", None, 2)]
    state = state_of(write(tmp_path, "\n".join(lines) + "\n"), upto="report what the scan saw")
    assert list(state.found) == []
    step("report what the scan saw").run(state)
    assert any(f.rule == "run.bad-line" and f.line == 2 for f in state.found)
