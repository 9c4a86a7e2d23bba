"""The round table's view state without a database: per-accelerator mode, the column chooser in
the query string, benchmark columns left out where the view has no result, accelerator and
software families in the filters, and rows of one name told apart."""

from django.http import QueryDict

from leaderboard.catalogue import frameworks
from leaderboard.catalogue.accelerators import family_of
from leaderboard.roundtable.form import TableForm
from leaderboard.roundtable.layout import shown_table
from leaderboard.roundtable.params import DEFAULT_COLUMNS
from leaderboard.roundtable.rows import Bench, Cell, RoundData, Row, tell_apart
from leaderboard.roundtable.view import TableView

BENCHES = [
    Bench("llama31_405b", "LLM pretraining (Llama 3.1 405B)", None, 5.6, False),
    Bench("retinanet", "Object detection (RetinaNet)", None, 0.34, True),
]


def row(key, name, accelerators, accelerator="NVIDIA Blackwell GPU (GB200)", nodes=None, **cells):
    r = Row(
        system_id=len(key),
        submitter="NVIDIA",
        key=key,
        name=name,
        url=f"/r/x/NVIDIA/{key}/",
        division="closed",
        category="onprem",
        processor_model="Neoverse-V2",
        processor_count=None,
        accelerator_model=accelerator,
        accelerator_count=accelerators,
        nodes=nodes,
        framework=cells.pop("framework", "NVIDIA NeMo Framework Release 25.09"),
        accelerator_family=family_of(accelerator) or "",
    )
    r.framework_families = frameworks.families_of(r.framework)
    for bench, minutes in cells.items():
        r.cells[bench] = Cell(1, f"{r.url}{bench}/", minutes * 60, None, None, 3, "")
    return r


def data(*rows):
    return RoundData("x", BENCHES, list(rows))


def view_of(query, d):
    return TableView.from_query(QueryDict(query), d)[0]


def test_per_accelerator_mode_shows_accelerator_hours_and_says_how():
    d = data(row("big", "Big", 512, retinanet=3.0), row("small", "Small", 8, retinanet=60.0))
    view = view_of("show=acc_hours", d)
    table = shown_table(view, d)
    assert [h["unit"] for h in table.headers] == ["acc-h"]
    cells = {r["slug"]: r["cells"][0] for _, rows in table.sections for r in rows}
    assert cells["NVIDIA/big"]["text"] == "25.60"  # 3 min × 512 ÷ 60
    assert cells["NVIDIA/small"]["text"] == "8.00"  # the 8-GPU system spends less
    assert "3.00 min × 512 accelerators." in cells["NVIDIA/big"]["title"]
    assert view.query() == "show=acc_hours"
    by = view_of("show=acc_hours&sort=b.retinanet", d)
    assert [r.key for r in by.rows(d)] == ["small", "big"]


def test_a_system_without_an_accelerator_count_has_no_accelerator_hours():
    d = data(row("cpu", "CPU only", None, accelerator="", retinanet=30.0))
    [(_, [r])] = shown_table(view_of("show=acc_hours", d), d).sections
    assert r["cells"][0]["text"] == "" and "No accelerator count" in r["cells"][0]["title"]


def test_the_column_chooser_lives_in_the_query_string_with_defaults_left_out():
    d = data(row("a", "A", 8, retinanet=1.0))
    assert view_of("", d).columns_chosen == list(DEFAULT_COLUMNS)
    # What the form sends when nothing was changed: the hidden "none" and the defaults.
    same = "&".join(["cols=none", *(f"cols={c}" for c in DEFAULT_COLUMNS)])
    assert view_of(same, d).query() == ""
    chosen = view_of("cols=none&cols=processor&cols=public_id&cols=bogus", d)
    assert chosen.query() == "cols=processor&cols=public_id"
    assert chosen.columns(d) == ["public_id", "processor"]  # in the table's order
    nothing = view_of("cols=none", d)
    assert nothing.query() == "cols=none" and nothing.columns(d) == []
    assert view_of(nothing.query(), d).columns(d) == []  # the permalink reopens the same view
    # Cloud scale and power only where the round has them, whatever was asked.
    assert "cloud_scale" not in view_of("cols=cloud_scale&cols=nodes", d).columns(d)


def test_benchmark_columns_without_a_result_in_the_view_are_left_out():
    d = data(row("a", "A", 8, retinanet=1.0), row("b", "B", 72, llama31_405b=20.0))
    assert [b.key for b in shown_table(view_of("", d), d).benchmarks] == [
        "llama31_405b",
        "retinanet",
    ]
    assert [b.key for b in shown_table(view_of("acc_max=8", d), d).benchmarks] == ["retinanet"]


def test_a_family_filter_takes_every_name_of_the_family_also_a_new_one():
    d = data(
        row("gb", "GB", 72, retinanet=1.0),
        row("b2", "B2", 8, accelerator="NVIDIA Blackwell GPU (B200-SXM-180GB)", retinanet=2.0),
        # A name no round had, which the family's pattern still places:
        row("new", "New", 4, accelerator="NVIDIA GB200 NVL4 192GB", retinanet=3.0),
    )
    assert [r.key for r in view_of("accelerator=family:NVIDIA GB200", d).rows(d)] == ["gb", "new"]
    exact = view_of("accelerator=NVIDIA Blackwell GPU (B200-SXM-180GB)", d)
    assert [r.key for r in exact.rows(d)] == ["b2"]
    form = TableForm(None, d)
    groups = dict(form.fields["accelerator"].choices)
    assert groups["NVIDIA GB200"][0] == ("family:NVIDIA GB200", "All NVIDIA GB200")
    assert ("NVIDIA GB200 NVL4 192GB", "NVIDIA GB200 NVL4 192GB") in groups["NVIDIA GB200"]
    assert form.counts["accelerator"]["family:NVIDIA GB200"] == 2
    assert form.counts["accelerator"]["NVIDIA GB200 NVL4 192GB"] == 1
    # Under another filter, a family counts only what that filter keeps.
    view = view_of("q=new", d)
    assert TableForm(None, d, counted_under=view).counts["accelerator"]["family:NVIDIA GB200"] == 1


def test_a_software_family_takes_every_system_whose_software_names_it():
    d = data(
        row("nemo", "N", 8, retinanet=1.0),
        row(
            "mix", "M", 8, framework="PyTorch, NeMo, HugeCTR, DGL NVIDIA Release 24.09", retinanet=1
        ),
        row("jax", "J", 8, framework="JAX 0.4.30", retinanet=1.0),
    )
    assert [r.key for r in view_of("framework=family:NeMo", d).rows(d)] == ["nemo", "mix"]
    assert [r.key for r in view_of("framework=family:DGL", d).rows(d)] == ["mix"]
    assert [r.key for r in view_of("framework=family:JAX", d).rows(d)] == ["jax"]


def test_every_framework_name_listed_in_the_data_file_matches_its_family():
    for family in frameworks.family_table():
        for name in family.names:
            assert family.name in frameworks.families_of(name), (family.name, name)


def test_rows_of_one_name_show_what_differs():
    rows = [
        row("tyche_ngpu8_dgl", "Tyche (1x NVIDIA GB200 NVL72)", 8, nodes=2),
        row("tyche_ngpu8_nemo", "Tyche (1x NVIDIA GB200 NVL72)", 8, nodes=2),
        row("tyche_ngpu72_nemo", "Tyche (1x NVIDIA GB200 NVL72)", 72, nodes=18),
        row("cisco_1", "UCS C885A", 8, nodes=1),
        row("cisco_2", "UCS C885A", 16, nodes=2),
        row("alone", "Alone", 8, nodes=1),
    ]
    tell_apart(rows)
    distinct = {r.key: r.distinct for r in rows}
    assert distinct == {
        "tyche_ngpu8_dgl": "8 accelerators · tyche_ngpu8_dgl",
        "tyche_ngpu8_nemo": "8 accelerators · tyche_ngpu8_nemo",
        "tyche_ngpu72_nemo": "72 accelerators",
        "cisco_1": "8 accelerators",
        "cisco_2": "16 accelerators",
        "alone": "",
    }


def test_one_benchmark_shown_without_a_sort_is_sorted_fastest_first():
    """On a phone the benchmark columns past the first are a swipe away: a reader who picks one benchmark in
    the filters gets its fastest first, without a second choice in the sort menu."""
    d = data(
        row("slow", "Slow", 8, retinanet=30.0),
        row("none", "None", 8, llama31_405b=100.0),
        row("fast", "Fast", 8, retinanet=3.0),
    )
    view = view_of("benchmark=retinanet", d)
    assert view.sort == "b.retinanet"
    assert [r.key for r in view.sorted(d.rows, d)] == ["fast", "slow", "none"]
    # A sort asked for stands, and without a benchmark filter the default order stays.
    assert view_of("benchmark=retinanet&sort=-b.retinanet", d).sort == "-b.retinanet"
    assert view_of("", d).sort == ""
