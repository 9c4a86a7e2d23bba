"""MLPerf Power logs: read one node's or switch's `power/result_<run>/node_N.txt` or `sw_N.txt`.

Each line is an `:::MLLOG {json}` record, as in run logs: `power_measurement_start` and
`power_measurement_stop` bound the measurement, `power_reading` records (watts) come between, a
switch file gives `interconnect_power_est` (watts, one estimate for the run), and either may give a
`conversion_eff`. No Django: reading keeps what the checks and the energy integration need, and says
which lines it could not use (problems) rather than raising. A log as power loggers write it is read in
one msgspec call, as the run logs' records are; any other is read line by line as JSON.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

import msgspec

MARKER = ":::MLLOG "
MARKER_BYTES = MARKER.encode()
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
        # A log read fast has no lines: they are found by reading it again, line by line.
        if self.lines is None:
            again = PowerLog(path=self.path, kind=self.kind)
            _read_line_by_line(again, self.data)
            _in_time_order(again)
            self.lines = again.lines
        return self.lines[k] if 0 <= k < len(self.lines) else None


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


class _Head(msgspec.Struct, gc=False):
    """A record as the fast path reads it: what a reading needs (a missing value is None, no number)."""

    key: str
    time_ms: int
    value: Any = None


# Each LF-separated record of a text, decoded in one call in C: the way the run logs' records are read
# (formats/mllog.py); a run of 64 nodes has half a million readings.
_decode_heads = msgspec.json.Decoder(_Head).decode_lines


def read_power_log(data: bytes, path: str, kind: str) -> PowerLog:
    """Read a power file's bytes."""
    log = PowerLog(path=path, kind=kind, data=data)
    heads = _heads(data)
    if heads is None:  # a line that the fast path does not read: every line as JSON
        _read_line_by_line(log, data)
    else:
        readings = [head for head in heads if head.key == "power_reading"]
        log.times = list(map(attrgetter("time_ms"), readings))
        log.watts = list(map(float, map(attrgetter("value"), readings)))
        for number, head in enumerate(heads, start=1):  # the few other records
            if head.key != "power_reading":
                _take(log, number, head.key, head.time_ms, head.value)
    _in_time_order(log)
    return log


def _heads(data: bytes) -> list[_Head] | None:
    """The file's records, line k at position k - 1, where every line is the marker and a record with a
    key and an integer time_ms, and every reading's value is a number; else None (the file is then read
    line by line, which says what is wrong where)."""
    body = data.replace(b"\n" + MARKER_BYTES, b"\n")
    if body.startswith(MARKER_BYTES):
        body = body[len(MARKER_BYTES) :]
    try:
        heads = _decode_heads(body)
    except (msgspec.DecodeError, UnicodeDecodeError):
        return None
    lines = data.count(b"\n") + (not data.endswith(b"\n"))
    # A blank line, or one without the marker, would put the records off their lines.
    if len(heads) != lines or len(heads) * len(MARKER_BYTES) != len(data) - len(body):
        return None
    values = [head.value for head in heads if head.key == "power_reading"]
    if not set(map(type, values)) <= {int, float}:  # a bool, a string, a nested value: read as JSON
        return None
    return heads


def _read_line_by_line(log: PowerLog, data: bytes) -> None:
    """Read every line with the marker as JSON, keeping each reading's line."""
    log.lines = []
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if MARKER_BYTES in raw:
            _record(log, number, raw.decode("utf-8", "replace"))


def _in_time_order(log: PowerLog) -> None:
    """The readings in time order, equal times in file order."""
    if log.times != sorted(log.times):
        order = sorted(range(len(log.times)), key=log.times.__getitem__)
        log.times = [log.times[i] for i in order]
        log.watts = [log.watts[i] for i in order]
        if log.lines is not None:
            log.lines = [log.lines[i] for i in order]


def _record(log: PowerLog, number: int, line: str) -> None:
    """One MLLOG line, read as JSON."""
    at = line.find(MARKER)
    try:
        record = json.loads(line[at + len(MARKER) :])
        key, time_ms = record["key"], record["time_ms"]
    except (ValueError, KeyError, TypeError):
        log.problems.append((number, "not an MLLOG record that can be read"))
        return
    _take(log, number, key, time_ms, record.get("value"))


def _take(log: PowerLog, number: int, key, time_ms, raw) -> None:
    """What a record of line `number` gives the log (raw: its value as decoded)."""
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
    value = _number(raw)
    if value is None:
        log.problems.append((number, f"{key} value {raw!r} is not a number"))
    elif key == "power_reading":
        log.times.append(time_ms)
        log.watts.append(value)
        log.lines.append(number)
    elif key == "interconnect_power_est":
        if log.interconnect_w is None:
            log.interconnect_w, log.interconnect_line = value, number
    else:
        log.conversion_eff = value
