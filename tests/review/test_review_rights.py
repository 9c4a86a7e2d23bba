"""Who takes part in a round's review, asked over HTTP (leaderboard/access/policy.py, "who takes part in a
round's review"): an organisation whose submission scored a result by the time the round's uploads
closed reads the other organisations' unpublished results and objects to them. A junk bundle, which ends
invalid with nothing scored, buys neither (issue 34: a 171-byte tarball did); nor does a score that a
re-validation gives after uploads closed; a score lost after they closed takes nothing away."""

import io
import tarfile
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from accounts.models import Membership, Organisation
from submissions.models import Submission, Validation

from ..live_round import checked_submission, set_phase

pytestmark = [pytest.mark.usefixtures("eager"), pytest.mark.django_db(transaction=True)]

HOUR = timedelta(hours=1)


def junk_bundle() -> bytes:
    """The red team's 171-byte kind: a system description `{}` and one log that reads `garbage`."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for name, data in (
            ("Acme/systems/x.json", b"{}"),
            ("Acme/results/x/retinanet/result_0.txt", b"garbage"),
        ):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def _globex(round_):
    """Globex's checked submission (a scored result), and the addresses a peer reads and objects at."""
    submission = checked_submission(round_, None, "Globex", "gamma")
    result = reverse("leaderboard:result", args=[round_.key, "Globex", "gamma", "retinanet"])
    return submission, result, f"/review/object/{submission.uid}/"


def _answers(client, user, *paths) -> list[int]:
    client.force_login(user)
    return [client.get(path).status_code for path in paths]


def test_a_junk_bundle_buys_no_part_in_the_review(client, rounds, cast):
    round_ = set_phase(rounds["training-v5.1"], "open")
    client.force_login(cast["member_a"])
    answer = client.post(
        "/submissions/upload/",
        {"round": round_.key, "bundle": SimpleUploadedFile("x.tgz", junk_bundle())},
    )
    assert answer.status_code == 302
    junk = Submission.objects.get(organisation=cast["a"])
    assert junk.status == Submission.Status.INVALID, junk.message  # not failed: it was read
    assert list(junk.validations.values_list("scored", flat=True)) == [0]
    globex, result, form = _globex(round_)
    Submission.objects.filter(pk=globex.pk).update(organisation=cast["b"])
    set_phase(round_, "review")

    # Acme, whose only submission scored nothing, sees nothing of Globex's and may not object to it.
    assert _answers(client, cast["member_a"], result, form, f"/submissions/{globex.uid}/") == [
        404,
        404,
        404,
    ]
    filed = client.post(form, {"system": "gamma", "benchmark": "retinanet", "comment": "x"})
    assert filed.status_code == 404
    listed = client.get(f"/api/v1/results/?round={round_.key}")
    assert listed.status_code == 200 and "gamma" not in listed.content.decode()  # its own only
    # Globex, whose submission scored, reads Acme's junk and may object to it.
    assert _answers(client, cast["member_b"], f"/submissions/{junk.uid}/") == [200]
    assert _answers(client, cast["member_b"], f"/review/object/{junk.uid}/") == [200]


def _organisation_with_passes(name: str, round_, passes) -> object:
    """An organisation with a member and one invalid-then-checked submission whose passes are
    (number, started hours after uploads closed, results scored)."""
    organisation = Organisation.objects.create(name=name)
    user = get_user_model().objects.create_user(name.lower(), password="pw")
    Membership.objects.create(user=user, organisation=organisation)
    submission = Submission.objects.create(
        round=round_,
        organisation=organisation,
        uploaded_by=user,
        bundle=f"bundles/{name}.tgz",
        original_name=f"{name}.tgz",
        sha256=name.encode().hex().ljust(64, "0")[:64],
        size=1,
        status=Submission.Status.INVALID,
    )
    closes = round_.calendar.closes_at
    for number, hours, scored in passes:
        validation = Validation.objects.create(
            submission=submission, number=number, status="done", scored=scored
        )
        Validation.objects.filter(pk=validation.pk).update(started_at=closes + hours * HOUR)
    return user


# name: (passes, whether the organisation takes part in the review)
CASES = {
    # Junk by the deadline, scored by a re-validation started after it: bought nothing.
    "Latefix": ([(1, -2, 0), (2, 1, 1)], False),
    # Scored in time, its score lost by a re-validation after the deadline: keeps its part.
    "Lostscore": ([(1, -2, 1), (2, 1, 0)], True),
    # Uploaded in time and first checked after the deadline (the rush): its first pass counts.
    "Checkedlate": ([(1, 1, 1)], True),
    # A fix re-validated before uploads closed: counts.
    "Fixedintime": ([(1, -3, 0), (2, -1, 1)], True),
}


def test_the_rights_are_fixed_when_uploads_close(client, rounds, cast):
    round_ = set_phase(rounds["training-v5.1"], "review")
    _, result, form = _globex(round_)
    users = {name: _organisation_with_passes(name, round_, p) for name, (p, _) in CASES.items()}
    seen = {name: _answers(client, users[name], result, form) for name in CASES}
    expected = {name: [200, 200] if part else [404, 404] for name, (_, part) in CASES.items()}
    assert seen == expected
