"""A run log for the browser: one page of numbered lines with each MLPerf record's key and value picked out,
and a pass over the whole log that finds lines (a search, a key) and its landmarks (run_start, run_stop, the
first eval_accuracy), read in constant memory.

A log can be hundreds of megabytes, or one line of that size, so nothing here holds more than
a page (or a capped list of hits): lines are read one at a time with a cap on their length (the rest of a
long line is skipped, and the cut is said), and the lines after the page are only counted. Pure: it takes
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
# A record's key and value in each format's text: MLLOG's JSON event ("key": "...", "value": ...), v0.6's
# `:::MLL <time> key: {"value": ...}`, v0.5's `:::MLPv0.5.0 <bench> <time> (<file>:<line>) key[: value]` and
# Alibaba's `MLPerf: <bench> [<date>], key[: value]`. The value of a JSON line runs to its metadata.
_JSON_KEY = re.compile(r'"key":\s*"(?P<key>[^"]*)"')
_JSON_VALUE = re.compile(r'"value":\s*(?P<value>.*?)(?=,\s*"metadata"|\}\s*$)')
_MLL_KEY = re.compile(r":::MLL\s+\S+\s+(?P<key>\w+):")
_V05 = re.compile(r":::MLPv0\.5\.0\s+\S+\s+\S+\s+\([^)]*\)\s+(?P<key>\w+)(?::\s*(?P<value>.*))?")
_ALIBABA = re.compile(r"MLPerf: \S+ \[[^\]]*\],\s*(?P<key>\w[\w ]*?)(?::\s*(?P<value>.*))?$")
LANDMARKS = (
    "run_start",
    "run_stop",
    "eval_accuracy",
)  # the keys a reader jumps to, first occurrence
MAX_HITS = 500  # hits listed; the rest are counted
MAX_KEYS = 200  # distinct keys offered in the filter


@dataclass
class Line:
    number: int
    text: str
    record: bool  # an MLPerf log record
    cut: int = 0  # bytes of the line not shown
    marks: list = field(default_factory=list)  # what findings say of this line

    @property
    def parts(self) -> list[tuple[str, str]]:
        """The text as (piece, role) with role 'key', 'value' or '' (the rest): what the page emphasises."""
        return record_parts(self.text) if self.record else [(self.text, "")]


def _spans(text: str) -> tuple[tuple[int, int] | None, tuple[int, int] | None]:
    """Where a record's key and value are in its text (None for either where it has none)."""
    if ":::MLLOG" in text:
        key, value = _JSON_KEY.search(text), _JSON_VALUE.search(text)
        return (key.span("key") if key else None), (value.span("value") if value else None)
    if ":::MLL" in text:
        key, value = _MLL_KEY.search(text), _JSON_VALUE.search(text)
        return (key.span("key") if key else None), (value.span("value") if value else None)
    m = _V05.search(text) or _ALIBABA.search(text)
    if not m:
        return None, None
    return m.span("key"), (m.span("value") if m["value"] else None)


def record_key(text: str) -> str:
    """A record line's key ('' for a line that is none or has none)."""
    span = _spans(text)[0]
    return text[span[0] : span[1]] if span else ""


def record_parts(text: str) -> list[tuple[str, str]]:
    """A record's text cut into pieces around its key and value, each with its role."""
    spans = sorted(
        (span, role)
        for span, role in zip(_spans(text), ("key", "value"))
        if span and span[1] > span[0]
    )
    parts, at = [], 0
    for (start, end), role in spans:
        if start < at:  # overlapping spans (a key inside a value): keep the first
            continue
        if start > at:
            parts.append((text[at:start], ""))
        parts.append((text[start:end], role))
        at = end
    if at < len(text) or not parts:
        parts.append((text[at:], ""))
    return parts


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


@dataclass
class Hit:
    number: int
    text: str  # the line, cut to HIT_CHARS around the match
    query: str = ""

    @property
    def parts(self) -> list[tuple[str, bool]]:
        """The excerpt as (piece, is the match) pieces: the first match of the query picked out."""
        at = self.text.casefold().find(self.query.casefold()) if self.query else -1
        if at < 0 or len(self.text.casefold()) != len(self.text):
            return [(self.text, False)]
        end = at + len(self.query)
        return [
            (p, m)
            for p, m in (
                (self.text[:at], False),
                (self.text[at:end], True),
                (self.text[end:], False),
            )
            if p
        ]


@dataclass
class Index:
    """What a pass over the whole log found: the lines that match (a search, a key), the first line of each
    landmark key, and the keys the log's records use (for the filter), with how often."""

    hits: list[Hit]
    matched: int  # lines that match, listed or not
    landmarks: dict[str, int]  # key -> line number of its first record
    keys: dict[str, int]  # key -> records, at most MAX_KEYS keys, most frequent first
    total_lines: int


HIT_CHARS = 240


def _excerpt(text: str, at: int, width: int = HIT_CHARS) -> str:
    """The part of a long line around position `at`, with an ellipsis where it is cut."""
    if len(text) <= width:
        return text
    start = max(0, min(at - width // 3, len(text) - width))
    return (
        ("…" if start else "")
        + text[start : start + width]
        + ("…" if start + width < len(text) else "")
    )


def scan(open_log, query: str = "", key: str = "", max_chars: int = MAX_LINE_CHARS) -> Index:
    """One pass over the log that open_log() opens: the lines holding `query` (case-insensitive, in the
    shown part of each line) or, with `key`, the records of that key (both given: both must hold); the
    landmarks; the keys. At most MAX_HITS lines are listed."""
    needle = query.strip().casefold()
    hits: list[Hit] = []
    matched = 0
    landmarks: dict[str, int] = {}
    keys: dict[str, int] = {}
    n = 0
    with open_log() as f:
        for n, (raw, _cut) in enumerate(_lines(f, max_chars * 4), start=1):
            text = raw.decode("utf-8", "replace")[:max_chars]
            line_key = record_key(text) if RECORD.search(raw) else ""
            if line_key:
                if line_key in LANDMARKS and line_key not in landmarks:
                    landmarks[line_key] = n
                if line_key in keys or len(keys) < MAX_KEYS:
                    keys[line_key] = keys.get(line_key, 0) + 1
            if not (needle or key) or (key and line_key != key):
                continue
            at = text.casefold().find(needle) if needle else 0
            if at < 0:
                continue
            matched += 1
            if len(hits) < MAX_HITS:
                hits.append(Hit(n, _excerpt(text, at), query.strip()))
    ordered = dict(sorted(keys.items(), key=lambda kv: (-kv[1], kv[0])))
    return Index(hits, matched, landmarks, ordered, n)
