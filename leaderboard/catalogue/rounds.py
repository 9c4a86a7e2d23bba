"""Round files: one TOML file per round in leaderboard/catalogue/rounds/, loaded into the catalogue; submitters
re-filed by their organisation (organisations.toml) when the alias list changes."""

import tomllib
from datetime import UTC, date, datetime
from pathlib import Path

from django.db import transaction

from ..cache import forget_round, invalidate_round
from ..models import Benchmark, Round, Submitter
from . import calendar, organisations, rule_catalogue

ROUNDS_DIR = Path(__file__).resolve().parent / "rounds"

ROUND_FIELDS = [
    "name",
    "ruleset",
    "log_format",
    "submission_date",
    "publication_date",
    "reference_system",
    "notes",
    "history",
    "published_tree",
    "results_repository",
    "require_init_stop_before_run_start",
    "rcp_normalised",
    "blocking_rules",
]
BENCHMARK_FIELDS = [
    "name",
    "quality_target",
    "higher_is_better",
    "required_runs",
    "counted_runs",
    "scoring",
    "reference_time_s",
    "aliases",
]


def read_round_file(path: Path) -> dict:
    with open(path, "rb") as f:
        data = tomllib.load(f)
    missing = [k for k in ("key", "name", "ruleset", "log_format", "benchmarks") if k not in data]
    if missing:
        raise ValueError(f"{path.name}: missing {', '.join(missing)}")
    for i, bench in enumerate(data["benchmarks"]):
        for k in ("key", "name", "required_runs"):
            if k not in bench:
                raise ValueError(f"{path.name}: benchmark #{i + 1} has no {k}")
    read_calendar(data, path.name)
    read_blocking_rules(data, path.name)
    return data


def read_blocking_rules(data: dict, source: str) -> list[str]:
    """The round file's blocking_rules: checks of the portal's own that the rule catalogue lets a round make
    blocking (rule_catalogue.BLOCKABLE_RULES); any other id stops the load, naming it."""
    listed = data.get("blocking_rules", [])
    if not isinstance(listed, list) or not all(isinstance(rule, str) for rule in listed):
        raise ValueError(f"{source}: blocking_rules must be a list of rule ids")
    wrong = [rule for rule in listed if rule not in rule_catalogue.BLOCKABLE_RULES]
    if wrong:
        raise ValueError(
            f"{source}: blocking_rules lists {', '.join(wrong)}; a round may make blocking only "
            f"{', '.join(sorted(rule_catalogue.BLOCKABLE_RULES))} (leaderboard/catalogue/rule_catalogue.py)"
        )
    return listed


def read_calendar(data: dict, source: str) -> dict:
    """The round file's [calendar] table as model fields: datetimes with their offsets (TOML's
    `2025-05-02T17:00:00Z`; a date or a time without an offset is refused: the minute must be certain),
    grace_minutes a whole number."""
    table = data.get("calendar", {})
    if not isinstance(table, dict):
        raise ValueError(f"{source}: [calendar] must be a table")
    unknown = sorted(set(table) - set(calendar.FIELDS))
    if unknown:
        raise ValueError(
            f"{source}: [calendar] has unknown keys {', '.join(unknown)} "
            f"(known: {', '.join(calendar.FIELDS)})"
        )
    fields = {}
    for name, value in table.items():
        if name == "grace_minutes":
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"{source}: calendar.grace_minutes must be a whole number >= 0")
        elif not isinstance(value, datetime) or value.tzinfo is None:
            kind = "a date alone" if isinstance(value, date) else repr(value)
            raise ValueError(
                f"{source}: calendar.{name} is {kind}; give a date and time with its offset, "
                "e.g. 2025-05-02T17:00:00Z"
            )
        else:
            value = value.astimezone(UTC)
        fields[name] = value
    return fields


def _round_fields(data: dict, edited: set[str]) -> dict:
    """The Round row's fields from a parsed round file; the calendar fields in `edited` (staff edited them in
    the admin) are left out, keeping the admin's value."""
    fields = {k: data[k] for k in ROUND_FIELDS if k in data}
    dates = read_calendar(data, data["key"])
    for name in calendar.FIELDS:
        if name not in edited:  # a date taken out of the file goes from the round too
            fields[name] = dates.get(name, 0 if name == "grace_minutes" else None)
    return fields


def _benchmark_fields(data: dict) -> list[tuple[str, dict]]:
    return [
        (bench["key"], {**{k: bench[k] for k in BENCHMARK_FIELDS if k in bench}, "position": i})
        for i, bench in enumerate(data["benchmarks"])
    ]


@transaction.atomic
def load_round(data: dict) -> Round:
    """Create or update a round and its benchmarks from a parsed round file (idempotent). Calendar
    fields that staff edited in the admin keep the admin's value."""
    edited = set(
        Round.objects.filter(key=data["key"]).values_list("calendar_edited", flat=True).first()
        or ()
    )
    round_, created = Round.objects.update_or_create(
        key=data["key"], defaults=_round_fields(data, edited)
    )
    if created:
        _create_benchmarks([(round_, data)])
    else:
        for key, fields in _benchmark_fields(data):
            Benchmark.objects.update_or_create(round=round_, key=key, defaults=fields)
    return round_


def _create_benchmarks(rounds: list[tuple[Round, dict]]) -> None:
    Benchmark.objects.bulk_create(
        Benchmark(round=round_, key=key, **fields)
        for round_, data in rounds
        for key, fields in _benchmark_fields(data)
    )


@transaction.atomic
def load_all(directory: Path = ROUNDS_DIR) -> list[Round]:
    """Every round file loaded (load_round). The rounds not yet in the catalogue are created together, in
    three queries rather than about ten each: the tests load the rounds into an empty database about 500
    times a run (131 queries and 72 ms of CPU a time before, measured in tests/conftest.py's `rounds`)."""
    files = [read_round_file(p) for p in sorted(directory.glob("*.toml"))]
    known = set(
        Round.objects.filter(key__in=[d["key"] for d in files]).values_list("key", flat=True)
    )
    new = [d for d in files if d["key"] not in known]
    created = Round.objects.bulk_create(
        Round(key=d["key"], **_round_fields(d, edited=set())) for d in new
    )
    _create_benchmarks(list(zip(created, new, strict=True)))
    for round_ in created:
        forget_round(round_.key)  # as a save's signal would (bulk_create sends none)
    by_key = {r.key: r for r in created}
    return [by_key[d["key"]] if d["key"] in by_key else load_round(d) for d in files]


def refresh_submitters() -> int:
    """Re-file every Submitter row by the alias list; drop the cached pages of the rounds whose
    rows changed. Returns how many submitters changed organisation."""
    organisations.shipped.cache_clear()  # the file may have changed since this process read it
    changed = []
    for submitter in Submitter.objects.all():
        organisation = organisations.organisation_of(submitter.name)
        if submitter.organisation != organisation:
            submitter.organisation = organisation
            changed.append(submitter)
    if changed:
        Submitter.objects.bulk_update(changed, ["organisation"])
        for key in (
            Round.objects.filter(systems__submitter__in=changed)
            .values_list("key", flat=True)
            .distinct()
        ):
            invalidate_round(key)
    return len(changed)
