"""Charts that do not mislead: a colour-blind-safe colour and a marker of its own per series, log axes
labelled in full, compare as dots on a log axis, progress holders linked, a table for every chart."""

import json
import re

from leaderboard import charts
from leaderboard.tables import Bench, Cell, Row

from . import leaderboard_factories as make

OKABE_ITO = {"#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"}


def figure(html, chart_id):
    match = re.search(
        rf'<script type="application/json" data-chart="{chart_id}">(.*?)</script>', html, re.S
    )
    assert match, f"no {chart_id} on the page"
    return json.loads(match.group(1))


def row(accelerator: str, count: int, minutes: float, key: str = "") -> Row:
    r = Row(
        1,
        "Acme",
        key or f"{accelerator}-{count}",
        f"{accelerator} × {count}",
        "/x/",
        "closed",
        "onprem",
        "cpu",
        2,
        accelerator,
        count,
        1,
        "fw",
    )
    r.cells["b"] = Cell(1, f"/x/{key}/b/", minutes * 60, None, None, 5, "")
    return r


def test_every_series_has_its_own_okabe_ito_colour_and_marker():
    rows = [row(f"GPU{i}", 8 * (i + 1), 10 + i) for i in range(12)]
    fig = charts.scaling(rows, Bench("b", "Bench", None, 0.5, True))
    styles = [(t["marker"]["color"], t["marker"]["symbol"]) for t in fig["data"]]
    assert len(set(styles)) == 12
    assert {c for c, _ in styles} == OKABE_ITO  # all eight used before any repeats
    assert len({c for c, _ in styles[:8]}) == 8 and len({s for _, s in styles[:10]}) == 10


def test_log_axes_are_labelled_in_full():
    ticks = charts.log_ticks([3, 18, 140])
    assert ticks["ticktext"] == ["2", "5", "10", "20", "50", "100", "200"]
    assert ticks["tickvals"] == [2, 5, 10, 20, 50, 100, 200]
    wide = charts.log_ticks([0.5, 12_000])  # more than three decades: powers of ten only
    assert wide["ticktext"] == ["0.1", "1", "10", "100", "1,000", "10,000", "100,000"]
    assert (
        ticks["range"][0] < 0.302 and ticks["range"][1] > 2.301
    )  # from 2 to 200: both ends labelled
    fig = charts.scaling(
        [row("H100", 8, 30), row("H100", 512, 1.5)], Bench("b", "B", None, 1, True)
    )
    assert fig["layout"]["xaxis"]["ticktext"] == [
        "5",
        "10",
        "20",
        "50",
        "100",
        "200",
        "500",
        "1,000",
    ]
    assert "20" in fig["layout"]["yaxis"]["ticktext"]


def test_compare_draws_dots_on_a_log_axis_not_bars():
    systems = [row("H100", 8, 30, "a"), row("B200", 8, 12, "b")]
    fig = charts.compare(systems, [Bench("b", "B", None, 1, True), Bench("c", "C", None, 1, True)])
    assert fig["layout"]["yaxis"]["type"] == "log"
    assert all(t["type"] == "scatter" and t["mode"] == "markers" for t in fig["data"])
    assert fig["data"][0]["customdata"] == ["/x/a/b/"]
    assert fig["layout"]["xaxis"]["categoryarray"] == ["b"]  # c: no system has it


def test_a_charts_table_has_a_row_per_point_with_its_link():
    fig = charts.scaling(
        [row("H100", 8, 30, "a"), row("H100", 64, 5, "b")], Bench("b", "B", None, 1, True)
    )
    table = charts.table(fig)
    assert (table["x"], table["y"]) == ("Accelerators", "Minutes to train")
    assert [(r["series"], r["x"], r["y"], r["url"]) for r in table["rows"]] == [
        ("H100", "8", "30.00", "/x/a/b/"),
        ("H100", "64", "5.00", "/x/b/b/"),
    ]
    assert charts.table(None) is None


def test_the_progress_page_links_each_holder_and_has_its_chart_as_a_table(client, rounds):
    v05, v06 = rounds["training-v0.5"], rounds["training-v0.6"]
    make.result(make.system(v05, "nvidia", "b"), "resnet", 100)
    make.result(make.system(v06, "NVIDIA", "c"), "resnet", 10)
    html = client.get("/progress/").content.decode()
    assert '<a href="/r/training-v0.6/NVIDIA/c/resnet/">NVIDIA: c</a>' in html
    [resnet] = figure(html, "chart-progress")["data"]
    assert resnet["customdata"] == [
        "/r/training-v0.5/nvidia/b/resnet/",
        "/r/training-v0.6/NVIDIA/c/resnet/",
    ]
    assert 'class="chart-table"' in html and 'role="img"' not in html
