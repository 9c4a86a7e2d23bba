"""Review's Celery task: publishing the rounds whose publication time has come (beat)."""

from celery import shared_task

from portal.celery import RETRY
from submissions.checking import pipeline


@shared_task(name="submissions.tasks.publish_due_rounds", **RETRY)
def publish_due_rounds() -> list[str]:
    """Publish the rounds whose publication minute has come (beat: every PUBLISH_EVERY_S)."""
    return pipeline.publish_due_rounds()
