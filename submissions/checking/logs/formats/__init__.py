"""The registry of MLPerf log line formats: one module per format, each with NAME, MARKER and parse(rest)."""

from __future__ import annotations

import re

from . import alibaba, mll, mllog, mlperf05

# Order matters only for overlapping markers: ":::MLL " needs its space, so MLLOG never matches it.
FORMATS = (mllog, mll, mlperf05, alibaba)
# A line of any format, for telling a log by its first bytes (bundles.runlogs): each format's marker, or
# its SNIFF where the marker alone is too common.
LOG_LINE = re.compile(
    b"|".join(getattr(fmt, "SNIFF", re.escape(fmt.MARKER.encode())) for fmt in FORMATS)
)


def detect(line: str):
    """Return (format module, text after its marker) for a log line, or None for noise."""
    for fmt in FORMATS:
        i = line.find(fmt.MARKER)
        if i >= 0:
            return fmt, line[i + len(fmt.MARKER) :]
    return None
