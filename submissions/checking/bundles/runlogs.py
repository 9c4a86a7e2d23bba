"""Run logs found by what they hold: a cheap look for MLPerf log lines, the benchmark a log names, run numbers.

The rules name a run log `result_N.txt` in `results/<system>/<benchmark>/`; real bundles also hold
logs named otherwise (`result_3.log`, `result_0_retry.txt`, `run1.txt`) or put directly in the
system folder. Such a file is a run when it holds MLPerf log lines, in any of the formats the parser
reads; only its first bytes are looked at, up to the first line with a marker.
"""

import fnmatch
import re

from ..logs import open_binary, parse_lines
from ..logs.formats import LOG_LINE

RESULT_FILE = re.compile(r"^result_(\d+)\.txt$")
# The files of a result folder that mlperf-logging's result_summarizer scores, log lines or not: it, package_checker
# and the RCP checker glob this (every version since 0.6; tests/checking/bundles/test_run_log_names.py pins it).
SUMMARIZER_GLOB = "result_*.txt"
SUMMARIZER_RUN_FILE = re.compile(fnmatch.translate(SUMMARIZER_GLOB))
# A run number of more digits is no run number (real rounds number their runs 0..19; the Run table's index is
# a 32-bit integer): such a log is numbered as a log named otherwise is, and ingest says so (bundle.run-index).
MAX_INDEX_DIGITS = 6
# Real logs print up to ~220 KB of other output before their first MLPerf line (v5.1 Supermicro).
HEAD_LIMIT = 1 << 20
# How far a log put outside a benchmark folder is read for the line that names its benchmark
# (v5.1's submission_benchmark comes after up to ~130 KB of hyperparameters and output).
BENCHMARK_LIMIT = 16 << 20
_CHUNK = 64 << 10


def holds_log_lines(source) -> bool:
    """Whether the file (a path, or a bundle member) has an MLPerf log line within its first HEAD_LIMIT bytes.
    A file with NUL bytes before that line is binary, not a log."""
    with open_binary(source) as f:
        seen, tail = 0, b""
        while seen < HEAD_LIMIT:
            chunk = f.read(_CHUNK)
            if not chunk:
                return False
            if b"\0" in chunk:
                return False
            if LOG_LINE.search(tail + chunk):
                return True
            seen += len(chunk)
            tail = chunk[-24:]  # a marker cut by the chunk's end
    return False


def declared_benchmark(source) -> str | None:
    """The benchmark the log names: its `submission_benchmark` (v0.6 on), or the benchmark field every
    v0.5 (and Alibaba) line carries. None when the first BENCHMARK_LIMIT bytes name none."""
    with open_binary(source) as f:
        read = 0
        for line in f:
            read += len(line)
            if read > BENCHMARK_LIMIT:
                break
            if b"submission_benchmark" in line or b":::MLPv0.5.0 " in line or b"MLPerf: " in line:
                for event in parse_lines([line]).events:
                    if (
                        event.key == "submission_benchmark"
                        and isinstance(event.value, str)
                        and event.value.strip()
                    ):
                        return event.value.strip()
                    named = event.metadata.get("benchmark")
                    if isinstance(named, str) and named.strip():
                        return named.strip()
    return None


def _number_in(name: str) -> int | None:
    """result_3.log, result_3_retry.txt -> 3; run7.txt -> 7; log.txt -> None."""
    stem = name.rpartition(".")[0] or name
    match = re.search(r"result_?(\d+)", stem, re.IGNORECASE) or re.search(r"(\d+)(?!.*\d)", stem)
    return _index(match.group(1)) if match else None


def _index(digits: str) -> int | None:
    return int(digits) if len(digits) <= MAX_INDEX_DIGITS else None


def run_indices(names: list[str]) -> list[int]:
    """A run index for each file name, unique within the list and the same for the same names: N for
    result_N.txt; for another name (or an N of more than MAX_INDEX_DIGITS) the number in it when no other run
    has it, else one past the largest."""
    out: list[int | None] = [None] * len(names)
    taken: set[int] = set()
    for i, name in enumerate(names):
        match = RESULT_FILE.match(name)
        number = _index(match.group(1)) if match else None
        if number is not None and number not in taken:
            out[i] = number
            taken.add(number)
    for i in sorted((i for i in range(len(names)) if out[i] is None), key=lambda i: (names[i], i)):
        number = _number_in(names[i])
        if number is None or number in taken:
            number = max(taken, default=-1) + 1
        out[i] = number
        taken.add(number)
    return out


def result_files(files, result_path: str, runs: list[tuple[int, str]]) -> dict:
    """A result's files as the RCP check reads a result folder ({file name: file}): each run under the name the
    rules give it (result_<index>.txt), wherever it lies and whatever it is called, and the folder's scaling.json.

    files: the bundle (FolderFiles or TarFiles); runs: (index, bundle-relative path) of each run.
    """
    out = {f"result_{index}.txt": files.file(path) for index, path in runs}
    folder = files.folder(result_path)
    scaling = folder.get("scaling.json") if isinstance(folder, dict) else folder / "scaling.json"
    if scaling is not None and (isinstance(folder, dict) or scaling.is_file()):
        out["scaling.json"] = scaling
    return out
