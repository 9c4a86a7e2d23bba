"""Celery tasks: thin wrappers that call a pipeline step and queue the next one.

Arguments are ids. Tasks are acknowledged late, so a worker that dies mid-task has its
task delivered again; the steps claim their work, so a repeat does nothing twice.
"""

import logging

from celery import shared_task
from django.db import InterfaceError, OperationalError

from . import pipeline

log = logging.getLogger(__name__)
TRANSIENT = (OperationalError, InterfaceError)


@shared_task(acks_late=True, autoretry_for=TRANSIENT, retry_backoff=True, max_retries=5)
def ingest(submission_id: int) -> None:
    try:
        run_ids = pipeline.ingest(submission_id)
    except TRANSIENT:
        raise
    except Exception as error:  # never leave a bundle half-way: say what broke
        log.exception("ingest of submission %s failed", submission_id)
        pipeline.fail(submission_id, f"Internal error while unpacking: {error!r}. The bundle is kept.", "internal")
        return
    for run_id in run_ids:
        check_run.delay(run_id)


@shared_task(acks_late=True, autoretry_for=TRANSIENT, retry_backoff=True, max_retries=5)
def check_run(run_id: int) -> None:
    last_of = pipeline.check_run(run_id)
    if last_of is not None:
        finalize.delay(last_of)


@shared_task(acks_late=True, autoretry_for=TRANSIENT, retry_backoff=True, max_retries=5)
def finalize(submission_id: int) -> None:
    pipeline.finalize(submission_id)
