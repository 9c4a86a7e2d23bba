"""A live round played end to end with a real Celery worker, PostgreSQL and Redis: three
organisations upload, one objects to another's result, the reviewer requires a fix, the fix is
uploaded and validated, and at the publication minute (the clock advanced by the test) the
anonymous view — round page, CSV, API — changes from nothing to everything."""

import time
from datetime import timedelta

import pytest
from django.utils import timezone

from leaderboard.models import Result, Round
from submissions.models import Submission
from submissions.review.models import Objection

from ..live_round import (
    BENCH,
    ROUND,
    bundle_file,
    live_bundle,
    live_round,
    objection_api,
    upload,
    wait_final,
)
from ..worker import media, media_root, worker  # noqa: F401

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


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


def test_a_round_from_uploads_through_review_to_publication(
    worker, media, cast, client, tmp_path, django_user_model
):
    from accounts.models import Membership, Organisation
    from submissions.checking.pipeline.publication import publish_due_rounds

    round_ = live_round()
    round_.reviewers.add(cast["reviewer"])
    initech = Organisation.objects.create(name="Initech")
    member_c = django_user_model.objects.create_user("member_c", password="pw")
    Membership.objects.create(user=member_c, organisation=initech)

    # Three organisations upload while the round is open.
    a = upload(
        client, cast["member_a"], round_, live_bundle(tmp_path, "Acme", "anvil", [50, 52, 51])
    )
    b = upload(
        client, cast["member_b"], round_, live_bundle(tmp_path, "Globex", "globe", [60, 61, 62])
    )
    c = upload(client, member_c, round_, live_bundle(tmp_path, "Initech", "tps", [70, 71, 72]))
    assert (a.organisation, b.organisation, c.organisation) == (cast["a"], cast["b"], initech)
    for submission in wait_final(a, b, c):
        assert submission.status == Submission.Status.VALID, submission.message

    # The deadline passes: review. Globex objects to Acme's result; Acme answers; the reviewer
    # requires a fix.
    Round.objects.filter(pk=round_.pk).update(deadline_at=timezone.now() - timedelta(minutes=1))
    filed = objection_api(
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
    assert (
        objection_api(client, cast["member_a"], f"{uid}/reply/", {"text": "We rerun."}).status_code
        == 200
    )
    decided = objection_api(
        client, cast["reviewer"], f"{uid}/decide/", {"decision": "fix_required", "note": "Rerun."}
    )
    assert decided.json()["status"] == "fix_required", decided.content

    # During review only the organisation asked for a fix uploads; its upload answers the objection.
    client.force_login(cast["member_b"])
    refused = client.post(
        "/submissions/upload/",
        {
            "round": round_.key,
            "bundle": bundle_file(live_bundle(tmp_path, "Globex", "globe", [59, 60, 61])),
        },
    )
    assert refused.status_code == 403 and "deadline" in refused.content.decode()
    fix = upload(
        client, cast["member_a"], round_, live_bundle(tmp_path, "Acme", "anvil", [53, 54, 55])
    )
    objection = Objection.objects.get(uid=uid)
    assert objection.status == Objection.Status.FIXED and objection.fix == fix
    (fix,) = wait_final(fix)
    assert fix.status == Submission.Status.VALID, fix.message
    accepted = objection_api(client, cast["reviewer"], f"{uid}/decide/", {"decision": "accepted"})
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
