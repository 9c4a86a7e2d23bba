"""prescan(): one cheap pass over a log's bytes for what makes it unsafe or pointless to parse further.

It finds lines longer than a limit (and whether they carry a log marker), NUL bytes and other
binary content, and bytes that are not UTF-8, reading fixed-size chunks so that a 50 MB line or
a gigabyte of garbage costs what reading it costs, never more. Line numbers count '\\n' as the
parser (submissions.checking.logs) does.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass, field

from ..logs import count_lf, open_binary

CHUNK = 1 << 20
MARKERS = (b":::", b"MLPerf: ")  # every log line format has one of these
MAX_LISTED = 20  # long lines listed one by one; the rest are counted
BINARY_SAMPLE = 64 * 1024
BINARY_RATIO = 0.05
# Bytes that do not occur in text (ESC, tab, CR, LF, VT and FF do: colour codes and progress bars).
_CONTROL = bytes(b for b in range(32) if b not in b"\t\n\r\x0b\x0c\x1b") + b"\x7f"
_NOT_CONTROL = bytes(b for b in range(256) if b not in _CONTROL)


@dataclass
class LongLine:
    line: int
    length: int
    has_marker: bool


@dataclass
class Prescan:
    line_count: int = 0
    long_lines: list[LongLine] = field(default_factory=list)  # the first MAX_LISTED
    long_line_count: int = 0
    long_marker_line_count: int = (
        0  # long lines that carry a log marker (an event the parser loses)
    )
    first_nul_line: int | None = None
    nul_line_count: int = 0
    binary: bool = False  # NUL bytes, or many control bytes at the start
    first_non_utf8_line: int | None = None
    non_utf8_on_marker_line: bool = False

    @property
    def loses_records(self) -> bool:
        """Whether a reader of the log's records (the portal's parser, mlperf-logging's checker, the RCP reader)
        would lose one: binary data, or a line over the limit that holds a log event (run.line-too-long as an
        error). A long line without an event, a progress bar, is skipped by every reader alike: a warning."""
        return self.binary or self.long_marker_line_count > 0


def _has_marker(data: bytes) -> bool:
    return any(m in data for m in MARKERS)


def prescan(path, max_line_bytes: int) -> Prescan:
    """Scan the file at `path` (or see open_binary); lines longer than max_line_bytes (without the newline) are long."""
    out = Prescan()
    lines = _Lines(out, max_line_bytes)
    decoder = codecs.getincrementaldecoder("utf-8")()
    cur_nul = False  # the current line holds a NUL byte (and is counted)
    first = True
    with open_binary(path) as f:
        while chunk := f.read(CHUNK):
            if first:
                sample = chunk[:BINARY_SAMPLE]
                controls = len(sample.translate(None, _NOT_CONTROL))
                out.binary = controls > BINARY_RATIO * len(sample)
                first = False
            cur_nul = _count_nuls(out, chunk, lines.line, cur_nul)
            if decoder is not None:
                decoder = _decode(out, decoder, chunk, lines.line)
            lines.read(chunk)
    lines.finish()
    return out


def _count_nuls(out: Prescan, chunk: bytes, line: int, cur_nul: bool) -> bool:
    """Count the lines of `chunk` (whose first byte is on `line`) that hold a NUL byte; whether its
    last, unfinished line does."""
    if b"\x00" in chunk:
        out.binary = True
        pos = chunk.find(b"\x00")
        if out.first_nul_line is None:
            out.first_nul_line = line + chunk.count(b"\n", 0, pos)
        out.nul_line_count += _lines_with(chunk, b"\x00")
        first_end = chunk.find(b"\n")
        if cur_nul and (pos < first_end or first_end < 0):
            out.nul_line_count -= 1  # the chunk's first piece continues a line counted already
        return b"\x00" in chunk[chunk.rfind(b"\n") + 1 :]
    return cur_nul and b"\n" not in chunk


def _decode(out: Prescan, decoder, chunk: bytes, line: int):
    """The decoder, still UTF-8 after `chunk`; None, with the line noted, at the first byte that is not."""
    # An ASCII chunk is UTF-8 unless it ends a sequence the last chunk began: the decoder's state says.
    if chunk.isascii() and not decoder.getstate()[0]:
        return decoder
    try:
        decoder.decode(chunk)
    except UnicodeDecodeError as exc:
        at = max(0, min(exc.start, len(chunk) - 1))
        out.first_non_utf8_line = line + chunk.count(b"\n", 0, at)
        start = chunk.rfind(b"\n", 0, at) + 1
        stop = chunk.find(b"\n", at)
        out.non_utf8_on_marker_line = _has_marker(chunk[start : stop if stop >= 0 else len(chunk)])
        return None
    return decoder


class _Lines:
    """The file's lines as its chunks arrive: how many, and those longer than the limit."""

    def __init__(self, out: Prescan, limit: int) -> None:
        self.out, self.limit = out, limit
        self.line = 1  # the line the next byte belongs to
        self.cur_len = 0  # bytes of that line read so far
        self.cur_marker = False
        self.tail = b""  # the end of the current line, for markers split across chunks

    def read(self, chunk: bytes) -> None:
        limit, line, cur_len = self.limit, self.line, self.cur_len
        cur_marker, tail = self.cur_marker, self.tail
        if not _may_hold_long_line(chunk, limit - cur_len, limit):
            last = chunk.rfind(b"\n") + 1
            if last:  # the usual chunk: short lines, the last one maybe unfinished
                rest = chunk[last:]
                self.line += count_lf(chunk)
                self.cur_len, self.cur_marker, self.tail = len(rest), _has_marker(rest), rest[-8:]
                return
        pieces = chunk.split(b"\n")
        # pieces[0] continues the current line, pieces[-1] starts the next (possibly empty) one.
        if cur_len + len(pieces[0]) > limit or max(map(len, pieces)) > limit:
            for k, piece in enumerate(pieces):
                if k:
                    self._end_line(line, cur_len, cur_marker)
                    line, cur_len, cur_marker, tail = line + 1, 0, False, b""
                cur_len += len(piece)
                cur_marker = cur_marker or _has_marker(tail + piece)
                tail = piece[-8:]
        elif len(pieces) == 1:
            cur_len += len(pieces[0])
            cur_marker = cur_marker or _has_marker(tail + pieces[0])
            tail = (tail + pieces[0])[-8:]
        else:
            line += len(pieces) - 1  # none of the finished lines is long
            last = pieces[-1]
            cur_len, cur_marker, tail = len(last), _has_marker(last), last[-8:]
        self.line, self.cur_len, self.cur_marker, self.tail = line, cur_len, cur_marker, tail

    def finish(self) -> None:
        if self.cur_len:
            self._end_line(self.line, self.cur_len, self.cur_marker)
            self.out.line_count = self.line
        else:
            self.out.line_count = self.line - 1

    def _end_line(self, n: int, length: int, marker: bool) -> None:
        if length > self.limit:
            out = self.out
            out.long_line_count += 1
            out.long_marker_line_count += marker
            if len(out.long_lines) < MAX_LISTED:
                out.long_lines.append(LongLine(n, length, marker))


def _may_hold_long_line(chunk: bytes, first_room: int, limit: int) -> bool:
    """False when no line of chunk is longer than limit and its first line (which continues the current
    one) is at most first_room long. A line longer than limit holds a whole block of limit // 2 + 1 bytes
    (blocks counted from the chunk's start), so finding a newline in each block is enough, and costs a
    few dozen finds per chunk where splitting it into lines makes an object per line."""
    if first_room < 0 or (len(chunk) > first_room and chunk.find(b"\n", 0, first_room + 1) < 0):
        return True
    half = limit // 2 + 1
    return any(
        chunk.find(b"\n", start, start + half) < 0
        for start in range(0, len(chunk) - half + 1, half)
    )


def _lines_with(chunk: bytes, needle: bytes) -> int:
    """How many '\\n'-separated pieces of chunk contain needle (a chunk-local count)."""
    count, pos = 0, chunk.find(needle)
    while pos >= 0:
        count += 1
        nl = chunk.find(b"\n", pos)
        if nl < 0:
            break
        pos = chunk.find(needle, nl)
    return count
