"""The round files loaded into the catalogue: all of them at once into an empty catalogue give the rows that
loading them one at a time gives, and loading them again changes nothing but what the files changed."""

from datetime import UTC, datetime

import pytest

from leaderboard.catalogue.rounds import ROUNDS_DIR, load_all, load_round, read_round_file
from leaderboard.models import Benchmark, Round

pytestmark = pytest.mark.django_db

# What each write of a round stamps anew: its id, the token its cached pages are kept under, and when.
STAMPS = {"id", "round_id", "cache_token", "changed_at"}


def catalogue() -> tuple[list[dict], list[dict]]:
    """Every round's and benchmark's row, without what each write stamps."""
    rounds = Round.objects.order_by("key").values()
    benchmarks = Benchmark.objects.order_by("round__key", "position").values(
        "round__key", *(f.attname for f in Benchmark._meta.concrete_fields)
    )
    return tuple(
        [{k: v for k, v in row.items() if k not in STAMPS} for row in rows]
        for rows in (rounds, benchmarks)
    )


def test_every_round_at_once_is_the_rows_of_one_round_at_a_time(django_assert_max_num_queries):
    with django_assert_max_num_queries(8):  # 131 one round at a time
        loaded = load_all()
    at_once = catalogue()
    assert [r.key for r in loaded] == [r["key"] for r in at_once[0]]
    assert len(at_once[1]) > len(loaded)  # the benchmarks came too
    Benchmark.objects.all().delete()
    Round.objects.all().delete()
    for path in sorted(ROUNDS_DIR.glob("*.toml")):
        load_round(read_round_file(path))
    assert catalogue() == at_once


def test_loading_again_changes_nothing_and_keeps_what_staff_edited():
    first = load_all()
    moved = datetime(2025, 5, 9, 17, 0, tzinfo=UTC)
    Round.objects.filter(key=first[0].key).update(
        deadline_at=moved, calendar_edited=["deadline_at"]
    )
    before = catalogue()
    again = load_all()
    assert [r.pk for r in again] == [r.pk for r in first]
    assert catalogue() == before
    assert Round.objects.get(key=first[0].key).deadline_at == moved
