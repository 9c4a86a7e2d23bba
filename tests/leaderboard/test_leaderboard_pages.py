"""Detail pages, compare, progress across rounds, charts as data, and plotly served locally."""

import pytest
from django.contrib.staticfiles import finders

from leaderboard import panels
from leaderboard.pages import charts
from leaderboard.staticfinders import PLOTLY_BASIC_STATIC_PATH, PLOTLY_STATIC_PATH

from .. import leaderboard_factories as make
from ..round_table import figure


@pytest.mark.django_db
def test_the_result_page_has_runs_curves_with_the_target_hyperparameters_and_findings(client, v51):
    make.result(make.system(v51, "Acme", "alpha"), "retinanet", 10, runs=5, warning_count=1)
    html = client.get("/r/training-v5.1/Acme/alpha/retinanet/").content.decode()
    assert html.count('class="dropped"') == 2
    fig = figure(html, "chart-curves")
    assert len(fig["data"]) == 5 and fig["layout"]["shapes"][0]["y0"] == 0.34
    assert fig["data"][0]["line"]["dash"] == "dot"  # a dropped run
    assert (
        "global_batch_size" in html and "differs across runs" in html
    )  # the learning rate differs
    # The result row's count alone (no finding behind it) is not shown: the page counts the findings it lists.
    assert "data-findings-count>nothing to report" in html and "1 warning" not in html
    assert "vendor/plotly-basic.min.js" in html


@pytest.mark.django_db
def test_the_result_page_shows_findings_from_a_registered_provider(client, v51):
    result = make.result(make.system(v51, "Acme", "alpha"), "retinanet", 10, runs=5)

    def findings(ids):
        return {
            result.pk: [
                {
                    "severity": "warning",
                    "rule": "seed.distinct",
                    "file": "result_1.txt",
                    "line": 3,
                    "message": "Two runs share a seed.",
                    "hint": "",
                    "advisory": False,
                }
            ]
        }

    panels.register_findings(findings)
    try:
        html = client.get("/r/training-v5.1/Acme/alpha/retinanet/").content.decode()
    finally:
        panels._findings.remove(findings)
    assert "seed.distinct" in html and "<code>result_1.txt</code>, line 3" in html
    assert "Two runs share a seed." in html


@pytest.mark.django_db
def test_the_system_page_lists_all_its_results_and_its_description(client, v51):
    s = make.system(
        v51, "Acme", "alpha", description={"system_name": "Alpha", "cooling": "liquid", "empty": ""}
    )
    make.result(s, "retinanet", 10, runs=5)
    make.result(s, "rgat", 5)
    html = client.get("/r/training-v5.1/Acme/alpha/").content.decode()
    assert "Object detection (RetinaNet)" in html and "Graph neural network (R-GAT)" in html
    assert "cooling" in html and "liquid" in html and ">empty<" not in html
    assert 'id="cloud-scale"' not in html  # on-premise: no cloud scale section to say it has none
    assert (
        "Speedup" not in html and "Energy" not in html
    )  # columns empty for every result: left out
    assert ">5 of 5<" in html  # runs counted, of the result's runs


@pytest.mark.django_db
def test_compare_shows_systems_side_by_side_with_ratios(client, v51):
    a = make.system(v51, "Acme", "alpha")
    b = make.system(v51, "Beta", "beta")
    make.result(a, "retinanet", 10)
    make.result(b, "retinanet", 5)
    make.result(b, "rgat", 3)
    html = client.get("/r/training-v5.1/compare/?s=Acme/alpha&s=Beta/beta").content.decode()
    assert "Acme: alpha" in html and "Beta: beta" in html
    assert "<strong>2.00×</strong>" in html  # beta trains retinanet twice as fast as the baseline
    assert len(figure(html, "chart-compare")["data"]) == 2
    html = client.get("/r/training-v5.1/compare/?s=Acme/alpha&s=Beta/beta&base=1").content.decode()
    assert "<strong>0.50×</strong>" in html  # an old link's baseline by number still holds
    # The baseline is chosen by name, and its links name it.
    html = client.get(
        "/r/training-v5.1/compare/?s=Acme/alpha&s=Beta/beta&base=Beta/beta"
    ).content.decode()
    assert "<strong>0.50×</strong>" in html and "vs baseline (slower)" in html
    assert (
        '<a href="?s=Acme%2Falpha&amp;s=Beta%2Fbeta&amp;base=Acme%2Falpha">Acme: alpha</a>' in html
    )
    assert '<strong aria-current="true">Beta: beta</strong>' in html
    assert "Closed, Available on-premise" in html and "closed, onprem" not in html
    assert '<a href="/organisations/Beta/">Beta</a>' in html


@pytest.mark.django_db
def test_compare_says_same_where_the_ratio_is_one(client, v51):
    make.result(make.system(v51, "Acme", "alpha"), "retinanet", 10)
    make.result(make.system(v51, "Beta", "beta"), "retinanet", 10.001)
    html = client.get("/r/training-v5.1/compare/?s=Acme/alpha&s=Beta/beta").content.decode()
    assert "<strong>same</strong>" in html and "1.00×" not in html


@pytest.mark.django_db
def test_compare_per_accelerator_shows_accelerator_hours_and_keeps_the_mode_in_its_links(
    client, v51
):
    big = make.system(v51, "Acme", "big", accelerator_count=512)
    small = make.system(v51, "Beta", "small", accelerator_count=8)
    make.result(big, "retinanet", 3)  # 3 min × 512 = 25.6 accelerator-hours
    make.result(small, "retinanet", 60)  # 60 min × 8 = 8 accelerator-hours
    url = "/r/training-v5.1/compare/?s=Acme/big&s=Beta/small"
    html = client.get(url + "&show=acc_hours").content.decode()
    assert "25.60 acc-h" in html and "8.00 acc-h" in html
    assert "<strong>3.20×</strong>" in html and "(less)" in html  # 25.6 ÷ 8: less accelerator time
    assert "accelerator-hours to train per benchmark (hours × accelerators)" in html
    assert "base=Beta%2Fsmall&amp;show=acc_hours" in html  # the baseline links keep the mode
    chart = figure(html, "chart-compare")
    assert chart["layout"]["xaxis"]["title"]["text"] == "Accelerator-hours (log)"
    assert sorted(x for trace in chart["data"] for x in trace["x"]) == [8.0, 25.6]
    plain = client.get(url).content.decode()
    assert "<strong>0.05×</strong>" in plain and "acc-h" not in plain  # in minutes: 20× slower


@pytest.mark.django_db
def test_the_result_page_states_the_quality_metric_its_target_and_direction(client, v51):
    make.result(make.system(v51, "Acme", "alpha"), "llama2_70b_lora", 10)
    make.result(make.system(v51, "Beta", "beta"), "rgat", 10)
    lora = client.get("/r/training-v5.1/Acme/alpha/llama2_70b_lora/").content.decode()
    assert (
        "Train until the evaluation loss (SCROLLS GovReport) of 0.925 or lower (lower is better)"
        in lora
    )
    rgat = client.get("/r/training-v5.1/Beta/beta/rgat/").content.decode()
    assert "validation accuracy (IGBH) of 0.72 or higher (higher is better)" in rgat


@pytest.mark.parametrize(
    "query, message",
    [
        ("s=Acme/alpha", "Pick at least two systems"),
        ("s=A/1&s=A/2&s=A/3&s=A/4&s=A/5", "at most four"),
    ],
)
@pytest.mark.django_db
def test_compare_asks_for_two_to_four_systems(client, v51, query, message):
    for i in range(1, 6):
        make.result(make.system(v51, "A", str(i)), "retinanet", i)
    make.result(make.system(v51, "Acme", "alpha"), "retinanet", 1)
    assert message in client.get(f"/r/training-v5.1/compare/?{query}").content.decode()


@pytest.mark.django_db
def test_progress_shows_the_best_time_per_benchmark_across_rounds(client, rounds):
    v05, v06 = rounds["training-v0.5"], rounds["training-v0.6"]
    make.result(make.system(v05, "google", "a"), "resnet", 300)
    make.result(make.system(v05, "nvidia", "b"), "resnet", 100)
    make.result(make.system(v06, "NVIDIA", "c"), "resnet", 10)
    make.result(make.system(v06, "Open", "d", division="open"), "resnet", 1)
    html = client.get("/progress/").content.decode()
    fig = figure(html, "chart-progress")
    [resnet] = fig["data"]
    dates = [v05.publication_date.isoformat(), v06.publication_date.isoformat()]
    assert resnet["x"] == dates and resnet["y"] == [100.0, 10.0]  # at the rounds' dates
    assert "10.00×" in html and "NVIDIA: c" in html
    assert figure(client.get("/progress/?division=open").content.decode(), "chart-progress")[
        "data"
    ][0]["y"] == [1.0]


@pytest.mark.django_db
def test_plotly_is_served_from_the_installed_packages_not_a_cdn(client, v51):
    path = finders.find(PLOTLY_STATIC_PATH)
    assert path and path.endswith("plotly.min.js")
    basic = finders.find(PLOTLY_BASIC_STATIC_PATH)
    assert basic and basic.endswith("plotly-basic.min.js")  # npm's basic bundle (make setup)
    make.result(make.system(v51, "Acme", "alpha"), "retinanet", 10)
    html = client.get("/r/training-v5.1/").content.decode()
    assert 'data-plotly="/static/vendor/plotly-basic.min.js"' in html
    assert "cdn" not in html.lower()


def test_charts_are_plain_figures_with_more_than_colour_to_tell_traces_apart():
    from leaderboard.roundtable.rows import Bench, Cell, Row

    def row(acc, count, minutes):
        r = Row(
            1,
            "Acme",
            f"k{count}",
            f"n{count}",
            "/x/",
            "closed",
            "onprem",
            "cpu",
            2,
            acc,
            count,
            1,
            "fw",
        )
        r.cells["b"] = Cell(1, "/x/b/", minutes * 60, None, None, 5, "")
        return r

    bench = Bench("b", "Bench", None, 0.5, True)
    fig = charts.scaling([row("H100", 8, 10), row("H100", 64, 2), row("MI355X", 8, 12)], bench)
    assert fig["layout"]["xaxis"]["type"] == "log" and fig["layout"]["yaxis"]["type"] == "log"
    assert [t["name"] for t in fig["data"]] == [
        "AMD MI355X",
        "NVIDIA H100",
    ]  # by vendor, then model
    assert fig["data"][1]["x"] == [8, 64] and fig["data"][1]["y"] == [10.0, 2.0]
    assert fig["data"][0]["marker"]["symbol"] != fig["data"][1]["marker"]["symbol"]
    assert charts.scaling([], bench) is None


@pytest.mark.django_db
def test_every_page_has_a_meta_description_of_what_it_shows(client, v51):
    """Search results and shared links show a page's description (Lighthouse's SEO audit asked for one)."""
    import re

    a = make.system(v51, "Acme", "alpha", accelerator_count=8, accelerator_model="NVIDIA H200")
    make.result(a, "retinanet", 10, runs=5)
    make.result(make.system(v51, "Beta", "beta"), "retinanet", 5)
    expected = {
        "/": "MLPerf Training results: every round's scores",
        "/rounds/": "Every round of MLPerf Training the portal holds",
        "/progress/": "the best published time to train per benchmark",
        "/r/training-v5.1/": "Training v5.1: times to train of every published system",
        "/r/training-v5.1/Acme/alpha/": "Acme alpha in Training v5.1: 8 × NVIDIA H200",
        "/r/training-v5.1/Acme/alpha/retinanet/": (
            "Acme alpha on Object detection (RetinaNet) in Training v5.1: 10.00 minutes to train"
        ),
        "/r/training-v5.1/compare/?s=Acme/alpha&s=Beta/beta": "Training v5.1: alpha, beta compared",
    }
    for path, words in expected.items():
        html = client.get(path).content.decode()
        found = re.findall(r'<meta name="description" content="([^"]+)">', html)
        assert len(found) == 1 and words in found[0], (path, found)
