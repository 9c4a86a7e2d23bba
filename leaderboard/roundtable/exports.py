"""Exports as pandas DataFrames written as CSV or JSON.

- `table_frame(view, data)`: the rows of a round table view (the page's URL with
  `format=csv|json`) in MLCommons' summary columns, the chooser's columns where the reader chose
  them, with public ids, links and notes. Its data is in English in every language of the site, as are
  its column names unless the reader asks for another language's (`headers=zh-hans`): scripts keep
  MLCommons' names.
- `runs_frame(result, runs)`: one result's runs.
- `results_frame(round_)`: every result of a round, one per line (`manage.py export_results`).

`FORMATS` holds one small writer per format; they share the DataFrame and differ only in
how it is written.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

from django.conf import settings
from django.utils import translation
from django.utils.translation import gettext, gettext_noop

from ..catalogue.units import minutes
from ..models import Category, Division, Result, Round
from .layout import sections
from .rows import RoundData
from .view import TableView

if TYPE_CHECKING:
    import pandas as pd

COLUMNS = [
    "public_id",
    "submitter",
    "system",
    "division",
    "category",
    "benchmark",
    "runs_counted",
    "score_minutes",
    "speedup",
    "scaling_factor",
    "claimed_scaling_factor",
    "not_scored_because",
    "path",
    "energy_kj",
    "energy_not_scored_because",
]


class Writer:
    """Writes a DataFrame in one format."""

    extension = ""
    content_type = ""

    def write(self, frame: pd.DataFrame, out) -> None:
        raise NotImplementedError

    def render(self, frame: pd.DataFrame) -> bytes:
        out = io.StringIO()
        self.write(frame, out)
        return out.getvalue().encode()


# A cell beginning with one of these is taken as a formula by spreadsheets (OWASP: CSV injection).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def data_frame(records: list, columns: list[str]) -> pd.DataFrame:
    """The records as a DataFrame. pandas is imported here, at the first export, not with this module: every
    web and Celery process imports this module at start (the URLs, the templates' tags) and most never export;
    pandas took a third of a second of CPU in each (issue 35: the suite starts about 70 such processes)."""
    import pandas as pd

    return pd.DataFrame.from_records(records, columns=columns)


def neutralise(value):
    """A text cell that a spreadsheet would run as a formula, with a single quote before it (shown as text);
    anything else as it is. Numbers are never text here, so a negative number stays a number."""
    return "'" + value if isinstance(value, str) and value.startswith(FORMULA_STARTS) else value


class CSVWriter(Writer):
    """CSV for spreadsheets: text cells from bundles (names, paths, reasons) cannot start a formula. Rows end
    with CRLF, as RFC 4180 has them: Python's csv quotes a cell holding the line end's characters only, and a
    bare CR left unquoted would start a row (and a formula) of its own in a spreadsheet."""

    extension = "csv"
    content_type = "text/csv; charset=utf-8"

    def write(self, frame, out):
        text = frame.select_dtypes(include=["object", "string"]).columns
        if len(text):
            frame = frame.copy()
            for column in text:
                frame[column] = frame[column].map(neutralise)
        frame.to_csv(out, index=False, lineterminator="\r\n")


class JSONWriter(Writer):
    extension = "json"
    content_type = "application/json"

    def write(self, frame, out):
        out.write(frame.to_json(orient="records", indent=1, force_ascii=False))
        out.write("\n")


FORMATS = {"csv": CSVWriter(), "json": JSONWriter()}


def write(frame: pd.DataFrame, fmt: str, out) -> None:
    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r}: use csv or json")
    FORMATS[fmt].write(frame, out)


def _round(value, digits=4):
    return None if value is None else round(value, digits)


UNIT_WORDS = {
    "energy": "kJ",
    "energy_per_acc": gettext_noop("kJ per accelerator"),
    "acc_hours": gettext_noop("accelerator-hours"),
}
ENERGY_SHOWN = ("energy", "energy_per_acc")  # views whose benchmark columns are energies already


def unit(view: TableView, bench) -> str:
    """The unit of a benchmark's column in this view, in words."""
    if view.show in UNIT_WORDS:
        return UNIT_WORDS[view.show]
    return gettext_noop("speedup") if view.shows_speedup(bench) else gettext_noop("minutes")


# The descriptive columns of an export, by the page's column chooser (roundtable.params.COLUMNS): a view
# with no columns chosen exports them all, MLCommons' summary table and more; a view with columns
# chosen exports those. The system's name and submitter, the benchmarks and the notes always go.
EXPORT_COLUMNS = {
    "public_id": ["Public ID"],
    "availability": ["Availability", "Division"],
    "nodes": ["# of Nodes"],
    "processor": ["Processor", "# of Processors"],
    "accelerator": ["Accelerator", "# of Accelerators"],
    "software": ["Software"],
    "cloud_scale": ["Cloud scale"],
    "power": ["Avg. power (kW)"],
}
INTEGER_COLUMNS = ("# of Nodes", "# of Processors", "# of Accelerators")


def export_columns(view: TableView, data: RoundData) -> list[str]:
    """The chooser's columns that an export of this view holds (COLUMNS keys, in their order)."""
    if view.cols is None:
        return view.columns_available(data)
    return view.columns(data)


# The export's fixed column names, for the catalogue: a reader may ask for them in the site's other language.
HEADER_WORDS = (
    gettext_noop("Public ID"),
    gettext_noop("Organization"),
    gettext_noop("Availability"),
    gettext_noop("Division"),
    gettext_noop("System Name"),
    gettext_noop("# of Nodes"),
    gettext_noop("Processor"),
    gettext_noop("# of Processors"),
    gettext_noop("Accelerator"),
    gettext_noop("# of Accelerators"),
    gettext_noop("Software"),
    gettext_noop("Cloud scale"),
    gettext_noop("Avg. power (kW)"),
    gettext_noop("System URL"),
    gettext_noop("Logs URL"),
    gettext_noop("Code URL"),
    gettext_noop("Notes"),
)


def headers_language(value: str | None) -> str | None:
    """The language a `headers=` value asks the export's column names in; None for MLCommons' English."""
    if not value:
        return None
    try:
        language = translation.get_supported_language_variant(value.lower())
    except LookupError:
        return None
    return None if language == settings.LANGUAGE_CODE else language


def table_frame(
    view: TableView, data: RoundData, base_url: str = "", headers: str | None = None
) -> pd.DataFrame:
    """The view's rows (_table_frame), their data in English whatever the page's language; the column
    names in MLCommons' English, or in the language `headers` names (headers_language)."""
    with translation.override(settings.LANGUAGE_CODE):
        frame = _table_frame(view, data, base_url)
    if headers:
        with translation.override(headers):
            frame = frame.rename(columns=_header_names(view, data, frame.columns))
    return frame


def _header_names(view: TableView, data: RoundData, columns) -> dict[str, str]:
    """Each column's name in the active language: the fixed ones from the catalogue, a benchmark's with its
    name as published and its unit translated."""
    names = {c: gettext(c) for c in HEADER_WORDS}
    for bench in view.benchmarks(data):
        names[f"{bench.name} ({unit(view, bench)})"] = gettext("%(benchmark)s (%(unit)s)") % {
            "benchmark": bench.name,
            "unit": gettext(unit(view, bench)),
        }
        names[f"{bench.name} energy (kJ)"] = gettext("%(benchmark)s energy (kJ)") % {
            "benchmark": bench.name
        }
        names[f"{bench.name} URL"] = gettext("%(benchmark)s URL") % {"benchmark": bench.name}
    return {c: names.get(c, c) for c in columns}


def _table_frame(view: TableView, data: RoundData, base_url: str = "") -> pd.DataFrame:
    """The rows of the view in the order shown (table by table), as MLCommons' summary has them:
    Public ID, Organization, Availability, System Name, # of Nodes, Processor, # of Processors,
    Accelerator, # of Accelerators, Software, a column per benchmark in the view's unit, then links
    to each result, the system, its logs and its code (where MLCommons published the round:
    roundtable.rows.code_url), and notes (findings, why a result has no score)."""
    rows = view.rows(data)
    # As on the page: benchmark columns with no result in the view are left out.
    benchmarks = [b for b in view.benchmarks(data) if any(b.key in r.cells for r in rows)]
    chosen = export_columns(view, data)
    records = []
    for section in sections(rows, view.group):
        for row in section.rows:
            fields = {
                "Public ID": " ".join(row.public_ids),  # each opens at /id/<public id>
                "Organization": row.submitter_shown,
                "Availability": str(Category(row.category).label),
                "Division": str(Division(row.division).label),
                "System Name": row.name,
                "# of Nodes": row.nodes,
                "Processor": row.processor_model,
                "# of Processors": row.processor_count,
                "Accelerator": row.accelerator_model,
                "# of Accelerators": row.accelerator_count,
                "Software": row.framework,
                "Cloud scale": _round(row.cloud_scale),
                "Avg. power (kW)": _round(row.avg_power_kw),
            }
            record = {"Organization": fields["Organization"]}
            for column in chosen:
                for name in EXPORT_COLUMNS.get(column, []):
                    record[name] = fields[name]
            record["System Name"] = row.name
            notes = []
            for bench in benchmarks:
                cell = row.cells.get(bench.key)
                record[f"{bench.name} ({unit(view, bench)})"] = _round(view.cell_value(row, bench))
                if cell and cell.not_scored_because:
                    notes.append(f"{bench.name}: not scored: {cell.not_scored_because}")
                elif cell and cell.findings:
                    notes.append(f"{bench.name}: findings: {cell.findings}")
            if _energy_columns(view, data):
                for bench in benchmarks:
                    cell = row.cells.get(bench.key)
                    record[f"{bench.name} energy (kJ)"] = _round(cell.energy_kj if cell else None)
            for bench in benchmarks:
                cell = row.cells.get(bench.key)
                record[f"{bench.name} URL"] = base_url + cell.url if cell else None
            record["System URL"] = base_url + row.url
            record["Logs URL"] = f"{base_url}{row.url}#results-h"
            record["Code URL"] = row.code_url or None
            record["Notes"] = "; ".join(notes)
            records.append(record)
    frame = data_frame(
        records, _table_columns(view, benchmarks, chosen, _energy_columns(view, data))
    )
    for column in INTEGER_COLUMNS:
        if column in frame.columns:
            frame[column] = frame[column].astype("Int64")
    return frame


def _energy_columns(view, data: RoundData) -> bool:
    """Whether the export has an energy column per benchmark: where the round has power results and the
    benchmark columns are not energies already."""
    return data.has_power and view.show not in ENERGY_SHOWN


def _table_columns(view, benchmarks, chosen, energy: bool = False) -> list[str]:
    columns = ["Organization"]
    for column in chosen:
        columns += EXPORT_COLUMNS.get(column, [])
    # MLCommons' order: the public id first, the system's name after its availability.
    if "Public ID" in columns:
        columns.remove("Public ID")
        columns.insert(0, "Public ID")
    at = (
        columns.index("Division") + 1
        if "Division" in columns
        else columns.index("Organization") + 1
    )
    columns.insert(at, "System Name")
    columns += [f"{b.name} ({unit(view, b)})" for b in benchmarks]
    if energy:
        columns += [f"{b.name} energy (kJ)" for b in benchmarks]
    columns += [f"{b.name} URL" for b in benchmarks]
    return columns + ["System URL", "Logs URL", "Code URL", "Notes"]


RUN_COLUMNS = [
    "run_id",
    "result_id",
    "index",
    "path",
    "minutes",
    "success",
    "status",
    "failure_reason",
    "counted",
    "dropped",
    "seed",
    "energy_kj",
]


def runs_frame(result: Result, runs) -> pd.DataFrame:
    records = [
        {
            "run_id": run.id,
            "result_id": result.id,
            "index": run.index,
            "path": run.path,
            "minutes": _round(minutes(run.time_to_train_s)),
            "success": run.success,
            "status": run.status,
            "failure_reason": run.failure_reason,
            "counted": run.counted,
            "dropped": run.dropped,
            "seed": run.seed,
            "energy_kj": _round(None if run.energy_j is None else run.energy_j / 1000, 3),
        }
        for run in runs
    ]
    return data_frame(records, RUN_COLUMNS)


def results_frame(round_: Round, *, published_only: bool = True) -> pd.DataFrame:
    from ..access import public

    results = public.results() if published_only else Result.objects.all()
    rows = (
        results.filter(system__round=round_)
        .order_by("system__submitter__name", "system__key", "benchmark__position")
        .values_list(
            "public_id",
            "system__submitter__name",
            "system__key",
            "system__division",
            "system__category",
            "benchmark__key",
            "runs_counted",
            "score_s",
            "speedup",
            "scaling_factor",
            "claimed_scaling_factor",
            "score_message",
            "path",
            "energy_j",
            "energy_message",
        )
    )
    frame = data_frame(list(rows), COLUMNS)
    frame["energy_kj"] = (frame["energy_kj"].astype("float64") / 1000).round(3)
    frame["score_minutes"] = minutes(frame["score_minutes"].astype("float64")).round(4)
    frame["speedup"] = frame["speedup"].astype("float64").round(4)
    frame.loc[frame["score_minutes"].notna(), "not_scored_because"] = (
        ""  # a scored result's note is not a reason
    )
    return frame
