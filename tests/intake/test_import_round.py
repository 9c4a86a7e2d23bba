"""`manage.py import_round` end to end: a real git repository made here from three submitters of the shared
v0.6 round (with code beside their results, which must not be fetched), imported from file:// by the command,
again by it, and again by staff from the round's page (the Celery task on a real worker), on PostgreSQL and
Redis.

Its scores are those of ingesting the same folders directly, and the second run changes nothing: no
submission made, none checked again, no byte of the logs fetched again."""

import os
import shutil
import subprocess
import tarfile
import time
from io import StringIO

import pytest
from django.core.management import call_command

from leaderboard.models import Result, Round, RoundImport
from submissions.models import Submission

from ..conftest import shared_plain_tar
from ..worker import media, media_root, worker  # noqa: F401 (fixtures)

# transaction=True: the worker process reads what the test writes.
pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

ROUND = "training-v0.6"
SUBMITTERS = ("Alibaba", "Fujitsu", "Google")  # the smallest of v0.6: 204 files, 5 MB of logs
CODE_BYTES = 2_000_000


def git(*args, cwd):
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


@pytest.fixture
def published(tmp_path):
    """(the round's folder as MLCommons publishes it, its git repository's file:// URL)."""
    folder = tmp_path / "training_results_v0.6"
    with tarfile.open(shared_plain_tar("training_v0.6_results.tar.xz")) as tar:
        tar.extractall(
            folder,
            members=[m for m in tar if m.name.removeprefix("./").split("/")[0] in SUBMITTERS],
            filter="data",
        )
    repository = tmp_path / "repository"
    shutil.copytree(folder, repository)
    # Code beside the results, as in the real repositories: incompressible, so its bytes would show.
    code = repository / "Google" / "benchmarks" / "resnet" / "implementations" / "weights.bin"
    code.parent.mkdir(parents=True)
    code.write_bytes(os.urandom(CODE_BYTES))
    (repository / "README.md").write_text("MLPerf Training v0.6 results\n")
    git("init", "-q", "-b", "main", cwd=repository)
    git("add", "-A", cwd=repository)
    git("commit", "-q", "-m", "v0.6", cwd=repository)
    git(
        "config", "uploadpack.allowFilter", "true", cwd=repository
    )  # as GitHub serves partial clones
    return folder, f"file://{repository}"


def scores(round_key=ROUND) -> dict:
    return {
        (r.system.submitter.name, r.system.key, r.benchmark.key): r.score_s
        for r in Result.objects.filter(system__round__key=round_key).select_related(
            "system__submitter", "benchmark"
        )
    }


def test_a_round_imported_from_git_scores_as_its_folders_and_a_second_run_changes_nothing(
    published, worker, published_rounds, client, cast, settings
):
    folder, url = published
    # Ingested directly, as before: the expected scores. Then gone, so that the import makes its own.
    call_command("ingest", str(folder), "--round", ROUND, "--publish", "--wait", stdout=StringIO())
    expected = scores()
    assert len([s for s in expected.values() if s]) >= 5
    Submission.objects.filter(round__key=ROUND).delete()
    assert not scores()

    out = StringIO()
    started = time.monotonic()
    call_command("import_round", ROUND, "--source", url, stdout=out)
    seconds = time.monotonic() - started
    job = RoundImport.objects.get(round__key=ROUND)
    print(out.getvalue(), f"import: {seconds:.1f} s, {job.received_bytes:,} bytes received")
    assert scores() == expected
    assert job.state == RoundImport.State.DONE and (job.done, job.total) == (3, 3)
    clone = settings.MEDIA_ROOT / "imports" / ROUND
    assert sorted(p.name for p in clone.iterdir() if p.name != ".git") == [
        "Alibaba", "Fujitsu", "Google", "README.md",
    ]  # fmt: skip
    assert not (clone / "Google" / "benchmarks").exists()
    assert 0 < job.received_bytes < CODE_BYTES  # the code's blob was never fetched

    # Again: nothing new is fetched, nothing is submitted or checked again.
    before = dict(Submission.objects.filter(round__key=ROUND).values_list("pk", "status"))
    out = StringIO()
    call_command("import_round", ROUND, "--source", url, stdout=out)
    assert out.getvalue().count("already submitted as") == 3 and "submitted #" not in out.getvalue()
    job.refresh_from_db()
    assert job.received_bytes == 0 and job.state == RoundImport.State.DONE
    assert dict(Submission.objects.filter(round__key=ROUND).values_list("pk", "status")) == before
    assert scores() == expected

    # Again, by staff from the round's page: the task on the worker, from the round's own repository.
    Round.objects.filter(key=ROUND).update(results_repository=url)
    client.force_login(cast["staff"])
    page = client.post(f"/submissions/rounds/{ROUND}/import/", follow=True).content.decode()
    assert "queued for import" in page
    deadline = time.monotonic() + 120
    while RoundImport.objects.get(round__key=ROUND).running:
        assert time.monotonic() < deadline, RoundImport.objects.get(round__key=ROUND).step
        time.sleep(0.2)
    job.refresh_from_db()
    assert job.state == RoundImport.State.CHECKING, job.error
    assert job.received_bytes == 0 and (job.done, job.total) == (3, 3)
    assert dict(Submission.objects.filter(round__key=ROUND).values_list("pk", "status")) == before
    assert scores() == expected
    assert "Being imported" not in client.get("/").content.decode()
