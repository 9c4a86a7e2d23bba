"""Exports: CSV and JSON of exactly the filtered view at the page's own URL, and of one result's runs."""

import csv
import io
import json

import pytest

from leaderboard.cache import invalidate_round

from . import leaderboard_factories as make
from .test_leaderboard_table import catalogue, names, page, table_rows, v51  # noqa: F401 (fixtures)


def csv_rows(client, url):
    response = client.get(url)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    assert response["Content-Disposition"].startswith("attachment; filename=")
    return list(csv.DictReader(io.StringIO(response.content.decode())))


@pytest.mark.parametrize(
    "query", ["", "division=closed&sort=-b.retinanet", "submitter=Beta&benchmark=rgat", "q=nothing"]
)
def test_the_csv_holds_exactly_the_rows_and_values_of_the_view(client, catalogue, query):
    html = page(client, f"/r/training-v5.1/?{query}")
    rows = csv_rows(client, f"/r/training-v5.1/?{query}&format=csv")
    assert [r["system_key"] for r in rows] == names(html)
    shown = table_rows(html)
    for (name, cells), row in zip(shown, rows):
        assert row["system"] == name
        values = [row[k] for k in row if k.endswith("_minutes") or k.endswith("_speedup")]
        assert [f"{float(v):,.2f}" if v else "" for v in values] == cells[: len(values)]


def test_the_csv_has_ids_and_links_beside_the_columns_on_screen(client, catalogue):
    rows = csv_rows(client, "/r/training-v5.1/?format=csv&submitter=Acme")
    first = next(r for r in rows if r["system_key"] == "a2")
    assert list(first)[:11] == [
        "division",
        "category",
        "system_id",
        "submitter",
        "system",
        "system_key",
        "processor",
        "processor_count",
        "accelerator",
        "accelerator_count",
        "software",
    ]
    assert first["retinanet_minutes"] == "2.0" and first["retinanet_result_id"].isdigit()
    assert first["url"] == "http://testserver/r/training-v5.1/Acme/a2/"


def test_the_json_export_is_the_same_view(client, catalogue):
    response = client.get("/r/training-v5.1/?format=json&category=onprem&sort=-b.retinanet")
    assert response["Content-Type"] == "application/json"
    records = json.loads(response.content)
    assert [r["system_key"] for r in records] == ["b1", "a1"]
    assert records[0]["retinanet_minutes"] == 12.0 and records[0]["rgat_minutes"] is None


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
