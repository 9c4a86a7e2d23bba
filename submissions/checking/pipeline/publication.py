"""Publication per result: which results of a submission may go public, and making them so.

A result is held when its latest validation has a blocking finding about it (an error on the
result, one of its runs, or its system's description) that is not advisory (imported history).
Every other result of a published submission is public, scored or "not scored" with its reason:
one held result never holds back the others.

A reviewer's decisions (review/objections.py decides) reach the results here: apply_decision when it is
made, carry_decisions at publication for a bundle uploaded after it.

A live round (one with a calendar) is published whole by publish_round, at its publish_at
(publish_due_rounds, every minute from beat) or when staff press the button: every approved
result of each organisation's final submission goes public in one transaction.
"""

from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from audit.log import record
from leaderboard.cache import invalidate_round
from leaderboard.catalogue import calendar
from leaderboard.models import Division, PublicIdSequence, Result, Round, System
from notifications.emit import emit
from submissions.models import Finding, Submission, Validation
from submissions.review.models import Objection

from .common import Status, clear_work_when_final, update


@dataclass(frozen=True)
class Held:
    """A result that stays off the public tables, and the first finding that holds it there."""

    result_id: int
    label: str  # "system/benchmark"
    finding: Finding
    more: int  # further blocking findings of the same result


def held_results(submission: Submission) -> list[Held]:
    """The submission's held results, from its latest finished validation (none before one)."""
    validation = submission.validations.filter(status=Validation.Status.DONE).first()
    if validation is None:
        return []
    blocking = list(
        validation.findings.filter(severity=Finding.Severity.ERROR, advisory=False)
        .order_by("pk")
        .only("result_id", "system_key", "rule", "file", "line", "message", "severity")
    )
    by_result: dict[int, list[Finding]] = {}
    by_system: dict[str, list[Finding]] = {}
    for finding in blocking:
        if finding.result_id is not None:
            by_result.setdefault(finding.result_id, []).append(finding)
        elif finding.system_key:
            by_system.setdefault(finding.system_key, []).append(finding)
    held = []
    results = (
        Result.objects.filter(system__submission=submission)
        .order_by("system__key", "benchmark__position")
        .values_list("pk", "system__key", "benchmark__key")
    )
    for pk, system, benchmark in results:
        reasons = by_result.get(pk, []) + by_system.get(system, [])
        if reasons:
            held.append(Held(pk, f"{system}/{benchmark}", reasons[0], len(reasons) - 1))
    return held


def public_id_prefix(ruleset: str) -> str:
    """MLPerf's public ids start with the ruleset's major.minor: '5.1.0' -> '5.1'."""
    return ".".join(ruleset.split(".")[:2])


def _give_public_ids(results: list[Result], prefix: str) -> None:
    """Number the results that have no public id yet, after the last number given under the prefix.
    The counter row is locked, so two publications never draw the same number."""
    new = [r for r in results if not r.public_id]
    if not new:
        return
    PublicIdSequence.objects.get_or_create(prefix=prefix)
    sequence = PublicIdSequence.objects.select_for_update().get(prefix=prefix)
    for result in new:
        sequence.last += 1
        result.public_id = f"{prefix}-{sequence.last:04d}"
    sequence.save(update_fields=["last"])
    Result.objects.bulk_update(new, ["public_id"])


@transaction.atomic
def withdraw(submission_id: int, message: str) -> None:
    """Take a submission's results off the tables and stop any work still to do on it. Their public
    ids stay theirs: an id is never given to another result."""
    submission = Submission.objects.select_related("round").get(pk=submission_id)
    was_public = Result.objects.filter(system__submission=submission, published=True).update(
        published=False
    )
    System.objects.filter(submission=submission).update(published=False)
    update(submission_id, status=Status.WITHDRAWN, message=message, finished_at=timezone.now())
    if was_public:
        round_key = submission.round.key
        transaction.on_commit(lambda: invalidate_round(round_key))
    transaction.on_commit(lambda: clear_work_when_final(submission_id))


# -- review's decisions on the results (review/objections.py decides; publication carries them) --


def _targets(objection: Objection, submissions=None):
    """The systems and results a decision on the objection applies to: the same system (by key) and
    result (by benchmark) in every submission of the organisation objected to in the round, so that a
    later upload (a fix) carries the decision (or in `submissions` only)."""
    if submissions is None:
        submissions = Submission.objects.filter(
            round_id=objection.round_id, organisation_id=objection.against_organisation_id
        )
    systems = System.objects.filter(submission__in=submissions, key=objection.system.key)
    results = Result.objects.filter(system__in=systems)
    if objection.result_id is not None:
        results = results.filter(benchmark_id=objection.result.benchmark_id)
    return systems, results


def apply_decision(objection: Objection, decision: str, submissions=None) -> list[str]:
    """The decision's effect on the results; returns what changed, for the audit log."""
    systems, results = _targets(objection, submissions)
    if decision == Objection.Decision.MOVED_TO_OPEN:
        systems.update(division=Division.OPEN)
        return [f"system {objection.system.key}: division open"]
    if decision == Objection.Decision.WITHDRAWN:
        labels = sorted(
            {
                f"{key}/{bench}"
                for key, bench in results.values_list("system__key", "benchmark__key")
            }
        )
        results.update(withdrawn=True, published=False)
        return [f"{label}: withdrawn" for label in labels]
    return []


def carry_decisions(submission: Submission) -> None:
    """Apply the round's decisions against the submission's organisation (moved to open, withdrawn)
    to this submission: publication calls it, so that an upload made after a decision keeps it."""
    if submission.organisation_id is None:
        return
    decided = Objection.objects.filter(
        round_id=submission.round_id,
        against_organisation_id=submission.organisation_id,
        decision__in=(Objection.Decision.MOVED_TO_OPEN, Objection.Decision.WITHDRAWN),
    ).select_related("system", "result")
    for objection in decided:
        apply_decision(objection, objection.decision, [submission])


@transaction.atomic
def publish(submission_id: int) -> int:
    """Make every result of the submission that is not held public, and return how many are.

    With at least one public result, the submission is published and replaces the same submitter's
    earlier published submission of the round (withdrawn, saying by which; in an imported round, only an
    earlier import of the same folder). With none, nothing changes.
    """
    submission = Submission.objects.select_related("round", "submitter").get(pk=submission_id)
    carry_decisions(submission)  # a reviewer's decision holds for a bundle uploaded after it
    # A withdrawn result (submissions/review/objections.py) stays off the tables as a held one does.
    withdrawn = set(
        Result.objects.filter(system__submission=submission, withdrawn=True).values_list(
            "pk", flat=True
        )
    )
    held = {h.result_id for h in held_results(submission)} - withdrawn
    results = list(
        Result.objects.filter(system__submission=submission)
        .exclude(pk__in=held | withdrawn)
        .order_by("system__key", "benchmark__position")
    )
    if not results:
        return 0
    earlier = Submission.objects.filter(
        round=submission.round,
        submitter=submission.submitter,
        status=Status.PUBLISHED,
    ).exclude(pk=submission_id)
    if submission.round.history:
        # MLCommons published some submitters' folders side by side (v4.0: smc, smc-ac-power and
        # smc-dc-power, the same runs timed, and measured at the wall and after conversion): in an
        # imported round a later import replaces only an earlier import of the same folder.
        earlier = earlier.filter(original_name=submission.original_name)
    for pk in earlier.values_list("pk", flat=True):
        withdraw(
            pk,
            f"Replaced by {submission.uid}, a later submission of {submission.submitter} for this round.",
        )
    _give_public_ids(results, public_id_prefix(submission.round.ruleset))
    mine = Q(system__submission=submission)
    Result.objects.filter(mine, pk__in=held | withdrawn).update(published=False)
    Result.objects.filter(mine).exclude(pk__in=held | withdrawn).update(published=True)
    System.objects.filter(submission=submission).update(published=False)
    System.objects.filter(submission=submission, results__published=True).update(published=True)
    total = len(results) + len(held) + len(withdrawn)
    note = (
        f" Public: {len(results)} of {total} results"
        + (f"; {len(held)} held" if held else "")
        + (f"; {len(withdrawn)} withdrawn" if withdrawn else "")
        + "."
    )
    message = submission.message.split(" Public: ")[0] + note
    update(submission_id, status=Status.PUBLISHED, message=message)
    round_key = submission.round.key
    transaction.on_commit(
        lambda: invalidate_round(round_key)
    )  # cached tables and exports are stale
    return len(results)


# What a final submission may be at publication: checked (valid, or invalid with some results that no
# blocking finding holds), or published already.
PUBLISHABLE = (Status.VALID, Status.INVALID, Status.PUBLISHED)


def final_submissions(round_: Round) -> list[Submission]:
    """Each organisation's final submission of the round: its latest that neither failed nor was
    withdrawn (by submitter where there is no organisation: imports), when that one is checked. A
    latest still being checked at publication publishes nothing of its organisation: an older bundle
    it replaced must not go out in its place."""
    latest: dict[tuple, Submission] = {}
    candidates = (
        Submission.objects.filter(round=round_)
        .exclude(status__in=(Status.FAILED, Status.WITHDRAWN))
        .select_related("submitter", "organisation")
        .order_by("created_at", "pk")
    )
    for submission in candidates:
        if submission.organisation_id is not None:
            latest[("organisation", submission.organisation_id)] = submission
        elif submission.submitter_id is not None:
            latest[("submitter", submission.submitter_id)] = submission
    chosen = [s for s in latest.values() if s.status in PUBLISHABLE]
    return sorted(chosen, key=lambda s: (s.submitter.name if s.submitter else "", s.created_at))


def published_while_checking(submission: Submission) -> bool:
    """Whether a submission just checked belongs in its round's publication, which came while it was still
    being checked (its worker died, the queue was long): uploaded before the publication, and its
    organisation's final submission. It then goes public now, as it would have at the minute."""
    round_ = submission.round
    if round_.published_at is None or submission.created_at >= round_.published_at:
        return False
    return any(s.pk == submission.pk for s in final_submissions(round_))


class NotPublishable(Exception):
    """A round that publication does not apply to; str(error) says why."""


def publish_round(round_: Round, *, actor=None, now: datetime | None = None) -> int | None:
    """Publish the round now: every approved result of its final submissions goes public with its
    public id, in one transaction that holds the round's row. Returns how many results are public;
    None when the round was published already (publishing is done once; a second call changes nothing).
    Published before its publish_at (by staff), the round's publish_at becomes now, so that the
    embargo (leaderboard.access.public) lifts with it."""
    now = now or timezone.now()
    with transaction.atomic():
        locked = Round.objects.select_for_update().get(pk=round_.pk)
        if locked.published_at is not None:
            return None
        if locked.phase(now) == calendar.HISTORY:
            raise NotPublishable(
                f"{locked.name} is imported history: its results are public as MLCommons published "
                "them, and it has no publication to make. Give it a calendar to run it as a live round."
            )
        public, published = 0, []
        for submission in final_submissions(locked):
            count = publish(submission.pk)
            public += count
            published.append({"submission": str(submission.uid), "results": count})
            if count:
                emit("results.published", submission=submission.pk)
        fields = {"published_at": now}
        if locked.publish_at is None or locked.publish_at > now:
            fields["publish_at"] = now
        Round.objects.filter(pk=locked.pk).update(**fields)
        record(
            "round.published",
            actor=actor,
            round=locked,
            at=now.isoformat(),
            scheduled=locked.publish_at.isoformat() if locked.publish_at else None,
            results=public,
            submissions=published,
        )
        emit("round.published", round=locked.pk)
        key = locked.key
        transaction.on_commit(lambda: invalidate_round(key))
    return public


def publish_due_rounds(now: datetime | None = None) -> list[str]:
    """Publish every round whose publish_at has come and that is not published yet (beat, every minute).
    Returns their keys."""
    now = now or timezone.now()
    due = Round.objects.filter(publish_at__lte=now, published_at__isnull=True).order_by(
        "publish_at"
    )
    return [r.key for r in due if publish_round(r, now=now) is not None]
