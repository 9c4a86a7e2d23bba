"""The v0.5 checks written as data (submissions/checking/rules/v05.toml), through check_run (no Django)."""

import tomllib

import pytest

from submissions.checking.rules import RunContext, check_run, v05
from submissions.synthetic.logs import mlperf05_run

from ...conftest import ROOT


@pytest.fixture
def media():
    """Shadow the project-wide autouse fixture that needs Django settings: these tests are pure Python."""


KEYS = frozenset({"resnet", "ssd", "maskrcnn", "gnmt", "transformer", "ncf", "minigo"})
RESNET = RunContext(ruleset="0.5.0", benchmark="resnet", benchmark_keys=KEYS, quality_target=0.749)
REL = "acme/entry/results/sys/resnet/result_0.txt"
T0 = 1541660000.0


def tag(t, key, value=None, bench="resnet"):
    tail = key if value is None else f"{key}: {value}"
    return f":::MLPv0.5.0 {bench} {T0 + t:.9f} (train.py:1) {tail}"


def resnet_lines():
    """A v0.5 ResNet run with every tag the published ResNet logs carry (line numbers count from 1)."""
    rules = v05.rules()
    expected = [*rules["all"]["expected"], *rules["benchmarks"]["resnet"]["expected"]]
    settings = [
        k
        for k in dict.fromkeys(expected)
        if k
        not in {
            "run_clear_caches",
            "run_final",
            "train_loop",
            "train_epoch",
            "eval_start",
            "eval_stop",
            "eval_target",
        }
    ]
    return [
        tag(0, "run_clear_caches"),  # 1
        tag(10, "run_start"),  # 2
        *[tag(11, key, "1") for key in settings],  # 3 ..
        tag(12, "eval_target", "0.749"),
        tag(13, "train_loop"),
        tag(14, "train_epoch", "1"),
        tag(100, "eval_start"),
        tag(101, "eval_accuracy", '{"epoch": 1, "value": 0.70}'),
        tag(102, "eval_stop"),
        tag(200, "train_epoch", "2"),
        tag(300, "eval_start"),
        tag(301, "eval_accuracy", '{"epoch": 2, "value": 0.751}'),
        tag(302, "eval_stop"),
        tag(303, "run_stop", '{"success": true}'),
        tag(304, "run_final"),
    ]


def check(tmp_path, lines, ctx=RESNET):
    path = tmp_path / "result_0.txt"
    path.write_text("\n".join(lines) + "\n")
    return check_run(path, REL, ctx)


def only(findings, rule):
    found = [f for f in findings if f.rule == rule]
    assert len(found) == 1, f"expected one {rule}, got {findings}"
    return found[0]


def line_of(lines, text):
    return next(i for i, line in enumerate(lines, start=1) if text in line)


def test_a_complete_resnet_run_has_no_findings(tmp_path):
    outcome = check(tmp_path, resnet_lines())
    assert outcome.findings == []
    assert outcome.summary.success and outcome.summary.time_to_train_s == pytest.approx(293.0)


def test_a_generated_run_has_warnings_at_most(tmp_path):
    text = mlperf05_run(benchmark="resnet", seed=3, start_s=T0, minutes=90, target=0.749)
    path = tmp_path / "result_0.txt"
    path.write_text(text)
    outcome = check_run(path, REL, RESNET)
    assert outcome.summary.success
    assert {f.severity for f in outcome.findings} <= {"warning"}
    assert {f.rule for f in outcome.findings} <= {"v05.expected-tag"}


def test_a_missing_required_tag_is_an_error(tmp_path):
    lines = [line for line in resnet_lines() if "eval_accuracy" not in line]
    f = only(check(tmp_path, lines).findings, "v05.required-tag")
    assert (f.severity, f.file, f.line) == ("error", REL, None) and "'eval_accuracy'" in f.message


def test_a_missing_expected_tag_is_a_warning(tmp_path):
    lines = [line for line in resnet_lines() if "run_final" not in line]
    f = only(check(tmp_path, lines).findings, "v05.expected-tag")
    assert f.severity == "warning" and "'run_final'" in f.message


def test_two_runs_in_one_file_are_an_error_at_the_second_run_start(tmp_path):
    first = resnet_lines()
    second = [
        tag(1000, "run_start"),
        tag(1100, "eval_accuracy", '{"epoch": 1, "value": 0.76}'),
        tag(1200, "run_stop", '{"success": true}'),
        tag(1201, "run_final"),
    ]
    lines = first + second
    outcome = check(tmp_path, lines)
    f = only(outcome.findings, "run.multiple-runs")
    assert (f.severity, f.line) == ("error", len(first) + 1)
    assert not outcome.summary.success


def test_repeats_of_one_line_are_not_several_runs(tmp_path):
    lines = resnet_lines()
    doubled = [
        x for line in lines for x in (line, "INFO:mlperf_compliance::" + line)
    ]  # NVIDIA printed twice
    assert check(tmp_path, doubled).findings == []


def test_an_unknown_tag_is_info_at_its_first_line(tmp_path):
    lines = resnet_lines()
    lines.insert(4, tag(11, "opt_lr", "0.1"))
    f = only(check(tmp_path, lines).findings, "v05.unknown-tag")
    assert (f.severity, f.line) == ("info", 5)


def test_an_eval_after_run_stop_is_an_error(tmp_path):
    lines = resnet_lines()
    lines.insert(len(lines) - 1, tag(303.5, "eval_accuracy", '{"epoch": 3, "value": 0.76}'))
    f = only(check(tmp_path, lines).findings, "v05.order")
    assert (f.severity, f.line) == ("error", len(lines) - 1)


def test_run_final_before_run_stop_is_a_warning(tmp_path):
    lines = resnet_lines()
    lines[-1] = tag(250, "run_final")
    f = only(check(tmp_path, lines).findings, "v05.order")
    assert (f.severity, f.line) == ("warning", len(lines))


def test_an_eval_target_below_the_rounds_is_a_warning(tmp_path):
    lines = resnet_lines()
    at = line_of(lines, "eval_target")
    lines[at - 1] = tag(12, "eval_target", "0.7")
    f = only(check(tmp_path, lines).findings, "v05.eval-target")
    assert (f.severity, f.line) == ("warning", at)


def test_the_last_eval_must_reach_the_rounds_target(tmp_path):
    lines = resnet_lines()
    at = line_of(lines, '"value": 0.751')
    lines[at - 1] = tag(301, "eval_accuracy", '{"epoch": 2, "value": 0.74}')
    outcome = check(tmp_path, lines)
    assert (only(outcome.findings, "run.quality-target").line) == at
    assert not outcome.summary.success


def test_a_log_of_another_benchmark_is_named(tmp_path):
    lines = [line.replace(" resnet ", " ssd ") for line in resnet_lines()]
    f = only(check(tmp_path, lines).findings, "run.benchmark-mismatch")
    assert f.line == 1


def test_the_rules_file_covers_every_benchmark_of_the_round():
    round_file = ROOT / "leaderboard" / "catalogue" / "rounds" / "training-v0.5.toml"
    with open(round_file, "rb") as f:
        benchmarks = {b["key"] for b in tomllib.load(f)["benchmarks"]}
    assert benchmarks <= set(v05.rules()["benchmarks"])
