"""Taking a bundle in: stream it to a local file while hashing, put it in storage (storage.py), commit a
Submission, queue ingest. Chunked uploads (uploads.py) arrive the same way, in parts.

The row is committed before anything is queued, so a broker outage or a crash loses no
upload: the bundle is on disk and the submission says `received`.
"""

import hashlib
import os
import re
import shutil
import unicodedata
import uuid
from pathlib import Path

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext

from leaderboard.models import Round
from notifications.emit import emit
from submissions import storage
from submissions.checking.bundles.limits import size_text
from submissions.checking.tasks import ingest, queue_ingest
from submissions.models import Submission

CHUNK = 1024 * 1024


# Submission.original_name's length. The stored file's own name is kept far below the file systems' 255 bytes.
DISPLAY_NAME_CHARS = 255
STORED_STEM_CHARS = 40
# .tar.gz as one extension, else the last one: what the stored name keeps of the uploader's name besides its stem.
_EXTENSION = re.compile(r"(\.tar)?\.[a-z0-9]{1,4}$", re.IGNORECASE)


def display_name(name: str) -> str:
    """The uploader's file name as pages and the command line show it: its last path component, in any
    script, without control or format characters (newlines, tabs, bidirectional overrides), at most
    DISPLAY_NAME_CHARS characters with its extension kept."""
    name = unicodedata.normalize("NFC", name.replace("\\", "/").rpartition("/")[2])
    # A control character (newline, tab) parts words; a format character (a bidirectional override) goes.
    name = "".join(
        c if c.isprintable() else " " if unicodedata.category(c) == "Cc" else "" for c in name
    )
    name = " ".join(name.split()) or "bundle"
    if len(name) > DISPLAY_NAME_CHARS:
        extension = _EXTENSION.search(name)
        tail = extension.group() if extension else ""
        name = name[: DISPLAY_NAME_CHARS - len(tail) - 1] + "…" + tail
    return name


def _stored_name(sha: str, name: str) -> str:
    """'<sha256>-<stem><extension>': the bytes' hash, then at most STORED_STEM_CHARS of the uploader's name in
    ASCII letters, digits, '.', '_' and '-' (for whoever lists the folder), then its extension."""
    ascii_name = (
        unicodedata.normalize("NFKD", display_name(name)).encode("ascii", "ignore").decode()
    )
    extension = _EXTENSION.search(ascii_name)
    tail = extension.group().lower() if extension else ""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", ascii_name[: len(ascii_name) - len(tail)]).strip("._-")
    return f"{sha}-{stem[:STORED_STEM_CHARS].rstrip('._-') or 'bundle'}{tail}"


class UploadTooLarge(Exception):
    """An upload past the portal's UPLOAD_MAX_BYTES; str(e) tells the uploader so."""

    def __init__(self, max_bytes: int):
        super().__init__(
            gettext(
                "The bundle is larger than %(size)s (%(bytes)s bytes), the most the portal takes in "
                "one upload (UPLOAD_MAX_BYTES). Leave out checkpoints, data sets and code outside "
                "results/ and systems/; if the results alone are larger, ask the portal's administrators."
            )
            % {"size": size_text(max_bytes), "bytes": f"{max_bytes:,}"}
        )
        self.max_bytes = max_bytes


def _incoming() -> Path:
    """A fresh temporary name under MEDIA_ROOT/bundles/incoming (the same file system as the bundles)."""
    incoming = Path(settings.MEDIA_ROOT) / "bundles" / "incoming"
    incoming.mkdir(parents=True, exist_ok=True)
    return incoming / f"{uuid.uuid4().hex}.part"


def _place(tmp: Path, sha: str, original_name: str) -> str:
    """Move tmp into storage under its content-addressed name; return that name."""
    return storage.put(tmp, f"bundles/{sha[:2]}/{_stored_name(sha, original_name)}")


def store_bundle(chunks, original_name: str, max_bytes: int | None = None) -> tuple[str, str, int]:
    """Write an iterable of byte chunks under MEDIA_ROOT/bundles/; return (relative path, sha256, size).
    Past max_bytes it stops reading and raises UploadTooLarge, leaving nothing written."""
    tmp = _incoming()
    digest, size = hashlib.sha256(), 0
    try:
        with open(tmp, "wb") as out:
            for chunk in chunks:
                size += len(chunk)
                if max_bytes is not None and size > max_bytes:
                    raise UploadTooLarge(max_bytes)  # the part written goes below
                digest.update(chunk)
                out.write(chunk)
            out.flush()
            os.fdatasync(out.fileno())  # on disk before its receipt is given
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


def store_part(path: Path, original_name: str, sha: str, size: int) -> tuple[str, str, int]:
    """store_bundle for the finished file of a chunked upload (uploads.py), hashed as it arrived: a link to it
    is moved into storage (or streamed into a bucket), not a copy, and the part itself stays until the upload's
    completion commits. Moving the part itself left a completion cut off before its commit nothing to retry
    with."""
    link = path.with_name(path.name + ".storing")
    link.unlink(missing_ok=True)  # left by a completion cut off
    os.link(path, link)
    try:
        return _place(link, sha, original_name), sha, size
    finally:
        link.unlink(missing_ok=True)


def _drop_unused(relative: str, existing: Submission) -> None:
    """The file just stored, when the submission given back keeps its bundle under another name (the same
    bytes uploaded under another name) and no other submission has it: it would be kept for nothing."""
    if relative != existing.bundle.name:
        drop_unused(relative)


def drop_unused(relative: str) -> None:
    """Delete the stored bundle `relative` (store_bundle's name) where no submission has it."""
    if not Submission.objects.filter(bundle=relative).exists():
        storage.delete(relative)


def _start_again(submission: Submission, relative: str) -> Submission:
    """A failed submission uploaded again by its uploader starts again from the bytes just stored: it may
    have failed on a fault since mended (a worker that kept dying), or had its bundle purged."""
    earlier = submission.bundle.name
    Submission.objects.filter(pk=submission.pk).update(
        bundle=relative,
        status=Submission.Status.RECEIVED,
        message="",
        rule="",
        attempts=0,
        finished_at=None,
        queue_pending=False,
        updated_at=timezone.now(),
    )
    if earlier and earlier != relative and not Submission.objects.filter(bundle=earlier).exists():
        storage.delete(earlier)
    transaction.on_commit(lambda: queue_ingest(submission.pk))
    submission.refresh_from_db()
    return submission


def file_chunks(path) -> "iter[bytes]":
    with open(path, "rb") as f:
        while chunk := f.read(CHUNK):
            yield chunk


def ready_the_broker() -> None:
    """Import the broker's client, which the first queued task would import (a tenth of a second for Redis's)."""
    with ingest.app.connection_for_write() as connection:
        connection.transport  # noqa: B018 - the property imports the transport's module


def submit(
    round_: Round,
    chunks,
    original_name: str,
    *,
    user=None,
    organisation=None,
    publish=False,
    stored: tuple[str, str, int] | None = None,
    max_bytes: int | None = None,
) -> tuple[Submission, bool]:
    """Store a bundle and create its Submission; returns (submission, created). `stored`: what
    store_file returned for a bundle already stored (chunks are then not read). max_bytes: the most an
    upload may hold (UploadTooLarge past it); none for the command line's imports.

    The same bytes to one round again for the same organisation (by any of its members; without one, from
    the same uploader, or again from the command line, user None) give back that submission; for another
    organisation they are a submission of its own, so that an upload never tells anyone what someone else
    uploaded.
    """
    relative, sha, size = stored or store_bundle(chunks, original_name, max_bytes)
    same = Submission.objects.filter(round=round_, sha256=sha)
    if organisation is not None:
        same = same.filter(organisation=organisation)
    else:
        same = same.filter(organisation=None, uploaded_by=user)  # user None: IS NULL
    existing = same.first()
    if existing is None:
        try:
            with transaction.atomic():
                submission = Submission.objects.create(
                    round=round_,
                    bundle=relative,
                    original_name=display_name(original_name),
                    sha256=sha,
                    size=size,
                    uploaded_by=user,
                    organisation=organisation,
                    publish_when_valid=publish,
                )
        except IntegrityError:  # the same bundle raced in from the same uploader
            existing = same.get()
    if existing is not None and existing.status == Submission.Status.FAILED:
        return _start_again(existing, relative), True
    if existing is not None:
        _drop_unused(relative, existing)
        return existing, False
    transaction.on_commit(
        lambda: queue_ingest(submission.pk)
    )  # kept and queued later if the broker is down
    emit("upload.received", submission=submission.pk)
    return submission, True
