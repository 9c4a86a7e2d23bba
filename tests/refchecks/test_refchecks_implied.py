"""The throughput a result's logs imply, on logs written here and read by the portal's log parser, and the
verdict that compares it with an agent's measurement."""

import json

import pytest

from submissions.checking.logs import parse_lines, summarize
from submissions.refchecks import verdict
from submissions.refchecks.implied import implied_throughput, run_samples, run_work


def mllog(records: list[tuple[int, str, object, dict]]) -> list[str]:
    """:::MLLOG lines from (time in ms, key, value, metadata)."""
    return [
        ":::MLLOG "
        + json.dumps(
            {
                "namespace": "",
                "time_ms": t,
                "event_type": "POINT_IN_TIME",
                "key": key,
                "value": value,
                "metadata": {"file": "train.py", "lineno": n, **metadata},
            }
        )
        for n, (t, key, value, metadata) in enumerate(records, 1)
    ]


def samples_log(seconds: float, evals: list[int], gbs: int = 16) -> list[str]:
    """An LLM-style log: evaluations at samples_count, run_stop `seconds` after run_start."""
    start = 1_700_000_000_000
    records = [(start - 10, "global_batch_size", gbs, {}), (start, "run_start", None, {})]
    records += [
        (start + 1000 * (k + 1), "eval_accuracy", 4.0 - k * 0.1, {"samples_count": n})
        for k, n in enumerate(evals)
    ]
    records.append((start + round(seconds * 1000), "run_stop", None, {"status": "success"}))
    return mllog(records)


def epochs_log(seconds: float, last_epoch: float, train_samples: int | None) -> list[str]:
    start = 1_700_000_000_000
    records = [(start - 10, "global_batch_size", 256, {})]
    if train_samples is not None:
        records.append((start - 5, "train_samples", train_samples, {}))
    records.append((start, "run_start", None, {}))
    for epoch in range(1, int(last_epoch) + 1):
        records.append((start + 1000 * epoch, "eval_accuracy", 0.1 * epoch, {"epoch_num": epoch}))
    if last_epoch != int(last_epoch):
        records.append((start + 9000, "eval_accuracy", 0.9, {"epoch_num": last_epoch}))
    records.append((start + round(seconds * 1000), "run_stop", None, {"status": "success"}))
    return mllog(records)


def summary(lines):
    return summarize(parse_lines(lines))


def test_a_log_counting_samples_implies_its_last_sample_count_over_time_and_accelerators():
    run = summary(samples_log(600.0, [12_288, 24_576, 159_744]))
    assert run.success and run.time_to_train_s == pytest.approx(600.0)
    assert run_samples(run, None) == (159_744, "samples_count 159,744 at the last evaluation")
    work = run_work(run, accelerators=8)
    assert work.per_accelerator == pytest.approx(159_744 / (600.0 * 8))  # 33.28 samples/s


def test_a_log_counting_epochs_uses_the_dataset_size_of_the_data_file_over_the_logged_one():
    run = summary(
        epochs_log(2000.0, 4, train_samples=4572)
    )  # RetinaNet logs batches as train_samples
    samples, how = run_samples(run, 1_170_301)
    assert samples == 4 * 1_170_301 and "dataset's size" in how
    assert run_work(run, 8, 1_170_301).per_accelerator == pytest.approx(4 * 1_170_301 / 16_000)


def test_without_a_dataset_size_the_logged_train_samples_counts_fractional_epochs_too():
    run = summary(epochs_log(100.0, 2.5, train_samples=1000))
    assert run_samples(run, None) == (
        2500.0,
        "2.5 epochs × 1,000 samples (train_samples as logged)",
    )


def test_epochs_without_any_dataset_size_imply_nothing_and_say_why():
    run = summary(epochs_log(100.0, 3, train_samples=None))
    samples, why = run_samples(run, None)
    assert samples is None and "dataset's size" in why
    assert implied_throughput([run], 8).reason == why


def test_the_result_figure_is_the_median_of_its_converged_runs():
    runs = [summary(samples_log(s, [1000, 10_000])) for s in (100.0, 200.0, 400.0)]
    figure = implied_throughput(runs, accelerators=2)
    assert [w.per_accelerator for w in figure.runs] == pytest.approx([50.0, 25.0, 12.5])
    assert figure.per_accelerator == pytest.approx(25.0)


def test_a_failed_run_is_left_out_and_a_result_with_none_converged_has_no_figure():
    good = summary(samples_log(100.0, [1000, 10_000]))
    failed = parse_lines(samples_log(50.0, [1000, 10_000])[:-1])  # no run_stop
    failed = summarize(failed)
    assert not failed.success
    assert implied_throughput([good, failed], 1).per_accelerator == pytest.approx(100.0)
    assert implied_throughput([failed], 1).reason == "no run converged"
    assert implied_throughput([good], 0).reason == "the system states no accelerator count"


def test_counted_runs_take_precedence_over_the_other_converged_ones():
    class Run:  # a leaderboard Run's fields
        def __init__(self, seconds, counted):
            self.eval_x, self.eval_curve, self.hyperparameters = "samples", [[0, 1], [1000, 2]], {}
            self.time_to_train_s, self.success, self.counted = seconds, True, counted

    runs = [Run(10.0, False), Run(100.0, True), Run(50.0, True)]
    assert implied_throughput(runs, 1).per_accelerator == pytest.approx((10 + 20) / 2)


JUDGE = dict(claimed_family="NVIDIA H100", cpu=False)


def test_a_measurement_within_the_tolerance_is_consistent():
    v = verdict.judge(200.0, 100.0, 3.0, measured_on="NVIDIA H100", **JUDGE)
    assert v.verdict == verdict.CONSISTENT and v.ratio == pytest.approx(2.0)
    assert "within the tolerance of 3x" in v.message


def test_beyond_the_tolerance_is_implausibly_fast_and_states_the_tolerance():
    v = verdict.judge(350.0, 100.0, 3.0, measured_on="NVIDIA H100", **JUDGE)
    assert v.verdict == verdict.IMPLAUSIBLY_FAST and v.ratio == pytest.approx(3.5)
    assert "3.50x" in v.message and "tolerance of 3x" in v.message


def test_other_hardware_is_labelled_and_not_judged():
    v = verdict.judge(1000.0, 100.0, 3.0, measured_on="NVIDIA V100", **JUDGE)
    assert v.verdict == verdict.OTHER_HARDWARE and "other hardware (NVIDIA V100" in v.message


def test_a_cpu_measurement_is_never_compared_with_a_gpu_claim():
    v = verdict.judge(1000.0, 0.5, 3.0, claimed_family="NVIDIA H100", measured_on=None, cpu=True)
    assert v.verdict == verdict.CPU and v.ratio is None and "never compared" in v.message


def test_the_tolerances_come_from_the_data_file():
    assert verdict.rule("llama2_70b_lora").tolerance == 4.0
    assert verdict.rule("retinanet").dataset_samples == 1_170_301
    assert verdict.rule("llama31_8b").probe and not verdict.rule("dlrm_dcnv2").probe
    assert verdict.rule("no-such-benchmark").tolerance == 3.0
