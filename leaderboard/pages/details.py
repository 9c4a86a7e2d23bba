"""A system's page and a result's page (with its runs, curves, findings and runs export).

Public results for everyone; before publication also to those who may see their submission
(leaderboard.access.policy: its organisation, the round's reviewers, staff, and in review the round's other
submitters), with a notice that says why the result is not public yet."""

import json
import uuid

from django.db.models import Count
from django.http import Http404, HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.cache import add_never_cache_headers
from django.utils.translation import gettext
from django.views.decorators.http import require_safe

from .. import panels
from ..access import policy, public
from ..catalogue import findings_words, quality
from ..catalogue.prices import cloud_scale, training_cost
from ..models import CloudPrice, Run
from ..roundtable.exports import FORMATS, runs_frame
from . import charts, power_twins
from .common import download, json_script

# Several submissions of one system may be visible to a viewer at one address (a fix uploaded in review, a
# later bundle): the page shows the published one, else the latest.
NEWEST_FIRST = ("-published", "-system__submission__created_at", "-pk")


def visible_results(request, round_key, submitter, system_key):
    """The results at a system's address that the request's user may see (leaderboard.access.policy), each
    marked `is_public`, with what their pages show joined in. `?system=<uid>` picks one system where
    several share the address (leaderboard.roundtable.rows.address_apart)."""
    results = (
        public.with_public_flag(policy.results_for(policy.viewer(request.user)))
        .select_related("system__round", "system__submitter", "system__submission", "benchmark")
        .filter(
            system__round__key=round_key,
            system__submitter__name=submitter,
            system__key=system_key,
        )
    )
    chosen = system_uid(request)
    return results.filter(system__uid=chosen) if chosen else results


def system_uid(request) -> uuid.UUID | None:
    try:
        return uuid.UUID(request.GET.get("system", ""))
    except ValueError:
        return None


def result_at(request, round_key, submitter, system_key, benchmark_key):
    """The result at this address that the user may see, or 404 as if there were none."""
    result = (
        visible_results(request, round_key, submitter, system_key)
        .filter(benchmark__key=benchmark_key)
        .order_by(*NEWEST_FIRST)
        .first()
    )
    if result is None:
        raise Http404("No result you may see at this address.")
    return _note(result)


def _note(result):
    """Set result.not_public: '' for a public result, else why it is not (the page's notice says it)."""
    result.not_public = "" if result.is_public else public.why_not_public(result)
    return result


def never_cached_if(hidden: bool, response):
    """A page that shows a result the public may not see yet is for its viewer only: no shared or
    browser cache may keep it (the site header already makes every page per user; this tells caches)."""
    if hidden:
        add_never_cache_headers(response)
    return response


@require_safe
def system_page(request, round_key, submitter, system_key):
    visible = visible_results(request, round_key, submitter, system_key)
    first = visible.order_by("-system__published", *NEWEST_FIRST).first()
    if first is None:
        raise Http404("No result you may see for this system.")
    system = first.system
    results = list(visible.filter(system=system).order_by("benchmark__position"))
    prices = list(CloudPrice.objects.filter(round=system.round))
    scale = cloud_scale(prices, system.submitter.name, system.key, system.name)
    checks = panels.reference_checks([r.id for r in results])
    runs = dict(
        Run.objects.filter(result__in=results)
        .values("result")
        .annotate(n=Count("id"))
        .values_list("result", "n")
    )
    for result in results:
        _note(result)
        result.cost = training_cost(scale, result.score_s)
        result.runs_total = runs.get(result.id, 0)
        result.flags = findings_words.reader_flags(
            result.score_s, result.score_message, result.not_public, checks.get(result.id, [])
        )
    # The page's notice: the system is public when one of its results is; else why not, when its results
    # agree on that.
    reasons = {r.not_public for r in results if r.not_public}
    not_public = ""
    if not any(r.is_public for r in results):
        only = next(iter(reasons)) if len(reasons) == 1 else ""
        not_public = only or "none of its results is public yet, each says why"
    description = system.description if isinstance(system.description, dict) else {}
    response = render(
        request,
        "leaderboard/system.html",
        {
            "system": system,
            "results": results,
            "not_public": not_public,
            "scale": scale,
            "scale_lines": [
                (gettext("This system"), scale.price),
                (gettext("Reference"), scale.reference),
            ]
            if scale and scale.value is not None
            else [],
            "description": description,
            # The system asked for by uid (published side by side): its results' links keep it.
            "query": f"?system={system.uid}" if system_uid(request) else "",
            "is_cloud": system.category == "cloud",
            "power_twin": power_twins.explanation(system.submitter.name, system.name),
            # Columns that would be empty for every result are left out.
            "has_speedup": any(r.speedup for r in results),
            "has_energy": any(r.energy_j is not None for r in results),
            "has_flags": any(r.flags for r in results),
            "has_cost": any(r.cost for r in results),
        },
    )
    return never_cached_if(bool(reasons), response)


@require_safe
def result_page(request, round_key, submitter, system_key, benchmark_key):
    result = result_at(request, round_key, submitter, system_key, benchmark_key)
    runs = list(result.runs.all())
    fmt = request.GET.get("format")
    if fmt is not None:
        name = f"{round_key}-{submitter}-{system_key}-{benchmark_key}-runs"
        return _runs_export(result, runs, fmt, name)
    bench = result.benchmark
    x_label = next((r.eval_x for r in runs if r.eval_x), "") or "epoch"
    system = result.system
    log_of = _link_run_logs(request, round_key, result, runs)
    raw = [
        f
        for f in panels.findings([result.id])[result.id]
        if f.get("rule") not in findings_words.NOT_FOR_READERS
    ]
    findings = _link_findings(findings_words.for_readers(raw), result, log_of)
    checks = panels.reference_checks([result.id])[result.id]
    response = render(
        request,
        "leaderboard/result.html",
        {
            "result": result,
            "not_public": result.not_public,
            "system": system,
            "runs": runs,
            "quality_target": quality.target_text(
                bench.key, bench.quality_target, bench.higher_is_better
            ),
            # What changes how the score reads, at the top; the checks' findings once, below, counted
            # the same way wherever the page counts them.
            "reader_flags": findings_words.reader_flags(
                result.score_s, result.score_message, result.not_public, checks
            ),
            "findings": findings,
            "findings_summary": findings_words.summary(raw, result.advisory),
            "reference_checks": checks,
            "panels": panels.registered(),
            "hyperparameters": _hyperparameters(runs),
            "curve_chart": json_script(
                charts.convergence(runs, bench.quality_target, bench.higher_is_better, x_label)
            ),
            **_power_context(request, result, runs),
            "power_twin": power_twins.explanation(system.submitter.name, system.name),
            "cost": _cost(system, result.score_s),
        },
    )
    return never_cached_if(bool(result.not_public), response)


def _runs_export(result, runs, fmt: str, name: str) -> HttpResponse:
    """The result's runs as CSV or JSON (?format=)."""
    if fmt not in FORMATS:
        return HttpResponseBadRequest(
            gettext("Unknown format %(format)r: use format=csv or format=json.") % {"format": fmt},
            content_type="text/plain",
        )
    body = FORMATS[fmt].render(runs_frame(result, runs))
    return never_cached_if(bool(result.not_public), download(body, FORMATS[fmt], name))


def _link_run_logs(request, round_key: str, result, runs) -> dict[str, str]:
    """Give each run its log page's address and its file's name within the result's folder; the
    addresses by the log's path."""
    system, chosen = result.system, system_uid(request)
    log_of = {}
    for run in runs:
        run.log_url = reverse(
            "leaderboard:run-log",
            args=[round_key, system.submitter.name, system.key, result.benchmark.key, run.index],
        ) + (f"?system={chosen}" if chosen else "")
        log_of[run.path] = run.log_url
        # The file's name: the folder is the result's, said once above the table.
        run.file = run.path.removeprefix(result.path + "/")
    return log_of


def _link_findings(findings: list[dict], result, log_of: dict[str, str]) -> list[dict]:
    """Say where each finding is within the result's folder; one on a run's log links to its line."""
    for f in findings:
        file = f.get("file") or ""
        f["where"] = "" if file == result.path else file.removeprefix(result.path + "/")
        url = log_of.get(file)
        if url:
            f["log_url"] = url + (f"?line={f['line']}#L{f['line']}" if f.get("line") else "")
    return findings


def _cost(system, score_s):
    prices = list(CloudPrice.objects.filter(round=system.round))
    scale = cloud_scale(prices, system.submitter.name, system.key, system.name)
    return training_cost(scale, score_s)


def _power_context(request, result, runs) -> dict:
    """A power result's energy per accelerator and one run's power plot: the run asked for
    (?power_run=N), else the first counted run with a trace."""
    if not result.power_result:
        return {}
    count = result.system.accelerator_count
    traced = [run for run in runs if (run.power_trace or {}).get("nodes")]
    asked = request.GET.get("power_run", "")
    shown = next((r for r in traced if str(r.index) == asked), None) or next(
        (r for r in traced if r.counted), next(iter(traced), None)
    )
    return {
        "energy_per_accelerator": result.energy_j / count
        if result.energy_j is not None and count
        else None,
        "power_runs": traced,
        "power_run": shown,
        "power_chart": json_script(charts.power(shown)) if shown else "",
    }


@require_safe
def public_id_page(request, public_id):
    """/id/5.1-0042: MLPerf's public id of a result leads to its page while the result is public."""
    result = get_object_or_404(
        public.results().select_related("system__round", "system__submitter", "benchmark"),
        public_id=public_id,
    )
    system = result.system
    shared = public.results().filter(
        system__round=system.round,
        system__submitter=system.submitter,
        system__key=system.key,
        benchmark=result.benchmark,
    )
    if shared.count() > 1:  # folders published side by side (tables.address_apart)
        return redirect(f"{result.get_absolute_url()}?system={system.uid}")
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
