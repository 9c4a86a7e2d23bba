"""What the home page answers: each round's counts, the latest round's fastest result per
benchmark, and a search for systems across rounds whose hits link to their rows in the round
tables. Public results only (leaderboard.access.public); a fixed number of queries each."""

from dataclasses import dataclass

from django.apps import apps
from django.db.models import Count, OuterRef, Q, Subquery
from django.db.models.functions import Coalesce

from ..access import public
from ..catalogue.units import minutes as in_minutes
from ..models import Round, RoundImport
from ..roundtable import textsearch
from ..roundtable.layout import row_anchor
from ..statuses import SUBMISSION_FINAL, SubmissionStatus

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
    importing: str = ""  # the round is being brought in: how far, in words (import_progress)
    job: RoundImport | None = None  # its last import, if any


def round_counts() -> list[RoundCounts]:
    """Every round, newest first, with its public submitters, systems and results, and how far its import
    is where one is under way (two queries, three while one is)."""
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
    rounds = list(Round.objects.select_related("import_job").order_by("-publication_date", "-key"))
    jobs = {r.pk: r.import_job for r in rounds if hasattr(r, "import_job")}
    checked = submissions_checked(
        [pk for pk, job in jobs.items() if job.state in (job.State.SUBMITTING, job.State.CHECKING)]
    )
    out = []
    for r in rounds:
        c, job = counts.get(r.pk, {}), jobs.get(r.pk)
        out.append(
            RoundCounts(
                r,
                c.get("submitters", 0),
                c.get("systems", 0),
                c.get("results", 0),
                import_progress(job, *checked.get(r.pk, (0, 0))) if job else "",
                job,
            )
        )
    return out


def submissions_checked(round_ids: list[int]) -> dict[int, tuple[int, int]]:
    """{round id: (its submissions checked, its submissions)}, withdrawn ones left out."""
    if not round_ids:
        return {}
    rows = (
        apps.get_model("submissions", "Submission")
        .objects.filter(round__in=round_ids)
        .exclude(status=SubmissionStatus.WITHDRAWN)
        .values("round")
        .annotate(total=Count("id"), done=Count("id", filter=Q(status__in=SUBMISSION_FINAL)))
    )
    return {row["round"]: (row["done"], row["total"]) for row in rows}


def import_progress(job: RoundImport, checked: int, submissions: int) -> str:
    """What a round's row says while it is being brought in, "" once it is (or when its import failed)."""
    State = RoundImport.State
    of = f" {job.done} of {job.total} submitters" if job.total else ""
    received = f", {job.received_bytes / 1e6:,.0f} MB received" if job.received_bytes else ""
    if job.state == State.QUEUED:
        return "queued, waiting for a worker"
    if job.state == State.FETCHING:
        return f"fetching{of or ' from ' + job.source}{received}"
    if job.state == State.SUBMITTING:
        step = f"{job.step[:1].lower()}{job.step[1:]}" + (f" ({of.strip()} done)" if of else "")
        return step + (f", {checked} of {submissions} checked" if submissions else "")
    if job.state == State.CHECKING and checked < submissions:
        return f"checking, {checked} of {submissions} submitters done"
    return ""


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
    system_id: int = 0
    best: str = ""  # its best-placed result, e.g. "fastest of 12 on Llama 2 70B LoRA, 0.40 min"


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
            "id",
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
            system_id=system_id,
        )
        for round_key, round_name, submitter, key, name, count, model, system_id in found[:MAX_HITS]
    ]
    best = best_placed([h.system_id for h in hits])
    for h in hits:
        h.best = best.get(h.system_id, "")
    # Hits of one name (two sizes of one machine) say which is which, as the table's rows do.
    names: dict[tuple[str, str], int] = {}
    for h in hits:
        names[(h.round_name, h.system)] = names.get((h.round_name, h.system), 0) + 1
    for h in hits:
        if names[(h.round_name, h.system)] > 1:
            h.system = f"{h.system} ({h.key})"
    return hits, len(found) > MAX_HITS


def ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def best_placed(system_ids: list[int]) -> dict[int, str]:
    """Each system's best-placed scored result among its round's division on that benchmark, in
    words ("fastest of 12 on Llama 2 70B LoRA, 0.40 min"): one query, whatever the number of hits."""
    if not system_ids:
        return {}
    same = {
        "system__round": OuterRef("system__round"),
        "benchmark": OuterRef("benchmark"),
        "system__division": OuterRef("system__division"),
        "score_s__isnull": False,
    }

    def count(**more):
        rows = public.results().filter(**same, **more).values("benchmark").annotate(n=Count("id"))
        return Coalesce(Subquery(rows.values("n")[:1]), 0)

    results = (
        public.results()
        .filter(system_id__in=system_ids, score_s__isnull=False)
        .annotate(faster=count(score_s__lt=OuterRef("score_s")), entrants=count())
        .values_list("system_id", "benchmark__name", "score_s", "faster", "entrants")
    )
    best: dict[int, tuple] = {}
    for system_id, bench, score, faster, entrants in results:
        # The best place first; of equal places, the one among more results.
        key = (faster, -entrants)
        if system_id not in best or key < best[system_id][0]:
            best[system_id] = (key, bench, score, faster, entrants)
    out = {}
    for system_id, (_, bench, score, faster, entrants) in best.items():
        place = "fastest" if faster == 0 else ordinal(faster + 1)
        out[system_id] = f"{place} of {entrants} on {bench}, {in_minutes(score):,.2f} min"
    return out


def _system_url(round_key: str, submitter: str, key: str) -> str:
    from django.urls import reverse

    return reverse("leaderboard:system", args=[round_key, submitter, key])
