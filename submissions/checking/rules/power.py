"""Checks of one run's power logs, and its energy where they allow one (submissions/checking/energy.py).

A bad power log costs the energy score, never the time score: every finding here is a warning on the
run, and the run's energy is withheld (None) where a finding says the logs cannot give it. The
thresholds below are the portal's own: MLPerf's power rules give none that a log can be checked
against, so they are set wide enough that every power result of v4.0 passes them.

In imported history the published energy stands: where mlperf-logging's summarizer computes an energy
from readings the portal doubts (a negative or absurd reading, a switch log without
interconnect_power_est, which it counts as 0 W), the run keeps that energy, computed the same way, and
the finding is shown beside it. What the summarizer cannot compute either (no node log, no readable
reading, no measurement start) withholds the energy there too.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from operator import sub

from leaderboard.catalogue import rule_catalogue

from .. import energy
from ..logs.power import NODE_FILE, SWITCH_FILE, PowerLog
from ..systems import MAX_COUNT
from .findings import Finding, Findings, over_budget_finding

MAX_GAP_S = 60.0  # longest time without a reading during the run (v4.0: 2 s, once 39 s)
MAX_CLOCK_OFFSET_S = 600.0  # a measurement that starts further from run_start is on another clock
MAX_WATTS = 200_000.0  # one node or switch drawing more is no reading (a GB200 NVL72 rack: ~120 kW)
MAX_LOG_BYTES = 256 << 20  # one node's log of a day-long run at 10 readings a second: ~100 MB
MAX_NODE_NUMBER = MAX_COUNT  # a node numbered past it names no node: no system has that many
TRACE_POINTS = 600  # readings kept for a run's plot, over all its nodes (a chart is ~800 px wide)


@dataclass
class RunPower:
    energy_j: float | None
    findings: list[Finding] = field(default_factory=list)
    # For the run's plot: {"nodes": {"node_0": {"s": [s from run_start], "w": [W]}}, "run_s": time to train}
    trace: dict = field(default_factory=dict)


NO_ENERGY = "the run has no energy."
AS_PUBLISHED = "MLCommons' energy counts it as logged (mlperf-logging's summarizer)."


def _doubt(found: Findings, history: bool, rule: str, text: str, hint: str, **where) -> bool:
    """A warning about logs the portal doubts but mlperf-logging's summarizer computes an energy from: it
    withholds the energy in a live round (True), and stands beside the published one in history."""
    found.warning(rule, f"{text}: {AS_PUBLISHED if history else NO_ENERGY}", hint, **where)
    return not history


def _index(path: str) -> int:
    name = path.rpartition("/")[2]
    match = NODE_FILE.match(name) or SWITCH_FILE.match(name)
    return int(match.group(1)) if match else -1


def check_run_power(
    run_path: str,
    logs: list[PowerLog],
    run_start_s: float | None,
    run_stop_s: float | None,
    nodes: int | None = None,
    history: bool = False,
) -> RunPower:
    """Check the power logs of one run (its node and switch files, read) and compute its energy in joules.

    run_start_s/run_stop_s: the run log's run_start and run_stop (seconds since the epoch); nodes: how
    many nodes the system description says the system has (None: unknown); history: an imported round,
    whose published energy stands (see the module's docstring)."""
    found = Findings(run_path)
    withheld = []  # why the run has no energy
    node_logs = sorted((log for log in logs if log.kind == "node"), key=lambda x: _index(x.path))
    switch_logs = sorted(
        (log for log in logs if log.kind == "switch"), key=lambda x: _index(x.path)
    )
    if not node_logs:
        found.warning(
            rule_catalogue.POWER_NO_LOGS,
            "This run of a power result has no node power logs (power/<run>/node_N.txt): it has no energy.",
            "Add the run's power folder named after its log, with one node_N.txt per node.",
        )
        return RunPower(None, list(found))
    if run_start_s is None or run_stop_s is None or run_stop_s <= run_start_s:
        return RunPower(None, list(found))  # no time to train: the run log's findings say why
    run_start_ms, run_stop_ms = run_start_s * 1000, run_stop_s * 1000
    time_to_train_ms = run_stop_ms - run_start_ms

    folder = node_logs[0].path.rpartition("/")[0]
    # A node number is read from a file's name, so it is any number: one past any system's count is a
    # finding of its own, and sizes nothing (node_99999999999999999999999.txt beside node_0.txt made a list
    # of every number between: 20 GB, and the worker was killed).
    beyond = [log for log in node_logs if _index(log.path) > MAX_NODE_NUMBER]
    if beyond and _doubt(
        found,
        history,
        rule_catalogue.POWER_NODE_NUMBER,
        f"{len(beyond)} node log{'s are' if len(beyond) > 1 else ' is'} numbered past {MAX_NODE_NUMBER:,}, "
        "more nodes than any system has (this file is the first)",
        "Number the node logs node_0.txt (or node_1.txt) on, one per node of the system.",
        file=beyond[0].path,
    ):
        withheld.append("node-number")
    # Bundles number their nodes from 0 or from 1: a node is missing where the numbers skip one, or where
    # there are fewer files than the system description's nodes.
    have = sorted({n for n in map(_index, (log.path for log in node_logs)) if n <= MAX_NODE_NUMBER})
    gaps = have[-1] - have[0] + 1 - len(have) if have else 0
    short = max((nodes or 0) - len(have), gaps)
    if short:
        skipped = _first_skipped(have, 5)
        names = f" (node_{', node_'.join(map(str, skipped))}.txt)" if skipped else ""
        if _doubt(
            found,
            history,
            rule_catalogue.POWER_NODE_MISSING,
            f"{short} of the system's {len(have) + short} nodes ha{'s' if short == 1 else 've'} no power "
            f"log{names}, which the energy leaves out",
            "Measure every node of the system and add its node_N.txt.",
            file=f"{folder}/",
        ):
            withheld.append("node-missing")

    total, assumed = 0.0, []
    for log in [*node_logs, *switch_logs]:
        bad = _check_values(log, found, history)
        if log.kind == "switch":
            joules = energy.switch_energy(log, time_to_train_ms)
            if joules is None:  # mlperf-logging's summarizer counts such a switch as 0 W
                bad = (
                    _doubt(
                        found,
                        history,
                        rule_catalogue.POWER_NO_SWITCH_ESTIMATE,
                        "The switch log gives no interconnect_power_est, so the switch counts as 0 W",
                        "Log the switch's estimated power as interconnect_power_est (watts).",
                        file=log.path,
                    )
                    or bad
                )
            total += joules or 0.0
            withheld += ["switch"] if bad else []
            continue
        bad = _check_window(log, run_start_ms, run_stop_ms, found, history) or bad
        result = energy.node_energy(log, time_to_train_ms)
        if result.assumed:
            assumed.append((log, result))
        if result.joules is None:
            bad = True
        withheld += ["node"] if bad else []
        total += result.joules or 0.0
    if assumed:
        log, result = assumed[0]
        how = (
            f"power_measurement_stop at its start (this file: line {log.stop_line}, {log.stop_ms} ms)"
            if result.assumed == energy.STOP_AT_START
            else "no power_measurement_stop"
        )
        found.warning(
            rule_catalogue.POWER_STOP_AT_START,
            f"{len(assumed)} of {len(node_logs)} node logs of this run log {how}: "
            "the portal takes the measurement to end at the node's last reading (for this file "
            f"{result.end_ms} ms), as mlperf-logging does when no stop is logged.",
            "Log power_measurement_stop when the measurement ends, after the last reading.",
            file=log.path,
            line=log.stop_line,
        )
    trace = {
        "run_s": round(time_to_train_ms / 1000, 3),
        "nodes": {
            log.path.rpartition("/")[2].removesuffix(".txt"): energy.trace(
                log, run_start_ms, max(20, TRACE_POINTS // len(node_logs))
            )
            for log in node_logs
        },
    }
    return RunPower(None if withheld else total, list(found), trace)


def _first_skipped(numbers: list[int], count: int) -> list[int]:
    """The first `count` numbers missing between the lowest and the highest of `numbers` (sorted): a walk of
    the gaps, as long as `count`, however far apart the numbers are."""
    skipped = []
    for low, high in zip(numbers, numbers[1:]):
        skipped += range(low + 1, min(high, low + 1 + count - len(skipped)))
        if len(skipped) >= count:
            break
    return skipped


def _check_values(log: PowerLog, found: Findings, history: bool = False) -> bool:
    """Findings for values that are no power reading; True when one withholds the energy. In history a
    reading that is a number (negative, absurd) counts as logged, as mlperf-logging's summarizer counts it;
    one that is no number withholds it there too."""
    bad = False
    if log.problems:
        line, what = log.problems[0]
        more = f" (and {len(log.problems) - 1} more)" if len(log.problems) > 1 else ""
        found.warning(
            rule_catalogue.POWER_UNREADABLE_READING,
            f"A power record that cannot be used: {what}{more}. The run has no energy.",
            "Log each power value as a number of watts.",
            file=log.path,
            line=line,
        )
        bad = True
    for rule, wrong, text in (
        (
            rule_catalogue.POWER_NEGATIVE_READING,
            lambda w: w < 0,
            "A negative power reading ({w:g} W){more}",
        ),
        (
            rule_catalogue.POWER_ABSURD_READING,
            lambda w: w > MAX_WATTS,
            "A power reading of {w:g} W{more}, more than "
            f"{MAX_WATTS:g} W that one node or switch can draw",
        ),
    ):
        # min and max in C first: the readings are looked at one by one only where one is wrong.
        extreme = [*log.watts, *([] if log.interconnect_w is None else [log.interconnect_w])]
        if not extreme or not wrong(
            min(extreme) if rule == rule_catalogue.POWER_NEGATIVE_READING else max(extreme)
        ):
            continue
        wrong_ones = [k for k, w in enumerate(log.watts) if wrong(w)]
        if wrong_ones:
            w, line = log.watts[wrong_ones[0]], log.line_of(wrong_ones[0])
        else:
            w, line = log.interconnect_w, log.interconnect_line
        count = len(wrong_ones) + (log.interconnect_w is not None and wrong(log.interconnect_w))
        more = f" (and {count - 1} more)" if count > 1 else ""
        bad = (
            _doubt(
                found,
                history,
                rule,
                text.format(w=w, more=more),
                "Check the meter and its logging."
                if rule == rule_catalogue.POWER_NEGATIVE_READING
                else "Log watts (not milliwatts) per node.",
                file=log.path,
                line=line,
            )
            or bad
        )
    return bad


def _check_window(
    log: PowerLog, run_start_ms: float, run_stop_ms: float, found: Findings, history: bool = False
) -> bool:
    """Findings for a node measurement that is not of this run: no start, another clock, a window that
    does not cover run_start..run_stop, gaps between readings. True when one withholds the energy (no start
    always; the others in a live round: _doubt)."""
    if log.start_ms is None:
        found.warning(
            rule_catalogue.POWER_NO_START,
            "The node log has no power_measurement_start: the run has no energy.",
            "Log power_measurement_start before the first reading.",
            file=log.path,
        )
        return True
    offset_s = (log.start_ms - run_start_ms) / 1000
    if abs(offset_s) > MAX_CLOCK_OFFSET_S:
        return _doubt(
            found,
            history,
            rule_catalogue.POWER_CLOCK,
            f"The power measurement starts {offset_s:+.0f} s from the run's run_start: the power log's "
            f"clock is more than {MAX_CLOCK_OFFSET_S:.0f} s from the run log's",
            "Take both logs' times from the same synchronised clock.",
            file=log.path,
            line=log.start_line,
        )
    inside = energy.measurement(log)
    end = inside.end_ms
    slack = MAX_GAP_S * 1000
    if not inside.count or log.start_ms > run_start_ms + slack or (end or 0) < run_stop_ms - slack:
        where = (
            f"from {(log.start_ms - run_start_ms) / 1000:+.0f} s to {((end or 0) - run_stop_ms) / 1000:+.0f} s"
            if inside.count
            else "no reading"
        )
        return _doubt(
            found,
            history,
            rule_catalogue.POWER_WINDOW_NOT_COVERED,
            "The measurement does not cover the run from run_start to run_stop (it runs "
            f"{where} of them)",
            "Start measuring before run_start and stop after run_stop.",
            file=log.path,
            line=log.start_line,
        )
    # Times with power known during the run: its start (a reading holds from the one before), the
    # readings, its stop.
    lo = max(inside.lo, bisect_right(log.times, run_start_ms))
    hi = min(inside.hi, bisect_left(log.times, run_stop_ms))
    times = [run_start_ms, *log.times[lo:hi], run_stop_ms]
    gaps = list(map(sub, times[1:], times[:-1]))
    longest = max(gaps)
    if longest > slack:
        count = sum(1 for gap in gaps if gap > slack)
        k = gaps.index(longest)  # the stretch ends at reading lo + k (or at run_stop)
        line = log.line_of(lo + k) if lo + k < hi else log.line_of(hi - 1)
        return _doubt(
            found,
            history,
            rule_catalogue.POWER_GAP,
            f"{count} stretch{'es' if count > 1 else ''} of the run longer than {MAX_GAP_S:g} s "
            f"without a power reading (the longest {longest / 1000:.0f} s, near this line)",
            f"Read the power at least every {MAX_GAP_S:g} s.",
            file=log.path,
            line=line,
        )
    return False


def unreadable_file(path: str, why: str) -> Finding:
    return Finding(
        "warning",
        rule_catalogue.POWER_UNREADABLE_FILE,
        f"The power log could not be read ({why}): the run has no energy.",
        "Upload the bundle again with this file intact.",
        path,
    )


def crashed(run_path: str, error: Exception) -> Finding:
    return Finding(
        "warning",
        rule_catalogue.POWER_CHECK_CRASHED,
        f"Checking this run's power logs failed inside the portal ({type(error).__name__}): the run has "
        "no energy; its time is scored as usual.",
        "A fault in the portal: report it to the portal's administrators with this run's power folder.",
        run_path,
    )


def over_budget(path: str, over) -> Finding:
    """Reading or checking the run's power logs passed a limit of its budget (over: budget.OverBudget); path:
    the power log being read, or the run's power folder while they were checked together."""
    return over_budget_finding(
        rule_catalogue.POWER_OVER_BUDGET,
        "warning",
        "Checking this run's power logs",
        over,
        "the run has no energy; its time is scored as usual.",
        path,
    )
