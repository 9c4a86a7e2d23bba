"""Round files: one TOML file per round in leaderboard/rounds/, loaded into the catalogue."""

import tomllib
from pathlib import Path

from django.db import transaction

from .models import Benchmark, Round

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
    "require_init_stop_before_run_start",
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
    return data


@transaction.atomic
def load_round(data: dict) -> Round:
    """Create or update a round and its benchmarks from a parsed round file (idempotent)."""
    defaults = {k: data[k] for k in ROUND_FIELDS if k in data}
    round_, _ = Round.objects.update_or_create(key=data["key"], defaults=defaults)
    for position, bench in enumerate(data["benchmarks"]):
        defaults = {k: bench[k] for k in BENCHMARK_FIELDS if k in bench}
        Benchmark.objects.update_or_create(
            round=round_, key=bench["key"], defaults={**defaults, "position": position}
        )
    return round_


def load_all(directory: Path = ROUNDS_DIR) -> list[Round]:
    return [load_round(read_round_file(p)) for p in sorted(directory.glob("*.toml"))]
