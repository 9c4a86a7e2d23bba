"""The sweeper: re-queues work that a dead worker, a lost message or a broker outage left behind.

It runs every SWEEP_EVERY_S and looks, in this order, for
1. leases whose heartbeat stopped (leases.py): the process running that task died; the task
   is queued again as it was;
2. uploads whose first task the broker refused (`queue_pending`): queued now;
3. submissions not final, with no live lease or claim, not updated for `idle_after` while nothing
   waits in the queues: their message was lost (a broker restarted, a worker died before starting
   it, a task gave up while the database was down); their step is queued again;
4. whatever is not final and not updated for `older_than`, whatever the queues say;
5. reference checks that no agent will finish (refchecks/jobs.py sweep): sent again, or failed.
A submission's step is queued once a sweep, by the first of these that finds it. Steps claim their
work (leases.claim), so a step queued twice still runs once.

An attempt is counted where one is lost: when the sweeper finds the lease of a dead process, or a task
of the step raised (count_failed_task), once for all the tasks of that attempt (a worker checking two
batches of a submission died once; the lease of its other process may expire a sweep later). Lost
messages and outages are not attempts. After `max_attempts` lost, a submission fails with a visible
reason.
Returns what it did, as (submission id, action) pairs, for logs and tests.
"""

from datetime import timedelta

from django.db.models import F
from django.utils import timezone

from leaderboard.catalogue import rule_catalogue
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
        actions += _requeue_step(submission, queue)
    actions += refchecks.sweep(now)
    return actions


def _give_up(submission: Submission) -> None:
    fail(
        submission.pk,
        f"Gave up after {submission.attempts} attempts while {submission.get_status_display().lower()}: "
        "each was lost (the worker doing it died, or the step failed inside the portal). "
        "The bundle is kept; a reviewer can re-validate it.",
        rule_catalogue.PIPELINE_GAVE_UP,
    )


def _requeue_dead_leases(expired_before, max_attempts: int, queue) -> list[tuple[int, str]]:
    """Send again, as they were, the tasks of processes that died; count their submission's lost attempt."""
    dead: dict[int, list[TaskLease]] = {}
    for lease in (
        TaskLease.objects.filter(beat_at__lt=expired_before)
        .select_related("submission")
        .order_by("pk")
    ):
        # Deleting the lease claims it: a second sweeper, or a late heartbeat, leaves it alone.
        if TaskLease.objects.filter(pk=lease.pk, beat_at=lease.beat_at).delete()[0]:
            dead.setdefault(lease.submission_id, []).append(lease)
    actions = []
    for tasks in dead.values():
        submission = tasks[0].submission
        if submission.is_final:
            continue
        for lease in tasks:  # their holders died: the tasks sent again claim their steps at once
            leases.release(submission.pk, lease.task_id)
        if _count_lost(submission, tasks, max_attempts):
            actions.append((submission.pk, "failed"))
            continue
        for lease in tasks:
            queue.task(lease.task_name, lease.args, lease.options)
        workers = ", ".join(sorted({lease.worker for lease in tasks}))
        names = ", ".join(sorted({lease.task_name.rsplit(".", 1)[-1] for lease in tasks}))
        actions.append((submission.pk, f"requeue {names} of {workers}"))
    return actions


def count_failed_task(task_id: str, max_attempts: int) -> None:
    """A task of a submission's step raised (a fault of ours, a time limit; not an outage): its attempt is
    lost as a dead worker's, counted once; the step is queued again as lost work by a later sweep."""
    lease = TaskLease.objects.filter(task_id=task_id).select_related("submission").first()
    if lease is not None and not lease.submission.is_final:
        _count_lost(lease.submission, [lease], max_attempts)


def _count_lost(submission: Submission, tasks: list[TaskLease], max_attempts: int) -> bool:
    """Count the attempt these tasks lost, once: where one of them started after the last attempt counted
    lost (else they are tasks of that attempt found a sweep later). The next attempt begins, or after the
    last the submission fails (True)."""
    if submission.lost_at is not None and all(t.started_at < submission.lost_at for t in tasks):
        update(submission.pk)  # stamped: the idle step leaves it to the tasks sent again
        return False
    if submission.attempts >= max_attempts:
        _give_up(submission)
        return True
    update(
        submission.pk,
        only_if={"lost_at": submission.lost_at},
        attempts=F("attempts") + 1,
        lost_at=timezone.now(),
    )
    return False


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


def _requeue_step(submission: Submission, queue) -> list[tuple[int, str]]:
    """Queue the step of a submission whose work was lost (a message, or a task that gave up while the
    database was down): not an attempt."""
    # Claim the sweep of this submission once, even with several sweepers (update stamps updated_at).
    again = submission.status in (Status.RECEIVED, Status.INGESTING)
    back = {"status": Status.RECEIVED} if again else {}
    if not update(submission.pk, only_if={"updated_at": submission.updated_at}, **back):
        return []
    if again:
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
