"""The sweeper: re-queues work that a dead worker or a lost message left behind.

A submission not final and not updated for longer than `older_than` is stuck. Its step is
queued again (the steps are idempotent); after `max_attempts` it fails with a visible reason.
Returns what it did, as (submission id, action) pairs, for logs and tests.
"""

from datetime import timedelta

from django.db.models import F
from django.utils import timezone

from leaderboard.models import Run

from ..models import Submission, Validation
from .common import Status, fail, update

STUCK = [Status.RECEIVED, Status.INGESTING, Status.CHECKING, Status.FINALIZING]


def sweep(older_than: timedelta, max_attempts: int, queue) -> list[tuple[int, str]]:
    """`queue` has ingest(submission_id), check_run(run_id, validation_id), finalize(submission_id)."""
    actions = []
    cutoff = timezone.now() - older_than
    for submission in Submission.objects.filter(status__in=STUCK, updated_at__lt=cutoff):
        if submission.attempts >= max_attempts:
            fail(submission.pk,
                 f"Gave up after {submission.attempts} attempts while {submission.get_status_display().lower()}: "
                 "the work was lost each time (a worker died or the broker lost the task). "
                 "The bundle is kept; a reviewer can re-validate it.", "pipeline.gave-up")
            actions.append((submission.pk, "failed"))
            continue
        # Claim the sweep of this submission once, even with several sweepers.
        if not update(submission.pk, only_if={"updated_at": submission.updated_at}, attempts=F("attempts") + 1):
            continue
        if submission.status in (Status.RECEIVED, Status.INGESTING):
            update(submission.pk, status=Status.RECEIVED)
            queue.ingest(submission.pk)
            actions.append((submission.pk, "ingest"))
        elif submission.status == Status.CHECKING:
            validation = submission.validations.filter(status=Validation.Status.RUNNING).first()
            if validation is None:
                continue
            unchecked = Run.objects.filter(result__system__submission=submission).exclude(
                checks__validation=validation
            ).values_list("pk", flat=True)
            if unchecked:
                for run_id in unchecked:
                    queue.check_run(run_id, validation.pk)
                actions.append((submission.pk, f"check {len(unchecked)} runs"))
            elif update(submission.pk, only_if={"status": Status.CHECKING}, status=Status.FINALIZING):
                queue.finalize(submission.pk)  # every run was checked but the finalize claim was lost
                actions.append((submission.pk, "finalize"))
        else:
            queue.finalize(submission.pk)
            actions.append((submission.pk, "finalize"))
    return actions
