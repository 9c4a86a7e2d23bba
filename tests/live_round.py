"""A live round for the tests of roles, visibility and publication: training-v5.1 given a calendar
around `now`, with one checked, unpublished submission of Acme and one of Globex (cast fixture)."""

from datetime import timedelta

from django.utils import timezone

from leaderboard.models import Result, Round, Submitter, System
from submissions.models import Submission, Validation

HOUR = timedelta(hours=1)


def set_phase(round_: Round, phase: str, now=None) -> Round:
    """Dates that put the round in `phase` at `now`: open, review or published."""
    now = now or timezone.now()
    offsets = {  # (opens, deadline, publish) relative to now
        "open": (-10 * HOUR, 5 * HOUR, 20 * HOUR),
        "review": (-10 * HOUR, -5 * HOUR, 20 * HOUR),
        "published": (-30 * HOUR, -20 * HOUR, -HOUR),
    }[phase]
    opens, deadline, publish = (now + o for o in offsets)
    Round.objects.filter(pk=round_.pk).update(
        opens_at=opens, deadline_at=deadline, publish_at=publish, review_ends_at=publish - HOUR
    )
    round_.refresh_from_db()
    return round_


def checked_submission(round_: Round, organisation, submitter: str, system_key: str = "alpha"):
    """A valid submission of `organisation` with one unpublished scored result."""
    name = Submitter.objects.get_or_create(name=submitter)[0]
    submission = Submission.objects.create(
        round=round_,
        organisation=organisation,
        submitter=name,
        bundle=f"bundles/{submitter}-{system_key}.tgz",
        original_name=f"{submitter}-{system_key}.tgz",
        sha256=(submitter + system_key).encode().hex().ljust(64, "0")[:64],
        size=1,
        status=Submission.Status.VALID,
    )
    system = System.objects.create(
        submission=submission, round=round_, submitter=name, key=system_key, name=system_key
    )
    Result.objects.create(
        system=system,
        benchmark=round_.benchmarks.get(key="retinanet"),
        path=f"{submitter}/results/{system_key}/retinanet",
        score_s=600.0,
    )
    Validation.objects.create(
        submission=submission, number=1, status="done", verdict="valid", scored=1
    )
    return submission
