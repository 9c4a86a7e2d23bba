"""The write side's statuses, one vocabulary (leaderboard/statuses.py): submissions' models take their
choices from it, so what the read side names by it is what the write side stores."""

from leaderboard import statuses
from submissions.models import Submission, Validation
from submissions.refchecks import verdict
from submissions.refchecks.models import ReferenceCheck


def test_the_models_take_their_statuses_from_the_shared_vocabulary():
    assert Submission.Status is statuses.SubmissionStatus
    assert Validation.Status is statuses.ValidationStatus
    assert Submission._meta.get_field("status").choices == statuses.SubmissionStatus.choices
    assert Validation._meta.get_field("status").choices == statuses.ValidationStatus.choices
    assert Submission.FINAL is statuses.SUBMISSION_FINAL
    assert ReferenceCheck.Verdict is statuses.ReferenceCheckVerdict
    assert (
        ReferenceCheck._meta.get_field("verdict").choices == statuses.ReferenceCheckVerdict.choices
    )


def test_the_pure_verdict_computes_the_vocabularys_values():
    """refchecks/verdict.py is of the domain, which imports no Django: it names the same values."""
    computed = {
        verdict.CONSISTENT,
        verdict.IMPLAUSIBLY_FAST,
        verdict.COULD_NOT_RUN,
        verdict.OTHER_HARDWARE,
        verdict.CPU,
    }
    assert computed == set(statuses.ReferenceCheckVerdict.values)


def test_a_final_status_is_one_no_step_moves_on():
    in_flight = {"received", "ingesting", "checking", "finalizing"}
    assert set(statuses.SubmissionStatus.values) - in_flight == statuses.SUBMISSION_FINAL
    submission = Submission(status=statuses.SubmissionStatus.WITHDRAWN)
    assert submission.is_final
    submission.status = statuses.SubmissionStatus.CHECKING
    assert not submission.is_final
