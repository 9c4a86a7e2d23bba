"""The tolerant streaming parser of MLPerf logs (parse_file, parse_lines), over the formats of .formats."""

from __future__ import annotations

import bisect
import os
from collections.abc import Collection, Iterable

from .events import Event, ParsedLog
from .formats import detect, mllog
from .leave_out import LeftOut, judge_for

MAX_PROBLEMS = 100  # a garbage file must not grow the problem list without bound
BLOCK_SIZE = (
    4 << 20
)  # parse_file reads this many bytes at a time; tests lower it to hit block boundaries
_DECODE_ERRORS = (ValueError, IndexError, KeyError, TypeError, OverflowError, RecursionError)
_NUL_PROBLEM = "line contains NUL bytes (binary data?)"


def parse_lines(lines: Iterable[str | bytes]) -> ParsedLog:
    """Parse log lines (str, or bytes decoded as UTF-8 with replacement), with or without their LF.

    Each line goes through parse_file's path on its own, so it keeps its place as its line number (a line
    holding a LF before its end would count as two).
    """
    if isinstance(lines, (str, bytes)):
        lines = lines.splitlines()
    parser = _LogParser(0)
    for number, line in enumerate(lines, 1):
        nul = b"\x00" if isinstance(line, bytes) else "\x00"
        if (
            nul in line
        ):  # removed before decoding, as parse_file does: the bytes around a NUL may join
            parser.problem(number, _NUL_PROBLEM)
            line = line.replace(nul, nul[:0])
        if isinstance(line, bytes):
            line = line.decode("utf-8", "replace")
        parser.lines_counted = number - 1
        parser._text(line)
        parser.lines_counted = number  # an empty line counts too
    return parser.finish()


def open_binary(source, **kwargs):
    """A log's bytes: source is a path, or a file of a bundle read in place (anything with open())."""
    return (
        open(source, "rb", **kwargs)
        if isinstance(source, (str, bytes, os.PathLike))
        else source.open()
    )


def parse_file(
    path,
    max_line_bytes: int = 1_000_000,
    *,
    mllog_lines: list | None = None,
    leave_out: Collection[str] = (),
    keep_words: tuple[str, ...] = (),
) -> ParsedLog:
    """Parse a log file (a path, or see open_binary); lines longer than max_line_bytes are skipped as problems.

    Lines end at LF only and give what parse_lines gives, but the file is read BLOCK_SIZE bytes at a time and
    searched for markers block-wide, so noise lines cost no Python work and memory stays bounded.

    mllog_lines, when given, is a list that gets one (line, text, record, start, end) per line holding
    ":::MLLOG" (within max_line_bytes), in file order, so that mlperf-logging's checker need not read and
    decode the file again: text is the decoded line without its LF; record is the JSON object the line's
    event came from, decoded from text[start:end] and left whole (its metadata keeps file and lineno), or
    None when the line gave no MLLOG event. A line with NUL bytes (removed before parsing) is given as
    (line, None, None, 0, 0). The ParsedLog is the same either way.

    leave_out (with mllog_lines): keys whose events the caller never reads (v5.1's tracked_stats: 3 lines in
    4). A line of such a key that mlperf-logging's parser would read as it is, and that holds none of keep_words,
    becomes no event and no mllog_lines entry: it is decoded (to know it is sound) and counted in log.left_out
    (see leave_out.LeftOut for the exact terms). Any other line is parsed as usual.
    """
    with open_binary(path, buffering=0) as f:
        parser = _LogParser(max_line_bytes, mllog_lines)
        if mllog_lines is not None and leave_out:
            parser.left_out = judge_for(tuple(leave_out), tuple(keep_words))
        return parser.parse(f)


class _LogParser:
    """The parser's state: the log being built, the lines counted so far, the last format and the repeats."""

    def __init__(self, limit: int, mllog_lines: list | None = None):
        self.limit = limit
        self.keep = mllog_lines  # parse_file's mllog_lines
        self.too_long = f"line longer than {limit} bytes skipped"
        self.log = ParsedLog()
        self.hidden = 0  # problems beyond MAX_PROBLEMS
        self.last_problem = 0
        self.lines_counted = 0  # lines counted so far: the number of the last one
        self.fmt = None  # the last format seen; a file almost always sticks to one
        self.repeats = _Repeats()
        self.left_out: LeftOut | None = None  # parse_file's leave_out

    def parse(self, f) -> ParsedLog:
        read, limit = f.read, self.limit
        head, head_size = (
            [],
            0,
        )  # the unfinished last line so far, in pieces (joined once it is complete)
        while True:
            block = read(BLOCK_SIZE)
            if not block:
                break
            end = block.rfind(b"\n") + 1
            if not end:
                head.append(block)
                head_size += len(block)
            else:
                if head:
                    head.append(block)
                    block = b"".join(head)
                    end += head_size
                self._lines(block, 0, end)
                head, head_size = ([block[end:]], len(block) - end) if end < len(block) else ([], 0)
            while (
                head_size > limit
            ):  # the unfinished line is already too long: drop it up to its newline
                self.lines_counted += 1
                self.problem(self.lines_counted, self.too_long)
                head, head_size = [], 0
                while block := read(BLOCK_SIZE):
                    i = block.find(b"\n") + 1
                    if i:
                        end = block.rfind(b"\n") + 1
                        self._lines(block, i, end)
                        if end < len(block):
                            head, head_size = [block[end:]], len(block) - end
                        break
        if head:  # the file's last line, without a newline
            self._lines(b"".join(head), 0, head_size)
        return self.finish()

    def finish(self) -> ParsedLog:
        """The log, once every line is parsed."""
        log = self.log
        if self.hidden:
            log.problems.append((self.last_problem, f"{self.hidden} more problems not listed"))
        log.line_count = self.lines_counted
        return log

    def problem(self, line: int, message: str) -> None:
        self.last_problem = line
        if len(self.log.problems) < MAX_PROBLEMS:
            self.log.problems.append((line, message[:300]))
        else:
            self.hidden += 1

    def _lines(self, buf: bytes, start: int, end: int) -> None:
        """Parse buf[start:end]: whole lines, of which only the file's last may lack its newline."""
        limit = self.limit
        i = start
        while (
            end - i > limit
        ):  # a line over the limit is possible: look for one in steps of about `limit`
            j = buf.rfind(b"\n", i, i + limit + 1)
            if j >= 0:
                i = j + 1  # the line starting at i is within the limit
                continue
            self._short_lines(buf, start, i)
            self.lines_counted += 1
            self.problem(self.lines_counted, self.too_long)
            stop = buf.find(b"\n", i + limit + 1, end)
            if stop < 0:
                return
            start = i = stop + 1
        self._short_lines(buf, start, end)

    def _short_lines(self, buf: bytes, start: int, end: int) -> None:
        """_lines for lines within the limit."""
        if start >= end:
            return
        chunk = buf[start:end]
        # Decoding many lines at once equals decoding them one by one, as replacement never eats a newline.
        # A line holding NULs is decoded on its own, once they are removed.
        pos = 0
        i = chunk.find(b"\x00")
        while i >= 0:
            line_start = chunk.rfind(b"\n", pos, i) + 1 or pos
            line_end = chunk.find(b"\n", i) + 1 or len(chunk)
            if line_start > pos:
                self._text(chunk[pos:line_start].decode("utf-8", "replace"))
            line = self.lines_counted + 1
            self.problem(line, _NUL_PROBLEM)
            if self.keep is not None:
                self.keep.append((line, None, None, 0, 0))
            self._text(chunk[line_start:line_end].replace(b"\x00", b"").decode("utf-8", "replace"))
            self.lines_counted = line  # also when nothing but NULs was left of the file's last line
            pos = line_end
            i = chunk.find(b"\x00", pos)
        if pos < len(chunk):
            self._text(chunk[pos:].decode("utf-8", "replace"))

    def _text(self, text: str) -> None:
        """Parse the marker lines of text (whole decoded lines without NULs) and count all its lines.

        Jumps over noise with str.find instead of visiting its lines; a line of the last format seen is parsed
        without asking the other formats.
        """
        # Lines left out are blanked first (each keeps its LF); their times reach the repeats check in order.
        blanked = None if self.left_out is None else self.left_out.blank(text)
        blanks, times = (), ()
        if blanked is not None:
            text, blanks, times = blanked
            self.log.left_out += len(times)
            self.log.formats.add(mllog.NAME)
        skipped = passed = (
            0  # times[:skipped] were given to the repeats check; blanks[:passed] set the format
        )
        # The first place of each marker family at or after `done`, once refreshed; -1: none. "MLPerf: " is
        # only looked for before the next ":::" (-2 when it is not there), so it rarely costs a full scan.
        next_colons = text.find(":::")
        next_alibaba = -2 if next_colons >= 0 else text.find("MLPerf: ")
        line_number = self.lines_counted
        done = 0  # start of the first line not yet counted
        size = len(text)
        if next_colons >= 0 or next_alibaba >= 0:
            fmt = self.fmt
            # Until a format is known every line takes the long way ("\x00" is in no NUL-free text).
            marker = fmt.MARKER if fmt is not None else "\x00"
            while done < size:
                line_end = text.find("\n", done) + 1 or size
                marker_at = text.find(marker, done, line_end)
                if marker_at >= 0:  # the common case: a line of the last format
                    line_number += 1
                    rest = text[marker_at + len(marker) : line_end]
                    line_start, done = done, line_end
                else:  # jump to the next line with a marker-like text (this one may be noise)
                    if 0 <= next_colons < done:
                        next_colons = text.find(":::", done)
                    if next_alibaba < done and next_alibaba != -1:
                        if next_colons < 0:
                            next_alibaba = text.find("MLPerf: ", done)
                        elif next_colons > done:
                            next_alibaba = text.find("MLPerf: ", done, next_colons + 7)
                        else:
                            next_alibaba = -2
                        if next_alibaba == -1 and next_colons >= 0:
                            next_alibaba = -2
                    if next_alibaba < 0:
                        if next_colons < 0:
                            break
                        next_marker = next_colons
                    elif 0 <= next_colons < next_alibaba:
                        next_marker = next_colons
                    else:
                        next_marker = next_alibaba
                    line_start = done
                    if next_marker >= line_end:  # the lines before next_marker's are noise
                        line_start = text.rfind("\n", done, next_marker) + 1
                        line_number += text.count("\n", done, line_start)
                        line_end = text.find("\n", next_marker) + 1 or size
                        marker_at = text.find(marker, line_start, line_end)
                    if (
                        passed < len(blanks) and blanks[passed] < line_start
                    ):  # a line left out was MLLOG's
                        passed = bisect.bisect_left(blanks, line_start, passed)
                        if fmt is not mllog:
                            fmt, marker = mllog, mllog.MARKER
                            marker_at = text.find(marker, line_start, line_end)
                    line_number += 1
                    done = line_end
                    if marker_at >= 0:
                        rest = text[marker_at + len(marker) : line_end]
                    else:
                        found = detect(text[line_start:line_end])
                        if found is None:
                            continue
                        fmt, rest = found
                        marker = fmt.MARKER
                try:
                    if self.keep is None:
                        key, value, time_s, metadata = fmt.parse(rest)
                    else:
                        key, value, time_s, metadata = self._keep(
                            line_number, text, line_start, line_end, rest, fmt.NAME, fmt.parse
                        )
                except _DECODE_ERRORS as exc:
                    self.problem(line_number, f"cannot decode {fmt.NAME} line: {exc}")
                    continue
                self.log.formats.add(fmt.NAME)
                if skipped < len(times) and blanks[skipped] < line_start:
                    at = bisect.bisect_left(blanks, line_start, skipped)
                    self.repeats.skip(times[skipped:at])
                    skipped = at
                if self.repeats.is_repeat(key, value, time_s):
                    continue
                self.log.events.append(Event(key, value, time_s, line_number, metadata))
            self.fmt = fmt
        if skipped < len(times):
            self.repeats.skip(times[skipped:])
        if passed < len(blanks):
            self.fmt = mllog
        line_number += text.count("\n", done)
        if done < size and text[-1] != "\n":
            line_number += 1  # the file's last line, without "\n"
        self.lines_counted = line_number

    def _keep(
        self,
        line_number: int,
        text: str,
        line_start: int,
        line_end: int,
        rest: str,
        name: str,
        parse,
    ):
        """parse(rest) for the line text[line_start:line_end] (rest is its end), noted in mllog_lines if it holds
        ":::MLLOG"."""
        at = line_end - line_start - len(rest)  # where rest starts in the line
        if text[line_end - 1 : line_end] == "\n":
            line_end -= 1
        if name != mllog.NAME:
            if text.find(mllog.MARKER, line_start, line_end) >= 0:
                self.keep.append((line_number, text[line_start:line_end], None, 0, 0))
            return parse(rest)
        try:
            key, value, time_s, metadata, record, start, end = mllog.parse_record(rest)
        except _DECODE_ERRORS:
            self.keep.append((line_number, text[line_start:line_end], None, 0, 0))
            raise
        self.keep.append((line_number, text[line_start:line_end], record, at + start, at + end))
        return key, value, time_s, metadata


class _Repeats:
    """Repeats of one event (NVIDIA v0.5 prints each line twice, Alibaba once per worker) are kept once.

    The identities of a timestamp's events are worked out only when a second event shares it.
    """

    __slots__ = ("time", "seen", "first")

    def __init__(self):
        self.time = self.seen = self.first = None

    def is_repeat(self, key, value, time_s) -> bool:
        if time_s != self.time:
            self.time, self.seen, self.first = time_s, None, (key, value)
            return False
        if self.seen is None:
            self.seen = {_ident(*self.first)}
        ident = _ident(key, value)
        if ident in self.seen:
            return True
        self.seen.add(ident)
        return False

    def skip(self, times: list[float]) -> None:
        """Events left out (parse_file's leave_out), in order. One may start a timestamp, so a kept event after
        it is compared with the events kept at that time only; no kept event of a key someone reads can repeat
        it. As if each were judged in turn: any time but the current one starts the last one's timestamp."""
        if times.count(self.time) != len(times):
            self.time, self.seen, self.first = times[-1], set(), None


def _ident(key, value) -> tuple:
    """What makes two events of one timestamp the same: (key, value), or (key, repr) for dict/list values."""
    ident = (key, value)
    try:
        hash(ident)
    except TypeError:  # dict/list values are unhashable
        return key, repr(value)
    return ident
