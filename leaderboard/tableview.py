"""The round table for one view: its state, kept whole in the query string (filters, sort, units).

`TableView.from_query(querydict, data)` reads and validates the state (unknown values are
dropped, not errors, so an old permalink still opens); `view.rows(data)` filters and sorts
the round's rows; `sections(rows, view.group)` splits them by division into one table each (and by
availability too where the view asks, `group=availability`, MLCommons' way); `view.query()`
writes the canonical query string (defaults left out), which is also the cache key.
The same state drives the page, its charts and its exports. `shown_table(view, data)` lays
the rows out as the page shows them (numbers formatted, tooltips written: text, no HTML) for
templates/leaderboard/_round_table.html.
"""

from dataclasses import dataclass, field, replace
from typing import TypedDict
from urllib.parse import urlencode

from django import forms

from . import accelerators, frameworks, textsearch
from .models import Category, Division
from .organisations import name_key, organisation_of
from .tables import CATEGORIES, DIVISIONS, Bench, RoundData, Row

SHOW_CHOICES = [
    ("speedup", "speedup"),
    ("minutes", "minutes"),
    ("acc_hours", "per accelerator (acc-hours)"),
    ("energy", "energy (kJ)"),
    ("energy_per_acc", "energy per accelerator (kJ)"),
]
ENERGY_SHOWS = ("energy", "energy_per_acc")
# The descriptive columns, in the order shown after the benchmark columns; the column chooser
# (`cols` in the query string) shows or hides them. The system's name (with its submitter) and
# the benchmark columns are always shown.
COLUMNS = {
    "public_id": "Public id",
    "availability": "Availability",
    "submitter": "Submitter",
    "nodes": "Nodes",
    "processor": "Processor",
    "accelerator": "Accelerator",
    "software": "Software",
    "links": "Logs and description",
    "cloud_scale": "Cloud scale",
    "power": "Avg. power",
}
DEFAULT_COLUMNS = ("availability", "nodes", "accelerator", "software", "cloud_scale", "power")
# How the rows are split into tables: by default one table per division, sorted across availability
# categories (the fastest result heads it whatever its category); MLCommons' way is a choice.
# The availability words are long ("Research, development or internal", on three lines): the table's
# column shows these until a cell is focused, tapped or hovered, so that a round of many benchmarks fits.
SHORT_AVAILABILITY = {"cloud": "cloud", "onprem": "on-premise", "research": "RDI"}

GROUPS = {"": "One table", "availability": "By availability (MLCommons' way)"}
NO_COLUMNS = "none"  # `cols=none`: every descriptive column hidden (an empty list is the default)
FAMILY = "family:"  # a filter value for every name of a family (accelerators.toml, frameworks.toml)
TEXT_SORTS = {
    "submitter": lambda r: r.submitter.lower(),
    "system": lambda r: r.name.lower(),
    "processor": lambda r: (r.processor_model.lower(), r.processor_count or 0),
    "accelerator": lambda r: (r.accelerator_count or 0, r.accelerator_model.lower()),
    "software": lambda r: r.framework.lower(),
}
NUMBER_SORTS = {
    "nodes": lambda r: r.nodes,
    "public_id": lambda r: (r.public_ids or [None])[0],
    "cloud_scale": lambda r: r.cloud_scale,
    "power": lambda r: r.avg_power_kw,
    "availability": lambda r: CATEGORIES.index(r.category),  # cloud, on-premise, preview, research
}
MAX_LIST = 20  # values of one repeated parameter that are read


def _distinct(values):
    counts = {}
    for v in values:
        if v:
            counts[v] = counts.get(v, 0) + 1
    return sorted(counts.items(), key=lambda kv: kv[0].lower())


class TableForm(forms.Form):
    """The filter controls, with choices (and their counts) from the round's rows."""

    division = forms.ChoiceField(required=False, label="Division")
    category = forms.MultipleChoiceField(required=False, label="Availability")
    submitter = forms.MultipleChoiceField(required=False, label="Submitter")
    accelerator = forms.MultipleChoiceField(required=False, label="Accelerator")
    processor = forms.MultipleChoiceField(required=False, label="Processor")
    framework = forms.MultipleChoiceField(required=False, label="Framework")
    benchmark = forms.ChoiceField(required=False, label="Benchmark")
    acc_min = forms.IntegerField(required=False, min_value=0, label="Accelerators from")
    acc_max = forms.IntegerField(required=False, min_value=0, label="Accelerators to")
    q = forms.CharField(required=False, max_length=100, label="Search", strip=True)
    power_only = forms.BooleanField(required=False, label="Power results only")
    show = forms.ChoiceField(required=False, label="Show", widget=forms.RadioSelect)
    sort = forms.ChoiceField(required=False, label="Sort by")
    chart = forms.ChoiceField(required=False, label="Scaling chart benchmark")
    cols = forms.MultipleChoiceField(required=False, label="Columns")
    group = forms.ChoiceField(required=False, label="Tables", choices=list(GROUPS.items()))

    def __init__(self, data, round_data: RoundData, **kwargs):
        super().__init__(data, **kwargs)
        rows = round_data.rows
        any_ = [("", "Any")]
        present = {(r.division, r.category) for r in rows}
        self.fields["division"].choices = any_ + [
            (d.value, d.label) for d in Division if any(p[0] == d.value for p in present)
        ]
        self.fields["category"].choices = [
            (c.value, f"{c.label} ({sum(1 for r in rows if r.category == c.value)})")
            for c in Category
            if any(p[1] == c.value for p in present)
        ]
        # The submitter filter selects organisations: one choice for all the names one submitted under.
        for name, attr in (
            ("submitter", "organisation"),
            ("accelerator", "accelerator_model"),
            ("processor", "processor_model"),
            ("framework", "framework"),
        ):
            choices = [
                (value, f"{value} ({count})")
                for value, count in _distinct(getattr(r, attr) for r in rows)
            ]
            if name == "accelerator":
                choices = _grouped(
                    choices, rows, attr, accelerators.family_table(), _accelerator_in
                )
            elif name == "framework":
                choices = _grouped(choices, rows, attr, frameworks.family_table(), _framework_in)
            self.fields[name].choices = choices
            self.fields[name].widget.attrs["size"] = min(6, max(2, len(choices)))
        self.fields["benchmark"].choices = any_ + [(b.key, b.name) for b in round_data.benchmarks]
        self.fields["chart"].choices = [("", "The one with the most results")] + [
            (b.key, b.name) for b in round_data.benchmarks
        ]
        shows = [
            c
            for c in SHOW_CHOICES
            if c[0] in ("minutes", "acc_hours")
            or (c[0] == "speedup" and round_data.has_reference)
            or (c[0] in ENERGY_SHOWS and round_data.has_power)
        ]
        self.fields["show"].choices = shows
        sorts = [("", "Submitter, then system")] + [
            (k, k.replace("_", " ").capitalize()) for k in TEXT_SORTS
        ]
        sorts += [("availability", "Availability"), ("nodes", "Nodes"), ("public_id", "Public id")]
        if round_data.has_cloud_scale:
            sorts.append(("cloud_scale", "Cloud scale"))
        if round_data.has_energy:
            sorts.append(("power", "Average power"))
        sorts += [(f"b.{b.key}", b.name) for b in round_data.benchmarks]
        self.fields["sort"].choices = sorts + [
            (f"-{k}", f"{label} (reversed)") for k, label in sorts if k
        ]
        self.fields["cols"].choices = [*COLUMNS.items(), (NO_COLUMNS, "none")]


def _is_power(cell) -> bool:
    return cell.power_result or cell.energy_j is not None


def _accelerator_in(row: Row, family: str) -> bool:
    return row.accelerator_family == family


def _framework_in(row: Row, family: str) -> bool:
    return family in row.framework_families


def _grouped(choices, rows, attr, families, belongs) -> list:
    """The exact names grouped under their family (an <optgroup> each), led by an option for the
    whole family: every name it covers, also names that arrive later. Names in no family last.
    A name may be under several software families ("NeMo, PyTorch")."""
    row_of = {getattr(r, attr): r for r in rows}
    out, placed = [], set()
    for family in families:
        count = sum(1 for r in rows if belongs(r, family.name))
        if not count:
            continue
        members = [c for c in choices if c[0] not in placed and belongs(row_of[c[0]], family.name)]
        group = [(f"{FAMILY}{family.name}", f"All {family.name} ({count})"), *members]
        out.append((family.name, group))
        placed |= {c[0] for c in members}
    rest = [c for c in choices if c[0] not in placed]
    if rest:
        out.append(("Other", rest))
    return out


@dataclass
class TableView:
    show: str
    division: str = ""
    category: list[str] = field(default_factory=list)  # availability categories
    submitter: list[str] = field(default_factory=list)
    accelerator: list[str] = field(default_factory=list)
    processor: list[str] = field(default_factory=list)
    framework: list[str] = field(default_factory=list)
    benchmark: str = ""
    acc_min: int | None = None
    acc_max: int | None = None
    q: str = ""
    power_only: bool = False  # power results only (MLPerf Power)
    sort: str = ""  # a column key, '-' in front for the reverse order
    chart: str = ""
    cols: list[str] | None = None  # the descriptive columns chosen; None: DEFAULT_COLUMNS
    group: str = ""  # a GROUPS key: "" one table per division, "availability" one per category too
    default_show: str = "minutes"

    FILTERS = (
        "division",
        "category",
        "submitter",
        "accelerator",
        "processor",
        "framework",
        "benchmark",
        "acc_min",
        "acc_max",
        "q",
        "power_only",
    )

    @classmethod
    def from_query(cls, querydict, data: RoundData) -> tuple["TableView", TableForm]:
        # Minutes first in every round; speedup is a mode of its own (one unit per table), offered where
        # the round has reference times.
        default_show = "minutes"
        query = _clean_query(querydict)
        if query.get("submitter"):
            query["submitter"] = _organisations(query["submitter"], data)
        form = TableForm(query, data)
        form.is_valid()
        values = {}
        for name in form.fields:
            if name in form.cleaned_data:
                values[name] = form.cleaned_data[name]
            elif isinstance(form.fields[name], forms.MultipleChoiceField):
                # Keep the valid values of a list with an unknown one in it.
                field = form.fields[name]
                values[name] = [v for v in query.get(name, []) if field.valid_value(v)]
        # The chooser always sends `cols` (a hidden "none" at least): present means chosen.
        cols = None
        if "cols" in query:
            cols = [c for c in query["cols"] if c in COLUMNS]
            # The chooser offers only the round's columns: its default is the default there.
            available = set(cls.columns_available(data))
            if available.intersection(cols) == available.intersection(DEFAULT_COLUMNS):
                cols = None
        view = cls(
            show=values.get("show") or default_show,
            default_show=default_show,
            cols=cols,
            **{
                k: v for k, v in values.items() if k not in ("show", "cols") and v not in (None, "")
            },
        )
        if view.acc_min is not None and view.acc_max is not None and view.acc_min > view.acc_max:
            view.acc_min, view.acc_max = view.acc_max, view.acc_min
        form = TableForm(view.as_form_data(), data)  # the controls show the state as understood
        return view, form

    def as_form_data(self) -> dict:
        data = {}
        for name in (*self.FILTERS, "sort", "chart", "group"):
            value = getattr(self, name)
            if value not in (None, "", [], False):
                data[name] = value
        data["show"] = self.show
        data["cols"] = self.columns_chosen
        return data

    @property
    def columns_chosen(self) -> list[str]:
        return list(DEFAULT_COLUMNS if self.cols is None else self.cols)

    def columns(self, data: RoundData) -> list[str]:
        """The descriptive columns shown, in COLUMNS order; cloud scale and power only where the
        round has them."""
        chosen = set(self.columns_chosen)
        return [c for c in self.columns_available(data) if c in chosen]

    @staticmethod
    def columns_available(data: RoundData) -> list[str]:
        available = {"cloud_scale": data.has_cloud_scale, "power": data.has_energy}
        return [c for c in COLUMNS if available.get(c, True)]

    # --- the query string ---------------------------------------------------------------
    def params(self) -> list[tuple[str, str]]:
        """The state as query parameters in a fixed order, defaults left out."""
        out = []
        for name in (*self.FILTERS, "show", "sort", "chart", "cols", "group"):
            value = getattr(self, name)
            if name == "show" and value == self.default_show:
                continue
            if name == "cols" and value is not None:
                out += [("cols", c) for c in sorted(value) or [NO_COLUMNS]]
            elif isinstance(value, list):
                out += [(name, v) for v in sorted(value)]
            elif value is True:
                out.append((name, "1"))
            elif value not in (None, "", False):
                out.append((name, str(value)))
        return out

    def query(self, **changes) -> str:
        """The canonical query string of this view, or of this view with `changes`."""
        view = replace(self, **changes) if changes else self
        return urlencode(view.params())

    @property
    def filtered(self) -> bool:
        return any(getattr(self, name) not in (None, "", [], False) for name in self.FILTERS)

    def chips(self, data: RoundData) -> list[dict]:
        """The filters in force, one per value, as the page shows them above the table: what it
        filters (label, text) and the query string of this view without it (qs)."""
        benches = {b.key: b.name for b in data.benchmarks}
        out = []
        for name in self.FILTERS:
            value = getattr(self, name)
            values = value if isinstance(value, list) else [value]
            for v in values:
                if v in (None, "", False):
                    continue
                if isinstance(value, list):
                    rest = {name: [x for x in value if x != v]}
                elif isinstance(value, bool):
                    rest = {name: False}
                else:
                    rest = {name: None if name in ("acc_min", "acc_max") else ""}
                out.append(
                    {
                        "name": name,
                        "value": str(v),
                        "label": CHIP_LABELS[name],
                        "text": _chip_text(name, v, benches),
                        "qs": self.query(**rest),
                    }
                )
        return out

    def unfiltered_query(self) -> str:
        """This view's query string without any filter: its units, sort, columns and tables kept."""
        return self.query(
            **{n: [] if isinstance(getattr(self, n), list) else None for n in self.FILTERS}
        )

    # --- rows --------------------------------------------------------------------------
    def benchmarks(self, data: RoundData) -> list[Bench]:
        """The benchmark columns shown: all of the round's, or the one filtered on; as speedups, only those
        with a reference time (a column of minutes beside them would mix units in one table)."""
        shown = list(data.benchmarks)
        if self.benchmark:
            shown = [b for b in shown if b.key == self.benchmark]
        if self.show == "speedup":
            shown = [b for b in shown if b.has_reference]
        return shown

    def shows_speedup(self, bench: Bench) -> bool:
        return self.show == "speedup" and bench.has_reference

    def cell_value(self, row: Row, bench: Bench):
        """The number a benchmark cell shows in this view (None: blank)."""
        cell = row.cells.get(bench.key)
        if cell is None:
            return None
        if self.show == "energy":
            return cell.energy_kj
        if self.show == "energy_per_acc":
            return row.energy_per_accelerator_kj(cell)
        if self.show == "acc_hours":
            if cell.minutes is None or not row.accelerator_count:
                return None
            return cell.minutes / 60 * row.accelerator_count
        if self.shows_speedup(bench):
            return (
                cell.speedup
            )  # none without a score: blank, never minutes in a column of speedups
        return cell.minutes

    def rows(self, data: RoundData) -> list[Row]:
        q = self.q.lower()
        q_words = textsearch.words(q)
        acc = {a for a in self.accelerator if not a.startswith(FAMILY)}
        acc_families = {a[len(FAMILY) :] for a in self.accelerator if a.startswith(FAMILY)}
        fw = {f for f in self.framework if not f.startswith(FAMILY)}
        fw_families = {f[len(FAMILY) :] for f in self.framework if f.startswith(FAMILY)}
        kept = []
        for row in data.rows:
            if self.division and row.division != self.division:
                continue
            if self.category and row.category not in self.category:
                continue
            if self.submitter and row.organisation not in self.submitter:
                continue
            if (acc or acc_families) and not (
                row.accelerator_model in acc or row.accelerator_family in acc_families
            ):
                continue
            if self.processor and row.processor_model not in self.processor:
                continue
            if (fw or fw_families) and not (
                row.framework in fw or fw_families.intersection(row.framework_families)
            ):
                continue
            if self.benchmark and self.benchmark not in row.cells:
                continue
            if self.power_only and not (
                _is_power(row.cells[self.benchmark]) if self.benchmark else row.has_power
            ):
                continue
            count = row.accelerator_count or 0
            if self.acc_min is not None and count < self.acc_min:
                continue
            if self.acc_max is not None and count > self.acc_max:
                continue
            if q and not all(word in row.search_text for word in q_words):
                continue
            kept.append(row)
        return self.sorted(kept, data)

    def sort_column(self) -> tuple[str, bool]:
        """(column, descending) of the sort in force; ('', False) for the default order."""
        return self.sort.lstrip("-"), self.sort.startswith("-")

    def best_first_descending(self, column: str, data: RoundData) -> bool:
        """Whether a column's natural first click sorts high to low (speedups do, times do not)."""
        if column.startswith("b."):
            bench = next((b for b in data.benchmarks if b.key == column[2:]), None)
            return bench is not None and self.shows_speedup(bench)
        return False

    def sorted(self, rows: list[Row], data: RoundData) -> list[Row]:
        column, descending = self.sort_column()
        if not column:
            return rows
        if column in TEXT_SORTS:
            return sorted(rows, key=TEXT_SORTS[column], reverse=descending)
        if column in NUMBER_SORTS:
            value = NUMBER_SORTS[column]
        elif column.startswith("b.") and any(b.key == column[2:] for b in data.benchmarks):
            bench = next(b for b in data.benchmarks if b.key == column[2:])
            value = lambda r: self.cell_value(r, bench)  # noqa: E731
        else:
            return rows
        present = [r for r in rows if value(r) is not None]
        blank = [r for r in rows if value(r) is None]  # blanks go last in either direction
        return sorted(present, key=value, reverse=descending) + blank

    def sort_link(self, column: str, data: RoundData) -> tuple[str, str]:
        """(query string, aria-sort) for a column header: a click sorts by it, a second click reverses."""
        current, descending = self.sort_column()
        if current == column:
            new = column if descending else f"-{column}"
            state = "descending" if descending else "ascending"
        else:
            new = f"-{column}" if self.best_first_descending(column, data) else column
            state = "none"
        return self.query(sort=new), state


CHIP_LABELS = {
    "division": "Division",
    "category": "Availability",
    "submitter": "Submitter",
    "accelerator": "Accelerator",
    "processor": "Processor",
    "framework": "Software",
    "benchmark": "Benchmark",
    "acc_min": "Accelerators at least",
    "acc_max": "Accelerators at most",
    "q": "Search",
    "power_only": "Power results only",
}


def _chip_text(name: str, value, benches: dict[str, str]) -> str:
    if name == "division":
        return Division(value).label
    if name == "category":
        return Category(value).label
    if name == "benchmark":
        return benches.get(value, value)
    if value is True:
        return "yes"
    if isinstance(value, str) and value.startswith(FAMILY):
        return f"all {value.removeprefix(FAMILY)}"
    return f"“{value}”" if name == "q" else str(value)


def _organisations(names: list[str], data: RoundData) -> list[str]:
    """The organisations of the round that the names given belong to (any alias, any case), in order."""
    present = {name_key(r.organisation): r.organisation for r in data.rows}
    return list(dict.fromkeys(present.get(name_key(organisation_of(n)), n) for n in names))


def _clean_query(querydict) -> dict:
    """Only the parameters the form knows, lists cut to a sane length."""
    data = {}
    for name in TableForm.base_fields:
        values = querydict.getlist(name)[:MAX_LIST]
        if not values:
            continue
        if isinstance(TableForm.base_fields[name], forms.MultipleChoiceField):
            data[name] = [v for v in values if v]
        else:
            data[name] = values[0]
    return data


@dataclass
class Section:
    division: str
    category: str
    rows: list[Row]

    @property
    def title(self):
        division = f"{Division(self.division).label} division"
        return f"{division}, {Category(self.category).label.lower()}" if self.category else division

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


class ShownRow(TypedDict):
    slug: str
    anchor: str  # the row's id in the page: search results on the home page link to it
    submitter: str
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


SORTABLE_COLUMNS = (
    "availability",
    "submitter",
    "system",
    "public_id",
    "nodes",
    "processor",
    "accelerator",
    "software",
    "cloud_scale",
    "power",
)
UNITS = {"energy": "kJ", "energy_per_acc": "kJ/acc.", "acc_hours": "acc-h", "minutes": "min"}


def shown_table(view: TableView, data: RoundData) -> ShownTable:
    rows = view.rows(data)
    # Benchmark columns with no result in this view are left out: they would be blank.
    benches = [b for b in view.benchmarks(data) if any(b.key in r.cells for r in rows)]
    headers = []
    for bench in benches:
        qs, state = view.sort_link(f"b.{bench.key}", data)
        unit = "×" if view.shows_speedup(bench) else UNITS.get(view.show, "min")
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


CONSONANTS = set("bcdfghjklmnpqrstvwxz")


def hyphenable(text: str) -> str:
    """Long words with a soft hyphen (U+00AD) between two consonants near their middle, so that a
    narrow benchmark header can break them ("Recommen-dation") instead of widening its column."""

    def split(word: str) -> str:
        if len(word) < 12 or not word.isalpha():  # "(DLRM-DCNv2)" stays whole
            return word
        middle = len(word) // 2
        for i in sorted(range(3, len(word) - 3), key=lambda i: abs(i - middle)):
            if word[i - 1].lower() in CONSONANTS and word[i].lower() in CONSONANTS:
                return word[:i] + "\u00ad" + word[i:]
        return word[:middle] + "\u00ad" + word[middle:]

    return " ".join(split(w) for w in text.split(" "))


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
        submitter=row.submitter,
        name=row.name,
        distinct=row.distinct,
        url=row.url,
        public_id=_id_range(row.public_ids),
        availability=Category(row.category).label,
        availability_short=SHORT_AVAILABILITY.get(row.category, ""),
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
        notes.append(f"Not scored: {cell.not_scored_because}")
    elif view.show == "acc_hours" and cell.minutes is not None:
        if row.accelerator_count:
            notes.append(f"{cell.minutes:,.2f} min × {row.accelerator_count} accelerators.")
        else:
            notes.append("No accelerator count: no accelerator-hours.")
    if cell.findings:
        notes.append(f"Findings: {cell.findings}.")
    if cell.energy_j is not None and view.show != "energy":
        notes.append(f"Energy to train: {cell.energy_kj:,.0f} kJ.")
    elif cell.power_result and cell.energy_j is None and not cell.not_scored_because:
        notes.append(f"No energy score: {cell.energy_message or 'see the result'}")
    return ShownCell(
        url=cell.url,
        text=text,
        title=" ".join(notes),
        findings=cell.findings,
        not_scored=bool(cell.not_scored_because),
    )


# --- the filter controls ------------------------------------------------------------------
CHECKLISTS = ("category", "submitter", "accelerator", "processor", "framework")


def checklists(view: TableView, form: TableForm) -> list[dict]:
    """The filters of several values as lists of checkboxes (several chosen with plain clicks), in
    groups where the form's choices have them (a family's names under it, led by the whole family):
    name, label, groups [(group label or '', [(value, label, checked)])] and their number of options."""
    out = []
    for name in CHECKLISTS:
        chosen = set(getattr(view, name))
        groups = []
        for value, label in form.fields[name].choices:
            if isinstance(label, (list, tuple)):  # an <optgroup>: (group label, its choices)
                groups.append((value, [(v, text, v in chosen) for v, text in label]))
            else:
                if not groups or groups[-1][0]:
                    groups.append(("", []))
                groups[-1][1].append((value, label, value in chosen))
        out.append(
            {
                "name": name,
                "label": form.fields[name].label,
                "groups": groups,
                "size": sum(len(options) for _, options in groups),
            }
        )
    return out
