"""The round's calendar (leaderboard/catalogue/calendar.py): phases at each moment and the upload refusals."""

from datetime import UTC, datetime, timedelta

import pytest

from leaderboard.catalogue import calendar
from leaderboard.catalogue.calendar import Calendar, phase, review_open, upload_refusal

OPENS = datetime(2025, 4, 1, 9, 0, tzinfo=UTC)
DEADLINE = datetime(2025, 5, 2, 17, 0, tzinfo=UTC)
REVIEW_ENDS = datetime(2025, 5, 20, 17, 0, tzinfo=UTC)
PUBLISH = datetime(2025, 6, 4, 15, 0, tzinfo=UTC)
LIVE = Calendar("Training v9.0", OPENS, DEADLINE, timedelta(minutes=30), REVIEW_ENDS, PUBLISH)
SECOND = timedelta(seconds=1)


@pytest.mark.parametrize(
    "now, expected",
    [
        (OPENS - SECOND, calendar.UPCOMING),
        (OPENS, calendar.OPEN),
        (DEADLINE - SECOND, calendar.OPEN),
        (DEADLINE, calendar.GRACE),
        (DEADLINE + timedelta(minutes=30) - SECOND, calendar.GRACE),
        (DEADLINE + timedelta(minutes=30), calendar.REVIEW),
        (REVIEW_ENDS, calendar.REVIEW),  # embargoed until publication
        (PUBLISH - SECOND, calendar.REVIEW),
        (PUBLISH, calendar.PUBLISHED),
    ],
)
def test_each_moment_of_a_live_round_has_its_phase(now, expected):
    assert phase(LIVE, now) == expected


def test_a_round_without_dates_is_history_and_refuses_nothing():
    history = Calendar("Training v0.5")
    assert phase(history, datetime(2030, 1, 1, tzinfo=UTC)) == calendar.HISTORY
    assert upload_refusal(history, datetime(2030, 1, 1, tzinfo=UTC), False) is None


def test_missing_boundaries_are_left_out():
    only_publish = Calendar("R", publish_at=PUBLISH)
    assert phase(only_publish, OPENS) == calendar.OPEN
    assert phase(only_publish, PUBLISH) == calendar.PUBLISHED
    no_grace = Calendar("R", OPENS, DEADLINE)
    assert phase(no_grace, DEADLINE) == calendar.REVIEW


def test_objections_close_at_the_end_of_review():
    assert not review_open(LIVE, DEADLINE)  # grace: still uploading
    assert review_open(LIVE, REVIEW_ENDS - SECOND)
    assert not review_open(LIVE, REVIEW_ENDS)


def test_uploads_are_taken_while_open_and_in_grace():
    for now in (OPENS, DEADLINE - SECOND, DEADLINE + timedelta(minutes=29)):
        assert upload_refusal(LIVE, now, False) is None


def test_an_upload_before_opening_is_told_when_it_opens():
    assert (
        upload_refusal(LIVE, OPENS - SECOND, False)
        == "Uploads to Training v9.0 open on Tuesday 1 April 2025, 09:00 UTC."
    )


def test_an_upload_after_the_deadline_is_told_the_deadline_and_grace():
    message = upload_refusal(LIVE, DEADLINE + timedelta(hours=1), False)
    assert message == (
        "The deadline for Training v9.0 was Friday 2 May 2025, 17:00 UTC (with its grace period, "
        "until Friday 2 May 2025, 17:30 UTC). During the review only a fix that a reviewer asked "
        "for is taken."
    )


def test_a_fix_a_reviewer_asked_for_is_taken_during_review_only():
    assert upload_refusal(LIVE, REVIEW_ENDS, True) is None
    assert "was published on Wednesday 4 June 2025, 15:00 UTC" in upload_refusal(
        LIVE, PUBLISH, True
    )


def test_times_are_written_in_utc_whatever_the_offset():
    from datetime import timezone

    paris = timezone(timedelta(hours=2))
    assert (
        calendar.when(datetime(2025, 5, 2, 19, 0, tzinfo=paris)) == "Friday 2 May 2025, 17:00 UTC"
    )
