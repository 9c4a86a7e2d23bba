"""`manage.py import_round KEY [--source URL|FOLDER|TARBALL]`: bring a published round in as history.

From git (the round file's `results_repository`, at `published_tree`'s commit where it names one, or
--source's URL): a partial, sparse clone under MEDIA_ROOT/imports/<round> (submissions/intake/fetch.py)
brings one submitter's results/ and systems/ at a time, and each is handed to `manage.py ingest --publish`
as soon as it is here, so workers check it while the next is fetched. A folder or tarball of the same
layout goes to `manage.py ingest` whole, which splits it per submitter.

Run again, it goes on from what the clone holds, and `ingest` gives back the submission of a submitter
whose bundle has the same bytes (the same sha256, submit()): nothing of an unchanged submitter is checked
again; a changed one is checked, published, and replaces its earlier submission. What it is doing is
written to the round's RoundImport row, which the rounds' rows and the round page show.
"""

import re
import time
from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from leaderboard.models import Round
from submissions.intake.fetch import Clone, FetchError
from submissions.intake.round_import import AlreadyImporting, State, claim, note
from submissions.models import Submission


def clone_folder(round_: Round) -> Path:
    """Where the round's clone is kept between runs (on the bundles' file system)."""
    return Path(settings.MEDIA_ROOT) / "imports" / round_.key


def pinned_revision(round_: Round, url: str) -> str:
    """The commit the round file names in published_tree (…/tree/<commit>) when `url` is the round's own
    repository, else "" (the default branch)."""
    own = round_.results_repository.rstrip("/")
    tree = re.fullmatch(re.escape(own) + r"/tree/([0-9A-Za-z._/-]+)", round_.published_tree or "")
    return tree.group(1) if own and url.rstrip("/").removesuffix(".git") == own and tree else ""


class Command(BaseCommand):
    help = (
        "Import a published round as history from the repository its round file names (results/ and "
        "systems/ of each submitter, by a partial sparse git clone), or from --source: another git URL, "
        "a folder or a tarball of the same layout. Run it again to go on after a stop or to refresh."
    )

    def add_arguments(self, parser):
        parser.add_argument("round", help="round key, e.g. training-v2.0")
        parser.add_argument("--source", default="", help="a git URL, a folder or a tarball")
        parser.add_argument(
            "--revision", default="", help="a commit or branch (git; default: the round file's)"
        )
        parser.add_argument(
            "--no-wait", action="store_true", help="return once every submitter is handed over"
        )
        parser.add_argument("--timeout", type=float, default=3 * 3600, help="seconds to wait")

    def handle(self, *args, **options):
        try:
            round_ = Round.objects.get(key=options["round"])
        except Round.DoesNotExist:
            keys = ", ".join(Round.objects.values_list("key", flat=True)) or "none: run load_rounds"
            raise CommandError(f"No round {options['round']!r}. Known rounds: {keys}.") from None
        source = options["source"] or round_.results_repository
        if not source:
            raise CommandError(
                f"{round_.key} names no results_repository in its round file: give --source."
            )
        try:
            job = claim(round_, State.FETCHING, source, queued_ok=True)
        except AlreadyImporting as busy:
            raise CommandError(str(busy)) from None
        started = time.monotonic()
        try:
            if Path(source).exists():
                note(
                    job, state=State.SUBMITTING, step=f"Submitting {Path(source).name}", force=True
                )
                self._ingest(round_, Path(source))
            else:
                self._from_git(round_, job, source, options["revision"])
        except (FetchError, CommandError, OSError) as failure:
            note(job, state=State.FAILED, error=str(failure), step="", force=True)
            raise CommandError(str(failure)) from None
        except BaseException as failure:  # a bug or an interrupt: the row must not say it runs on
            note(job, state=State.FAILED, error=repr(failure), step="", force=True)
            raise
        note(job, state=State.CHECKING, step="", force=True)
        self.stdout.write(
            f"{round_.key}: every submitter handed over in {time.monotonic() - started:.1f} s"
            + (f", {job.received_bytes:,} bytes received" if job.commit else "")
            + "."
        )
        if not options["no_wait"]:
            self._wait(round_, job, options["timeout"])

    def _ingest(self, round_: Round, path: Path) -> None:
        call_command("ingest", str(path), round=round_.key, publish=True, stdout=self.stdout)

    def _from_git(self, round_: Round, job, url: str, revision: str) -> None:
        def say(text: str) -> None:
            note(job, step=text, received_bytes=clone.received)

        clone = Clone(url, clone_folder(round_), say)
        self.stdout.write(f"Fetching {url} into {clone.folder} ...")
        commit = clone.open(revision or pinned_revision(round_, url))
        submitters = clone.submitters()
        note(job, commit=commit, total=len(submitters), force=True)
        self.stdout.write(f"{commit[:12]}: {len(submitters)} submitters.")
        if not submitters:
            raise CommandError(f"{url} at {commit[:12]} holds no submitter's results/ or systems/.")
        for number, (root, folders) in enumerate(submitters.items(), 1):
            before = clone.received
            folder = clone.bring(root, folders)
            self.stdout.write(
                f"[{number}/{len(submitters)}] {root}: {(clone.received - before) / 1e6:,.1f} MB"
            )
            note(job, state=State.SUBMITTING, step=f"Submitting {root}", force=True)
            self._ingest(round_, folder)
            note(job, state=State.FETCHING, done=number, received_bytes=clone.received, force=True)
        if not round_.published_tree and url == round_.results_repository:
            # The code links of the round's results (roundtable.rows.code_url) point at what was imported.
            Round.objects.filter(pk=round_.pk).update(
                published_tree=f"{url.rstrip('/')}/tree/{commit[:7]}"
            )

    def _wait(self, round_: Round, job, timeout: float) -> None:
        """Until every submission of the round is final, saying how many are, as they change."""
        deadline, said = time.monotonic() + timeout, None
        submissions = Submission.objects.filter(round=round_).exclude(
            status=Submission.Status.WITHDRAWN
        )
        while True:
            total = submissions.count()
            done = submissions.filter(status__in=Submission.FINAL).count()
            if (done, total) != said:
                self.stdout.write(f"{round_.key}: {done} of {total} submitters checked.")
                said = (done, total)
            if done == total:
                break
            if time.monotonic() > deadline:
                raise CommandError(
                    f"Timed out after {timeout:.0f} s with {total - done} submitters still being "
                    "checked. Is a worker running (celery -A portal worker -Q ingest,checks)?"
                )
            time.sleep(0.5)
        note(job, state=State.DONE, force=True)
        scored = round_.systems.filter(results__score_s__isnull=False).distinct().count()
        self.stdout.write(f"{round_.key}: imported; {scored} systems with a score.")
