"""MLPerf Training log parsing, without Django: parse_file/parse_lines -> ParsedLog, summarize -> RunSummary."""

from .events import Event, ParsedLog
from .leave_out import count_lf
from .parse import open_binary, parse_file, parse_lines
from .summary import RunSummary, summarize

__all__ = [
    "Event",
    "ParsedLog",
    "RunSummary",
    "count_lf",
    "open_binary",
    "parse_file",
    "parse_lines",
    "summarize",
]
