"""Scoring: olympic mean, failed runs as infinitely slow, first-converging runs (v0.5 NCF), the
failures a result tolerates and the words for why it has no score."""

import pandas as pd
import pytest

from leaderboard.catalogue.units import minutes
from submissions.checking import scoring
from submissions.checking.rules import no_score


def test_it_drops_the_fastest_and_slowest_and_averages_the_rest():
    score = scoring.olympic([10.0, 50.0, 20.0, 30.0, 40.0], required_runs=5)
    assert score.seconds == 30.0
    assert score.dropped == [0, 1]
    assert score.counted == [2, 3, 4]


def test_one_failed_run_counts_as_the_slowest():
    score = scoring.olympic([10.0, None, 20.0, 30.0, 40.0], required_runs=5)
    assert score.seconds == 30.0  # 20, 30, 40 remain after dropping 10 and the failure
    assert score.dropped == [0, 1]


def test_two_failed_runs_leave_no_score():
    score = scoring.olympic([10.0, None, 20.0, None, 40.0], required_runs=5)
    assert score.seconds is None
    assert "2 of 5 runs failed" in score.message


def test_too_few_runs_leave_no_score():
    score = scoring.olympic([10.0, 20.0, 30.0], required_runs=5)
    assert score.seconds is None
    assert "3 of the 5 required runs" in score.message


def test_only_the_required_number_of_runs_count():
    score = scoring.olympic([10.0, 20.0, 30.0, 1.0], required_runs=3)
    assert score.seconds == 20.0
    assert "first 3 of 4" in score.message


def test_three_runs_score_the_middle_one():
    assert scoring.olympic([300.0, 100.0, 200.0], required_runs=3).seconds == 200.0


def test_first_converging_takes_the_first_runs_that_converged():
    times = [None, 5.0, 1.0, None, 3.0, 9.0, 100.0]
    score = scoring.first_converging(times, counted_runs=4)
    # first four converged: positions 1, 2, 4, 5 → times 5, 1, 3, 9 → drop 1 and 9 → mean(3, 5)
    assert score.seconds == 4.0
    assert sorted(score.counted + score.dropped) == [1, 2, 4, 5]


def test_first_converging_needs_enough_converged_runs():
    score = scoring.first_converging([None, 1.0, None], counted_runs=2)
    assert score.seconds is None
    assert "1 runs converged; 2 are needed" in score.message


def test_speedup_is_reference_over_score():
    assert round(scoring.speedup(529877, 18094.65), 2) == 29.28
    assert scoring.speedup(None, 100.0) is None
    assert scoring.speedup(100.0, None) is None


# A result as finalize scores it: plain runs and the benchmark's rules in, score and words out.

OLYMPIC_5 = scoring.BenchmarkScoring("resnet", required_runs=5, reference_time_s=600.0)


def runs(*times, reason="no run_stop with success"):
    """RunTime per time to train; None is a failed run with `reason`."""
    failed = scoring.RunTime(None, success=False, failure_reason=reason)
    return [failed if t is None else scoring.RunTime(t, success=True) for t in times]


def test_the_score_is_the_olympic_mean_times_the_rcp_factor_and_speedup_follows_it():
    score = scoring.score_result(OLYMPIC_5, runs(10.0, 50.0, 20.0, 30.0, 40.0), scaling_factor=1.5)
    assert score.seconds == 45.0
    assert score.speedup == 600.0 / 45.0
    assert (score.counted, score.dropped, score.message) == ([2, 3, 4], [0, 1], "")


def test_a_rejected_run_or_a_success_without_a_time_counts_as_failed():
    rejected = scoring.RunTime(1.0, success=True, rejected=True)
    no_time = scoring.RunTime(None, success=True)
    assert rejected.seconds is None and no_time.seconds is None
    score = scoring.score_result(OLYMPIC_5, [rejected, *runs(20.0, 30.0, 40.0, 50.0)])
    assert score.seconds == 40.0  # the rejected fastest run is dropped as the slowest
    assert score.dropped == [0, 1]
    two_failed = scoring.score_result(OLYMPIC_5, [rejected, no_time, *runs(30.0, 40.0, 50.0)])
    assert two_failed.seconds is None


def test_no_score_says_why_with_the_most_common_reason_without_line_numbers():
    times = runs(None, None, 30.0, 40.0, None, reason="run_stop (line 12) without success")
    times[4] = scoring.RunTime(None, False, failure_reason="the quality target was not reached")
    score = scoring.score_result(OLYMPIC_5, times)
    assert (score.seconds, score.speedup, score.counted) == (None, None, [])
    assert score.message == (
        "3 of 5 runs failed; at most 1 may fail. Why: run_stop without success (2 runs)."
    )


def test_a_run_rejected_for_its_findings_alone_is_said_to_break_a_rule():
    rejected = [scoring.RunTime(1.0, success=True, rejected=True)] * 2
    score = scoring.score_result(OLYMPIC_5, [*rejected, *runs(30.0, 40.0, 50.0)])
    assert score.message.endswith(" Why: the log breaks a rule (2 runs).")


def test_the_message_is_cut_at_500_characters():
    score = scoring.score_result(OLYMPIC_5, runs(None, None, None, reason="x" * 600))
    assert score.message.startswith("3 of the 5 required runs were submitted. Why: xxx")
    assert len(score.message) == 500


def test_ingest_says_why_a_folder_without_runs_has_no_score_and_only_then():
    note = "No run log found: the folder is empty"
    assert scoring.score_result(OLYMPIC_5, [], ingest_note=note).message == note
    assert scoring.score_result(OLYMPIC_5, []).message == "0 of the 5 required runs were submitted."
    scored = scoring.score_result(OLYMPIC_5, runs(1.0, 2.0, 3.0, 4.0, 5.0), ingest_note=note)
    assert scored.message == ""


def test_first_converging_benchmarks_count_their_counted_runs_of_those_that_converged():
    ncf = scoring.BenchmarkScoring(
        "ncf", required_runs=7, scoring=scoring.FIRST_CONVERGING, counted_runs=4
    )
    score = scoring.score_result(ncf, runs(None, 5.0, 1.0, None, 3.0, 9.0, 100.0))
    assert (score.seconds, score.speedup) == (4.0, None)  # no reference time, no speedup
    assert sorted(score.counted + score.dropped) == [1, 2, 4, 5]


def test_unet3d_drops_four_runs_per_side_others_one():
    assert scoring.tolerated_error_files("unet3d") == 4
    assert scoring.tolerated_error_files("resnet") == 1
    unet3d = scoring.BenchmarkScoring("unet3d", required_runs=10)
    score = scoring.score_result(unet3d, runs(None, None, None, None, 5.0, 6.0, 7.0, 8.0, 9.0, 10))
    assert score.seconds == 9.5  # the four failures dropped as the slowest, 5 to 8 as the fastest
    assert score.counted == [8, 9]
    one_more = scoring.score_result(unet3d, runs(None, None, None, None, None, 6, 7, 8, 9, 10))
    assert one_more.seconds is None
    assert "5 of 10 runs failed; at most 4 may fail." in one_more.message


def test_a_scored_result_tolerates_its_failed_runs_up_to_the_limit():
    assert scoring.tolerated_runs(OLYMPIC_5, scored=True, failing_runs={7}) == {7}
    assert scoring.tolerated_runs(OLYMPIC_5, scored=True, failing_runs={7, 8}) == set()
    assert scoring.tolerated_runs(OLYMPIC_5, scored=False, failing_runs={7}) == set()
    assert scoring.tolerated_runs(OLYMPIC_5, scored=True, failing_runs=set()) == set()
    unet3d = scoring.BenchmarkScoring("unet3d", required_runs=40)
    assert scoring.tolerated_runs(unet3d, scored=True, failing_runs={1, 2, 3, 4}) == {1, 2, 3, 4}
    assert scoring.tolerated_runs(unet3d, scored=True, failing_runs={1, 2, 3, 4, 5}) == set()


def test_first_converging_tolerates_any_number_of_failed_runs_when_it_scores():
    ncf = scoring.BenchmarkScoring("ncf", 10, scoring="first-converging", counted_runs=5)
    assert scoring.tolerated_runs(ncf, scored=True, failing_runs={1, 2, 3}) == {1, 2, 3}
    assert scoring.tolerated_runs(ncf, scored=False, failing_runs={1, 2, 3}) == set()


def test_a_result_without_a_score_is_an_error_that_says_why():
    finding = no_score("3 of 5 runs failed; at most 1 may fail.", "A/results/s/resnet")
    assert (finding.severity, finding.rule) == ("error", "result.no-score")
    assert finding.file == "A/results/s/resnet"
    assert finding.message == "No score: 3 of 5 runs failed; at most 1 may fail."


def test_minutes_is_seconds_over_sixty_for_numbers_and_columns_and_keeps_none():
    assert minutes(90) == 1.5 and minutes(None) is None
    assert minutes(pd.Series([60.0, 30.0])).tolist() == [1.0, 0.5]


def test_the_no_score_reason_counts_failed_runs_by_rule_not_by_message():
    # Two runs fail the same rule with different words (their statuses differ); one fails another rule.
    failed = [
        scoring.RunTime(
            None, False, failure_reason="The log has no run_stop", failure_rule="run.no-run-stop"
        ),
        scoring.RunTime(
            None, False, failure_reason="status 'aborted'", failure_rule="run.not-successful"
        ),
        scoring.RunTime(
            None, False, failure_reason="status 'killed'", failure_rule="run.not-successful"
        ),
    ]
    score = scoring.score_result(OLYMPIC_5, [*failed, *runs(30.0, 40.0)])
    assert score.message == (
        "3 of 5 runs failed; at most 1 may fail. Why: run.not-successful (2 runs): status 'aborted'."
    )


UNET3D = scoring.BenchmarkScoring("unet3d", required_runs=40)


def test_history_scores_the_runs_there_are_as_the_summarizer_does():
    from mlperf_logging.result_summarizer.result_summarizer import _compute_olympic_average

    cases = [
        (UNET3D, [float(t) for t in range(100, 122)]),  # 22 of 40 runs: MLCommons published it
        (UNET3D, [None, None, *[float(t) for t in range(100, 120)]]),
        (OLYMPIC_5, [10.0, 20.0, 30.0, 40.0]),  # fewer than required
        (
            OLYMPIC_5,
            [10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 5.0],
        ),  # more: the summarizer reads them all
        (OLYMPIC_5, [None, 20.0, 30.0, 40.0]),
        (OLYMPIC_5, [20.0, 30.0]),  # nothing left after dropping one per side
    ]
    for bench, times in cases:
        most = scoring.tolerated_error_files(bench.key)
        dropped = sum(t is None for t in times)
        published = _compute_olympic_average([t for t in times if t is not None], dropped, most)
        score = scoring.score_result(bench, runs(*times), as_published=True)
        assert score.seconds == (published and pytest.approx(published, rel=1e-12)), times
        if published is not None and len(times) != bench.required_runs:
            assert "rule result.run-count" in score.message
        live = scoring.score_result(bench, runs(*times))
        if len(times) < bench.required_runs:  # a live round still needs the round's number of runs
            assert live.seconds is None and "required runs were submitted" in live.message


def test_history_scores_only_the_logs_the_summarizer_reads():
    # Intel's v1.0 MiniGo folder holds a script with MLPerf log lines beside its ten result_run*.txt: a log named
    # otherwise is a run of a live result, but the summarizer (glob result_*.txt) never read it.
    logs = runs(10.0, 20.0, 30.0, 40.0, 50.0)
    script = scoring.RunTime(None, False, failure_reason="no run_start", summarizer_reads=False)
    published = scoring.score_result(OLYMPIC_5, [*logs, script], as_published=True)
    assert (published.seconds, published.counted, published.dropped) == (30.0, [1, 2, 3], [0, 4])
    live = scoring.score_result(OLYMPIC_5, [*logs, script])
    assert live.seconds == 30.0 and "first 5 of 6" in live.message


def test_in_history_logs_named_otherwise_are_named_in_the_count_the_tools_make():
    """Issue 38, item 5: mlperf-logging's tools read result_*.txt only; a log named otherwise is read and
    checked, and the score message says it is no run of the published record, by name."""
    named = [scoring.RunTime(60.0 + i, True, name=f"result_{i}.txt") for i in range(5)]
    other = scoring.RunTime(1.0, True, summarizer_reads=False, name="train_run1.log")
    score = scoring.score_result(OLYMPIC_5, [*named, other], as_published=True)
    assert score.seconds == 62.0 and 5 not in score.counted + score.dropped
    assert score.message.startswith("The folder's 1 log named otherwise (train_run1.log) is read")
    alone = [
        scoring.RunTime(60.0, True, summarizer_reads=False, name=f"1234_{i}.log") for i in range(5)
    ]
    score = scoring.score_result(OLYMPIC_5, alone, as_published=True)
    assert score.seconds is None
    assert score.message.startswith("0 of the 5 required runs are named as mlperf-logging's")
    assert "(1234_0.log, 1234_1.log, 1234_2.log, …)" in score.message
    # A live round scores them all, as it did.
    assert scoring.score_result(OLYMPIC_5, alone).seconds == 60.0
