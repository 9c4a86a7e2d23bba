"""What the pipeline's steps share: the bundle's files (in place or in a work folder), progress updates, failing."""

import errno
import os
import shutil
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.db.models import Sum
from django.utils import timezone

from submissions import storage
from submissions.models import Submission, UnpackRoom, Validation

from ..budget import Budget
from ..bundles import FolderFiles, TarFiles, open_bundle
from ..bundles.split import configured_limits

Status = Submission.Status


def work_dir(submission_id: int) -> Path:
    """The submission's private folder for its bundle, unpacked or decompressed."""
    return Path(settings.MEDIA_ROOT) / "work" / str(submission_id)


def _index_path(submission_id: int) -> Path:
    """Where ingest leaves the index of a bundle read in place (beside the work folder, so that no
    file of an unpacked bundle can have its name)."""
    return Path(settings.MEDIA_ROOT) / "work" / f"{submission_id}.index.json"


def _copy_path(submission_id: int) -> Path:
    """Where a bundle kept in a bucket is copied to be read (a bundle in a local folder is read where it is)."""
    return Path(settings.MEDIA_ROOT) / "work" / f"{submission_id}.bundle"


def step_budget() -> Budget:
    """The budget of a step that reads the bundle as a whole, ingest's or finalize's (budget.within), from the
    settings."""
    return Budget(settings.TASK_MEMORY_BYTES, settings.TASK_CPU_S, settings.TASK_OPEN_FILES)


def check_budget() -> Budget:
    """The budget of one run's check, of its log or of its power logs, from the settings."""
    return Budget(settings.CHECK_MEMORY_BYTES, settings.CHECK_CPU_S, settings.TASK_OPEN_FILES)


DISK_FULL = {errno.ENOSPC, errno.EDQUOT}


def is_disk_full(error: BaseException) -> bool:
    return isinstance(error, OSError) and error.errno in DISK_FULL


@contextmanager
def room_to_open(submission):
    """Hold room under MEDIA_ROOT to open the submission's bundle while the block runs: UNPACK_SPACE_FACTOR
    times its size, beyond DISK_RESERVE_BYTES and beyond the room that the other submissions being opened
    hold; raises OSError ENOSPC where the disk has not that much free. Parallel unpacks of a rush needed
    several times the bundles' size at once, and a disk that filled up failed them all.

    The room held is a row of the database (UnpackRoom), which every worker process reads: each checked
    the same free space before, so two workers unpacking at once were admitted by the room for one. The
    row is written (and committed) before the others' are summed, so of two processes that hold room at
    the same moment each counts the other's: neither is admitted on room the other took. (Both may then
    be refused and wait, as for a full disk, and try again.) Room held is counted while its submission is
    being taken in: the row of a killed worker stops counting when the submission moves on."""
    work = Path(settings.MEDIA_ROOT) / "work"
    work.mkdir(parents=True, exist_ok=True)
    need = settings.UNPACK_SPACE_FACTOR * (submission.size or 0)
    UnpackRoom.objects.update_or_create(submission_id=submission.pk, defaults={"bytes": need})
    try:
        others = (
            UnpackRoom.objects.filter(submission__status=Status.INGESTING)
            .exclude(submission_id=submission.pk)
            .aggregate(held=Sum("bytes"))["held"]
            or 0
        )
        if shutil.disk_usage(work).free < need + others + settings.DISK_RESERVE_BYTES:
            raise OSError(
                errno.ENOSPC, os.strerror(errno.ENOSPC), "not enough room to open the bundle"
            )
        yield
    finally:
        UnpackRoom.objects.filter(submission_id=submission.pk).delete()


def _listing_path(sha256: str) -> Path:
    """Where `manage.py ingest` leaves the listing of a plain tar it stored, for the bundle's ingest."""
    return Path(settings.MEDIA_ROOT) / "work" / f"listing-{sha256}.json"


def leave_listing(files: TarFiles, sha256: str) -> None:
    """Leave the listing of a stored plain tar whose sha256 is `sha256` (open_bundle's, under the settings'
    limits, of the stored bytes themselves) for the ingest of the submission holding those bytes, which
    then reads it in place without listing its headers again: `manage.py ingest` lists a plain tar to
    know whether it is one submitter's bundle or a round to split."""
    files.save(_listing_path(sha256))


def drop_listing(sha256: str) -> None:
    """The listing left for a bundle that no ingest will take (the same bytes were submitted before)."""
    _listing_path(sha256).unlink(missing_ok=True)


def _take_listing(sha256: str, bundle: Path, name: str) -> TarFiles | None:
    """The listing left for the bytes `sha256` (then gone from where it was left), as the files of `bundle`,
    their local copy; None where none was left."""
    path = _listing_path(sha256)
    try:
        listed = TarFiles.load(path)
    except FileNotFoundError:
        return None
    path.unlink(missing_ok=True)
    return TarFiles(str(bundle), listed.files, listed.folders, name)


def open_submission(submission) -> FolderFiles | TarFiles:
    """Check the submission's bundle under the limits and make its files readable by the later steps:
    indexed in place when it is a plain tar, decompressed into one plain tar in its work folder when it
    is a compressed one, else unpacked there (open_bundle). Raises BundleError. A listing left for its
    bytes (leave_listing) is taken as the index."""
    clear_work(submission.pk)  # a retried step starts clean
    bundle = storage.readable_copy(submission.bundle.name, _copy_path(submission.pk))
    work = work_dir(submission.pk)
    files = _take_listing(submission.sha256, bundle, work.name)
    if files is None:
        files = open_bundle(bundle, work, configured_limits())
    if isinstance(files, TarFiles):
        files.save(_index_path(submission.pk))
    return files


def submission_files(submission_id: int) -> FolderFiles | TarFiles:
    """The bundle's files as open_submission left them."""
    try:
        return TarFiles.load(_index_path(submission_id))
    except FileNotFoundError:
        return FolderFiles(work_dir(submission_id))


def clear_work(submission_id: int) -> None:
    """Remove what open_submission made (the bundle itself is kept)."""
    shutil.rmtree(work_dir(submission_id), ignore_errors=True)
    _index_path(submission_id).unlink(missing_ok=True)
    _copy_path(submission_id).unlink(missing_ok=True)


def clear_work_when_final(submission_id: int) -> None:
    """clear_work after a step that made the submission final (finalize, fail, withdraw), unless another pass
    has begun since: a re-validation or a re-upload claims the submission and opens its bundle into the same
    folder, and clearing it then failed that pass or left its checks half the logs. The submission's row is
    locked meanwhile, so a pass cannot claim it between the look and the clearing."""
    with transaction.atomic():
        final = Submission.objects.select_for_update().filter(
            pk=submission_id, status__in=Submission.FINAL
        )
        if list(final.values_list("pk", flat=True)):
            clear_work(submission_id)


def update(submission_id: int, *, only_if: dict | None = None, **fields) -> int:
    """UPDATE the submission (when it matches `only_if`), stamping updated_at for the sweeper."""
    return Submission.objects.filter(pk=submission_id, **(only_if or {})).update(
        updated_at=timezone.now(), **fields
    )


def fail(submission_id: int, message: str, rule: str = "") -> None:
    """The submission failed: with it, the validation it was running (else it stayed `running` for good)."""
    now = timezone.now()
    with transaction.atomic():
        update(submission_id, status=Status.FAILED, message=message, rule=rule, finished_at=now)
        Validation.objects.filter(
            submission_id=submission_id, status=Validation.Status.RUNNING
        ).update(status=Validation.Status.ABANDONED, finished_at=now)
    clear_work_when_final(submission_id)
