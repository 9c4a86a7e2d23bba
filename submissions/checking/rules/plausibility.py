"""How fast a benchmark has been run in the published rounds, and what is too fast to be believed.

Figures per benchmark, measured from the real rounds by bench/throughput_table.py into throughput.toml:
- pace: the fastest rate at which any system logged work (samples, or epochs) within its timed region, per
  second, and per second and sample of global batch. The latter is a step rate: bigger systems train with
  bigger batches, so it moves with each step's speed, not with the system's size, and a log claiming
  RUN_ERROR_MULTIPLE times it is an error (clock.py, run.stop-too-early). The whole-system pace is the
  fallback for logs without a global_batch_size (v0.5);
- accelerator_minutes: the fewest accelerator-minutes (score in minutes x accelerators) per accelerator
  family: a result needing fewer than 1/RESULT_WARNING_MULTIPLE of them is flagged for reviewers
  (result.implausibly-fast). Bigger systems scale less than perfectly, so the smallest set this figure.
The GPU reference checks, where they run, measure what this table can only guess.
"""

from __future__ import annotations

import functools
import math
import tomllib
from dataclasses import dataclass
from pathlib import Path

from leaderboard.catalogue import rule_catalogue
from leaderboard.catalogue.accelerators import family_of
from leaderboard.catalogue.units import minutes

from .findings import Findings

HERE = Path(__file__).resolve().parent
THROUGHPUT_FILE = HERE / "throughput.toml"
# A log claiming work at this multiple of the fastest published step rate is not a real run. Generous, as it
# makes an error: a new generation of accelerators steps two or three times faster. A run of any real log
# squeezed into one second claims at least 18x (v5.1's llama2_70b_lora; most benchmarks 30x to 1,000x).
RUN_ERROR_MULTIPLE = 10.0
# A result this many times faster per accelerator than the best of its family: a warning for reviewers.
RESULT_WARNING_MULTIPLE = 3.0


@dataclass(frozen=True)
class Fastest:
    value: float  # accelerator-minutes (fewest_accelerator_minutes), or work per second (Pace)
    source: str  # where it was seen: round, submitter, system, run


@dataclass(frozen=True)
class Pace:
    """The fastest pace of the published rounds in one unit of work ("samples" or "epochs")."""

    system: Fastest  # work per second
    per_batch: Fastest | None  # work per second per sample of global batch, where the logs gave one


@functools.cache
@functools.cache
def _table() -> dict:
    with open(THROUGHPUT_FILE, "rb") as f:
        return tomllib.load(f)


def fastest_pace(benchmark: str, unit: str) -> Pace | None:
    """The fastest pace of the published rounds for the benchmark, in unit ("samples" or "epochs")."""
    row = _table().get("pace", {}).get(benchmark, {}).get(unit)
    if row is None:
        return None
    per_batch = (
        Fastest(float(row["per_batch"]), row["per_batch_source"]) if "per_batch" in row else None
    )
    return Pace(Fastest(float(row["per_second"]), row["source"]), per_batch)


def fewest_accelerator_minutes(benchmark: str, family: str | None) -> Fastest | None:
    """The family's figure for the benchmark; with family None, the fewest of any family."""
    rows = _table().get("accelerator_minutes", {}).get(benchmark, {})
    candidates = list(rows.values()) if family is None else [rows[family]] if family in rows else []
    if not candidates:
        return None
    row = min(candidates, key=lambda row: float(row["minutes"]))
    return Fastest(float(row["minutes"]), row["source"])


def check_speed(
    benchmark: str,
    score_s: float | None,
    accelerator_model: str,
    accelerator_count: int | None,
    result_path: str = "",
) -> list:
    """A warning when a result's score, per accelerator, beats the best of its accelerator family in the
    published rounds by more than RESULT_WARNING_MULTIPLE."""
    found = Findings(result_path)
    if score_s is None or not math.isfinite(score_s) or score_s <= 0 or not accelerator_count:
        return list(found)
    family = family_of(accelerator_model)
    best = None if family is None else fewest_accelerator_minutes(benchmark, family)
    if best is None:
        return list(found)  # no published result of this family to compare with
    used = minutes(score_s) * accelerator_count
    multiple = best.value / used
    if multiple > RESULT_WARNING_MULTIPLE:
        found.warning(
            rule_catalogue.RESULT_IMPLAUSIBLY_FAST,
            f"The score, {minutes(score_s):,.2f} minutes on {accelerator_count} x {accelerator_model} "
            f"({used:,.1f} accelerator-minutes), is {multiple:,.1f}x faster per accelerator than the best "
            f"{family} result of the published rounds for {benchmark} ({best.value:,.1f} "
            f"accelerator-minutes: {best.source}); more than {RESULT_WARNING_MULTIPLE:g}x is implausible.",
            "Reviewers: compare the logs' clocks and throughput with the system before approving; a "
            "reference check on the same accelerator measures what this table can only guess.",
        )
    return list(found)
