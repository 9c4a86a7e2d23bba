"""The lines parse_file may leave out (LeftOut), judged by the C scanner _scan.c beside this module when it is
built (bin/build_scan.py), else by its Python twin here: the same lines, as tests compare on random texts.

The scanner is kept for issue 27's validation target: bench/validate.py, the portal (2 worker processes) at least
8x mlperf-logging's checker run sequentially, i.e. at least 4x less CPU. Measured with and without it in one run
(issue 35: `bench/validate.py --against`, the same code with and without the scanner built; 2 cores at load
15-17): the portal's CPU over the v5.1 round 20.1 s with it, 23.7 s without, against the checker's 82.9 s: 4.12x
and 3.50x (8.2x and 7.0x on two processes); wall 68.7 and 113.0 s against 721.6 s (10.5x and 6.4x at that load).
Again with the parser's loop unaliased, at load 16-20: 23.6 and 25.3 s against 77.0 s (3.26x and 3.04x): without
it the target is missed in both runs. This is the one module that imports it."""

from __future__ import annotations

import functools
from collections.abc import Collection
from itertools import repeat
from operator import attrgetter, itemgetter, methodcaller

from .formats import mllog

try:  # LeftOut's judging in C; the Python twin below does the same, slower
    from . import _scan
except ImportError:
    _scan = None

# data.count(b"\n"), by memchr in C when the scanner is built (bytes.count compares byte by byte).
count_lf = _scan.count_lf if _scan is not None else methodcaller("count", b"\n")


@functools.lru_cache(maxsize=16)
def judge_for(keys: tuple[str, ...], keep_words: tuple[str, ...]) -> LeftOut:
    return LeftOut(keys, keep_words)  # it keeps no state between files


class LeftOut:
    """Finds the lines parse_file leaves out, all the lines of a block at once.

    A line of a key to leave out is left out when mlperf-logging's parser would read it as it is and no reader
    looks at its text: its only ":::" begins ":::MLLOG {" (so no other format's marker either, and no
    "MLPerf: "), its record decodes (key, time_ms, value, metadata) with that key (the last of two, as json
    reads it), and it is ASCII with no keep word ("benchmark" too: summarize looks for it in any event's
    metadata) and no CR but one before the LF (which stays). The lines are judged together: each term is one
    search of their joined text and their records are decoded with one call, which costs less than a dozen
    Python steps per line. A group that fails a term, or whose records do not all decode, is judged line by line
    on every term, and the records of the lines that pass are halved until those that do not decode are found.
    The file's last line, without an LF, is parsed as usual (a blank there would not count as a line).

    With one key to leave out and an ASCII text, _scan.c (when built) judges the lines' text in one pass
    instead (_judged_in_c) of _judged_in_python: the same lines, as tests compare on random texts.
    """

    _NOT_IN_LINE = ("\r", "MLPerf: ", "\\u")  # a key may spell "benchmark" in escapes

    def __init__(self, keys: Collection[str], keep_words: tuple[str, ...]):
        self.needles = [(key, f'"key": "{key}"') for key in keys]
        words = {*keep_words, "benchmark", *self._NOT_IN_LINE}
        # A word that holds another (submission_benchmark holds benchmark) adds nothing to the search.
        self.words = tuple(w for w in words if not any(o != w and o in w for o in words))

    def blank(self, text: str) -> tuple[str, list[int], list[float]] | None:
        """(text with the left-out lines made empty, their offsets in it, their times in seconds), in order; or
        None when no line is left out."""
        judged = self._judged_in_c(text) if _scan is not None and len(self.needles) == 1 else None
        spans, heads = judged if judged is not None else self._judged_in_python(text)
        if not heads:
            return None
        text, blanks = (_scan.cut if _scan is not None else cut_in_python)(text, spans)
        return text, blanks, [head.time_ms / 1000.0 for head in heads]

    def _judged_in_python(self, text: str) -> tuple[list[int], list]:
        """(start, end, start, end, ... of the lines left out, without their LF; their decoded heads)."""
        spans = []  # (start, end, key): the lines holding a needle
        find, rfind = text.find, text.rfind
        for key, needle in self.needles:
            i = find(needle)
            while i >= 0:
                end = find("\n", i)
                if end < 0:
                    break  # the last line, without an LF
                # A CR before the LF is not part of the record (the checker's text-mode reading drops it too).
                spans.append((rfind("\n", 0, i) + 1, end - (text[end - 1] == "\r"), key))
                i = find(needle, end)
        if len(self.needles) > 1:
            spans.sort()  # a line holding two needles decodes to one key: only that span of it can pass
        heads = self._judge(
            [text[start:end] for start, end, _ in spans], list(map(itemgetter(2), spans))
        )
        return _passing([start for start, _, _ in spans], [end for _, end, _ in spans], heads)

    def _judged_in_c(self, text: str) -> tuple[list[int], list] | None:
        """_judged_in_python() for one key by _scan.c, which judges the lines' text in one pass; None for a text
        that is not all ASCII (the C scanner reads ASCII only), which _judged_in_python() then judges."""
        key, needle = self.needles[0]
        found = _scan.candidates(text, needle, mllog.MARKER, self.words)
        if found is None:
            return None
        spans, records = found  # spans: start, end, start, end, ...
        heads = self._decode(records, [key] * (len(spans) // 2))
        if heads is not None:
            return spans, heads
        starts, ends = spans[::2], spans[1::2]  # some record does not decode to the key: find which
        return _passing(
            starts,
            ends,
            self._decoded([text[a:b] for a, b in zip(starts, ends)], [key] * len(starts)),
        )

    def _judge(self, lines: list[str], keys: list[str]) -> list:
        """The decoded head of each line that is left out, None for the others."""
        # The group's counts add up only when every line holds one marker: the records then decode one per line.
        if self._plain("\n".join(lines), len(lines)):
            heads = self._decode(_records(lines), keys)
            if heads is not None:
                return heads
        plain = [self._plain(line, 1) for line in lines]
        heads = iter(
            self._decoded(
                [line for line, ok in zip(lines, plain) if ok],
                [key for key, ok in zip(keys, plain) if ok],
            )
        )
        return [next(heads) if ok else None for ok in plain]

    def _plain(self, text: str, count: int) -> bool:
        """True when each of the `count` lines joined in text passes the terms on its text."""
        return (
            text.isascii()
            and text.count(":::") == count
            and text.count(_MARKER_OPEN) == count
            and not any(word in text for word in self.words)
        )

    def _decoded(self, lines: list[str], keys: list[str]) -> list:
        """The heads of the lines' records where they decode to their keys, else None; one call when all do,
        else the lines are halved until those that do not are found."""
        if not lines:
            return []
        heads = self._decode(_records(lines), keys)
        if heads is not None:
            return heads
        if len(lines) == 1:
            return [None]
        half = len(lines) // 2
        return self._decoded(lines[:half], keys[:half]) + self._decoded(lines[half:], keys[half:])

    @staticmethod
    def _decode(records: str, keys: list[str]) -> list | None:
        """The heads of LF-separated records when each decodes, to its key; else None."""
        try:
            heads = mllog.decode_heads(records)
        except mllog.HEAD_ERRORS:
            return None
        return heads if list(map(attrgetter("key"), heads)) == keys else None


def _passing(starts: list[int], ends: list[int], heads: list) -> tuple[list[int], list]:
    """(start, end, ... ; heads) of the lines whose head is not None."""
    kept = [(start, end, head) for start, end, head in zip(starts, ends, heads) if head is not None]
    return [x for start, end, _ in kept for x in (start, end)], [head for *_, head in kept]


def cut_in_python(text: str, spans: list[int]) -> tuple[str, list[int]]:
    """_scan.cut's Python twin: text without the parts spans names (start, end, ... in order), and where each cut
    part was in the text returned."""
    pieces, offsets, done, removed = [], [], 0, 0
    for start, end in zip(spans[::2], spans[1::2]):
        pieces.append(text[done:start])
        offsets.append(start - removed)
        removed += end - start
        done = end
    pieces.append(text[done:])
    return "".join(pieces), offsets


_MARKER_OPEN = mllog.MARKER + " {"  # as _scan.c builds it from the marker it is given


def _records(lines: list[str]) -> str:
    """What follows the first MLLOG marker of each line, joined by LF."""
    return "\n".join(map(itemgetter(2), map(str.partition, lines, repeat(mllog.MARKER))))
