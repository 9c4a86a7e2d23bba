"""check_run(): one result log -> its RunSummary and the Findings of every rule that applies to it.

The check is a declared pipeline (STEPS): an ordered list of named steps, each saying when it applies and what
it adds to one explicit state of the run (RunState). A step reads only the state; nothing passes between steps
beside it. Cheapest first, each turning what it sees into findings rather than raising:

1. read the log: prescan the bytes, parse with our tolerant parser (keeping the ":::MLLOG" lines it read, for
   the checker and the RCP reader) and summarize (start, stop, status, evals, hyperparameters and seeds);
2. report what the scan and the parser saw (over-long lines, binary content, non-UTF-8, unreadable lines);
3. start and stop: present, ordered, successful, init order where the round asks for it;
4. clock: a clock that agrees with itself, and a timed region holding the work that produced the result;
5. pace: the timed region's work at a pace the published rounds make plausible;
6. quality target: the last eval reaches it; then the logged benchmark key;
7. the ruleset's own checks: the data-driven v0.5 checks for 0.5.0, mlperf-logging's compliance checker for
   the rulesets it knows (not on files that would hurt it or that name a benchmark outside the round);
8. in history, the portal's own errors as warnings (the rule catalogue); then the run's success settled;
9. RCP facts: the convergence reading finalize's RCP check compares, where the round has RCPs.

A run's power logs are read per result by the pipeline (pipeline/checks.py), from the bundle's files.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from leaderboard.catalogue import rule_catalogue

from ..budget import is_stop
from ..logs import ParsedLog, RunSummary, parse_file, summarize
from ..logs.summary import finite_number, reads
from . import clock, v05
from .findings import Finding, Findings, RunContext, RunOutcome, over_budget_finding
from .mlperf import compliance, library, rcp
from .prescan import Prescan, prescan

TARGET_SLACK = 1e-6  # relative: float32 metrics log 21.8 as 21.799999237060547
MAX_NOISE_LINES = 3  # over-long lines without a log event, listed one by one
_PARSER_NOTES = ("line longer than", "line contains NUL bytes")  # reported by the prescan instead
# Keys most lines of a log have (v5.1: tracked_stats, 3 lines in 4). The parser leaves those no one reads out
# (_unread); other unread keys are rare, so parsing them as usual costs less than looking for them.
BULKY_KEYS = ("tracked_stats",)


@dataclass
class RunState:
    """Everything the check of one run knows, as the steps build it up (each field says which step adds it)."""

    path: object  # the log (a path, or a file of a bundle read in place: see logs.open_binary)
    rel_path: str  # bundle-relative, for the findings
    ctx: RunContext
    found: Findings  # every step adds its findings here
    scan: Prescan | None = None  # read the log
    log: ParsedLog | None = None  # read the log
    # read the log: the ":::MLLOG" lines as parse_file read them, for the checker and the RCP reader to take
    # instead of reading the file again (compliance.loglines_from); None where neither can use them.
    mllog_lines: tuple | None = None
    summary: RunSummary | None = None  # read the log; its success is settled by "success"
    timeline: clock.Timeline | None = None  # clock
    benchmark_ok: bool = (
        True  # benchmark key: False when the log names a benchmark outside the round
    )
    refused: Finding | None = (
        None  # compliance: the checker's first error, whose verdict fails the run
    )
    convergence: dict | None = None  # RCP facts

    def outcome(self) -> RunOutcome:
        return RunOutcome(self.summary, list(self.found), self.convergence)


def _always(state: RunState) -> bool:
    return True


@dataclass(frozen=True)
class Step:
    """One named step of a run's check: when it applies, and what it does to the state."""

    name: str
    run: Callable[[RunState], None]
    applies: Callable[[RunState], bool] = field(default=_always)
    adds: str = ""  # what it adds to the state, in words


def check_run(
    path, rel_path: str, ctx: RunContext, steps: tuple[Step, ...] | None = None
) -> RunOutcome:
    """Check one result log at `path` (or a file of a bundle read in place, see logs.open_binary; bundle-relative
    `rel_path`) against the round's rules: the steps of STEPS that apply, in order."""
    state = RunState(path, rel_path, ctx, Findings(rel_path))
    for step in STEPS if steps is None else steps:
        if step.applies(state):
            step.run(state)
    return state.outcome()


# --- the steps ------------------------------------------------------------------------------------------------


def read_log(state: RunState) -> None:
    ctx = state.ctx
    state.scan = prescan(state.path, ctx.max_line_bytes)
    # The checker and the RCP reader take their lines from this one read of the file.
    kept = (
        [] if not v05.handles(ctx.ruleset) and compliance.takes_mllog_lines(ctx.ruleset) else None
    )
    state.log = parse_file(
        state.path,
        max_line_bytes=ctx.max_line_bytes,
        mllog_lines=kept,
        leave_out=[key for key in BULKY_KEYS if _unread(key)],
        keep_words=rcp.READER_WORDS,
    )
    state.mllog_lines = None if kept is None else tuple(kept)
    state.summary = summarize(
        state.log,
        require_init_stop_before_run_start=ctx.require_init_stop_before_run_start,
        quality_target=ctx.quality_target,
        higher_is_better=ctx.higher_is_better,
    )


def report_reading(state: RunState) -> None:
    _report_prescan(state.scan, state.ctx, state.found)
    _report_parser_problems(state.log, state.found)


def check_start_stop(state: RunState) -> None:
    _check_start_stop(state.log, state.summary, state.ctx, state.found)


def check_clock(state: RunState) -> None:
    state.timeline = clock.read_timeline(
        state.log, state.summary, higher_is_better=state.ctx.higher_is_better
    )
    clock.check_clock(state.timeline, state.summary, state.found)


def check_pace(state: RunState) -> None:
    clock.check_pace(state.timeline, state.summary, state.ctx, state.found)


def check_quality(state: RunState) -> None:
    _check_quality(state.log, state.summary, state.ctx, state.found)


def check_benchmark(state: RunState) -> None:
    state.benchmark_ok = _check_benchmark(state.log, state.ctx, state.found)


def check_v05(state: RunState) -> None:
    v05.check(state.log, state.ctx, state.found)


def check_compliance(state: RunState) -> None:
    """mlperf-logging's compliance checker, where it is installed, has rules for the ruleset and the file is
    fit for it; otherwise a finding says why it did not run."""
    ctx, found = state.ctx, state.found
    if not library.available():
        found.warning(
            rule_catalogue.MLPERF_UNAVAILABLE,
            "mlperf-logging is not installed on this worker, so the log was not "
            "checked for compliance.",
            "Install mlperf-logging on the workers.",
        )
        return
    if not compliance.supports(ctx.ruleset):
        found.info(
            rule_catalogue.MLPERF_UNSUPPORTED_RULESET,
            f"mlperf-logging {library.version()} has no compliance rules for training {ctx.ruleset}; "
            "only the portal's own checks ran.",
        )
        return
    if reasons := _unfit_for_the_checker(state):
        found.info(
            rule_catalogue.MLPERF_SKIPPED,
            "mlperf-logging's compliance checker was not run on this file: "
            + "; ".join(reasons)
            + ".",
            "Fix the errors above; the checker runs on the corrected upload.",
        )
        return
    try:
        verdict = compliance.of_its_time(
            compliance.check_file(
                state.path,
                state.rel_path,
                ctx.ruleset,
                ctx.benchmark,
                max_line_bytes=ctx.max_line_bytes,
                mllog_lines=state.mllog_lines,
                left_out=state.log.left_out,
                history=ctx.history,
            ),
            ctx.ruleset,
        )
    except Exception as exc:
        if is_stop(exc):
            raise
        found.error(
            rule_catalogue.MLPERF_COMPLIANCE,
            f"mlperf-logging's checker failed on this file ({type(exc).__name__}: "
            f"{str(exc)[:200]}), so its compliance is not known.",
            "A fault in the portal or in mlperf-logging, not necessarily in the log: reviewers see "
            "this finding.",
        )
        return
    found.extend(verdict)
    state.refused = next((f for f in verdict if f.severity == "error"), None)


def _unfit_for_the_checker(state: RunState) -> list[str]:
    """Why the file is not given to mlperf-logging's checker: it would choose its rules by the logged benchmark,
    or be hurt by the file."""
    reasons = []
    if not state.benchmark_ok:
        reasons.append("the log names a benchmark that is not one of the round's")
    if state.scan.binary:
        reasons.append("the file holds binary data")
    if state.scan.long_marker_line_count:
        reasons.append("a log line is longer than the limit")
    return reasons


def as_in_history(state: RunState) -> None:
    state.found[:] = _as_in_history(state.found)


def settle_success(state: RunState) -> None:
    _settle_success(state.summary, state.found, state.refused)


def read_convergence(state: RunState) -> None:
    """Read now, from the lines parsed above, for finalize's RCP check."""
    ctx = state.ctx
    state.convergence = (
        {"unreadable": True}
        if state.scan.loses_records
        else rcp.read_run(
            state.path,
            ctx.ruleset,
            mllog_lines=state.mllog_lines,
            max_line_bytes=ctx.max_line_bytes,
        )
    )


STEPS: tuple[Step, ...] = (
    Step("read the log", read_log, adds="scan, log, mllog_lines, summary"),
    Step("report what the scan saw", report_reading, adds="findings"),
    Step("start and stop", check_start_stop, adds="findings"),
    Step("clock", check_clock, adds="timeline, findings"),
    Step("pace", check_pace, lambda s: clock.paced(s.summary), adds="findings"),
    Step("quality target", check_quality, adds="findings"),
    Step("benchmark key", check_benchmark, adds="benchmark_ok, findings"),
    Step("v0.5 rules", check_v05, lambda s: v05.handles(s.ctx.ruleset), adds="findings"),
    Step(
        "compliance",
        check_compliance,
        lambda s: not v05.handles(s.ctx.ruleset),
        adds="refused, findings",
    ),
    Step("as in history", as_in_history, lambda s: s.ctx.history, adds="findings (severities)"),
    Step("success", settle_success, adds="summary.success, summary.failure_reason"),
    Step(
        "RCP facts",
        read_convergence,
        lambda s: rcp.applies(s.ctx.ruleset, s.ctx.benchmark),
        adds="convergence",
    ),
)


@functools.lru_cache(maxsize=4096)
def _unread(key: str) -> bool:
    """Keys whose events neither the rules here, summarize nor any mlperf-logging rule reads."""
    return not reads(key) and not compliance.names_a_rule(key)


def _report_prescan(scan: Prescan, ctx: RunContext, found: Findings) -> None:
    limit = ctx.max_line_bytes
    for long in scan.long_lines:
        if long.has_marker:
            found.error(
                rule_catalogue.RUN_LINE_TOO_LONG,
                f"Line {long.line} is {long.length:,} bytes long (the limit is {limit:,}) and holds a log "
                "event; it was not read, so that event is lost.",
                "Log lines are short records: output of several processes run together, or a huge value "
                "(a tensor, a file) logged as a hyperparameter, makes lines this long.",
                line=long.line,
            )
    noise = [x for x in scan.long_lines if not x.has_marker][:MAX_NOISE_LINES]
    for long in noise:
        found.warning(
            rule_catalogue.RUN_LINE_TOO_LONG,
            f"Line {long.line} is {long.length:,} bytes long (the limit is {limit:,}); it holds no log "
            "event and was skipped.",
            "Usually progress-bar output without newlines; harmless, but better left out of the result "
            "log.",
            line=long.line,
        )
    more_markers = scan.long_marker_line_count - sum(x.has_marker for x in scan.long_lines)
    more_noise = scan.long_line_count - scan.long_marker_line_count - len(noise)
    if more_markers > 0:
        found.error(
            rule_catalogue.RUN_LINE_TOO_LONG,
            f"{more_markers} more lines with log events are longer than {limit:,} "
            "bytes (not listed).",
            "See the lines listed above.",
        )
    if more_noise > 0:
        found.warning(
            rule_catalogue.RUN_LINE_TOO_LONG,
            f"{more_noise} more lines without log events are longer than "
            f"{limit:,} bytes (not listed).",
            "See the lines listed above.",
        )
    if scan.binary:
        if scan.first_nul_line is not None:
            message = (
                f"The file holds binary data: NUL bytes on {scan.nul_line_count} "
                f"line{'s' if scan.nul_line_count != 1 else ''}, the first at line {scan.first_nul_line}."
            )
        else:
            message = "The file does not look like text: many control bytes near its start."
        found.error(
            rule_catalogue.RUN_BINARY_CONTENT,
            message,
            "Upload the plain-text log the benchmark printed (not a compressed, binary or corrupted file).",
            line=scan.first_nul_line or 1,
        )
    if scan.first_non_utf8_line is not None:
        found.add(
            "warning" if scan.non_utf8_on_marker_line else "info",
            rule_catalogue.RUN_NOT_UTF8,
            f"Line {scan.first_non_utf8_line} has bytes that are not UTF-8"
            + (
                " on a log event line; its text may be read wrongly."
                if scan.non_utf8_on_marker_line
                else " (outside the log events)."
            ),
            "Write logs as UTF-8; progress bars cut mid-character are the usual cause.",
            line=scan.first_non_utf8_line,
        )


def _report_parser_problems(log: ParsedLog, found: Findings) -> None:
    reported = False
    for line, message in log.problems:
        if message.endswith("more problems not listed") and not reported:
            continue  # the hidden ones are of the kinds the prescan reports
        if not message.startswith(_PARSER_NOTES):
            reported = True
            found.warning(
                rule_catalogue.RUN_BAD_LINE,
                f"A log line could not be read: {message}.",
                "Look for output of several processes written into one line, or a truncated line.",
                line=line,
            )


def _check_start_stop(log: ParsedLog, s: RunSummary, ctx: RunContext, found: Findings) -> None:
    start_line, stop_line = s.first_line.get("run_start"), s.first_line.get("run_stop")
    if s.run_start is None:
        found.error(
            rule_catalogue.RUN_NO_RUN_START,
            "The log has no run_start event, so the run has no start time.",
            "Log run_start where the timed region begins, as the reference implementation does.",
        )
    if s.run_stop is None:
        last = log.line_count or None
        found.error(
            rule_catalogue.RUN_NO_RUN_STOP,
            f"The log ends{f' (line {last})' if last else ''} without a run_stop event: the run did not "
            "finish, or its log was cut short.",
            "Upload the complete log of a run that finished; a run that crashed counts as failed.",
            line=last,
        )
    if s.run_start is not None and s.run_stop is not None:
        if s.run_stop < s.run_start:
            found.error(
                rule_catalogue.RUN_STOP_BEFORE_START,
                f"run_stop (line {stop_line}) is logged before run_start (line {start_line}).",
                "The clock must start before it stops: check the timestamps of both events.",
                line=stop_line,
            )
        elif s.status is not None and s.status.strip().lower() != "success":
            found.error(
                rule_catalogue.RUN_NOT_SUCCESSFUL,
                f"run_stop reports the status {s.status!r}: the run failed.",
                "Under olympic scoring a result may drop one failed run; rerun if more failed.",
                line=stop_line,
            )
    if ctx.require_init_stop_before_run_start and s.run_start is not None:
        init_stop = next((ev for ev in log.events if ev.key == "init_stop"), None)
        if init_stop is None:
            found.error(
                rule_catalogue.RUN_NO_INIT_STOP,
                "The log has no init_stop event; this round's timed region starts "
                "after initialisation ends.",
                "Log init_stop when initialisation ends, before run_start.",
                line=start_line,
            )
        elif (s.run_start, start_line or 0) < (init_stop.time_s, init_stop.line):
            found.error(
                rule_catalogue.RUN_INIT_ORDER,
                f"run_start (line {start_line}) comes before init_stop (line {init_stop.line}); this "
                "round's timed region starts after initialisation ends.",
                "Log init_stop first, then run_start.",
                line=start_line,
            )


def _check_quality(log: ParsedLog, s: RunSummary, ctx: RunContext, found: Findings) -> None:
    """The last eval of a run that claims success (or does not say) must reach the quality target."""
    target = s.quality_target
    if target is None or s.run_stop is None:
        return
    if s.status is not None and s.status.strip().lower() != "success":
        return  # run.not-successful says it already
    last = None
    for ev in log.events:
        if ev.key == "eval_accuracy":
            value = ev.value.get("value") if isinstance(ev.value, dict) else ev.value
            metric = finite_number(value)
            if metric is not None:
                last = (metric, ev)
    if last is None:
        return  # no numeric eval (e.g. Mask R-CNN's [bbox, segm] pairs): the compliance rules judge those
    metric, ev = last
    slack = TARGET_SLACK * abs(target)
    reached = metric >= target - slack if ctx.higher_is_better else metric <= target + slack
    if not reached:
        found.error(
            rule_catalogue.RUN_QUALITY_TARGET,
            f"The last eval_accuracy, {metric:.6g}, does not reach the quality target {target:.6g} "
            f"({'higher' if ctx.higher_is_better else 'lower'} is better).",
            "A run ends when it reaches the target; this one stopped short and counts as failed.",
            line=ev.line,
        )


def _logged_benchmark(log: ParsedLog) -> tuple[object, int | None]:
    for ev in log.events:
        if ev.key == "submission_benchmark":
            return ev.value, ev.line
    for ev in log.events:  # v0.5 and Alibaba name the benchmark on every line
        if "benchmark" in ev.metadata:
            return ev.metadata["benchmark"], ev.line
    return None, None


def _check_benchmark(log: ParsedLog, ctx: RunContext, found: Findings) -> bool:
    """False when the log names a benchmark outside the round (then no rules are chosen by it)."""
    value, line = _logged_benchmark(log)
    if value is None:
        return True  # missing: the ruleset's own checks say so
    keys = ", ".join(sorted(ctx.benchmark_keys))
    if not isinstance(value, str) or value not in ctx.benchmark_keys:
        found.error(
            rule_catalogue.RUN_BENCHMARK_KEY,
            f"The log names its benchmark {str(value)[:100]!r}, which is not a benchmark key of this round.",
            f"Log the round's key for this result folder, {ctx.benchmark!r} (the round's keys: {keys}).",
            line=line,
        )
        return False
    if value != ctx.benchmark:
        found.error(
            rule_catalogue.RUN_BENCHMARK_MISMATCH,
            f"The log is for benchmark {value!r} but sits in the result folder of {ctx.benchmark!r}.",
            f"Move the log to the {value!r} folder, or log {ctx.benchmark!r} if that is what ran.",
            line=line,
        )
    return True


def _as_in_history(found: Findings) -> list[Finding]:
    """The findings as imported history has them: an error of a check of the portal's own is a warning there
    (the rule catalogue's severity in history), saying why, and fails nothing."""
    out = []
    for f in found:
        severity = rule_catalogue.severity(f.rule, f.severity, history=True)
        if severity != f.severity:
            f = replace(f, severity=severity, hint=f.hint + rule_catalogue.HISTORY_HINT)
        out.append(f)
    return out


def _settle_success(summary: RunSummary, found: Findings, refused: Finding | None) -> None:
    """A run that claims success but breaks a convergence rule, or that mlperf-logging's checker of its ruleset
    fails (the result summarizer drops such a run: an initialisation over its limit, say), is a failed run."""
    if not summary.success:
        return
    for f in found:
        if f.severity == "error" and rule_catalogue.fails_run(f.rule):
            summary.success = False
            summary.failure_reason = f.message[:500]
            return
    if refused is not None:
        summary.success = False
        summary.failure_reason = f"mlperf-logging's checker fails the log: {refused.message}"[:500]


# The findings on a run whose checks did not finish, made by the task that ran check_run
# (pipeline/checks.py) in place of its outcome.


def timed_out(rel_path: str) -> Finding:
    return Finding(
        "error",
        rule_catalogue.RUN_TIMEOUT,
        "Checking this log took longer than the task's time limit.",
        "Look for very long lines or a log far larger than a training run writes.",
        rel_path,
    )


def over_budget(rel_path: str, over) -> Finding:
    """Checking the log passed a limit of its budget (over: budget.OverBudget)."""
    return over_budget_finding(
        rule_catalogue.RUN_OVER_BUDGET,
        "error",
        "Checking this log",
        over,
        "the run is not counted.",
        rel_path,
    )


def unreadable(rel_path: str, error: OSError) -> Finding:
    return Finding(
        "error",
        rule_catalogue.RUN_UNREADABLE,
        f"The log could not be read: {error.strerror}.",
        "Re-upload the bundle.",
        rel_path,
    )


def check_crashed(rel_path: str, error: Exception) -> Finding:
    """check_run raised what it should have made a finding of: a fault in the checks or in
    mlperf-logging."""
    return Finding(
        "error",
        rule_catalogue.RUN_CHECK_CRASHED,
        f"Checking this log failed inside the portal ({type(error).__name__}: {str(error)[:200]}), "
        "so the run is not counted.",
        "A fault in the portal, not necessarily in the log: report it to the portal's "
        "administrators with this file.",
        rel_path,
    )


# Hyperparameters JSON cannot hold as they are (NaN, Infinity, nested too deep): stored as text.


def stored_as_text(changes_in_words: str) -> Finding:
    return Finding(
        "warning",
        rule_catalogue.RUN_STORED_AS_TEXT,
        f"Hyperparameters the portal stores as text, as JSON cannot hold them: {changes_in_words}.",
        "Log hyperparameters as finite numbers (not NaN or Infinity) or short lists; runs are compared by "
        "what is stored.",
    )
