"""Survey unpacked submitter folders with the round's rules and count the findings by rule (no Django).

    python bench/survey.py leaderboard/catalogue/rounds/training-v5.1.toml /path/to/round/* [--jobs 8]

Each folder is one submitter's tree (as the pipeline's layout detection reads it). Every run log
goes through check_run (in worker processes, as Celery prefork would run them) and every result
through check_result. Prints how many files and results have errors, by rule, and the time per file.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import tomllib
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(
    0, str(Path(__file__).resolve().parents[1])
)  # the repository, when run as bench/survey.py
from submissions.checking.bundles import LayoutError, detect  # noqa: E402
from submissions.checking.rules.findings import ResultContext, RunContext, RunFacts, SystemFacts  # noqa: E402
from submissions.checking.rules.result import check_result  # noqa: E402
from submissions.checking.rules.run import check_run  # noqa: E402
from submissions.checking.rules.systems import check_system  # noqa: E402
from submissions.checking.systems import fields_of  # noqa: E402


@dataclass
class RoundRules:
    ruleset: str
    benchmarks: dict  # folder name (lower case, key or alias) -> benchmark table
    keys: frozenset
    require_init_stop_before_run_start: bool


def read_round(path: str | Path) -> RoundRules:
    with open(path, "rb") as f:
        data = tomllib.load(f)
    by_folder = {}
    for bench in data["benchmarks"]:
        for name in [bench["key"], *bench.get("aliases", [])]:
            by_folder[name.lower()] = bench
    return RoundRules(
        data["ruleset"],
        by_folder,
        frozenset(b["key"] for b in data["benchmarks"]),
        bool(data.get("require_init_stop_before_run_start", False)),
    )


def run_context(rules: RoundRules, bench: dict, division: str) -> RunContext:
    return RunContext(
        ruleset=rules.ruleset,
        benchmark=bench["key"],
        benchmark_keys=rules.keys,
        division=division,
        quality_target=bench.get("quality_target"),
        higher_is_better=bench.get("higher_is_better", True),
        require_init_stop_before_run_start=rules.require_init_stop_before_run_start,
    )


def _check_one(task):
    path, rel, ctx = task
    started = time.perf_counter()
    outcome = check_run(Path(path), rel, ctx)
    s = outcome.summary
    facts = RunFacts(
        rel_path=rel,
        success=s.success,
        seed=s.seed,
        hyperparameters=s.hyperparameters,
        submission=s.submission,
        first_line=s.first_line,
    )
    return rel, outcome.findings, facts, time.perf_counter() - started


def survey(
    round_file: str | Path,
    folders: list[str | Path],
    jobs: int = os.cpu_count() or 1,
    out=sys.stdout,
):
    rules = read_round(round_file)
    tasks, results = [], []  # results: (ResultContext, [rel], SystemFacts)
    for folder in folders:
        folder = Path(folder)
        try:
            layout = detect(folder)
        except LayoutError as exc:
            print(f"{folder}: {exc}", file=out)
            continue
        described = {s.name: s for s in layout.systems}
        for entry in layout.results:
            bench = rules.benchmarks.get(entry.benchmark.lower())
            if bench is None:
                continue
            desc = described.get(entry.system)
            fmt = desc.description_format if desc else "system.json"
            fields = fields_of(desc.description if desc else {}, fmt)
            system = SystemFacts(
                description=desc.description if desc else {},
                description_format=fmt,
                description_path=f"{folder.name}/{desc.description_path}"
                if desc and desc.description_path
                else "",
                division=fields["division"],
                category=fields["category"],
            )
            ctx = run_context(rules, bench, fields["division"])
            rels = []
            for run_file in entry.run_files:
                rel = f"{folder.name}/{run_file}"
                tasks.append((str(folder / run_file), rel, ctx))
                rels.append(rel)
            results.append(
                (
                    ResultContext(
                        ruleset=rules.ruleset,
                        benchmark=bench["key"],
                        required_runs=bench["required_runs"],
                        result_path=f"{folder.name}/{entry.path}",
                        result_dir=folder / entry.path,
                        division=fields["division"],
                        category=fields["category"],
                    ),
                    rels,
                    system,
                )
            )

    started = time.perf_counter()
    facts, run_findings, seconds = {}, {}, []
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for rel, findings, fact, took in pool.map(_check_one, tasks, chunksize=4):
            facts[rel], run_findings[rel] = fact, findings
            seconds.append(took)
    run_wall = time.perf_counter() - started

    started = time.perf_counter()
    result_findings, systems_seen = {}, set()
    for ctx, rels, system in results:
        findings = check_result(ctx, [facts[r] for r in rels], system, include_system=False)
        if system.description_path not in systems_seen:
            systems_seen.add(system.description_path)
            findings += check_system(system, rules.ruleset)
        result_findings[ctx.result_path] = findings
    result_wall = time.perf_counter() - started

    _print_counts(out, "run files", run_findings)
    _print_counts(out, "results", result_findings)
    if seconds:
        print(
            f"check_run: {len(seconds)} files in {run_wall:.1f} s wall with {jobs} processes; "
            f"{1000 * sum(seconds) / len(seconds):.1f} ms per file (mean), "
            f"{1000 * max(seconds):.0f} ms the slowest",
            file=out,
        )
    print(f"check_result: {len(results)} results in {result_wall:.1f} s", file=out)
    return run_findings, result_findings


def _print_counts(out, what: str, by_item: dict) -> None:
    with_errors = sum(any(f.severity == "error" for f in fs) for fs in by_item.values())
    print(f"{what}: {len(by_item)}, with errors: {with_errors}", file=out)
    for severity in ("error", "warning", "info"):
        counts = Counter()
        for fs in by_item.values():
            counts.update({f.rule for f in fs if f.severity == severity})
        if counts:
            print(
                f"  {severity}s (items with the rule): "
                + ", ".join(f"{r} {n}" for r, n in counts.most_common()),
                file=out,
            )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="bench/survey.py", description=__doc__.split("\n")[0])
    parser.add_argument("round_file", help="leaderboard/catalogue/rounds/<round>.toml")
    parser.add_argument("folders", nargs="+", help="unpacked submitter folders")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args(argv)
    survey(args.round_file, args.folders, args.jobs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
