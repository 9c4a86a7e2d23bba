"""A run's log in the browser: a page of numbered lines, each MLPerf record's key and value picked out, the
lines that findings name marked, a permalink per line (?line=N#LN opens the page that holds line N); a search
over the whole log (?q=) and a filter by record key (?key=), each listing its lines with links; jumps to
run_start, run_stop, the first eval_accuracy and the first finding; and the file itself (raw/).

A log is shown exactly to whoever sees its result page (leaderboard.access.policy); its bytes come from the stored
bundle through leaderboard.panels, which the submissions app fills.
"""

from django.http import FileResponse, Http404
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_safe

from .. import panels
from ..catalogue import findings_words
from ..logviewer import logview
from ..logviewer.loghtml import lines_html
from .common import attachment
from .details import never_cached_if, result_at


def _number(value, default: int = 1) -> int:
    try:
        return max(1, min(int(value), 10**9))
    except (TypeError, ValueError):
        return default


def _run_of(request, round_key, submitter, system_key, benchmark_key, index):
    # Published logs for everyone; before publication, to those who may see the result (leaderboard.access.policy),
    # with the result page's notice.
    result = result_at(request, round_key, submitter, system_key, benchmark_key)
    run = result.runs.filter(index=index).first()
    if run is None:
        raise Http404("No run log you may read at this address.")
    return result, run


@require_safe
def run_log(request, round_key, submitter, system_key, benchmark_key, index):
    result, run = _run_of(request, round_key, submitter, system_key, benchmark_key, index)
    system = result.system
    findings = [
        f
        for f in findings_words.for_readers(panels.findings([result.id])[result.id])
        if f.get("file") == run.path
    ]
    line = _number(request.GET.get("line"), 0) if request.GET.get("line") else 0
    number = logview.page_of_line(line) if line else _number(request.GET.get("page"))
    submission = system.submission
    open_log = panels.log_opener(submission.pk, submission.bundle.name, run.path)
    query = (request.GET.get("q") or "").strip()[:200]
    key = (request.GET.get("key") or "").strip()[:100]
    try:
        page = logview.read_page(open_log, number) if open_log else None
        index_ = logview.scan(open_log, query, key) if page else None
    except OSError:  # the bundle went between finding the file and reading it
        page = index_ = None
    if page:
        _mark_findings(page, findings)
    response = render(
        request,
        "leaderboard/log.html",
        {
            "not_public": result.not_public,
            "run": run,
            "result": result,
            "system": system,
            "page": page,
            "target": line,
            "findings": findings,
            "other_runs": list(result.runs.order_by("index").values_list("index", "path")),
            "query": query,
            "key": key,
            "index": index_,
            "jumps": _jumps(index_, findings) if index_ else [],
            "lines_html": lines_html(page, line) if page else "",
            "raw_url": reverse(
                "leaderboard:run-log-raw",
                args=[
                    round_key,
                    system.submitter.name,
                    system.key,
                    result.benchmark.key,
                    run.index,
                ],
            ),
        },
        status=200 if page else 404,
    )
    return never_cached_if(bool(result.not_public), response)


def _jumps(index_, findings: list[dict]) -> list[tuple[str, int]]:
    """The log's landmarks (run_start, the first eval ...) and its first finding, as (name, line)."""
    words = {"eval_accuracy": "first eval_accuracy"}
    jumps = [
        (words.get(k, k), index_.landmarks[k]) for k in logview.LANDMARKS if k in index_.landmarks
    ]
    first_finding = min((f["line"] for f in findings if f.get("line")), default=None)
    if first_finding:
        jumps.append(("first finding", first_finding))
    return jumps


def _mark_findings(page, findings: list[dict]) -> None:
    """Each line of the page holds the findings on it."""
    by_line = {}
    for f in findings:
        if f.get("line"):
            by_line.setdefault(f["line"], []).append(f)
    for item in page.lines:
        item.marks = by_line.get(item.number, [])


@require_safe
def run_log_raw(request, round_key, submitter, system_key, benchmark_key, index):
    """The run's log file as it is in the bundle, as plain text, to download."""
    result, run = _run_of(request, round_key, submitter, system_key, benchmark_key, index)
    submission = result.system.submission
    open_log = panels.log_opener(submission.pk, submission.bundle.name, run.path)
    if open_log is None:
        raise Http404("This log is no longer stored.")
    try:
        f = open_log()
    except OSError:
        raise Http404("This log is no longer stored.") from None
    response = FileResponse(f, content_type="text/plain; charset=utf-8")
    name = f"{round_key}-{submitter}-{system_key}-{benchmark_key}-{run.path.rsplit('/', 1)[-1]}"
    response["Content-Disposition"] = attachment(name)
    response["X-Content-Type-Options"] = "nosniff"
    return never_cached_if(bool(result.not_public), response)
