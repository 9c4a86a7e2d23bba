"""The round table for one view: its state, kept whole in the query string (filters, sort, units).

`TableView.from_query(querydict, data)` reads and validates the state through the form (unknown values
are dropped, not errors, so an old permalink still opens); `view.rows(data)` filters and sorts the
round's rows; `view.query()` writes the canonical query string (defaults left out), which is also the
cache key; `view.chips(data)` names the filters in force. The same state drives the page, its charts and
its exports.
"""

from dataclasses import dataclass, field, replace
from urllib.parse import urlencode

from django import forms
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from ..catalogue.organisations import name_key, organisation_of
from ..models import Category, Division
from . import textsearch
from .form import TableForm
from .params import COLUMNS, DEFAULT_COLUMNS, FAMILY, MAX_LIST, NO_COLUMNS, NUMBER_SORTS, TEXT_SORTS
from .rows import Bench, RoundData, Row


def _is_power(cell) -> bool:
    return cell.power_result or cell.energy_j is not None


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
        # One benchmark shown and no sort asked for: its best first, the answer a reader of one column wants
        # (and on a phone, where the other columns are a swipe away, the way to a benchmark's fastest).
        if view.benchmark and not view.sort:
            column = f"b.{view.benchmark}"
            view.sort = f"-{column}" if view.best_first_descending(column, data) else column
        # The controls show the state as understood, each filter's counts under the other filters.
        form = TableForm(view.as_form_data(), data, counted_under=view)
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
        keep = self._matcher()
        return self.sorted([row for row in data.rows if keep(row)], data)

    def rows_but(self, data: RoundData, name: str) -> list[Row]:
        """The rows every filter but `name` keeps, unsorted: what a filter's counts count, so that they
        follow the other filters ("Dell (3)" among the H100 systems)."""
        keep = self._matcher(skip=name)
        return [row for row in data.rows if keep(row)]

    def _matcher(self, skip: str = ""):
        """A test of whether a row passes the filters in force, but the one named `skip`."""
        q = "" if skip == "q" else self.q.lower()
        q_words = textsearch.words(q)
        accelerator = [] if skip == "accelerator" else self.accelerator
        acc = {a for a in accelerator if not a.startswith(FAMILY)}
        acc_families = {a[len(FAMILY) :] for a in accelerator if a.startswith(FAMILY)}
        framework = [] if skip == "framework" else self.framework
        fw = {f for f in framework if not f.startswith(FAMILY)}
        fw_families = {f[len(FAMILY) :] for f in framework if f.startswith(FAMILY)}
        division = "" if skip == "division" else self.division
        category = [] if skip == "category" else self.category
        submitter = [] if skip == "submitter" else self.submitter
        processor = [] if skip == "processor" else self.processor

        def keep(row: Row) -> bool:
            if division and row.division != division:
                return False
            if category and row.category not in category:
                return False
            if submitter and row.organisation not in submitter:
                return False
            if (acc or acc_families) and not (
                row.accelerator_model in acc or row.accelerator_family in acc_families
            ):
                return False
            if processor and row.processor_model not in processor:
                return False
            if (fw or fw_families) and not (
                row.framework in fw or fw_families.intersection(row.framework_families)
            ):
                return False
            if self.benchmark and self.benchmark not in row.cells:
                return False
            if self.power_only and not (
                _is_power(row.cells[self.benchmark]) if self.benchmark else row.has_power
            ):
                return False
            count = row.accelerator_count or 0
            if self.acc_min is not None and count < self.acc_min:
                return False
            if self.acc_max is not None and count > self.acc_max:
                return False
            return not q or all(word in row.search_text for word in q_words)

        return keep

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
    "division": _("Division"),
    "category": _("Availability"),
    "submitter": _("Submitter"),
    "accelerator": _("Accelerator"),
    "processor": _("Processor"),
    "framework": _("Software"),
    "benchmark": _("Benchmark"),
    "acc_min": _("Accelerators at least"),
    "acc_max": _("Accelerators at most"),
    "q": _("Search"),
    "power_only": _("Power results only"),
}


def _chip_text(name: str, value, benches: dict[str, str]) -> str:
    if name == "division":
        return Division(value).label
    if name == "category":
        return Category(value).label
    if name == "benchmark":
        return benches.get(value, value)
    if value is True:
        return gettext("yes")
    if isinstance(value, str) and value.startswith(FAMILY):
        return gettext("all %(family)s") % {"family": value.removeprefix(FAMILY)}
    return gettext("“%(text)s”") % {"text": value} if name == "q" else str(value)


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
