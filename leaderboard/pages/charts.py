"""Plotly figures as plain dicts ({"data": [...], "layout": {...}}), drawn by plotly.js in the page.

Pure functions of the rows a page shows, so every chart follows the page's filters:
scaling (time to train against accelerator count, log–log, one benchmark, one trace per
accelerator model), cost (speedup against cloud scale), progress (best time per benchmark
across rounds, on a time axis of the rounds' publication dates) and convergence (each run's
eval curve with the quality target).
Colour is never the only carrier of meaning: series are coloured from the Okabe-Ito palette
(told apart with the common kinds of colour blindness) and each has its own marker symbol or
dash, and every chart has a table of the same numbers (`table`). Where series are systems or
accelerators (scaling, compare), the colour says the vendor and the marker the model
(`vendor_styles`): no two vendors share a colour in a chart. Log axes carry their tick labels
in full (20, not 2: plotly's default writes only the leading digit between powers of ten),
from `log_ticks`.
"""

import math

from django.utils import dateformat
from django.utils.translation import gettext, pgettext

from ..catalogue.accelerators import family_of, vendor_of
from ..roundtable.rows import Bench, Row

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
    "triangle-left",
    "triangle-right",
    "hourglass",
    "bowtie",
    "star-square",
]
DASHES = ["solid", "dash", "dot", "dashdot", "longdash", "longdashdot"]
# A vendor keeps its colour from chart to chart: NVIDIA bluish green, AMD vermilion, Intel blue, Google
# orange, Huawei reddish purple, Graphcore sky blue. Other vendors take the colours left over in the chart.
VENDOR_COLOURS = {
    "NVIDIA": "#009E73",
    "AMD": "#D55E00",
    "Intel": "#0072B2",
    "Google": "#E69F00",
    "Huawei": "#CC79A7",
    "Graphcore": "#56B4E9",
}
# For other vendors, before the colours the vendors above keep: dark ones that stand apart from the eight
# (brown, grey, teal, purple, olive).
SPARE_COLOURS = ["#8C510A", "#6E6E6E", "#01665E", "#762A83", "#7A7A00"]


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
    """Series i's marker: colour and symbol cycle at different lengths (8 and 15), so no two of the first
    120 series share both."""
    return {
        "color": PALETTE[i % len(PALETTE)],
        "symbol": SYMBOLS[i % len(SYMBOLS)],
        "size": 9,
        "line": {"color": "#1b1f24", "width": 1},
    }


def vendor_styles(series: list[tuple[str, str]]) -> list[dict]:
    """A marker for each series (vendor, model): the vendor's colour, and a symbol per model (the same
    model keeps its symbol). No two vendors share a colour; beyond 13 vendors in one
    chart, the colours are spread around the colour wheel."""
    vendors = list(dict.fromkeys(vendor for vendor, _ in series))
    colour = {v: VENDOR_COLOURS[v] for v in vendors if v in VENDOR_COLOURS}
    spare = [
        c for c in dict.fromkeys(["#000000", *SPARE_COLOURS, *PALETTE]) if c not in colour.values()
    ]
    others = [v for v in vendors if v not in colour]
    if len(others) > len(spare):
        spare += [f"hsl({round(360 * i / len(others))}, 70%, 35%)" for i in range(len(others))]
    colour.update(zip(others, spare))
    # Every model its own symbol across the chart, not only within its vendor: colour is never the only
    # thing that tells two series apart.
    models = list(dict.fromkeys(model for _, model in series))
    styles = []
    for vendor, model in series:
        symbol = SYMBOLS[models.index(model) % len(SYMBOLS)]
        styles.append(
            {
                "color": colour[vendor],
                "symbol": symbol,
                "size": 9,
                "line": {"color": "#1b1f24", "width": 1},
            }
        )
    return styles


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
        return text.replace(" (log)", "").replace(gettext(" (log)"), "")

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
        model = row.accelerator_model if row.accelerator_count else row.processor_model
        # One series per model: a family's names (H200 NVL and H200 SXM) are one chip.
        label = family_of(model or "") or model or "unknown"
        if not row.accelerator_count:
            label = gettext("%(model)s (processors)") % {"model": label}
        groups.setdefault((vendor_of(model or ""), label), []).append((count, value, row))
    if not groups:
        return None
    data = []
    ordered = sorted(
        groups.items()
    )  # by vendor, then model: a vendor's series side by side in the legend
    styles = vendor_styles([key for key, _ in ordered])
    for ((_vendor, label), points), marker in zip(ordered, styles):
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
                "hovertemplate": "%{text}<br>"
                + (
                    gettext("%(count)s accelerators, %(value)s accelerator-hours")
                    if per_accelerator
                    else gettext("%(count)s accelerators, %(value)s min")
                )
                % {"count": "%{x}", "value": "%{y:.2f}"}
                + "<extra>"
                + label.replace("%", "%%")
                + "</extra>",
                "marker": marker,
            }
        )
    return _full_log_labels(
        {
            "data": data,
            "layout": _layout(
                gettext("Scaling: %(benchmark)s") % {"benchmark": bench.name},
                gettext("Accelerators (log)"),
                gettext("Accelerator-hours to train (log)")
                if per_accelerator
                else gettext("Minutes to train (log)"),
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
                "hovertemplate": "%{text}<br>"
                + gettext("cloud scale %(scale)s, speedup %(speedup)s×")
                % {"scale": "%{x:.2f}", "speedup": "%{y:.2f}"}
                + "<extra></extra>",
                "marker": _style(i),
            }
        )
    if not data:
        return None
    return {
        "data": data,
        "layout": _layout(
            gettext("Cost: speedup against cloud scale"),
            gettext("Cloud scale (price ÷ reference price)"),
            gettext("Speedup over the reference"),
        ),
    }


def progress(series: dict[str, list[tuple]], names: dict[str, str]) -> dict | None:
    """Best minutes per benchmark across rounds: {bench key: [(round key, round name, minutes, who, url,
    publication date)]}, oldest first. The x axis is time, the rounds' publication dates (a tick per
    round, named), so that six years between two rounds look like six years; where a round has no date,
    the rounds stand evenly spaced, in order. A point links to its holder's result (url, where given)."""
    points_all = [p for points in series.values() for p in points]
    dated = bool(points_all) and all(len(p) > 5 and p[5] for p in points_all)
    data = []
    for i, (key, points) in enumerate(
        sorted(series.items(), key=lambda kv: names.get(kv[0], kv[0]))
    ):
        if not points:
            continue
        data.append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": names.get(key, key),
                "x": [p[5].isoformat() if dated else p[1] for p in points],
                "y": [round(p[2], 4) for p in points],
                "text": [f"{p[1]}: {p[3]}" for p in points],
                "customdata": [p[4] if len(p) > 4 else "" for p in points],
                "hovertemplate": "%{text}<br>"
                + gettext("%(minutes)s min") % {"minutes": "%{y:.2f}"}
                + "<extra>"
                + names.get(key, key).replace("%", "%%")
                + "</extra>",
                "marker": _style(i),
                "line": {"color": PALETTE[i % len(PALETTE)], "dash": DASHES[i % len(DASHES)]},
            }
        )
    if not data:
        return None
    rounds = sorted(
        {(p[5], p[1]) if dated else (None, p[1]) for p in points_all}, key=lambda r: r[0] or 0
    )
    if dated:
        layout = _layout(
            gettext("Best time to train per benchmark, by round"),
            gettext("Round, at its publication date"),
            gettext("Minutes to train (log)"),
            y_log=True,
        )
        layout["xaxis"].update(
            type="date",
            tickmode="array",
            tickvals=[d.isoformat() for d, _ in rounds],
            ticktext=[
                f"{_short(name)}<br>{dateformat.format(d, pgettext('date format', 'M Y'))}"
                for d, name in rounds
            ],
        )
    else:
        layout = _layout(
            gettext("Best time to train per benchmark, by round"),
            gettext("Round"),
            gettext("Minutes to train (log)"),
            y_log=True,
        )
        order = list(dict.fromkeys(p[1] for points in series.values() for p in points))
        layout["xaxis"].update(type="category", categoryorder="array", categoryarray=order)
    return _full_log_labels({"data": data, "layout": layout})


def _short(round_name: str) -> str:
    """'Training v5.1' -> 'v5.1': the part of a round's name that tells it from the others."""
    return round_name.removeprefix("Training ").strip() or round_name


def convergence(runs, target: float | None, higher_is_better: bool, x_label: str) -> dict | None:
    """Each run's eval metric against epoch or samples, dropped runs dashed, with the target line."""
    data = []
    for i, run in enumerate(runs):
        curve = [p for p in (run.eval_curve or []) if isinstance(p, (list, tuple)) and len(p) >= 2]
        if not curve:
            continue
        state = (
            gettext("dropped")
            if run.dropped
            else gettext("counted")
            if run.counted
            else gettext("not counted")
        )
        data.append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": gettext("run %(index)s (%(state)s)") % {"index": run.index, "state": state},
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
    layout = _layout(
        gettext("Convergence of each run"), x_label or gettext("epoch"), gettext("Eval metric")
    )
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
                "text": gettext("target %(target)s (%(sign)s)")
                % {"target": target, "sign": "≥" if higher_is_better else "≤"},
            }
        ]
    return {"data": data, "layout": layout}


def compare(systems, benchmarks: list[Bench], per_accelerator: bool = False) -> dict | None:
    """Minutes to train per benchmark, a dot per system (systems: list of Row), on a log axis: bars would
    have their lengths read as ratios, which a log axis does not keep. Benchmarks run down the chart, by
    name, so that their names read across at a phone's width too; dots of one benchmark stand one above
    the other (scattermode group). `per_accelerator`: accelerator-hours instead of minutes."""

    def value(row, bench):
        cell = row.cells.get(bench.key)
        minutes = cell.minutes if cell else None
        return accelerator_hours(row, minutes) if per_accelerator else minutes

    unit = gettext("accelerator-hours") if per_accelerator else gettext("min")
    data = []
    styles = vendor_styles(
        [(vendor_of(r.accelerator_model or r.processor_model or ""), r.slug) for r in systems]
    )
    for row, marker in zip(systems, styles):
        keys = [b for b in benchmarks if value(row, b) is not None]
        data.append(
            {
                "type": "scatter",
                "mode": "markers",
                "orientation": "h",
                "name": f"{row.submitter}: {row.name}",
                "x": [round(value(row, b), 4) for b in keys],
                "y": [b.name for b in keys],
                "customdata": [row.cells[b.key].url for b in keys],
                "hovertemplate": "%{y}: %{x:.2f} " + unit + "<extra>%{fullData.name}</extra>",
                "marker": {**marker, "size": 12},
            }
        )
    if not any(d["y"] for d in data):
        return None
    if per_accelerator:
        title, x_title = (
            gettext("Accelerator-hours to train per benchmark (hours × accelerators)"),
            gettext("Accelerator-hours (log)"),
        )
    else:
        title, x_title = gettext("Minutes to train per benchmark"), gettext("Minutes (log)")
    layout = _layout(title, x_title, "", x_log=True)
    shown = {
        name for trace in data for name in trace["y"]
    }  # no empty slot for a benchmark none has
    names = [b.name for b in benchmarks if b.name in shown]
    layout["yaxis"].update(
        type="category",
        categoryorder="array",
        categoryarray=names,
        autorange="reversed",  # the table's order, from the top
        automargin=True,
    )
    layout["scattermode"] = "group"
    layout["height"] = max(320, 140 + 26 * len(names) * max(len(systems), 2))
    return _full_log_labels({"data": data, "layout": layout})


def front(points: list[tuple[float, float]]) -> set[int]:
    """The positions of the points on the front: those that no other point beats on both axes (as fast or
    faster, and using as little energy or less, and better on one)."""
    on = set()
    for i, (x, y) in enumerate(points):
        if not any(
            (a <= x and b <= y) and (a < x or b < y) for j, (a, b) in enumerate(points) if j != i
        ):
            on.add(i)
    return on


def time_energy(rows: list[Row], bench: Bench | None) -> dict | None:
    """Energy to train (kJ) against minutes to train for one benchmark, a point per power result; the
    points on the front (nothing both faster and cheaper in energy) are joined by a line and named so."""
    if bench is None:
        return None
    points = [
        (cell.minutes, cell.energy_kj, row)
        for row in rows
        if (cell := row.cells.get(bench.key)) and cell.minutes and cell.energy_j
    ]
    if not points:
        return None
    on = front([(p[0], p[1]) for p in points])
    data = []
    for i, (name, chosen) in enumerate(
        (
            (
                gettext("On the front"),
                sorted((p for k, p in enumerate(points) if k in on), key=lambda p: p[0]),
            ),
            (gettext("Behind the front"), [p for k, p in enumerate(points) if k not in on]),
        )
    ):
        if not chosen:
            continue
        data.append(
            {
                "type": "scatter",
                "mode": "lines+markers" if i == 0 else "markers",
                "name": name,
                "x": [round(p[0], 4) for p in chosen],
                "y": [round(p[1], 1) for p in chosen],
                "text": [
                    f"{p[2].submitter}: {p[2].name} ({p[2].distinct or p[2].key})" for p in chosen
                ],
                "customdata": [p[2].cells[bench.key].url for p in chosen],
                "hovertemplate": "%{text}<br>"
                + gettext("%(minutes)s min, %(energy)s kJ")
                % {"minutes": "%{x:.2f}", "energy": "%{y:,.0f}"}
                + "<extra>"
                + name
                + "</extra>",
                "line": {"color": PALETTE[i], "dash": "dash", "shape": "hv"},
                "marker": _style(i),
            }
        )
    return _full_log_labels(
        {
            "data": data,
            "layout": _layout(
                gettext("Time and energy: %(benchmark)s") % {"benchmark": bench.name},
                gettext("Minutes to train (log)"),
                gettext("Energy to train, kJ (log)"),
                x_log=True,
                y_log=True,
            ),
        }
    )


def power(run) -> dict | None:
    """Each node's power (W) over one run's measurement, seconds from run_start, with run_start and
    run_stop marked (run.power_trace, from the run's power logs)."""
    trace = run.power_trace or {}
    nodes = trace.get("nodes") or {}
    if not nodes:
        return None
    data = []
    for i, (name, points) in enumerate(
        sorted(nodes.items(), key=lambda kv: int(kv[0].rpartition("_")[2] or 0))
    ):
        if isinstance(points, dict):
            x, y = points["s"], points["w"]
        else:  # [[s, W], ...], as runs checked before 2026-11-28 keep it
            x, y = [p[0] for p in points], [p[1] for p in points]
        data.append(
            {
                "type": "scatter",
                "mode": "lines",
                "name": name.replace("_", " "),
                "x": x,
                "y": y,
                "line": {"color": PALETTE[i % len(PALETTE)], "dash": DASHES[i % len(DASHES)]},
                "hovertemplate": "%{x:.0f} s, %{y:,.0f} W<extra>" + name + "</extra>",
            }
        )
    layout = _layout(
        gettext("Power of each node, run %(index)s") % {"index": run.index},
        gettext("Seconds from run_start"),
        gettext("Power, W"),
    )
    layout["showlegend"] = len(data) <= 16
    marks = [(0, "run_start"), (trace.get("run_s"), "run_stop")]
    layout["shapes"] = [
        {
            "type": "line",
            "yref": "paper",
            "y0": 0,
            "y1": 1,
            "x0": x,
            "x1": x,
            "line": {"color": "#1b1f24", "width": 2, "dash": "dash"},
        }
        for x, _ in marks
        if x is not None
    ]
    layout["annotations"] = [
        {"yref": "paper", "y": 1, "x": x, "xanchor": "left", "showarrow": False, "text": label}
        for x, label in marks
        if x is not None
    ]
    return {"data": data, "layout": layout}
