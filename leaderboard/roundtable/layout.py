"""The rows of one view as the page lays them out: split into tables (`sections`), and each row and
cell as plain text, numbers formatted and tooltips written (`shown_table`), for htmlrows.py and
templates/leaderboard/_round_results.html.
"""

from dataclasses import dataclass
from typing import TypedDict

from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from ..models import Category, Division
from .hyphens import hyphenable
from .params import ENERGY_SHOWS, SORTABLE_COLUMNS, UNITS
from .rows import CATEGORIES, DIVISIONS, Bench, RoundData, Row, organisation_url
from .view import TableView

# The availability words are long ("Research, Development, or Internal (RDI)", on three lines): the table's
# column shows these until a cell is focused, tapped or hovered, so that a round of many benchmarks fits.
SHORT_AVAILABILITY = {"cloud": _("cloud"), "onprem": _("on-premise"), "research": "RDI"}


@dataclass
class Section:
    division: str
    category: str
    rows: list[Row]

    @property
    def title(self):
        division = gettext("%(division)s division") % {"division": Division(self.division).label}
        # MLCommons' words as written ("Research, Development, or Internal (RDI)"): not lower-cased
        if not self.category:
            return division
        return gettext("%(division)s: %(category)s") % {
            "division": division,
            "category": Category(self.category).label,
        }

    @property
    def anchor(self):
        return f"{self.division}-{self.category}" if self.category else self.division


def sections(rows: list[Row], group: str = "") -> list[Section]:
    """Group rows by division (closed and open results are not compared), and by availability
    category too for `group="availability"`, in the MLPerf order, keeping each group's row order."""
    grouped: dict[tuple, list[Row]] = {}
    by_category = group == "availability"
    for row in rows:
        grouped.setdefault((row.division, row.category if by_category else ""), []).append(row)
    order = sorted(
        grouped, key=lambda k: (DIVISIONS.index(k[0]), CATEGORIES.index(k[1]) if k[1] else 0)
    )
    return [Section(d, c, grouped[(d, c)]) for d, c in order]


# --- the table as the page shows it --------------------------------------------------------
# Every number is formatted and every tooltip written here, as plain text that the template
# escapes: a round has 400 systems × 10 benchmarks, and work per cell costs more in a
# template than here. Rows and cells are dicts (TypedDict) because the template engine looks
# a name up in a dict first and only then, after an exception, as an attribute.


class ShownCell(TypedDict):
    url: str
    text: str  # the number in this view's unit; '' when it has none
    title: str  # the tooltip: public id, why it has no score, findings, energy
    findings: str  # '' when clean
    not_scored: bool
    why: str  # why it has no score, in the cell's text (a phone has no hover); '' when scored


class ShownRow(TypedDict):
    slug: str
    anchor: str  # the row's id in the page: search results on the home page link to it
    submitter: str
    organisation_url: str  # its organisation's page: every result of it across rounds
    name: str
    distinct: str  # what tells it apart from rows of the same name ('' when its name is unique)
    url: str
    public_id: str  # its results' public ids, e.g. "5.1-0099–0100"
    availability: str  # in words, as MLCommons writes it
    availability_short: str  # what the table's column shows until focus, tap or hover
    nodes: str
    processor: str  # "2 × model", whole
    processor_short: (
        str  # '' where it fits its column, else what the column shows until focus, tap or hover
    )
    accelerator: str
    accelerator_short: str  # "72 × NVIDIA GB300": the family where the name has one
    software: str
    software_short: str
    cells: list[ShownCell | None]  # one per benchmark shown; None: no result
    cloud_scale: str  # '' where the system has no known cloud scale
    cloud_scale_note: str
    cloud_scale_unverified: bool
    power: str


@dataclass
class ShownTable:
    """One view of a round's table, ready for templates/leaderboard/_round_results.html."""

    rows: list[Row]  # filtered and sorted, as the charts take them
    benchmarks: list[Bench]  # those with a result in this view
    headers: list[dict]  # one per benchmark column: bench, qs (sort link), aria_sort, unit
    columns: dict[str, dict]  # the other sortable columns: qs, aria_sort
    shown_columns: list[str]  # the descriptive columns shown (COLUMNS keys)
    sections: list[tuple[Section, list[ShownRow]]]
    show_cloud_scale: bool
    show_power: bool
    chart_bench: Bench | None  # the benchmark of the scaling chart

    @property
    def results_shown(self) -> int:
        """The results in the columns shown (a benchmark filter shows one column of each row)."""
        keys = [b.key for b in self.benchmarks]
        return sum(1 for r in self.rows for k in keys if k in r.cells)


def shown_table(view: TableView, data: RoundData) -> ShownTable:
    rows = view.rows(data)
    # Benchmark columns with no result in this view are left out: they would be blank.
    benches = [b for b in view.benchmarks(data) if any(b.key in r.cells for r in rows)]
    headers = []
    for bench in benches:
        qs, state = view.sort_link(f"b.{bench.key}", data)
        unit = "×" if view.shows_speedup(bench) else str(UNITS.get(view.show, UNITS["minutes"]))
        headers.append(
            {
                "bench": bench,
                "label": hyphenable(bench.name),
                "qs": qs,
                "aria_sort": state,
                "unit": unit,
            }
        )
    columns = {}
    for column in SORTABLE_COLUMNS:
        qs, state = view.sort_link(column, data)
        columns[column] = {"qs": qs, "aria_sort": state}
    # The chart's benchmark: the one asked for, else the one with the most scored results in this view (the
    # first of those in the round's order): a scaling chart of two points says little.
    scored = {
        b.key: sum(1 for r in rows if (c := r.cells.get(b.key)) and c.score_s) for b in benches
    }
    chart_bench = next((b for b in benches if b.key == view.chart), None) or max(
        benches, key=lambda b: scored[b.key], default=None
    )
    columns_of = [(bench, view.shows_speedup(bench)) for bench in benches]
    shown_columns = view.columns(data)
    return ShownTable(
        rows=rows,
        benchmarks=benches,
        headers=headers,
        columns=columns,
        shown_columns=shown_columns,
        sections=[
            (s, [_shown_row(view, row, columns_of) for row in s.rows])
            for s in sections(rows, view.group)
        ],
        show_cloud_scale="cloud_scale" in shown_columns,
        show_power="power" in shown_columns,
        chart_bench=chart_bench,
    )


LONG = 17  # characters past which a descriptive cell shows a short form (portal.css .abbr)


def _short(text: str, short: str = "") -> str:
    """'' where `text` fits, else `short` (or `text` cut) for the column until it is expanded."""
    if len(text) <= LONG:
        return ""
    return short if short and len(short) < len(text) else text[: LONG - 1].rstrip() + "…"


def _counted(count: int | None, text: str) -> str:
    return f"{count} × {text}" if count else text


def _id_range(ids: list[str]) -> str:
    """'5.1-0099–0100' for a run of consecutive ids of one round, else the ids joined."""
    if len(ids) < 2:
        return "".join(ids)
    prefix, _, first = ids[0].rpartition("-")
    numbers = [i.rpartition("-") for i in ids]
    if all(p == prefix and n.isdigit() for p, _, n in numbers):
        values = [int(n) for _, _, n in numbers]
        if values == list(range(values[0], values[0] + len(values))):
            return f"{ids[0]}–{numbers[-1][2]}"
    return ", ".join(ids)


def _shown_row(view: TableView, row: Row, columns_of: list[tuple[Bench, bool]]) -> ShownRow:
    processor = _counted(row.processor_count, row.processor_model)
    accelerator = _counted(row.accelerator_count, row.accelerator_model)
    cloud_scale = "" if row.cloud_scale is None else f"{row.cloud_scale:.2f}"
    power = row.avg_power_kw
    return ShownRow(
        slug=row.slug,
        anchor=row_anchor(row.submitter, row.key) + (f"--{row.apart[:8]}" if row.apart else ""),
        submitter=row.submitter_shown,
        organisation_url=organisation_url(row.organisation),
        name=row.name,
        distinct=row.distinct,
        url=row.url,
        public_id=_id_range(row.public_ids),
        availability=str(Category(row.category).label),
        availability_short=str(SHORT_AVAILABILITY.get(row.category, "")),
        nodes="" if row.nodes is None else str(row.nodes),
        processor=processor,
        processor_short=_short(processor),
        accelerator=accelerator,
        accelerator_short=_short(
            accelerator,
            _counted(row.accelerator_count, row.accelerator_family)
            if row.accelerator_family
            else "",
        ),
        software=row.framework,
        software_short=_short(row.framework),
        cells=[_shown_cell(view, row, bench, speedup) for bench, speedup in columns_of],
        cloud_scale=cloud_scale,
        cloud_scale_note=row.cloud_scale_note,
        cloud_scale_unverified=row.cloud_scale_unverified,
        power="" if power is None else f"{power:.1f}",
    )


def row_anchor(submitter: str, key: str) -> str:
    """A row's id in the round page (stable across publications: no database id)."""
    return "row-" + "".join(
        ch if ch.isalnum() or ch in "-_." else "_" for ch in f"{submitter}--{key}"
    )


def _shown_cell(view: TableView, row: Row, bench: Bench, speedup: bool) -> ShownCell | None:
    """One benchmark's cell; `speedup`: whether this view shows the benchmark as a speedup."""
    cell = row.cells.get(bench.key)
    if cell is None:
        return None
    value = view.cell_value(row, bench)
    if value is None:
        text = ""
    elif speedup and cell.speedup:
        text = f"{value:,.2f}×"
    elif view.show == "acc_hours":
        text = f"{value:,.1f}" if value >= 100 else f"{value:,.2f}"
    elif view.show in ENERGY_SHOWS:
        text = f"{value:,.0f}" if value >= 100 else f"{value:,.1f}"
    else:
        text = f"{value:,.2f}"
    notes = [f"{cell.public_id}."] if cell.public_id else []
    if cell.not_scored_because:
        notes.append(gettext("Not scored: %(why)s") % {"why": cell.not_scored_because})
    elif view.show == "acc_hours" and cell.minutes is not None:
        if row.accelerator_count:
            notes.append(
                gettext("%(minutes)s min × %(count)s accelerators.")
                % {"minutes": f"{cell.minutes:,.2f}", "count": row.accelerator_count}
            )
        else:
            notes.append(gettext("No accelerator count: no accelerator-hours."))
    if cell.findings:
        notes.append(gettext("Findings: %(findings)s.") % {"findings": cell.findings})
    if cell.energy_j is not None and view.show != "energy":
        notes.append(
            gettext("Energy to train: %(energy)s kJ.") % {"energy": f"{cell.energy_kj:,.0f}"}
        )
    elif cell.power_result and cell.energy_j is None and not cell.not_scored_because:
        notes.append(
            gettext("No energy score: %(why)s")
            % {"why": cell.energy_message or gettext("see the result")}
        )
    return ShownCell(
        url=cell.url,
        text=text,
        title=" ".join(notes),
        findings=cell.findings,
        not_scored=bool(cell.not_scored_because),
        why=_shortened(cell.not_scored_because),
    )


def _shortened(reason: str, limit: int = 90) -> str:
    """A reason short enough for a cell (the result's page and the tooltip say it whole)."""
    return reason if len(reason) <= limit else reason[: limit - 1].rstrip() + "…"
