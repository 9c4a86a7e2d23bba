"""A run's log in the browser: a page of numbered lines, MLPerf records picked out, the lines that
findings name marked, a permalink per line (?line=N#LN opens the page that holds line N).

A log is shown exactly to whoever sees its result page (leaderboard.public); its bytes come from the stored
bundle through leaderboard.panels, which the submissions app fills.
"""

from django.http import Http404
from django.shortcuts import render
from django.views.decorators.http import require_safe

from .. import findings_words, logview, panels
from .details import never_cached_if, result_at


def _number(value, default: int = 1) -> int:
    try:
        return max(1, min(int(value), 10**9))
    except (TypeError, ValueError):
        return default


@require_safe
def run_log(request, round_key, submitter, system_key, benchmark_key, index):
    # Published logs for everyone; before publication, to those who may see the result (leaderboard.public),
    # with the result page's notice.
    result = result_at(request, round_key, submitter, system_key, benchmark_key)
    run = result.runs.filter(index=index).first()
    if run is None:
        raise Http404("No run log you may read at this address.")
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
    try:
        page = logview.read_page(open_log, number) if open_log else None
    except OSError:  # the bundle went between finding the file and reading it
        page = None
    if page:
        by_line = {}
        for f in findings:
            if f.get("line"):
                by_line.setdefault(f["line"], []).append(f)
        for item in page.lines:
            item.marks = by_line.get(item.number, [])
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
        },
        status=200 if page else 404,
    )
    return never_cached_if(bool(result.not_public), response)
