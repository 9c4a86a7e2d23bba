"""A round's import as a job (leaderboard.RoundImport): who takes it, and what it says as it goes.

One import of a round runs at a time: `claim` takes the round's row with a conditional UPDATE, and a
second command (or a second press of the round page's button) is told that one is under way. A job
whose last word is older than STALE is taken over: its process died (a worker killed mid-fetch gives its
task back, acks late, and the command goes on from what git already holds).
"""

from datetime import timedelta

from django.db.models import Q
from django.utils import timezone

from leaderboard.models import Round, RoundImport

STALE = timedelta(minutes=15)
NOTE_EVERY = timedelta(
    seconds=2
)  # progress written at most this often (git's is read twice a second)

State = RoundImport.State


class AlreadyImporting(Exception):
    """str(e) says since when, and what the import under way is doing."""


def claim(round_: Round, state: str, source: str = "", *, queued_ok: bool = False) -> RoundImport:
    """Take the round's import row for a new run in `state` (QUEUED by the round page, FETCHING by the
    command), or raise AlreadyImporting. `queued_ok`: a job queued and not yet started is taken over
    (the command run by hand, or the queued task itself)."""
    now = timezone.now()
    job, _ = RoundImport.objects.get_or_create(round=round_, defaults={"state": State.DONE})
    free = ~Q(state__in=RoundImport.RUNNING) | Q(updated_at__lt=now - STALE)
    if queued_ok:
        free |= Q(state=State.QUEUED)
    fresh = dict(
        state=state, source=source, commit="", step="", done=0, total=0, received_bytes=0,
        error="", started_at=now, updated_at=now, finished_at=None,
    )  # fmt: skip
    if not RoundImport.objects.filter(free, pk=job.pk).update(**fresh):
        job.refresh_from_db()
        raise AlreadyImporting(
            f"{round_.name} is being imported already (since {job.started_at:%Y-%m-%d %H:%M} UTC: "
            f"{job.get_state_display().lower()}{', ' + job.step if job.step else ''})."
        )
    job.refresh_from_db()
    return job


def note(job: RoundImport, *, force: bool = False, **fields) -> None:
    """Set `fields` of the job and write what it is doing, at most every NOTE_EVERY unless `force`."""
    now = timezone.now()
    for name, value in fields.items():
        setattr(job, name, value)
    if not force and now - job.updated_at < NOTE_EVERY:
        return
    job.updated_at = now
    if job.state in (State.DONE, State.FAILED):
        job.finished_at = now
    RoundImport.objects.filter(pk=job.pk).update(
        **{name: getattr(job, name) for name in WRITTEN},
        updated_at=now,
        finished_at=job.finished_at,
    )


WRITTEN = ("state", "source", "commit", "step", "done", "total", "received_bytes", "error")
