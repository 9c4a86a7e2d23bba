"""Uploads follow the round's calendar and the uploader's organisations."""

from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from audit.models import AuditEvent
from leaderboard.catalogue.calendar import when
from leaderboard.models import Round
from submissions.models import Submission

from ..bundles import bundle_bytes
from ..live_round import set_phase

pytestmark = pytest.mark.django_db

UPLOAD = "/submissions/upload/"


def upload(client, data, **fields):
    return client.post(
        UPLOAD,
        {"round": "training-v5.1", "bundle": SimpleUploadedFile("acme.tgz", data), **fields},
    )


@pytest.fixture
def data(tmp_path):
    return bundle_bytes(tmp_path)


def test_an_upload_before_opening_is_refused_with_the_date_and_time(client, rounds, cast, data):
    opens = timezone.now() + timedelta(days=2)
    Round.objects.filter(key="training-v5.1").update(opens_at=opens)
    client.force_login(cast["member_a"])
    response = upload(client, data)
    assert response.status_code == 403
    assert f"Uploads to Training v5.1 open on {when(opens)}." in response.content.decode()
    assert not Submission.objects.exists()
    event = AuditEvent.objects.get(action="submission.refused")
    assert event.actor == cast["member_a"] and event.organisation == "Acme"


def test_an_upload_after_the_deadline_is_refused_during_review(client, rounds, cast, data):
    round_ = set_phase(rounds["training-v5.1"], "review")
    client.force_login(cast["member_a"])
    response = upload(client, data)
    text = response.content.decode()
    assert response.status_code == 403
    assert f"The deadline for Training v5.1 was {when(round_.deadline_at)}." in text
    assert "only a fix that a reviewer asked for is taken" in text
    assert not Submission.objects.exists()


def test_an_upload_while_open_is_taken_for_the_users_organisation(client, rounds, cast, data):
    set_phase(rounds["training-v5.1"], "open")
    client.force_login(cast["member_a"])
    response = upload(client, data)
    submission = Submission.objects.get()
    assert response.status_code == 302 and submission.organisation == cast["a"]
    event = AuditEvent.objects.get(action="submission.uploaded")
    assert event.object_uid == str(submission.uid) and event.details["sha256"] == submission.sha256


def test_a_user_uploads_only_for_their_own_organisation(client, rounds, cast, data):
    client.force_login(cast["member_a"])
    response = upload(client, data, organisation=cast["b"].slug)
    assert response.status_code == 200 and not Submission.objects.exists()
    assert "Select a valid choice" in response.content.decode()


def test_a_member_of_two_organisations_chooses(client, rounds, cast, data):
    from accounts.models import Membership

    Membership.objects.create(user=cast["member_a"], organisation=cast["b"])
    client.force_login(cast["member_a"])
    page = client.get(UPLOAD).content.decode()
    assert "Acme" in page and "Globex" in page
    assert "Choose the organisation" in upload(client, data).content.decode()
    upload(client, data, organisation=cast["b"].slug)
    assert Submission.objects.get().organisation == cast["b"]


def test_a_user_of_no_organisation_is_told_why_they_cannot_upload(client, rounds, cast, data):
    client.force_login(cast["outsider"])
    response = upload(client, data)
    assert "you are a member of none" in response.content.decode()
    assert not Submission.objects.exists()


def test_a_bundle_of_another_registered_organisation_is_not_recorded(rounds, cast, tmp_path):
    from submissions.checking.pipeline import ingest
    from submissions.intake.submit import submit

    globex = bundle_bytes(tmp_path, org="Globex")
    submission, _ = submit(
        rounds["training-v5.1"], [globex], "g.tgz", user=cast["member_a"], organisation=cast["a"]
    )
    ingest(submission.pk)
    submission.refresh_from_db()
    assert submission.status == Submission.Status.FAILED
    assert submission.rule == "bundle.other-organisation"
    assert "which reads as Globex's name, and it was uploaded for Acme" in submission.message
    assert "Name the folder 'Acme'" in submission.message
    assert not submission.systems.exists()


def test_a_bundle_of_its_own_or_an_unregistered_organisation_is_recorded(rounds, cast, tmp_path):
    from submissions.checking.pipeline import ingest
    from submissions.intake.submit import submit

    for org in ("Acme", "Initech"):
        data = bundle_bytes(tmp_path / org, org=org)
        submission, _ = submit(
            rounds["training-v5.1"],
            [data],
            f"{org}.tgz",
            user=cast["member_a"],
            organisation=cast["a"],
        )
        ingest(submission.pk)
        submission.refresh_from_db()
        assert submission.status != Submission.Status.FAILED, (org, submission.message)
        assert submission.systems.exists()


def offered_rounds(client):
    import re

    html = client.get(UPLOAD).content.decode()
    select = re.search(r'<select name="round".*?</select>', html, re.S).group(0)
    return re.findall(r'<option value="([^"]+)"', select), html


def test_the_form_offers_the_rounds_open_for_submission_and_history_to_staff(client, rounds, cast):
    client.force_login(cast["member_a"])
    # v5.1 has no calendar and is not imported history: it takes uploads at any time. The imported
    # history rounds (v0.5 ...) are not offered to members.
    assert offered_rounds(client)[0] == ["training-v5.1"]
    set_phase(rounds["training-v5.1"], "open")
    assert offered_rounds(client)[0] == ["training-v5.1"]
    set_phase(rounds["training-v5.1"], "review")
    offered, html = offered_rounds(client)
    assert offered == ["training-v5.1"] and "in review: a fix a reviewer asked for" in html
    set_phase(rounds["training-v5.1"], "published")
    offered, html = offered_rounds(client)
    assert offered == [] and "No round is open for submission now." in html
    staff = cast["member_a"]
    staff.is_staff = True
    staff.save()
    offered, html = offered_rounds(client)  # staff import history: those rounds are offered to them
    assert "training-v0.5" in offered and "training-v5.1" not in offered


def test_the_calendars_refusal_is_in_the_uploaders_language(client, rounds, cast, data):
    set_phase(rounds["training-v5.1"], "review")
    client.force_login(cast["member_a"])
    client.cookies["lang"] = "zh-hans"
    text = upload(client, data).content.decode()
    assert "Training v5.1 的截止时间为" in text and "评审期间只接受评审人要求的修正。" in text
    assert "The deadline for" not in text
    assert not Submission.objects.exists()
