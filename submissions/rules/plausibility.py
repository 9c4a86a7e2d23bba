"""How fast a benchmark has been run in the published rounds, and what is too fast to be believed.

Figures per benchmark, measured from the real rounds by bench/throughput_table.py into throughput.toml:
- pace: the fastest rate at which any system logged work (samples, or epochs) within its timed region, per
  second, and per second and sample of global batch. The latter is a step rate: bigger systems train with
  bigger batches, so it moves with each step's speed, not with the system's size, and a log claiming
  RUN_ERROR_MULTIPLE times it is an error (clock.py, run.stop-too-early). The whole-system pace is the
  fallback for logs without a global_batch_size (v0.5).
"""
from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
THROUGHPUT_FILE = HERE / "throughput.toml"
# A log claiming work at this multiple of the fastest published step rate is not a real run. Generous, as it
# makes an error: a new generation of accelerators steps two or three times faster. A run of any real log
# squeezed into one second claims at least 18x (v5.1's llama2_70b_lora; most benchmarks 30x to 1,000x).
RUN_ERROR_MULTIPLE = 10.0


@dataclass(frozen=True)
class Fastest:
    value: float  # work per second
    source: str  # where it was seen: round, submitter, system, run


@dataclass(frozen=True)
class Pace:
    """The fastest pace of the published rounds in one unit of work ("samples" or "epochs")."""

    system: Fastest  # work per second
    per_batch: Fastest | None  # work per second per sample of global batch, where the logs gave one


@functools.cache
def _table() -> dict:
    with open(THROUGHPUT_FILE, "rb") as f:
        return tomllib.load(f)


def fastest_pace(benchmark: str, unit: str) -> Pace | None:
    """The fastest pace of the published rounds for the benchmark, in unit ("samples" or "epochs")."""
    row = _table().get("pace", {}).get(benchmark, {}).get(unit)
    if row is None:
        return None
    per_batch = Fastest(float(row["per_batch"]), row["per_batch_source"]) if "per_batch" in row else None
    return Pace(Fastest(float(row["per_second"]), row["source"]), per_batch)

