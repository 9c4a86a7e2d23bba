"""The throughput a result's logs imply, per accelerator: pure arithmetic, no Django.

A run processed `samples` training samples until it converged: the samples_count of its last evaluation where
the log counts samples, else its last epoch_num × the dataset's size. Its implied throughput per accelerator is
samples ÷ (time to train × accelerators). The time to train holds evaluations and everything else of the timed
region, so this is a lower bound of the training step's pace; an epoch_num is counted as epochs done (logs
that number epochs from 0 are undercounted by one): both err towards a lower figure, which can only make a
claim look less fast. A result's figure is the median of its counted runs' (all its converged runs' where none
is counted yet).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from submissions.checking.logs.summary import finite_number


@dataclass(frozen=True)
class RunWork:
    """One run's share: samples to convergence and seconds, or why there is none."""

    samples: float | None
    seconds: float | None
    per_accelerator: float | None  # samples per second per accelerator
    how: str  # where the samples came from, or why there are none


@dataclass(frozen=True)
class Implied:
    per_accelerator: float | None  # the result's figure: the median of its runs'
    runs: list[RunWork] = field(default_factory=list)
    reason: str = ""  # why there is no figure


_finite = finite_number  # a finite float from a number or a numeric string, else None


def run_samples(run, dataset_samples: int | None) -> tuple[float | None, str]:
    """(samples processed to convergence, how that was read), or (None, why not). `run` has eval_x
    ("samples" or "epoch"), eval_curve [(x, metric)...] and hyperparameters: a leaderboard Run or the
    RunSummary the log parser made."""
    xs = [x for x in (_finite(point[0]) for point in run.eval_curve or []) if x is not None]
    if not xs:
        return None, "the log has no evaluation with a sample count or an epoch number"
    last = max(xs)
    if last <= 0:
        return None, f"the last evaluation is at {last:g}, not after any training"
    if run.eval_x == "samples":
        return last, f"samples_count {last:,.0f} at the last evaluation"
    if dataset_samples:
        size, source = dataset_samples, "the dataset's size"
    else:
        size = _finite((run.hyperparameters or {}).get("train_samples"))
        source = "train_samples as logged"
        if not size or size <= 0:
            return None, (
                f"the log counts epochs ({last:g}) but neither it nor benchmarks.toml gives the "
                "dataset's size"
            )
    return last * size, f"{last:g} epochs × {size:,.0f} samples ({source})"


def run_work(run, accelerators: int, dataset_samples: int | None = None) -> RunWork:
    samples, how = run_samples(run, dataset_samples)
    seconds = _finite(run.time_to_train_s)
    if samples is None:
        return RunWork(None, seconds, None, how)
    if seconds is None or seconds <= 0:
        return RunWork(samples, seconds, None, "no positive time to train")
    return RunWork(samples, seconds, samples / (seconds * accelerators), how)


def used_runs(runs: list) -> list:
    """The runs a result's figure comes from: its counted runs, else its converged ones."""
    return [r for r in runs if getattr(r, "counted", False)] or [r for r in runs if r.success]


def implied_throughput(
    runs: list, accelerators: int | None, dataset_samples: int | None = None
) -> Implied:
    """The result's implied samples per second per accelerator from its runs (Run rows or RunSummary
    objects with success, counted where known): the median over the counted runs, else over the
    converged ones."""
    if not accelerators or accelerators <= 0:
        return Implied(None, [], "the system states no accelerator count")
    used = used_runs(runs)
    if not used:
        return Implied(None, [], "no run converged")
    works = [run_work(r, accelerators, dataset_samples) for r in used]
    figures = [w.per_accelerator for w in works if w.per_accelerator is not None]
    if not figures:
        return Implied(None, works, works[0].how)
    return Implied(statistics.median(figures), works)
