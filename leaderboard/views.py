"""Public pages: the list of rounds, a round's table, a system and a result."""

from django.http import Http404
from django.shortcuts import get_object_or_404, render

from .models import Result, Round, System
from .tables import round_table


def home(request):
    rounds = Round.objects.all()
    return render(request, "leaderboard/home.html", {"rounds": rounds})


def round_page(request, round_key):
    round_ = get_object_or_404(Round, key=round_key)
    benchmarks = list(round_.benchmarks.all())
    has_reference = any(b.reference_time_s for b in benchmarks)
    show = request.GET.get("show") or ("speedup" if has_reference else "minutes")
    if show not in ("speedup", "minutes"):
        show = "minutes"
    return render(request, "leaderboard/round.html", {
        "round": round_, "benchmarks": benchmarks, "sections": round_table(round_),
        "show": show, "has_reference": has_reference,
    })


def _published_system(round_key, submitter, system_key):
    return get_object_or_404(
        System.objects.select_related("round", "submitter"),
        round__key=round_key, submitter__name=submitter, key=system_key, published=True,
    )


def system_page(request, round_key, submitter, system_key):
    system = _published_system(round_key, submitter, system_key)
    results = system.results.filter(published=True).select_related("benchmark")
    return render(request, "leaderboard/system.html", {"system": system, "results": results})


def result_page(request, round_key, submitter, system_key, benchmark_key):
    try:
        result = Result.objects.select_related("system__round", "system__submitter", "benchmark").get(
            system__round__key=round_key, system__submitter__name=submitter,
            system__key=system_key, benchmark__key=benchmark_key, published=True,
        )
    except Result.DoesNotExist:
        raise Http404("No published result at this address.")
    return render(request, "leaderboard/result.html", {
        "result": result, "system": result.system, "runs": result.runs.all(),
    })
