"""Charts that do not mislead: a colour-blind-safe colour and a marker of its own per series, log axes
labelled in full, compare as dots on a log axis, progress holders linked, a table for every chart."""

import pytest

from leaderboard.pages import charts
from leaderboard.roundtable.rows import Bench, Cell, Row

from .. import leaderboard_factories as make
from ..round_table import figure

OKABE_ITO = {"#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"}


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


# The names the published rounds use; the issue found MI300X and GB300 in one colour, MI325X and H100 in another.
MI300X, GB300 = "AMD Instinct MI300X 192GB HBM3", "NVIDIA Blackwell Ultra GPU (GB300)"
MI325X, H100 = "AMD Instinct MI325X 256GB HBM3E", "NVIDIA H100-SXM5-80GB"
H200_NVL, H200_SXM = "NVIDIA H200 NVL 141GB", "NVIDIA H200-SXM5-141GB"


def colours_by_vendor(fig, vendor_of) -> dict[str, set[str]]:
    """{colour: the vendors of the series drawn in it}."""
    out: dict[str, set[str]] = {}
    for trace in fig["data"]:
        out.setdefault(trace["marker"]["color"], set()).add(vendor_of(trace["name"]))
    return out


def test_the_scaling_chart_colours_by_vendor_and_marks_each_model():
    models = [MI300X, GB300, MI325X, H100, H200_NVL, H200_SXM]
    rows = [row(m, 8 * (i + 1), 10 + i) for i, m in enumerate(models)]
    fig = charts.scaling(rows, Bench("b", "Bench", None, 0.5, True))
    vendor = lambda name: "AMD" if "AMD" in name else "NVIDIA"  # noqa: E731 (the families' names say it)
    by_colour = colours_by_vendor(fig, vendor)
    assert all(len(vendors) == 1 for vendors in by_colour.values()), by_colour
    assert len(by_colour) == 2  # one colour per vendor
    styles = [(t["marker"]["color"], t["marker"]["symbol"]) for t in fig["data"]]
    assert len(set(styles)) == len(styles)  # every model its own marker within its vendor's colour
    # H200's two names are one chip: one series, both points in it
    assert [t["name"] for t in fig["data"]].count("NVIDIA H200") == 1
    assert {len(t["x"]) for t in fig["data"] if t["name"] == "NVIDIA H200"} == {2}


def test_no_two_vendors_share_a_colour_however_many_there_are():
    rows = [row(f"Maker{i} Chip", 8, 10 + i) for i in range(16)]
    fig = charts.scaling(rows, Bench("b", "Bench", None, 0.5, True))
    colours = [t["marker"]["color"] for t in fig["data"]]
    assert len(colours) == 16 and len(set(colours)) == 16
    assert set(colours[:8]) <= OKABE_ITO | set(charts.SPARE_COLOURS)


def test_a_vendor_keeps_its_colour_from_chart_to_chart():
    alone = charts.scaling([row(MI300X, 8, 10)], Bench("b", "B", None, 1, True))
    mixed = charts.scaling([row(H100, 8, 9), row(MI300X, 8, 10)], Bench("b", "B", None, 1, True))
    amd = {t["marker"]["color"] for t in mixed["data"] if "AMD" in t["name"]}
    assert amd == {alone["data"][0]["marker"]["color"]}


def test_compare_colours_systems_by_vendor_with_a_marker_each():
    systems = [row(H100, 8, 30, "a"), row(H100, 16, 20, "b"), row(MI300X, 8, 25, "c")]
    fig = charts.compare(systems, [Bench("b", "Bench B", None, 1, True)])
    colours = [t["marker"]["color"] for t in fig["data"]]
    assert colours[0] == colours[1] != colours[2]
    assert fig["data"][0]["marker"]["symbol"] != fig["data"][1]["marker"]["symbol"]
    assert fig["data"][0]["y"] == ["Bench B"]  # benchmarks by name, as in the table


def test_progress_stands_on_a_time_axis_of_the_rounds_dates():
    from datetime import date

    v05, v06, v51 = date(2018, 12, 12), date(2019, 7, 10), date(2025, 11, 12)
    series = {
        "resnet": [
            ("training-v0.5", "Training v0.5", 100.0, "A: x", "/a/", v05),
            ("training-v0.6", "Training v0.6", 50.0, "B: y", "/b/", v06),
            ("training-v5.1", "Training v5.1", 10.0, "C: z", "/c/", v51),
        ]
    }
    fig = charts.progress(series, {"resnet": "Image classification"})
    axis = fig["layout"]["xaxis"]
    assert axis["type"] == "date"
    assert fig["data"][0]["x"] == ["2018-12-12", "2019-07-10", "2025-11-12"]
    assert axis["ticktext"][0].startswith("v0.5") and "Dec 2018" in axis["ticktext"][0]
    assert fig["data"][0]["name"] == "Image classification"


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
    assert fig["layout"]["xaxis"]["type"] == "log"
    assert all(t["type"] == "scatter" and t["mode"] == "markers" for t in fig["data"])
    assert fig["data"][0]["customdata"] == ["/x/a/b/"]
    assert fig["layout"]["yaxis"]["categoryarray"] == ["B"]  # C: no system has it


def test_a_charts_table_has_a_row_per_point_with_its_link():
    fig = charts.scaling(
        [row("H100", 8, 30, "a"), row("H100", 64, 5, "b")], Bench("b", "B", None, 1, True)
    )
    table = charts.table(fig)
    assert (table["x"], table["y"]) == ("Accelerators", "Minutes to train")
    assert [(r["series"], r["x"], r["y"], r["url"]) for r in table["rows"]] == [
        ("NVIDIA H100", "8", "30.00", "/x/a/b/"),  # its family's name
        ("NVIDIA H100", "64", "5.00", "/x/b/b/"),
    ]
    assert charts.table(None) is None


@pytest.mark.django_db
def test_the_progress_page_links_each_holder_and_has_its_chart_as_a_table(client, rounds):
    v05, v06 = rounds["training-v0.5"], rounds["training-v0.6"]
    make.result(make.system(v05, "nvidia", "b"), "resnet", 100)
    make.result(make.system(v06, "NVIDIA", "c"), "resnet", 10)
    html = client.get("/progress/").content.decode()
    # The holder's organisation links its page, its system the result.
    assert (
        '<a href="/organisations/NVIDIA/">NVIDIA</a>: <a href="/r/training-v0.6/NVIDIA/c/resnet/">c</a>'
        in html
    )
    [resnet] = figure(html, "chart-progress")["data"]
    assert resnet["customdata"] == [
        "/r/training-v0.5/nvidia/b/resnet/",
        "/r/training-v0.6/NVIDIA/c/resnet/",
    ]
    assert 'class="chart-table"' in html and 'role="img"' not in html
