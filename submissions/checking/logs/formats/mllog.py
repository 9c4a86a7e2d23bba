"""The `:::MLLOG {json}` line format (MLPerf Training v0.7 onwards, e.g. v5.1)."""

from __future__ import annotations

import json

import msgspec

NAME = "mllog"
MARKER = ":::MLLOG"
SECONDS = "time_s"  # the record's time in seconds, where a logger wrote no time_ms
# JSONDecoder.raw_decode (which tolerates trailing text after the record) without its Python frame.
_scan_once = json.JSONDecoder().scan_once
# msgspec decodes a whole record about 4x faster than the json module. It refuses what json would
# read differently (NaN, Infinity, out-of-range floats, lone surrogates), and a record with text
# after it; such lines take json's path, so every record decodes as json would decode it.
_fast_decode = msgspec.json.Decoder().decode
_FAST_ERRORS = (msgspec.DecodeError, UnicodeEncodeError)


class _Head(msgspec.Struct):
    """What mlperf-logging's parser takes from a record; the value and metadata are checked, not built."""

    key: str
    time_ms: float
    value: msgspec.Raw
    metadata: msgspec.Raw


# Each LF-separated record of a text decoded to its _Head, in one call: records json and the library read alike,
# or HEAD_ERRORS.
decode_heads = msgspec.json.Decoder(_Head).decode_lines
HEAD_ERRORS = _FAST_ERRORS


def _decode(rest: str):
    """(record, start, end): the JSON record at the start of `rest`, and where it sits."""
    body = rest.strip()
    if body[:1] == "{":
        try:
            record = _fast_decode(body)
        except _FAST_ERRORS:
            pass
        else:
            start = rest.find("{")
            return record, start, start + len(body)
    start = 1 if rest[:2] == " {" else len(rest) - len(rest.lstrip())
    try:
        record, end = _scan_once(rest, start)
    except StopIteration as err:  # what raw_decode makes of it
        raise json.JSONDecodeError("Expecting value", rest, err.value) from None
    return record, start, end


def loads(text: str):
    """json.loads(text), by msgspec wherever it decodes as json would."""
    try:
        return _fast_decode(text)
    except _FAST_ERRORS:
        return json.loads(text)


def _event(record, copy_metadata: bool):
    """(key, value, time_s, metadata) of a decoded record; ValueError if it is not an event.

    A record without time_ms may give its time as time_s, in seconds (SECONDS): some loggers wrote that."""
    try:
        key = record["key"]
        time_s = (
            float(record["time_ms"]) / 1000.0 if "time_ms" in record else float(record[SECONDS])
        )
    except (KeyError, TypeError, ValueError, OverflowError):
        raise ValueError("MLLOG record lacks a usable key or time_ms (or time_s)") from None
    if not isinstance(key, str):
        raise ValueError("MLLOG key is not a string")
    metadata = record.get("metadata")
    if isinstance(metadata, dict):
        if copy_metadata:
            metadata = metadata.copy()
        # file/lineno point into the submitter's code; dropping them keeps events small.
        metadata.pop("file", None)
        metadata.pop("lineno", None)
    else:
        metadata = {}
    return key, record.get("value"), time_s, metadata


def _last(rest: str):
    """(record, start, end) of the text after the line's last marker, as mlperf-logging reads a line (it keeps
    the text from its last token on: output of two processes run together, or a record cut by the next), else
    after the first."""
    i = rest.rfind(MARKER)
    if i >= 0:
        try:
            record, start, end = _decode(rest[i + len(MARKER) :])
        except ValueError:
            pass  # not a record there (the marker is inside a value): the first marker's record stands
        else:
            return record, start + i + len(MARKER), end + i + len(MARKER)
    return _decode(rest)


def parse(rest: str):
    """Return (key, value, time_s, metadata) for the text after the marker; ValueError if malformed."""
    return _event(_last(rest)[0], copy_metadata=False)


def parse_record(rest: str):
    """parse() for a caller that also needs the record itself (mlperf-logging's checker reads it whole).

    Returns (key, value, time_s, metadata, record, start, end): record is rest[start:end] decoded and left as
    it was (its metadata keeps file and lineno); metadata is a copy of the record's without them. The event
    and the errors are parse()'s.
    """
    record, start, end = _last(rest)
    return (*_event(record, copy_metadata=True), record, start, end)
