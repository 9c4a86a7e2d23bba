"""A plain tar given to `manage.py ingest` is listed once: the listing of its stored bytes says whether it is
one submitter's bundle or a round to split, and its ingest reads the bundle through that listing instead of
listing the headers again."""

import hashlib
import tarfile
from pathlib import Path

import pytest
from django.core.management import call_command

from submissions.checking.bundles import TarFiles, open_bundle
from submissions.checking.pipeline.common import leave_listing, open_submission
from submissions.intake.submit import submit
from submissions.management.commands.ingest import stored_and_listed
from submissions.models import Submission
from submissions.synthetic.bundles import SystemSpec, write_bundle

TARGETS = {"retinanet": 0.34, "rgat": 0.72}


def _plain_tar(path: Path, roots: dict[str, Path]) -> Path:
    with tarfile.open(path, "w") as tar:
        for name, root in roots.items():
            tar.add(root, arcname=name)
    return path


def _submitter(base: Path, name: str, times=(10.0, 11.0, 12.0, 13.0, 14.0)) -> Path:
    return write_bundle(
        base / name, name, [SystemSpec("alpha", results={"retinanet": list(times)})], TARGETS
    )


def _stored(relative: str) -> Path:
    from django.conf import settings

    return Path(settings.MEDIA_ROOT) / relative


def test_a_plain_tar_of_one_submitter_is_stored_with_the_listing_of_its_stored_bytes(tmp_path):
    archive = _plain_tar(tmp_path / "acme.tar", {"Acme": _submitter(tmp_path, "Acme")})
    (tmp_path / "scratch").mkdir()
    (relative, sha, size), listing = stored_and_listed(archive, tmp_path / "scratch")
    stored = _stored(relative)
    assert hashlib.sha256(stored.read_bytes()).hexdigest() == sha and size == archive.stat().st_size
    assert isinstance(listing, TarFiles) and listing.archive == str(stored)
    again = open_bundle(stored, tmp_path / "unused")
    assert (listing.files, listing.folders) == (again.files, again.folders)


def test_a_plain_tar_of_two_submitters_or_one_refused_has_no_listing(tmp_path):
    (tmp_path / "scratch").mkdir()
    two = _plain_tar(
        tmp_path / "round.tar",
        {"Acme": _submitter(tmp_path, "Acme"), "Bolt": _submitter(tmp_path, "Bolt")},
    )
    assert stored_and_listed(two, tmp_path / "scratch")[1] is None  # a round: split
    root = _submitter(tmp_path, "Link")
    (root / "results" / "link.txt").symlink_to("/etc/passwd")
    refused = _plain_tar(tmp_path / "link.tar", {"Link": root})
    assert stored_and_listed(refused, tmp_path / "scratch")[1] is None  # the ingest says why


@pytest.mark.django_db
def test_the_ingest_reads_the_bundle_through_the_listing_left_for_its_bytes(rounds, tmp_path):
    """The listing is what the ingest reads by: one left without a file of the bundle gives files
    without it. It is taken once; the next opening lists the bundle itself."""
    archive = _plain_tar(tmp_path / "acme.tar", {"Acme": _submitter(tmp_path, "Acme")})
    (tmp_path / "scratch").mkdir()
    stored, listing = stored_and_listed(archive, tmp_path / "scratch")
    log = next(path for path in listing.files if path.endswith("result_0.txt"))
    left = TarFiles(listing.archive, dict(listing.files), listing.folders, listing.name)
    del left.files[log]
    leave_listing(left, stored[1])
    # Not committed: the ingest that submit queues on commit does not run here.
    submission, _ = submit(rounds["training-v5.1"], [], "acme.tar", stored=stored)
    taken = open_submission(submission)
    assert log not in taken.files and len(taken.files) == len(listing.files) - 1
    # Named as open_bundle names the files of a bundle read in place.
    assert taken.name == str(submission.pk)
    assert list(_stored("work").glob("listing-*")) == []
    assert log in open_submission(submission).files


@pytest.mark.usefixtures("eager")
@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
def test_plain_tars_are_checked_as_before_and_leave_no_listing_or_copy_behind(rounds, tmp_path):
    one = _plain_tar(tmp_path / "acme.tar", {"Acme": _submitter(tmp_path, "Acme")})
    call_command("ingest", str(one), "--round", "training-v5.1")
    # Already submitted: not taken in again.
    call_command("ingest", str(one), "--round", "training-v5.1")
    acme = Submission.objects.get()
    assert (acme.status, acme.runs_checked) == ("valid", 5), acme.message
    assert list(_stored("work").glob("listing-*")) == []
    round_ = _plain_tar(
        tmp_path / "round.tar",
        {"Bolt": _submitter(tmp_path, "Bolt"), "Core": _submitter(tmp_path, "Core", [20.0] * 5)},
    )
    call_command("ingest", str(round_), "--round", "training-v5.1")
    parts = Submission.objects.exclude(pk=acme.pk).order_by("original_name")
    assert [(s.original_name, s.status) for s in parts] == [
        ("round.tar:Bolt", "valid"),
        ("round.tar:Core", "valid"),
    ]
    whole = hashlib.sha256(round_.read_bytes()).hexdigest()
    stored = [p.name for p in _stored("bundles").rglob("*") if p.is_file()]
    assert len(stored) == 3 and not any(name.startswith(whole) for name in stored), stored
