#!/usr/bin/env python
"""mlperf-logging's side of the whole-round comparisons (tests/summarizer.py's submitter_side), for some
submitters of a shared round, with and without each_log_read_once, in one run.

Without: the summarizer's command as a process of its own (`python -m mlperf_logging.result_summarizer`),
then package_checker, then log_verdict running the checker on each log again: each tool reads every log
itself. With: submitter_side as the tests run it (the command's `main` in the process, each log parsed and
judged once). Each side runs per submitter in a fresh process on a fresh copy of the submitter's folders (the
tools rewrite scaling.json), one after the other; the CPU seconds (user + system of the process and what it
started) and wall time of each are printed, with the ratio, and the two sides' outputs compared: the scores,
the summarizer's rows (its JSON table), each log's verdict and package_checker's verdict and error lines.
Exits 1 when they differ.

    bench/mlcommons_side.py [--round training_v4.0_results.tar.xz --ruleset 4.0.0] [SUBMITTER ...]

Default: v4.0's Fujitsu, Lenovo, GigaComputing, Red_Hat and tinycorp (about 42 MB of logs).
"""

import argparse
import json
import multiprocessing
import os
import resource
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SHARED = Path(os.environ.get("MLPERF_SHARED_DIR", ROOT.parent / "shared" / "mlperf"))
DEFAULT = ["Fujitsu", "Lenovo", "GigaComputing", "Red_Hat", "tinycorp"]


def each_tool_alone(root: Path, submitter: str, ruleset: str, out: Path):
    """The tools as they come: the command in a process of its own, package_checker, the checker per log."""
    from tests import summarizer

    subprocess.run(
        [sys.executable, "-m", "mlperf_logging.result_summarizer", submitter, "training", ruleset]
        + ["--csv", str(out / f"{submitter}.csv")],
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    # The command's table is read back as run_command reads it; nothing in this process has run it.
    scores = summarizer.expected(root, submitter, ruleset, out, command_ran=True)
    package = summarizer.package_verdict(root / submitter, ruleset)
    logs = {
        str(log.relative_to(root)): summarizer.log_verdict(log, ruleset)
        for s, *_, folder in summarizer.result_folders(root)
        if s == submitter
        for log in sorted(folder.glob("result_*.txt"))
    }
    return summarizer.Round(scores, logs, {submitter: package})


def read_once(root: Path, submitter: str, ruleset: str, out: Path):
    from tests import summarizer

    return summarizer.submitter_side(root, submitter, ruleset, out)


def _child(side, root, submitter, ruleset, out, pipe):
    import logging
    import warnings

    warnings.simplefilter("ignore")
    logging.disable(logging.CRITICAL)
    pipe.send(side(root, submitter, ruleset, out))


def measure(side, pristine: Path, submitter: str, ruleset: str, work: Path):
    """(Round, the submitter's table, CPU s, wall s) of one side on a fresh copy, in a fresh process."""
    root, out = work / "round", work / "out"
    shutil.copytree(pristine / submitter, root / submitter)
    out.mkdir(parents=True)
    context = multiprocessing.get_context("spawn")
    receive, send = context.Pipe(duplex=False)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    process = context.Process(target=_child, args=(side, root, submitter, ruleset, out, send))
    process.start()
    result = receive.recv()
    process.join()
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    table = out / f"{submitter}.json"
    rows = json.loads(table.read_text()) if table.is_file() else None
    return result, rows, cpu, wall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("submitters", nargs="*", default=DEFAULT)
    parser.add_argument("--round", default="training_v4.0_results.tar.xz")
    parser.add_argument("--ruleset", default="4.0.0")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mlcommons-side-") as tmp:
        pristine = Path(tmp) / "pristine"
        with tarfile.open(SHARED / args.round) as tar:
            wanted = [
                m
                for m in tar.getmembers()
                if Path(m.name).parts[:1] in [(s,) for s in args.submitters]
            ]
            tar.extractall(pristine, members=wanted, filter="data")
        totals = {"alone": [0.0, 0.0], "once": [0.0, 0.0]}
        differ = []
        for submitter in args.submitters:
            megabytes = (
                sum(f.stat().st_size for f in (pristine / submitter).rglob("result_*.txt")) / 1e6
            )
            sides = {}
            for name, side in (("alone", each_tool_alone), ("once", read_once)):
                sides[name] = measure(
                    side, pristine, submitter, args.ruleset, Path(tmp) / name / submitter
                )
                totals[name][0] += sides[name][2]
                totals[name][1] += sides[name][3]
            (a, rows_a, cpu_a, wall_a), (b, rows_b, cpu_b, wall_b) = sides["alone"], sides["once"]
            same = a == b and rows_a == rows_b
            if not same:
                differ.append(submitter)
            print(
                f"{submitter:16} {megabytes:6.1f} MB of logs, {len(a.logs):4} logs: "
                f"tools alone {cpu_a:6.1f} s CPU ({wall_a:5.1f} s wall), read once {cpu_b:6.1f} s CPU "
                f"({wall_b:5.1f} s wall): {cpu_a / cpu_b:4.2f}x less CPU; outputs "
                f"{'identical' if same else 'DIFFER'}",
                flush=True,
            )
        (cpu_a, wall_a), (cpu_b, wall_b) = totals["alone"], totals["once"]
        print(
            f"all: tools alone {cpu_a:.1f} s CPU ({wall_a:.1f} s wall), read once {cpu_b:.1f} s CPU "
            f"({wall_b:.1f} s wall): {cpu_a / cpu_b:.2f}x less CPU, {wall_a / wall_b:.2f}x less wall; "
            f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
        )
        if differ:
            print(f"outputs differ for: {', '.join(differ)}")
            return 1
        print("every score, row, log verdict and package verdict identical")
        return 0


if __name__ == "__main__":
    sys.exit(main())
