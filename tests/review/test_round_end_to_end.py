"""A live round played end to end with a real Celery worker, PostgreSQL and Redis: three
organisations upload, one objects to another's result, the reviewer requires a fix, the fix is
uploaded and validated, and at the publication minute (the clock advanced by the test) the
anonymous view — round page, CSV, API — changes from nothing to everything."""

import io
import tarfile
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from leaderboard.models import Result, Round
from submissions.models import Submission
from submissions.review.models import Objection
from submissions.synthetic.bundles import SystemSpec, write_bundle

from ..worker import media, media_root, worker  # noqa: F401

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

BENCH = "llama31_405b"  # three runs a result: the smallest bundle the v5.1 rules score
ROUND = "training-live"
HOUR = timedelta(hours=1)


def _round() -> Round:
    """Training v5.1's rules as a live round, open now."""
    from leaderboard.rounds import ROUNDS_DIR, load_round, read_round_file

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


def _bundle(tmp_path, organisation: str, system: str, minutes: list[float]) -> bytes:
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


def _upload(client, user, round_, body: bytes):
    client.force_login(user)
    response = client.post("/submissions/upload/", {"round": round_.key, "bundle": _file(body)})
    assert response.status_code == 302, response.content.decode()[:2000]
    return Submission.objects.filter(uploaded_by=user).order_by("-created_at").first()


def _wait_final(*submissions, timeout=180):
    deadline = time.monotonic() + timeout
    pending = {s.pk for s in submissions}
    while pending and time.monotonic() < deadline:
        pending = {pk for pk in pending if not Submission.objects.get(pk=pk).is_final}
        time.sleep(0.3)
    assert not pending, f"submissions {pending} not final after {timeout} s"
    return [Submission.objects.get(pk=s.pk) for s in submissions]


def _anonymous_view(client) -> tuple[str, str, int]:
    """The round page, its CSV and the API's count of the round's results, for someone signed out."""
    client.logout()
    page = client.get(f"/r/{ROUND}/").content.decode()
    csv = client.get(f"/r/{ROUND}/?format=csv").content.decode()
    api = client.get(f"/api/v1/results/?round={ROUND}").json()["count"]
    return page, csv, api


SYSTEMS = ("anvil", "globe", "tps")


def _shows(view) -> set[str]:
    page, csv, count = view
    return {s for s in SYSTEMS if s in page or s in csv} | ({"api"} if count else set())


def _api(client, user, path, data):
    client.force_login(user)
    return client.post(f"/api/v1/objections/{path}", data, content_type="application/json")


def test_a_round_from_uploads_through_review_to_publication(
    worker, media, cast, client, tmp_path, django_user_model
):
    from accounts.models import Membership, Organisation
    from submissions.checking.pipeline.publication import publish_due_rounds

    round_ = _round()
    round_.reviewers.add(cast["reviewer"])
    initech = Organisation.objects.create(name="Initech")
    member_c = django_user_model.objects.create_user("member_c", password="pw")
    Membership.objects.create(user=member_c, organisation=initech)

    # Three organisations upload while the round is open.
    a = _upload(client, cast["member_a"], round_, _bundle(tmp_path, "Acme", "anvil", [50, 52, 51]))
    b = _upload(
        client, cast["member_b"], round_, _bundle(tmp_path, "Globex", "globe", [60, 61, 62])
    )
    c = _upload(client, member_c, round_, _bundle(tmp_path, "Initech", "tps", [70, 71, 72]))
    assert (a.organisation, b.organisation, c.organisation) == (cast["a"], cast["b"], initech)
    for submission in _wait_final(a, b, c):
        assert submission.status == Submission.Status.VALID, submission.message

    # The deadline passes: review. Globex objects to Acme's result; Acme answers; the reviewer
    # requires a fix.
    Round.objects.filter(pk=round_.pk).update(deadline_at=timezone.now() - timedelta(minutes=1))
    filed = _api(
        client,
        cast["member_b"],
        "",
        {
            "submission": str(a.uid),
            "system": "anvil",
            "benchmark": BENCH,
            "rule": "Training rules 9.3: seeds",
            "file": f"results/anvil/{BENCH}/result_0.txt",
            "lines": "1-20",
            "comment": "The seeds are not random.",
        },
    )
    assert filed.status_code == 201, filed.content
    uid = filed.json()["uid"]
    assert _api(client, cast["member_a"], f"{uid}/reply/", {"text": "We rerun."}).status_code == 200
    decided = _api(
        client, cast["reviewer"], f"{uid}/decide/", {"decision": "fix_required", "note": "Rerun."}
    )
    assert decided.json()["status"] == "fix_required", decided.content

    # During review only the organisation asked for a fix uploads; its upload answers the objection.
    client.force_login(cast["member_b"])
    refused = client.post(
        "/submissions/upload/",
        {"round": round_.key, "bundle": _file(_bundle(tmp_path, "Globex", "globe", [59, 60, 61]))},
    )
    assert refused.status_code == 403 and "deadline" in refused.content.decode()
    fix = _upload(
        client, cast["member_a"], round_, _bundle(tmp_path, "Acme", "anvil", [53, 54, 55])
    )
    objection = Objection.objects.get(uid=uid)
    assert objection.status == Objection.Status.FIXED and objection.fix == fix
    (fix,) = _wait_final(fix)
    assert fix.status == Submission.Status.VALID, fix.message
    accepted = _api(client, cast["reviewer"], f"{uid}/decide/", {"decision": "accepted"})
    assert accepted.json()["status"] == "decided", accepted.content

    # Publication at the set minute, and not before: a minute earlier publishes nothing and the
    # anonymous view shows nothing; at the minute it shows everything.
    minute = timezone.now() + timedelta(seconds=3)
    Round.objects.filter(pk=round_.pk).update(
        review_ends_at=minute - timedelta(minutes=1), publish_at=minute
    )
    assert _shows(_anonymous_view(client)) == set()
    assert publish_due_rounds(now=minute - timedelta(minutes=1)) == []
    assert _shows(_anonymous_view(client)) == set()
    time.sleep(max(0.0, (minute - timezone.now()).total_seconds()))
    assert publish_due_rounds(now=minute) == [ROUND]
    view = _anonymous_view(client)
    assert _shows(view) == {*SYSTEMS, "api"} and view[2] == 3
    published = Result.objects.filter(published=True).values_list("system__submission", flat=True)
    assert set(published) == {fix.pk, b.pk, c.pk}  # Acme's fix, not the bundle it replaced


def _file(body: bytes):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile("again.tgz", body)
