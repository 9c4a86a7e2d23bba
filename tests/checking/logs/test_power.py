"""Power logs (MLPerf Power): reading them, a run's energy as mlperf-logging computes it, the portal's rule for
a stop logged at the start, and a finding of its own for each kind of bad power log. Logs written here."""

import contextlib
import io
import json
import re

import pytest

from submissions.checking import energy
from submissions.checking.logs.power import read_power_log
from submissions.checking.rules.power import MAX_GAP_S, TRACE_POINTS, check_run_power

RUN_START_MS = 1_700_000_000_000
TTT_MS = 600_000  # ten minutes
RUN = "Acme/results/sys/bert/result_0.txt"
FOLDER = "Acme/results/sys/bert/power/result_0"


def mllog(key, time_ms, value="null", **extra):
    record = {"namespace": "", "time_ms": time_ms, "event_type": "POINT_IN_TIME", "key": key}
    record |= {"value": value, "metadata": extra or ""}
    return ":::MLLOG " + json.dumps(record)


def node_lines(watts=lambda i: 1000 + i, every_ms=2000, start=-60_000, end=60_000, stop="after"):
    """A node log: start `start` ms from run_start, a reading every `every_ms` up to `end` ms past run_stop,
    and the stop after the readings ("after"), at the start's timestamp at the end ("at-start"), or none."""
    t0 = RUN_START_MS + start
    lines = [mllog("power_measurement_start", t0)]
    t, i = t0, 0
    while t + every_ms <= RUN_START_MS + TTT_MS + end:
        t += every_ms
        lines.append(mllog("power_reading", t, watts(i)))
        i += 1
    if stop == "after":
        lines.append(mllog("power_measurement_stop", t))
    elif stop == "at-start":
        lines.append(mllog("power_measurement_stop", t0))
    return lines


def text(lines) -> bytes:
    return ("\n".join(lines) + "\n").encode()


def node(lines, n=0):
    log = read_power_log(text(lines), f"{FOLDER}/node_{n}.txt", "node")
    WRITTEN[log.path] = text(lines).decode()
    return log


WRITTEN = {}  # each node log's text, by its path, for mlperf-logging to read the same bytes


def text_of(log) -> str:
    return WRITTEN[log.path]


def run_power(*logs, nodes=None, history=False):
    return check_run_power(
        RUN, list(logs), RUN_START_MS / 1000, (RUN_START_MS + TTT_MS) / 1000, nodes, history
    )


def rules_of(outcome):
    return sorted({f.rule for f in outcome.findings})


def mlperf_logging_node_energy(lines, tmp_path, name="node_0.txt"):
    """mlperf-logging's own computation of a node's energy over the run (its summarizer's function)."""
    # Imported here: it brings pandas and scipy (1.6 s), which every make-test worker would pay to collect.
    from mlperf_logging.result_summarizer import result_summarizer as summarizer

    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    loglines, _ = summarizer.parse_file(str(path), "4.0.0")
    with contextlib.redirect_stdout(io.StringIO()):
        return summarizer._compute_power_node(loglines, TTT_MS)


def test_a_node_energy_is_mlperf_loggings(tmp_path):
    lines = node_lines(watts=lambda i: 900 + (i * 37) % 400)
    outcome = run_power(node(lines))
    assert outcome.findings == []
    assert outcome.energy_j == pytest.approx(mlperf_logging_node_energy(lines, tmp_path), rel=1e-12)


def test_nodes_and_switches_add_up(tmp_path):
    a, b = node_lines(watts=lambda i: 1000), node_lines(watts=lambda i: 3000)
    switch = [mllog("interconnect_power_est", RUN_START_MS, 500, switch_id="sw_01")]
    outcome = run_power(
        node(a, 0), node(b, 1), read_power_log(text(switch), f"{FOLDER}/sw_0.txt", "switch")
    )
    # Constant power: watts x seconds of the run, per node and switch.
    assert outcome.energy_j == pytest.approx((1000 + 3000 + 500) * TTT_MS / 1000)
    assert outcome.energy_j == pytest.approx(
        mlperf_logging_node_energy(a, tmp_path, "node_0.txt")
        + mlperf_logging_node_energy(b, tmp_path, "node_1.txt")
        + 500 * TTT_MS / 1000
    )


def test_a_stop_logged_at_the_start_ends_the_measurement_at_the_last_reading(tmp_path):
    lines = node_lines(watts=lambda i: 800 + (i % 7) * 50, stop="at-start")
    # mlperf-logging divides by zero on such a log.
    with pytest.raises(ZeroDivisionError):
        mlperf_logging_node_energy(lines, tmp_path)
    outcome = run_power(node(lines))
    assert rules_of(outcome) == ["power.stop-at-start"]
    (finding,) = outcome.findings
    assert finding.severity == "warning" and finding.line == len(lines)
    assert "last reading" in finding.message
    # The rule, computed independently: mean power of the readings, each held since the one before,
    # from the start to the last reading; times the time to train.
    readings = [json.loads(line.split(" ", 1)[1]) for line in lines]
    start = readings[0]["time_ms"]
    points = [(r["time_ms"], r["value"]) for r in readings if r["key"] == "power_reading"]
    area = sum(w * (t - prev) for (t, w), (prev, _) in zip(points, [(start, 0), *points]))
    expected = area / (points[-1][0] - start) * TTT_MS / 1000
    assert outcome.energy_j == pytest.approx(expected, rel=1e-12)
    # ...which is mlperf-logging's own rule for a log without a stop.
    without_stop = [line for line in lines if "power_measurement_stop" not in line]
    assert outcome.energy_j == pytest.approx(
        mlperf_logging_node_energy(without_stop, tmp_path), rel=1e-12
    )


BAD_LOGS = {
    "power.node-missing": lambda: [node(node_lines(), 0), node(node_lines(), 2)],
    "power.negative-reading": lambda: [node(node_lines(watts=lambda i: -5 if i == 40 else 1000))],
    "power.absurd-reading": lambda: [node(node_lines(watts=lambda i: 5e6 if i == 40 else 1000))],
    "power.unreadable-reading": lambda: [
        node(node_lines(watts=lambda i: "n/a" if i == 40 else 1000))
    ],
    "power.no-start": lambda: [node(node_lines()[1:])],
    "power.clock": lambda: [node(node_lines(start=-3_600_000))],
    "power.window-not-covered": lambda: [node(node_lines(end=-300_000))],
    "power.gap": lambda: [node(node_lines(every_ms=int(MAX_GAP_S * 1000) + 5000))],
    "power.no-switch-estimate": lambda: [
        node(node_lines()),
        read_power_log(
            text([mllog("conversion_eff", RUN_START_MS, 1)]), f"{FOLDER}/sw_0.txt", "switch"
        ),
    ],
}
# What mlperf-logging's summarizer computes an energy from all the same: in history that energy stands.
DOUBTED = [
    "power.node-missing",
    "power.negative-reading",
    "power.absurd-reading",
    "power.clock",
    "power.window-not-covered",
    "power.gap",
    "power.no-switch-estimate",
]


@pytest.mark.parametrize("rule", BAD_LOGS)
def test_a_bad_power_log_has_its_own_rule_and_withholds_the_energy(rule):
    outcome = run_power(*BAD_LOGS[rule]())
    assert rule in rules_of(outcome)
    assert outcome.energy_j is None
    assert all(
        f.severity == "warning" for f in outcome.findings
    )  # never an error: time stays scored
    assert all(f.file.startswith(FOLDER) for f in outcome.findings)


@pytest.mark.parametrize("rule", BAD_LOGS)
def test_in_history_the_energy_mlperf_logging_computes_stands_beside_the_finding(rule, tmp_path):
    logs = BAD_LOGS[rule]()
    outcome = run_power(*logs, history=True)
    assert rule in rules_of(outcome)
    (finding,) = [f for f in outcome.findings if f.rule == rule]
    if rule not in DOUBTED:  # the summarizer cannot compute one either
        assert outcome.energy_j is None and "no energy" in finding.message
        return
    # mlperf-logging's summarizer on the same files: each node as written, a switch without an estimate 0 W.
    expected = 0.0
    for log in logs:
        if log.kind == "node":
            lines = [line for line in text_of(log).splitlines() if line]
            expected += mlperf_logging_node_energy(lines, tmp_path, log.path.rpartition("/")[2])
    assert outcome.energy_j == pytest.approx(expected, rel=1e-9)
    assert "MLCommons' energy counts it as logged" in finding.message, finding.message


def test_fewer_node_logs_than_the_system_has_nodes():
    outcome = run_power(node(node_lines(), 0), node(node_lines(), 1), nodes=4)
    assert rules_of(outcome) == ["power.node-missing"]
    assert "2 of the system's 4 nodes" in outcome.findings[0].message


def test_a_node_numbered_past_any_systems_count_is_named_and_sizes_nothing():
    """node_99999999999999999999999.txt beside node_0.txt: a list of every number between them grew a worker
    to 20 GB (issue 34). Now a finding on that file, in constant memory; the other numbers' gaps still count."""
    huge = 10**23 - 1
    outcome = run_power(node(node_lines(), 0), node(node_lines(), huge), node(node_lines(), 3))
    assert rules_of(outcome) == ["power.node-missing", "power.node-number"]
    by_rule = {f.rule: f for f in outcome.findings}
    assert by_rule["power.node-number"].file == f"{FOLDER}/node_{huge}.txt"
    assert "(node_1, node_2.txt)" in by_rule["power.node-missing"].message
    assert outcome.energy_j is None


def test_the_first_missing_node_numbers_are_named_however_far_apart():
    outcome = run_power(node(node_lines(), 0), node(node_lines(), 999_999))
    missing = outcome.findings[0]
    assert (
        missing.rule == "power.node-missing"
        and "999998 of the system's 1000000 nodes" in missing.message
    )
    assert "(node_1, node_2, node_3, node_4, node_5.txt)" in missing.message


def test_nodes_numbered_from_one_are_all_there():
    outcome = run_power(node(node_lines(), 1), node(node_lines(), 2), nodes=2)
    assert outcome.findings == [] and outcome.energy_j is not None


def test_a_run_without_power_logs():
    outcome = run_power()
    assert rules_of(outcome) == ["power.no-logs"] and outcome.energy_j is None
    assert outcome.findings[0].file == RUN


def test_the_energy_score_is_the_mean_of_the_runs_the_time_score_counts():
    assert energy.score_energy([1.0, 2.0, 4.0, 8.0, 16.0], [1, 2, 3], 1.5) == (7.0, "")
    joules, why = energy.score_energy([1.0, None, 4.0, 8.0, 16.0], [1, 2, 3])
    assert joules is None and "1 of the 3 runs" in why
    assert energy.score_energy([None] * 5, [])[0] is None


def test_the_trace_is_kept_short_for_the_plot():
    outcome = run_power(node(node_lines(every_ms=100)))  # 7,200 readings
    (points,) = outcome.trace["nodes"].values()
    assert 300 <= len(points["s"]) == len(points["w"]) <= TRACE_POINTS
    assert points["s"][0] < 0 < points["s"][-1] and outcome.trace["run_s"] == TTT_MS / 1000


def test_the_power_track_begins_with_training_v4_0():
    assert energy.has_power_track("4.0.0") and energy.has_power_track("5.1.0")
    assert not energy.has_power_track("3.1.0") and not energy.has_power_track("0.5")


def test_power_folders_are_matched_to_run_logs_by_name():
    files = {"result_1": ["p/result_1/node_0.txt"], "result_9": ["p/result_9/node_0.txt"]}
    runs, orphans = energy.power_of_runs(files, ["r/result_1.txt", "r/result_2.txt"])
    assert runs == [["p/result_1/node_0.txt"], []] and orphans == ["result_9"]


def test_readings_written_otherwise_are_read_alike():
    lines = node_lines(watts=lambda i: 1000 + i * 0.5)
    compact = [line.replace(", ", ",").replace(": ", ":") for line in lines]
    nested = [line.replace('"value": 1', '"value": {"value": 1') for line in lines]
    nested = [
        re.sub(r'("value": \{"value": [\d.]+)', r"\1}", line) if "power_reading" in line else line
        for line in nested
    ]
    plain = node(lines)
    for other in (node(compact), node(nested)):
        assert (other.times, other.watts) == (plain.times, plain.watts) and other.problems == []
        assert [other.line_of(k) for k in (0, 7)] == [plain.line_of(k) for k in (0, 7)] == [2, 9]
        assert (other.start_ms, other.stop_ms) == (plain.start_ms, plain.stop_ms)


def test_a_log_with_blank_or_foreign_lines_is_read_alike_with_its_lines():
    lines = node_lines()
    plain = node(lines)
    foreign = '{"key": "power_reading", "time_ms": 1, "value": 5}'  # no marker: not a record
    for other in (
        [*lines[:3], "", *lines[3:]],
        [line + "\r" for line in lines],
        [*lines[:3], foreign, *lines[3:]],
    ):
        log = node(other)
        assert (log.times, log.watts) == (plain.times, plain.watts) and log.problems == []
        shift = len(other) - len(lines)
        assert [log.line_of(k) for k in (0, 7)] == [2, 9 + shift]
        assert log.stop_line == plain.stop_line + shift
