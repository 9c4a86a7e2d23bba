"""Scoring a result from its runs' times to train: its score, the failed runs it tolerates and,
when it has no score, why. Plain functions, no Django: finalize loads, calls these, stores.

A failed run counts as infinitely slow. The olympic mean drops the fastest and the
slowest run and averages the rest; if a failed run is still among the rest, there is no
score. This matches mlperf-logging's result_summarizer for one dropped run per side.

A live round scores the round's number of runs and no other; imported history scores as
the summarizer scored it when MLCommons published the round: every run of the folder,
however many there are (as_published).
"""

import re
from collections import Counter
from dataclasses import dataclass, field
from math import inf

from .bundles import runlogs


@dataclass
class Score:
    seconds: float | None
    counted: list[int] = field(default_factory=list)  # positions of the runs in the mean
    dropped: list[int] = field(default_factory=list)  # positions dropped as fastest or slowest
    message: str = ""


def olympic(times: list[float | None], required_runs: int, drop_per_side: int = 1) -> Score:
    """Score `times` (seconds, None for a failed run), in run order."""
    if len(times) < required_runs:
        return Score(
            None, message=f"{len(times)} of the {required_runs} required runs were submitted."
        )
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


# A result as the pipeline scores it: its benchmark's scoring rules and its runs, in plain values.

FIRST_CONVERGING = "first-converging"  # Benchmark.Scoring's value for v0.5 NCF's way


@dataclass(frozen=True)
class BenchmarkScoring:
    """What scoring needs to know of a benchmark."""

    key: str
    required_runs: int
    scoring: str = "olympic"  # or FIRST_CONVERGING
    counted_runs: int | None = None  # first-converging: the converged runs that count
    reference_time_s: float | None = None

    @property
    def first_converging(self) -> bool:
        return self.scoring == FIRST_CONVERGING


@dataclass(frozen=True)
class RunTime:
    """One run of a result as scoring sees it."""

    time_to_train_s: float | None
    success: bool
    rejected: bool = False  # its log breaks a blocking rule
    failure_reason: str = ""
    failure_rule: str = ""  # the rule id of its first error finding, where it has one
    # Named result_*.txt: the files mlperf-logging's result_summarizer scores (a log named otherwise is a run
    # of a live round's result, but no run of the record MLCommons published).
    summarizer_reads: bool = True
    name: str = ""  # its file's name, for the messages that name it

    @property
    def seconds(self) -> float | None:
        """Its time to train, or None when it counts as infinitely slow (failed or rejected)."""
        return self.time_to_train_s if self.success and not self.rejected else None


@dataclass
class ResultScore:
    seconds: float | None  # the olympic mean times the RCP factor; None: no score
    speedup: float | None
    counted: list[int]  # positions of the runs in the mean
    dropped: list[int]  # positions dropped as fastest or slowest
    message: str  # the result's score message: a note, or why it has no score


def tolerated_error_files(benchmark: str) -> int:
    """How many run files of a result may fail their checks and the result still stand:
    mlperf-logging's package checker accepts one non-compliant file under olympic scoring (four
    for UNet3D). Olympic scoring drops as many runs per side."""
    return 4 if benchmark == "unet3d" else 1


def score_result(
    benchmark: BenchmarkScoring,
    runs: list[RunTime],
    scaling_factor: float = 1.0,
    ingest_note: str = "",
    as_published: bool = False,
) -> ResultScore:
    """Score a result from its runs, in run order; a failed or rejected run counts as infinitely
    slow. The mean is multiplied by scaling_factor (rules.mlperf.rcp.score_factor decides it).
    `ingest_note` says why ingest found no runs in the folder: with none, it stays the message.
    as_published (imported history): every run the summarizer reads counts, however many the round
    required, as mlperf-logging's result_summarizer counts them (it scores the result_*.txt files there
    are); logs named otherwise are not runs of the published record."""
    if as_published:
        scored_runs = [i for i, run in enumerate(runs) if run.summarizer_reads]
    else:
        scored_runs = list(range(len(runs)))
    score = _score_times(benchmark, [runs[i].seconds for i in scored_runs], as_published)
    score.counted = [scored_runs[i] for i in score.counted]
    score.dropped = [scored_runs[i] for i in score.dropped]
    seconds = None if score.seconds is None else score.seconds * scaling_factor
    unread = [run.name for run in runs if not run.summarizer_reads] if as_published else []
    if not runs and ingest_note:
        message = ingest_note
    elif score.seconds is None and unread and len(scored_runs) < benchmark.required_runs:
        message = _too_few_read(len(scored_runs), benchmark.required_runs, unread)
    elif score.seconds is None:
        message = score.message + failures_in_words([runs[i] for i in scored_runs])
    else:
        message = " ".join(filter(None, [score.message, unread and _named_otherwise(unread)]))
    message = message[:500]
    return ResultScore(
        seconds, speedup(benchmark.reference_time_s, seconds), score.counted, score.dropped, message
    )


def _named_otherwise(names: list[str]) -> str:
    shown = ", ".join(names[:3]) + (", …" if len(names) > 3 else "")
    one = len(names) == 1
    return (
        f"The folder's {len(names)} log{'' if one else 's'} named otherwise ({shown}) {'is' if one else 'are'} "
        f"read and checked here, but mlperf-logging's tools read only {runlogs.SUMMARIZER_GLOB}: "
        f"{'no run' if one else 'no runs'} of the published record."
    )


def _too_few_read(read: int, required: int, unread: list[str]) -> str:
    """Why a result of imported history has too few runs when logs named otherwise were read: the runs of the
    published record are the files mlperf-logging's tools read."""
    return (
        f"{read} of the {required} required runs are named as mlperf-logging's result_summarizer reads them "
        f"({runlogs.SUMMARIZER_GLOB}). {_named_otherwise(unread)}"
    )


def _score_times(
    benchmark: BenchmarkScoring, times: list[float | None], as_published: bool
) -> Score:
    drop = tolerated_error_files(benchmark.key)
    if benchmark.first_converging:
        return first_converging(times, benchmark.counted_runs or benchmark.required_runs, drop)
    if as_published and times and len(times) != benchmark.required_runs:
        score = olympic(times, len(times), drop)
        if score.seconds is not None:
            score.message = (
                f"Scored from all {len(times)} runs of the folder ({benchmark.required_runs} required: "
                "rule result.run-count), as mlperf-logging's result_summarizer scored the published round."
            )
        return score
    return olympic(times, benchmark.required_runs, drop)


_LINE_NOTE = re.compile(r" \((line|line count) \d+\)")  # where in its own log; runs differ there
NO_RULE = "the log breaks a rule"


def failures_in_words(runs: list[RunTime]) -> str:
    """' Why: <rule id> (N runs): <one of those runs' reason>.' for a result its failed runs left unscored:
    runs are counted by the rule that failed them, not by the words of their messages, which name lines
    and values that differ from run to run. A run failed by no named rule is counted by its reason."""
    failed = [run for run in runs if run.seconds is None]
    if not failed:
        return ""

    def reason(run: RunTime) -> str:
        return _LINE_NOTE.sub("", run.failure_reason).rstrip(".") or NO_RULE

    ((cause, count),) = Counter(run.failure_rule or reason(run) for run in failed).most_common(1)
    example = next(run for run in failed if (run.failure_rule or reason(run)) == cause)
    said = f": {reason(example)}" if example.failure_rule and example.failure_reason else ""
    return f" Why: {cause} ({count} run{'s' if count != 1 else ''}){said}."


TOLERATED_HINT = " Tolerated: the result still scores, with this run counted as infinitely slow."


def tolerated_runs(benchmark: BenchmarkScoring, scored: bool, failing_runs: set) -> set:
    """The runs, of those of a result with error findings, whose errors become warnings (their
    hints ending in TOLERATED_HINT): all of them when the result still scores and no more fail
    than tolerated_error_files allows; none otherwise. A result scored from the first converging
    runs (v0.5 NCF) expects failures by design."""
    if not scored or not failing_runs:
        return set()
    if benchmark.first_converging or len(failing_runs) <= tolerated_error_files(benchmark.key):
        return set(failing_runs)
    return set()
