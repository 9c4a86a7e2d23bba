"""The pipeline's Celery tasks: thin wrappers that call a step of pipeline/ and queue the next one.

Arguments are ids. Tasks are acknowledged late and hold a lease (leases.py) while they run;
the steps claim their work, so a repeat does nothing twice. The sweeper re-queues the task
of a process whose lease stopped beating, and whatever else is stuck. The signal handlers here
(connections, leases, start-up) serve every task of the portal's worker: Celery imports this
module with the other rooms' tasks (portal/celery.py).

Task names are kept as they were when every task lived in submissions/tasks.py: queued messages,
the routes and beat schedule in settings, and the leases know them by name.
"""

import logging
from datetime import timedelta

from celery import current_app, shared_task, signals, states
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import close_old_connections, connections
from kombu.exceptions import OperationalError as BrokerError

from portal.celery import RETRY, TRANSIENT

from . import leases, pipeline
from .budget import OverBudget, within
from .rules.mlperf import rcp

log = logging.getLogger(__name__)


def _queue_checks(run_ids, validation_id):
    """Queue the runs' checks in batches of CHECK_BATCH_SIZE: per-run tasks spent as much CPU on
    the broker round trips as on the checks. The time limits grow with the batch, up to the task
    limit (beyond it Redis would hand a running batch to another worker)."""
    size = settings.CHECK_BATCH_SIZE
    for start in range(0, len(run_ids), size):
        batch = run_ids[start : start + size]
        soft = min(
            settings.CHECK_SOFT_TIME_LIMIT * len(batch), settings.CELERY_TASK_SOFT_TIME_LIMIT
        )
        check_runs.apply_async((batch, validation_id), soft_time_limit=soft, time_limit=soft + 30)


@signals.task_prerun.connect
def _drop_stale_connections(task=None, **_):
    """Connections are kept between tasks (CELERY_DB_REUSE_MAX): drop one that is too old (CONN_MAX_AGE) or
    broken, as Django does between requests. Not in eager mode: the caller's transaction is still open."""
    if not task.request.is_eager:
        close_old_connections()


@signals.task_prerun.connect
def _take_lease(task=None, task_id=None, args=(), **_):
    if not task.request.is_eager:
        hard, soft = task.request.timelimit or (None, None)
        options = {
            name: value
            for name, value in (("time_limit", hard), ("soft_time_limit", soft))
            if value
        }
        leases.take(task_id, task.name, list(args), options)


@signals.task_postrun.connect
def _give_lease_back(task=None, task_id=None, **_):
    if not task.request.is_eager:
        leases.give_back(task_id)


@signals.task_postrun.connect
def _drop_connections_after_a_failure(task=None, state=None, **_):
    """A task stopped by an error or a time limit may have left its connection in the middle of a query,
    which Django cannot always tell: never reuse it."""
    if not task.request.is_eager and state != states.SUCCESS:
        connections.close_all()


@signals.task_failure.connect
def _count_a_failed_step(sender=None, task_id=None, exception=None, **_):
    """A step's task that raised lost its attempt (counted once per attempt, as a dead worker's, so that a
    fault is not tried for ever); a database or broker outage did not. Before postrun: the lease is there."""
    if not sender.request.is_eager and not isinstance(exception, (*TRANSIENT, BrokerError)):
        pipeline.count_failed_task(task_id, settings.SWEEP_MAX_ATTEMPTS)


@signals.worker_init.connect
def _import_before_forking(**_):
    """The RCP checker (scipy, numpy) imported before the pool forks, in every worker, whatever its pool's
    size: a second of import once here instead of in each pool process, and numpy's OpenBLAS sets up its
    buffers outside any check's address-space budget (budget.py). Imported inside a check instead,
    OpenBLAS's allocation failed under test_budget_on_a_worker's budget and it exited the pool process
    ("Memory allocation still failed after 10 retries"), three in a row: the bundle stayed `checking`."""
    rcp.preload()


def _over_time() -> OverBudget:
    """Celery's soft time limit of a step, said as a budget's limit."""
    return OverBudget("time", f"more than its {settings.CELERY_TASK_SOFT_TIME_LIMIT} s")


def _again_later(task, args) -> None:
    """Queue the task again in DISK_WAIT_S seconds. Not when run in-process (eager: no clock to wait
    on, and it would run again at once): the sweeper queues it once a worker runs."""
    if not task.request.is_eager:
        task.apply_async(args, countdown=settings.DISK_WAIT_S)


@shared_task(name="submissions.tasks.ingest", **RETRY)
def ingest(submission_id: int) -> None:
    try:
        with within(pipeline.step_budget()):
            validation_id, run_ids = pipeline.ingest(submission_id, ingest.request.id)
    except TRANSIENT:
        raise
    except OverBudget as over:  # the finding names the limit; the worker goes on to its next task
        pipeline.over_budget(submission_id, over)
        return
    except SoftTimeLimitExceeded:
        pipeline.over_budget(submission_id, _over_time())
        return
    except Exception as error:  # never leave a bundle half-way: say what broke
        if pipeline.is_disk_full(error):  # the site's fault, which passes: wait and try again
            log.warning(
                "no room to open submission %s; trying again in %s s",
                submission_id,
                settings.DISK_WAIT_S,
            )
            pipeline.wait_for_disk(submission_id)
            _again_later(ingest, (submission_id,))
            return
        log.exception("ingest of submission %s failed", submission_id)
        pipeline.fail(
            submission_id,
            f"Internal error while opening the bundle: {error!r}. The bundle is kept.",
            "internal",
        )
        return
    _queue_checks(run_ids, validation_id)


@shared_task(name="submissions.tasks.revalidate", **RETRY)
def revalidate(
    submission_id: int, reason: str = "re-validation", user_id: int | None = None
) -> None:
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.filter(pk=user_id).first() if user_id else None
    try:
        with within(pipeline.step_budget()):
            validation_id, run_ids = pipeline.revalidate(
                submission_id, reason, user, revalidate.request.id
            )
    except TRANSIENT:
        raise
    except OverBudget as over:  # as ingest
        pipeline.over_budget(submission_id, over)
        return
    except SoftTimeLimitExceeded:
        pipeline.over_budget(submission_id, _over_time())
        return
    except Exception as error:  # as ingest: never leave a submission half-way
        if pipeline.is_disk_full(error):  # as ingest: wait for room and try again
            log.warning(
                "no room to re-validate submission %s; trying again in %s s",
                submission_id,
                settings.DISK_WAIT_S,
            )
            if pipeline.wait_for_disk(submission_id):  # a failed one, being taken in again
                _again_later(ingest, (submission_id,))
            else:
                _again_later(revalidate, (submission_id, reason, user_id))
            return
        log.exception("re-validation of submission %s failed", submission_id)
        pipeline.fail(
            submission_id,
            f"Internal error while opening the bundle: {error!r}. The bundle is kept.",
            "internal",
        )
        return
    _queue_checks(run_ids, validation_id)


@shared_task(
    name="submissions.tasks.check_runs",
    **RETRY,
    soft_time_limit=settings.CHECK_SOFT_TIME_LIMIT,
    time_limit=settings.CHECK_SOFT_TIME_LIMIT + 30,
)
def check_runs(run_ids: list[int], validation_id: int) -> None:
    """Check a batch of runs (each claims itself once); the batch that completes a validation queues finalize."""
    for submission_id in pipeline.check_runs(run_ids, validation_id):
        finalize.delay(submission_id)


@shared_task(name="submissions.tasks.finalize", **RETRY)
def finalize(submission_id: int) -> None:
    pipeline.finalize(submission_id, finalize.request.id)


def queue_ingest(submission_id: int) -> bool:
    """Queue a new upload's ingest. When the broker does not answer, the upload is kept and marked
    `queue_pending` (False is returned): the sweeper queues it once the broker is back."""
    try:
        ingest.delay(submission_id)
        return True
    except (BrokerError, OSError) as error:
        log.warning(
            "the broker refused the ingest of submission %s (%s); the sweeper will queue it",
            submission_id,
            error,
        )
        pipeline.wait_for_broker(submission_id)
        return False


def _waiting() -> int | None:
    """Messages waiting in the pipeline's queues (not those a worker has taken), or None when unknown."""
    total = 0
    try:
        with current_app.connection_for_read() as connection:
            channel = connection.default_channel
            for name in ("ingest", "checks"):
                try:
                    total += channel.queue_declare(name, passive=True).message_count
                except (
                    connection.channel_errors
                ):  # never declared: no worker ever consumed it, nothing waits
                    channel = connection.channel()
    except (BrokerError, OSError):
        return None
    return total


class _Queue:
    """What the sweeper queues, as tasks."""

    ingest = staticmethod(lambda submission_id: ingest.delay(submission_id))
    check_run = staticmethod(lambda run_id, validation_id: _queue_checks([run_id], validation_id))
    finalize = staticmethod(lambda submission_id: finalize.delay(submission_id))
    task = staticmethod(
        lambda name, args, options: current_app.send_task(name, args=args, **options)
    )
    waiting = staticmethod(_waiting)


@shared_task(name="submissions.tasks.sweep")
def sweep(older_than_s: float | None = None) -> list:
    older = timedelta(
        seconds=older_than_s if older_than_s is not None else settings.SWEEP_OLDER_THAN_S
    )
    return pipeline.sweep(
        older,
        settings.SWEEP_MAX_ATTEMPTS,
        _Queue,
        idle_after=timedelta(seconds=settings.SWEEP_IDLE_S),
        lease_expiry=timedelta(seconds=settings.LEASE_EXPIRY_S),
    )


@shared_task(name="submissions.tasks.purge_failed_bundles")
def purge_failed_bundles() -> list[int]:
    """Delete the bundles of submissions failed more than FAILED_BUNDLE_RETENTION_DAYS ago (beat: hourly)."""
    return pipeline.purge_failed_bundles(timedelta(days=settings.FAILED_BUNDLE_RETENTION_DAYS))
