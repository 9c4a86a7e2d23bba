"""Leases: which worker process is running which pipeline task, kept fresh by a heartbeat.

A process takes a lease when it starts a task and gives it back when the task ends. A thread
of the process renews its leases every LEASE_BEAT_S. When the process dies (killed, out of
memory, its machine gone), the beats stop; after LEASE_EXPIRY_S the sweeper queues the task
again. The broker would hand the dead process's unacknowledged message to another worker only
after its visibility timeout, which must outlast the longest task (half an hour).

The heartbeat renews only the leases of the tasks this process is running now. A lease that could not be
given back (the database was down when its task ended) is given back by the heartbeat once the database
answers: left to expire, it read as a dead process's, and the outage was counted as an attempt.

A claim is the lease of a submission's step (unpacking it, finalizing it): one conditional UPDATE of the
submission's row names the task holding the step and until when (LEASE_EXPIRY_S ahead, renewed by the same
heartbeat). A second task for the same step is refused while the claim is live; once its holder died (the
claim lapsed) the next task takes the step over. The step gives the claim back when it ends.
"""

import logging
import os
import socket
import threading
import time
import uuid
from datetime import timedelta

from django.conf import settings
from django.db import DatabaseError, close_old_connections
from django.db.models import Q
from django.utils import timezone

from submissions.models import Submission, TaskLease, Validation

log = logging.getLogger(__name__)


def process_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def claim(submission_id: int, owner: str, step: str, *, start_from, **fields) -> bool:
    """Claim the submission's `step` (a status) for `owner` (a task id) in one UPDATE ... WHERE: it moves
    from a status in `start_from` into `step`, unless it is in `step` already under another owner's live
    claim (a second task for the step; the claim of a step it has left refuses nothing). The owner's own
    claim is taken again (a retry of the same task). False, and nothing changed, where it is refused.
    `fields` are set with it."""
    now = timezone.now()
    free = (
        ~Q(status=step)
        | Q(claim_expires__isnull=True)
        | Q(claim_expires__lt=now)
        | Q(claimed_by=owner)
    )
    claimed = Submission.objects.filter(free, pk=submission_id, status__in=start_from).update(
        status=step, claimed_by=owner, claim_expires=_expiry(now), updated_at=now, **fields
    )
    return claimed == 1


def release(submission_id: int, owner: str) -> None:
    """The step `owner` claimed ended (moved on, or failed): another task may claim it at once."""
    Submission.objects.filter(pk=submission_id, claimed_by=owner).update(
        claimed_by="", claim_expires=None
    )


def new_owner() -> str:
    """An owner for a step run outside a task (a command, a test): its own name."""
    return f"{process_name()}:{uuid.uuid4().hex}"


def _expiry(now):
    return now + timedelta(seconds=settings.LEASE_EXPIRY_S)


def _submission_of(task_name: str, args: list) -> int | None:
    """The submission a pipeline task works on: its first argument, or for a batch of checks its validation's."""
    short = task_name.rsplit(".", 1)[-1]
    if short in ("ingest", "revalidate", "finalize"):
        return args[0]
    if short == "check_runs":
        return Validation.objects.filter(pk=args[1]).values_list("submission_id", flat=True).first()
    return None


def take(task_id: str, task_name: str, args: list, options: dict) -> bool:
    """Record that this process runs the task; False for tasks that work on no submission (the sweeper)."""
    submission_id = _submission_of(task_name, list(args))
    if submission_id is None:
        return False
    _heartbeat.hold(task_id)
    _heartbeat.start_here()  # before the INSERT: it gives back what a database outage left
    lease = TaskLease(
        task_id=task_id,
        task_name=task_name,
        args=list(args),
        options=options,
        submission_id=submission_id,
        worker=process_name(),
        beat_at=timezone.now(),
    )
    # One INSERT ... ON CONFLICT: a message delivered again keeps its task id.
    TaskLease.objects.bulk_create(
        [lease],
        update_conflicts=True,
        unique_fields=["task_id"],
        update_fields=["task_name", "args", "options", "submission", "worker", "beat_at"],
    )
    return True


def give_back(task_id: str) -> None:
    """The task ended here: its lease beats no more, and is deleted; where the database does not answer, by
    the heartbeat once it does (the task's submission, not final, is then queued again as lost work, not
    counted as an attempt)."""
    _heartbeat.release(task_id)
    try:
        _delete_leases([task_id])
    except DatabaseError:
        log.warning("lease of task %s not given back; the heartbeat will", task_id, exc_info=True)
        _heartbeat.give_back_later(task_id)


def _delete_leases(task_ids: list[str]) -> None:
    """This process's leases of these tasks (a retry of one running elsewhere since holds its own)."""
    TaskLease.objects.filter(task_id__in=task_ids, worker=process_name()).delete()


class _Heartbeat:
    """One daemon thread per process renewing that process's leases. Started by the first lease a process
    takes: a pool process forked from the worker does not inherit its parent's threads."""

    def __init__(self):
        self._pid = None
        self._lock = threading.Lock()
        self._held: set[str] = set()  # the task ids running in this process
        # the tasks ended here whose leases the database did not take back
        self._ended: set[str] = set()

    def hold(self, task_id: str) -> None:
        with self._lock:
            if self._pid != os.getpid():  # a pool process forked with its parent's sets
                self._held, self._ended = set(), set()
            self._held.add(task_id)
            self._ended.discard(task_id)  # a retry of it, here

    def release(self, task_id: str) -> None:
        with self._lock:
            self._held.discard(task_id)

    def give_back_later(self, task_id: str) -> None:
        with self._lock:
            self._ended.add(task_id)

    def held(self) -> list[str]:
        with self._lock:
            return sorted(self._held) if self._pid == os.getpid() else []

    def ended(self) -> list[str]:
        with self._lock:
            return sorted(self._ended) if self._pid == os.getpid() else []

    def given_back(self, task_ids: list[str]) -> None:
        with self._lock:
            self._ended.difference_update(task_ids)

    def start_here(self) -> None:
        with self._lock:
            if self._pid == os.getpid():
                return
            self._pid = os.getpid()
            threading.Thread(target=self._run, name="lease-heartbeat", daemon=True).start()

    def _run(self) -> None:
        me = process_name()
        while True:
            time.sleep(settings.LEASE_BEAT_S)
            held, ended = self.held(), self.ended()
            if not held and not ended:
                continue
            try:
                close_old_connections()  # this thread's own connection, as between requests
                now = timezone.now()  # a claim lapses when its task's lease does
                TaskLease.objects.filter(task_id__in=held).update(beat_at=now)
                Submission.objects.filter(claimed_by__in=held).update(claim_expires=_expiry(now))
                if ended:
                    _delete_leases(ended)
                    self.given_back(ended)
            except DatabaseError:
                log.warning(
                    "lease heartbeat of %s failed; trying again in %s s",
                    me,
                    settings.LEASE_BEAT_S,
                    exc_info=True,
                )


_heartbeat = _Heartbeat()
