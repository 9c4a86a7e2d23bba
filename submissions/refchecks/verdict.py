"""The verdict of a reference check: the implied throughput against the measured one, within the benchmark's
tolerance (benchmarks.toml). Pure: no Django."""

from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass
from pathlib import Path

DATA_FILE = Path(__file__).resolve().parent / "benchmarks.toml"

CONSISTENT = "consistent"
IMPLAUSIBLY_FAST = "implausibly-fast"
COULD_NOT_RUN = "could-not-run"
OTHER_HARDWARE = "other-hardware"
CPU = "cpu"


@dataclass(frozen=True)
class BenchmarkRule:
    key: str
    probe: bool
    tolerance: float
    dataset_samples: int | None
    seq_len: int | None


@functools.cache
def _data() -> dict:
    with open(DATA_FILE, "rb") as f:
        return tomllib.load(f)


def rule(benchmark: str) -> BenchmarkRule:
    row = _data().get("benchmark", {}).get(benchmark, {})
    default = _data().get("default", {})
    return BenchmarkRule(
        benchmark,
        bool(row.get("probe", False)),
        float(row.get("tolerance", default.get("tolerance", 3.0))),
        row.get("dataset_samples"),
        row.get("seq_len"),
    )


@dataclass(frozen=True)
class Verdict:
    verdict: str
    ratio: float | None  # implied ÷ measured
    message: str


def _rate(x: float) -> str:
    return f"{x:,.3g}" if x < 100 else f"{x:,.0f}"


def judge(
    implied: float,
    measured: float,
    tolerance: float,
    *,
    claimed_family: str,
    measured_on: str | None,
    cpu: bool,
    scaled_by_layers: str = "",
) -> Verdict:
    """Compare what the logs imply with what an agent measured (samples/s per accelerator). Only a GPU
    measurement on the claimed family is judged; one on other hardware is labelled, one on a CPU is never
    compared with a GPU claim."""
    scaled = f" (scaled by layer count: {scaled_by_layers})" if scaled_by_layers else ""
    if cpu:
        return Verdict(
            CPU,
            None,
            f"Measured on a CPU at a tiny scale ({_rate(measured)} samples/s){scaled}: a CPU measurement "
            "is never compared with a GPU claim.",
        )
    if not measured or measured <= 0:
        return Verdict(COULD_NOT_RUN, None, "The agent measured no throughput.")
    ratio = implied / measured
    if measured_on != claimed_family:
        return Verdict(
            OTHER_HARDWARE,
            ratio,
            f"Measured on other hardware ({measured_on or 'an unknown accelerator'}, not "
            f"{claimed_family}): {_rate(measured)} samples/s per accelerator{scaled} against "
            f"{_rate(implied)} implied; not judged.",
        )
    if ratio > tolerance:
        return Verdict(
            IMPLAUSIBLY_FAST,
            ratio,
            f"The logs imply {_rate(implied)} samples/s per accelerator, {ratio:.2f}x what the reference "
            f"model measured on {claimed_family} ({_rate(measured)}){scaled}: beyond the tolerance of "
            f"{tolerance:g}x for tuned code. A reviewer decides.",
        )
    return Verdict(
        CONSISTENT,
        ratio,
        f"The logs imply {_rate(implied)} samples/s per accelerator, {ratio:.2f}x what the reference "
        f"model measured on {claimed_family} ({_rate(measured)}){scaled}: within the tolerance of "
        f"{tolerance:g}x.",
    )
