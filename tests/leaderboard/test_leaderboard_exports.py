"""Exports: CSV and JSON of exactly the filtered view at the page's own URL, and of one result's runs."""

import csv
import io
import json

import pytest

from leaderboard.cache import invalidate_round

from .. import leaderboard_factories as make
from ..round_table import five_systems, names, page, table_rows

pytestmark = pytest.mark.django_db


@pytest.fixture
def catalogue(v51):
    return five_systems(v51)


def csv_rows(client, url):
    response = client.get(url)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    assert response["Content-Disposition"].startswith("attachment; filename=")
    return list(csv.DictReader(io.StringIO(response.content.decode())))


def system_key(record):
    return record["System URL"].rstrip("/").rsplit("/", 1)[-1]


@pytest.mark.parametrize(
    "query", ["", "division=closed&sort=-b.retinanet", "submitter=Beta&benchmark=rgat", "q=nothing"]
)
def test_the_csv_holds_exactly_the_rows_and_values_of_the_view(client, catalogue, query):
    html = page(client, f"/r/training-v5.1/?{query}")
    rows = csv_rows(client, f"/r/training-v5.1/?{query}&format=csv")
    assert [system_key(r) for r in rows] == names(html)
    shown = table_rows(html)
    for (name, cells), row in zip(shown, rows):
        assert row["System Name"] == name
        values = [row[k] for k in row if k.endswith(("(minutes)", "(speedup)"))]
        assert [f"{float(v):,.2f}" if v else "" for v in values] == cells[: len(values)]


MLCOMMONS_SUMMARY = [
    "Public ID",
    "Organization",
    "Availability",
    "System Name",
    "# of Nodes",
    "Processor",
    "# of Processors",
    "Accelerator",
    "# of Accelerators",
    "Software",
]


def test_the_csv_has_mlcommons_summary_columns_then_links_and_notes(client, v51):
    s = make.system(
        v51, "Acme", "a2", name="Acme 8", category="cloud", nodes=2, accelerator_count=16
    )
    make.result(s, "retinanet", 2, public_id="5.1-0007")
    make.result(s, "rgat", None, public_id="5.1-0008", score_message="2 of 5 runs failed")
    [record] = csv_rows(client, "/r/training-v5.1/?format=csv")
    header = list(record)
    assert [c for c in header if c in MLCOMMONS_SUMMARY] == MLCOMMONS_SUMMARY
    assert header[-4:] == ["System URL", "Logs URL", "Code URL", "Notes"]
    assert record["Public ID"] == "5.1-0007 5.1-0008" and record["Organization"] == "Acme"
    assert record["Availability"] == "Available cloud" and record["# of Nodes"] == "2"
    assert record["Object detection (RetinaNet) (minutes)"] == "2.0"
    assert record["Object detection (RetinaNet) URL"] == (
        "http://testserver/r/training-v5.1/Acme/a2/retinanet/"
    )
    assert record["System URL"] == "http://testserver/r/training-v5.1/Acme/a2/"
    assert "Graph neural network (R-GAT): not scored: 2 of 5 runs failed" in record["Notes"]


def test_the_code_link_is_the_submitters_folder_where_mlcommons_published_the_round(client, v51):
    v51.published_tree = "https://github.com/mlcommons/training_results_v5.1/tree/441d65f"
    v51.save()
    result = make.result(make.system(v51, "Acme", "a2"), "retinanet", 2)
    result.path = "Acme/results/a2/retinanet"  # as ingest records it: bundle-relative
    result.save()
    [record] = csv_rows(client, "/r/training-v5.1/?format=csv")
    assert record["Code URL"] == (
        "https://github.com/mlcommons/training_results_v5.1/tree/441d65f/Acme/benchmarks"
    )
    v51.published_tree = ""  # a round published nowhere the portal knows: no link
    v51.save()
    invalidate_round(v51.key)
    [record] = csv_rows(client, "/r/training-v5.1/?format=csv")
    assert record["Code URL"] == ""


def test_an_export_follows_the_column_chooser_where_columns_are_chosen(client, catalogue):
    [first, *_] = csv_rows(client, "/r/training-v5.1/?format=csv&cols=accelerator&cols=nodes")
    chosen = [c for c in first if c in MLCOMMONS_SUMMARY]
    assert chosen == [
        "Organization",
        "System Name",
        "# of Nodes",
        "Accelerator",
        "# of Accelerators",
    ]


def test_the_json_export_is_the_same_view(client, catalogue):
    response = client.get("/r/training-v5.1/?format=json&category=onprem&sort=-b.retinanet")
    assert response["Content-Type"] == "application/json"
    records = json.loads(response.content)
    assert [system_key(r) for r in records] == ["b1", "a1"]
    assert records[0]["Object detection (RetinaNet) (minutes)"] == 12.0
    assert records[0]["Graph neural network (R-GAT) (minutes)"] is None


def test_an_unknown_format_is_a_clear_400(client, catalogue):
    response = client.get("/r/training-v5.1/?format=xlsx")
    assert response.status_code == 400 and "format=csv or format=json" in response.content.decode()


def test_exports_are_cached_and_invalidated_with_the_round(client, v51):  # noqa: F811
    make.result(make.system(v51, "Acme", "alpha"), "retinanet", 10)
    assert len(csv_rows(client, "/r/training-v5.1/?format=csv")) == 1
    make.result(make.system(v51, "Acme", "beta"), "retinanet", 10)
    assert len(csv_rows(client, "/r/training-v5.1/?format=csv")) == 1
    invalidate_round("training-v5.1")
    assert len(csv_rows(client, "/r/training-v5.1/?format=csv")) == 2


def test_a_results_runs_export_as_csv_and_json(client, v51):  # noqa: F811
    make.result(make.system(v51, "Acme", "alpha"), "retinanet", 10, runs=5)
    rows = csv_rows(client, "/r/training-v5.1/Acme/alpha/retinanet/?format=csv")
    assert [r["index"] for r in rows] == ["0", "1", "2", "3", "4"]
    assert [r["dropped"] for r in rows] == ["True", "False", "False", "False", "True"]
    assert rows[0]["minutes"] == "10.0" and rows[0]["run_id"].isdigit()
    records = client.get("/r/training-v5.1/Acme/alpha/retinanet/?format=json").json()
    assert len(records) == 5 and records[1]["counted"] is True


def test_an_unpublished_results_runs_cannot_be_exported(client, v51):  # noqa: F811
    make.result(
        make.system(v51, "Hidden", "zeta", published=False),
        "retinanet",
        10,
        runs=5,
        published=False,
    )
    assert client.get("/r/training-v5.1/Hidden/zeta/retinanet/?format=csv").status_code == 404


def test_a_process_that_serves_pages_and_writes_no_export_does_not_import_pandas():
    """pandas is imported at the first export (leaderboard/roundtable/exports.py's data_frame): a third of a
    second of CPU that every web and Celery process paid at start."""
    import subprocess
    import sys

    from ..worker import ROOT

    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys\n"
            "from portal.wsgi import application\n"
            "from django.urls import get_resolver\n"
            "get_resolver().url_patterns\n"
            "from portal.celery import app\n"
            "app.loader.import_default_modules()\n"
            "print('pandas' in sys.modules)",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
