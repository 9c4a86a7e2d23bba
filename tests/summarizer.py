"""MLCommons' own view of a shared round, run on an unpacked copy: mlperf-logging's result_summarizer's scores,
its compliance checker's verdict on each log, and package_checker's verdict on each submitter (`round_side`, one
submitter per process).

Per submitter folder, the command `python -m mlperf_logging.result_summarizer <folder> training <ruleset>
--csv <file>` is run (its `main`, in the submitter's own process: each_log_read_once); it writes its
table as JSON beside the CSV, a row per system with a column per
benchmark (the score in minutes) and `details_url` naming the system's description file. The command
leaves out a system whose description it cannot read (v0.6: Alibaba's sinian has no systems/sinian.json,
NVIDIA's descriptions are log lines, not JSON), and crashes on some folders (v0.6 Google's `mask` folders:
its 0.6.0 checker has no mask.yaml). For the systems without a row, and for rounds whose ruleset the command
does not know, its scoring function `_compute_strong_score_standalone` (what the command calls per result
folder: the ruleset's compliance checker on each result_*.txt, a failing run dropped; the olympic mean,
dropping 4 fastest and 4 slowest for unet3d; times the folder's scaling.json) is called on the folder
instead, and the row says so; where that crashes too, the folder has no score and the row says why. Nothing
of the portal is used.

The copy matters: the command's RCP check, like package_checker's, deletes and rewrites scaling.json in the
folders it reads.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Expected:
    minutes: float | None
    how: str  # "command" or "scoring function (<why>)"


def unpack(tarball: Path, into: Path) -> Path:
    with tarfile.open(tarball, "r:*") as tar:
        tar.extractall(into, filter="data")
    return into


def result_folders(root: Path):
    """(submitter, system, benchmark folder name, path) of every <Submitter>/results/<system>/<benchmark>."""
    for submitter in sorted(p for p in root.iterdir() if p.is_dir()):
        results = submitter / "results"
        if not results.is_dir():
            continue
        for system in sorted(p for p in results.iterdir() if p.is_dir()):
            for bench in sorted(p for p in system.iterdir() if p.is_dir()):
                yield submitter.name, system.name, bench.name, bench


def _alias(benchmark: str) -> str:
    from mlperf_logging.result_summarizer import result_summarizer as rs

    return rs._benchmark_alias(benchmark)


# mlperf-logging's parser of ruleset 0.6.0 reads the `:::MLL` timestamps as seconds ("seconds as a float",
# mlp_parser/ruleset_060.py), and the scoring function divides every time by 60 × 1000 as milliseconds: its
# v0.6 figures are minutes / 1000, so they are multiplied back here.
SECONDS_RULESETS = {"0.6.0"}


def score_folder(folder: Path, ruleset: str) -> float | None:
    """The summarizer's scoring function on one result folder, in minutes (None where it gives none)."""
    from mlperf_logging.result_summarizer import result_summarizer as rs

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        minutes, _, _ = rs._compute_strong_score_standalone(
            _alias(folder.name),
            folder.parent.name,
            False,  # energy is not compared here
            str(folder),
            "training",
            ruleset,
        )
    if minutes is not None and ruleset in SECONDS_RULESETS:
        minutes *= 1000
    return minutes


def run_command(root: Path, submitter: str, ruleset: str, out: Path) -> dict:
    """The command's table for one submitter: {(system file name, benchmark): minutes or None}. The command's
    `main` runs in this process, in `root`, as `python -m` would run it there; where it crashes or exits, it
    has written no table, as a crashed command has not."""
    from mlperf_logging.result_summarizer import result_summarizer as rs

    csv = out / f"{submitter}.csv"
    argv, cwd = sys.argv, os.getcwd()
    sys.argv = ["result_summarizer", submitter, "training", ruleset, "--csv", str(csv)]
    try:
        os.chdir(root)
        with quiet(), contextlib.redirect_stderr(io.StringIO()):
            rs.main()
    except (Exception, SystemExit):  # its own crash (v0.6's Google, above): it wrote no table
        pass
    finally:
        os.chdir(cwd)
        sys.argv = argv
    return command_table(out, submitter, ruleset)


def command_table(out: Path, submitter: str, ruleset: str) -> dict:
    """{(system file name, benchmark): minutes or None} from the table the command wrote under `out`."""
    table = out / f"{submitter}.json"
    if not table.is_file():
        return {}
    from mlperf_logging.benchmark_meta import get_allowed_benchmarks

    benchmarks = get_allowed_benchmarks("training", ruleset)
    scores = {}
    for row in json.loads(table.read_text()):
        system = row["details_url"].rsplit("/", 1)[-1].removesuffix(".json")
        for benchmark in benchmarks:
            if benchmark in row:
                minutes = row[benchmark]
                if minutes is not None and ruleset in SECONDS_RULESETS:
                    minutes *= 1000
                scores[(system, benchmark)] = minutes
    return scores


def expected(
    root: Path, submitter: str, ruleset: str, out: Path, command_ran: bool = False
) -> dict[tuple[str, str, str], Expected]:
    """{(submitter, system, benchmark folder): Expected} for every result folder of one submitter.
    `command_ran`: the command has already written its table under `out` (bench/mlcommons_side.py)."""
    from mlperf_logging.compliance_checker.mlp_compliance import rule_choices

    known = ruleset in rule_choices()
    if not known:
        command = {}
    elif command_ran:
        command = command_table(out, submitter, ruleset)
    else:
        command = run_command(root, submitter, ruleset, out)
    table = {}
    for s, system, bench, path in result_folders(root):
        if s != submitter:
            continue
        if (system, _alias(bench)) in command:
            table[(s, system, bench)] = Expected(command[(system, _alias(bench))], "command")
            continue
        why = "the command has no row for this system" if known else "ruleset unknown"
        try:
            table[(s, system, bench)] = Expected(
                score_folder(path, ruleset), f"scoring function ({why})"
            )
        except Exception as crash:  # mlperf-logging's own fault: no score, and the reason
            table[(s, system, bench)] = Expected(
                None, f"scoring function crashed: {type(crash).__name__}: {crash}"[:300]
            )
    return table


# --- per log and per submitter: the checker's verdicts -------------------------------------------------------


@contextlib.contextmanager
def quiet():
    """mlperf-logging logs every rule it applies, and prints."""
    import logging

    previous = logging.root.manager.disable
    logging.disable(logging.CRITICAL)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            yield
    finally:
        logging.disable(previous)


@dataclass
class LogVerdict:
    passes: bool | None  # the compliance checker's verdict (common.yaml); None where it crashed
    counted: bool | None  # the result summarizer counts the run; None where it crashes on the log


def log_verdict(path: Path, ruleset: str, checked: bool | None = None) -> LogVerdict:
    """One pass of the ruleset's compliance checker over a log, and what the result summarizer makes of it:
    `_read_result_file` (the checker, then the parser) and `_query_run_start_stop`, its own two steps.
    `checked`: the checker's verdict on the log where the summarizer's command or package_checker already gave
    it (each_log_read_once), the same checker with the same configuration, which is then not run again."""
    from mlperf_logging.compliance_checker import mlp_compliance
    from mlperf_logging.compliance_checker.mlp_parser import parse_file
    from mlperf_logging.result_summarizer import result_summarizer as rs

    passes = checked
    if passes is None:
        try:
            with quiet():
                checker = mlp_compliance.make_checker(
                    usage="training", ruleset=ruleset, quiet=True, werror=False
                )
                config = f"training_{ruleset}/common.yaml"
                passes = mlp_compliance.main(str(path), config, checker)[0]
        except (
            Exception
        ):  # the checker crashes on it (Google's v0.6 logs name "mask": no mask.yaml)
            return LogVerdict(None, None)
    if not passes:
        return LogVerdict(
            False, False
        )  # _read_result_file raises ValueError: the summarizer drops it
    try:
        with quiet():
            loglines, failed = parse_file(str(path), ruleset=ruleset)
            if failed:
                return LogVerdict(True, False)
            rs._query_run_start_stop(loglines)
    except ValueError:  # what the summarizer catches: it drops the run
        return LogVerdict(True, False)
    except Exception:
        return LogVerdict(True, None)
    return LogVerdict(True, True)


@contextlib.contextmanager
def each_log_read_once():
    """Within it, mlperf-logging parses each run log (result_*.txt) once and judges it with its compliance
    checker once, however many of its tools ask: the summarizer's command, package_checker and its seed checker,
    and log_verdict. Yields the checker's verdict on each log judged, by the log's resolved path.

    The one reach inside mlperf-logging that the tests make for time (issue 35: `.ci/run` within 25 minutes,
    the whole-round comparisons most of it). Its tools each read every log again: five parses and two passes
    of the checker a log (the command's checker and its own read, package_checker's checker and seed checker,
    log_verdict), and the parse is most of their time (a regular expression over every line). Here the module
    attributes they call (mlp_parser.parse_file, the summarizer's parse_file, mlp_compliance.main) are swapped
    for ones that remember, and swapped back when the block ends. Each parse is keyed by the log and the
    ruleset, each verdict by the log, the configuration and werror (the checker's verdict depends on no other
    setting). Power logs are read as before. bench/mlcommons_side.py measures it and checks that every score,
    row, verdict and error line is the same with and without."""
    from mlperf_logging.compliance_checker import mlp_compliance, mlp_parser
    from mlperf_logging.result_summarizer import result_summarizer as rs

    parse, main, summarizer_parse = mlp_parser.parse_file, mlp_compliance.main, rs.parse_file
    parsed: dict[tuple[Path, str], tuple[list, list]] = {}
    judged: dict[tuple[Path, str, bool], tuple] = {}
    verdicts: dict[Path, bool] = {}

    def parse_once(filename, ruleset="0.6.0"):
        path = Path(filename)
        if not path.name.startswith("result_"):
            return parse(filename, ruleset=ruleset)
        key = (path.resolve(), ruleset)
        if key not in parsed:
            parsed[key] = parse(filename, ruleset=ruleset)
        loglines, failed = parsed[key]
        return list(loglines), list(failed)  # a caller's list of its own, as a fresh parse gives

    def judge_once(filename, config_file, checker):
        key = (Path(filename).resolve(), config_file, checker.werror)
        if key not in judged:
            judged[key] = main(filename, config_file, checker)
            verdicts[key[0]] = judged[key][0]
        return judged[key]

    mlp_parser.parse_file = rs.parse_file = parse_once
    mlp_compliance.main = judge_once
    try:
        yield verdicts
    finally:
        mlp_parser.parse_file, mlp_compliance.main, rs.parse_file = parse, main, summarizer_parse


def package_verdict(folder: Path, ruleset: str) -> tuple[bool | None, list[str]]:
    """(passes, its error lines) from package_checker's own checks of one submitter's folder; passes is None
    where it crashed."""
    import logging

    from mlperf_logging.package_checker import package_checker

    records = []

    class Keep(logging.Handler):
        def emit(self, record):
            if record.levelno >= logging.ERROR:
                records.append(record.getMessage())

    root = logging.getLogger()
    saved, level = root.handlers[:], root.level
    root.handlers[:], root.level = [Keep()], logging.INFO
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            systems_ok = (
                package_checker.check_systems(str(folder), "training", ruleset)
                if ruleset >= "1.0.0"
                else True
            )
            results_ok = package_checker.check_training_result_files(
                str(folder), "training", ruleset, True, False, False, None, False
            )
        return systems_ok and results_ok, records
    except Exception as exc:
        return None, [f"{type(exc).__name__}: {exc}"]
    finally:
        root.handlers[:], root.level = saved, level


# --- a whole round ------------------------------------------------------------------------------------------


@dataclass
class Round:
    """mlperf-logging's side of one round: the summarizer's scores, each log's verdict (by its path under the
    round) and each submitter's package_checker verdict."""

    scores: dict[tuple[str, str, str], Expected]
    logs: dict[str, LogVerdict]
    packages: dict[str, tuple[bool | None, list[str]]]


def submitter_side(root: Path, submitter: str, ruleset: str, out: Path) -> Round:
    """One submitter's part of Round. The summarizer's command first, as on a fresh copy: its RCP check, like
    package_checker's, rewrites scaling.json in the folders it reads. Then package_checker; then each log's
    verdict, from the checker's verdict that the two gave it (each_log_read_once; the checker runs on the logs
    neither judged: a benchmark they skip, a submitter they crashed on)."""
    with each_log_read_once() as checked:
        scores = expected(root, submitter, ruleset, out)
        package = package_verdict(root / submitter, ruleset)
        logs = {
            str(log.relative_to(root)): log_verdict(log, ruleset, checked.get(log.resolve()))
            for s, *_, folder in result_folders(root)
            if s == submitter
            for log in sorted(folder.glob("result_*.txt"))
        }
    return Round(scores, logs, {submitter: package})


def round_side(root: Path, ruleset: str, out: Path, processes: int = 2) -> Round:
    """Round for every submitter under root, `processes` submitters at a time (largest first), each in a
    fresh process of its own: mlperf-logging keeps module state (the checker's queue of configurations, the
    summarizer's), logs through the root logger, and its command runs in the process (run_command)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    submitters = sorted(
        {s for s, *_ in result_folders(root)},
        key=lambda s: -sum(f.stat().st_size for f in (root / s).rglob("result_*.txt")),
    )
    whole = Round({}, {}, {})
    context = multiprocessing.get_context("spawn")  # not fork: the test process runs threads
    with ProcessPoolExecutor(processes, mp_context=context, max_tasks_per_child=1) as pool:
        for part in pool.map(submitter_side, *zip(*[(root, s, ruleset, out) for s in submitters])):
            whole.scores.update(part.scores)
            whole.logs.update(part.logs)
            whole.packages.update(part.packages)
    return whole


# --- a row of the summary: MLCommons' and the portal's -----------------------------------------------------

# MLCommons' words for a description's status, as its summary shows them: mlperf-logging's
# result_summarizer/config.yaml `availability` (the file is not in the package's wheel). The command maps a status
# by this table, as written or in lower case (`_map_availability`), and refuses one it lacks.
MLCOMMONS_AVAILABILITY = {
    "available on-premise": "Available on-premise",
    "onprem": "Available on-premise",
    "available": "Available on-premise",
    "available onprem": "Available on-premise",
    "available cloud": "Available cloud",
    "cloud": "Available cloud",
    "research, development, or internal (rdi)": "Research, Development, or Internal (RDI)",
    "rdi": "Research, Development, or Internal (RDI)",
    "research": "Research, Development, or Internal (RDI)",
    "development": "Research, Development, or Internal (RDI)",
    "internal": "Research, Development, or Internal (RDI)",
    "preview": "Preview",
}
# The summarizer's column -> the portal's CSV column (MLCommons' summary headings).
ROW_COLUMNS = {
    "division": "Division",
    "availability": "Availability",
    "submitter": "Organization",
    "system": "System Name",
    "number_of_nodes": "# of Nodes",
    "host_processor_model_name": "Processor",
    "host_processors_count": "# of Processors",
    "accelerator_model_name": "Accelerator",
    "accelerators_count": "# of Accelerators",
    "framework": "Software",
}


def summary_rows(out: Path, submitter: str) -> list[dict]:
    """The command's rows for one submitter, as it wrote them beside its CSV (run_command); [] where it wrote
    none (it crashed, or read no description)."""
    table = out / f"{submitter}.json"
    return json.loads(table.read_text()) if table.is_file() else []


def system_file(row: dict) -> str:
    """The system a row is of: the description's file name, from the row's `details_url`."""
    return row["details_url"].rsplit("/", 1)[-1].removesuffix(".json")


def expected_cell(column: str, value) -> str:
    """What MLCommons' summary shows for the command's cell (its config.yaml's words for a status)."""
    if column == "availability":
        return MLCOMMONS_AVAILABILITY.get(
            str(value).strip().lower(), f"(a status the command refuses: {value!r})"
        )
    if (
        column == "division"
    ):  # PCL's v1.0 descriptions write "close"; MLCommons lists them as closed
        return "Open" if str(value).strip().lower().startswith("open") else "Closed"
    return "" if value is None else str(value).strip()


def shown(value) -> str:
    """A cell as text; a count the CSV may write as 8 or 8.0 as 8."""
    value = "" if value is None else str(value)
    try:
        number = float(value)
    except ValueError:
        return value
    return str(int(number)) if number.is_integer() else value


def row_differences(
    row: dict, portal: dict, headings: dict[str, str], ruleset: str
) -> tuple[list[str], int, int]:
    """The cells of the portal's CSV row (`portal`, by heading) that differ from the command's `row`: every
    column of ROW_COLUMNS, and each score the command gives (within 0.1%). `headings`: the command's benchmark
    column -> the portal's CSV heading. Returns (differences, scores compared, scores equal)."""
    wrong = []
    for column, heading in ROW_COLUMNS.items():
        want = expected_cell(column, row.get(column))
        if shown(portal.get(heading)) != shown(want):
            wrong.append(f"{heading}: portal {portal.get(heading)!r}, MLCommons {want!r}")
    compared = equal = 0
    for column, heading in headings.items():
        minutes = row.get(column)
        if minutes is None:
            continue
        if ruleset in SECONDS_RULESETS:
            minutes *= 1000
        compared += 1
        cell = portal.get(heading)
        mine = float(cell) if cell not in (None, "") else None
        if mine is not None and abs(mine - minutes) <= 0.001 * minutes:
            equal += 1
        else:
            wrong.append(f"{column}: portal {mine}, MLCommons {minutes:.4f}")
    return wrong, compared, equal
