"""Celery tasks: thin wrappers that call a pipeline step and queue the next one.

Arguments are ids. Tasks are acknowledged late, so a worker that dies mid-task has its
task delivered again; the steps claim their work, so a repeat does nothing twice. The
sweeper re-queues whatever is still stuck after that.
"""

import logging
from datetime import timedelta

from celery import shared_task
from django.conf import settings
from django.db import InterfaceError, OperationalError

from . import pipeline

log = logging.getLogger(__name__)
TRANSIENT = (OperationalError, InterfaceError)
RETRY = dict(acks_late=True, autoretry_for=TRANSIENT, retry_backoff=True, max_retries=5)


def _fan_out(validation_id, run_ids):
    for run_id in run_ids:
        check_run.delay(run_id, validation_id)


@shared_task(**RETRY)
def ingest(submission_id: int) -> None:
    try:
        validation_id, run_ids = pipeline.ingest(submission_id)
    except TRANSIENT:
        raise
    except Exception as error:  # never leave a bundle half-way: say what broke
        log.exception("ingest of submission %s failed", submission_id)
        pipeline.fail(submission_id, f"Internal error while unpacking: {error!r}. The bundle is kept.", "internal")
        return
    _fan_out(validation_id, run_ids)


@shared_task(**RETRY)
def revalidate(submission_id: int, reason: str = "re-validation", user_id: int | None = None) -> None:
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.filter(pk=user_id).first() if user_id else None
    validation_id, run_ids = pipeline.revalidate(submission_id, reason, user)
    _fan_out(validation_id, run_ids)


@shared_task(
    **RETRY, soft_time_limit=settings.CHECK_SOFT_TIME_LIMIT, time_limit=settings.CHECK_SOFT_TIME_LIMIT + 30
)
def check_run(run_id: int, validation_id: int) -> None:
    last_of = pipeline.check_run(run_id, validation_id)
    if last_of is not None:
        finalize.delay(last_of)


@shared_task(**RETRY)
def finalize(submission_id: int) -> None:
    pipeline.finalize(submission_id)


class _Queue:
    """What the sweeper queues, as tasks."""

    ingest = staticmethod(lambda submission_id: ingest.delay(submission_id))
    check_run = staticmethod(lambda run_id, validation_id: check_run.delay(run_id, validation_id))
    finalize = staticmethod(lambda submission_id: finalize.delay(submission_id))


@shared_task
def sweep(older_than_s: float | None = None) -> list:
    older = timedelta(seconds=older_than_s if older_than_s is not None else settings.SWEEP_OLDER_THAN_S)
    return pipeline.sweep(older, settings.SWEEP_MAX_ATTEMPTS, _Queue)
