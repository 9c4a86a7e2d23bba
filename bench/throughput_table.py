#!/usr/bin/env python
"""Measure the fastest runs of the published rounds into submissions/checking/rules/throughput.toml.

    bench/throughput_table.py [--unpacked DIR] [--out PATH]

Reads the three shared rounds (../shared/mlperf, or MLPERF_SHARED_DIR): unpacks each tarball into a
temporary folder (or DIR/<round key>, kept for the next run), finds every submitter's systems and results
as ingest does (bundles.detect, systems.fields_of), parses each run log and reads its timeline with the
same code the rules use (rules.clock.read_timeline), and writes two figures per benchmark:

- pace: the fastest pace, the most work (samples or epochs) logged within a timed region per second of
  run_stop - run_start, over every successful run whose clock passes the clock rules: for the whole
  system, and per sample of the run's global_batch_size (a step rate) where the log gives it;
- accelerator_minutes: per accelerator family (leaderboard/catalogue/accelerators.toml), the fewest accelerator-
  minutes of a result: its olympic mean (the round's scoring, before RCP normalisation, which only raises
  a score) in minutes x the system's accelerators.

The rules read the file (rules/plausibility.py); nothing at run time reads the rounds.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tarfile
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from submissions.checking import scoring  # noqa: E402
from submissions.checking.bundles import LayoutError, detect  # noqa: E402
from submissions.checking.logs import parse_file, summarize  # noqa: E402
from submissions.checking.rules import clock, plausibility  # noqa: E402
from submissions.checking.rules.findings import Findings, RunContext  # noqa: E402
from submissions.checking.scoring import tolerated_error_files  # noqa: E402
from submissions.checking.systems import fields_of  # noqa: E402

SHARED = Path(os.environ.get("MLPERF_SHARED_DIR", ROOT.parent / "shared" / "mlperf"))
ROUNDS = {  # round key -> (tarball, the public repository and commit it was cut from: ../shared/mlperf/README.md)
    "training-v0.5": ("training_v0.5_results.tar.xz", "mlcommons/training_results_v0.5 c71f2e7"),
    "training-v0.6": ("training_v0.6_results.tar.xz", "mlcommons/training_results_v0.6 f312518"),
    "training-v5.1": ("training_v5.1_results.tar.xz", "mlcommons/training_results_v5.1 441d65f"),
}


def submitter_roots(tree: Path) -> list[Path]:
    """One folder per submitter: <round>/<Submitter> (v0.6+) or <round>/v0.5.0/<submitter> (v0.5)."""
    tops = [p for p in sorted(tree.iterdir()) if p.is_dir()]
    if len(tops) == 1 and tops[0].name.startswith("v0."):
        return [p for p in sorted(tops[0].iterdir()) if p.is_dir()]
    return tops


def unpacked(key: str, keep: Path | None, scratch: Path) -> Path:
    tarball = SHARED / ROUNDS[key][0]
    dest = (keep or scratch) / key
    if not dest.is_dir():
        dest.mkdir(parents=True)
        with tarfile.open(tarball) as tar:
            tar.extractall(dest, filter="data")
    return dest


def measure(key: str, tree: Path, pace: dict, per_batch: dict, minutes: dict) -> int:
    """Fold one round's runs into pace and per_batch {(benchmark, unit): (per second, source)} and minutes
    {(benchmark, family): (accelerator-minutes, source)}; return the number of runs read."""
    with open(ROOT / "leaderboard" / "catalogue" / "rounds" / f"{key}.toml", "rb") as f:
        round_ = tomllib.load(f)
    by_folder = {
        name.lower(): b for b in round_["benchmarks"] for name in [b["key"], *b.get("aliases", [])]
    }
    keys = frozenset(b["key"] for b in round_["benchmarks"])
    runs_read = 0
    for root in submitter_roots(tree):
        try:
            layout = detect(root)
        except LayoutError:
            continue
        systems = {s.name: fields_of(s.description, s.description_format) for s in layout.systems}
        for entry in layout.results:
            bench = by_folder.get(entry.benchmark.lower())
            if bench is None or not entry.run_files:
                continue
            ctx = RunContext(
                round_["ruleset"],
                bench["key"],
                keys,
                quality_target=bench.get("quality_target"),
                higher_is_better=bench.get("higher_is_better", True),
            )
            times = []
            for run_file in entry.run_files:
                runs_read += 1
                seconds, run_pace, batch = _read_run(root / run_file, ctx)
                times.append(seconds)
                source = f"{key} {root.name}/{run_file}"
                for unit, per_second in run_pace.items():
                    if per_second > pace.get((bench["key"], unit), (0.0,))[0]:
                        pace[bench["key"], unit] = (per_second, source)
                    if (
                        batch
                        and per_second / batch > per_batch.get((bench["key"], unit), (0.0,))[0]
                    ):
                        per_batch[bench["key"], unit] = (
                            per_second / batch,
                            f"{source}, global batch {batch:g}",
                        )
            fields = systems.get(entry.system, {})
            family = plausibility.family_of(fields.get("accelerator_model", ""))
            count = fields.get("accelerator_count")
            score = _score(bench, times)
            if family is None or not count or score is None:
                continue
            used = score / 60 * count
            if used < minutes.get((bench["key"], family), (math.inf,))[0]:
                minutes[bench["key"], family] = (
                    used,
                    f"{key} {root.name}/{entry.path}, {score / 60:.2f} min on "
                    f"{count} x {fields['accelerator_model']}",
                )
    return runs_read


def _read_run(path: Path, ctx: RunContext) -> tuple[float | None, dict[str, float], float | None]:
    """(time to train, or None when the run does not count; {unit: work per second}; global batch size)."""
    log = parse_file(path)
    summary = summarize(
        log, quality_target=ctx.quality_target, higher_is_better=ctx.higher_is_better
    )
    timeline = clock.read_timeline(log, summary, higher_is_better=ctx.higher_is_better)
    found = Findings()
    clock.check_clock(
        timeline, summary, found
    )  # no pace: this table is what the pace is checked against
    if not summary.success or found.has_errors() or not summary.time_to_train_s:
        return None, {}, None
    seconds = summary.time_to_train_s
    batch = clock._number(summary.hyperparameters.get("global_batch_size"))
    return (
        seconds,
        {unit: amount / seconds for unit, (amount, _) in timeline.progress.items() if amount > 0},
        batch if batch is not None and batch > 0 else None,
    )


def _score(bench: dict, times: list[float | None]) -> float | None:
    drop = tolerated_error_files(bench["key"])
    if bench.get("scoring") == "first-converging":
        return scoring.first_converging(
            times, bench.get("counted_runs") or bench["required_runs"], drop
        ).seconds
    return scoring.olympic(times, bench["required_runs"], drop).seconds


def write_table(
    path: Path, pace: dict, per_batch: dict, minutes: dict, runs: dict[str, int]
) -> None:
    lines = [
        "# The fastest runs of the published MLPerf Training rounds, for the plausibility checks",
        "# (submissions/checking/rules/plausibility.py). Written by bench/throughput_table.py: do not edit, rerun it.",
        "# Source: the shared rounds (../shared/mlperf), cut from the public repositories named:",
        *(f"#   {ROUNDS[k][0]} ({ROUNDS[k][1]}): {n} runs" for k, n in runs.items()),
        "#",
        "# [pace.<benchmark>]: per unit (samples, epochs), the fastest pace: the most work logged within a timed",
        "# region (samples_count or epoch_num of its eval/epoch/block records) per second of run_stop - run_start,",
        "# over every successful run: for the whole system (per_second), and per sample of the run's",
        "# global_batch_size (per_batch), where the log gives it.",
        "# [accelerator_minutes.<benchmark>]: per accelerator family, the fewest accelerator-minutes of a result:",
        "# its olympic mean (before RCP normalisation, which only raises a score) x the system's accelerators.",
    ]
    for bench in sorted({b for b, _ in pace}):
        lines += ["", f"[pace.{bench}]"]
        for (b, unit), (per_second, source) in sorted(pace.items()):
            if b == bench:
                batch = per_batch.get((b, unit))
                extra = (
                    ""
                    if batch is None
                    else f", per_batch = {batch[0]:.6g}, per_batch_source = {json.dumps(batch[1])}"
                )
                lines.append(
                    f"{unit} = {{ per_second = {per_second:.6g}, source = {json.dumps(source)}{extra} }}"
                )
    for bench in sorted({b for b, _ in minutes}):
        lines += ["", f"[accelerator_minutes.{bench}]"]
        for (b, family), (used, source) in sorted(minutes.items()):
            if b == bench:
                lines.append(
                    f"{json.dumps(family)} = {{ minutes = {used:.6g}, source = {json.dumps(source)} }}"
                )
    path.write_text("\n".join(lines) + "\n")
    tomllib.loads(path.read_text())  # it must read back


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    parser.add_argument(
        "--unpacked",
        type=Path,
        help="keep the unpacked rounds here (DIR/<round key>) and reuse them",
    )
    parser.add_argument("--out", type=Path, default=plausibility.THROUGHPUT_FILE)
    args = parser.parse_args()
    missing = [name for name, _ in ROUNDS.values() if not (SHARED / name).is_file()]
    if missing:
        print(f"skipped: {', '.join(missing)} not under {SHARED} (set MLPERF_SHARED_DIR)")
        return 1
    pace, per_batch, minutes, runs = {}, {}, {}, {}
    with tempfile.TemporaryDirectory() as scratch:
        for key in ROUNDS:
            runs[key] = measure(
                key, unpacked(key, args.unpacked, Path(scratch)), pace, per_batch, minutes
            )
    write_table(args.out, pace, per_batch, minutes, runs)
    print(
        f"{args.out}: pace for {len({b for b, _ in pace})} benchmarks, accelerator-minutes for "
        f"{len(minutes)} benchmark x family pairs, from {sum(runs.values())} runs"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
