"""What the home page answers: each round's counts, the latest round's fastest result per
benchmark, and a search for systems across rounds whose hits link to their rows in the round
tables. Public results only (leaderboard.public); a fixed number of queries each."""

from dataclasses import dataclass

from django.db.models import Count

from . import public, textsearch
from .models import Round
from .tableview import row_anchor
from .units import minutes as in_minutes

MAX_HITS = 50
# The home page's search leaves out the software (textsearch.FIELDS has it): a system's row is found by
# what the round table shows of it.
SEARCHED = tuple(f for f in textsearch.FIELDS if f != "framework")


@dataclass
class RoundCounts:
    round: Round
    submitters: int
    systems: int
    results: int


def round_counts() -> list[RoundCounts]:
    """Every round, newest first, with its public submitters, systems and results (two queries)."""
    counts = {
        c["system__round"]: c
        for c in public.results()
        .values("system__round")
        .annotate(
            results=Count("id"),
            systems=Count("system", distinct=True),
            submitters=Count("system__submitter", distinct=True),
        )
    }
    rounds = Round.objects.order_by("-publication_date", "-key")
    out = []
    for r in rounds:
        c = counts.get(r.pk, {})
        out.append(RoundCounts(r, c.get("submitters", 0), c.get("systems", 0), c.get("results", 0)))
    return out


@dataclass
class Fastest:
    benchmark: str
    key: str
    minutes: float
    submitter: str
    system: str
    accelerators: str
    url: str  # the result's page
    row_url: str  # its row in the round table


def fastest(round_: Round) -> list[Fastest]:
    """The round's fastest closed-division result per benchmark, in the round's benchmark order."""
    results = (
        public.results()
        .filter(system__round=round_, system__division="closed", score_s__isnull=False)
        .order_by("benchmark__position", "score_s", "system__submitter__name", "system__key")
        .values_list(
            "benchmark__key",
            "benchmark__name",
            "score_s",
            "system__submitter__name",
            "system__key",
            "system__name",
            "system__accelerator_count",
            "system__accelerator_model",
        )
    )
    out, seen = [], set()
    round_url = round_.get_absolute_url()
    for key, name, score, submitter, system_key, system_name, count, model in results:
        if key in seen:
            continue
        seen.add(key)
        out.append(
            Fastest(
                benchmark=name,
                key=key,
                minutes=in_minutes(score),
                submitter=submitter,
                system=system_name or system_key,
                accelerators=f"{count} × {model}" if count else model,
                url=_system_url(round_.key, submitter, system_key) + f"{key}/",
                row_url=f"{round_url}#{row_anchor(submitter, system_key)}",
            )
        )
    return out


@dataclass
class Hit:
    round_name: str
    submitter: str
    system: str
    key: str
    accelerators: str
    row_url: str  # the system's row in its round's table


def search(q: str) -> tuple[list[Hit], bool]:
    """Public systems of every round whose submitter, organisation, name, key, accelerator or
    processor holds every word of `q`, newest round first; (hits, whether more were left out)."""
    if not textsearch.words(q):
        return [], False
    systems = public.systems().filter(textsearch.matching(q, fields=SEARCHED))
    found = list(
        systems.order_by(
            "-round__publication_date", "round__key", "submitter__name", "key"
        ).values_list(
            "round__key",
            "round__name",
            "submitter__name",
            "key",
            "name",
            "accelerator_count",
            "accelerator_model",
        )[: MAX_HITS + 1]
    )
    hits = [
        Hit(
            round_name=round_name,
            submitter=submitter,
            system=name or key,
            key=key,
            accelerators=f"{count} × {model}" if count else model,
            row_url=f"/r/{round_key}/#{row_anchor(submitter, key)}",
        )
        for round_key, round_name, submitter, key, name, count, model in found[:MAX_HITS]
    ]
    # Hits of one name (two sizes of one machine) say which is which, as the table's rows do.
    names: dict[tuple[str, str], int] = {}
    for h in hits:
        names[(h.round_name, h.system)] = names.get((h.round_name, h.system), 0) + 1
    for h in hits:
        if names[(h.round_name, h.system)] > 1:
            h.system = f"{h.system} ({h.key})"
    return hits, len(found) > MAX_HITS


def _system_url(round_key: str, submitter: str, key: str) -> str:
    from django.urls import reverse

    return reverse("leaderboard:system", args=[round_key, submitter, key])
