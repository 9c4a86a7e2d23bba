"""The sweeper re-queues work left behind by a dead worker and gives up, visibly, after N attempts."""

from datetime import timedelta

from django.utils import timezone

from leaderboard.models import Result, Run, System, Submitter
from submissions.models import RunCheck, Submission, Validation
from submissions.pipeline import sweep


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
        round=rounds["training-v5.1"], bundle="bundles/x.tgz", original_name="x.tgz",
        sha256=f"{status}{minutes_ago}{attempts}", size=1, status=status, attempts=attempts,
    )
    Submission.objects.filter(pk=submission.pk).update(updated_at=timezone.now() - timedelta(minutes=minutes_ago))
    return submission


def with_runs(submission, checked):
    system = System.objects.create(
        submission=submission, round=submission.round, submitter=Submitter.objects.get_or_create(name="Acme")[0],
        key="s", name="s",
    )
    result = Result.objects.create(system=system, benchmark=submission.round.benchmarks.get(key="rgat"), path="p")
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
    assert (submission.status, submission.attempts) == ("received", 2)


def test_only_the_unchecked_runs_are_queued_again(rounds):
    submission = stuck(rounds, Submission.Status.CHECKING)
    runs, validation = with_runs(submission, checked=1)
    queue = RecordingQueue()
    sweep(timedelta(minutes=5), 3, queue)
    assert sorted(queue.calls) == [("check_run", runs[1].pk, validation.pk), ("check_run", runs[2].pk, validation.pk)]


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


def test_it_gives_up_after_the_last_attempt_with_a_visible_reason(rounds):
    submission = stuck(rounds, Submission.Status.FINALIZING, attempts=3)
    queue = RecordingQueue()
    assert sweep(timedelta(minutes=5), 3, queue) == [(submission.pk, "failed")]
    submission.refresh_from_db()
    assert submission.status == "failed" and submission.rule == "pipeline.gave-up"
    assert "Gave up after 3 attempts while scoring" in submission.message
    assert queue.calls == []
