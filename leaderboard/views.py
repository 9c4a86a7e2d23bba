"""Public pages: rounds, a round's table (with its charts and exports), a system, a result,
a comparison of systems, and progress across rounds.

Only public results (leaderboard.public) appear. The round table's HTML and exports are
cached per round under its cache token (leaderboard.cache), keyed by the query string.
"""

import gzip
import json
from urllib.parse import urlencode

from django.db.models import Min
from django.http import Http404, HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.utils.cache import patch_vary_headers
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_safe

from . import cache, charts, panels, public
from .exports import FORMATS, runs_frame, table_frame
from .models import Benchmark, CloudPrice, Division, Result, Round, System
from .prices import cloud_scale
from .tablehtml import rows_html
from .tables import round_data
from .tableview import TableView, sections

CONTROL_PARAMS = ("partial", "format")


def _raw_key(request) -> str:
    """The request's query string in a fixed order, without the parameters that pick the output."""
    items = sorted((k, v) for k, values in request.GET.lists() for v in values if k not in CONTROL_PARAMS)
    return urlencode(items)


def _json_script(figure) -> str:
    return "" if figure is None else json.dumps(figure, separators=(",", ":")).replace("<", "\\u003c")


def _download(body: bytes, writer, filename: str) -> HttpResponse:
    response = HttpResponse(body, content_type=writer.content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}.{writer.extension}"'
    return response


@require_safe
def home(request):
    rounds = list(Round.objects.all())
    return render(request, "leaderboard/home.html", {"rounds": rounds})


@require_safe
def round_page(request, round_key):
    round_ = get_object_or_404(Round, key=round_key)
    other = request.GET.get("round")
    if other and other != round_.key:
        target = get_object_or_404(Round, key=other)
        rest = [(k, v) for k, vs in request.GET.lists() for v in vs if k not in ("round", "partial")]
        return redirect(target.get_absolute_url() + (f"?{urlencode(rest)}" if rest else ""))

    fmt = request.GET.get("format")
    if fmt is not None and fmt not in FORMATS:
        return HttpResponseBadRequest(f"Unknown format {fmt!r}: use format=csv or format=json.", content_type="text/plain")
    partial = request.GET.get("partial") == "1"
    raw = _raw_key(request)
    base_url = request.build_absolute_uri("/").rstrip("/")
    # What is cached is the whole response body, gzipped once; it differs only by output kind
    # and, for the full page, whether the site header shows the signed-in links.
    if fmt:
        kind = f"export-{fmt}"
    elif partial:
        kind = "results"
    else:
        kind = f"page-{int(request.user.is_authenticated)}"

    def build() -> bytes:
        data = round_data(round_)
        view, form = TableView.from_query(request.GET, data)
        if fmt:
            body = FORMATS[fmt].render(table_frame(view, data, base_url))
        else:
            context = _round_context(round_, data, view, form)
            if partial:
                body = render_to_string("leaderboard/_round_results.html", context).encode()
            else:
                inner = mark_safe(render_to_string("leaderboard/_round_body.html", context))
                body = render_to_string("leaderboard/round.html", {"round": round_, "body": inner}, request).encode()
        return gzip.compress(body, compresslevel=6, mtime=0)

    packed = cache.get_or_set(cache.key(round_, kind, raw, base_url if fmt else ""), build)
    if fmt:
        writer = FORMATS[fmt]
        response = _gzipped(request, packed, writer.content_type)
        response["Content-Disposition"] = (
            f'attachment; filename="{round_.key}{"-filtered" if raw else ""}.{writer.extension}"'
        )
        return response
    return _gzipped(request, packed, "text/html; charset=utf-8")


def _gzipped(request, packed: bytes, content_type: str) -> HttpResponse:
    """Send a cached gzip body as it is when the client takes gzip (browsers do), else unpacked."""
    if "gzip" in request.META.get("HTTP_ACCEPT_ENCODING", ""):
        response = HttpResponse(packed, content_type=content_type)
        response["Content-Encoding"] = "gzip"
    else:
        response = HttpResponse(gzip.decompress(packed), content_type=content_type)
    patch_vary_headers(response, ("Accept-Encoding", "Cookie"))
    return response


def _round_context(round_, data, view: TableView, form) -> dict:
    rows = view.rows(data)
    benches = view.benchmarks(data)
    secs = sections(rows)
    headers = []
    for bench in benches:
        qs, state = view.sort_link(f"b.{bench.key}", data)
        unit = "kJ" if view.show == "energy" else "×" if view.shows_speedup(bench) else "min"
        headers.append({"bench": bench, "qs": qs, "aria_sort": state, "unit": unit})
    columns = {}
    for column in ("submitter", "system", "processor", "accelerator", "software", "cloud_scale", "power"):
        qs, state = view.sort_link(column, data)
        columns[column] = {"qs": qs, "aria_sort": state}
    chart_bench = next((b for b in benches if b.key == view.chart), None) or next(
        (b for b in benches if any(b.key in r.cells for r in rows)), None
    )
    query = view.query()
    return {
        "round": round_, "rounds": list(Round.objects.values_list("key", "name")),
        "data": data, "view": view, "form": form, "benchmarks": benches, "headers": headers, "columns": columns,
        "sections": [(s, mark_safe(rows_html(view, s.rows, benches, cloud_scale=data.has_cloud_scale,
                                                 power=data.has_energy))) for s in secs],
        "shown": len(rows), "total": len(data.rows), "results_shown": sum(len(r.cells) for r in rows),
        "query": query, "csv_query": urlencode([*view.params(), ("format", "csv")]),
        "json_query": urlencode([*view.params(), ("format", "json")]),
        "scaling_chart": _json_script(charts.scaling(rows, chart_bench)), "chart_bench": chart_bench,
        "cost_chart": _json_script(charts.cost(rows, benches)),
        "show_cloud_scale": data.has_cloud_scale, "show_power": data.has_energy,
        "ncols": 6 + len(benches) + data.has_cloud_scale + data.has_energy,
    }


def _public_system(round_key, submitter, system_key):
    return get_object_or_404(
        System.objects.select_related("round", "submitter"),
        round__key=round_key, submitter__name=submitter, key=system_key, published=True,
    )


@require_safe
def system_page(request, round_key, submitter, system_key):
    system = _public_system(round_key, submitter, system_key)
    results = list(public.results().filter(system=system).select_related("benchmark").order_by("benchmark__position"))
    if not results:
        raise Http404("No published results for this system.")
    prices = list(CloudPrice.objects.filter(round=system.round))
    scale = cloud_scale(prices, system.submitter.name, system.key, system.name)
    for result in results:
        result.findings_note = public.findings_note(result.error_count, result.warning_count, result.advisory)
    description = sorted(
        (k, v) for k, v in (system.description or {}).items() if v not in ("", None, [], {})
    ) if isinstance(system.description, dict) else []
    return render(request, "leaderboard/system.html", {
        "system": system, "results": results, "scale": scale, "description": description,
        "is_cloud": system.category == "cloud",
    })


@require_safe
def result_page(request, round_key, submitter, system_key, benchmark_key):
    try:
        result = public.results().select_related("system__round", "system__submitter", "benchmark").get(
            system__round__key=round_key, system__submitter__name=submitter,
            system__key=system_key, benchmark__key=benchmark_key,
        )
    except Result.DoesNotExist:
        raise Http404("No published result at this address.")
    runs = list(result.runs.all())
    fmt = request.GET.get("format")
    if fmt is not None:
        if fmt not in FORMATS:
            return HttpResponseBadRequest(f"Unknown format {fmt!r}: use format=csv or format=json.", content_type="text/plain")
        name = f"{round_key}-{submitter}-{system_key}-{benchmark_key}-runs"
        return _download(FORMATS[fmt].render(runs_frame(result, runs)), FORMATS[fmt], name)
    bench = result.benchmark
    x_label = next((r.eval_x for r in runs if r.eval_x), "") or "epoch"
    system = result.system
    return render(request, "leaderboard/result.html", {
        "result": result, "system": system, "runs": runs,
        "findings_note": public.findings_note(result.error_count, result.warning_count, result.advisory),
        "findings": panels.findings([result.id])[result.id],
        "reference_checks": panels.reference_checks([result.id])[result.id],
        "panels": panels.registered(),
        "hyperparameters": _hyperparameters(runs),
        "curve_chart": _json_script(charts.convergence(runs, bench.quality_target, bench.higher_is_better, x_label)),
    })


def _hyperparameters(runs) -> list[tuple[str, str, bool]]:
    """(name, value(s), differs) over the runs: one value when all runs agree, else each distinct one."""
    values: dict[str, list] = {}
    for run in runs:
        for name, value in (run.hyperparameters or {}).items():
            values.setdefault(name, []).append(json.dumps(value) if not isinstance(value, str) else value)
    out = []
    for name in sorted(values):
        distinct = list(dict.fromkeys(values[name]))
        out.append((name, ", ".join(distinct), len(distinct) > 1))
    return out


@require_safe
def compare_page(request, round_key):
    round_ = get_object_or_404(Round, key=round_key)
    data = round_data(round_)
    by_slug = {row.slug: row for row in data.rows}
    wanted = list(dict.fromkeys(request.GET.getlist("s")))
    chosen = [by_slug[s] for s in wanted if s in by_slug]
    unknown = [s for s in wanted if s not in by_slug]
    error = ""
    if len(chosen) < 2:
        error = "Pick at least two systems to compare (tick them in the round table)."
    elif len(chosen) > 4:
        error = "Compare at most four systems at once; the first four are shown."
        chosen = chosen[:4]
    try:
        base = min(max(int(request.GET.get("base", 0)), 0), max(len(chosen) - 1, 0))
    except ValueError:
        base = 0
    lines = []
    for bench in data.benchmarks:
        if not any(bench.key in row.cells for row in chosen):
            continue
        baseline = chosen[base].cells.get(bench.key) if chosen else None
        entries = []
        for row in chosen:
            cell = row.cells.get(bench.key)
            ratio = None
            if cell and baseline and cell.score_s and baseline.score_s:
                ratio = baseline.score_s / cell.score_s
            entries.append({"cell": cell, "ratio": ratio})
        lines.append({"bench": bench, "entries": entries})
    return render(request, "leaderboard/compare.html", {
        "round": round_, "systems": chosen, "lines": lines, "base": base, "error": error, "unknown": unknown,
        "chart": _json_script(charts.compare(chosen, data.benchmarks)) if len(chosen) >= 2 else "",
        "base_links": [urlencode([*(("s", r.slug) for r in chosen), ("base", i)]) for i in range(len(chosen))],
    })


@require_safe
def progress_page(request):
    division = request.GET.get("division", "closed")
    if division not in Division.values:
        division = "closed"
    rounds = list(Round.objects.order_by("publication_date", "key"))
    key = cache.catalogue_key("progress", [f"{r.key}:{r.cache_token}" for r in rounds], division)

    def build():
        best = (
            public.results().filter(system__division=division, score_s__isnull=False)
            .values("system__round__key", "benchmark__key").annotate(best=Min("score_s"))
        )
        bests = {(b["system__round__key"], b["benchmark__key"]): b["best"] for b in best}
        who = {}
        if bests:
            holders = public.results().filter(
                system__division=division, score_s__in=set(bests.values()),
            ).values_list("system__round__key", "benchmark__key", "score_s", "system__submitter__name", "system__name")
            for round_key, bench_key, score, submitter, name in holders:
                if bests.get((round_key, bench_key)) == score:
                    who.setdefault((round_key, bench_key), f"{submitter}: {name}")
        names = dict(  # the latest round's name of each benchmark key
            Benchmark.objects.order_by("round__publication_date", "round__key").values_list("key", "name")
        )
        series: dict[str, list] = {}
        table = []
        for r in rounds:
            for bench_key in sorted({k for (rk, k) in bests if rk == r.key}):
                minutes = bests[(r.key, bench_key)] / 60
                series.setdefault(bench_key, []).append((r.key, r.name, minutes, who.get((r.key, bench_key), "")))
        for bench_key, points in sorted(series.items()):
            first = points[0][2]
            for round_key, round_name, minutes, holder in points:
                table.append({
                    "bench": bench_key, "name": names.get(bench_key, bench_key), "round": round_name,
                    "round_key": round_key, "minutes": minutes, "holder": holder,
                    "gain": first / minutes if minutes else None,
                })
        chart = charts.progress(series, names, [r.name for r in rounds])
        return {"chart": _json_script(chart), "table": table}

    built = cache.get_or_set(key, build)
    return render(request, "leaderboard/progress.html", {
        "division": division, "divisions": Division.choices, **built,
    })
