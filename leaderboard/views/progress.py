"""Progress across rounds: the best time per benchmark in each round, of everyone or of one organisation.

An organisation is one under every name it submitted as (leaderboard.organisations), so
NVIDIA's line runs from its v0.5 results, submitted as "Nvidia", to its latest.
"""

from django.db.models import Min
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_safe

from .. import cache, charts, public
from ..models import Benchmark, Division, Round
from ..organisations import name_key, organisation_of
from ..units import minutes as in_minutes
from .common import json_script


def _organisation(requested: str, present: list[str]) -> str:
    """The organisation of the list that a requested name (any alias, any case) belongs to; '' for none."""
    if not requested.strip():
        return ""
    wanted = name_key(organisation_of(requested))
    return next((o for o in present if name_key(o) == wanted), "")


@require_safe
def progress_page(request):
    division = request.GET.get("division", "closed")
    if division not in Division.values:
        division = "closed"
    rounds = list(Round.objects.order_by("publication_date", "key"))
    tokens = [f"{r.key}:{r.cache_token}" for r in rounds]
    organisations = cache.get_or_set(
        cache.catalogue_key("progress-organisations", tokens, division),
        lambda: sorted(
            set(
                public.results()
                .filter(system__division=division, score_s__isnull=False)
                .values_list("system__submitter__organisation", flat=True)
            )
            - {""},
            key=str.casefold,
        ),
    )
    requested = request.GET.get("organisation") or request.GET.get("submitter") or ""
    organisation = _organisation(requested, organisations)
    key = cache.catalogue_key("progress", tokens, division, organisation)

    def build():
        scored = public.results().filter(system__division=division, score_s__isnull=False)
        if organisation:
            scored = scored.filter(system__submitter__organisation=organisation)
        best = scored.values("system__round__key", "benchmark__key").annotate(best=Min("score_s"))
        bests = {(b["system__round__key"], b["benchmark__key"]): b["best"] for b in best}
        who = {}
        if bests:
            holders = (
                scored.filter(score_s__in=set(bests.values()))
                .values_list(
                    "system__round__key",
                    "benchmark__key",
                    "score_s",
                    "system__submitter__organisation",
                    "system__name",
                    "system__submitter__name",
                    "system__key",
                )
                .order_by(
                    "system__round__key", "benchmark__key", "system__submitter__name", "system__key"
                )
            )
            for round_key, bench_key, score, holder_org, name, submitter, key in holders:
                if bests.get((round_key, bench_key)) == score:
                    url = reverse("leaderboard:result", args=[round_key, submitter, key, bench_key])
                    who.setdefault((round_key, bench_key), (f"{holder_org}: {name}", url))
        names = dict(  # the latest round's name of each benchmark key
            Benchmark.objects.order_by("round__publication_date", "round__key").values_list(
                "key", "name"
            )
        )
        series: dict[str, list] = {}
        table = []
        for r in rounds:
            for bench_key in sorted({k for (rk, k) in bests if rk == r.key}):
                minutes = in_minutes(bests[(r.key, bench_key)])
                holder, url = who.get((r.key, bench_key), ("", ""))
                series.setdefault(bench_key, []).append(
                    (r.key, r.name, minutes, holder, url, r.publication_date)
                )
        for bench_key, points in sorted(series.items(), key=lambda kv: names.get(kv[0], kv[0])):
            first = points[0][2]
            for round_key, round_name, minutes, holder, url, _date in points:
                table.append(
                    {
                        "bench": bench_key,
                        "name": names.get(bench_key, bench_key),
                        "round": round_name,
                        "round_key": round_key,
                        "minutes": minutes,
                        "holder": holder,
                        "url": url,
                        "gain": first / minutes if minutes else None,
                    }
                )
        chart = charts.progress(series, names)
        return {"chart": json_script(chart), "table": table}

    built = cache.get_or_set(key, build)
    return render(
        request,
        "leaderboard/progress.html",
        {
            "division": division,
            "divisions": Division.choices,
            "organisation": organisation,
            "organisations": organisations,
            "requested": requested if requested and not organisation else "",
            **built,
        },
    )
