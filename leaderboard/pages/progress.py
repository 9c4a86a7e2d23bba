"""Progress across rounds: the best time per benchmark in each round, of everyone or of one organisation;
and one benchmark between two rounds at equal scale, every organisation at once (leaderboard.pages.standings).

An organisation is one under every name it submitted as (leaderboard.catalogue.organisations), so
NVIDIA's line runs from its v0.5 results, submitted as "Nvidia", to its latest. The gain of a round
is at equal scale: the first round's least accelerator-time ÷ this round's, never a 64-GPU time
against a 3,472-GPU one.
"""

from django.shortcuts import render
from django.views.decorators.http import require_safe

from .. import cache
from ..access import public
from ..catalogue.organisations import name_key, organisation_of
from ..models import Benchmark, Division, Round
from . import charts, standings
from .common import json_script
from .organisations import scored_entries


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
        lambda: _organisations(division),
    )
    requested = request.GET.get("organisation") or request.GET.get("submitter") or ""
    organisation = _organisation(requested, organisations)
    built = cache.get_or_set(
        cache.catalogue_key("progress-at-scale", tokens, division, organisation),
        lambda: _best_per_round(division, organisation, rounds),
    )
    return render(
        request,
        "leaderboard/progress.html",
        {
            "division": division,
            "divisions": Division.choices,
            "division_label": Division(division).label,
            "organisation": organisation,
            "organisations": organisations,
            "requested": requested if requested and not organisation else "",
            **built,
            **_between(request, division, rounds, tokens),
        },
    )


def _organisations(division: str) -> list[str]:
    """The organisations with a scored public result in the division, in the list's order."""
    return sorted(
        set(
            public.results()
            .filter(system__division=division, score_s__isnull=False)
            .values_list("system__submitter__organisation", flat=True)
        )
        - {""},
        key=str.casefold,
    )


def _best_per_round(division: str, organisation: str, rounds: list) -> dict:
    """The chart and table of the best time per benchmark in each round, of everyone or of one
    organisation, with each round's gain at equal scale."""
    scored = public.results().filter(system__division=division)
    if organisation:
        scored = scored.filter(system__submitter__organisation=organisation)
    entries = scored_entries(scored)
    fastest = standings.best_per_round(entries)
    thriftiest = standings.least_accelerator_time(entries)
    names = dict(  # the latest round's name of each benchmark key
        Benchmark.objects.order_by("round__publication_date", "round__key").values_list(
            "key", "name"
        )
    )
    series: dict[str, list] = {}
    for r in rounds:
        for bench_key in sorted({b for (b, rk) in fastest if rk == r.key}):
            e = fastest[(bench_key, r.key)]
            holder = f"{e.organisation}: {e.system_name}"
            series.setdefault(bench_key, []).append(
                (r.key, r.name, e.minutes, holder, e.url, r.publication_date)
            )
    table = []
    for bench_key, points in sorted(series.items(), key=lambda kv: names.get(kv[0], kv[0])):
        first = next(
            (thriftiest[(bench_key, p[0])] for p in points if (bench_key, p[0]) in thriftiest),
            None,
        )
        for round_key, round_name, minutes, holder, url, _date in points:
            entry = fastest[(bench_key, round_key)]
            least = thriftiest.get((bench_key, round_key))
            table.append(
                {
                    "bench": bench_key,
                    "name": names.get(bench_key, bench_key),
                    "round": round_name,
                    "round_key": round_key,
                    "minutes": minutes,
                    "accelerators": entry.accelerator_count,
                    "holder": holder,
                    "organisation": entry.organisation,
                    "system_name": entry.system_name,
                    "url": url,
                    "least": least,
                    # At equal scale: the first round's least accelerator-hours ÷ this round's.
                    "gain": first.accelerator_hours / least.accelerator_hours
                    if first and least
                    else None,
                }
            )
    return {"chart": json_script(charts.progress(series, names)), "table": table}


SORTS = {
    "organisation": lambda g: (g.organisation.casefold(), g.accelerators or 0),
    "gain": lambda g: -g.gain,  # who improved most first
    "accelerators": lambda g: (g.accelerators or 0, g.organisation.casefold()),
}


def _between(request, division: str, rounds: list, tokens: list[str]) -> dict:
    """One benchmark between two rounds at equal scale, for every organisation with results in both:
    ?benchmark=bert&from=training-v1.0&to=training-v4.0&sort=gain. The rounds default to the last two
    that ran the benchmark; the table sorts by organisation, or by gain (the most improved first)."""
    held = cache.get_or_set(
        cache.catalogue_key("progress-benchmarks", tokens, division),
        lambda: sorted(
            set(
                public.results()
                .filter(system__division=division, score_s__isnull=False)
                .values_list("benchmark__key", "system__round__key")
            )
        ),
    )
    order = {r.key: i for i, r in enumerate(rounds)}
    rounds_of: dict[str, list[str]] = {}
    for bench_key, round_key in held:
        rounds_of.setdefault(bench_key, []).append(round_key)
    choices = sorted(b for b, keys in rounds_of.items() if len(keys) >= 2)
    bench = request.GET.get("benchmark", "")
    if bench not in choices:
        return {"between_benchmarks": choices}
    ran = sorted(rounds_of[bench], key=order.__getitem__)
    before, after = request.GET.get("from", ""), request.GET.get("to", "")
    if before not in ran or after not in ran or order[before] >= order[after]:
        before, after = ran[-2], ran[-1]
    sort = request.GET.get("sort", "organisation")
    if sort not in SORTS:
        sort = "organisation"

    def build():
        entries = scored_entries(
            public.results().filter(system__division=division, benchmark__key=bench)
        )
        return {
            "matched": standings.at_matched_counts(entries, before, after),
            "per_accelerator": standings.per_accelerator(entries, before, after),
        }

    built = cache.get_or_set(
        cache.catalogue_key("progress-between", tokens, division, bench, before, after), build
    )
    names = {r.key: r for r in rounds}
    return {
        "between_benchmarks": choices,
        "between": {
            "benchmark": bench,
            "rounds": [names[k] for k in ran],
            "before": names[before],
            "after": names[after],
            "sort": sort,
            "matched": sorted(built["matched"], key=SORTS[sort]),
            "per_accelerator": sorted(built["per_accelerator"], key=SORTS[sort]),
        },
    }
