"""Chunked, resumable uploads: create, append parts at the offset the portal has, complete with the sha256.

The protocol (spoken by the API in api.py, the upload page's script and portal-submit):
    POST  uploads/                  {round, name, size[, sha256]}  → 201 {uid, offset: 0, ...}
    PATCH uploads/<uid>/            Upload-Offset: N, the next bytes → 204, Upload-Offset: the new offset
                                    (another N: 409 with the right one; past the size: 413, nothing written)
    HEAD  uploads/<uid>/            Upload-Offset: what the portal has (GET: the same, as JSON)
    POST  uploads/<uid>/complete/   {sha256} → 201 the submission (200: those bytes were already one)
Parts are appended to a local file (MEDIA_ROOT/uploads/<uid>.part, shared by the web processes). A part cut
off keeps what arrived: the client asks the offset and goes on from there. On completion the file is read
once more for its sha256 (whichever web process took each part), then goes through intake: stored,
deduplicated, queued.
"""

import hashlib
import os
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from accounts.models import Organisation
from audit.log import record
from leaderboard.access import policy
from leaderboard.catalogue import calendar
from submissions.checking.bundles.limits import size_text
from submissions.models import Submission, Upload
from submissions.review import objections as review

from . import submit as intake

BLOCK = 1024 * 1024


class UploadRefused(Exception):
    """A request the protocol refuses; `status` is the HTTP status, str(e) the reason for the client."""

    status = 400

    def __init__(self, message: str, **facts):
        super().__init__(message)
        self.facts = facts


class WrongOffset(UploadRefused):
    status = 409


class TooLarge(UploadRefused):
    status = 413


class Closed(UploadRefused):
    status = 409


class Forbidden(UploadRefused):
    status = 403


class OverQuota(UploadRefused):
    """Too many uploads open at once (UPLOAD_OPEN_PER_MEMBER, UPLOAD_OPEN_PER_ORGANISATION)."""

    status = 409


def quota_refusal(user, organisation) -> str | None:
    """Why one more open upload is refused (each may hold UPLOAD_MAX_BYTES on disk for
    UPLOAD_EXPIRY_DAYS), or None."""
    open_uploads = Upload.objects.filter(status=Upload.Status.OPEN)
    if open_uploads.filter(uploaded_by=user).count() >= settings.UPLOAD_OPEN_PER_MEMBER:
        return gettext(
            "You have %(n)s uploads open: complete or delete one "
            "(GET /api/v1/uploads/?status=open lists them) before starting another."
        ) % {"n": settings.UPLOAD_OPEN_PER_MEMBER}
    if (
        open_uploads.filter(organisation=organisation).count()
        >= settings.UPLOAD_OPEN_PER_ORGANISATION
    ):
        return gettext(
            "%(organisation)s has %(n)s uploads open: its members complete or delete one (each "
            "member's GET /api/v1/uploads/?status=open lists theirs) before another starts."
        ) % {"organisation": organisation.name, "n": settings.UPLOAD_OPEN_PER_ORGANISATION}
    return None


def part_path(upload: Upload) -> Path:
    return Path(settings.MEDIA_ROOT) / "uploads" / f"{upload.uid}.part"


def check_size(size: int) -> None:
    limit = settings.UPLOAD_MAX_BYTES
    if size > limit:
        raise TooLarge(str(intake.UploadTooLarge(limit)), max_bytes=limit)


def organisations_of(user):
    """The organisations a user may upload for (policy.upload_organisations)."""
    return Organisation.objects.filter(pk__in=policy.upload_organisations(policy.viewer(user)))


def calendar_refusal(round_, organisation, now=None, *, user=None) -> str | None:
    """Why the round's calendar takes no upload from this organisation now (with the date and time), or None.
    During review only a fix that a reviewer asked of it is taken. A refusal is audited."""
    now = now or timezone.now()
    fix = calendar.phase(round_.calendar, now) == calendar.REVIEW and review.fix_requested(
        organisation, round_
    )
    refusal = calendar.upload_refusal(round_.calendar, now, fix_requested=fix)
    if refusal:
        record(
            "submission.refused",
            actor=user,
            round=round_,
            organisation=organisation,
            reason=refusal,
        )
    return refusal


def create(round_, user, organisation, name: str, size: int, sha256: str = "") -> Upload:
    """A new upload of `size` bytes for one of the user's organisations; refused before any byte is sent
    past UPLOAD_MAX_BYTES (TooLarge), for another organisation, or when the round's calendar says no."""
    check_size(size)
    if refusal := policy.upload_refusal(policy.viewer(user), organisation):
        raise Forbidden(refusal)
    if refusal := calendar_refusal(round_, organisation, user=user):
        raise Forbidden(refusal)
    if refusal := quota_refusal(user, organisation):
        raise OverQuota(refusal)
    upload = Upload.objects.create(
        round=round_,
        uploaded_by=user,
        organisation=organisation,
        name=intake.display_name(name),
        size=size,
        sha256=sha256.lower(),
    )
    path = part_path(upload)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch()
    return upload


def append(upload: Upload, offset: int, readinto, length: int) -> int:
    """Write the next `length` bytes, received by `readinto(buffer)`, at `offset`; returns the offset now
    held. Bytes cut off on the way (readinto gives 0 before the end) are kept. The row is locked meanwhile:
    one part at a time."""
    with transaction.atomic():
        upload = (
            Upload.objects.select_for_update(of=("self",))
            .select_related("organisation", "uploaded_by")
            .get(pk=upload.pk)
        )
        if upload.status != Upload.Status.OPEN:
            raise Closed(
                gettext("This upload is complete; its submission is listed with it."),
                offset=upload.offset,
            )
        if refusal := policy.upload_refusal(policy.viewer(upload.uploaded_by), upload.organisation):
            raise Forbidden(refusal, offset=upload.offset)
        if offset != upload.offset:
            raise WrongOffset(
                gettext("The portal has %(offset)s bytes of this upload: send from there.")
                % {"offset": f"{upload.offset:,}"},
                offset=upload.offset,
            )
        if offset + length > upload.size:
            raise TooLarge(
                gettext(
                    "This part would end at byte %(end)s, past the upload's declared size "
                    "(%(size)s bytes); nothing of it was written."
                )
                % {"end": f"{offset + length:,}", "size": f"{upload.size:,}"},
                offset=upload.offset,
            )
        written = _write(upload, offset, readinto, length)
        upload.offset = offset + written
        upload.save(update_fields=["offset", "updated_at"])
    return upload.offset


def _write(upload: Upload, offset: int, readinto, length: int) -> int:
    """Receive the part into one buffer and write it at `offset`; return how many bytes arrived."""
    written = 0
    buffer = memoryview(bytearray(BLOCK))
    fd = os.open(part_path(upload), os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        os.lseek(fd, offset, os.SEEK_SET)
        while written < length:
            got = readinto(buffer[: min(BLOCK, length - written)])
            if not got:  # the client went away: what arrived is kept
                break
            view = buffer[:got]
            while view:
                view = view[os.write(fd, view) :]
            written += got
        # The offset committed next promises these bytes: a crash must not lose them.
        os.fdatasync(fd)
    finally:
        os.close(fd)
    return written


def _sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(BLOCK):
            digest.update(block)
    return digest.hexdigest()


def complete(upload: Upload, sha256: str = "") -> tuple[Submission, bool]:
    """Make the received bytes a submission (intake.submit: one per bundle and uploader); returns
    (submission, created). Refused while bytes are missing, or when the sha256 differs from the one given
    now or at creation (the upload then starts again from offset 0). Completing twice is harmless."""
    mismatch = None
    with transaction.atomic():
        upload = (
            Upload.objects.select_for_update(of=("self",))
            .select_related("round", "organisation", "uploaded_by")
            .get(pk=upload.pk)
        )
        if upload.status == Upload.Status.COMPLETE and upload.submission is not None:
            part_path(upload).unlink(missing_ok=True)  # kept by a crash after the commit
            given = sha256.lower()
            if given and given != upload.submission.sha256:
                raise Closed(
                    gettext(
                        "This upload is complete with sha256 %(sha256)s, not %(given)s: "
                        "send other bytes as a new upload."
                    )
                    % {"sha256": upload.submission.sha256, "given": given},
                    offset=upload.offset,
                    sha256=upload.submission.sha256,
                )
            return upload.submission, False
        if refusal := policy.upload_refusal(policy.viewer(upload.uploaded_by), upload.organisation):
            raise Forbidden(refusal, offset=upload.offset)
        if upload.offset != upload.size:
            raise WrongOffset(
                gettext("The portal has %(offset)s of %(size)s bytes: send the rest first.")
                % {"offset": f"{upload.offset:,}", "size": f"{upload.size:,}"},
                offset=upload.offset,
            )
        if refusal := calendar_refusal(upload.round, upload.organisation, user=upload.uploaded_by):
            raise Forbidden(refusal, offset=upload.offset)
        path = part_path(upload)
        os.truncate(path, upload.size)  # a part written before a crash may lie past the offset
        sha = _sha256_of(path)
        expected = (sha256 or upload.sha256).lower()
        if expected and expected != sha:
            Upload.objects.filter(pk=upload.pk).update(offset=0)
            os.truncate(path, 0)
            mismatch = UploadRefused(
                gettext(
                    "The bytes received have sha256 %(sha256)s, not %(expected)s: some were damaged "
                    "on the way. The upload starts again from byte 0."
                )
                % {"sha256": sha, "expected": expected},
                offset=0,
                sha256=sha,
            )
        else:
            stored = intake.store_part(path, upload.name, sha, upload.size)
            # Only once the submission is committed: a retried complete needs the part.
            transaction.on_commit(lambda: path.unlink(missing_ok=True))
            submission, created = intake.submit(
                upload.round,
                None,
                upload.name,
                user=upload.uploaded_by,
                organisation=upload.organisation,
                stored=stored,
            )
            upload.status, upload.submission = Upload.Status.COMPLETE, submission
            upload.save(update_fields=["status", "submission", "updated_at"])
    if mismatch:
        raise mismatch
    return submission, created


def abandon(upload: Upload) -> None:
    """Drop an open upload and its bytes. A complete one is refused (Closed): its row names its
    submission, which is withdrawn, not deleted."""
    with transaction.atomic():
        upload = Upload.objects.select_for_update().get(pk=upload.pk)
        if upload.status != Upload.Status.OPEN:
            raise Closed(
                "This upload is complete: it made a submission, which stays. Withdraw the "
                "submission instead (POST /api/v1/submissions/<uid>/withdraw/).",
                offset=upload.offset,
            )
        part_path(upload).unlink(missing_ok=True)
        upload.delete()


def progress_text(upload: Upload) -> str:
    return f"{size_text(upload.offset)} of {size_text(upload.size)}"


def purge_stale(older_than: timedelta, now=None) -> int:
    """Drop the open uploads no part has reached for `older_than` (UPLOAD_EXPIRY_DAYS), and their bytes:
    their clients gave up. Returns how many."""
    cutoff = (now or timezone.now()) - older_than
    stale = Upload.objects.filter(status=Upload.Status.OPEN, updated_at__lt=cutoff)
    count = 0
    for upload in stale.only("pk", "uid", "status"):
        try:
            abandon(upload)
        except Closed:  # completed meanwhile
            continue
        count += 1
    return count
