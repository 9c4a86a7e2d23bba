"""Intake's Celery task: dropping chunked uploads abandoned part-way (beat)."""

from datetime import timedelta

from celery import shared_task
from django.conf import settings

from .uploads import purge_stale


@shared_task(name="submissions.tasks.purge_stale_uploads")
def purge_stale_uploads() -> int:
    """Drop chunked uploads untouched for UPLOAD_EXPIRY_DAYS, with their parts (beat: hourly)."""
    return purge_stale(timedelta(days=settings.UPLOAD_EXPIRY_DAYS))
