"""Tests for submissions.synthetic.logs: synthetic logs round-trip through parse_lines + summarize."""

import pytest

from submissions.checking.logs import parse_file, parse_lines, summarize
from submissions.synthetic.logs import mllog_run, mlperf05_run


@pytest.fixture(autouse=True)
def media():
    """Shadow the project-wide autouse fixture that needs Django settings: these tests are pure Python."""


MLLOG_ARGS = dict(
    benchmark="llama2_70b_lora",
    org="DemoOrg",
    division="closed",
    status="onprem",
    platform="8xDemo-GPU",
    seed=4242,
    start_ms=1_750_000_000_000,
    minutes=25.5,
    target=0.925,
)


def test_mllog_run_is_deterministic():
    assert mllog_run(**MLLOG_ARGS) == mllog_run(**MLLOG_ARGS)
    assert mllog_run(**MLLOG_ARGS) != mllog_run(**{**MLLOG_ARGS, "seed": 1})


def test_mllog_run_round_trips():
    text = mllog_run(
        **MLLOG_ARGS, evals=4, hyperparameters={"global_batch_size": 8, "opt_name": "adamw"}
    )
    log = parse_lines(text.splitlines())
    assert log.formats == {"mllog"} and log.problems == []
    s = summarize(log, require_init_stop_before_run_start=True)
    assert s.success and s.status == "success" and s.failure_reason == ""
    assert s.run_start == 1_750_000_000.0
    assert s.time_to_train_s == pytest.approx(25.5 * 60)
    assert s.init_stop < s.run_start
    assert s.seed == 4242 and s.quality_target == 0.925
    assert s.submission == {
        "benchmark": "llama2_70b_lora",
        "org": "DemoOrg",
        "division": "closed",
        "status": "onprem",
        "platform": "8xDemo-GPU",
    }
    assert s.hyperparameters["global_batch_size"] == 8 and s.hyperparameters["opt_name"] == "adamw"
    assert s.eval_x == "samples" and len(s.eval_curve) == 4
    xs = [x for x, _ in s.eval_curve]
    assert xs == sorted(xs) and all(x % 8 == 0 for x in xs)
    # llama2_70b_lora's eval_accuracy is a loss: lower is better, only the last eval reaches the target.
    assert s.eval_curve[-1][1] <= 0.925 and all(m > 0.925 for _, m in s.eval_curve[:-1])


def test_mllog_run_failure_is_aborted_short_of_target():
    s = summarize(parse_lines(mllog_run(**MLLOG_ARGS, success=False).splitlines()))
    assert not s.success and s.status == "aborted"
    assert s.failure_reason.startswith("run_stop status is 'aborted'")
    assert s.eval_curve[-1][1] > 0.925
    assert s.time_to_train_s == pytest.approx(25.5 * 60)


def test_mllog_run_direction_can_be_given():
    s = summarize(parse_lines(mllog_run(**MLLOG_ARGS, higher_is_better=True).splitlines()))
    assert s.eval_curve[-1][1] >= 0.925 and all(m < 0.925 for _, m in s.eval_curve[:-1])
    s = summarize(
        parse_lines(
            mllog_run(
                **{**MLLOG_ARGS, "benchmark": "rgat", "target": 0.72}, higher_is_better=False
            ).splitlines()
        )
    )
    assert s.eval_curve[-1][1] <= 0.72 and all(m > 0.72 for _, m in s.eval_curve[:-1])


def test_mllog_run_follows_the_benchmarks_eval_schedule():
    s = summarize(parse_lines(mllog_run(**MLLOG_ARGS).splitlines()))
    xs = [x for x, _ in s.eval_curve]
    assert xs[0] == 1536 and all(
        b - a == 384 for a, b in zip(xs, xs[1:])
    )  # as the reference logs evaluate
    assert xs[-1] in (3456, 3840)  # at or above the RCP mean for global_batch_size 8
    s = summarize(
        parse_lines(mllog_run(**{**MLLOG_ARGS, "benchmark": "rgat", "target": 0.72}).splitlines())
    )
    assert s.eval_x == "epoch" and s.eval_curve[0][0] == 0.05 and s.eval_curve[-1][0] in (0.95, 1.0)
    assert (
        s.hyperparameters["opt_name"] == "adam" and s.hyperparameters["global_batch_size"] == 32768
    )


def test_mllog_run_of_another_benchmark_keeps_the_generic_settings():
    s = summarize(
        parse_lines(
            mllog_run(**{**MLLOG_ARGS, "benchmark": "resnet", "target": 0.759}).splitlines()
        )
    )
    assert s.success and s.hyperparameters["opt_name"] == "sgd" and len(s.eval_curve) == 5
    assert s.eval_curve[-1][1] >= 0.759 and all(m < 0.759 for _, m in s.eval_curve[:-1])


def test_mlperf05_run_round_trips(tmp_path):
    text = mlperf05_run(
        benchmark="resnet", seed=7, start_s=1_541_660_914.5, minutes=300, target=0.749, evals=6
    )
    assert text == mlperf05_run(
        benchmark="resnet", seed=7, start_s=1_541_660_914.5, minutes=300, target=0.749, evals=6
    )
    path = tmp_path / "result_0.txt"
    path.write_text(text)
    log = parse_file(path)
    assert log.formats == {"mlperf-0.5"} and log.problems == []
    assert [e.key for e in log.events] == [e.key for e in parse_lines(text.splitlines()).events]
    s = summarize(log)
    assert s.success and s.status == "success"
    assert s.run_start == pytest.approx(1_541_660_914.5, abs=1e-6)
    assert s.time_to_train_s == pytest.approx(300 * 60, abs=1e-3)
    assert s.seed == 7 and s.quality_target == 0.749 and s.submission["benchmark"] == "resnet"
    assert s.eval_x == "epoch" and len(s.eval_curve) == 6 and s.eval_curve[-1][1] >= 0.749


def test_mlperf05_run_failure():
    text = mlperf05_run(
        benchmark="ncf", seed=1, start_s=1000.0, minutes=2, target=0.635, success=False, evals=3
    )
    s = summarize(parse_lines(text.splitlines()))
    assert not s.success and s.status == "aborted" and s.eval_curve[-1][1] < 0.635
    assert s.time_to_train_s == pytest.approx(120.0, abs=1e-6)


def test_the_demo_round_is_believed_by_the_clock_and_plausibility_checks(tmp_path):
    """make run's demo (when the real rounds are absent) must not be held by the checks of forged clocks:
    its times come from the published rounds' fewest accelerator-minutes."""
    from submissions.checking import rules
    from submissions.synthetic.bundles import demo_systems, write_bundle
    from submissions.synthetic.logs import BENCHMARKS

    keys = frozenset(BENCHMARKS)  # the v5.1 benchmarks the generator knows
    runs = {key: 3 for key in keys}
    targets = {key: BENCHMARKS[key]["target"] for key in keys}
    specs = demo_systems(8, runs, seed=7)
    assert any(
        spec.nodes * spec.accelerators_per_node >= 256 for spec in specs
    )  # large systems too
    folder = write_bundle(tmp_path, "Demo Org", specs, targets)
    errors = []
    for log in sorted(folder.rglob("result_*.txt")):
        ctx = rules.RunContext(
            ruleset="5.1.0",
            benchmark=log.parent.name,
            benchmark_keys=keys,
            division="closed",
            quality_target=targets[log.parent.name],
            higher_is_better=BENCHMARKS[log.parent.name]["higher_is_better"],
        )
        errors += [
            (f.rule, log.parent.parent.name, log.parent.name)
            for f in rules.check_run(log, log.name, ctx).findings
            if f.rule.startswith(("run.clock", "run.stop"))
        ]
    assert errors == []
    for spec in specs:
        for key, minutes in spec.results.items():
            count = spec.nodes * spec.accelerators_per_node
            assert (
                rules.plausibility.check_speed(
                    key, min(minutes) * 60, spec.accelerator_model, count
                )
                == []
            )
