"""Registry of MLPerf log line formats and the tolerant streaming parser (parse_lines, parse_file)."""
from __future__ import annotations

import os
from typing import Iterable, Iterator

from ..events import Event, ParsedLog
from . import alibaba, mll, mllog, mlperf05

# Order matters only for overlapping markers: ":::MLL " needs its space, so MLLOG never matches it.
FORMATS = (mllog, mll, mlperf05, alibaba)
MAX_PROBLEMS = 100  # a garbage file must not grow the problem list without bound
_DECODE_ERRORS = (ValueError, IndexError, KeyError, TypeError, OverflowError, RecursionError)


def detect(line: str):
    """Return (format module, text after its marker) for a log line, or None for noise."""
    for fmt in FORMATS:
        i = line.find(fmt.MARKER)
        if i >= 0:
            return fmt, line[i + len(fmt.MARKER):]
    return None


def parse_lines(lines: Iterable[str | bytes]) -> ParsedLog:
    """Parse log lines (str, or bytes decoded as UTF-8 with replacement)."""
    if isinstance(lines, (str, bytes)):
        lines = lines.splitlines()
    return _parse(lines, "")


def parse_file(path: str | os.PathLike, max_line_bytes: int = 1_000_000) -> ParsedLog:
    """Parse a log file line by line; lines longer than max_line_bytes are skipped as problems."""
    with open(path, "rb") as f:
        return _parse(_read_lines(f, max_line_bytes), f"line longer than {max_line_bytes} bytes skipped")


def _read_lines(f, limit: int) -> Iterator[bytes | None]:
    """Yield raw lines, or None for a line over `limit` bytes (its remainder is read and dropped)."""
    readline = f.readline
    while True:
        raw = readline(limit + 1)
        if not raw:
            return
        if len(raw) > limit and raw[-1:] != b"\n":
            while True:  # discard in bounded chunks, never building the giant line
                rest = readline(1 << 20)
                if not rest or rest[-1:] == b"\n":
                    break
            yield None
        else:
            yield raw


def _parse(lines: Iterable[str | bytes | None], too_long: str) -> ParsedLog:
    log = ParsedLog()
    events, formats, problems = log.events, log.formats, log.problems
    hidden = 0  # problems beyond MAX_PROBLEMS
    last_problem = 0
    fmt = None  # the last format seen; a file almost always sticks to one
    group_time, seen = None, set()  # de-duplication within one timestamp
    n = 0

    def problem(line: int, message: str) -> None:
        nonlocal hidden, last_problem
        last_problem = line
        if len(problems) < MAX_PROBLEMS:
            problems.append((line, message[:300]))
        else:
            hidden += 1

    for raw in lines:
        n += 1
        if raw is None:
            problem(n, too_long)
            continue
        if isinstance(raw, bytes):
            if b":::" not in raw and b"MLPerf: " not in raw:
                continue  # noise, skipped before paying for decoding
            if b"\x00" in raw:
                problem(n, "line contains NUL bytes (binary data?)")
                raw = raw.replace(b"\x00", b"")
            text = raw.decode("utf-8", "replace")
        else:
            text = raw
            if "\x00" in text:
                problem(n, "line contains NUL bytes (binary data?)")
                text = text.replace("\x00", "")
        i = text.find(fmt.MARKER) if fmt is not None else -1
        if i < 0:
            if ":::" not in text and "MLPerf: " not in text:
                continue  # noise: the common case for non-log output
            found = detect(text)
            if found is None:
                continue
            fmt, rest = found
        else:
            rest = text[i + len(fmt.MARKER):]
        try:
            key, value, time_s, metadata = fmt.parse(rest)
        except _DECODE_ERRORS as exc:
            problem(n, f"cannot decode {fmt.NAME} line: {exc}")
            continue
        formats.add(fmt.NAME)
        # Repeats of one event (NVIDIA v0.5 prints each line twice, Alibaba once per worker) are kept once.
        if time_s != group_time:
            group_time = time_s
            seen.clear()
        try:
            ident = (key, value)
            if ident in seen:
                continue
        except TypeError:  # dict/list values are unhashable
            ident = (key, repr(value))
            if ident in seen:
                continue
        seen.add(ident)
        events.append(Event(key, value, time_s, n, metadata))
    if hidden:
        problems.append((last_problem, f"{hidden} more problems not listed"))
    log.line_count = n
    return log
