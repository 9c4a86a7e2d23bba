#!/usr/bin/env python
"""Run the coverage-guided fuzz targets (tests/fuzz/fuzz_*.py, atheris) for a bounded time each.

Each target runs in its own process with libFuzzer's limits, its corpus seeded by the target itself
(small inputs it builds; nothing is copied from the shared rounds). Prints the executions of each
target and any crash: the input that crashed is kept under --artifacts, and the exit status is 1.

    bin/fuzz.py [--seconds 25] [--runs N] [--jobs N] [--corpus DIR] [--artifacts DIR] [target ...]

--jobs targets run at once, one per core by default: each target is one process on one core, so two cores
fuzz two targets in the time of one (`make fuzz` in CI: about 60 s instead of about 110).

--corpus keeps each target's corpus in DIR/<target> between runs (default: a temporary folder, so a
run starts from the seeds). Targets: logs, systems, layout, unpack (default: all).
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FUZZ = REPO / "tests" / "fuzz"
TARGETS = sorted(p.stem.removeprefix("fuzz_") for p in FUZZ.glob("fuzz_*.py"))
DONE = re.compile(r"Done (\d+) runs in (\d+) second")  # libFuzzer's last line
PROGRESS = re.compile(r"^#(\d+)\s", re.M)  # its status lines, for a run cut short by a crash


def run_target(
    name: str, seconds: int, runs: int | None, corpus: Path, artifacts: Path, scratch: Path
) -> dict:
    corpus.mkdir(parents=True, exist_ok=True)
    artifacts.mkdir(parents=True, exist_ok=True)
    before = set(artifacts.iterdir())
    command = [
        sys.executable,
        str(FUZZ / f"fuzz_{name}.py"),
        str(corpus),
        f"-max_total_time={seconds}",
        "-max_len=65536",
        "-timeout=20",
        "-rss_limit_mb=2048",
        "-print_final_stats=1",
        f"-artifact_prefix={artifacts}/{name}-",
    ]
    if runs is not None:
        command.append(f"-runs={runs}")
    started = time.monotonic()
    env = {**os.environ, "FUZZ_SCRATCH": str(scratch / name), "PYTHONHASHSEED": "0"}
    proc = subprocess.run(
        command,
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        errors="replace",
        timeout=seconds + 120,
    )
    output = proc.stdout + proc.stderr
    done = DONE.search(output)
    progress = PROGRESS.findall(output)
    crashes = sorted(set(artifacts.iterdir()) - before)
    return {
        "target": name,
        "rc": proc.returncode,
        "seconds": time.monotonic() - started,
        "executions": int(done.group(1)) if done else int(progress[-1]) if progress else 0,
        "crashes": crashes,
        "output": output,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "targets", nargs="*", metavar="target", help=f"of {', '.join(TARGETS)} (default: all)"
    )
    parser.add_argument("--seconds", type=int, default=25, help="time per target (default 25)")
    parser.add_argument("--runs", type=int, help="stop a target after this many executions")
    parser.add_argument(
        "--jobs", type=int, default=os.cpu_count() or 1, help="targets at once (default: the cores)"
    )
    parser.add_argument("--corpus", type=Path, help="keep corpora here between runs")
    parser.add_argument(
        "--artifacts",
        type=Path,
        default=REPO / "var" / "fuzz-crashes",
        help="where crashing inputs are kept (default var/fuzz-crashes)",
    )
    args = parser.parse_args()
    unknown = set(args.targets) - set(TARGETS)
    if unknown:
        parser.error(
            f"no target {', '.join(sorted(unknown))}; the targets are {', '.join(TARGETS)}"
        )
    failed = 0
    with tempfile.TemporaryDirectory(prefix="fuzz-") as tmp, ThreadPoolExecutor(args.jobs) as pool:

        def run(name: str) -> dict:
            corpus = (args.corpus or Path(tmp) / "corpus") / name
            return run_target(
                name, args.seconds, args.runs, corpus, args.artifacts, Path(tmp) / "scratch"
            )

        for name, result in zip(args.targets or TARGETS, pool.map(run, args.targets or TARGETS)):
            ok = result["rc"] == 0 and not result["crashes"]
            print(
                f"{name:8} {result['executions']:>9,} executions in {result['seconds']:5.1f} s  "
                f"{'ok' if ok else 'CRASH'}",
                flush=True,
            )
            if not ok:
                failed += 1
                output = result["output"]
                crash = output.find(
                    "=== Uncaught Python exception"
                )  # atheris's report, else libFuzzer's end
                print(output[crash : crash + 6000] if crash >= 0 else output[-6000:])
                for path in result["crashes"]:
                    print(f"  crashing input kept: {path}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
