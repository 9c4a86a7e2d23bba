"""Findings on where a bundle puts its run logs: read as they are, but named or placed otherwise than the rules say.

Pure Python: the ingest step calls these with what the layout found.
"""

from __future__ import annotations

import re

from leaderboard.catalogue import rule_catalogue

from .findings import ERROR, WARNING, Finding, over_budget_finding

_RESULT_FILE = re.compile(r"^result_(\d+)\.txt$")
MAX_INDEX_DIGITS = 6  # as bundles.runlogs reads run numbers


def log_placement(path: str, index: int, log_folder: str, benchmark: str) -> Finding | None:
    """A warning for a run log read from `path` as run `index` of `benchmark`, unless it is `<log_folder>/result_N.txt`.

    log_folder: the benchmark folder the rules put the log in (results/<system>/<benchmark>).
    """
    folder, _, name = path.rpartition("/")
    expected = f"{log_folder}/result_{index}.txt"
    numbered = _RESULT_FILE.match(name)
    if folder == log_folder and numbered:
        number = numbered.group(1)
        if len(number) <= MAX_INDEX_DIGITS and int(number) == index:
            return None
        why = (
            f"its number has {len(number)} digits and the portal reads run numbers of up to {MAX_INDEX_DIGITS}"
            if len(number) > MAX_INDEX_DIGITS
            else f"another run log of this result has the number {int(number)}"
        )
        return Finding(
            WARNING,
            rule_catalogue.BUNDLE_RUN_INDEX,
            f"Run log '{_clip(name)}' is read as run {index} of {benchmark}: {why}.",
            f"Rename it {expected}: number the runs 0, 1, 2, …",
            path,
        )
    if folder == log_folder:
        return Finding(
            WARNING,
            rule_catalogue.BUNDLE_LOG_NAME,
            f"Run log '{name}' is read as run {index} of {benchmark}, but the rules name run logs result_N.txt.",
            f"Rename it {expected} (result_<run number>.txt, nothing after the number, extension .txt).",
            path,
        )
    return Finding(
        WARNING,
        rule_catalogue.BUNDLE_LOG_PLACE,
        f"Run log '{name}' is read as run {index} of {benchmark} (the benchmark its log names), but it lies in "
        f"{folder or '.'}/, not in a benchmark folder.",
        f"Move it to {expected}: results/<system>/<benchmark>/result_N.txt.",
        path,
    )


def no_run_log(result_path: str, log_folder: str, benchmark: str, reason: str) -> Finding:
    """An error for a result folder of which no file could be read as a run log."""
    return Finding(
        ERROR,
        rule_catalogue.BUNDLE_NO_RUN_LOG,
        f"No run log found for {benchmark}: {reason}",
        f"Put each run's MLPerf log in {log_folder}/ as result_0.txt, result_1.txt, …",
        result_path,
    )


def other_organisation(submitter: str, folder: str, holder: str, own: str) -> Finding:
    """An error for a bundle whose submitter's name (`submitter`, from `folder`, '' when the descriptions
    named it) reads as the name of another organisation (`holder`) than the one it was uploaded for
    (`own`): it is not recorded."""
    where = (
        f"submitter folder is '{submitter}'"
        if folder
        else f"systems name '{submitter}' as submitter"
    )
    return Finding(
        ERROR,
        rule_catalogue.BUNDLE_OTHER_ORGANISATION,
        f"The bundle's {where}, which reads as {holder}'s name, and it was uploaded for {own}: the "
        f"name expected is '{own}'. Nothing of the bundle was recorded.",
        f"Name the folder '{own}' (what {own}'s bundles are filed under) and upload it again; upload "
        "bundles for your own organisation only.",
        f"{folder}/" if folder else "",
    )


def json_too_deep(path: str, levels: int) -> Finding:
    """An error for a JSON file (a system description, submission.json, scaling.json) nested too deep to read."""
    return Finding(
        ERROR,
        rule_catalogue.BUNDLE_JSON_TOO_DEEP,
        f"The file nests lists or objects more than {levels} levels deep; it was "
        "not read, and the portal goes on as if it were absent.",
        "Write it as the rules' template does: a flat object of fields (a few levels at most).",
        path,
    )


def json_too_large(path: str, limit: int) -> Finding:
    return Finding(
        ERROR,
        rule_catalogue.BUNDLE_JSON_TOO_LARGE,
        f"The file is larger than {limit // 1024:,} KiB; it was not read, and the "
        "portal goes on as if it were absent.",
        "A description or scaling.json is a few KiB: leave logs and data out of it.",
        path,
    )


def json_number(path: str, error: str) -> Finding:
    return Finding(
        ERROR,
        rule_catalogue.BUNDLE_JSON_NUMBER,
        f"The file holds a number JSON readers refuse ({error}); it was not read.",
        "Write counts and sizes as ordinary numbers.",
        path,
    )


def scaling_factor(path: str, value) -> Finding:
    """A warning for scaling.json's factor when it is no positive finite number: it is not kept."""
    return Finding(
        WARNING,
        rule_catalogue.BUNDLE_SCALING_FACTOR,
        f"scaling.json's scaling_factor is {_clip(repr(value))}, not a positive "
        "finite number; it is not kept.",
        "Write the factor the RCP check computes (a number such as 1.07), or leave the file out: the "
        "score uses the factor the portal computes.",
        path,
    )


def over_budget(path: str, over) -> Finding:
    """Opening the bundle passed a limit of its step's budget (over: budget.OverBudget); path: the bundle."""
    return over_budget_finding(
        rule_catalogue.BUNDLE_OVER_BUDGET,
        ERROR,
        "Opening the bundle",
        over,
        "it was not recorded. Upload it again without that file, or with it mended.",
        path,
    )


def read_crashed(path: str, error: BaseException) -> Finding:
    """An error for a file whose reading raised an exception the reader did not expect: the portal's fault, said
    as such, on that file alone (the rest of the bundle is read)."""
    return Finding(
        ERROR,
        rule_catalogue.INTERNAL_READ,
        f"Reading this file failed inside the portal ({type(error).__name__}: "
        f"{_clip(str(error), 200)}); it was left out.",
        "A fault in the portal, not necessarily in the file: report it to the portal's administrators "
        "with this file.",
        path,
    )


def _clip(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[:limit] + "…"
