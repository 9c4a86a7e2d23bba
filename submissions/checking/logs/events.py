"""Event and ParsedLog: the decoded contents of one MLPerf result log."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple


class Event(NamedTuple):
    """One log event. A named tuple: millions are built per round, and a tuple is the cheapest."""

    key: str
    value: Any  # decoded JSON/literal, else the stripped text; None when the line has no value
    time_s: float  # seconds since the epoch
    line: int  # 1-based line number in the file
    metadata: dict  # format metadata without the logger's file/lineno; {} when none


@dataclass
class ParsedLog:
    events: list[Event] = field(default_factory=list)
    formats: set[str] = field(
        default_factory=set
    )  # subset of {"mlperf-0.5", "mll", "mllog", "alibaba"}
    line_count: int = 0
    problems: list[tuple[int, str]] = field(default_factory=list)  # (line, message)
    left_out: int = 0  # ":::MLLOG" lines read but not kept (parse_file's leave_out)
