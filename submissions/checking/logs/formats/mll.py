"""The v0.6 `:::MLL <unix-ts> <key>: {"value": ..., "metadata": {...}}` line format."""

from __future__ import annotations

from ._decode import is_key, loads_lenient

NAME = "mll"
MARKER = ":::MLL "


def parse(rest: str):
    """Return (key, value, time_s, metadata) for the text after the marker; ValueError if malformed."""
    stamp, _, tail = rest.lstrip().partition(" ")
    key, sep, payload = tail.partition(":")
    key = key.strip()
    if not sep or not is_key(key):
        raise ValueError("malformed :::MLL line (no `key:`)")
    time_s = float(stamp)
    record = loads_lenient(payload)  # Intel writes Python dicts with single quotes
    if not (isinstance(record, dict) and "value" in record):
        return key, record, time_s, {}
    metadata = record.get("metadata")
    if isinstance(metadata, dict):
        metadata.pop("file", None)
        metadata.pop("lineno", None)
    else:
        metadata = {}
    return key, record["value"], time_s, metadata
