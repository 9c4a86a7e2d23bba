"""One page of a run log for the browser: numbered lines, MLPerf records picked out, read in constant memory.

A log can be hundreds of megabytes, or one line of that size, so nothing here holds more than
a page: lines are read one at a time with a cap on their length (the rest of a long line is
skipped, and the cut is said), and the lines after the page are only counted. Pure: it takes
any binary file object and knows nothing of Django or of where the bytes are kept.
"""

import re
from dataclasses import dataclass, field

PER_PAGE = 1000
MAX_LINE_CHARS = 2000  # longer lines (progress bars, dumped tensors) are cut on the page
_CHUNK = 1 << 16

# The MLPerf log line formats the portal reads (v0.5's :::MLPv0.5.0, v0.6's :::MLL, :::MLLOG since v0.7, and
# Alibaba's v0.6 "MLPerf: "); the same markers the parser sniffs for, kept here because leaderboard does not
# import the parser.
RECORD = re.compile(rb":::MLLOG|:::MLL\b|:::MLPv0\.5\.0|MLPerf: ")


@dataclass
class Line:
    number: int
    text: str
    record: bool  # an MLPerf log record
    cut: int = 0  # bytes of the line not shown
    marks: list = field(default_factory=list)  # what findings say of this line


@dataclass
class Page:
    number: int
    pages: int
    total_lines: int
    lines: list[Line]

    @property
    def first(self) -> int:
        return self.lines[0].number if self.lines else 0

    @property
    def last(self) -> int:
        return self.lines[-1].number if self.lines else 0


def page_of_line(line: int, per_page: int = PER_PAGE) -> int:
    return max(1, (max(line, 1) - 1) // per_page + 1)


def _lines(f, limit: int):
    """(head bytes, bytes cut) of each line of f, each read with at most limit bytes held."""
    while True:
        head = f.readline(limit)
        if not head:
            return
        cut = 0
        if not head.endswith(b"\n"):
            while True:  # the rest of a long line, skipped
                rest = f.readline(_CHUNK)
                if not rest:
                    break
                if rest.endswith(b"\n"):
                    cut += len(rest) - 1
                    break
                cut += len(rest)
        else:
            head = head[:-1]
        yield head.rstrip(b"\r"), cut


def _count_lines(f) -> int:
    """Lines left in f (a last line without a newline counts)."""
    count, last = 0, b"\n"
    while chunk := f.read(_CHUNK):
        count += chunk.count(b"\n")
        last = chunk[-1:]
    return count + (last != b"\n")


def read_page(
    open_log, number: int, per_page: int = PER_PAGE, max_chars: int = MAX_LINE_CHARS
) -> Page:
    """Page `number` (1-based; past the end: the last page) of the log that open_log() opens (a binary
    file; opened again for a page past the end, as a bundle member's reader cannot seek)."""
    with open_log() as f:
        page = _read_page(f, max(1, number), per_page, max_chars)
    if page.number > page.pages:
        with open_log() as f:
            page = _read_page(f, page.pages, per_page, max_chars)
    return page


def _read_page(f, number: int, per_page: int, max_chars: int) -> Page:
    first = (number - 1) * per_page + 1
    lines: list[Line] = []
    n = 0
    limit = max_chars * 4  # UTF-8: at most four bytes a character
    reader = _lines(f, limit)
    for n, (raw, cut) in enumerate(reader, start=1):
        if n < first:
            continue
        text = raw.decode("utf-8", "replace")
        if len(text) > max_chars:
            cut += len(raw) - len(text[:max_chars].encode())
            text = text[:max_chars]
        lines.append(Line(n, text, bool(RECORD.search(raw)), cut))
        if len(lines) == per_page:
            break
    total = n + (_count_lines(f) if len(lines) == per_page else 0)
    return Page(number, max(1, -(-total // per_page)), total, lines)
