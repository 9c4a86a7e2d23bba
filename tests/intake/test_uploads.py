"""Chunked uploads through API v1 (submissions/intake/uploads.py, submissions/api.py): offsets, resuming, limits,
checksums, one submission per bundle, receipts, and who may see what."""

import hashlib
import socket
import time
import uuid
from pathlib import Path
from urllib.parse import urlparse

import pytest
from django.core import mail

from accounts.models import ApiToken
from audit.models import AuditEvent
from submissions.models import Submission, Upload

from ..bundles import bundle_bytes
from ..uploads import (
    OCTETS,
    UPLOADS,
    complete,
    files_under,
    send,
    start,
    token_for,
    upload_whole,
)


@pytest.mark.usefixtures("eager")
@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
def test_a_bundle_sent_in_parts_becomes_one_checked_submission_with_its_steps(
    client, rounds, cast, tmp_path
):
    data = bundle_bytes(tmp_path)
    auth = token_for(cast["member_a"])
    created = start(client, auth, data)
    assert created.status_code == 201 and created["Upload-Offset"] == "0"
    uid = created.json()["uid"]
    assert created.json()["organisation"] == "acme"
    assert send(client, auth, uid, 0, data[:1000])["Upload-Offset"] == "1000"
    assert client.head(f"{UPLOADS}{uid}/", **auth)["Upload-Offset"] == "1000"
    assert send(client, auth, uid, 1000, data[1000:])["Upload-Offset"] == str(len(data))
    done = complete(client, auth, uid, hashlib.sha256(data).hexdigest())
    assert done.status_code == 201, done.content
    body = done.json()
    submission = Submission.objects.get()
    assert body["uid"] == str(submission.uid) and body["sha256"] == hashlib.sha256(data).hexdigest()
    assert submission.organisation.slug == "acme" and submission.status == "valid"
    status = client.get(f"/api/v1/submissions/{submission.uid}/", **auth).json()
    assert [(s["code"], s["state"]) for s in status["steps"]] == [
        ("received", "done"),
        ("unpacked", "done"),
        ("checked", "done"),
        ("scored", "done"),
        ("reference", "waiting"),  # no GPU agent is online in this test
    ]
    assert "waiting for" in status["steps"][4]["detail"]
    report = client.get(f"/api/v1/submissions/{submission.uid}/findings/", **auth).json()
    assert report["status"] == "valid" and report["counts"]["error"] == 0
    assert not files_under(Path(submission.bundle.path).parents[2] / "uploads")  # no part left


@pytest.mark.django_db
def test_a_wrong_offset_is_answered_409_with_the_offset_held(client, rounds, cast, tmp_path):
    data = bundle_bytes(tmp_path)
    auth = token_for(cast["member_a"])
    uid = start(client, auth, data).json()["uid"]
    send(client, auth, uid, 0, data[:100])
    for offset in (0, 50, 200):
        response = send(client, auth, uid, offset, data[offset : offset + 10])
        assert response.status_code == 409 and response["Upload-Offset"] == "100"
        assert response.json()["offset"] == 100
    assert Upload.objects.get().offset == 100


@pytest.mark.django_db(transaction=True)  # the live server reads the test's rows
def test_a_chunked_upload_cut_off_halfway_and_resumed_gives_the_same_sha256_and_one_submission(
    live_server, rounds, cast, tmp_path, settings
):
    """A raw connection that declares a whole part and drops halfway through it: the portal keeps what
    arrived, says so, and the rest sent from there completes the bundle."""
    # No worker runs: the submission is only queued (a module with a worker purges the broker first).
    data = bundle_bytes(tmp_path)
    key = ApiToken.create(cast["member_a"], "test")[1]
    import requests

    session = requests.Session()
    session.headers["Authorization"] = f"Token {key}"
    api = f"{live_server.url}{UPLOADS}"
    uid = session.post(
        api, json={"round": "training-v5.1", "name": "acme.tgz", "size": len(data)}
    ).json()["uid"]
    half = len(data) // 2
    host, port = urlparse(live_server.url).hostname, urlparse(live_server.url).port
    with socket.create_connection((host, port)) as raw:
        raw.sendall(
            (
                f"PATCH {UPLOADS}{uid}/ HTTP/1.1\r\nHost: {host}\r\nAuthorization: Token {key}\r\n"
                f"Upload-Offset: 0\r\nContent-Type: {OCTETS}\r\nContent-Length: {len(data)}\r\n\r\n"
            ).encode()
            + data[:half]
        )
        time.sleep(0.3)
    deadline = time.monotonic() + 10
    while (held := int(session.head(f"{api}{uid}/").headers["Upload-Offset"])) < half:
        assert time.monotonic() < deadline, held
        time.sleep(0.1)
    assert held == half
    response = session.patch(
        f"{api}{uid}/",
        data=data[held:],
        headers={"Upload-Offset": str(held), "Content-Type": OCTETS},
    )
    assert response.status_code == 204 and response.headers["Upload-Offset"] == str(len(data))
    sha = hashlib.sha256(data).hexdigest()
    done = session.post(f"{api}{uid}/complete/", json={"sha256": sha})
    assert done.status_code == 201 and done.json()["sha256"] == sha
    assert Submission.objects.get().sha256 == sha
    assert (
        hashlib.sha256(Path(Submission.objects.get().bundle.path).read_bytes()).hexdigest() == sha
    )


@pytest.mark.django_db
def test_an_upload_declared_past_the_limit_is_refused_before_a_byte_is_sent(
    client, rounds, cast, tmp_path, settings
):
    settings.UPLOAD_MAX_BYTES = 1000
    auth = token_for(cast["member_a"])
    response = start(client, auth, b"x" * 1001)
    assert response.status_code == 413 and "1,000 bytes" in response.json()["detail"]
    assert not Upload.objects.exists() and files_under(settings.MEDIA_ROOT) == []


@pytest.mark.django_db
def test_bytes_past_the_declared_size_are_refused_and_nothing_of_that_part_is_written(
    client, rounds, cast, tmp_path, settings
):
    data = bundle_bytes(tmp_path)
    auth = token_for(cast["member_a"])
    uid = start(client, auth, data).json()["uid"]
    send(client, auth, uid, 0, data[:100])
    response = send(client, auth, uid, 100, data[100:] + b"more")
    assert response.status_code == 413 and response["Upload-Offset"] == "100"
    (part,) = files_under(Path(settings.MEDIA_ROOT) / "uploads")
    assert part.stat().st_size == 100 and not Submission.objects.exists()


@pytest.mark.django_db
def test_completing_before_the_last_byte_is_refused_with_the_offset(client, rounds, cast, tmp_path):
    data = bundle_bytes(tmp_path)
    auth = token_for(cast["member_a"])
    uid = start(client, auth, data).json()["uid"]
    send(client, auth, uid, 0, data[:100])
    response = complete(client, auth, uid)
    assert response.status_code == 409 and response.json()["offset"] == 100
    assert not Submission.objects.exists()


@pytest.mark.django_db
def test_a_damaged_upload_is_refused_by_its_sha256_and_starts_again(client, rounds, cast, tmp_path):
    data = bundle_bytes(tmp_path)
    auth = token_for(cast["member_a"])
    sha = hashlib.sha256(data).hexdigest()
    uid = start(client, auth, data, sha256=sha).json()["uid"]
    damaged = bytes([data[0] ^ 1]) + data[1:]
    send(client, auth, uid, 0, damaged)
    response = complete(client, auth, uid)  # the sha256 given at creation is checked
    assert response.status_code == 400 and sha in response.json()["detail"]
    assert response.json()["offset"] == 0 and not Submission.objects.exists()
    assert send(client, auth, uid, 0, data).status_code == 204
    assert complete(client, auth, uid).status_code == 201


@pytest.mark.usefixtures("eager")
@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
def test_the_same_bundle_twice_gives_one_submission(client, rounds, cast, tmp_path):
    data = bundle_bytes(tmp_path)
    auth = token_for(cast["member_a"])
    first, again = (
        upload_whole(client, auth, data),
        upload_whole(client, auth, data, name="again.tgz"),
    )
    assert (first.status_code, again.status_code) == (201, 200)
    assert first.json()["uid"] == again.json()["uid"]
    receipts = [m for m in mail.outbox if "X-Portal-Event" not in m.extra_headers]  # not verdicts
    assert Submission.objects.count() == 1 and len(receipts) == 1  # one receipt
    bundles = files_under(Path(Submission.objects.get().bundle.path).parent)
    assert [p.name for p in bundles] == [Path(Submission.objects.get().bundle.name).name]


@pytest.mark.usefixtures("eager")
@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
def test_an_accepted_upload_gets_a_receipt_page_an_email_and_an_audit_event(
    client, rounds, cast, tmp_path
):
    data = bundle_bytes(tmp_path)
    done = upload_whole(client, token_for(cast["member_a"]), data)
    submission = Submission.objects.get()
    (message,) = [m for m in mail.outbox if "X-Portal-Event" not in m.extra_headers]  # the receipt
    assert message.to == ["member_a@example.org"]
    for fact in (str(submission.uid), "acme.tgz", f"{len(data)} bytes", submission.sha256):
        assert fact in message.body
    assert f"http://testserver/submissions/{submission.uid}/" in message.body
    assert done.json()["receipt_url"] == f"http://testserver/submissions/{submission.uid}/receipt/"
    client.force_login(cast["member_a"])
    page = client.get(f"/submissions/{submission.uid}/receipt/").content.decode()
    assert str(submission.uid) in page and submission.sha256 in page and "acme.tgz" in page
    event = AuditEvent.objects.get(action="submission.uploaded")
    assert event.actor == cast["member_a"] and event.object_uid == str(submission.uid)


@pytest.mark.django_db
def test_uploads_and_submissions_of_others_answer_404(client, rounds, cast, tmp_path):
    data = bundle_bytes(tmp_path)
    owner, outsider = token_for(cast["member_a"]), token_for(cast["member_b"])
    uid = start(client, owner, data).json()["uid"]
    assert client.head(f"{UPLOADS}{uid}/", **outsider).status_code == 404
    assert send(client, outsider, uid, 0, data).status_code == 404
    assert complete(client, outsider, uid).status_code == 404
    send(client, owner, uid, 0, data)
    submission_uid = complete(client, owner, uid).json()["uid"]
    assert client.get(f"/api/v1/submissions/{submission_uid}/", **outsider).status_code == 404
    assert client.get("/api/v1/submissions/", **outsider).json()["count"] == 0
    assert client.get("/api/v1/submissions/", **owner).json()["count"] == 1
    assert client.get(f"/submissions/{submission_uid}/receipt/").status_code == 302  # log in first


@pytest.mark.django_db
def test_an_upload_for_an_organisation_not_ones_own_is_refused(client, rounds, cast, tmp_path):
    data = bundle_bytes(tmp_path)
    response = start(client, token_for(cast["member_a"]), data, organisation="globex")
    assert response.status_code == 400 and "acme" in response.json()["organisation"]
    response = start(client, token_for(cast["staff"]), data)  # staff, member of none
    assert response.status_code == 400 and "none" in response.json()["organisation"]
    assert not Upload.objects.exists()


@pytest.mark.django_db
def test_an_upload_after_the_deadline_is_refused_with_the_date(client, rounds, cast, tmp_path):
    from datetime import timedelta

    from django.utils import timezone

    round_ = rounds["training-v5.1"]
    round_.deadline_at = timezone.now() - timedelta(days=1)
    round_.publish_at = timezone.now() + timedelta(days=30)
    round_.save()
    response = start(client, token_for(cast["member_a"]), bundle_bytes(tmp_path))
    assert response.status_code == 403
    assert f"{round_.deadline_at:%B %Y}" in response.json()["detail"]


@pytest.mark.django_db
def test_an_upload_needs_a_login(client, rounds):
    assert client.post(UPLOADS, {}, content_type="application/json").status_code in (401, 403)


@pytest.mark.django_db
def test_a_round_key_with_a_nul_byte_is_no_round(client, rounds, cast, tmp_path):
    response = start(client, token_for(cast["member_a"]), b"x", round="training-v5.1\x00")
    assert response.status_code == 400 and "round" in response.json()


@pytest.mark.django_db
def test_uploads_left_unfinished_past_their_expiry_are_dropped_with_their_bytes(
    client, rounds, cast, tmp_path, settings
):
    from datetime import timedelta

    from django.utils import timezone

    from submissions.intake.uploads import part_path, purge_stale

    data = bundle_bytes(tmp_path)
    auth = token_for(cast["member_a"])
    old, fresh = (start(client, auth, data).json()["uid"] for _ in range(2))
    for uid in (old, fresh):
        send(client, auth, uid, 0, data[:100])
    Upload.objects.filter(uid=old).update(updated_at=timezone.now() - timedelta(days=8))
    gone = part_path(Upload.objects.get(uid=old))
    assert purge_stale(timedelta(days=7)) == 1
    assert list(Upload.objects.values_list("uid", flat=True)) == [uuid.UUID(fresh)]
    assert not gone.exists() and part_path(Upload.objects.get()).stat().st_size == 100


@pytest.mark.usefixtures("eager")
@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
def test_bundles_kept_in_a_storage_without_local_paths_are_streamed_in_and_copied_out_to_check(
    client, rounds, cast, tmp_path, settings
):
    """As with a bucket (S3_BUCKET): Django's in-memory storage has no path(), so the finished upload is
    streamed into it, and ingest reads a copy in the work folder, removed when the checks are done."""
    from django.core.files.storage import default_storage

    settings.STORAGES = {
        **settings.STORAGES,
        "default": {"BACKEND": "django.core.files.storage.InMemoryStorage"},
    }
    data = bundle_bytes(tmp_path)
    done = upload_whole(client, token_for(cast["member_a"]), data)
    assert done.status_code == 201, done.content
    submission = Submission.objects.get()
    assert submission.status == "valid", submission.message
    with default_storage.open(submission.bundle.name) as stored:
        assert stored.read() == data
    media = Path(settings.MEDIA_ROOT)
    assert not (media / "bundles").exists()  # nothing of it on the local disk
    assert not list((media / "work").glob("*.bundle"))  # the work copy went with the checks
