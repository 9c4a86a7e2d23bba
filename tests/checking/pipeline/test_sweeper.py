"""The sweeper re-queues work left behind by a dead worker, once, and gives up, visibly, after N attempts
lost; a step's claim refuses a second task while the first holds it."""

from datetime import timedelta

import pytest
from django.utils import timezone

from leaderboard.models import Result, Run, Submitter, System
from submissions.checking.pipeline import sweep
from submissions.models import RunCheck, Submission, Validation

pytestmark = pytest.mark.django_db


class RecordingQueue:
    """Stands in for the Celery queue: records what the sweeper asks for."""

    def __init__(self):
        self.calls = []

    def ingest(self, submission_id):
        self.calls.append(("ingest", submission_id))

    def check_run(self, run_id, validation_id):
        self.calls.append(("check_run", run_id, validation_id))

    def finalize(self, submission_id):
        self.calls.append(("finalize", submission_id))


def stuck(rounds, status, minutes_ago=10, attempts=1):
    submission = Submission.objects.create(
        round=rounds["training-v5.1"],
        bundle="bundles/x.tgz",
        original_name="x.tgz",
        sha256=f"{status}{minutes_ago}{attempts}",
        size=1,
        status=status,
        attempts=attempts,
    )
    Submission.objects.filter(pk=submission.pk).update(
        updated_at=timezone.now() - timedelta(minutes=minutes_ago)
    )
    return submission


def with_runs(submission, checked):
    system = System.objects.create(
        submission=submission,
        round=submission.round,
        submitter=Submitter.objects.get_or_create(name="Acme")[0],
        key="s",
        name="s",
    )
    result = Result.objects.create(
        system=system, benchmark=submission.round.benchmarks.get(key="rgat"), path="p"
    )
    runs = [Run.objects.create(result=result, index=i, path=f"p/result_{i}.txt") for i in range(3)]
    validation = Validation.objects.create(submission=submission, number=1)
    for run in runs[:checked]:
        RunCheck.objects.create(validation=validation, run=run)
    return runs, validation


def test_a_stuck_ingest_is_queued_again(rounds):
    submission = stuck(rounds, Submission.Status.INGESTING)
    queue = RecordingQueue()
    assert sweep(timedelta(minutes=5), 3, queue) == [(submission.pk, "ingest")]
    assert queue.calls == [("ingest", submission.pk)]
    submission.refresh_from_db()
    # Not counted here: the ingest queued again counts its attempt when it claims the submission.
    assert (submission.status, submission.attempts) == ("received", 1)


def test_only_the_unchecked_runs_are_queued_again(rounds):
    submission = stuck(rounds, Submission.Status.CHECKING)
    runs, validation = with_runs(submission, checked=1)
    queue = RecordingQueue()
    sweep(timedelta(minutes=5), 3, queue)
    assert sorted(queue.calls) == [
        ("check_run", runs[1].pk, validation.pk),
        ("check_run", runs[2].pk, validation.pk),
    ]


def test_a_lost_finalize_claim_is_made_and_finalize_queued(rounds):
    submission = stuck(rounds, Submission.Status.CHECKING)
    with_runs(submission, checked=3)
    queue = RecordingQueue()
    sweep(timedelta(minutes=5), 3, queue)
    assert queue.calls == [("finalize", submission.pk)]
    submission.refresh_from_db()
    assert submission.status == "finalizing"


def test_recent_work_is_left_alone(rounds):
    stuck(rounds, Submission.Status.CHECKING, minutes_ago=1)
    queue = RecordingQueue()
    assert sweep(timedelta(minutes=5), 3, queue) == []
    assert queue.calls == []


def test_lost_work_is_queued_again_without_counting_an_attempt(rounds):
    """A lost message (a broker restarted) or a task that gave up while the database was down is no attempt."""
    submission = stuck(rounds, Submission.Status.FINALIZING, attempts=3)
    queue = RecordingQueue()
    assert sweep(timedelta(minutes=5), 3, queue) == [(submission.pk, "finalize")]
    submission.refresh_from_db()
    assert (submission.status, submission.attempts) == ("finalizing", 3)


class QueueWithBroker(RecordingQueue):
    """Also answers how many messages wait, and queues tasks by name."""

    def __init__(self, waiting=0):
        super().__init__()
        self._waiting = waiting

    def waiting(self):
        return self._waiting

    def task(self, name, args, options):
        self.calls.append(("task", name, args, options))


def lease(submission, task_name, args, seconds_ago):
    from submissions.models import TaskLease

    return TaskLease.objects.create(
        task_id=f"t-{task_name}-{args}",
        task_name=task_name,
        args=args,
        options={"time_limit": 99},
        submission=submission,
        worker="host:123",
        beat_at=timezone.now() - timedelta(seconds=seconds_ago),
    )


def sweep_now(queue):
    return sweep(
        timedelta(minutes=31),
        3,
        queue,
        idle_after=timedelta(seconds=60),
        lease_expiry=timedelta(seconds=60),
    )


def test_the_task_of_a_process_whose_heartbeat_stopped_is_queued_again_as_it_was(rounds):
    from submissions.models import TaskLease

    submission = stuck(rounds, Submission.Status.CHECKING, minutes_ago=2)
    runs, validation = with_runs(submission, checked=1)
    lease(
        submission,
        "submissions.tasks.check_runs",
        [[runs[1].pk, runs[2].pk], validation.pk],
        seconds_ago=90,
    )
    queue = QueueWithBroker(waiting=5)
    assert sweep_now(queue) == [(submission.pk, "requeue check_runs of host:123")]
    assert queue.calls == [
        (
            "task",
            "submissions.tasks.check_runs",
            [[runs[1].pk, runs[2].pk], validation.pk],
            {"time_limit": 99},
        )
    ]
    assert not TaskLease.objects.exists()
    assert Submission.objects.get(pk=submission.pk).attempts == 2
    assert sweep_now(QueueWithBroker(waiting=5)) == []  # once


def test_a_task_whose_heartbeat_goes_on_is_left_alone_however_long_it_runs(rounds):
    submission = stuck(rounds, Submission.Status.INGESTING, minutes_ago=45)
    lease(submission, "submissions.tasks.ingest", [submission.pk], seconds_ago=10)
    queue = QueueWithBroker(waiting=0)
    assert sweep_now(queue) == [] and queue.calls == []


def test_lost_work_is_queued_again_after_a_minute_when_nothing_waits_in_the_queues(rounds):
    submission = stuck(rounds, Submission.Status.CHECKING, minutes_ago=2)
    runs, validation = with_runs(submission, checked=2)
    busy = QueueWithBroker(
        waiting=3
    )  # its batch may still be waiting behind others: only the old rule applies
    assert sweep_now(busy) == [] and busy.calls == []
    idle = QueueWithBroker(waiting=0)
    assert sweep_now(idle) == [(submission.pk, "check 1 runs")]
    assert idle.calls == [("check_run", runs[2].pk, validation.pk)]


def test_a_broker_that_cannot_say_what_waits_leaves_only_the_old_rule(rounds):
    stuck(rounds, Submission.Status.CHECKING, minutes_ago=2)
    queue = QueueWithBroker(waiting=None)
    assert sweep_now(queue) == []


def test_an_upload_the_broker_refused_is_queued_at_the_next_sweep(rounds):
    submission = stuck(rounds, Submission.Status.RECEIVED, minutes_ago=0)
    Submission.objects.filter(pk=submission.pk).update(queue_pending=True, message="Queued: ...")
    queue = QueueWithBroker(waiting=7)
    assert sweep_now(queue) == [(submission.pk, "ingest (was waiting for the broker)")]
    assert queue.calls == [("ingest", submission.pk)]
    submission.refresh_from_db()
    assert not submission.queue_pending and submission.message == ""


def test_a_task_that_keeps_killing_its_worker_fails_with_the_reason(rounds):
    submission = stuck(rounds, Submission.Status.INGESTING, minutes_ago=2, attempts=3)
    lease(submission, "submissions.tasks.ingest", [submission.pk], seconds_ago=90)
    queue = QueueWithBroker(waiting=1)
    assert sweep_now(queue) == [(submission.pk, "failed")]
    submission.refresh_from_db()
    assert submission.status == "failed" and submission.rule == "pipeline.gave-up"
    assert "Gave up after 3 attempts while unpacking" in submission.message


def test_a_dead_workers_ingest_is_queued_once_by_a_sweep_that_also_finds_it_idle(rounds):
    """Its lease expired and the submission is idle with nothing waiting: sent again once, not also queued
    by the idle step (two ingests of one submission raced: issue 34)."""
    submission = stuck(rounds, Submission.Status.INGESTING, minutes_ago=2)
    dead = lease(submission, "submissions.tasks.ingest", [submission.pk], seconds_ago=90)
    Submission.objects.filter(pk=submission.pk).update(  # its claim, a moment from lapsing
        claimed_by=dead.task_id, claim_expires=timezone.now() + timedelta(seconds=1)
    )
    queue = QueueWithBroker(waiting=0)
    assert sweep_now(queue) == [(submission.pk, "requeue ingest of host:123")]
    assert queue.calls == [
        ("task", "submissions.tasks.ingest", [submission.pk], {"time_limit": 99})
    ]
    assert Submission.objects.get(pk=submission.pk).claimed_by == ""  # free for the task sent again
    assert sweep_now(QueueWithBroker(waiting=0)) == []  # the next sweep leaves it to that task


def test_the_batches_of_one_dead_worker_count_one_attempt_whichever_sweep_finds_them(rounds):
    """A worker checking two batches of a submission dies; its two processes' leases expire a sweep apart.
    One attempt is lost, counted once; a batch of the next attempt dying is the next one."""
    from submissions.models import TaskLease

    submission = stuck(rounds, Submission.Status.CHECKING, minutes_ago=2)
    runs, validation = with_runs(submission, checked=1)
    first = lease(submission, "submissions.tasks.check_runs", [[runs[1].pk], validation.pk], 90)
    second = lease(submission, "submissions.tasks.check_runs", [[runs[2].pk], validation.pk], 30)
    assert sweep_now(QueueWithBroker(waiting=5)) == [
        (submission.pk, "requeue check_runs of host:123")
    ]
    TaskLease.objects.filter(pk=second.pk).update(
        beat_at=first.beat_at
    )  # a sweep later, expired too
    assert sweep_now(QueueWithBroker(waiting=5)) == [
        (submission.pk, "requeue check_runs of host:123")
    ]
    assert Submission.objects.get(pk=submission.pk).attempts == 2

    again = lease(submission, "submissions.tasks.check_runs", [[runs[2].pk], validation.pk], 90)
    TaskLease.objects.filter(pk=again.pk).update(started_at=timezone.now())  # sent again, then died
    sweep_now(QueueWithBroker(waiting=5))
    assert Submission.objects.get(pk=submission.pk).attempts == 3


def test_a_task_of_a_step_that_raised_loses_its_attempt_once_and_the_last_gives_up(rounds):
    """A fault of ours (not an outage) is tried max_attempts times, not for ever: each attempt lost counts
    once, however many of its batches raised."""
    from submissions.checking.pipeline import count_failed_task

    submission = stuck(rounds, Submission.Status.CHECKING, minutes_ago=2, attempts=2)
    runs, validation = with_runs(submission, checked=1)
    one = lease(submission, "submissions.tasks.check_runs", [[runs[1].pk], validation.pk], 1)
    other = lease(submission, "submissions.tasks.check_runs", [[runs[2].pk], validation.pk], 1)
    count_failed_task(one.task_id, 3)
    count_failed_task(other.task_id, 3)  # the same attempt
    assert Submission.objects.get(pk=submission.pk).attempts == 3
    one.delete()
    again = lease(submission, "submissions.tasks.check_runs", [[runs[1].pk], validation.pk], 0)
    count_failed_task(again.task_id, 3)  # sent again, and raised again: the last attempt
    submission.refresh_from_db()
    assert (submission.status, submission.rule) == ("failed", "pipeline.gave-up")


def test_a_claim_refuses_a_second_task_while_the_first_holds_the_step(rounds):
    """leases.claim: one UPDATE ... WHERE; the step's second task is refused under a live claim, the holder's
    own retry is not, and once the holder died (the claim lapsed) the next task takes the step over."""
    from submissions.checking import leases
    from submissions.checking.pipeline import finalize, ingest

    submission = stuck(rounds, Submission.Status.RECEIVED)
    steps = dict(start_from=[Submission.Status.RECEIVED, Submission.Status.INGESTING])
    assert leases.claim(submission.pk, "task-1", "ingesting", **steps)
    assert not leases.claim(submission.pk, "task-2", "ingesting", **steps)
    assert ingest(submission.pk, "task-2") == (None, [])  # refused: nothing done
    assert Submission.objects.get(pk=submission.pk).claimed_by == "task-1"
    assert leases.claim(submission.pk, "task-1", "ingesting", **steps)  # a retry of the same task
    held = Submission.objects.get(pk=submission.pk)
    assert (held.status, held.claimed_by) == ("ingesting", "task-1")

    Submission.objects.filter(pk=submission.pk).update(
        claim_expires=timezone.now() - timedelta(seconds=1)
    )
    assert leases.claim(submission.pk, "task-3", "ingesting", **steps)  # task-1 died
    leases.release(submission.pk, "task-3")
    assert leases.claim(submission.pk, "task-4", "ingesting", **steps)

    Submission.objects.filter(pk=submission.pk).update(status="valid")  # task-4's step ended
    assert leases.claim(submission.pk, "task-6", "ingesting", start_from=["valid"])  # re-validated

    Submission.objects.filter(pk=submission.pk).update(status="finalizing", claimed_by="task-4")
    finalize(submission.pk, "task-5")  # refused: task-4 holds the submission
    assert Submission.objects.get(pk=submission.pk).claimed_by == "task-4"
