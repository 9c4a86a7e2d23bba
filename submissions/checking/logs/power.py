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
    # The readings, in time order (file order among equal times): times in ms, watts. Values that are
    # not finite numbers are kept out and named in problems. Two lists, not a list of tuples: a run of
    # 64 nodes has half a million readings, and the integration and checks go through them in C (map,
    # bisect, min, max).
    times: list[int] = field(default_factory=list)
    watts: list[float] = field(default_factory=list)
    # The file line of each reading where it is known (read line by line); else found on demand by line_of.
    lines: list[int] | None = None
    data: bytes = b""  # the file's bytes, for line_of
    interconnect_w: float | None = None  # a switch's estimate
    interconnect_line: int | None = None
    conversion_eff: float = 1.0
    problems: list[tuple[int, str]] = field(default_factory=list)  # (line, what is wrong)

    def line_of(self, k: int) -> int | None:
        """The file line of reading k (in time order)."""
        if self.lines is not None:
            return self.lines[k] if 0 <= k < len(self.lines) else None
        wanted = self.times[k] if 0 <= k < len(self.times) else None
        before = self.times[:k].count(wanted) if wanted is not None else 0
        for line, match in _numbered(READING, self.data):
            if int(match[1]) == wanted:
                if not before:
                    return line
                before -= 1
        return None


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


# A power reading as power loggers write it, the whole line: read by this pattern, in C, rather than
# by json.loads (a run of 64 nodes has half a million of them). The other records a power log has are
# few and read as JSON; a log with any line that neither pattern finds is read line by line as JSON.
READING = re.compile(
    rb':::MLLOG \{"namespace": ?"", ?"time_ms": ?(\d+), ?"event_type": ?"POINT_IN_TIME", ?'
    rb'"key": ?"power_reading", ?"value": ?(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?), ?'
    rb'"metadata": ?(?:""|\{\})\} *\r?$',
    re.M,
)
OTHER = (
    b"power_measurement_st",
    b"interconnect_power_est",
    b"conversion_eff",
)  # found by bytes.find


def read_power_log(data: bytes, path: str, kind: str) -> PowerLog:
    """Read a power file's bytes."""
    log = PowerLog(path=path, kind=kind, data=data)
    others = _other_lines(data)
    readings = READING.findall(data)
    if len(readings) + len(others) == data.count(MARKER.encode()):
        if readings:
            times, watts = zip(*readings)
            log.times, log.watts = list(map(int, times)), list(map(float, watts))
        for line, text in others:
            _record(log, line, text.decode("utf-8", "replace"))
    else:  # a line that neither pattern reads: every line as JSON
        log.lines = []
        for number, raw in enumerate(data.split(b"\n"), start=1):
            if MARKER.encode() in raw:
                _record(log, number, raw.decode("utf-8", "replace"))
    if log.times != sorted(log.times):  # in time order, equal times in file order
        order = sorted(range(len(log.times)), key=log.times.__getitem__)
        log.times = [log.times[i] for i in order]
        log.watts = [log.watts[i] for i in order]
        if log.lines is not None:
            log.lines = [log.lines[i] for i in order]
    return log


def _other_lines(data: bytes) -> list[tuple[int, bytes]]:
    """(line number, line) of each line with one of the OTHER keys, in file order."""
    starts = set()
    for key in OTHER:
        at = data.find(key)
        while at >= 0:
            starts.add(data.rfind(b"\n", 0, at) + 1)
            at = data.find(key, at + 1)
    out, line, at = [], 1, 0
    for start in sorted(starts):
        line += data.count(b"\n", at, start)
        at = start
        end = data.find(b"\n", start)
        out.append((line, data[start : None if end < 0 else end]))
    return out


def _numbered(pattern: re.Pattern, data: bytes) -> list[tuple[int, re.Match]]:
    """(line number, match) of each line the pattern matches."""
    out, line, at = [], 1, 0
    for match in pattern.finditer(data):
        line += data.count(b"\n", at, match.start())
        at = match.start()
        out.append((line, match))
    return out


def _record(log: PowerLog, number: int, line: str) -> None:
    """One MLLOG line that is not a plain reading: read as JSON."""
    at = line.find(MARKER)
    try:
        record = json.loads(line[at + len(MARKER) :])
        key, time_ms = record["key"], record["time_ms"]
    except (ValueError, KeyError, TypeError):
        log.problems.append((number, "not an MLLOG record that can be read"))
        return
    if key not in KEYS:
        return
    if isinstance(time_ms, bool) or not isinstance(time_ms, (int, float)):
        log.problems.append((number, f"{key} has no numeric time_ms"))
        return
    time_ms = int(time_ms)
    if key == "power_measurement_start":
        if log.start_ms is None:
            log.start_ms, log.start_line = time_ms, number
        return
    if key == "power_measurement_stop":
        if log.stop_ms is None:
            log.stop_ms, log.stop_line = time_ms, number
        return
    value = _number(record.get("value"))
    if value is None:
        log.problems.append((number, f"{key} value {record.get('value')!r} is not a number"))
    elif key == "power_reading":
        if log.lines is None:  # a reading on the fast path's way would have been found by READING
            log.problems.append((number, "power_reading written otherwise than its neighbours"))
            return
        log.times.append(time_ms)
        log.watts.append(value)
        log.lines.append(number)
    elif key == "interconnect_power_est":
        if log.interconnect_w is None:
            log.interconnect_w, log.interconnect_line = value, number
    else:
        log.conversion_eff = value
