"""Scoring: olympic mean, failed runs as infinitely slow, first-converging runs (v0.5 NCF)."""

from submissions import scoring


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
