"""Every MLLOG line mlperf-logging's parsers read, the portal reads alike (issue 25): odd spacing, prefixes,
metadata shapes, times given as text; and records that give their time as time_s, in seconds, which some
loggers wrote and the portal now reads instead of dropping."""

import importlib
import json

import pytest

from submissions.checking.logs import parse_lines
from submissions.checking.rules import RunContext, check_run
from submissions.synthetic.logs import mllog_run

RULESETS = ["1.0.0", "2.0.0", "3.1.0", "4.0.0", "5.1.0"]
T_MS = 1_700_000_000_123


@pytest.fixture
def media():
    """Shadow the project-wide autouse fixture that needs Django settings: these tests are pure Python."""


def record(**fields) -> str:
    base = {"namespace": "", "time_ms": T_MS, "event_type": "POINT_IN_TIME", "key": "eval_accuracy"}
    base.update(value=0.5, metadata={"file": "x.py", "lineno": 3, "epoch_num": 2})
    base.update(fields)
    return json.dumps({k: v for k, v in base.items() if v is not ...})


VARIANTS = {
    "plain": ":::MLLOG " + record(),
    "two spaces after the marker": ":::MLLOG  " + record(),
    "a tab before the record": ":::MLLOG \t" + record(),
    "blanks after the record": ":::MLLOG " + record() + "   ",
    "a rank prefix": "[1,0]<stdout>: :::MLLOG " + record(),
    "a timestamped prefix": "2021-05-17 07:51:57,416 INFO :::MLLOG " + record(),
    "compact JSON": ":::MLLOG " + record().replace(": ", ":").replace(", ", ","),
    "keys in another order": ":::MLLOG "
    + json.dumps(
        {"key": "eval_accuracy", "value": 0.5, "metadata": {"epoch_num": 2}, "time_ms": T_MS}
    ),
    "time_ms as text": ":::MLLOG " + record(time_ms=str(T_MS)),
    "time_ms as a float": ":::MLLOG " + record(time_ms=T_MS + 0.25),
    "metadata null": ":::MLLOG " + record(metadata=None),
    "metadata a list": ":::MLLOG " + record(metadata=[1, 2]),
    "metadata empty": ":::MLLOG " + record(metadata={}),
    "metadata nested": ":::MLLOG "
    + record(metadata={"epoch_num": 2, "a": {"b": [1, {"c": None}]}}),
    "a value that is a dict": ":::MLLOG " + record(value={"loss": 2.5, "lr": [1e-5, 0]}),
    "a null value": ":::MLLOG " + record(value=None),
    "non-ASCII text": ":::MLLOG " + record(value="café"),
    "two markers on the line": ":::MLLOG noise :::MLLOG " + record(),
}


@pytest.mark.parametrize("ruleset", RULESETS)
@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_a_line_mlperf_logging_reads_the_portal_reads_alike(name, ruleset):
    parser = importlib.import_module(
        f"mlperf_logging.compliance_checker.mlp_parser.ruleset_{ruleset.replace('.', '')}"
    )
    [theirs], failed = parser.parse_generator([VARIANTS[name] + "\n"])
    assert failed == []  # the premise: the library reads it
    log = parse_lines([VARIANTS[name]])
    assert log.problems == [] and len(log.events) == 1, log.problems
    [ours] = log.events
    assert ours.key == theirs.key
    assert ours.time_s * 1000 == pytest.approx(theirs.timestamp, abs=1e-3)
    assert ours.value == theirs.value["value"]
    metadata = theirs.value["metadata"]
    if isinstance(metadata, dict):
        assert ours.metadata == {k: v for k, v in metadata.items() if k not in ("file", "lineno")}
    else:
        assert ours.metadata == {}


def test_a_record_timed_in_seconds_is_read_in_seconds():
    seconds = ":::MLLOG " + record(time_ms=..., time_s=T_MS / 1000)
    [event] = parse_lines([seconds]).events
    assert event.time_s == pytest.approx(T_MS / 1000) and event.key == "eval_accuracy"
    # time_ms wins where a record gives both; a time that is no number is a problem, as for time_ms.
    [both] = parse_lines([":::MLLOG " + record(time_s=1.0)]).events
    assert both.time_s == pytest.approx(T_MS / 1000)
    bad = parse_lines([":::MLLOG " + record(time_ms=..., time_s="soon")])
    assert bad.events == [] and "time_s" in bad.problems[0][1]


def in_seconds(text: str) -> str:
    """Every record of a log with its time_ms given as time_s, in seconds."""
    out = []
    for line in text.splitlines():
        at = line.find(":::MLLOG ")
        if at < 0:
            out.append(line)
            continue
        rec = json.loads(line[at + len(":::MLLOG ") :])
        rec["time_s"] = rec.pop("time_ms") / 1000
        out.append(line[:at] + ":::MLLOG " + json.dumps(rec))
    return "\n".join(out) + "\n"


def test_a_log_timed_in_seconds_is_checked_and_timed_as_the_same_log_in_milliseconds(tmp_path):
    text = mllog_run(
        benchmark="rgat",
        org="ACME",
        division="closed",
        status="onprem",
        platform="1xTEST",
        seed=1,
        start_ms=T_MS,
        minutes=21.0,
        target=0.72,
    )
    keys = frozenset({"rgat", "llama31_8b"})
    ctx = RunContext("5.1.0", "rgat", keys, quality_target=0.72)
    (tmp_path / "ms.txt").write_text(text)
    (tmp_path / "s.txt").write_text(in_seconds(text))
    in_ms = check_run(tmp_path / "ms.txt", "r/result_0.txt", ctx)
    in_s = check_run(tmp_path / "s.txt", "r/result_0.txt", ctx)
    assert in_ms.findings == [] and in_ms.summary.success
    [warning] = in_s.findings
    assert (warning.severity, warning.rule) == ("warning", "mlperf.time-in-seconds")
    assert warning.line == 1 and "time_s" in warning.message and warning.hint
    assert in_s.summary.success
    assert in_s.summary.time_to_train_s == pytest.approx(in_ms.summary.time_to_train_s, abs=1e-3)
    assert in_s.summary.run_start == pytest.approx(in_ms.summary.run_start)
