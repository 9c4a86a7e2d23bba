"""Plotly figures as plain dicts ({"data": [...], "layout": {...}}), drawn by plotly.js in the page.

Pure functions of the rows a page shows, so every chart follows the page's filters:
scaling (time to train against accelerator count, log–log, one benchmark, one trace per
accelerator type), cost (speedup against cloud scale), progress (best time per benchmark
across rounds) and convergence (each run's eval curve with the quality target).
Colour is never the only carrier of meaning: every series has its own colour from the
Okabe-Ito palette (told apart with the common kinds of colour blindness) and its own marker
symbol or dash, and every chart has a table of the same numbers (`table`). Log axes carry
their tick labels in full (20, not 2: plotly's default writes only the leading digit
between powers of ten), from `log_ticks`.
"""

import math

from .tables import Bench, Row

# Okabe & Ito (2008), "Color Universal Design": blue, orange, bluish green, vermilion, reddish purple,
# sky blue, yellow, black. Yellow is last: it is the faintest on white (markers get a dark edge for it).
PALETTE = [
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#D55E00",
    "#CC79A7",
    "#56B4E9",
    "#F0E442",
    "#000000",
]
SYMBOLS = [
    "circle",
    "square",
    "diamond",
    "triangle-up",
    "x",
    "cross",
    "triangle-down",
    "star",
    "hexagon",
    "pentagon",
]
DASHES = ["solid", "dash", "dot", "dashdot", "longdash", "longdashdot"]


def _layout(title: str, x_title: str, y_title: str, *, x_log=False, y_log=False) -> dict:
    return {
        "title": {"text": title, "x": 0, "xanchor": "left", "font": {"size": 15}},
        "xaxis": {
            "title": {"text": x_title},
            "type": "log" if x_log else "linear",
            "zeroline": False,
        },
        "yaxis": {
            "title": {"text": y_title},
            "type": "log" if y_log else "linear",
            "zeroline": False,
        },
        "legend": {"orientation": "h", "y": -0.3, "yanchor": "top", "x": 0},
        "showlegend": True,
        "margin": {"l": 60, "r": 10, "t": 40, "b": 40},
        "hovermode": "closest",
        "height": 480,
        "autosize": True,
    }


def _style(i: int) -> dict:
    """Series i's marker: colour and symbol cycle at different lengths (8 and 10), so no two of the first
    40 series share both."""
    return {
        "color": PALETTE[i % len(PALETTE)],
        "symbol": SYMBOLS[i % len(SYMBOLS)],
        "size": 9,
        "line": {"color": "#1b1f24", "width": 1},
    }


def _label(value: float) -> str:
    if value >= 1000:
        return f"{value:,.0f}"
    return f"{value:g}"


def log_ticks(values) -> dict:
    """tickvals and ticktext in full for a log axis over these values (1, 2, 5 of each power of ten
    across up to three decades, the powers of ten alone beyond that), from the tick at or below the
    smallest value to the one at or above the largest, and the axis range to match: both ends labelled."""
    finite = [v for v in values if isinstance(v, (int, float)) and v > 0 and math.isfinite(v)]
    if not finite:
        return {}
    low, high = min(finite), max(finite)
    first, last = math.floor(math.log10(low)), math.ceil(math.log10(high))
    steps = (1, 2, 5) if last - first <= 3 else (1,)
    candidates = [float(f"{m * 10.0**e:.6g}") for e in range(first, last + 1) for m in steps]
    start = max(c for c in candidates if c <= low)
    end = min(c for c in candidates if c >= high)
    ticks = [c for c in candidates if start <= c <= end]
    span = math.log10(end) - math.log10(start) or 1.0
    pad = span * 0.04  # room for the markers at either end
    return {
        "tickmode": "array",
        "tickvals": ticks,
        "ticktext": [_label(t) for t in ticks],
        "range": [math.log10(start) - pad, math.log10(end) + pad],
    }


def _full_log_labels(figure: dict) -> dict:
    """Give each log axis of the figure its ticks in full, from the values plotted on it."""
    for axis, key in (("xaxis", "x"), ("yaxis", "y")):
        if figure["layout"].get(axis, {}).get("type") == "log":
            values = [v for trace in figure["data"] for v in trace.get(key, [])]
            figure["layout"][axis].update(log_ticks(values))
    return figure


def table(figure: dict | None) -> dict | None:
    """The chart's numbers as a table for screen readers and for anyone who prefers one: a row per point,
    the series, x, y and what the point is (its hover text)."""
    if not figure or not figure.get("data"):
        return None
    layout = figure.get("layout", {})

    def title(axis: str, fallback: str) -> str:
        text = layout.get(axis, {}).get("title", {}).get("text", fallback)
        return text.replace(" (log)", "")

    rows = []
    has_text = any(trace.get("text") for trace in figure["data"])
    for trace in figure["data"]:
        xs, ys = trace.get("x", []), trace.get("y", [])
        texts = trace.get("text") or [""] * len(xs)
        urls = trace.get("customdata") or [""] * len(xs)
        for x, y, text, url in zip(xs, ys, texts, urls):
            rows.append(
                {
                    "series": trace.get("name", ""),
                    "x": _label(x) if isinstance(x, (int, float)) else x,
                    "y": f"{y:,.2f}" if isinstance(y, (int, float)) else y,
                    "text": text,
                    "url": url if isinstance(url, str) and url.startswith("/") else "",
                }
            )
    return {
        "title": layout.get("title", {}).get("text", ""),
        "x": title("xaxis", "x"),
        "y": title("yaxis", "y"),
        "has_text": has_text,
        "rows": rows,
    }


def accelerator_hours(row: Row, minutes: float | None) -> float | None:
    """Accelerator-hours to train: hours × accelerators (None without a count)."""
    if minutes is None or not row.accelerator_count:
        return None
    return minutes / 60 * row.accelerator_count


def scaling(rows: list[Row], bench: Bench | None, per_accelerator: bool = False) -> dict | None:
    """Time to train (minutes) against accelerator count for one benchmark, by accelerator type;
    `per_accelerator`: accelerator-hours (minutes ÷ 60 × accelerators) instead of minutes."""
    if bench is None:
        return None
    groups: dict[str, list] = {}
    for row in rows:
        cell = row.cells.get(bench.key)
        if cell is None or cell.minutes is None:
            continue
        count = row.accelerator_count or row.processor_count
        if not count:
            continue
        value = accelerator_hours(row, cell.minutes) if per_accelerator else cell.minutes
        if value is None:
            continue
        label = (
            row.accelerator_model
            if row.accelerator_count
            else f"{row.processor_model} (processors)"
        )
        groups.setdefault(label or "unknown", []).append((count, value, row))
    if not groups:
        return None
    data = []
    for i, (label, points) in enumerate(sorted(groups.items())):
        points.sort(key=lambda p: p[0])
        data.append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": label,
                "x": [p[0] for p in points],
                "y": [round(p[1], 4) for p in points],
                "text": [f"{p[2].submitter}: {p[2].name}" for p in points],
                "customdata": [p[2].cells[bench.key].url for p in points],
                "hovertemplate": "%{text}<br>%{x} accelerators, %{y:.2f} "
                + ("accelerator-hours" if per_accelerator else "min")
                + "<extra>"
                + label.replace("%", "%%")
                + "</extra>",
                "marker": _style(i),
            }
        )
    return _full_log_labels(
        {
            "data": data,
            "layout": _layout(
                f"Scaling: {bench.name}",
                "Accelerators (log)",
                "Accelerator-hours to train (log)" if per_accelerator else "Minutes to train (log)",
                x_log=True,
                y_log=True,
            ),
        }
    )


def cost(rows: list[Row], benchmarks: list[Bench]) -> dict | None:
    """Speedup against cloud scale, one trace per benchmark (cloud systems with a price only)."""
    data = []
    for i, bench in enumerate(b for b in benchmarks if b.has_reference):
        points = [
            (row.cloud_scale, row.cells[bench.key].speedup, row)
            for row in rows
            if row.cloud_scale and bench.key in row.cells and row.cells[bench.key].speedup
        ]
        if not points:
            continue
        data.append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": bench.name,
                "x": [round(p[0], 4) for p in points],
                "y": [round(p[1], 4) for p in points],
                "text": [f"{p[2].submitter}: {p[2].name}" for p in points],
                "customdata": [p[2].cells[bench.key].url for p in points],
                "hovertemplate": "%{text}<br>cloud scale %{x:.2f}, speedup %{y:.2f}×<extra></extra>",
                "marker": _style(i),
            }
        )
    if not data:
        return None
    return {
        "data": data,
        "layout": _layout(
            "Cost: speedup against cloud scale",
            "Cloud scale (price ÷ reference price)",
            "Speedup over the reference",
        ),
    }


def progress(
    series: dict[str, list[tuple]],
    names: dict[str, str],
    round_names: list[str],
) -> dict | None:
    """Best minutes per benchmark across rounds: {bench key: [(round key, round name, minutes, who, url)]},
    rounds along the x axis in the order of `round_names` (oldest first); a point links to its holder's
    result (url, where given)."""
    data = []
    for i, (key, points) in enumerate(sorted(series.items())):
        if not points:
            continue
        data.append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": names.get(key, key),
                "x": [p[1] for p in points],
                "y": [round(p[2], 4) for p in points],
                "text": [p[3] for p in points],
                "customdata": [p[4] if len(p) > 4 else "" for p in points],
                "hovertemplate": "%{x}: %{y:.2f} min<br>%{text}<extra>" + key + "</extra>",
                "marker": _style(i),
                "line": {"color": PALETTE[i % len(PALETTE)], "dash": DASHES[i % len(DASHES)]},
            }
        )
    if not data:
        return None
    layout = _layout(
        "Best time to train per benchmark, by round", "Round", "Minutes to train (log)", y_log=True
    )
    layout["xaxis"].update(type="category", categoryorder="array", categoryarray=round_names)
    return _full_log_labels({"data": data, "layout": layout})


def convergence(runs, target: float | None, higher_is_better: bool, x_label: str) -> dict | None:
    """Each run's eval metric against epoch or samples, dropped runs dashed, with the target line."""
    data = []
    for i, run in enumerate(runs):
        curve = [p for p in (run.eval_curve or []) if isinstance(p, (list, tuple)) and len(p) >= 2]
        if not curve:
            continue
        state = "dropped" if run.dropped else "counted" if run.counted else "not counted"
        data.append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": f"run {run.index} ({state})",
                "x": [p[0] for p in curve],
                "y": [p[1] for p in curve],
                "line": {
                    "color": PALETTE[i % len(PALETTE)],
                    "dash": "dot" if run.dropped else DASHES[i % len(DASHES)],
                },
                "marker": {**_style(i), "size": 6},
            }
        )
    if not data:
        return None
    layout = _layout("Convergence of each run", x_label or "epoch", "Eval metric")
    if target is not None:
        layout["shapes"] = [
            {
                "type": "line",
                "xref": "paper",
                "x0": 0,
                "x1": 1,
                "y0": target,
                "y1": target,
                "line": {"color": "#1b1f24", "width": 2, "dash": "dash"},
            }
        ]
        layout["annotations"] = [
            {
                "xref": "paper",
                "x": 1,
                "y": target,
                "xanchor": "right",
                "yanchor": "bottom",
                "showarrow": False,
                "text": f"target {target} ({'≥' if higher_is_better else '≤'})",
            }
        ]
    return {"data": data, "layout": layout}


def compare(systems, benchmarks: list[Bench], per_accelerator: bool = False) -> dict | None:
    """Minutes to train per benchmark, a dot per system (systems: list of Row), on a log axis: bars would
    have their lengths read as ratios, which a log axis does not keep. Dots of one benchmark stand side
    by side (scattermode group). `per_accelerator`: accelerator-hours instead of minutes."""

    def value(row, bench):
        cell = row.cells.get(bench.key)
        minutes = cell.minutes if cell else None
        return accelerator_hours(row, minutes) if per_accelerator else minutes

    unit = "accelerator-hours" if per_accelerator else "min"
    data = []
    for i, row in enumerate(systems):
        keys = [b for b in benchmarks if value(row, b) is not None]
        data.append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": f"{row.submitter}: {row.name}",
                "x": [b.key for b in keys],
                "y": [round(value(row, b), 4) for b in keys],
                "customdata": [row.cells[b.key].url for b in keys],
                "hovertemplate": "%{x}: %{y:.2f} " + unit + "<extra>%{fullData.name}</extra>",
                "marker": {**_style(i), "size": 12},
            }
        )
    if not any(d["x"] for d in data):
        return None
    if per_accelerator:
        layout = _layout(
            "Accelerator-hours to train per benchmark (hours × accelerators)",
            "Benchmark",
            "Accelerator-hours (log)",
            y_log=True,
        )
    else:
        layout = _layout("Minutes to train per benchmark", "Benchmark", "Minutes (log)", y_log=True)
    shown = {key for trace in data for key in trace["x"]}  # no empty slot for a benchmark none has
    layout["xaxis"].update(
        type="category",
        categoryorder="array",
        categoryarray=[b.key for b in benchmarks if b.key in shown],
    )
    layout["scattermode"] = "group"
    return _full_log_labels({"data": data, "layout": layout})
