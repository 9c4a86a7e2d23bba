"""The reference checks' Celery tasks: what an agent (agent/) sends back, by name, on the queue "checks"."""

from celery import shared_task

from portal.celery import RETRY

from . import jobs


@shared_task(name="submissions.store_reference_check", **RETRY)
def store_reference_check(payload: dict) -> str:
    """An agent's answer to agent.reference_check (agent/ sends it by name on the queue "checks")."""
    return jobs.store(payload)


@shared_task(name="submissions.agent_heartbeat", **RETRY)
def agent_heartbeat(payload: dict) -> None:
    """An agent's announcement: at start, every beat, and when it takes or ends a job."""
    jobs.heartbeat(payload)
