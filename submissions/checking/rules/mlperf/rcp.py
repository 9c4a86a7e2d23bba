"""rcp_check(): mlperf-logging's reference convergence point (RCP) check of one result folder, as Findings.

The library's `check_directory` is its command-line path; we use its pieces instead:
- the RCP table comes from the round's benchmark key, never from the logs' submission_benchmark
  (which the library turns into a file name, and which crashes it when unknown or missing);
- the RCP_Checker (its JSON read and statistics) is built once per process and benchmark, and asked
  for the RCP records by what they are (library.rcp_table, the one module that imports mlperf-logging);
- each run is read by the library's own reader (read_run), under the linear stand-in for its
  quadratic prefix-stripping regular expression, and only when no line is over the limit. check_run
  reads it while it checks the log, from the lines it has already parsed, so finalize reads no file;
- it never writes or deletes scaling.json (the library's checker does, in the result folder or,
  when told not to, at "/scaling.json"): the factor is returned; finalize compares it with what the
  bundle's scaling.json claims, as ingest read and checked it.
"""

from __future__ import annotations

import fnmatch
import functools
import io
import math
import os
from pathlib import Path

from leaderboard.catalogue import rule_catalogue

from ...budget import is_stop
from ...logs import open_binary
from ..findings import Findings
from ..prescan import prescan
from . import library

FIRST_RULESET = (1, 0, 0)


def preload() -> None:
    """Import the RCP checker now (it brings scipy, a second to import). A missing one is reported by the
    first RCP check that needs it."""
    try:
        library.rcp_module()
    except ImportError:
        pass


def applies(ruleset: str, benchmark: str) -> bool:
    """True when mlperf-logging does RCP checks for this ruleset (1.0.0 on; not MiniGo)."""
    return (
        library.available()
        and library.ruleset_tuple(ruleset) >= FIRST_RULESET
        and benchmark != "minigo"
    )


def rcp_file(ruleset: str, benchmark: str) -> Path | None:
    path = library.rcp_folder(ruleset) / f"rcps_{benchmark}.json"
    return path if "/" not in benchmark and path.is_file() else None


# read_submission_file acts only on token lines holding one of these words; any other line leaves it as it was.
READER_WORDS = (
    "global_batch_size",
    "submission_benchmark",
    "eval_error",
    "eval_accuracy",
    "train_samples",
    "run_stop",
)


def _lines_with_words(text: str) -> str:
    """The lines of text (joined by LF) that hold a word of READER_WORDS, in order: str.find jumps from
    one word to the next, where testing each line for six words would visit every line six times."""
    spans = set()
    for word in READER_WORDS:
        i = text.find(word)
        while i >= 0:
            start = text.rfind("\n", 0, i) + 1
            end = text.find("\n", i)
            end = len(text) if end < 0 else end
            spans.add((start, end))
            i = text.find(word, end)
    return "\n".join([text[start:end] for start, end in sorted(spans)])


def _latin1_text(path):
    return io.TextIOWrapper(open_binary(path), encoding="latin-1")


def read_run(
    path, ruleset: str, *, mllog_lines: list | None = None, max_line_bytes: int = 64 * 1024
) -> dict:
    """One run as the library's RCP reader sees it: {"not_converged", "epochs", "batch_size"}, or {"error"}
    when it cannot read the file, or {"unreadable": True} for binary data or a log event on a line over the
    limit (a long line without one, a progress bar, is skipped, as every reader of a log skips it).

    mllog_lines (parse_file's, with the same max_line_bytes) stand in for reading the file again: the reader
    gets only the token lines holding a word it acts on, split at '\\r' as its text-mode reading splits them.
    A file with non-ASCII or NUL-bearing token lines (the library's latin-1 text is not our UTF-8 text) is
    read whole, as are all files when no lines are given.
    """
    name = os.path.basename(path) if isinstance(path, (str, os.PathLike)) else path.name
    texts = None if mllog_lines is None else [t for _, t, *_ in mllog_lines]
    if texts is not None and None not in texts and all(map(str.isascii, texts)):
        text = _lines_with_words("\n".join(texts))
    else:
        text = None
        scan = prescan(path, max_line_bytes)
        if scan.loses_records:
            return {"unreadable": True}
    if text is not None:
        open_text = functools.partial(io.StringIO, text, newline=None)
    else:  # as the library opens it (text, latin-1), from a path or a file read in place
        open_text = functools.partial(_latin1_text, path)
    with library.Capture():
        try:
            not_converged, epochs, bs, _ = library.read_submission_file(name, ruleset, open_text)
        except Exception as exc:  # e.g. a run_stop with success but no eval: UnboundLocalError
            if is_stop(exc):
                raise
            return {"error": f"{name}: {type(exc).__name__}: {exc}"}
    for what, value in (("global_batch_size", bs), ("the epochs to converge", epochs)):
        if isinstance(value, float) and not math.isfinite(value):
            return {"error": f"{name}: {what} is {value}, not a finite number"}
    return {"not_converged": not_converged, "epochs": epochs, "batch_size": bs}


def rcp_check(
    result_dir,
    ruleset: str,
    benchmark: str,
    *,
    result_path: str = "",
    max_line_bytes: int = 64 * 1024,
    readings: dict | None = None,
) -> tuple[list, float | None]:
    """Check the result folder's convergence against the RCPs; return (findings, normalisation factor).
    result_dir: a folder, or {file name: file} of one read in place (TarFiles.folder).

    The factor is what the score is multiplied by (1.0 when the runs converge no faster than the
    reference; None when the check could not be made or failed). readings: {file name: read_run(...)}
    made earlier (by check_run); a result_*.txt without one is read here.
    """
    found = Findings(result_path)
    if not applies(ruleset, benchmark):
        return list(found), None
    try:
        library.rcp_module()
    except ImportError as exc:  # numpy or scipy missing on this worker
        found.warning(
            rule_catalogue.RESULT_RCP,
            f"The RCP check could not run: {exc}.",
            "Install mlperf-logging with its dependencies.",
        )
        return list(found), None
    if rcp_file(ruleset, benchmark) is None:
        found.warning(
            rule_catalogue.RESULT_RCP,
            f"mlperf-logging {library.version()} has no reference convergence points for "
            f"{benchmark!r} in training {ruleset}; convergence was not compared.",
            "Nothing to do unless the round expects RCPs for this benchmark.",
        )
        return list(found), None
    folder = _files_of(result_dir)
    names = sorted(
        name for name in folder if fnmatch.fnmatchcase(name, "result_*.txt")
    )  # as the library globs
    if not names:
        found.error(
            rule_catalogue.RESULT_RCP,
            "The result folder has no result_*.txt files to compare with the RCPs.",
        )
        return list(found), None
    readings = readings or {}
    runs = [
        (name, readings.get(name) or read_run(folder[name], ruleset, max_line_bytes=max_line_bytes))
        for name in names
    ]
    for name, reading in runs:
        if reading.get("unreadable"):
            found.error(
                rule_catalogue.RESULT_RCP,
                f"{name} has binary data or a log event on a line over the length limit; convergence was not "
                "compared.",
                "Fix the run findings of that file first.",
                file=_join(result_path, name),
            )
            return list(found), None
    for _, reading in runs:
        if "error" in reading:
            found.error(
                rule_catalogue.RESULT_RCP,
                f"The RCP check could not read the runs: {reading['error']}.",
                "Every result file must be a complete log with global_batch_size, eval_accuracy and "
                "run_stop.",
            )
            return list(found), None
    runs = [(path, r["not_converged"], r["epochs"], r["batch_size"]) for path, r in runs]
    with library.Capture():
        try:
            table = library.rcp_table(ruleset, benchmark)
        except Exception as exc:  # the library's RCP table or statistics for this benchmark
            if is_stop(exc):
                raise
            found.warning(
                rule_catalogue.RESULT_RCP,
                f"mlperf-logging could not load its RCPs for {benchmark!r} "
                f"({type(exc).__name__}: {exc}); convergence was not compared.",
            )
            return list(found), None
        passed, message, factor = _evaluate(table, runs, benchmark)

    if passed:
        text = f"RCP check passed ({message})"
        if factor is not None and factor > 1.0:
            text += f"; the runs converge faster than the reference, so the score is normalised by {factor:.6g}"
        found.info(
            rule_catalogue.RESULT_RCP,
            text + ".",
            ""
            if factor in (None, 1.0)
            else "scaling.json in the result folder must hold this factor.",
        )
        return list(found), factor
    found.error(
        rule_catalogue.RESULT_RCP,
        f"RCP check failed: {message}.",
        "The runs must converge no faster than the reference convergence points allow; check the "
        "hyperparameters against the RCP for this batch size, or submit the missing RCP.",
    )
    return list(found), None


def _evaluate(table, runs, benchmark: str) -> tuple[bool, str, float | None]:
    """The decision of the library's check_directory, on runs already read."""
    sizes = list(
        {repr(bs): bs for _, _, _, bs in runs}.values()
    )  # values from logs may be unhashable
    if len(sizes) > 1:
        return (
            False,
            f"the runs log different global_batch_size values ({', '.join(map(repr, sizes))})",
            None,
        )
    bs = sizes[0]
    if bs == -1:
        return False, "global_batch_size is not logged", None
    not_converged = sum(n for _, n, _, _ in runs)
    if not_converged > (4 if benchmark == "unet3d" else 1):
        return False, f"{not_converged} of {len(runs)} runs did not converge", None
    epochs = [e for _, _, e, _ in runs]

    record = table.at(bs)
    if record is not None:
        ok, factor = table.judge(record, epochs)
        return ok, f"RCP found for batch size {bs}", factor if ok else None
    low, high = table.below(bs), table.above(bs)
    if low is not None and high is not None:
        ok, factor = table.judge(table.interpolated(bs, low, high), epochs)
        return ok, f"RCP interpolated for batch size {bs}", factor if ok else None
    if low is not None:
        return False, f"no RCP for batch size {bs} or above; an RCP for it must be submitted", None
    if high is not None:
        ok, factor = table.judge(table.smallest(), epochs)
        if ok:
            return (
                True,
                f"no RCP for batch size {bs}, but the runs converge slower than at the smallest one",
                factor,
            )
        return False, f"no RCP for batch size {bs}; an RCP for it must be submitted", None
    return False, "mlperf-logging has no RCPs for this benchmark", None


def _files_of(result_dir) -> dict:
    """{name: file} of the result folder: a folder's regular files, or the mapping TarFiles.folder gives."""
    if isinstance(result_dir, (str, os.PathLike)):
        return {entry.name: Path(entry.path) for entry in os.scandir(result_dir) if entry.is_file()}
    return dict(result_dir)


def normalisation(factor: float | None) -> float:
    """What a score is multiplied by: the library's factor when the runs converge faster than the
    reference (above 1), else 1."""
    return factor if factor is not None and math.isfinite(factor) and factor > 1.0 else 1.0


def compare_scaling(given: float | None, factor: float | None, result_path: str) -> list:
    """The bundle's scaling.json (given) against the factor the portal computed (None: none computed).
    The score always uses the portal's; a disagreement is a warning that shows both numbers."""
    found = Findings(result_path)
    where = _join(result_path, "scaling.json")
    expected = normalisation(factor)
    if given is None:
        if expected > 1.0:
            found.warning(
                rule_catalogue.RESULT_RCP_SCALING,
                f"The portal's RCP check normalises this result by {expected:.6g}; the "
                "folder has no scaling.json. The score uses the portal's factor.",
                "Add scaling.json with this factor (the package checker writes it).",
            )
    elif factor is None:
        if not math.isclose(given, 1.0, rel_tol=1e-3):
            found.warning(
                rule_catalogue.RESULT_RCP_SCALING,
                f"scaling.json says {given:.6g}, but the portal computed no RCP factor for "
                "this result (see its RCP finding), so the score is not normalised (× 1).",
                "The score uses only a factor the portal computes.",
                file=where,
            )
    elif not math.isclose(given, expected, rel_tol=1e-3):
        found.warning(
            rule_catalogue.RESULT_RCP_SCALING,
            f"scaling.json says {given:.6g}, but the portal's RCP check computes "
            f"{expected:.6g}; the score uses {expected:.6g}.",
            "Write the factor the RCP check computes.",
            file=where,
        )
    return list(found)


def score_factor(
    computed: float | None,
    claimed: float | None,
    result_path: str,
    *,
    history: bool,
    normalised: bool = True,
) -> tuple[float, list]:
    """The factor a result's olympic mean is multiplied by, and the findings that compare the numbers.

    A live round trusts only what the portal computes: its RCP factor (normalisation), or 1 where the
    round's ruleset does not scale scores (normalised False); scaling.json is compared (compare_scaling).
    Imported history reproduces what MLCommons published: scaling.json's factor where the folder has one,
    else 1 (the round was published unscaled there); where the portal's own RCP check computes another
    factor, a warning for reviewers shows both numbers."""
    if not history:
        if not normalised:
            return 1.0, []
        return normalisation(computed), compare_scaling(claimed, computed, result_path)
    published = claimed if claimed is not None else 1.0
    own = normalisation(computed) if normalised else 1.0
    found = Findings(result_path)
    if computed is not None and not math.isclose(published, own, rel_tol=1e-3):
        what = (
            f"MLCommons published this result scaled by {published:.6g} (scaling.json)"
            if claimed is not None
            else "MLCommons published this result unscaled (no scaling.json)"
        )
        found.warning(
            rule_catalogue.RESULT_RCP_SCALING,
            f"{what}; the portal's RCP check computes {own:.6g}. The score uses the published factor: "
            "this round is imported history.",
            "Nothing to change in the bundle: reviewers may compare the two factors.",
            file=_join(result_path, "scaling.json") if claimed is not None else None,
        )
    return published, list(found)


def _join(folder: str, name: str) -> str:
    return f"{folder.rstrip('/')}/{name}" if folder else name
