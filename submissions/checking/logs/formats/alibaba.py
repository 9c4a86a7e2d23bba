"""Alibaba's v0.6 `MLPerf: resnet [06/13/19 00:30:56], key[: value]` line format (1 s resolution, UTC)."""

from __future__ import annotations

import calendar
import time
from functools import lru_cache

from ._decode import decode_value, is_key

NAME = "alibaba"
MARKER = "MLPerf: "
# "MLPerf: " alone is too common a phrase to tell a log by; its lines go on with the benchmark and "[date".
SNIFF = rb"MLPerf: [\w.-]+ \["


@lru_cache(maxsize=1024)
def _seconds(stamp: str) -> float:
    return float(calendar.timegm(time.strptime(stamp.strip(), "%m/%d/%y %H:%M:%S")))


def parse(rest: str):
    """Return (key, value, time_s, metadata) for the text after the marker; ValueError if malformed."""
    bench, sep, tail = rest.partition(" [")
    stamp, sep2, tail = tail.partition("], ")
    if not (sep and sep2):
        raise ValueError("malformed MLPerf: line (no `[date], `)")
    key, sep, text = tail.partition(":")
    key = key.strip()
    # Their logger also prints free text such as `Total runtime: 24.4 minutes`.
    if not is_key(key.replace(" ", "_")):
        raise ValueError("malformed MLPerf: line (bad key)")
    value = decode_value(text) if sep else None
    return key, value, _seconds(stamp), {"benchmark": bench.strip()}
