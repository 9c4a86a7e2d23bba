"""Uploads at their edges, through the browser form: odd names, too large, kept and purged, two uploaders."""

from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from submissions.intake import display_name
from submissions.models import Submission

from .test_pages import bundle_bytes

pytestmark = pytest.mark.usefixtures("eager")
UPLOAD = "/submissions/upload/"


def upload(client, name: str, data: bytes, **extra):
    return client.post(UPLOAD, {"round": "training-v5.1", "bundle": SimpleUploadedFile(name, data)}, **extra)


def files_under(folder) -> list[Path]:
    return sorted(p for p in Path(folder).rglob("*") if p.is_file())


# Names

def test_a_250_character_unicode_name_uploads_and_is_stored_under_a_short_ascii_name(client, rounds, users, tmp_path):
    name = ("résultats-日本語-Ωmega " * 20)[:243] + ".tar.gz"
    assert len(name) == 250 and len(name.encode()) > 255
    client.force_login(users["owner"])
    response = upload(client, name, bundle_bytes(tmp_path))
    submission = Submission.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/submissions/{submission.pk}/"
    assert submission.original_name == name and submission.status == "valid"
    stored = Path(submission.bundle.path)
    assert stored.is_file() and stored.name.isascii() and len(stored.name) <= 120
    assert stored.name.startswith(submission.sha256 + "-r") and stored.name.endswith(".tar.gz")
    assert name in client.get(response["Location"]).content.decode()


def test_quotes_and_markup_in_a_name_are_shown_as_text(client, rounds, users, tmp_path):
    name = """it's "<b>bold" & more.tgz"""
    client.force_login(users["owner"])
    response = upload(client, name, bundle_bytes(tmp_path))
    assert response.status_code == 302
    submission = Submission.objects.get()
    assert submission.original_name == name and Path(submission.bundle.path).name.endswith("-it_s_b_bold_more.tgz")
    page = client.get(response["Location"]).content.decode()
    assert "it&#x27;s &quot;&lt;b&gt;bold&quot; &amp; more.tgz" in page and "<b>bold" not in page


def test_display_names_lose_control_and_format_characters_and_keep_their_extension():
    assert display_name("C:\\Users\\me\\acme.tgz") == "acme.tgz"
    assert display_name("evil\nname\r\t\"x\u202e\u200b.zip") == 'evil name "x.zip'  # newline parts words, RLO goes
    assert display_name("\n\x00") == "bundle"
    long = display_name("ü" * 400 + ".tar.xz")
    assert len(long) == 255 and long.endswith("ü….tar.xz")
