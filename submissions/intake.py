"""Taking a bundle in: stream it to storage while hashing, commit a Submission, queue ingest.

The row is committed before anything is queued, so a broker outage or a crash loses no
upload: the bundle is on disk and the submission says `received`.
"""

import hashlib
import os
import re
import shutil
import uuid
from pathlib import Path

from django.conf import settings
from django.db import IntegrityError, transaction

from leaderboard.models import Round

from .models import Submission
from .tasks import ingest

CHUNK = 1024 * 1024


def _safe_name(name: str) -> str:
    name = os.path.basename(name.replace("\\", "/")) or "bundle"
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name)[:200]


def _incoming() -> Path:
    """A fresh temporary name under MEDIA_ROOT/bundles/incoming (the same file system as the bundles)."""
    incoming = Path(settings.MEDIA_ROOT) / "bundles" / "incoming"
    incoming.mkdir(parents=True, exist_ok=True)
    return incoming / f"{uuid.uuid4().hex}.part"


def _place(tmp: Path, sha: str, original_name: str) -> str:
    """Move tmp to its content-addressed place under MEDIA_ROOT; return the relative path."""
    relative = Path("bundles") / sha[:2] / f"{sha}-{_safe_name(original_name)}"
    final = Path(settings.MEDIA_ROOT) / relative
    final.parent.mkdir(parents=True, exist_ok=True)
    os.replace(tmp, final)
    return relative.as_posix()


def store_bundle(chunks, original_name: str) -> tuple[str, str, int]:
    """Write an iterable of byte chunks under MEDIA_ROOT/bundles/; return (relative path, sha256, size)."""
    tmp = _incoming()
    digest, size = hashlib.sha256(), 0
    try:
        with open(tmp, "wb") as out:
            for chunk in chunks:
                digest.update(chunk)
                size += len(chunk)
                out.write(chunk)
        sha = digest.hexdigest()
        return _place(tmp, sha, original_name), sha, size
    finally:
        tmp.unlink(missing_ok=True)


def store_file(path: Path, original_name: str, sha: str) -> tuple[str, str, int]:
    """store_bundle for a file already under MEDIA_ROOT whose sha256 is known: linked into place, not copied."""
    tmp = _incoming()
    try:
        os.link(path, tmp)
    except OSError:  # another file system
        shutil.copyfile(path, tmp)
    try:
        return _place(tmp, sha, original_name), sha, os.path.getsize(path)
    finally:
        tmp.unlink(missing_ok=True)


def file_chunks(path) -> "iter[bytes]":
    with open(path, "rb") as f:
        while chunk := f.read(CHUNK):
            yield chunk


def ready_the_broker() -> None:
    """Import the broker's client, which the first queued task would import (a tenth of a second for Redis's)."""
    with ingest.app.connection_for_write() as connection:
        connection.transport  # noqa: B018 - the property imports the transport's module


def submit(round_: Round, chunks, original_name: str, *, user=None, publish=False,
           stored: tuple[str, str, int] | None = None) -> tuple[Submission, bool]:
    """Store a bundle and create its Submission; returns (submission, created). `stored`: what
    store_file returned for a bundle already stored (chunks are then not read).

    The same bytes uploaded twice to one round give back the first submission.
    """
    relative, sha, size = stored or store_bundle(chunks, original_name)
    existing = Submission.objects.filter(round=round_, sha256=sha).first()
    if existing:
        return existing, False
    try:
        with transaction.atomic():
            submission = Submission.objects.create(
                round=round_, bundle=relative, original_name=_safe_name(original_name),
                sha256=sha, size=size, uploaded_by=user, publish_when_valid=publish,
            )
    except IntegrityError:  # the same bundle raced in from elsewhere
        return Submission.objects.get(round=round_, sha256=sha), False
    transaction.on_commit(lambda: ingest.delay(submission.pk))
    return submission, True
