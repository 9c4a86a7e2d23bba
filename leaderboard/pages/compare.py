"""Two to four systems of a round side by side, per benchmark, with ratios to a baseline."""

from urllib.parse import urlencode

from django.shortcuts import get_object_or_404, render
from django.utils.translation import gettext
from django.views.decorators.http import require_safe

from ..catalogue.organisations import name_key, organisation_of
from ..models import Round
from ..roundtable.rows import round_data
from . import charts
from .common import json_script


def _organisation_key(slug: str) -> tuple[str, str]:
    """A compare slug (submitter/key) as (organisation, key): any of an organisation's names finds its system."""
    submitter, _, key = slug.rpartition("/")
    return name_key(organisation_of(submitter)), key


def _baseline(asked: str, chosen, by_slug, by_organisation) -> int:
    """The baseline's place among the chosen rows: `base` names a system as the compare links do
    (submitter/key, any name of its organisation); a number (the place, as links before 2026-12 gave it)
    is still understood. The first system otherwise."""
    row = by_slug.get(asked) or by_organisation.get(_organisation_key(asked))
    if row is not None and row in chosen:
        return chosen.index(row)
    if asked.isdigit():
        return min(int(asked), max(len(chosen) - 1, 0))
    return 0


def versus(ratio: float | None, per_accelerator: bool) -> str:
    """A ratio to the baseline in a word: "same" where it shows as 1.00×, else faster or slower (less or
    more accelerator time, per accelerator)."""
    if ratio is None:
        return ""
    if f"{ratio:.2f}" == "1.00":
        return "same"
    if per_accelerator:
        return "less" if ratio > 1 else "more"
    return "faster" if ratio > 1 else "slower"


@require_safe
def compare_page(request, round_key):
    round_ = get_object_or_404(Round, key=round_key)
    data = round_data(round_)
    by_slug = {row.slug: row for row in data.rows}
    by_organisation = {}
    for row in data.rows:
        by_organisation.setdefault((name_key(row.organisation), row.key), row)
    wanted = list(dict.fromkeys(request.GET.getlist("s")))
    found = {s: by_slug.get(s) or by_organisation.get(_organisation_key(s)) for s in wanted}
    chosen = list({id(row): row for row in found.values() if row is not None}.values())
    unknown = [s for s in wanted if found[s] is None]
    error = ""
    if len(chosen) < 2:
        error = gettext("Pick at least two systems to compare (tick them in the round table).")
    elif len(chosen) > 4:
        error = gettext("Compare at most four systems at once; the first four are shown.")
        chosen = chosen[:4]
    base = _baseline(request.GET.get("base", ""), chosen, by_slug, by_organisation)
    # Per accelerator: accelerator-hours to train (minutes ÷ 60 × accelerators), as in the table.
    per_accelerator = request.GET.get("show") == "acc_hours"

    def value(row, cell):
        if cell is None:
            return None
        return charts.accelerator_hours(row, cell.minutes) if per_accelerator else cell.minutes

    lines = []
    for bench in data.benchmarks:
        if not any(bench.key in row.cells for row in chosen):
            continue
        baseline = value(chosen[base], chosen[base].cells.get(bench.key)) if chosen else None
        entries = []
        for row in chosen:
            cell = row.cells.get(bench.key)
            shown = value(row, cell)
            ratio = baseline / shown if shown and baseline else None
            entries.append(
                {
                    "cell": cell,
                    "value": shown,
                    "ratio": ratio,
                    "versus": versus(ratio, per_accelerator),
                    "label": f"{row.submitter}: {row.name}",
                }
            )
        lines.append({"bench": bench, "entries": entries})
    systems = [("s", r.slug) for r in chosen]
    shown_as = [("show", "acc_hours")] if per_accelerator else []
    return render(
        request,
        "leaderboard/compare.html",
        {
            "round": round_,
            "systems": chosen,
            "lines": lines,
            "base": base,
            "error": error,
            "unknown": unknown,
            "per_accelerator": per_accelerator,
            "any_cloud_scale": any(r.cloud_scale is not None for r in chosen),
            "chart": json_script(charts.compare(chosen, data.benchmarks, per_accelerator))
            if len(chosen) >= 2
            else "",
            "base_links": [
                (row, urlencode([*systems, ("base", row.slug), *shown_as])) for row in chosen
            ],
            "toggle_link": urlencode(
                [
                    *systems,
                    *([("base", chosen[base].slug)] if chosen else []),
                    *([] if per_accelerator else [("show", "acc_hours")]),
                ]
            ),
        },
    )
