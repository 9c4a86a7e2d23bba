"""A live round for the tests of roles, visibility and publication: training-v5.1 given a calendar
around `now`, with one checked, unpublished submission of Acme and one of Globex (cast fixture). And for
the tests that play a round with a real worker (tests/review/test_round_end_to_end.py,
tests/notifications/test_live_round_mail.py): `live_round` (v5.1's rules as "training-live", open now),
its bundles, uploads through the site, the objections' API."""

import io
import tarfile
import time
from datetime import timedelta

from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from leaderboard.catalogue.rounds import ROUNDS_DIR, load_round, read_round_file
from leaderboard.models import Result, Round, Submitter, System
from submissions.models import Submission, Validation
from submissions.synthetic.bundles import SystemSpec, write_bundle

HOUR = timedelta(hours=1)
BENCH = "llama31_405b"  # three runs a result: the smallest bundle the v5.1 rules score
ROUND = "training-live"


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


def live_round() -> Round:
    """Training v5.1's rules as a live round, open now."""
    data = read_round_file(ROUNDS_DIR / "training-v5.1.toml")
    data.update(key=ROUND, name="Training live", history=False)
    round_ = load_round(data)
    now = timezone.now()
    Round.objects.filter(pk=round_.pk).update(
        opens_at=now - HOUR,
        deadline_at=now + HOUR,
        review_ends_at=now + 2 * HOUR,
        publish_at=now + 3 * HOUR,
    )
    round_.refresh_from_db()
    return round_


def live_bundle(tmp_path, organisation: str, system: str, minutes: list[float]) -> bytes:
    folder = write_bundle(
        tmp_path / f"{system}-{minutes[0]}",
        organisation,
        [SystemSpec(system, results={BENCH: minutes})],
        {BENCH: 5.6},
    )
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        tar.add(folder, arcname=organisation)
    return out.getvalue()


def upload(client, user, round_, body: bytes):
    client.force_login(user)
    response = client.post(
        "/submissions/upload/", {"round": round_.key, "bundle": bundle_file(body)}
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    return Submission.objects.filter(uploaded_by=user).order_by("-created_at").first()


def wait_final(*submissions, timeout=180):
    deadline = time.monotonic() + timeout
    pending = {s.pk for s in submissions}
    while pending and time.monotonic() < deadline:
        pending = {pk for pk in pending if not Submission.objects.get(pk=pk).is_final}
        time.sleep(0.3)
    assert not pending, f"submissions {pending} not final after {timeout} s"
    return [Submission.objects.get(pk=s.pk) for s in submissions]


def objection_api(client, user, path, data):
    client.force_login(user)
    return client.post(f"/api/v1/objections/{path}", data, content_type="application/json")


def bundle_file(body: bytes):
    return SimpleUploadedFile("again.tgz", body)
