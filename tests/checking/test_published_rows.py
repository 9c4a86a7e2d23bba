"""Rows as MLCommons publishes them: every column of mlperf-logging's result_summarizer row equals the
portal's CSV row (organisation, availability, system, nodes, processors, accelerators, software, score).

Small real submitters whose rows differ from their folders: v4.0's Red_Hat (published as
"RedHat-Supermicro", status "available"), Intel-HabanaLabs and tinycorp ("available"), v1.0's Habana
("HabanaLabs", "available") and PCL ("PCL & PKU"). Each is ingested as history by the pipeline (tasks
in-process); the expected rows are the summarizer's own, run here on the same folder.
"""

import csv
import io
import json
import subprocess
import sys
import tarfile

import pytest
from django.core.management import call_command

from leaderboard.models import Benchmark
from submissions.models import Submission

from ..conftest import shared_plain_tar
from ..summarizer import row_differences

pytestmark = [
    pytest.mark.shared_rounds,
    pytest.mark.usefixtures("eager", "published_rounds"),
    pytest.mark.django_db(transaction=True),
]

CASES = [
    ("training_v4.0_results.tar.xz", "training-v4.0", "4.0.0", "Red_Hat"),
    ("training_v4.0_results.tar.xz", "training-v4.0", "4.0.0", "Intel-HabanaLabs"),
    ("training_v4.0_results.tar.xz", "training-v4.0", "4.0.0", "tinycorp"),
    ("training_v1.0_results.tar.xz", "training-v1.0", "1.0.0", "Habana"),
    ("training_v1.0_results.tar.xz", "training-v1.0", "1.0.0", "PCL"),
]


def summarizer_rows(root, folder: str, ruleset: str) -> list[dict]:
    out = root / "summary.csv"
    subprocess.run(
        [sys.executable, "-m", "mlperf_logging.result_summarizer", folder, "training", ruleset]
        + ["--csv", str(out)],
        cwd=root,
        capture_output=True,
        check=False,
        timeout=600,
    )
    return json.loads(out.with_suffix(".json").read_text())


def portal_rows(client, round_key: str) -> dict[str, dict]:
    """The round's CSV, every column, by system name."""
    response = client.get(f"/r/{round_key}/?format=csv")
    assert response.status_code == 200
    rows = csv.DictReader(io.StringIO(response.content.decode()))
    return {row["System Name"]: row for row in rows}


@pytest.mark.parametrize("tarball, round_key, ruleset, folder", CASES, ids=[c[3] for c in CASES])
def test_every_column_of_the_summarizers_row_is_the_portals(
    client, tmp_path, tarball, round_key, ruleset, folder
):
    with tarfile.open(shared_plain_tar(tarball)) as tar:
        members = [m for m in tar if m.name.removeprefix("./").split("/")[0] == folder]
        tar.extractall(tmp_path, members=members, filter="data")
    expected = summarizer_rows(tmp_path, folder, ruleset)
    assert expected, f"the summarizer gave no row for {folder}"

    call_command("ingest", str(tmp_path / folder), "--round", round_key, "--publish")
    assert Submission.objects.get().status == "published"
    portal = portal_rows(client, round_key)
    headings = {  # the summarizer's benchmark column -> the portal's
        b.key: f"{b.name} (minutes)" for b in Benchmark.objects.filter(round__key=round_key)
    }

    wrong, compared = [], 0
    for row in expected:
        got = portal.get(row["system"])
        if got is None:
            wrong.append(f"{row['system']}: no row in the portal's CSV")
            continue
        differences, scores, _ = row_differences(row, got, headings, ruleset)
        wrong += [f"{row['system']} {d}" for d in differences]
        compared += scores
    assert not wrong, "\n".join(wrong)
    assert compared, "no score was compared"
