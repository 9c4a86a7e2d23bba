"""The round page: the table, its filters and charts, and its exports, cached per round.

Read in one walk: `round_page` reads the round's rows (leaderboard/roundtable/rows.py), the view's
state from the query (roundtable/view.py), lays the rows out (roundtable/layout.py, htmlrows.py) and
renders templates/leaderboard/round.html around _round_body.html.

One cache: the whole response body, gzipped, under the round's cache token (leaderboard.cache), keyed
by the table's state as the page understands it (TableView.query: the parameters it knows, values it
accepts, a fixed order, defaults left out), so that a parameter or value the page does not know makes
no new copy; a publication replaces the token. A search (?q=, free text) is never kept, so the copies
are bounded by the table's states. The rows are not cached apart: a view not yet rendered
is a cold render, held to the same target (bench/leaderboard.py).
"""

import gzip
from urllib.parse import urlencode

from django.conf import settings
from django.http import Http404, HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.utils import translation
from django.utils.cache import patch_vary_headers
from django.utils.safestring import mark_safe
from django.utils.translation import gettext
from django.views.decorators.http import require_safe

from .. import cache
from ..access import policy, public
from ..models import Round, RoundImport
from ..roundtable.exports import FORMATS, headers_language, table_frame
from ..roundtable.form import checklists
from ..roundtable.htmlrows import rows_html
from ..roundtable.layout import shown_table
from ..roundtable.params import COLUMNS, NO_COLUMNS
from ..roundtable.rows import round_data
from ..roundtable.view import TableView
from . import charts, overview, power_twins
from .common import attachment, json_script

# What picks the output, not the table's state: its format, the page's language (portal/language.py: the
# cache keys carry the active language) and an export's column names (exports.headers_language).
CONTROL_PARAMS = ("partial", "format", "lang", "headers")


def _as_sent(request) -> str:
    """The request's query string without the parameters that pick the output: the canonical one
    (TableView.query) when the request came from one of the page's own links."""
    return urlencode(
        [(k, v) for k, values in request.GET.lists() for v in values if k not in CONTROL_PARAMS]
    )


@require_safe
def home(request):
    """Each round with its counts, the latest round's fastest result per benchmark, and a search
    for systems across rounds (?q=) whose hits link to their rows."""
    rounds = overview.round_counts()
    latest = next((r for r in rounds if r.results), None)
    q = request.GET.get("q", "").strip()[:100]
    hits, more = overview.search(q) if q else ([], False)
    return render(
        request,
        "leaderboard/home.html",
        {
            "rounds": rounds,
            "latest": latest,
            "fastest": overview.fastest(latest.round) if latest else [],
            "q": q,
            "hits": hits,
            "more": more,
            "may_import": policy.may_import_round(policy.viewer(request.user)),
        },
    )


@require_safe
def rounds_page(request):
    """Every round with its counts: what the menu's "Rounds" opens."""
    return render(
        request,
        "leaderboard/rounds.html",
        {
            "rounds": overview.round_counts(),
            "may_import": policy.may_import_round(policy.viewer(request.user)),
        },
    )


@require_safe
def round_page(request, round_key):
    round_ = cache.current_round(round_key)
    if round_ is None:
        raise Http404("No such round.")
    other = request.GET.get("round")
    if other and other != round_.key:
        target = get_object_or_404(Round, key=other)
        rest = [
            (k, v) for k, vs in request.GET.lists() for v in vs if k not in ("round", "partial")
        ]
        return redirect(target.get_absolute_url() + (f"?{urlencode(rest)}" if rest else ""))

    fmt = request.GET.get("format")
    if not fmt and round_.history and not public.results().filter(system__round=round_).exists():
        # Nothing of it here: MLCommons' own link (and its import's progress) instead of an empty table.
        # Not cached: the progress changes, and the query costs less than a millisecond.
        return render(
            request,
            "leaderboard/round.html",
            {**_import_context(request, round_), "not_here": True},
        )
    if fmt is not None and fmt not in FORMATS:
        return HttpResponseBadRequest(
            gettext("Unknown format %(format)r: use format=csv or format=json.") % {"format": fmt},
            content_type="text/plain",
        )
    answer = _Answer(request, round_, fmt)
    # The page's own links are canonical: one cache read answers them. Any other query is read as
    # the page reads it first, and its canonical state is what is looked up and kept. A search (?q=) is
    # rendered and not kept: its text is free, so each one would be a copy of its own (issue 34: 400
    # searches by one client kept 403 copies, 2.3 MB).
    searched = bool(request.GET.get("q", "").strip())
    packed = None if searched else cache.get(answer.key(_as_sent(request)))
    if packed is None:
        # An export's data is in English whatever the page's language (exports.table_frame): its rows too.
        with translation.override(settings.LANGUAGE_CODE if fmt else translation.get_language()):
            data = round_data(round_)
        view, form = TableView.from_query(request.GET, data)
        if view.q:
            packed = answer.build(data, view, form)
        else:
            packed = cache.get_or_set(
                answer.key(view.query()), lambda: answer.build(data, view, form)
            )
    return answer.respond(packed)


class _Answer:
    """What one request of a round's page is answered with, gzipped once and cached by its kind: the
    page, its results alone (?partial=1), or an export. For a signed-in user the full page's site
    header is their own (their name, their CSRF token, staff links): only the page's body is cached
    then, and the header is rendered around it for each request."""

    def __init__(self, request, round_: Round, fmt: str | None) -> None:
        self.request, self.round, self.fmt = request, round_, fmt
        self.partial = request.GET.get("partial") == "1"
        self.base_url = request.build_absolute_uri("/").rstrip("/")
        self.signed_in = request.user.is_authenticated
        self.headers = headers_language(request.GET.get("headers")) if fmt else None
        if fmt:
            self.kind = f"export-{fmt}-{self.headers}" if self.headers else f"export-{fmt}"
        elif self.partial:
            self.kind = "results"
        else:
            self.kind = "body" if self.signed_in else "page-0"

    def key(self, query: str) -> str:
        return cache.key(self.round, self.kind, query, self.base_url if self.fmt else "")

    def build(self, data, view: TableView, form) -> bytes:
        if self.fmt:
            body = FORMATS[self.fmt].render(table_frame(view, data, self.base_url, self.headers))
        else:
            context = _round_context(self.round, data, view, form)
            if self.partial:
                body = render_to_string("leaderboard/_round_results.html", context).encode()
            elif self.signed_in:
                body = render_to_string("leaderboard/_round_body.html", context).encode()
            else:
                inner = mark_safe(render_to_string("leaderboard/_round_body.html", context))
                body = render_to_string(
                    "leaderboard/round.html", {"round": self.round, "body": inner}, self.request
                ).encode()
        return gzip.compress(body, compresslevel=6, mtime=0)

    def respond(self, packed: bytes) -> HttpResponse:
        request, round_ = self.request, self.round
        if self.fmt:
            writer = FORMATS[self.fmt]
            response = _gzipped(request, packed, writer.content_type)
            response["Content-Disposition"] = attachment(
                f"{round_.key}{'-filtered' if _as_sent(request) else ''}.{writer.extension}"
            )
            return response
        if self.kind == "body":
            inner = mark_safe(gzip.decompress(packed).decode())
            response = render(
                request,
                "leaderboard/round.html",
                {**_import_context(request, round_), "body": inner},
            )
            patch_vary_headers(response, ("Cookie",))
            return response
        return _gzipped(request, packed, "text/html; charset=utf-8")


def _import_context(request, round_) -> dict:
    """The round, and what the page says of its import: how far one under way is, and for those who may
    import (policy.may_import_round) the last one's state and the button."""
    may_import = policy.may_import_round(policy.viewer(request.user))
    job = RoundImport.objects.filter(round=round_).first() if round_.history else None
    checked = overview.submissions_checked([round_.pk]).get(round_.pk, (0, 0)) if job else (0, 0)
    return {
        "round": round_,
        "may_import": may_import and round_.history,
        "job": job,
        "importing": overview.import_progress(job, *checked) if job else "",
    }


def _gzipped(request, packed: bytes, content_type: str) -> HttpResponse:
    """Send a cached gzip body as it is when the client takes gzip (browsers do), else unpacked."""
    if "gzip" in request.META.get("HTTP_ACCEPT_ENCODING", ""):
        response = HttpResponse(packed, content_type=content_type)
        response["Content-Encoding"] = "gzip"
    else:
        response = HttpResponse(gzip.decompress(packed), content_type=content_type)
    patch_vary_headers(response, ("Accept-Encoding", "Cookie"))
    return response


def _energy_bench(table):
    """The time/energy chart's benchmark: the charts' benchmark where it has energies in this view, else
    the first that has."""
    for bench in [table.chart_bench, *table.benchmarks]:
        if bench and any(
            (cell := row.cells.get(bench.key)) and cell.energy_j for row in table.rows
        ):
            return bench
    return None


def _round_context(round_, data, view: TableView, form) -> dict:
    table = shown_table(view, data)
    chosen = set(view.columns_chosen)
    return {
        "benchmarks": table.benchmarks,
        "col": {c: True for c in table.shown_columns},
        "chooser": [
            (key, label, key in chosen)
            for key, label in COLUMNS.items()
            if key not in ("cloud_scale", "power")
            or (key == "cloud_scale" and data.has_cloud_scale)
            or (key == "power" and data.has_energy)
        ],
        "no_columns": NO_COLUMNS,
        "price_lines_without_scale": data.has_price_lines and not data.has_cloud_scale,
        "round": round_,
        "rounds": list(Round.objects.values_list("key", "name")),
        "view": view,
        "form": form,
        "checklists": checklists(view, form),
        "chips": view.chips(data),
        "filter_counts": json_script(form.counts),
        "unfiltered_query": view.unfiltered_query(),
        "headers": table.headers,
        "columns": table.columns,
        "sections": [(s, rows_html(rows, table.shown_columns)) for s, rows in table.sections],
        "shown": len(table.rows),
        "total": len(data.rows),
        "results_shown": table.results_shown,
        "csv_query": urlencode([*view.params(), ("format", "csv")]),
        "json_query": urlencode([*view.params(), ("format", "json")]),
        "scaling_chart": json_script(
            charts.scaling(table.rows, table.chart_bench, view.show == "acc_hours")
        ),
        "chart_bench": table.chart_bench,
        "cost_chart": json_script(charts.cost(table.rows, table.benchmarks)),
        # A round without a known price has no cost chart to miss: no sentence says it has none.
        "has_prices": data.has_cloud_scale,
        "has_power": data.has_power,
        "power_twins_note": power_twins.ROUND_NOTE
        if any(power_twins.measured_at(r.submitter, r.name) for r in table.rows)
        else "",
        "energy_chart": json_script(charts.time_energy(table.rows, _energy_bench(table)))
        if data.has_power
        else "",
        "show_cloud_scale": table.show_cloud_scale,
        "show_power": table.show_power,
    }
