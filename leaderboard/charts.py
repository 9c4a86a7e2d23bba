"""Plotly figures as plain dicts ({"data": [...], "layout": {...}}), drawn by plotly.js in the page.

Pure functions of the rows a page shows, so every chart follows the page's filters:
scaling (time to train against accelerator count, log–log, one benchmark, one trace per
accelerator type), cost (speedup against cloud scale), progress (best time per benchmark
across rounds) and convergence (each run's eval curve with the quality target).
Colour is never the only carrier of meaning: traces also differ by marker symbol or dash,
and every chart has a table on the same page with the same numbers.
"""

from .tables import Bench, Row

PALETTE = [
    "#0a58ca",
    "#d63384",
    "#198754",
    "#fd7e14",
    "#6f42c1",
    "#20c997",
    "#a40e26",
    "#6c757d",
    "#997404",
    "#0dcaf0",
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
    return {"color": PALETTE[i % len(PALETTE)], "symbol": SYMBOLS[i % len(SYMBOLS)], "size": 9}


def scaling(rows: list[Row], bench: Bench | None) -> dict | None:
    """Time to train (minutes) against accelerator count for one benchmark, by accelerator type."""
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
        label = (
            row.accelerator_model
            if row.accelerator_count
            else f"{row.processor_model} (processors)"
        )
        groups.setdefault(label or "unknown", []).append((count, cell.minutes, row))
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
                "hovertemplate": "%{text}<br>%{x} accelerators, %{y:.2f} min<extra>"
                + label.replace("%", "%%")
                + "</extra>",
                "marker": _style(i),
            }
        )
    return {
        "data": data,
        "layout": _layout(
            f"Scaling: {bench.name}",
            "Accelerators (log)",
            "Minutes to train (log)",
            x_log=True,
            y_log=True,
        ),
    }


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
    series: dict[str, list[tuple[str, str, float, str]]],
    names: dict[str, str],
    round_names: list[str],
) -> dict | None:
    """Best minutes per benchmark across rounds: {bench key: [(round key, round name, minutes, who)]},
    rounds along the x axis in the order of `round_names` (oldest first)."""
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
    return {"data": data, "layout": layout}


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
                "marker": {"symbol": SYMBOLS[i % len(SYMBOLS)], "size": 6},
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


def compare(systems, benchmarks: list[Bench]) -> dict | None:
    """Minutes to train per benchmark, one bar group per system (systems: list of Row)."""
    data = []
    for i, row in enumerate(systems):
        keys = [
            b for b in benchmarks if b.key in row.cells and row.cells[b.key].minutes is not None
        ]
        data.append(
            {
                "type": "bar",
                "name": f"{row.submitter}: {row.name}",
                "x": [b.key for b in keys],
                "y": [round(row.cells[b.key].minutes, 4) for b in keys],
                "marker": {
                    "color": PALETTE[i % len(PALETTE)],
                    "pattern": {"shape": ["", "/", ".", "x"][i % 4]},
                },
            }
        )
    if not any(d["x"] for d in data):
        return None
    layout = _layout("Minutes to train per benchmark", "Benchmark", "Minutes (log)", y_log=True)
    layout["xaxis"].update(
        type="category", categoryorder="array", categoryarray=[b.key for b in benchmarks]
    )
    layout["barmode"] = "group"
    return {"data": data, "layout": layout}
