"""Generated bundles pass the portal's own validation of training v5.1 (check_run, check_result, check_system).

Pure Python (no Django): each benchmark of the round gets one system with the round's number of
runs, written by submissions.synthetic.bundles.write_bundle and checked as the pipeline checks an
upload, with mlperf-logging's 5.1.0 compliance rules, RCPs and system description checker.
"""

import json
import time
import tomllib

import pytest

from submissions.checking.rules import (
    ResultContext,
    RunContext,
    RunFacts,
    SystemFacts,
    check_result,
    check_run,
    check_system,
)
from submissions.checking.rules.mlperf import library
from submissions.checking.systems import category_of, fields_of
from submissions.synthetic.bundles import SystemSpec, log_status, system_json, write_bundle
from submissions.synthetic.logs import BENCHMARKS, mllog_run

from ...conftest import ROOT

pytest.importorskip("mlperf_logging.compliance_checker.mlp_compliance")


@pytest.fixture
def media():
    """Shadow the project-wide autouse fixture that needs Django settings: these tests are pure Python."""


ROUND = tomllib.loads(
    (ROOT / "leaderboard" / "catalogue" / "rounds" / "training-v5.1.toml").read_text()
)
RULESET = ROUND["ruleset"]
BENCH = {b["key"]: b for b in ROUND["benchmarks"]}
KEYS = frozenset(BENCH)
TARGETS = {key: b["quality_target"] for key, b in BENCH.items()}
SUBMITTER = "Acme"
# A status per benchmark, so that every category's submission_status is checked against its system.
STATUS = dict(zip(sorted(BENCH), ["Available on-premise", "Available cloud", "Preview"] * 3))


def validate(tmp_path, bench, minutes, status="Available on-premise"):
    """(system findings, {run name: RunOutcome}, result findings) for one generated result folder."""
    spec = SystemSpec(f"sys_{bench}", status=status, nodes=2, results={bench: minutes})
    root = write_bundle(tmp_path, SUBMITTER, [spec], TARGETS)
    desc = json.loads((root / "systems" / f"{spec.name}.json").read_text())
    fields = fields_of(desc, "system.json")
    system = SystemFacts(
        description=desc,
        description_path=f"{SUBMITTER}/systems/{spec.name}.json",
        division=fields["division"],
        category=fields["category"],
    )
    ctx = RunContext(
        ruleset=RULESET,
        benchmark=bench,
        benchmark_keys=KEYS,
        division=fields["division"],
        quality_target=BENCH[bench]["quality_target"],
        higher_is_better=BENCH[bench].get("higher_is_better", True),
        require_init_stop_before_run_start=ROUND.get("require_init_stop_before_run_start", False),
    )
    folder = root / "results" / spec.name / bench
    rel = f"{SUBMITTER}/results/{spec.name}/{bench}"
    outcomes, facts = {}, []
    for n in range(len(minutes)):
        outcome = check_run(folder / f"result_{n}.txt", f"{rel}/result_{n}.txt", ctx)
        outcomes[f"result_{n}.txt"] = outcome
        s = outcome.summary
        facts.append(
            RunFacts(
                rel_path=f"{rel}/result_{n}.txt",
                success=s.success,
                seed=s.seed,
                hyperparameters=s.hyperparameters,
                submission=s.submission,
                first_line=s.first_line,
            )
        )
    result = check_result(
        ResultContext(
            ruleset=RULESET,
            benchmark=bench,
            required_runs=BENCH[bench]["required_runs"],
            result_path=rel,
            result_dir=folder,
            division=fields["division"],
            category=fields["category"],
        ),
        facts,
        system,
        include_system=False,
    )
    return check_system(system, RULESET), outcomes, result


def problems(findings):
    return [(f.severity, f.rule, f.message) for f in findings if f.severity in ("error", "warning")]


def minutes_for(bench):
    return [30.0 + 0.5 * n for n in range(BENCH[bench]["required_runs"])]


@pytest.mark.parametrize("bench", sorted(BENCH))
def test_a_generated_result_passes_every_check(tmp_path, bench):
    minutes = minutes_for(bench)
    system, outcomes, result = validate(tmp_path, bench, minutes, STATUS[bench])
    assert problems(system) == []
    assert len(outcomes) == BENCH[bench]["required_runs"]
    for name, outcome in outcomes.items():
        assert problems(outcome.findings) == [], name
        assert outcome.summary.success, name
    assert problems(result) == []
    [rcp_finding] = [f for f in result if f.rule == "result.rcp"]
    assert rcp_finding.message.startswith("RCP check passed (RCP found for batch size")
    assert "normalised" not in rcp_finding.message  # no scaling.json needed
    times = [o.summary.time_to_train_s for o in outcomes.values()]
    assert times == pytest.approx([m * 60 for m in minutes])


@pytest.mark.parametrize(
    "status",
    [
        "Available on-premise",
        "Available cloud",
        "Preview",
        "Research, Development, or Internal (RDI)",
    ],
)
def test_the_logs_status_follows_the_systems_category(tmp_path, status):
    system, outcomes, result = validate(tmp_path, "retinanet", minutes_for("retinanet"), status)
    assert problems(system) == [] and problems(result) == []
    logged = {o.summary.submission["status"] for o in outcomes.values()}
    assert logged == {log_status(status)} and category_of(log_status(status)) == category_of(status)


def test_log_status_names():
    assert [log_status(s) for s in ["Available cloud", "Available on-premise", "Preview"]] == [
        "cloud",
        "onprem",
        "preview",
    ]


@pytest.mark.parametrize("bench", sorted(BENCH))
def test_a_failed_run_fails_only_for_not_converging(tmp_path, bench):
    minutes = minutes_for(bench)
    minutes[1] = None
    system, outcomes, result = validate(tmp_path, bench, minutes, STATUS[bench])
    assert problems(system) == []
    failed = outcomes.pop("result_1.txt")
    assert not failed.summary.success and failed.summary.status == "aborted"
    rules = {(f.severity, f.rule) for f in failed.findings if f.severity in ("error", "warning")}
    assert ("error", "run.not-successful") in rules
    # What necessarily follows: mlperf-logging's "at least one eval reaches the target" rule.
    others = [
        f
        for f in failed.findings
        if f.severity in ("error", "warning") and f.rule != "run.not-successful"
    ]
    assert all(f.rule == "mlperf.compliance" and "eval_accuracy" in f.message for f in others), (
        others
    )
    for name, outcome in outcomes.items():
        assert problems(outcome.findings) == [], name
    assert (
        problems(result) == []
    )  # olympic scoring may drop one failed run; the RCP check allows one


@pytest.mark.parametrize("bench", sorted(BENCH))
def test_the_table_agrees_with_the_round_and_the_rcps(bench):
    spec = BENCHMARKS[bench]
    assert spec["target"] == BENCH[bench]["quality_target"]
    assert spec["higher_is_better"] == BENCH[bench].get("higher_is_better", True)
    record = library.rcp_table(RULESET, bench).at(spec["hyperparameters"]["global_batch_size"])
    assert record is not None, "the table's global_batch_size has no RCP"
    low, high = spec["converge"]
    assert record["RCP Mean"] <= low <= high


def test_generation_is_deterministic(tmp_path):
    specs = [
        SystemSpec("a", results={b: minutes_for(b) for b in BENCH}),
        SystemSpec("b", status="Preview", results={"rgat": [None] + minutes_for("rgat")[1:]}),
    ]
    one, two = (
        write_bundle(tmp_path / "1", SUBMITTER, specs, TARGETS),
        write_bundle(tmp_path / "2", SUBMITTER, specs, TARGETS),
    )
    files = sorted(p.relative_to(one) for p in one.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(two) for p in two.rglob("*") if p.is_file())
    assert all((one / f).read_bytes() == (two / f).read_bytes() for f in files)


def test_the_system_description_is_strings_and_complete():
    desc = system_json(SUBMITTER, SystemSpec("x", accelerator_model="AMD Instinct MI355X"))
    assert all(isinstance(v, str) for k, v in desc.items() if k != "other_software_stack")


def test_lower_is_better_curves_fall_to_the_target():
    text = mllog_run(
        benchmark="llama31_8b",
        org="A",
        division="closed",
        status="onprem",
        platform="p",
        seed=1,
        start_ms=1_760_000_000_000,
        minutes=100,
        target=3.3,
    )
    values = [
        json.loads(line.split(":::MLLOG ", 1)[1])["value"]
        for line in text.splitlines()
        if '"eval_accuracy"' in line
    ]
    assert values[-1] <= 3.3 and all(v > 3.3 for v in values[:-1]) and values[0] > 5


def test_a_ten_run_result_is_quick(tmp_path):
    spec = SystemSpec(
        "s", results={"flux1": minutes_for("flux1")}
    )  # the longest schedule (35-38 evals)
    started = time.perf_counter()
    write_bundle(tmp_path, SUBMITTER, [spec], TARGETS)
    assert time.perf_counter() - started < 1.0
