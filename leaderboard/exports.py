"""Exports of a round's results as a pandas DataFrame, written as CSV or JSON."""

import pandas as pd

from .models import Result, Round

COLUMNS = [
    "submitter", "system", "division", "category", "benchmark",
    "runs_counted", "score_minutes", "speedup", "path",
]


def results_frame(round_: Round, *, published_only: bool = True) -> pd.DataFrame:
    results = Result.objects.filter(system__round=round_)
    if published_only:
        results = results.filter(published=True)
    rows = results.order_by("system__submitter__name", "system__key", "benchmark__position").values_list(
        "system__submitter__name", "system__key", "system__division", "system__category",
        "benchmark__key", "runs_counted", "score_s", "speedup", "path",
    )
    frame = pd.DataFrame.from_records(list(rows), columns=COLUMNS)
    frame["score_minutes"] = (frame["score_minutes"].astype("float64") / 60).round(4)
    frame["speedup"] = frame["speedup"].astype("float64").round(4)
    return frame


def write(frame: pd.DataFrame, fmt: str, out) -> None:
    if fmt == "csv":
        frame.to_csv(out, index=False, lineterminator="\n")
    elif fmt == "json":
        out.write(frame.to_json(orient="records", indent=1))
        out.write("\n")
    else:
        raise ValueError(f"unknown export format {fmt!r}: use csv or json")
