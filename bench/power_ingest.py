#!/usr/bin/env python
"""What reading power logs costs: v4.0's power bundles ingested with and without their power/ folders.

The two power submitters of the shared v4.0 round (smc-ac-power, smc-dc-power: 24 power results, about
1,400 node and switch logs per folder) are unpacked once, and each is written as two plain tar bundles:
as published, and with every `power/` folder left out. Each bundle is ingested with `manage.py ingest
<bundle> --round training-v4.0` in one process with tasks in-process (CELERY_TASK_ALWAYS_EAGER=1) on a
fresh SQLite database: the work one worker does, with no queue in between. The pairs run alternately,
`--repeat` times (default 3), so that the machine's drift hits both alike; the output gives each wall
and CPU time and the median ratio with/without. Target (issue 29): at most 1.2.

The bundles with power/ folders are 3.7 times the bytes of those without (smc-ac-power: 133 MB against
36 MB), which the upload, the split and the store must read and write whatever is in them; so the bench
also times, in this process, what reading the power logs itself costs: every power log of the folders
read and checked (submissions/checking/rules/power.py), CPU seconds, against the ingest without them.

    bench/power_ingest.py [--repeat N]
"""

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("MLPERF_SHARED_DIR", ROOT.parent / "shared" / "mlperf"))
TARBALL = SHARED / "training_v4.0_results.tar.xz"
FOLDERS = ("smc-ac-power", "smc-dc-power")
MANAGE = [sys.executable, "manage.py"]
TARGET = 1.2


def bundles(tmp: Path) -> tuple[Path, dict[str, dict[str, Path]]]:
    """{folder: {"with": tar, "without": tar}}, plain tars (read in place, as ingest reads a round's parts)."""
    src = tmp / "src"
    src.mkdir()
    subprocess.run(
        ["tar", "-xJf", str(TARBALL), "-C", str(src), *(f"./{f}" for f in FOLDERS)], check=True
    )
    out = {}
    for folder in FOLDERS:
        out[folder] = {}
        for kind in ("with", "without"):
            path = tmp / f"{folder}-{kind}-power.tar"
            with tarfile.open(path, "w") as tar:
                tar.add(src / folder, arcname=folder, filter=None if kind == "with" else no_power)
            out[folder][kind] = path
    return src, out


def no_power(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
    """Leave out <benchmark>/power/ and what it holds."""
    return None if "power" in info.name.split("/")[4:5] else info


def fresh_database(tmp: Path, name: str) -> dict:
    work = tmp / name
    work.mkdir()
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{work}/bench.sqlite3",
        "MEDIA_ROOT": str(work / "media"),
        "CELERY_TASK_ALWAYS_EAGER": "1",
        "DJANGO_SETTINGS_MODULE": "portal.settings",
        "DEBUG": "0",
        "SECRET_KEY": "bench-only",
    }
    for step in (["migrate", "-v0"], ["load_rounds"]):
        subprocess.run(MANAGE + step, env=env, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    return env


def ingest(env: dict, bundle: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one ingest, tasks in-process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    subprocess.run(
        MANAGE + ["ingest", str(bundle), "--round", "training-v4.0"],
        env=env,
        cwd=ROOT,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def power_cpu(src: Path) -> float:
    """CPU seconds to read and check every power log of the folders, run by run (what check_run adds)."""
    sys.path.insert(0, str(ROOT))
    from submissions.checking.logs import parse_file
    from submissions.checking.logs.power import kind_of, read_power_log
    from submissions.checking.logs.summary import summarize
    from submissions.checking.rules.power import check_run_power

    runs = []
    for folder in FOLDERS:
        for log in sorted((src / folder).glob("results/*/*/result_*.txt")):
            summary = summarize(parse_file(log))
            files = sorted((log.parent / "power" / log.stem).glob("*.txt"))
            runs.append((log, summary, [(f, f.read_bytes()) for f in files]))
    started = time.process_time()
    for log, summary, files in runs:
        logs = [read_power_log(data, str(f), kind_of(f.name)) for f, data in files]
        check_run_power(str(log), logs, summary.run_start, summary.run_stop)
    return time.process_time() - started


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="power-ingest-"))
    try:
        src, made = bundles(tmp)
        reading = min(power_cpu(src) for _ in range(3))
        ratios = {"wall": [], "cpu": [], "without_cpu": []}
        for i in range(args.repeat):
            totals = {}
            for kind in ("with", "without") if i % 2 == 0 else ("without", "with"):
                wall = cpu = 0.0
                for folder in FOLDERS:
                    env = fresh_database(tmp, f"{i}-{kind}-{folder}")
                    w, c = ingest(env, made[folder][kind])
                    wall, cpu = wall + w, cpu + c
                totals[kind] = (wall, cpu)
                print(
                    f"run {i + 1}: {kind:7} power/: wall {wall:6.1f} s, CPU {cpu:6.1f} s",
                    flush=True,
                )
            ratios["wall"].append(totals["with"][0] / totals["without"][0])
            ratios["cpu"].append(totals["with"][1] / totals["without"][1])
            ratios["without_cpu"].append(totals["without"][1])
        wall, cpu = statistics.median(ratios["wall"]), statistics.median(ratios["cpu"])
        print(
            f"with/without power logs, median of {args.repeat}: wall × {wall:.3f}, CPU × {cpu:.3f} "
            f"(target ≤ {TARGET})"
        )
        without = statistics.median(ratios["without_cpu"])
        print(
            f"reading and checking the power logs alone: {reading:.2f} s CPU, "
            f"{reading / without:.1%} of the ingest CPU without them ({without:.1f} s)"
        )
        sys.exit(0 if wall <= TARGET else 1)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
