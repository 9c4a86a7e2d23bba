"""Pure-Python MLPerf Training log parsing: parse_file/parse_lines -> ParsedLog, summarize -> RunSummary."""
from .events import Event, ParsedLog
from .formats import open_binary, parse_file, parse_lines
from .summary import RunSummary, summarize

__all__ = ["Event", "ParsedLog", "RunSummary", "open_binary", "parse_file", "parse_lines", "summarize"]
