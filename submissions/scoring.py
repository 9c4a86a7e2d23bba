"""Scoring a result from its runs' times to train: plain functions, no Django.

A failed run counts as infinitely slow. The olympic mean drops the fastest and the
slowest run and averages the rest; if a failed run is still among the rest, there is no
score. This matches mlperf-logging's result_summarizer for one dropped run per side.
"""

from dataclasses import dataclass, field
from math import inf


@dataclass
class Score:
    seconds: float | None
    counted: list[int] = field(default_factory=list)  # positions of the runs in the mean
    dropped: list[int] = field(default_factory=list)  # positions dropped as fastest or slowest
    message: str = ""


def olympic(times: list[float | None], required_runs: int, drop_per_side: int = 1) -> Score:
    """Score `times` (seconds, None for a failed run), in run order."""
    if len(times) < required_runs:
        return Score(None, message=f"{len(times)} of the {required_runs} required runs were submitted.")
    used = times[:required_runs]
    order = sorted(range(len(used)), key=lambda i: inf if used[i] is None else used[i])
    dropped = order[:drop_per_side] + order[len(order) - drop_per_side :]
    kept = order[drop_per_side : len(order) - drop_per_side]
    message = ""
    if len(times) > required_runs:
        message = f"Only the first {required_runs} of {len(times)} runs count."
    failures = sum(t is None for t in used)
    if failures > drop_per_side:
        return Score(
            None,
            dropped=sorted(dropped),
            message=f"{failures} of {required_runs} runs failed; at most {drop_per_side} may fail.",
        )
    if not kept:
        return Score(None, message="Too few runs to drop the fastest and the slowest.")
    mean = sum(used[i] for i in kept) / len(kept)
    return Score(mean, counted=sorted(kept), dropped=sorted(dropped), message=message)


def first_converging(times: list[float | None], counted_runs: int, drop_per_side: int = 1) -> Score:
    """Olympic mean of the first `counted_runs` runs that converged (v0.5 NCF)."""
    converged = [i for i, t in enumerate(times) if t is not None][:counted_runs]
    if len(converged) < counted_runs:
        return Score(None, message=f"{len(converged)} runs converged; {counted_runs} are needed.")
    inner = olympic([times[i] for i in converged], counted_runs, drop_per_side)
    return Score(
        inner.seconds,
        counted=[converged[i] for i in inner.counted],
        dropped=[converged[i] for i in inner.dropped],
        message=inner.message,
    )


def speedup(reference_time_s: float | None, score_s: float | None) -> float | None:
    if not reference_time_s or not score_s:
        return None
    return reference_time_s / score_s
