"""MLPerf Power logs: read one node's or switch's `power/result_<run>/node_N.txt` or `sw_N.txt`.

Each line is an `:::MLLOG {json}` record, as in run logs: `power_measurement_start` and
`power_measurement_stop` bound the measurement, `power_reading` records (watts) come between, a
switch file gives `interconnect_power_est` (watts, one estimate for the run), and either may give a
`conversion_eff`. Pure Python, no Django: reading keeps what the checks and the energy integration
need, and says which lines it could not use (problems) rather than raising.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field

MARKER = ":::MLLOG "
NODE_FILE = re.compile(r"^node_(\d+)\.txt$")
SWITCH_FILE = re.compile(r"^sw_(\d+)\.txt$")
KEYS = (
    "power_measurement_start",
    "power_measurement_stop",
    "power_reading",
    "interconnect_power_est",
    "conversion_eff",
)


@dataclass
class PowerLog:
    """What one power file holds. Times are milliseconds since the epoch, as logged."""

    path: str  # bundle-relative
    kind: str  # "node" or "switch"
    start_ms: int | None = None
    start_line: int | None = None
    stop_ms: int | None = None
    stop_line: int | None = None
    # The readings in file order: (time_ms, watts, line). Values that are not finite numbers are
    # kept out and named in problems.
    readings: list[tuple[int, float, int]] = field(default_factory=list)
    interconnect_w: float | None = None  # a switch's estimate
    interconnect_line: int | None = None
    conversion_eff: float = 1.0
    problems: list[tuple[int, str]] = field(default_factory=list)  # (line, what is wrong)


def kind_of(name: str) -> str | None:
    """'node' for node_N.txt, 'switch' for sw_N.txt, None for a file of another name."""
    if NODE_FILE.match(name):
        return "node"
    if SWITCH_FILE.match(name):
        return "switch"
    return None


def _number(value) -> float | None:
    """The value of a power record as a finite float: a number, or {"value": number} as mlperf-logging
    nests it; None for anything else."""
    if isinstance(value, dict):
        value = value.get("value")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def read_power_log(lines, path: str, kind: str) -> PowerLog:
    """Read a power file's lines (bytes or str, as a file yields them)."""
    log = PowerLog(path=path, kind=kind)
    for number, raw in enumerate(lines, start=1):
        line = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
        at = line.find(MARKER)
        if at < 0:
            continue
        try:
            record = json.loads(line[at + len(MARKER) :])
            key, time_ms = record["key"], record["time_ms"]
        except (ValueError, KeyError, TypeError):
            log.problems.append((number, "not an MLLOG record that can be read"))
            continue
        if key not in KEYS:
            continue
        if isinstance(time_ms, bool) or not isinstance(time_ms, (int, float)):
            log.problems.append((number, f"{key} has no numeric time_ms"))
            continue
        time_ms = int(time_ms)
        if key == "power_measurement_start":
            if log.start_ms is None:
                log.start_ms, log.start_line = time_ms, number
            continue
        if key == "power_measurement_stop":
            if log.stop_ms is None:
                log.stop_ms, log.stop_line = time_ms, number
            continue
        value = _number(record.get("value"))
        if value is None:
            log.problems.append((number, f"{key} value {record.get('value')!r} is not a number"))
        elif key == "power_reading":
            log.readings.append((time_ms, value, number))
        elif key == "interconnect_power_est":
            if log.interconnect_w is None:
                log.interconnect_w, log.interconnect_line = value, number
        else:
            log.conversion_eff = value
    return log
