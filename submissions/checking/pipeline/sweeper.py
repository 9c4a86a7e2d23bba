"""The sweeper: re-queues work that a dead worker, a lost message or a broker outage left behind.

It runs every SWEEP_EVERY_S and looks, in this order, for
1. leases whose heartbeat stopped (leases.py): the process running that task died; the task
   is queued again as it was;
2. uploads whose first task the broker refused (`queue_pending`): queued now;
3. submissions not final, with no live lease or claim, not updated for `idle_after` while nothing
   waits in the queues: their message was lost (a broker restarted, a worker died before starting
   it); their step is queued again;
4. whatever is not final and not updated for `older_than`, whatever the queues say;
5. reference checks that no agent will finish (refchecks/jobs.py sweep): sent again, or failed.
A submission's step is queued once a sweep, by the first of these that finds it. Steps claim their
work (leases.claim), so a step queued twice still runs once.
Steps are idempotent. After `max_attempts` a submission fails with a visible reason. Each attempt counts
once: ingest counts its own when it claims the submission, so the sweeper counts only the later steps it
queues again (counting an ingest here as well spent the budget twice as fast as set).
Returns what it did, as (submission id, action) pairs, for logs and tests.
"""

from datetime import timedelta

from django.db.models import F
from django.utils import timezone

from leaderboard.models import Run
from submissions.models import Submission, TaskLease, Validation
from submissions.refchecks import jobs as refchecks

from .. import leases
from .common import Status, fail, update

STUCK = [Status.RECEIVED, Status.INGESTING, Status.CHECKING, Status.FINALIZING]


def sweep(
    older_than: timedelta,
    max_attempts: int,
    queue,
    *,
    idle_after: timedelta | None = None,
    lease_expiry: timedelta | None = None,
) -> list[tuple[int, str]]:
    """`queue` has ingest(submission_id), check_run(run_id, validation_id), finalize(submission_id),
    and optionally task(name, args, options) and waiting() -> messages waiting in the pipeline's queues
    (None when the broker cannot say)."""
    now = timezone.now()
    live_after = now - (lease_expiry if lease_expiry is not None else older_than)
    actions = []
    if lease_expiry is not None:
        actions += _requeue_dead_leases(live_after, max_attempts, queue)
    actions += _queue_pending(queue)
    queued = {submission_id for submission_id, _ in actions}  # once a sweep
    waiting = queue.waiting() if hasattr(queue, "waiting") else None
    quiet_for = (
        min(idle_after, older_than) if idle_after is not None and waiting == 0 else older_than
    )
    candidates = (
        Submission.objects.filter(status__in=STUCK, updated_at__lt=now - quiet_for)
        .exclude(pk__in=queued)
        .exclude(leases__beat_at__gte=live_after)
        .exclude(claim_expires__gte=now)
        .order_by("pk")
    )
    for submission in candidates:
        actions += _requeue_step(submission, max_attempts, queue)
    actions += refchecks.sweep(now)
    return actions


def _give_up(submission: Submission) -> tuple[int, str]:
    fail(
        submission.pk,
        f"Gave up after {submission.attempts} attempts while {submission.get_status_display().lower()}: "
        "the work was lost each time (a worker died or the broker lost the task). "
        "The bundle is kept; a reviewer can re-validate it.",
        "pipeline.gave-up",
    )
    return submission.pk, "failed"


def _counts_itself(task_name: str) -> bool:
    """Ingest counts its attempt when it claims the submission (and revalidate starts a fresh count)."""
    return task_name.rsplit(".", 1)[-1] in ("ingest", "revalidate")


def _requeue_dead_leases(expired_before, max_attempts: int, queue) -> list[tuple[int, str]]:
    actions = []
    for lease in (
        TaskLease.objects.filter(beat_at__lt=expired_before)
        .select_related("submission")
        .order_by("pk")
    ):
        # Deleting the lease claims it: a second sweeper, or a late heartbeat, leaves it alone.
        if not TaskLease.objects.filter(pk=lease.pk, beat_at=lease.beat_at).delete()[0]:
            continue
        submission = lease.submission
        if submission.is_final:
            continue
        leases.release(
            submission.pk, lease.task_id
        )  # its holder died: the task sent again claims at once
        if submission.attempts >= max_attempts:
            actions.append(_give_up(submission))
            continue
        # Stamped: the idle step leaves it to the task sent again.
        counted = {} if _counts_itself(lease.task_name) else {"attempts": F("attempts") + 1}
        update(submission.pk, **counted)
        queue.task(lease.task_name, lease.args, lease.options)
        actions.append(
            (submission.pk, f"requeue {lease.task_name.rsplit('.', 1)[-1]} of {lease.worker}")
        )
    return actions


def wait_for_broker(submission_id: int) -> None:
    """The upload's first task could not be queued (the broker did not answer): the next sweep queues it."""
    update(
        submission_id,
        queue_pending=True,
        message="Queued: the task queue is not answering just now. The bundle is stored; checking "
        "starts by itself within a minute of the queue's return. There is no need to upload again.",
    )


def _queue_pending(queue) -> list[tuple[int, str]]:
    actions = []
    for pk in Submission.objects.filter(queue_pending=True, status=Status.RECEIVED).values_list(
        "pk", flat=True
    ):
        queue.ingest(pk)  # raises while the broker is still down: the next sweep tries again
        update(pk, queue_pending=False, message="")
        actions.append((pk, "ingest (was waiting for the broker)"))
    return actions


def _requeue_step(submission: Submission, max_attempts: int, queue) -> list[tuple[int, str]]:
    if submission.attempts >= max_attempts:
        return [_give_up(submission)]
    # Claim the sweep of this submission once, even with several sweepers (update stamps updated_at).
    again = submission.status in (Status.RECEIVED, Status.INGESTING)
    counted = {} if again else {"attempts": F("attempts") + 1}  # ingest counts itself
    if not update(submission.pk, only_if={"updated_at": submission.updated_at}, **counted):
        return []
    if again:
        update(submission.pk, status=Status.RECEIVED)
        queue.ingest(submission.pk)
        return [(submission.pk, "ingest")]
    if submission.status == Status.CHECKING:
        validation = submission.validations.filter(status=Validation.Status.RUNNING).first()
        if validation is None:
            return []
        unchecked = (
            Run.objects.filter(result__system__submission=submission)
            .exclude(checks__validation=validation)
            .values_list("pk", flat=True)
        )
        if unchecked:
            for run_id in unchecked:
                queue.check_run(run_id, validation.pk)
            return [(submission.pk, f"check {len(unchecked)} runs")]
        if update(submission.pk, only_if={"status": Status.CHECKING}, status=Status.FINALIZING):
            queue.finalize(submission.pk)  # every run was checked but the finalize claim was lost
            return [(submission.pk, "finalize")]
        return []
    queue.finalize(submission.pk)
    return [(submission.pk, "finalize")]
