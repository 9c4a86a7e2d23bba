"""A system's page and a result's page (with its runs, curves, findings and runs export)."""

import json

from django.http import Http404, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_safe

from .. import charts, findings_words, panels, public, quality
from ..exports import FORMATS, runs_frame
from ..models import CloudPrice, Result, System
from ..prices import cloud_scale
from .common import download, json_script


def _public_system(round_key, submitter, system_key):
    return get_object_or_404(
        System.objects.select_related("round", "submitter"),
        round__key=round_key,
        submitter__name=submitter,
        key=system_key,
        published=True,
    )


@require_safe
def system_page(request, round_key, submitter, system_key):
    system = _public_system(round_key, submitter, system_key)
    results = list(
        public.results()
        .filter(system=system)
        .select_related("benchmark")
        .order_by("benchmark__position")
    )
    if not results:
        raise Http404("No published results for this system.")
    prices = list(CloudPrice.objects.filter(round=system.round))
    scale = cloud_scale(prices, system.submitter.name, system.key, system.name)
    for result in results:
        result.findings_note = public.findings_note(
            result.error_count, result.warning_count, result.advisory
        )
    description = system.description if isinstance(system.description, dict) else {}
    return render(
        request,
        "leaderboard/system.html",
        {
            "system": system,
            "results": results,
            "scale": scale,
            "scale_lines": [("This system", scale.price), ("Reference", scale.reference)]
            if scale and scale.value is not None
            else [],
            "description": description,
            "is_cloud": system.category == "cloud",
        },
    )


@require_safe
def result_page(request, round_key, submitter, system_key, benchmark_key):
    try:
        result = (
            public.results()
            .select_related("system__round", "system__submitter", "benchmark")
            .get(
                system__round__key=round_key,
                system__submitter__name=submitter,
                system__key=system_key,
                benchmark__key=benchmark_key,
            )
        )
    except Result.DoesNotExist:
        raise Http404("No published result at this address.") from None
    runs = list(result.runs.all())
    fmt = request.GET.get("format")
    if fmt is not None:
        if fmt not in FORMATS:
            return HttpResponseBadRequest(
                f"Unknown format {fmt!r}: use format=csv or format=json.", content_type="text/plain"
            )
        name = f"{round_key}-{submitter}-{system_key}-{benchmark_key}-runs"
        return download(FORMATS[fmt].render(runs_frame(result, runs)), FORMATS[fmt], name)
    bench = result.benchmark
    x_label = next((r.eval_x for r in runs if r.eval_x), "") or "epoch"
    system = result.system
    log_of = {}
    for run in runs:
        run.log_url = reverse(
            "leaderboard:run-log",
            args=[round_key, system.submitter.name, system.key, bench.key, run.index],
        )
        log_of[run.path] = run.log_url
    raw = panels.findings([result.id])[result.id]
    findings = findings_words.for_readers(raw)
    for f in findings:  # a finding on a run's log links to its line there
        file = f.get("file") or ""
        f["where"] = "" if file == result.path else file.removeprefix(result.path + "/")
        url = log_of.get(file)
        if url:
            f["log_url"] = url + (f"?line={f['line']}#L{f['line']}" if f.get("line") else "")
    return render(
        request,
        "leaderboard/result.html",
        {
            "result": result,
            "system": system,
            "runs": runs,
            "quality_target": quality.target_text(
                bench.key, bench.quality_target, bench.higher_is_better
            ),
            "findings_note": public.findings_note(
                result.error_count, result.warning_count, result.advisory
            ),
            "findings": findings,
            "findings_summary": findings_words.summary(raw, result.advisory),
            "reference_checks": panels.reference_checks([result.id])[result.id],
            "panels": panels.registered(),
            "hyperparameters": _hyperparameters(runs),
            "curve_chart": json_script(
                charts.convergence(runs, bench.quality_target, bench.higher_is_better, x_label)
            ),
        },
    )


@require_safe
def public_id_page(request, public_id):
    """/id/5.1-0042: MLPerf's public id of a result leads to its page while the result is public."""
    result = get_object_or_404(
        public.results().select_related("system__round", "system__submitter", "benchmark"),
        public_id=public_id,
    )
    return redirect(result)


def _hyperparameters(runs) -> list[tuple[str, str, bool]]:
    """(name, value(s), differs) over the runs: one value when all runs agree, else each distinct one."""
    values: dict[str, list] = {}
    for run in runs:
        for name, value in (run.hyperparameters or {}).items():
            values.setdefault(name, []).append(
                json.dumps(value) if not isinstance(value, str) else value
            )
    out = []
    for name in sorted(values):
        distinct = list(dict.fromkeys(values[name]))
        out.append((name, ", ".join(distinct), len(distinct) > 1))
    return out
