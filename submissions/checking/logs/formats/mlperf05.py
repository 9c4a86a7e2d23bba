"""The v0.5 `:::MLPv0.5.0 <bench> <unix-ts> (<file>:<line>) <key>[: <value>]` line format."""

from __future__ import annotations

from ._decode import decode_value, is_key

NAME = "mlperf-0.5"
MARKER = ":::MLPv0.5.0 "


def parse(rest: str):
    """Return (key, value, time_s, metadata) for the text after the marker; ValueError if malformed."""
    bench, _, tail = rest.lstrip().partition(" ")
    stamp, _, tail = tail.partition(" ")
    if tail.startswith("("):
        close = tail.find(") ")
        if close < 0:
            raise ValueError("malformed :::MLPv0.5.0 line (no key after the source location)")
        tail = tail[close + 2 :]
    key, sep, text = tail.partition(":")
    key = key.strip()
    if not is_key(key):
        raise ValueError("malformed :::MLPv0.5.0 line (bad key)")
    value = decode_value(text) if sep else None
    # The benchmark name is only carried on each line in v0.5.
    return key, value, float(stamp), {"benchmark": bench}
