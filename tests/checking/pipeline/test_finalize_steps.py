"""finalize's steps, each on its own (submissions/checking/pipeline/finalize.py): a bundle goes through the
pipeline once, then each step is called again on what it left."""

import importlib
import tarfile

import pytest
from django.core.management import call_command

from leaderboard.models import Run
from submissions.checking import leases
from submissions.checking.pipeline.common import Status
from submissions.models import Finding, Submission
from submissions.synthetic.bundles import SystemSpec, write_bundle

# Every test here commits its writes: eager tasks run in on_commit hooks.
pytestmark = [pytest.mark.usefixtures("eager"), pytest.mark.django_db(transaction=True)]
# The module, not the function of the same name that pipeline/__init__.py exports.
steps = importlib.import_module("submissions.checking.pipeline.finalize")

TARGETS = {"retinanet": 0.34}


@pytest.fixture
def submission(rounds, tmp_path):
    systems = [SystemSpec("alpha", results={"retinanet": [10.0, 12.0, None, 13.0, 9.0]})]
    root = write_bundle(tmp_path / "src", "Acme", systems, TARGETS)
    archive = tmp_path / "acme.tgz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(root, arcname="Acme")
    call_command("ingest", str(archive), "--round", "training-v5.1")
    return Submission.objects.order_by("-pk").first()


def test_a_final_submission_is_not_claimed_again(submission):
    assert submission.status in (Status.VALID, Status.INVALID)
    claimed = leases.claim(
        submission.pk, "finalize", Status.FINALIZING, start_from=[Status.FINALIZING]
    )
    assert not claimed and steps._running(submission.pk) is None


def test_a_run_with_an_error_is_rejected_and_failed_by_its_first_error_s_rule(submission):
    validation = submission.validations.get()
    run = Run.objects.filter(result__system__submission=submission).order_by("pk").first()
    for rule in ("run.first", "run.second"):
        Finding.objects.create(
            validation=validation, run=run, severity="error", rule=rule, message=rule
        )
    rejected, failure_rules = steps._run_failures(validation, advisory=False)
    assert run.pk in rejected and failure_rules[run.pk] == "run.first"
    # Imported history keeps its scores: nothing is rejected, the reasons are still given.
    assert steps._run_failures(validation, advisory=True) == (set(), failure_rules)


def test_scoring_and_checking_store_nothing(submission):
    validation = submission.validations.get()
    results = steps._results_of(submission)
    stored = Finding.objects.count()
    files = steps.submission_files(submission.pk)
    rows, runs = steps._score_and_check(results, validation, files, advisory=False)
    assert Finding.objects.count() == stored
    assert len(runs) == 5 and all(row.pk is None for row in rows)
    assert (
        results[0].score_s is not None
    )  # the olympic mean of the four that stopped, on the object


def test_a_verdict_given_twice_moves_the_submission_on_once(submission):
    validation = submission.validations.get()
    before = Submission.objects.get(pk=submission.pk).status
    assert not steps._give_verdict(submission, validation, steps._results_of(submission), False)
    assert Submission.objects.get(pk=submission.pk).status == before
