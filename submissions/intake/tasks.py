"""Intake's Celery tasks: dropping chunked uploads abandoned part-way (beat); importing a published round
(staff, from the round's page)."""

from datetime import timedelta

from celery import shared_task
from django.conf import settings
from django.core.management import call_command

from .uploads import purge_stale


@shared_task(name="submissions.tasks.purge_stale_uploads")
def purge_stale_uploads() -> int:
    """Drop chunked uploads untouched for UPLOAD_EXPIRY_DAYS, with their parts (beat: hourly)."""
    return purge_stale(timedelta(days=settings.UPLOAD_EXPIRY_DAYS))


# A round's fetch over a slow network may take longer than the site's task limit (CELERY_TASK_TIME_LIMIT).
IMPORT_TIME_LIMIT_S = 4 * 3600


@shared_task(
    name="submissions.tasks.import_round",
    time_limit=IMPORT_TIME_LIMIT_S,
    soft_time_limit=IMPORT_TIME_LIMIT_S - 60,
)
def import_round(round_key: str) -> None:
    """`manage.py import_round` for a round staff queued (RoundImport QUEUED): it fetches and hands every
    submitter over to ingest, and returns (the same worker then checks them). Acknowledged when it ends: a
    worker that dies mid-fetch leaves it to another, which goes on from what the clone holds."""
    call_command("import_round", round_key, "--no-wait")
