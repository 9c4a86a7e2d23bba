"""Withdrawal: a submitter withdraws one of their organisation's results, or a whole submission,
before its round is published; after, never. Who may is leaderboard/access/policy.py's (may_withdraw); the
pages (views.py) and the API (api.py) are thin around these functions; each is audited."""

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from audit.log import record
from leaderboard.access import policy
from leaderboard.catalogue import calendar
from leaderboard.models import Result
from submissions.checking.pipeline.publication import withdraw as withdraw_submission_rows
from submissions.models import Submission

from .objections import NotFound, ReviewError, plain


def _may_withdraw(user, submission: Submission, now) -> None:
    if not policy.may_withdraw(policy.viewer(user, now), submission):
        raise NotFound(gettext("No submission matches the given query."))
    round_ = submission.round
    if round_.phase(now) == calendar.PUBLISHED or round_.published_at is not None:
        raise ReviewError(
            gettext("%(round)s is published: its results can no longer be withdrawn.")
            % {"round": round_.name}
        )


def may_withdraw(user, submission: Submission, now=None) -> bool:
    """Whether the user may still withdraw the submission or its results (a page shows the buttons)."""
    try:
        _may_withdraw(user, submission, now or timezone.now())
    except ReviewError:
        return False
    return submission.status not in (Submission.Status.WITHDRAWN, Submission.Status.PUBLISHED)


@transaction.atomic
def withdraw_result(
    user, submission: Submission, system_key: str, benchmark_key: str, reason: str = "", now=None
) -> Result:
    """Withdraw one result of the user's organisation before publication: it is never published."""
    now = now or timezone.now()
    _may_withdraw(user, submission, now)
    plain(system=system_key, benchmark=benchmark_key, reason=reason)
    result = (
        Result.objects.select_for_update()
        .filter(system__submission=submission, system__key=system_key, benchmark__key=benchmark_key)
        .first()
    )
    if result is None:
        raise ReviewError(
            gettext("The submission has no result %(result)s.")
            % {"result": f"{system_key}/{benchmark_key}"}
        )
    if result.published:
        raise ReviewError(gettext("This result is public: it can no longer be withdrawn."))
    if result.withdrawn:
        raise ReviewError(gettext("This result is already withdrawn."))
    result.withdrawn = True
    result.save(update_fields=["withdrawn"])
    record(
        "result.withdrawn",
        actor=user,
        obj=("result", f"{submission.uid}/{system_key}/{benchmark_key}"),
        round=submission.round,
        organisation=submission.organisation,
        reason=reason.strip(),
    )
    return result


@transaction.atomic
def withdraw_submission(user, submission: Submission, reason: str = "", now=None) -> Submission:
    """Withdraw a whole submission of the user's organisation before publication."""
    now = now or timezone.now()
    _may_withdraw(user, submission, now)
    plain(reason=reason)
    submission = Submission.objects.select_for_update().get(pk=submission.pk)
    if submission.status == Submission.Status.WITHDRAWN:
        raise ReviewError(gettext("This submission is already withdrawn."))
    if (
        submission.status == Submission.Status.PUBLISHED
        or Result.objects.filter(system__submission=submission, published=True).exists()
    ):
        raise ReviewError(gettext("This submission is public: it can no longer be withdrawn."))
    reason = reason.strip()
    withdraw_submission_rows(
        submission.pk, f"Withdrawn by {user.get_username()}" + (f": {reason}" if reason else ".")
    )
    record(
        "submission.withdrawn",
        actor=user,
        obj=submission,
        round=submission.round,
        organisation=submission.organisation,
        reason=reason,
    )
    submission.refresh_from_db()
    return submission
