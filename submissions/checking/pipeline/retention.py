"""Failed bundles are kept for a while (FAILED_BUNDLE_RETENTION_DAYS), for the uploader and the reviewers to
look into, then deleted. The submission itself stays, with why it failed and a note of when its bundle went."""

from datetime import UTC, timedelta

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from submissions import storage
from submissions.models import Submission

from ..stored import forget
from .common import clear_work

Status = Submission.Status


def purge_failed_bundles(keep: timedelta, now=None) -> list[int]:
    """Delete the bundle file and the work folder of every submission that failed more than `keep` ago; note on
    the row that and when its bundle was deleted. Returns the ids purged.

    Idempotent: a purged submission has no bundle (bundle ""), so it is not due again. Each one is claimed by a
    conditional UPDATE, whose row lock holds until its files are gone: two purges at once purge it once, and a
    purge stopped half-way is finished by the next (the file is deleted before the claim is committed).
    """
    now = now or timezone.now()
    cutoff = now - keep
    due = (
        Submission.objects.filter(status=Status.FAILED)
        .exclude(bundle="")
        .filter(Q(finished_at__lt=cutoff) | Q(finished_at__isnull=True, updated_at__lt=cutoff))
    )
    note = (
        f"Its bundle was deleted on {now.astimezone(UTC):%Y-%m-%d %H:%M} UTC, more than {keep.days} days "
        "after it failed (FAILED_BUNDLE_RETENTION_DAYS); why it failed is kept here."
    )
    purged = []
    for pk, name, notes in due.values_list("pk", "bundle", "notes"):
        with transaction.atomic():
            claimed = Submission.objects.filter(pk=pk, status=Status.FAILED, bundle=name).update(
                bundle="", notes=[*notes, note], updated_at=now
            )
            if not claimed:
                continue  # purged meanwhile by another run
            # Another uploader's submission of the same bytes under the same name shares the file.
            if not Submission.objects.filter(bundle=name).exclude(pk=pk).exists():
                storage.delete(name)
            clear_work(pk)
            forget(pk)  # the log viewer's copy or unpacked files: its logs go with the bundle
        purged.append(pk)
    return purged
