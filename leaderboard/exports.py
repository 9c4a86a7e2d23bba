"""Exports as pandas DataFrames written as CSV or JSON.

- `table_frame(view, data)`: exactly the rows and columns of a round table view (the page's
  URL with `format=csv|json`), plus ids and links.
- `runs_frame(result, runs)`: one result's runs.
- `results_frame(round_)`: every result of a round, one per line (`manage.py export_results`).

`FORMATS` holds one small writer per format; they share the DataFrame and differ only in
how it is written.
"""

import io

import pandas as pd

from .models import Result, Round
from .tables import RoundData
from .tableview import TableView, sections
from .units import minutes

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


def unit(view: TableView, bench) -> str:
    if view.show in ("energy", "acc_hours"):
        return {"energy": "energy_kj", "acc_hours": "accelerator_hours"}[view.show]
    return "speedup" if view.shows_speedup(bench) else "minutes"


def table_frame(view: TableView, data: RoundData, base_url: str = "") -> pd.DataFrame:
    """The rows of the view in the order shown (section by section), with the columns shown plus ids."""
    rows = view.rows(data)
    # As on the page: benchmark columns with no result in the view are left out.
    benchmarks = [b for b in view.benchmarks(data) if any(b.key in r.cells for r in rows)]
    records = []
    for section in sections(rows, view.group):
        for row in section.rows:
            record = {
                "division": row.division,
                "category": row.category,
                "system_id": row.system_id,
                "submitter": row.submitter,
                "system": row.name,
                "system_key": row.key,
                "processor": row.processor_model,
                "processor_count": row.processor_count,
                "accelerator": row.accelerator_model,
                "accelerator_count": row.accelerator_count,
                "software": row.framework,
            }
            for bench in benchmarks:
                cell = row.cells.get(bench.key)
                record[f"{bench.key}_{unit(view, bench)}"] = _round(view.cell_value(row, bench))
                record[f"{bench.key}_result_id"] = cell.result_id if cell else None
                record[f"{bench.key}_findings"] = cell.findings if cell else None
            if data.has_cloud_scale:
                record["cloud_scale"] = _round(row.cloud_scale)
            if data.has_energy:
                record["avg_power_kw"] = _round(row.avg_power_kw)
            record["url"] = base_url + row.url
            records.append(record)
    frame = pd.DataFrame.from_records(records, columns=_table_columns(view, data, benchmarks))
    for column in frame.columns:
        if column.endswith("_result_id") or column.endswith("_count") or column == "system_id":
            frame[column] = frame[column].astype("Int64")
    return frame


def _table_columns(view, data, benchmarks):
    columns = [
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
    for bench in benchmarks:
        columns += [
            f"{bench.key}_{unit(view, bench)}",
            f"{bench.key}_result_id",
            f"{bench.key}_findings",
        ]
    if data.has_cloud_scale:
        columns.append("cloud_scale")
    if data.has_energy:
        columns.append("avg_power_kw")
    return columns + ["url"]


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
        }
        for run in runs
    ]
    return pd.DataFrame.from_records(records, columns=RUN_COLUMNS)


def results_frame(round_: Round, *, published_only: bool = True) -> pd.DataFrame:
    from . import public

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
        )
    )
    frame = pd.DataFrame.from_records(list(rows), columns=COLUMNS)
    frame["score_minutes"] = minutes(frame["score_minutes"].astype("float64")).round(4)
    frame["speedup"] = frame["speedup"].astype("float64").round(4)
    frame.loc[frame["score_minutes"].notna(), "not_scored_because"] = (
        ""  # a scored result's note is not a reason
    )
    return frame
