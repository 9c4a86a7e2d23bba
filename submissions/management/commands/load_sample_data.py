"""Load real data for a local portal: the shared MLPerf rounds when present, else a demo round."""

import tempfile
from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand

from leaderboard.models import Round
from submissions.intake.round_import import AlreadyImporting, State, claim, note
from submissions.models import Submission
from submissions.synthetic.bundles import demo_systems, write_bundle

# Smallest first: each round appears on the site as its worker finishes it (v1.0 and v4.0 hold 560-590 MB of logs).
SHARED_ROUNDS = {
    "training-v0.5": "training_v0.5_results.tar.xz",
    "training-v0.6": "training_v0.6_results.tar.xz",
    "training-v5.1": "training_v5.1_results.tar.xz",
    "training-v1.0": "training_v1.0_results.tar.xz",
    "training-v4.0": "training_v4.0_results.tar.xz",
}
DEMO_ROUND = "training-v5.1"


class Command(BaseCommand):
    help = (
        "Submit the shared MLPerf rounds (MLPERF_SHARED_DIR) not yet loaded, to be ingested and published by the "
        "workers, or a generated demo round."
    )

    def handle(self, *args, **options):
        shared = Path(settings.MLPERF_SHARED_DIR)
        found = {
            key: shared / name for key, name in SHARED_ROUNDS.items() if (shared / name).is_file()
        }
        # Every round to load says so on the site at once (leaderboard.RoundImport), before the first archive
        # is read: the largest wait minutes behind the others.
        jobs = {}
        for key, tarball in found.items():
            if Submission.objects.filter(round__key=key).exists():
                self.stdout.write(f"{key}: already loaded.")
                continue
            try:
                jobs[key] = claim(Round.objects.get(key=key), State.QUEUED, str(tarball))
            except AlreadyImporting as busy:
                self.stdout.write(str(busy))
        for key, job in jobs.items():
            tarball = found[key]
            self.stdout.write(f"Ingesting {tarball} into {key} ...")
            note(job, state=State.SUBMITTING, step=f"Submitting {tarball.name}", force=True)
            try:
                call_command(
                    "ingest", str(tarball), round=key, publish=True, wait=False, stdout=self.stdout
                )
            except BaseException as failure:
                note(job, state=State.FAILED, error=str(failure), step="", force=True)
                raise
            note(job, state=State.CHECKING, step="", force=True)
        if found:
            return
        self.stdout.write(f"No shared rounds in {shared}; generating a demo round instead.")
        if Submission.objects.filter(round__key=DEMO_ROUND).exists():
            self.stdout.write("Demo data already loaded.")
            return
        round_ = Round.objects.get(key=DEMO_ROUND)
        runs = {b.key: b.required_runs for b in round_.benchmarks.all()}
        targets = {b.key: b.quality_target for b in round_.benchmarks.all()}
        with tempfile.TemporaryDirectory() as tmp:
            for i, org in enumerate(["Demo Org A", "Demo Org B", "Demo Org C"]):
                folder = write_bundle(Path(tmp), org, demo_systems(8, runs, seed=i), targets)
                call_command(
                    "ingest", str(folder), round=DEMO_ROUND, publish=True, stdout=self.stdout
                )
