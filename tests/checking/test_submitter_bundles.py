"""One submitter's bundle is one submission: each v0.5 submitter's folder, ingested on its own by a real worker,
gives that submitter exactly the rows that ingesting the whole round archive gives.

Runs on PostgreSQL and Redis (skips with the reason otherwise), like tests/checking/test_shared_rounds.py.
"""

import tarfile

import pytest
from django.core.management import call_command

from leaderboard.models import Result, Run, System
from submissions.models import Submission

from ..conftest import shared_tarball
from ..worker import media, media_root, worker  # noqa: F401 (fixtures)

# Every test here commits its writes: a worker process reads the test's rows.
pytestmark = [
    pytest.mark.services,
    pytest.mark.shared_rounds,
    pytest.mark.django_db(transaction=True),
]

ROUND = "training-v0.5"
SYSTEM_FIELDS = (
    "key",
    "name",
    "division",
    "category",
    "accelerator_model",
    "accelerator_count",
    "processor_model",
    "processor_count",
    "nodes",
    "framework",
    "interconnect",
    "description",
    "description_path",
    "published",
)
RESULT_FIELDS = (
    "system__key",
    "benchmark__key",
    "path",
    "score_s",
    "speedup",
    "scaling_factor",
    "runs_counted",
    "score_message",
    "published",
    "error_count",
    "warning_count",
)
RUN_FIELDS = (
    "result__system__key",
    "result__benchmark__key",
    "index",
    "path",
    "checked",
    "success",
    "time_to_train_s",
    "failure_reason",
    "counted",
    "dropped",
    "seed",
)


def rows() -> dict:
    """{submitter: (systems, results, runs)}, each a sorted list of plain tuples (no ids)."""
    out = {}
    for submitter in Submission.objects.filter(round__key=ROUND).values_list(
        "submitter__name", flat=True
    ):
        mine = {"round__key": ROUND, "submitter__name": submitter}
        out[submitter] = (
            sorted(System.objects.filter(**mine).values_list(*SYSTEM_FIELDS), key=repr),
            sorted(
                Result.objects.filter(**{f"system__{k}": v for k, v in mine.items()}).values_list(
                    *RESULT_FIELDS
                ),
                key=repr,
            ),
            sorted(
                Run.objects.filter(
                    **{f"result__system__{k}": v for k, v in mine.items()}
                ).values_list(*RUN_FIELDS),
                key=repr,
            ),
        )
    return out


def ingest(path):
    call_command("ingest", str(path), "--round", ROUND, "--publish", "--wait", "--timeout", "900")


def test_each_v05_submitters_folder_gives_the_rows_the_round_archive_gives(
    rounds, worker, media, tmp_path
):
    archive = shared_tarball("training_v0.5_results.tar.xz")
    ingest(archive)
    whole = rows()
    assert sorted(whole) == ["Google Inc.", "Intel Corp.", "Nvidia"]

    Submission.objects.all().delete()  # its systems, results, runs and findings go with it
    with tarfile.open(archive) as tar:
        tar.extractall(tmp_path, filter="data")
    for folder in sorted((tmp_path / "v0.5.0").iterdir()):
        before = Submission.objects.count()
        ingest(folder)
        assert Submission.objects.count() == before + 1, f"{folder.name} was not one submission"
    assert set(Submission.objects.values_list("status", flat=True)) == {
        "published"
    }  # none withdrawn
    alone = rows()

    assert sorted(alone) == sorted(whole)
    for submitter in whole:
        for what, got, expected in zip(
            ("systems", "results", "runs"), alone[submitter], whole[submitter]
        ):
            assert got == expected, f"{submitter}: {what} differ"
    google_systems = alone["Google Inc."][0]
    assert len(google_systems) == 6 and all(published for *_, published in google_systems)
