"""Uploads at their edges, through the browser form: odd names, too large, kept and purged, two uploaders."""

import io
import tarfile
import uuid
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from submissions.checking.bundles.limits import size_text
from submissions.intake.submit import display_name
from submissions.models import Submission

from ..bundles import bundle_bytes
from ..uploads import files_under

pytestmark = pytest.mark.usefixtures("eager")
UPLOAD = "/submissions/upload/"


def upload(client, name: str, data: bytes, **extra):
    return client.post(
        UPLOAD, {"round": "training-v5.1", "bundle": SimpleUploadedFile(name, data)}, **extra
    )


# Names


@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
def test_a_250_character_unicode_name_uploads_and_is_stored_under_a_short_ascii_name(
    client, rounds, cast, tmp_path
):
    name = ("résultats-日本語-Ωmega " * 20)[:243] + ".tar.gz"
    assert len(name) == 250 and len(name.encode()) > 255
    client.force_login(cast["member_a"])
    response = upload(client, name, bundle_bytes(tmp_path))
    submission = Submission.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/submissions/{submission.uid}/"
    assert submission.original_name == name and submission.status == "valid"
    stored = Path(submission.bundle.path)
    assert stored.is_file() and stored.name.isascii() and len(stored.name) <= 120
    assert stored.name.startswith(submission.sha256 + "-r") and stored.name.endswith(".tar.gz")
    assert name in client.get(response["Location"]).content.decode()


@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
def test_quotes_and_markup_in_a_name_are_shown_as_text(client, rounds, cast, tmp_path):
    name = """it's "<b>bold" & more.tgz"""
    client.force_login(cast["member_a"])
    response = upload(client, name, bundle_bytes(tmp_path))
    assert response.status_code == 302
    submission = Submission.objects.get()
    assert submission.original_name == name and Path(submission.bundle.path).name.endswith(
        "-it_s_b_bold_more.tgz"
    )
    page = client.get(response["Location"]).content.decode()
    assert "it&#x27;s &quot;&lt;b&gt;bold&quot; &amp; more.tgz" in page and "<b>bold" not in page


def test_display_names_lose_control_and_format_characters_and_keep_their_extension():
    assert display_name("C:\\Users\\me\\acme.tgz") == "acme.tgz"
    assert (
        display_name('evil\nname\r\t"x\u202e\u200b.zip') == 'evil name "x.zip'
    )  # newline parts words, RLO goes
    assert display_name("\n\x00") == "bundle"
    long = display_name("ü" * 400 + ".tar.xz")
    assert len(long) == 255 and long.endswith("ü….tar.xz")


# Size


@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
def test_an_upload_past_the_limit_is_refused_with_the_limit_named_and_nothing_kept(
    client, rounds, cast, tmp_path, settings
):
    data = bundle_bytes(tmp_path)
    settings.UPLOAD_MAX_BYTES = (
        len(data) - 1
    )  # the body's declared length passes: the count while storing refuses
    client.force_login(cast["member_a"])
    response = upload(client, "acme.tgz", data)
    assert response.status_code == 413
    page = response.content.decode()
    limit = f"{size_text(len(data) - 1)} ({len(data) - 1:,} bytes)"  # e.g. 3.4 KiB (3,499 bytes)
    assert f"The bundle is larger than {limit}, the most the portal takes in one upload" in page
    assert (
        "(UPLOAD_MAX_BYTES)" in page and 'value="training-v5.1" selected' in page
    )  # the form as it was
    assert not Submission.objects.exists() and files_under(settings.MEDIA_ROOT) == []

    settings.UPLOAD_MAX_BYTES = len(data)  # exactly at the limit: taken
    assert upload(client, "acme.tgz", data).status_code == 302 and Submission.objects.count() == 1


@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
def test_a_declared_length_past_the_limit_is_refused_before_the_body_is_read(
    client, rounds, cast, settings
):
    settings.UPLOAD_MAX_BYTES = 1024**2
    client.force_login(cast["member_a"])
    # The declared length passes the limit by more than a form's envelope; the body is never read (it is short).
    response = upload(client, "huge.tgz", b"x" * 10, CONTENT_LENGTH=str(2 * 1024**2))
    assert response.status_code == 413
    assert "larger than 1.0 MiB (1,048,576 bytes)" in response.content.decode()
    assert not Submission.objects.exists() and files_under(settings.MEDIA_ROOT) == []


def test_storing_stops_reading_at_the_limit(settings):
    from submissions.intake.submit import UploadTooLarge, store_bundle

    read = []

    def endless():
        while True:
            read.append(1)
            yield b"z" * 1000

    with pytest.raises(UploadTooLarge) as refused:
        store_bundle(endless(), "x.tgz", max_bytes=5000)
    assert len(read) == 6 and refused.value.max_bytes == 5000
    assert files_under(settings.MEDIA_ROOT) == []  # the partial file is gone


@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
def test_the_upload_still_needs_its_csrf_token(rounds, cast, tmp_path):
    """The size is checked before Django's CSRF middleware would read the body; the token is checked after it."""
    from django.test import Client

    browser = Client(enforce_csrf_checks=True)
    browser.force_login(cast["member_a"])
    assert upload(browser, "acme.tgz", bundle_bytes(tmp_path)).status_code == 403
    assert not Submission.objects.exists()
    token = browser.get(UPLOAD).cookies["csrftoken"].value
    response = browser.post(
        UPLOAD,
        {
            "round": "training-v5.1",
            "csrfmiddlewaretoken": token,
            "bundle": SimpleUploadedFile("acme.tgz", bundle_bytes(tmp_path)),
        },
    )
    assert response.status_code == 302 and Submission.objects.count() == 1


# Two uploaders


@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
def test_two_users_uploading_the_same_bytes_get_a_submission_each_and_neither_sees_the_other(
    client, rounds, cast, tmp_path
):
    data = bundle_bytes(tmp_path)
    client.force_login(cast["member_a"])
    first = upload(client, "acme.tgz", data)
    mine = Submission.objects.get(uploaded_by=cast["member_a"])
    client.force_login(cast["member_b"])
    second = upload(client, "acme.tgz", data)
    theirs = Submission.objects.get(uploaded_by=cast["member_b"])
    assert theirs.pk != mine.pk and theirs.sha256 == mine.sha256 and mine.status == "valid"
    # The bundle's submitter (Acme) is member_a's organisation's name on the leaderboard: member_b's
    # copy (Globex) is taken in as a submission of its own and refused for that (issue 26 item 3).
    assert theirs.status == "failed" and theirs.rule == "bundle.other-organisation"
    assert "folder is 'Acme', which reads as Acme's name" in theirs.message
    assert second["Location"] == f"/submissions/{theirs.uid}/" != first["Location"]
    # someone else's, and one that does not exist: the same answer
    for uid in (mine.uid, uuid.uuid4()):
        for page in (
            f"/submissions/{uid}/",
            f"/submissions/{uid}/progress.json",
            f"/submissions/{uid}/findings.json",
        ):
            response = client.get(page)
            assert response.status_code == 404, page
    client.force_login(cast["member_a"])
    assert client.get(f"/submissions/{theirs.uid}/").status_code == 404
    assert client.get(first["Location"]).status_code == 200
    client.force_login(cast["staff"])  # staff see both
    assert (
        client.get(f"/submissions/{theirs.uid}/").status_code
        == client.get(first["Location"]).status_code
        == 200
    )


@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
def test_the_same_user_uploading_the_same_bytes_again_gets_the_same_submission_and_no_second_file(
    client, rounds, cast, tmp_path, settings
):
    data = bundle_bytes(tmp_path)
    client.force_login(cast["member_a"])
    first = upload(client, "acme.tgz", data)
    again = upload(client, "acme-renamed.tgz", data)  # another name: the same bytes
    assert again["Location"] == first["Location"] and Submission.objects.count() == 1
    bundles = [
        p for p in files_under(Path(settings.MEDIA_ROOT) / "bundles") if "incoming" not in p.parts
    ]
    assert [p.name for p in bundles] == [Path(Submission.objects.get().bundle.name).name]


@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
def test_a_failed_submission_uploaded_again_by_its_uploader_starts_again_even_after_its_bundle_was_purged(
    client, rounds, cast, tmp_path, settings
):
    from django.utils import timezone

    from submissions.checking.pipeline.retention import purge_failed_bundles

    data = bundle_bytes(tmp_path)
    client.force_login(cast["member_a"])
    first = upload(client, "acme.tgz", data)
    submission = Submission.objects.get()
    Submission.objects.filter(
        pk=submission.pk
    ).update(  # as the sweeper leaves a bundle whose worker kept dying
        status="failed",
        rule="pipeline.gave-up",
        message="Gave up after 3 attempts",
        attempts=3,
        finished_at=timezone.now() - timezone.timedelta(days=40),
    )
    assert purge_failed_bundles(timezone.timedelta(days=30)) == [submission.pk]

    again = upload(client, "acme.tgz", data)
    assert again["Location"] == first["Location"] and Submission.objects.count() == 1
    submission.refresh_from_db()
    assert submission.status == "valid" and submission.rule == "" and submission.attempts == 1
    assert Path(submission.bundle.path).is_file()


@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
def test_a_failed_submission_uploaded_again_keeps_its_earlier_validations_run_checks_and_findings(
    client, rounds, cast, tmp_path
):
    """Issue 26 item 9: uploading a failed submission again recorded its systems anew, and the deletion
    of the earlier ones took with it every run check and finding of its earlier validations (the
    report's history lost). The same bytes are now checked again over the runs recorded."""
    from submissions.checking import pipeline
    from submissions.models import Finding, RunCheck, Validation

    from ..bundles import bundle_with_broken_runs

    root = bundle_with_broken_runs(tmp_path)  # two runs without run_stop: findings on runs
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        tar.add(root, arcname="Acme")
    client.force_login(cast["member_a"])
    first = upload(client, "acme.tgz", buffer.getvalue())
    submission = Submission.objects.get()
    assert submission.status == "invalid", submission.message
    [earlier] = Validation.objects.all()
    checks = sorted(earlier.run_checks.values_list("run_id", flat=True))
    findings = sorted(earlier.findings.values_list("rule", "file", "line", "message"), key=repr)
    assert len(checks) == 5 and findings
    running = Validation.objects.create(submission=submission, number=2, reason="lost")
    pipeline.fail(submission.pk, "Gave up after 3 attempts", "pipeline.gave-up")  # as the sweeper

    again = upload(client, "acme.tgz", buffer.getvalue())
    assert again["Location"] == first["Location"] and Submission.objects.count() == 1
    submission.refresh_from_db()
    assert (submission.status, submission.rule) == ("invalid", ""), submission.message
    assert sorted(earlier.run_checks.values_list("run_id", flat=True)) == checks
    assert (
        sorted(earlier.findings.values_list("rule", "file", "line", "message"), key=repr)
        == findings
    )
    assert Validation.objects.get(pk=running.pk).status == "abandoned"
    latest = Validation.objects.order_by("-number").first()
    assert (latest.number, latest.status, latest.verdict) == (3, "done", "invalid")
    assert sorted(latest.run_checks.values_list("run_id", flat=True)) == checks
    assert (
        sorted(latest.findings.values_list("rule", "file", "line", "message"), key=repr) == findings
    )
    assert RunCheck.objects.count() == 10 and Finding.objects.count() == 2 * len(findings)


@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
def test_the_database_holds_one_submission_per_uploader_and_one_from_the_command_line(rounds, cast):
    from django.db import IntegrityError, transaction

    def create(user):
        with transaction.atomic():
            return Submission.objects.create(
                round=rounds["training-v5.1"],
                bundle="bundles/x.tgz",
                original_name="x.tgz",
                sha256="a" * 64,
                size=1,
                uploaded_by=user,
            )

    create(None), create(cast["member_a"]), create(cast["member_b"])
    for user in (None, cast["member_a"]):
        with pytest.raises(IntegrityError):
            create(user)
    assert Submission.objects.count() == 3


# Failed bundles: kept for a while, then purged


@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
def test_failed_bundles_older_than_the_retention_are_purged_and_newer_ones_kept(
    client, rounds, cast, tmp_path, settings
):
    from datetime import timedelta

    from django.utils import timezone

    from submissions.checking.pipeline.common import work_dir
    from submissions.checking.tasks import purge_failed_bundles

    settings.FAILED_BUNDLE_RETENTION_DAYS = 30
    client.force_login(cast["member_a"])
    for name, data in (
        ("old.tgz", b"not an archive, old"),
        ("new.tgz", b"not an archive, new"),
        ("shared.tgz", b"not an archive, shared"),
        ("good.tgz", bundle_bytes(tmp_path)),
    ):
        upload(client, name, data)
    client.force_login(
        cast["member_b"]
    )  # the same bytes under the same name: one stored file, two submissions
    upload(client, "shared.tgz", b"not an archive, shared")
    by_name = {(s.original_name, s.uploaded_by.username): s for s in Submission.objects.all()}
    old, new, shared, good = (
        by_name[n, "member_a"] for n in ("old.tgz", "new.tgz", "shared.tgz", "good.tgz")
    )
    shared_too = by_name["shared.tgz", "member_b"]
    assert [s.status for s in (old, new, shared, shared_too, good)] == ["failed"] * 4 + ["valid"]
    assert shared.bundle.name == shared_too.bundle.name
    long_ago = timezone.now() - timedelta(days=31)
    Submission.objects.filter(pk__in=[old.pk, shared.pk, good.pk]).update(finished_at=long_ago)
    work_dir(old.pk).mkdir(parents=True)  # as a crash could leave it
    (work_dir(old.pk) / "left.txt").write_text("x")
    files = {s.pk: Path(s.bundle.path) for s in (old, new, shared, good)}

    assert sorted(purge_failed_bundles()) == sorted([old.pk, shared.pk])
    old.refresh_from_db()
    assert old.status == "failed" and old.rule == "bundle.not-an-archive" and old.bundle.name == ""
    assert (
        "Its bundle was deleted on " in old.notes[-1]
        and "more than 30 days after it failed" in old.notes[-1]
    )
    assert not files[old.pk].exists() and not work_dir(old.pk).exists()
    assert files[new.pk].is_file() and files[good.pk].is_file()  # failed too recently; not failed
    assert files[
        shared.pk
    ].is_file()  # the other uploader's submission, failed just now, still has it
    client.force_login(cast["member_a"])
    page = client.get(f"/submissions/{old.uid}/").content.decode()
    assert (
        "Its bundle was deleted on" in page and "not a .tar, .tar.gz" in page
    )  # why it failed stays

    assert purge_failed_bundles() == []  # again: nothing more to do, no second note
    old.refresh_from_db()
    assert sum("bundle was deleted" in note for note in old.notes) == 1


def test_the_purge_runs_hourly_on_the_clock_queue(settings):
    entry = settings.CELERY_BEAT_SCHEDULE["purge-failed-bundles"]
    assert entry == {"task": "submissions.tasks.purge_failed_bundles", "schedule": 3600.0}
    assert settings.CELERY_TASK_ROUTES["submissions.tasks.purge_failed_bundles"] == {
        "queue": "clock"
    }
