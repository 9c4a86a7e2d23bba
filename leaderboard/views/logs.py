"""A run's log in the browser: a page of numbered lines, MLPerf records picked out, the lines that
findings name marked, a permalink per line (?line=N#LN opens the page that holds line N).

A log is public exactly when its result is (leaderboard.public); its bytes come from the stored
bundle through leaderboard.panels, which the submissions app fills.
"""

from django.http import Http404
from django.shortcuts import render
from django.views.decorators.http import require_safe

from .. import findings_words, logview, panels, public


def _number(value, default: int = 1) -> int:
    try:
        return max(1, min(int(value), 10**9))
    except (TypeError, ValueError):
        return default


@require_safe
def run_log(request, round_key, submitter, system_key, benchmark_key, index):
    # Published logs for everyone; a member's organisation's, a reviewer's round's and, in review, the
    # round's peers' too (leaderboard.public). Several submissions of one system may be visible to them: the
    # published one, else the latest.
    run = (
        public.runs_for(public.viewer(request.user))
        .select_related(
            "result__system__round",
            "result__system__submitter",
            "result__system__submission",
            "result__benchmark",
        )
        .filter(
            result__system__round__key=round_key,
            result__system__submitter__name=submitter,
            result__system__key=system_key,
            result__benchmark__key=benchmark_key,
            index=index,
        )
        .order_by("-result__published", "-result__system__submission__created_at", "-pk")
        .first()
    )
    if run is None:
        raise Http404("No run log you may read at this address.")
    result = run.result
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
    return render(
        request,
        "leaderboard/log.html",
        {
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
