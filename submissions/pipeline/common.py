"""What the pipeline's steps share: the private work folder, progress updates, failing."""

import shutil
from pathlib import Path

from django.conf import settings
from django.utils import timezone

from ..models import Submission

Status = Submission.Status


def work_dir(submission_id: int) -> Path:
    """The submission's private folder for its unpacked bundle."""
    return Path(settings.MEDIA_ROOT) / "work" / str(submission_id)


def update(submission_id: int, *, only_if: dict | None = None, **fields) -> int:
    """UPDATE the submission (when it matches `only_if`), stamping updated_at for the sweeper."""
    return Submission.objects.filter(pk=submission_id, **(only_if or {})).update(
        updated_at=timezone.now(), **fields
    )


def fail(submission_id: int, message: str, rule: str = "") -> None:
    update(submission_id, status=Status.FAILED, message=message, rule=rule, finished_at=timezone.now())
    shutil.rmtree(work_dir(submission_id), ignore_errors=True)
