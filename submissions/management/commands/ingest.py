"""`manage.py ingest PATH --round KEY`: submit a bundle, a folder or a whole round's archive."""

import shutil
import tempfile
import time
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from leaderboard.models import Result, Round
from submissions import storage
from submissions.checking.bundles import BundleError, TarFiles, open_bundle
from submissions.checking.bundles.split import (
    SplitProcess,
    configured_limits,
    one_bundle,
    split_folder,
)
from submissions.checking.bundles.unpack import sniff
from submissions.checking.pipeline import held_results, withdraw
from submissions.checking.pipeline.common import drop_listing, leave_listing
from submissions.intake.submit import (
    drop_unused,
    file_chunks,
    ready_the_broker,
    store_bundle,
    store_file,
    submit,
)
from submissions.models import Submission, Validation


def stored_and_listed(path: Path, scratch: Path) -> tuple[tuple[str, str, int], TarFiles | None]:
    """A plain tar stored as a bundle (store_bundle's (name, sha256, size)), and the listing of the stored
    bytes (open_bundle's) where it is one submitter's bundle: else None, and the split says what it is (a
    round of several submitters, or a bundle that the listing refused, which is then submitted whole and
    refused by its ingest with the same rule). One listing answers both that question and the ingest,
    which takes it (leave_listing) instead of listing the headers again: 0.1 s CPU for each of the v4.0
    power bundles, whose 1,800 power logs are most of its members. A plain tar of a round is copied once
    for nothing (it is split from the path given): a round is published compressed."""
    whole = store_bundle(file_chunks(path), path.name)
    local = storage.readable_copy(whole[0], scratch / "stored.tar")
    try:
        files = open_bundle(local, scratch / "listed", configured_limits())
    except BundleError:
        return whole, None
    if not isinstance(files, TarFiles) or not one_bundle([*files.folders, *files.files]):
        return whole, None  # a sparse file (unpacked), or several submitters
    return whole, files


def scratch_folder() -> Path:
    """A new folder under MEDIA_ROOT/tmp, on the bundles' file system, so that parts are linked into place."""
    root = Path(settings.MEDIA_ROOT) / "tmp"
    root.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix="split-", dir=root))


class Command(BaseCommand):
    help = (
        "Submit a bundle (.tar, .tar.gz, .tgz, .tar.xz, .zip) or a folder to a round. An archive "
        "or folder holding several submitters (a whole published round) becomes one submission each."
    )
    requires_system_checks = []  # Django's checks (URLs, admin, templates) say nothing about a bundle

    def add_arguments(self, parser):
        parser.add_argument("path", type=Path)
        parser.add_argument("--round", required=True, help="round key, e.g. training-v5.1")
        parser.add_argument(
            "--wait", action="store_true", help="block until every submission is final"
        )
        parser.add_argument(
            "--timeout", type=float, default=3600, help="seconds to wait with --wait"
        )
        parser.add_argument(
            "--publish", action="store_true", help="publish each submission when it is valid"
        )

    def handle(self, *args, path: Path, **options):
        # The split is stopped and its folder removed on every way out.
        split = scratch = None
        try:
            try:
                round_ = Round.objects.get(key=options["round"])
            except Round.DoesNotExist:
                keys = (
                    ", ".join(Round.objects.values_list("key", flat=True))
                    or "none: run load_rounds"
                )
                raise CommandError(
                    f"No round {options['round']!r}. Known rounds: {keys}."
                ) from None
            if not path.exists():
                raise CommandError(f"{path} does not exist.")
            scratch = scratch_folder()
            submissions = {}  # label -> Submission
            if path.is_dir():
                parts = split_folder(path, scratch)
                for name, source in parts.items() if parts else [(path.name, path)]:
                    self._submit(
                        round_,
                        source,
                        f"{path.name}:{name}" if parts else path.name,
                        options,
                        submissions,
                    )
            else:
                # A plain tar is stored and listed first: most are one submitter's bundle.
                whole = listing = None
                if sniff(path) == "tar":
                    whole, listing = stored_and_listed(path, scratch)
                if listing is not None:
                    self._submit(round_, path, path.name, options, submissions, whole, listing)
                else:
                    split = SplitProcess(path, scratch)
                    self._submit_parts(split, round_, path, options, submissions, whole)
        finally:
            if split is not None:
                split.close()
            if scratch is not None:
                shutil.rmtree(scratch, ignore_errors=True)
        submissions = list(submissions.values())

        if options["wait"]:
            self._wait(submissions, options["timeout"])

    def _submit_parts(self, split: SplitProcess, round_, path: Path, options, submissions, whole):
        """Submit each submitter's part as soon as the archive moves past it, so that workers check it
        while the rest of the archive is still being read; or the archive whole (`whole`: where it is
        stored already, else None), where the split says so."""
        ready_the_broker()  # while the first part is being split
        for part in split:
            # An archive of one submitter comes back as its one part: the same bundle, plain.
            label = path.name if part.only else f"{path.name}:{part.root}"
            stored = store_file(part.path, label, part.sha256) if part.sha256 else None
            self._submit(round_, part.path, label, options, submissions, stored, again=part.again)
        if split.whole:
            self._submit(round_, path, path.name, options, submissions, whole)
        elif whole is not None:
            drop_unused(whole[0])

    def _submit(
        self,
        round_,
        source: Path,
        label: str,
        options,
        submissions: dict,
        stored=None,
        listing: TarFiles | None = None,
        again: bool = False,
    ):
        """Submit `source` (stored already where `stored` is given, with the listing of its bytes for
        its ingest where `listing` is)."""
        earlier = submissions.get(label)
        if listing is not None:
            leave_listing(listing, stored[1])  # before submit: an eager ingest runs inside it
        submission, created = submit(
            round_, file_chunks(source), label, publish=options["publish"], stored=stored
        )
        if listing is not None and not created:
            drop_listing(stored[1])
        if again and earlier is not None and earlier.pk != submission.pk:
            withdraw(
                earlier.pk,
                f"Superseded by #{submission.pk}: the archive lists more of {label}'s files "
                "after another submitter's, so this part was incomplete.",
            )
            self.stdout.write(
                f"{label}: #{earlier.pk} superseded (its files were not together in the archive)"
            )
        submissions[label] = submission
        verb = "submitted" if created else "already submitted as"
        self.stdout.write(f"{label}: {verb} #{submission.pk}")

    def _wait(self, submissions, timeout):
        ids = [s.pk for s in submissions]
        deadline = time.monotonic() + timeout
        pending = Submission.objects.filter(pk__in=ids).exclude(status__in=Submission.FINAL)
        while (
            pending.exists()
        ):  # a cheap query, so asked often: the command returns soon after the last step
            if time.monotonic() > deadline:
                raise CommandError(
                    f"Timed out after {timeout:.0f} s; still running: "
                    + ", ".join(
                        f"#{pk} {status}" for pk, status in pending.values_list("pk", "status")
                    )
                    + ". Is a worker running (celery -A portal worker -Q ingest,checks)?"
                )
            time.sleep(0.05)
        rows = list(Submission.objects.filter(pk__in=ids).order_by("pk"))
        latest = {}  # submission id -> its last finished validation, which holds the counts of its findings
        for validation in Validation.objects.filter(
            submission_id__in=ids, status=Validation.Status.DONE
        ):
            latest.setdefault(
                validation.submission_id, validation
            )  # ordered by submission, newest first
        failed = []
        for s in rows:
            done = latest.get(s.pk, Validation(errors=0, warnings=0, infos=0))
            self.stdout.write(
                f"#{s.pk} {s.original_name}: {s.status}; findings: {done.errors} errors, "
                f"{done.warnings} warnings, {done.infos} info. {s.message}"
            )
            held = (
                held_results(s)
                if s.status not in (Submission.Status.FAILED, Submission.Status.WITHDRAWN)
                else []
            )
            total = Result.objects.filter(system__submission=s).count()
            if total:
                self.stdout.write(
                    f"  {total - len(held)} of {total} results publishable"
                    + (f"; {len(held)} held:" if held else ".")
                )
            for one in held:
                f = one.finding
                where = f.file + (f":{f.line}" if f.line else "")
                more = f" (and {one.more} more)" if one.more else ""
                self.stdout.write(f"  held: {one.label}: {f.rule} {where}: {f.message}{more}")
            if s.status in (Submission.Status.FAILED, Submission.Status.INVALID):
                failed.append(s)
        if failed:
            raise CommandError(f"{len(failed)} of {len(rows)} submissions did not pass.")
