"""An organisation's standing across rounds, and progress between two rounds at equal scale.

Pure functions over `Entry`, one scored public result with what a comparison needs; no Django. The
organisation page (views/organisations.py) lists an organisation's best time per benchmark per
round; the progress page compares two rounds of one benchmark at equal scale, for every
organisation at once, so that "who improved most on BERT between v1.0 and v4.0" is one sort of one
table:

- at matched accelerator counts: an organisation's fastest result with N accelerators in the earlier
  round against its fastest with the same N in the later one (never 64 GPUs against 3,472);
- per accelerator: its least accelerator-time (hours × accelerators) in each round, which puts
  systems of any size on one scale.

A gain is the earlier round's figure ÷ the later one's: above 1, the later round is faster.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Entry:
    """One scored public result."""

    round_key: str
    benchmark_key: str
    organisation: str
    system_name: str
    accelerator_model: str
    accelerator_count: int | None
    minutes: float
    url: str

    @property
    def accelerator_hours(self) -> float | None:
        """Hours × accelerators: the accelerator-time a training took (None without a count), as the
        round table's per-accelerator view shows it."""
        return self.minutes / 60 * self.accelerator_count if self.accelerator_count else None


@dataclass(frozen=True)
class Gain:
    """One organisation's progress on a benchmark between two rounds: `before` in the earlier round,
    `after` in the later one, compared at `accelerators` (a matched count) or per accelerator (None)."""

    organisation: str
    accelerators: int | None
    before: Entry
    after: Entry

    @property
    def gain(self) -> float:
        if self.accelerators is None:
            return self.before.accelerator_hours / self.after.accelerator_hours
        return self.before.minutes / self.after.minutes


def _fastest(entries, key) -> dict:
    """The entry with the least minutes for each key(entry) (None keys skipped); ties: the first given."""
    best: dict = {}
    for e in entries:
        k = key(e)
        if k is not None and (k not in best or e.minutes < best[k].minutes):
            best[k] = e
    return best


def best_per_round(entries: list[Entry]) -> dict[tuple[str, str], Entry]:
    """(benchmark key, round key) → the fastest entry."""
    return _fastest(entries, lambda e: (e.benchmark_key, e.round_key))


def _least_accelerator_time(entries, key) -> dict:
    """The entry with the least accelerator-hours for each key(entry), of those with a count."""
    best: dict = {}
    for e in entries:
        k = key(e)
        if e.accelerator_hours is not None and (
            k not in best or e.accelerator_hours < best[k].accelerator_hours
        ):
            best[k] = e
    return best


def least_accelerator_time(entries: list[Entry]) -> dict[tuple[str, str], Entry]:
    """(benchmark key, round key) → the entry with the least accelerator-hours (those with a count)."""
    return _least_accelerator_time(entries, lambda e: (e.benchmark_key, e.round_key))


def at_matched_counts(entries: list[Entry], before: str, after: str) -> list[Gain]:
    """Each organisation's fastest result at each accelerator count it used in both rounds (`before` and
    `after` are round keys), the earlier against the later; by organisation, then count."""
    first = _fastest(
        (e for e in entries if e.round_key == before and e.accelerator_count),
        lambda e: (e.organisation, e.accelerator_count),
    )
    then = _fastest(
        (e for e in entries if e.round_key == after and e.accelerator_count),
        lambda e: (e.organisation, e.accelerator_count),
    )
    return [
        Gain(org, count, first[(org, count)], then[(org, count)])
        for org, count in sorted(first.keys() & then.keys(), key=lambda k: (k[0].casefold(), k[1]))
    ]


def per_accelerator(entries: list[Entry], before: str, after: str) -> list[Gain]:
    """Each organisation's least accelerator-time in the earlier round against its least in the later one,
    for the organisations with a counted result in both; by organisation."""
    first = _least_accelerator_time((e for e in entries if e.round_key == before), _organisation)
    then = _least_accelerator_time((e for e in entries if e.round_key == after), _organisation)
    return [
        Gain(org, None, first[org], then[org])
        for org in sorted(first.keys() & then.keys(), key=str.casefold)
    ]


def _organisation(e: Entry) -> str:
    return e.organisation
