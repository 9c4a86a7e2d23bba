"""The log must agree with itself: its clock, and a timed region that holds the records that produced the result.

read_timeline reads the events the parser already made (no second parse); check_clock turns what it found into
findings. Only the timeline records are judged: those that time the run and show its progress (TIMELINE_KEYS).
Other records (hyperparameters, settings) say nothing about how long the run took, and real logs carry them
out of order: NVIDIA's v0.5 multi-node logs up to 17 s behind, Intel's v0.6 MiniGo 8 s, Intel's v0.5 ResNet
some with a time of 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from operator import attrgetter

from leaderboard.catalogue import rule_catalogue

from ..logs import Event, ParsedLog, RunSummary
from ..logs.summary import finite_number
from . import plausibility
from .findings import ERROR, WARNING, Findings, RunContext

TIMELINE_KEYS = frozenset(
    {
        "run_start",
        "run_stop",
        "block_start",
        "block_stop",
        "epoch_start",
        "epoch_stop",
        "eval_start",
        "eval_stop",
        "eval_accuracy",
        "train_epoch",
    }
)
# Records that say how much work was done when they were logged: samples_count or epoch_num in their metadata
# (v0.5: eval_accuracy's {"epoch": e}). Starts are left out: their work is still to come.
PROGRESS_KEYS = frozenset({"eval_accuracy", "eval_stop", "epoch_stop", "block_stop"})
# Processes writing one log interleave by milliseconds; Alibaba's v0.6 clock counts whole seconds.
CLOCK_SLACK_S = 1.0
# A record this far from both its neighbours, while they agree with each other, is off the file's clock. Real
# gaps are longer (a 3.5-hour first block in v5.1), but a clock that only moves forward never makes a spike.
OUTLIER_S = 3600.0
TARGET_SLACK = (
    1e-6  # relative, as run._check_quality: float32 metrics log 21.8 as 21.799999237060547
)
# A run that logs this share of the work of its result as done before run_start began before it: real logs log
# none (at most an eval of the untrained model).
WORK_BEFORE_START = 0.5
MAX_LISTED = 3  # findings listed one by one per rule; the rest are counted
_TIME = attrgetter("time_s")


@dataclass
class Timeline:
    """What one pass over a log's events found about its clock and its timed region."""

    not_finite: list[Event] = field(default_factory=list)  # the first MAX_LISTED
    not_finite_count: int = 0
    outliers: list[tuple[Event, Event, Event]] = field(
        default_factory=list
    )  # (record, before, after)
    outlier_count: int = 0
    outside: Event | None = None  # the first record of the timed region (by line) timed outside it
    outside_count: int = 0
    unordered: tuple[Event, Event] | None = (
        None  # (the first record behind, the latest record before it)
    )
    unordered_count: int = 0
    reach: Event | None = None  # the first eval_accuracy that reaches the quality target
    evals: int = 0  # eval_accuracy records on the clock
    first_eval_after_stop: Event | None = None
    first_eval_before_start: Event | None = None
    evals_inside: int = 0  # eval_accuracy records within the timed region, by line and by time
    # unit ("samples" | "epochs") -> (the most work logged within the timed region, the record saying it)
    progress: dict[str, tuple[float, Event]] = field(default_factory=dict)
    # unit -> (the most work logged by records timed up to run_stop, whatever their line; by records timed or
    # written before run_start; the record saying it): what was done by the end, and before the start, of the run.
    done_by_stop: dict[str, tuple[float, Event]] = field(default_factory=dict)
    done_before_start: dict[str, tuple[float, Event]] = field(default_factory=dict)


def _metric(ev: Event) -> float | None:
    value = ev.value
    return finite_number(value.get("value") if isinstance(value, dict) else value)


def _work(ev: Event) -> tuple[str, float] | None:
    """(unit, amount) of work a progress record says was done."""
    metadata = ev.metadata
    samples = finite_number(metadata.get("samples_count"))
    if samples is not None:
        return "samples", samples
    epochs = finite_number(metadata.get("epoch_num"))
    if epochs is None and isinstance(
        ev.value, dict
    ):  # v0.5: eval_accuracy {"epoch": e, "value": v}
        epochs = finite_number(ev.value.get("epoch"))
    return None if epochs is None else ("epochs", epochs)


def read_timeline(
    log: ParsedLog, summary: RunSummary, *, higher_is_better: bool = True
) -> Timeline:
    """One pass over log.events. The timed region runs from the first run_start to the last run_stop, by line
    (summary.first_line) and by time (summary.run_start, summary.run_stop)."""
    tl = Timeline()
    events = log.events
    if not math.isfinite(
        sum(map(_TIME, events))
    ):  # rare: then find which (a sum in C costs next to nothing)
        for ev in events:
            if not math.isfinite(ev.time_s):
                tl.not_finite_count += 1
                if len(tl.not_finite) < MAX_LISTED:
                    tl.not_finite.append(ev)
        events = [ev for ev in events if math.isfinite(ev.time_s)]
    timeline = [ev for ev in events if ev.key in TIMELINE_KEYS]

    start_line, stop_line = summary.first_line.get("run_start"), summary.first_line.get("run_stop")
    start, stop = summary.run_start, summary.run_stop
    timed = (
        start_line is not None
        and stop_line is not None
        and start is not None
        and stop is not None
        and math.isfinite(start)
        and math.isfinite(stop)
        and stop >= start
    )
    if (
        not timed
    ):  # run.no-run-start, run.no-run-stop, run.stop-before-start or run.clock-not-finite say why
        start_line, stop_line, start, stop = (
            0,
            -1,
            math.inf,
            -math.inf,
        )  # no record is in the region
    early, late = start - CLOCK_SLACK_S, stop + CLOCK_SLACK_S
    target = summary.quality_target
    slack = TARGET_SLACK * abs(target) if target is not None else 0.0
    latest = None  # the latest record of the region so far (outliers left out)
    last = len(timeline) - 1
    for i, ev in enumerate(timeline):
        t = ev.time_s
        # Off the clock: far from both neighbours, which agree with each other. Its time says nothing of the others.
        if 0 < i < last:
            before, after = timeline[i - 1].time_s, timeline[i + 1].time_s
            if (
                abs(t - before) > OUTLIER_S
                and abs(t - after) > OUTLIER_S
                and abs(before - after) <= OUTLIER_S
            ):
                tl.outlier_count += 1
                if len(tl.outliers) < MAX_LISTED:
                    tl.outliers.append((ev, timeline[i - 1], timeline[i + 1]))
                continue
        line, key = ev.line, ev.key
        if start_line <= line <= stop_line:
            if t > late or t < early:
                tl.outside_count += 1
                if tl.outside is None:
                    tl.outside = ev
            elif latest is not None and t < latest.time_s - CLOCK_SLACK_S:
                tl.unordered_count += 1
                if tl.unordered is None:
                    tl.unordered = (ev, latest)
            elif latest is None or t > latest.time_s:
                latest = ev
            if key in PROGRESS_KEYS:
                work = _work(ev)
                if work is not None:
                    _most(tl.progress, work, ev)
        if key in PROGRESS_KEYS and t <= late:
            work = _work(ev)
            if work is not None:
                _most(tl.done_by_stop, work, ev)
                if t < early or line < start_line:
                    _most(tl.done_before_start, work, ev)
        if key == "eval_accuracy":
            tl.evals += 1
            if line > stop_line or t > late:
                if tl.first_eval_after_stop is None:
                    tl.first_eval_after_stop = ev
            elif line < start_line or t < early:
                if tl.first_eval_before_start is None:
                    tl.first_eval_before_start = ev
            else:
                tl.evals_inside += 1
            if tl.reach is None and target is not None:
                metric = _metric(ev)
                if metric is not None and (
                    metric >= target - slack if higher_is_better else metric <= target + slack
                ):
                    tl.reach = ev
    return tl


def _most(tally: dict, work: tuple[str, float], ev: Event) -> None:
    unit, amount = work
    best = tally.get(unit)
    if best is None or amount > best[0]:
        tally[unit] = (amount, ev)


def forgery(tl: Timeline, s: RunSummary) -> str | None:
    """Why the log's own records show run_start or run_stop moved, or None when they do not.

    Real logs go on after run_stop: MiniGo evaluates every model once training ends and logs run_stop with the
    time the winning model was trained; Stable Diffusion logs run_stop at the checkpoint that reached the target
    and evaluates it afterwards; Habana's BERT writes its block records late. mlperf-logging's checkers accept
    them all, and their work records agree with their clock: the work of the eval that produced the result
    (its samples_count or epoch_num) is logged as done by run_stop's time, and not most of it before run_start
    (by time or by line). A run_stop moved earlier, or a run_start moved later, breaks one of the two."""
    ev = tl.reach
    if ev is None and tl.evals and not tl.evals_inside:
        ev = tl.first_eval_after_stop or tl.first_eval_before_start
    work = None if ev is None else _work(ev)
    if work is None:
        return None  # nothing to tell a moved run_stop by: the clock findings are warnings
    unit, amount = work
    what = f"the eval_accuracy on line {ev.line} reports {_amount(amount)} {unit} of work"
    # Whole epoch numbers count from 0 in some logs and from 1 in others: v0.6 MiniGo evaluates model N, saved at
    # the end of the epoch numbered N - 1, and its run ends there.
    allowance = 1.0 if unit == "epochs" and amount >= 2 and float(amount).is_integer() else 0.0
    done = tl.done_by_stop.get(unit)
    if done is None or done[0] < (amount - allowance) * (1 - TARGET_SLACK):
        by_then = (
            f"by run_stop's time the log records no more than {_amount(done[0])} (line {done[1].line})"
            if done
            else "no record timed by run_stop's time says any was done"
        )
        return f"{what}, but {by_then}"
    before = tl.done_before_start.get(unit)
    if before is not None and amount > 0 and before[0] >= amount * WORK_BEFORE_START:
        return (
            f"{what}, but the log records {_amount(before[0])} as done before run_start "
            f"(line {before[1].line})"
        )
    return None


def _s(seconds: float) -> str:
    return f"{seconds:,.3f} s" if abs(seconds) < 10 else f"{seconds:,.1f} s"


def _amount(x: float) -> str:
    return f"{x:,.0f}" if x >= 100 else f"{x:.4g}"


def check_clock(tl: Timeline, summary: RunSummary, found: Findings) -> None:
    """The clock rules on a log's timeline (see read_timeline): times that are numbers and agree with each other,
    and, for a run whose time counts (paced), a timed region holding the work that produced the result."""
    timed = _timed(summary)
    forged = forgery(tl, summary) if timed else None
    _check_times(tl, summary, found, forged)
    if paced(summary):
        _check_region(tl, summary, found, forged)


def _timed(summary: RunSummary) -> bool:
    start, stop = summary.run_start, summary.run_stop
    return (
        start is not None
        and stop is not None
        and math.isfinite(start)
        and math.isfinite(stop)
        and stop >= start
    )


def paced(summary: RunSummary) -> bool:
    """True when the run's time counts: both ends timed, in order, and no status other than success (else
    run.no-run-start, run.no-run-stop, run.stop-before-start, run.clock-not-finite or run.not-successful say
    why)."""
    return _timed(summary) and (
        summary.status is None or summary.status.strip().lower() == "success"
    )


def check_pace(
    tl: Timeline,
    summary: RunSummary,
    ctx: RunContext,
    found: Findings,
    *,
    fastest_pace=plausibility.fastest_pace,
) -> None:
    """The timed region's work against the fastest pace of the published rounds (for a paced run).
    fastest_pace(benchmark, unit) gives the pace the run's is compared with (bench/throughput_table.py, which
    measures it, gives none)."""
    _check_pace(tl, summary, ctx, found, fastest_pace)


def _check_times(tl: Timeline, s: RunSummary, found: Findings, forged: str | None) -> None:
    for ev in tl.not_finite:
        found.error(
            rule_catalogue.RUN_CLOCK_NOT_FINITE,
            f"The {ev.key} record on line {ev.line} has the time {ev.time_s!r}, not a finite "
            "number, so the run cannot be timed by it.",
            "Every record's time must be a real clock reading (time_ms in milliseconds since the epoch).",
            line=ev.line,
        )
    _more_not_listed(
        found,
        rule_catalogue.RUN_CLOCK_NOT_FINITE,
        tl.not_finite_count - len(tl.not_finite),
        "have a time that is not a finite number",
    )
    for ev, before, after in tl.outliers:
        found.error(
            rule_catalogue.RUN_CLOCK_OUTLIER,
            f"The {ev.key} record on line {ev.line} is {_hours(ev.time_s - before.time_s)} from the record "
            f"before it (line {before.line}) and {_hours(ev.time_s - after.time_s)} from the one after it "
            f"(line {after.line}), which are {_hours(after.time_s - before.time_s)} apart: its time is off "
            "the clock of the rest of the file.",
            "Log every record with the clock of the run; a record edited or copied from another log "
            "shows as a jump like this.",
            line=ev.line,
        )
    _more_not_listed(
        found,
        rule_catalogue.RUN_CLOCK_OUTLIER,
        tl.outlier_count - len(tl.outliers),
        "are off the file's clock",
    )
    if tl.outside is not None:
        ev, more = tl.outside, tl.outside_count - 1
        after = ev.time_s > s.run_stop
        edge, edge_line = (
            ("run_stop", s.first_line.get("run_stop"))
            if after
            else ("run_start", s.first_line.get("run_start"))
        )
        gap = ev.time_s - s.run_stop if after else s.run_start - ev.time_s
        found.add(
            ERROR if forged else WARNING,
            rule_catalogue.RUN_CLOCK_BACKWARDS,
            f"The {ev.key} record on line {ev.line} lies between run_start and run_stop in the file but is "
            f"timed {_s(gap)} {'after' if after else 'before'} {edge} (line {edge_line}): the clock goes "
            f"backwards across {edge}"
            + (f"; {more} more records of the timed region are timed outside it." if more else ".")
            + _verdict(forged),
            "The records between run_start and run_stop must be timed between them: look for a run_start "
            "or run_stop whose time was edited, or records moved from another part of the log."
            + _reviewers(forged),
            line=ev.line,
        )
    if tl.unordered is not None:
        # A warning: real logs do this within their timed region (Intel's v0.5 ResNet logs jump back 40 minutes
        # between epochs, every record still between run_start and run_stop), which leaves the time to train as
        # it is.
        ev, latest = tl.unordered
        more = tl.unordered_count - 1
        found.warning(
            rule_catalogue.RUN_CLOCK_UNORDERED,
            f"Between run_start and run_stop the clock goes backwards: the {ev.key} record on line "
            f"{ev.line} is timed {_s(latest.time_s - ev.time_s)} before the {latest.key} record on line "
            f"{latest.line} that precedes it (processes writing together are allowed "
            f"{_s(CLOCK_SLACK_S)})"
            + (f"; {more} more records are behind an earlier one." if more else "."),
            "Reviewers: the time to train stands (every record lies between run_start and run_stop), but "
            "a log pieced together from several outputs shows like this.",
            line=ev.line,
        )


def _hours(seconds: float) -> str:
    seconds = abs(seconds)
    return (
        f"{seconds / 86400:,.1f} days" if seconds >= 2 * 86400 else f"{seconds / 3600:,.1f} hours"
    )


def _check_region(tl: Timeline, s: RunSummary, found: Findings, forged: str | None) -> None:
    """The eval that produced the result (the first to reach the target) lies within the timed region; where no
    eval can be judged against the target, at least one eval does, if the log has any."""
    ev = tl.reach
    if ev is not None:
        what = f"The eval_accuracy that reaches the quality target, {_metric(ev):.6g} on line {ev.line},"
    elif (
        tl.evals and not tl.evals_inside
    ):  # no eval reaches a known target: at least one must be in the region
        ev = tl.first_eval_after_stop or tl.first_eval_before_start
        what = (
            f"No eval_accuracy lies between run_start and run_stop; the first, on line {ev.line},"
        )
    else:
        return
    start_line, stop_line = s.first_line.get("run_start"), s.first_line.get("run_stop")
    after = ev.line > stop_line or ev.time_s > s.run_stop + CLOCK_SLACK_S
    if not after and not (ev.line < start_line or ev.time_s < s.run_start - CLOCK_SLACK_S):
        return
    offset = ev.time_s - s.run_start
    found.add(
        ERROR if forged else WARNING,
        rule_catalogue.RUN_RECORD_AFTER_STOP if after else rule_catalogue.RUN_RECORD_BEFORE_START,
        f"{what} is logged {'after run_stop' if after else 'before run_start'}, "
        f"{_s(abs(offset))} {'after' if offset >= 0 else 'before'} run_start, while run_start (line "
        f"{start_line}) and run_stop (line {stop_line}) are {_s(s.run_stop - s.run_start)} apart"
        + (
            ": the time to train leaves out the work that produced the result." + _verdict(forged)
            if forged
            else "." + _verdict(forged)
        ),
        "The timed region must hold the run: log run_stop right after the eval that reaches the quality "
        "target, with the clock the other records use." + _reviewers(forged),
        line=ev.line,
    )


def _verdict(forged: str | None) -> str:
    """The end of a clock finding's message: the work records that prove a moved run_start or run_stop, or
    that the run's time stands."""
    if forged:
        return f" The log's own work records prove it: {forged}."
    return (
        " The log's work records agree with its clock (the work of the eval that produced the result is "
        "logged as done within the timed region, or the log gives no work to tell by), so the time to train "
        "stands: a log that goes on after run_stop or was written out of order, as mlperf-logging's checker "
        "accepts."
    )


def _reviewers(forged: str | None) -> str:
    return (
        ""
        if forged
        else " A check of the portal's own that mlperf-logging does not make: a warning for reviewers."
    )


def _check_pace(
    tl: Timeline, s: RunSummary, ctx: RunContext, found: Findings, fastest_pace
) -> None:
    """The work logged within the timed region, done in its time, at RUN_ERROR_MULTIPLE times the fastest pace
    of the published rounds or more: per sample of global batch (a step rate) where the log gives its batch,
    else for the whole system."""
    seconds = s.run_stop - s.run_start
    batch = finite_number(s.hyperparameters.get("global_batch_size"))
    multiple = plausibility.RUN_ERROR_MULTIPLE
    for unit, (amount, ev) in tl.progress.items():
        fastest = fastest_pace(ctx.benchmark, unit)
        if fastest is None or amount <= 0:
            continue
        if batch is not None and batch > 0 and fastest.per_batch is not None:
            allowed = fastest.per_batch.value * batch
            batch_words = f" with a global batch of {_amount(batch)}"
            best = (
                f"scaled to that batch, did {_amount(allowed)} {unit}/s ({fastest.per_batch.value:.4g} {unit}/s "
                f"per sample of batch: {fastest.per_batch.source})"
            )
        else:
            allowed, batch_words = fastest.system.value, ""
            best = f"did {_amount(allowed)} {unit}/s ({fastest.system.source})"
        if seconds > 0 and amount / seconds <= multiple * allowed:
            continue
        claim = (
            f"{_amount(amount / seconds)} {unit}/s{batch_words}"
            if seconds > 0
            else f"in no time{batch_words}"
        )
        times = f"{amount / seconds / allowed:,.0f}x that" if seconds > 0 else "that in no time"
        found.error(
            rule_catalogue.RUN_STOP_TOO_EARLY,
            f"run_stop (line {s.first_line.get('run_stop')}) comes {_s(seconds)} after run_start, yet the "
            f"log says {_amount(amount)} {unit} were processed by then (line {ev.line}): {claim}. The "
            f"fastest system of the published rounds for {ctx.benchmark}, {best}; this run claims {times}, "
            f"and more than {multiple:g}x is beyond any faster hardware: the run cannot have stopped so soon.",
            "Log run_start and run_stop when the run really starts and stops, with the clock the other "
            "records use.",
            line=s.first_line.get("run_stop"),
        )
        return


def _more_not_listed(found: Findings, rule: str, more: int, what: str) -> None:
    """One finding for the records of a rule past those listed one by one."""
    if more > 0:
        found.error(
            rule, f"{more} more records {what} (not listed).", "See the lines listed above."
        )
