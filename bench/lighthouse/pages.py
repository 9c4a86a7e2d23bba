"""The pages `make lighthouse` measures (bench/lighthouse.sh), one of each kind a reader lands on, picked
from the v5.1 round in the catalogue at VAR_DIR: prints one "kind path" line per page.

- round: the round's table;
- result: the fastest closed-division result of llama2_70b_lora (a reader task's answer: its runs and
  convergence chart);
- system: that result's system;
- log: the log of that result's first run;
- compare: three systems of the round side by side (the phone's compare cards);
- organisation: the organisation page of that result's submitter (`leaderboard:organisation`), once the
  portal has one; until then the line says it is missing and the page is not measured.
"""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")

import django  # noqa: E402

django.setup()

from django.urls import NoReverseMatch, reverse  # noqa: E402

from leaderboard.models import Result, Round  # noqa: E402

ROUND = "training-v5.1"


def pages() -> list[tuple[str, str | None]]:
    round_ = Round.objects.get(key=ROUND)
    scored = Result.objects.filter(
        system__round=round_, system__division="closed", published=True, score_s__isnull=False
    ).select_related("system__submitter", "system__round", "benchmark")
    fastest = scored.filter(benchmark__key="llama2_70b_lora").order_by("score_s").first()
    if fastest is None:
        fastest = scored.order_by("score_s").first()
    system = fastest.system
    run = fastest.runs.order_by("index").first()
    log = reverse(
        "leaderboard:run-log",
        args=[ROUND, system.submitter.name, system.key, fastest.benchmark.key, run.index],
    )
    three = []
    for other in scored.filter(benchmark=fastest.benchmark).order_by("score_s"):
        slug = f"{other.system.submitter.name}/{other.system.key}"
        if slug not in three:
            three.append(slug)
        if len(three) == 3:
            break
    compare = reverse("leaderboard:compare", args=[ROUND]) + "?" + "&".join(f"s={s}" for s in three)
    try:
        organisation = reverse(
            "leaderboard:organisation",
            args=[system.submitter.organisation or system.submitter.name],
        )
    except NoReverseMatch:
        organisation = None
    return [
        ("round", round_.get_absolute_url()),
        ("result", fastest.get_absolute_url()),
        ("system", system.get_absolute_url()),
        ("log", log),
        ("compare", compare),
        ("organisation", organisation),
    ]


if __name__ == "__main__":
    for kind, path in pages():
        print(kind, path or "-")
