"""The round table: sections, columns, visibility, units, filters and sorting in the query string,
caching and a fixed number of queries whatever the number of rows."""

import csv
import io
import json
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from leaderboard.cache import invalidate_round
from leaderboard.models import Round

from .. import leaderboard_factories as make
from ..round_table import five_systems, names, page, table_rows


def section_titles(html):
    return re.findall(r'<h2 id="h-[^"]+">(.*?) <span', html)


@pytest.mark.django_db
def test_it_shows_one_table_per_division_or_groups_by_category_when_asked(client, v51):
    for division, category, key in [
        ("open", "research", "o-r"),
        ("closed", "preview", "c-p"),
        ("closed", "cloud", "c-c"),
        ("closed", "onprem", "c-o"),
    ]:
        make.result(
            make.system(v51, key=key, division=division, category=category), "retinanet", 10
        )
    html = page(client, "/r/training-v5.1/")
    # One table per division, sorted across availability categories: a column says which.
    assert section_titles(html) == ["Closed division", "Open division"]
    assert (
        '<th scope="col" class="avail" aria-sort="none"><a href="?sort=availability" data-sort>'
        "Avail&shy;ability</a>" in html
    )
    html = page(client, "/r/training-v5.1/?group=availability")  # MLCommons' way, kept in the URL
    assert section_titles(html) == [
        "Closed division: Available cloud",
        "Closed division: Available on-premise",
        "Closed division: Preview",
        "Open division: Research, Development, or Internal (RDI)",
    ]
    assert "<caption" in html and 'scope="col"' in html and 'scope="row"' in html


@pytest.mark.django_db
def test_a_row_has_submitter_system_hardware_software_and_one_column_per_benchmark(client, v51):
    s = make.system(
        v51, "Acme", "alpha", name="Alpha 8xH100", processor_count=2, accelerator_count=8
    )
    make.result(s, "retinanet", 12.345)
    make.result(s, "rgat", 7.5)
    html = page(client, "/r/training-v5.1/?cols=processor&cols=accelerator&cols=software")
    # Only the benchmarks with a result in the view have a column; the header says the task.
    shown = re.findall(r'data-key="([^"]+)">([^<]+)</a> <small class="key">', html)
    assert shown == [
        ("rgat", "Graph neural network (R-GAT)"),
        ("retinanet", "Object detection (RetinaNet)"),
    ]
    assert "2 × Intel Xeon Platinum 8480C" in html and "8 × NVIDIA H100-SXM5-80GB" in html
    assert "PyTorch 25.09" in html and 'href="/r/training-v5.1/Acme/alpha/"' in html
    [(name, cells)] = table_rows(html)
    assert name == "Alpha 8xH100"
    values = dict(zip(["rgat", "retinanet"], cells))
    assert values["retinanet"] == "12.35" and values["rgat"] == "7.50"
    assert 'href="/r/training-v5.1/Acme/alpha/retinanet/"' in html


@pytest.mark.django_db
def test_unpublished_and_blocked_results_never_appear_and_only_a_disputed_result_is_flagged(
    client, v51
):
    from submissions.refchecks.models import ReferenceCheck

    make.result(
        make.system(v51, "Hidden", "zeta", published=False), "retinanet", 1, published=False
    )
    blocked = make.system(v51, "Blocked", "beta")
    make.result(blocked, "retinanet", 2, error_count=1)  # published by mistake: errors still block
    nits = make.system(v51, "Acme", "alpha")
    make.result(nits, "retinanet", 3, error_count=2, advisory=True, warning_count=1)
    html = page(client, "/r/training-v5.1/")
    assert "Hidden" not in html and "zeta" not in html and "Blocked" not in html
    assert 'class="flag"' not in html  # findings that do not change how the number reads: no flag
    disputed = make.result(make.system(v51, "Acme", "gamma"), "retinanet", 1)
    ReferenceCheck.objects.create(
        result=disputed, state="done", verdict="implausibly-fast", message="x"
    )
    from leaderboard.cache import invalidate_round

    invalidate_round(v51.key)
    html = page(client, "/r/training-v5.1/")
    assert html.count('class="flag"') == 1 and "reference check disputes it" in html


@pytest.mark.django_db
def test_the_round_shows_minutes_and_speedups_as_a_mode_of_one_unit(client, rounds):
    v05 = rounds["training-v0.5"]
    s = make.system(v05, "google", "tpu")
    make.result(s, "resnet", 301.58)
    make.result(s, "ssd", 20.0)
    html = page(client, "/r/training-v0.5/")
    [(_, cells)] = table_rows(html)
    assert cells[:2] == ["301.58", "20.00"]  # minutes first, as in every round
    assert 'value="minutes" checked' in html
    html = page(client, "/r/training-v0.5/?show=speedup")
    [(_, cells)] = table_rows(html)
    # ssd has no reference time: no column of minutes beside the speedups
    assert cells[0] == "29.28×" and 'data-key="ssd"' not in html and 'data-key="resnet"' in html
    assert 'value="speedup"' not in page(client, "/r/training-v5.1/")


@pytest.fixture
def catalogue(v51):
    return five_systems(v51)


@pytest.mark.parametrize(
    "query, expected",
    [
        ("", ["a1", "a2", "b1", "g1", "b2"]),
        ("group=availability", ["a2", "a1", "b1", "g1", "b2"]),
        ("division=open", ["b2"]),
        ("category=onprem", ["a1", "b1"]),
        ("category=onprem&category=preview", ["a1", "b1", "g1"]),
        ("submitter=Beta", ["b1", "b2"]),
        ("submitter=Beta&submitter=Gamma", ["b1", "g1", "b2"]),
        ("accelerator=AMD+Instinct+MI355X", ["b1", "b2"]),
        ("processor=AMD+EPYC+9575F", ["b1", "b2"]),
        ("framework=NeMo+25.04", ["g1"]),
        ("benchmark=flux1", ["b1"]),
        ("acc_min=9&acc_max=100", ["a2", "g1"]),
        ("acc_min=100&acc_max=9", ["a2", "g1"]),  # a reversed range is read the right way round
        ("q=jax+mi355x", ["b1", "b2"]),
        ("q=nothing-like-this", []),
        ("division=closed&category=onprem&q=acme", ["a1"]),
    ],
)
@pytest.mark.django_db
def test_each_filter_lives_in_the_query_string(client, catalogue, query, expected):
    assert names(page(client, f"/r/training-v5.1/?{query}")) == expected


@pytest.mark.django_db
def test_a_benchmark_filter_shows_only_that_benchmarks_column(client, catalogue):
    html = page(client, "/r/training-v5.1/?benchmark=flux1")
    assert 'data-key="flux1"' in html and 'data-key="retinanet"' not in html


@pytest.mark.django_db
def test_sorting_by_a_benchmark_puts_blanks_last_either_way(client, catalogue):
    html = page(client, "/r/training-v5.1/?division=closed&sort=b.retinanet")
    # Across categories: a2 (cloud, 2), g1 (preview, 3), then a1 (10) and b1 (12) on-premise.
    assert names(html) == ["a2", "g1", "a1", "b1"]
    html = page(client, "/r/training-v5.1/?division=closed&sort=b.retinanet&group=availability")
    assert names(html) == ["a2", "a1", "b1", "g1"]  # within each category's table
    html = page(client, "/r/training-v5.1/?category=onprem&sort=b.rgat")
    assert names(html) == ["a1", "b1"]  # b1 has no rgat result: last
    html = page(client, "/r/training-v5.1/?category=onprem&sort=-b.rgat")
    assert names(html) == ["a1", "b1"]
    html = page(client, "/r/training-v5.1/?category=onprem&sort=-b.retinanet")
    assert names(html) == ["b1", "a1"]
    assert 'aria-sort="descending"' in html


@pytest.mark.django_db
def test_column_headers_link_to_the_same_view_sorted_and_a_second_click_reverses(client, catalogue):
    html = page(client, "/r/training-v5.1/?category=onprem")
    assert 'href="?category=onprem&amp;sort=b.retinanet"' in html
    html = page(client, "/r/training-v5.1/?category=onprem&sort=b.retinanet")
    assert 'href="?category=onprem&amp;sort=-b.retinanet"' in html
    assert 'aria-sort="ascending"' in html


@pytest.mark.django_db
def test_sort_by_text_columns(client, catalogue):
    assert names(page(client, "/r/training-v5.1/?category=onprem&sort=-submitter")) == ["b1", "a1"]
    assert names(page(client, "/r/training-v5.1/?category=onprem&sort=software")) == ["b1", "a1"]


@pytest.mark.django_db
def test_an_old_permalink_with_unknown_values_still_opens(client, catalogue):
    html = page(
        client,
        "/r/training-v5.1/?division=bogus&submitter=Nobody&submitter=Beta&sort=b.nope&acc_min=x&show=watts",
    )
    assert names(html) == ["b1", "b2"]


@pytest.mark.django_db
def test_the_form_shows_the_state_so_it_works_without_javascript(client, catalogue):
    html = page(client, "/r/training-v5.1/?division=closed&submitter=Beta&q=jax&acc_min=4")
    assert '<option value="closed" selected>' in html
    # Each count follows the other filters: one closed JAX system of Beta's with 4 or more accelerators
    # (of its two), none of Acme's; the badge counts the four filters in force.
    assert (
        '<input type="checkbox" name="submitter" value="Beta" checked> Beta '
        '<span class="n" data-count>(1)</span></label>' in html
    )
    assert (
        '<input type="checkbox" name="submitter" value="Acme"> Acme <span class="n" data-count>(0)</span>'
        in html
    )
    assert '<span class="tag" id="filters-active">4 active</span>' in html
    counts = json.loads(re.search(r"data-filter-counts>(.*?)</script>", html).group(1))
    assert counts["submitter"] == {"Beta": 1} and counts["category"] == {"onprem": 1}
    assert 'name="q" id="id_q" value="jax"' in html and 'value="4"' in html
    assert (
        '<form id="table-filters" class="filters" method="get" action="/r/training-v5.1/"' in html
    )
    assert re.search(r"<label for=\"id_division\">", html) and '<label for="id_acc_min">' in html
    html = page(client, "/r/training-v5.1/")
    assert 'value="Beta"> Beta <span class="n" data-count>(2)</span>' in html
    assert '<span class="tag" id="filters-active" hidden>' in html


@pytest.mark.django_db
def test_choosing_another_round_in_the_form_goes_to_that_rounds_address(client, catalogue):
    response = client.get("/r/training-v5.1/?round=training-v0.5&show=minutes")
    assert response.status_code == 302 and response["Location"] == "/r/training-v0.5/?show=minutes"


@pytest.mark.django_db
def test_the_partial_is_the_results_part_only(client, catalogue):
    html = page(client, "/r/training-v5.1/?division=open&partial=1")
    assert "<html" not in html and "table-filters" not in html and names(html) == ["b2"]


@pytest.mark.django_db
def test_a_cloud_system_has_its_section_and_the_summary_counts_rows(client, catalogue):
    html = page(client, "/r/training-v5.1/?submitter=Acme")
    assert "Showing 2 of 5 systems (3 results) matching the filters." in html


@pytest.mark.django_db
def test_charts_follow_the_filters(client, catalogue):
    html = page(client, "/r/training-v5.1/?chart=retinanet")
    assert "Scaling: Object detection (RetinaNet)" in html
    assert html.count('"x":[') >= 2  # H100, GB200, MI355X traces
    html = page(client, "/r/training-v5.1/?chart=retinanet&accelerator=NVIDIA+GB200")
    assert re.search(r'data-chart="chart-scaling">.*"name":"NVIDIA GB200"', html)
    assert '"name":"NVIDIA H100-SXM5-80GB"' not in html


@pytest.mark.django_db
def test_the_scaling_chart_opens_on_the_benchmark_with_the_most_results(client, v51):
    first = v51.benchmarks.order_by("position").first()  # the round's first benchmark: one result
    make.result(make.system(v51, "Acme", "a0", accelerator_count=8), first.key, 100)
    for i, count in enumerate((8, 16, 32)):
        make.result(
            make.system(v51, "Acme", f"r{i}", accelerator_count=count), "retinanet", 30 / (i + 1)
        )
    assert first.key != "retinanet"
    html = page(client, "/r/training-v5.1/")
    assert "Scaling: Object detection (RetinaNet)" in html
    assert f"Scaling: {first.name}" in page(client, f"/r/training-v5.1/?chart={first.key}")


@pytest.mark.django_db
def test_the_round_table_issues_a_fixed_number_of_queries_whatever_its_size(client, v51):
    def grow(n):
        for i in range(n):
            s = make.system(
                v51, f"Org{i % 3}", f"grow-{Round.objects.count()}-{i}-{next(make._seq)}"
            )
            for bench in ("retinanet", "rgat", "flux1"):
                make.result(s, bench, 10 + i)

    def cold_queries():
        invalidate_round("training-v5.1")
        with CaptureQueriesContext(connection) as ctx:
            assert client.get("/r/training-v5.1/?sort=b.rgat").status_code == 200
        return len(ctx)

    grow(2)
    small = cold_queries()
    grow(40)
    assert cold_queries() == small
    # The reference checks' provider: the round's result ids (a subquery of its checks: 4,000 ids bound
    # one by one cost more than this query), its checks and the agents' queues.
    assert small <= 8
    with CaptureQueriesContext(connection) as ctx:  # warm: the cached table costs no query
        client.get("/r/training-v5.1/?sort=b.rgat")
    assert len(ctx) == 0


@pytest.mark.django_db
def test_a_warm_page_trusts_its_round_for_a_second_and_a_publication_here_at_once(
    client, v51, monkeypatch
):
    from leaderboard import cache

    make.result(make.system(v51, "Acme", "alpha"), "retinanet", 10)
    assert "alpha" in page(client, "/r/training-v5.1/")
    make.result(make.system(v51, "Beta", "beta"), "retinanet", 5)
    # Another process changed the token: this one sees it once its memo is a second old.
    Round.objects.filter(key="training-v5.1").update(cache_token="elsewhere")
    assert "beta" not in page(client, "/r/training-v5.1/")
    monkeypatch.setattr(cache, "ROUND_MEMO_SECONDS", 0)
    assert "beta" in page(client, "/r/training-v5.1/")
    monkeypatch.setattr(cache, "ROUND_MEMO_SECONDS", 1.0)
    make.result(make.system(v51, "Gamma", "gamma"), "retinanet", 7)
    invalidate_round("training-v5.1")  # a publication in this process shows at once
    assert "gamma" in page(client, "/r/training-v5.1/")


@pytest.mark.django_db
def test_a_cached_table_is_served_until_the_round_is_invalidated(client, v51):
    make.result(make.system(v51, "Acme", "alpha"), "retinanet", 10)
    assert "alpha" in page(client, "/r/training-v5.1/")
    make.result(make.system(v51, "Late", "omega"), "retinanet", 10)
    assert "omega" not in page(client, "/r/training-v5.1/")  # cached
    invalidate_round("training-v5.1")
    assert "omega" in page(client, "/r/training-v5.1/")


@pytest.mark.django_db
def test_browsers_get_the_cached_page_gzipped(client, catalogue):
    import gzip

    plain = client.get("/r/training-v5.1/?division=open").content
    response = client.get(
        "/r/training-v5.1/?division=open", HTTP_ACCEPT_ENCODING="gzip, deflate, br"
    )
    assert response["Content-Encoding"] == "gzip" and "Accept-Encoding" in response["Vary"]
    assert gzip.decompress(response.content) == plain


@pytest.mark.django_db(
    transaction=True
)  # the cache is invalidated in an on_commit hook of the publication
def test_publishing_a_submission_refreshes_the_cached_table(client, v51):
    from submissions.checking.pipeline import publish

    make.result(make.system(v51, "Acme", "alpha"), "retinanet", 10)
    late = make.system(v51, "Late", "omega", published=False)
    make.result(late, "retinanet", 10, published=False)
    assert "omega" not in page(client, "/r/training-v5.1/")  # now cached
    publish(late.submission_id)
    assert "omega" in page(client, "/r/training-v5.1/")


@pytest.mark.django_db
def test_power_shows_where_reported_as_energy_per_benchmark_and_mean_power_per_system(client, v51):
    measured = make.system(v51, "Acme", "alpha")
    make.result(measured, "retinanet", 10, energy_j=6_000_000)  # 6 MJ in 10 min: 10 kW
    make.result(make.system(v51, "Beta", "beta"), "retinanet", 5)
    html = page(client, "/r/training-v5.1/")
    assert "Avg. power (kW)" in html and 'value="energy"' in html
    assert (
        dict(table_rows(html))["alpha"][-1] == "10.0" and dict(table_rows(html))["beta"][-1] == ""
    )
    assert "Energy to train: 6,000 kJ." in html
    rows = dict(table_rows(page(client, "/r/training-v5.1/?show=energy")))
    assert rows["alpha"][0] == "6,000" and rows["beta"][0] == ""
    assert "Avg. power" not in page(client, "/r/training-v0.6/")


def _round_data():
    """A round table's data made by hand: the row builder needs no database."""
    from leaderboard.roundtable.rows import Bench, Cell, RoundData, Row

    benches = [
        Bench("resnet", "ResNet", 8831.3, 0.749, True),
        Bench("ssd", "SSD", None, 0.212, True),
    ]
    row = Row(
        system_id=7,
        submitter="Acme",
        key="alpha",
        name="Alpha",
        url="/r/x/Acme/alpha/",
        division="closed",
        category="cloud",
        processor_model="P" * 30,
        processor_count=2,
        accelerator_model="NVIDIA H100",
        accelerator_count=None,
        nodes=1,
        framework="PyTorch",
        cloud_scale=None,
        cloud_scale_note="no price known",
        cells={
            "resnet": Cell(
                1,
                "/r/x/Acme/alpha/resnet/",
                301.58 * 60,
                29.2834,
                6_000_000,
                5,
                "2 errors (advisory)",
                public_id="0.5-0001",
            ),
            "ssd": Cell(
                2,
                "/r/x/Acme/alpha/ssd/",
                None,
                None,
                None,
                0,
                "",
                not_scored_because="2 of 5 runs failed",
            ),
        },
    )
    return RoundData("x", benches, [row])


def test_the_row_builder_formats_each_cell_for_the_view_as_text():
    from django.http import QueryDict

    from leaderboard.roundtable.layout import shown_table
    from leaderboard.roundtable.view import TableView

    data = _round_data()
    view, _ = TableView.from_query(QueryDict(""), data)
    table = shown_table(view, data)
    [(section, [row])] = table.sections
    assert section.anchor == "closed" and [h["unit"] for h in table.headers] == ["min", "min"]
    # A long text has a short form for its column; the whole text is still in the page.
    assert (
        row["processor"] == "2 × " + "P" * 30 and row["processor_short"] == "2 × " + "P" * 12 + "…"
    )
    assert row["accelerator"] == "NVIDIA H100" and row["accelerator_short"] == ""  # it fits
    # No known price: no cloud scale (the column is left out where no system has one).
    assert row["cloud_scale"] == "" and row["power"] == "0.3"  # 6 MJ over 301.58 min: 0.33 kW
    resnet, ssd = row["cells"]
    assert (
        resnet["text"] == "301.58"
        and not resnet["not_scored"]
        and resnet["findings"] == "2 errors (advisory)"
    )
    assert resnet["title"] == "0.5-0001. Findings: 2 errors (advisory). Energy to train: 6,000 kJ."
    assert (
        ssd["not_scored"] and ssd["text"] == "" and ssd["title"] == "Not scored: 2 of 5 runs failed"
    )

    view, _ = TableView.from_query(QueryDict("show=speedup"), data)
    table = shown_table(view, data)
    [(_, [row])] = table.sections
    assert [h["unit"] for h in table.headers] == ["×"]  # ssd has no reference time: left out
    assert [c["text"] for c in row["cells"]] == ["29.28×"]

    view, _ = TableView.from_query(QueryDict("show=energy&benchmark=resnet"), data)
    [(_, [row])] = shown_table(view, data).sections
    assert [c["text"] for c in row["cells"]] == ["6,000"]
    assert "Energy" not in row["cells"][0]["title"]  # the number itself is the energy


def test_the_round_tables_rows_escape_what_comes_from_bundles():
    from django.http import QueryDict

    from leaderboard.roundtable.htmlrows import rows_html
    from leaderboard.roundtable.layout import shown_table
    from leaderboard.roundtable.view import TableView

    data = _round_data()
    row = data.rows[0]
    row.submitter, row.name, row.framework = '<b>"Acme"</b>', "<script>x</script>", "A&B"
    row.accelerator_model, row.accelerator_count = "<i>H100</i>", 8
    row.cells["ssd"].not_scored_because = "<img src=x>"
    view, _ = TableView.from_query(QueryDict(""), data)
    table = shown_table(view, data)
    [(section, rows)] = table.sections
    html = rows_html(rows, ["submitter", "software", "cloud_scale", "power"])
    assert "<script>" not in html and "<img" not in html and "<b>" not in html and "<i>" not in html
    # The accelerators under the system's name, which a phone shows (portal.css), escaped too.
    assert '<span class="acc">8 × &lt;i&gt;H100&lt;/i&gt;</span></th>' in html
    assert 'data-system="&lt;b&gt;&quot;Acme&quot;&lt;/b&gt;/alpha"' in html
    assert ">&lt;script&gt;x&lt;/script&gt;</a>" in html and ">A&amp;B</td>" in html
    # Why it has no score: in the tooltip, and in the cell's text for a phone, which has no hover.
    assert (
        'title="Not scored: &lt;img src=x&gt;"><span class="not-scored">not scored</span></a>'
        '<span class="why">&lt;img src=x&gt;</span>' in html
    )


@pytest.mark.django_db
def test_the_count_line_counts_the_results_in_the_columns_shown(client, catalogue):
    # b1 has a RetinaNet and a Flux result; filtered on Flux, its one Flux cell is what is shown.
    html = page(client, "/r/training-v5.1/?benchmark=flux1")
    assert "Showing 1 of 5 systems (1 result) matching the filters." in html


@pytest.mark.django_db
def test_a_filtered_view_shows_its_filters_as_chips_each_linking_to_the_view_without_it(
    client, catalogue
):
    html = page(
        client,
        "/r/training-v5.1/?category=onprem&accelerator=family:NVIDIA+H100&q=acme&sort=b.rgat",
    )
    chips = re.findall(
        r'<a href="\?([^"]*)" data-chip-name="([^"]+)" data-chip-value="([^"]+)"', html
    )
    assert [(name, value) for _, name, value in chips] == [
        ("category", "onprem"),
        ("accelerator", "family:NVIDIA H100"),
        ("q", "acme"),
    ]
    # Each chip's link is this view without that one filter, the sort kept.
    assert chips[0][0] == "accelerator=family%3ANVIDIA+H100&amp;q=acme&amp;sort=b.rgat"
    assert "Availability: <b>Available on-premise</b>" in html
    assert "Accelerator: <b>all NVIDIA H100</b>" in html
    assert 'href="?sort=b.rgat" data-chip-clear>Clear all</a>' in html
    assert "data-chips" in page(client, "/r/training-v5.1/?partial=1&q=acme")  # in the swapped part
    assert "data-chips" not in page(client, "/r/training-v5.1/")


@pytest.mark.django_db
def test_filters_of_several_values_are_checkboxes_grouped_by_family(client, catalogue):
    html = page(client, "/r/training-v5.1/?accelerator=AMD+Instinct+MI355X")
    assert "<select" not in re.search(r'id="list-accelerator".*?</fieldset>', html, re.S).group(0)
    accelerators = re.findall(
        r'<input type="checkbox" name="accelerator" value="([^"]+)"( checked)?>',
        html,
    )
    assert ("AMD Instinct MI355X", " checked") in accelerators
    assert ("family:NVIDIA H100", "") in accelerators  # a whole family, chosen with one click
    for name in ("category", "submitter", "processor", "framework"):
        assert f'<input type="checkbox" name="{name}" value=' in html


@pytest.mark.django_db
def test_power_results_only_and_energy_per_accelerator(client, v51):
    measured = make.system(v51, "Acme", "alpha", accelerator_count=8)
    make.result(measured, "retinanet", 10, energy_j=8_000_000, power_result=True)
    unscored = make.system(v51, "Acme", "gamma", accelerator_count=8)
    make.result(unscored, "retinanet", 12, power_result=True, energy_message="1 of the 3 runs…")
    make.result(make.system(v51, "Beta", "beta"), "retinanet", 5)
    html = page(client, "/r/training-v5.1/")
    assert "Power results only" in html
    rows = dict(table_rows(page(client, "/r/training-v5.1/?power_only=1&show=energy_per_acc")))
    assert set(rows) == {"alpha", "gamma"}  # beta measured no power
    assert rows["alpha"][0] == "1,000" and rows["gamma"][0] == ""  # 8 MJ over 8 accelerators
    chips = page(client, "/r/training-v5.1/?power_only=1")
    assert 'data-chip-name="power_only"' in chips and "Power results only: <b>yes</b>" in chips
    assert "No energy score: 1 of the 3 runs" in page(client, "/r/training-v5.1/")
    name = v51.benchmarks.get(key="retinanet").name
    header, *lines = csv.reader(io.StringIO(page(client, "/r/training-v5.1/?format=csv")))
    column = header.index(f"{name} energy (kJ)")  # the header names its unit
    assert sorted(line[column] for line in lines) == ["", "", "8000.0"]


@pytest.mark.django_db
def test_the_choosers_default_columns_leave_no_cols_in_the_address(client, catalogue):
    # The page's script sends the chooser's boxes with every change; where the round has no cloud
    # scale and no power, the default boxes are the default view, and its address stays clean.
    query = "cols=none&cols=availability&cols=nodes&cols=accelerator&cols=software&q=acme"
    html = page(client, f"/r/training-v5.1/?{query}&partial=1")
    assert 'data-query="q=acme"' in html
