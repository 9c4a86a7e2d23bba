"""An organisation's page: every public system and result of it across rounds, under every name it
submitted as (leaderboard.catalogue.organisations), with its best time per benchmark per round.

Any of its names finds it: /organisations/Nvidia/ answers with a redirect to /organisations/NVIDIA/.
"""

from django.db.models import Count
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_safe

from ..access import public
from ..catalogue.organisations import name_key, organisation_of
from ..catalogue.units import minutes as in_minutes
from ..models import Division, Round, Submitter
from . import power_twins, standings


def organisation_url(name: str) -> str:
    return reverse("leaderboard:organisation", args=[name])


def result_url(round_key, submitter, system_key, benchmark_key) -> str:
    return reverse("leaderboard:result", args=[round_key, submitter, system_key, benchmark_key])


def scored_entries(results) -> list[standings.Entry]:
    """Public results (a queryset) with a score, as standings entries."""
    fields = (
        "system__round__key",
        "benchmark__key",
        "system__submitter__organisation",
        "system__submitter__name",
        "system__key",
        "system__name",
        "system__accelerator_model",
        "system__accelerator_count",
        "score_s",
    )
    return [
        standings.Entry(
            round_key=round_key,
            benchmark_key=bench,
            organisation=organisation or submitter,
            system_name=name or key,
            accelerator_model=model,
            accelerator_count=count,
            minutes=in_minutes(score),
            url=result_url(round_key, submitter, key, bench),
        )
        for round_key, bench, organisation, submitter, key, name, model, count, score in results.filter(
            score_s__isnull=False
        ).values_list(*fields)
    ]


def _missing_logs(results) -> dict[str, list[str]]:
    """Round key → the results of an imported round that hold fewer run logs than the round requires:
    MLCommons published them, and the public copy the round was imported from lacks some of their logs
    (../shared/mlperf/README.md: v1.0's largest NVIDIA systems, three JuniperNetworks folders of v4.0)."""
    short = (
        results.filter(score_s__isnull=True, system__round__history=True)
        .annotate(logs=Count("runs"))
        .values_list(
            "system__round__key",
            "benchmark__name",
            "system__name",
            "system__key",
            "logs",
            "benchmark__required_runs",
        )
        .order_by("system__round__key", "benchmark__position", "system__key")
    )
    missing: dict[str, list[str]] = {}
    for round_key, bench, name, key, logs, required in short:
        if logs < required:
            missing.setdefault(round_key, []).append(
                f"{bench} on {name or key} ({logs} of {required} logs)"
            )
    return missing


def organisation_named(name: str) -> str:
    """The organisation with public systems that `name` (any of its names, in any case or spelling of
    spaces and punctuation) belongs to; '' for none."""
    wanted = name_key(organisation_of(name))
    present = Submitter.objects.filter(systems__published=True).values_list(
        "organisation", flat=True
    )
    return next((o for o in present.distinct() if name_key(o) == wanted), "")


@require_safe
def organisation_page(request, name):
    organisation = organisation_named(name)
    if organisation and organisation != name:
        return redirect(organisation_url(organisation))
    results = public.results().filter(system__submitter__organisation=organisation)
    rows = list(
        results.select_related("system__round", "system__submitter", "benchmark").order_by(
            "-system__round__publication_date",
            "system__round__key",
            "system__submitter__name",
            "system__key",
            "system_id",
            "benchmark__position",
        )
    )
    if not organisation or not rows:
        raise Http404("No published results of this organisation.")
    names = sorted(
        {r.system.submitter.name for r in rows}
        | {r.system.published_submitter for r in rows if r.system.published_submitter},
        key=str.casefold,
    )
    rounds: dict[str, dict] = {}
    for r in rows:
        system = r.system
        in_round = rounds.setdefault(system.round.key, {"round": system.round, "systems": {}})
        shown = in_round["systems"].setdefault(system.pk, {"system": system, "results": []})
        shown["results"].append(r)
    closed = results.filter(system__division=Division.CLOSED)
    entries = scored_entries(closed)
    fastest = standings.best_per_round(entries)
    thriftiest = standings.least_accelerator_time(entries)
    order = {
        key: i
        for i, key in enumerate(
            Round.objects.order_by("publication_date", "key").values_list("key", flat=True)
        )
    }
    names_of = {b: n for b, n in closed.values_list("benchmark__key", "benchmark__name")}
    best = [
        {
            "name": names_of.get(bench, bench),
            "bench": bench,
            "round": rounds[round_key]["round"],
            "entry": entry,
            "least": thriftiest.get((bench, round_key)),
        }
        for (bench, round_key), entry in sorted(
            fastest.items(),
            key=lambda kv: (names_of.get(kv[0][0], kv[0][0]).casefold(), order.get(kv[0][1], 0)),
        )
    ]
    missing = _missing_logs(results)
    return render(
        request,
        "leaderboard/organisation.html",
        {
            "organisation": organisation,
            "names": names,
            "best": best,
            "rounds": [
                {
                    **data,
                    "systems": list(data["systems"].values()),
                    "missing": missing.get(key, []),
                    "power_twins": any(
                        power_twins.measured_at(s.submitter.name, s.name)
                        for s in (shown["system"] for shown in data["systems"].values())
                    ),
                }
                for key, data in rounds.items()
            ],
            "benchmarks": sorted({e.benchmark_key for e in entries}),
            "power_twins_note": power_twins.ROUND_NOTE,
        },
    )
