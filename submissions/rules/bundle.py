"""Findings on where a bundle puts its run logs: read as they are, but named or placed otherwise than the rules say.

Pure Python: the ingest step calls these with what the layout found.
"""
from __future__ import annotations

import re

from .findings import ERROR, WARNING, Finding

LOG_NAME = "bundle.log-name"  # a run log in its benchmark folder, not named result_N.txt
LOG_PLACE = "bundle.log-place"  # a run log outside a benchmark folder (directly in the system folder)
NO_RUN_LOG = "bundle.no-run-log"  # a benchmark folder with no file that holds MLPerf log lines

_RESULT_FILE = re.compile(r"^result_\d+\.txt$")


def log_placement(path: str, index: int, log_folder: str, benchmark: str) -> Finding | None:
    """A warning for a run log read from `path` as run `index` of `benchmark`, unless it is `<log_folder>/result_N.txt`.

    log_folder: the benchmark folder the rules put the log in (results/<system>/<benchmark>).
    """
    folder, _, name = path.rpartition("/")
    expected = f"{log_folder}/result_{index}.txt"
    if folder == log_folder and _RESULT_FILE.match(name):
        return None
    if folder == log_folder:
        return Finding(
            WARNING, LOG_NAME,
            f"Run log '{name}' is read as run {index} of {benchmark}, but the rules name run logs result_N.txt.",
            f"Rename it {expected} (result_<run number>.txt, nothing after the number, extension .txt).", path)
    return Finding(
        WARNING, LOG_PLACE,
        f"Run log '{name}' is read as run {index} of {benchmark} (the benchmark its log names), but it lies in "
        f"{folder or '.'}/, not in a benchmark folder.",
        f"Move it to {expected}: results/<system>/<benchmark>/result_N.txt.", path)


def no_run_log(result_path: str, log_folder: str, benchmark: str, reason: str) -> Finding:
    """An error for a result folder of which no file could be read as a run log."""
    return Finding(
        ERROR, NO_RUN_LOG, f"No run log found for {benchmark}: {reason}",
        f"Put each run's MLPerf log in {log_folder}/ as result_0.txt, result_1.txt, …", result_path)
