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

The floor, in the same run: the CPU seconds to read each bundle's bytes once and hash them (what storing
any bundle costs), with and without power/. Its ratio says how the bytes grow; the floor's extra seconds
added to the ingest without power/ say what the ingest ratio would be if power/ cost nothing but them.
With --gzip each bundle is also ingested as a .tar.gz (`tar -czf`, as the shared README packs one), whose
floor decompresses the bytes too.

Where the excess goes, smc-ac-power (CPU seconds in the ingest's process, min of 4, after a plain tar's
headers were listed once): storing the bundle (read, hash, write, sync) 0.13 with power/ against 0.04;
listing its 1,991 tar headers against 184 (1,619 of its members carry a long name in a header of its
own, as in the published archive) 0.10 against 0.01; reading and checking its 1,505 power logs 0.46
(0.37 on their own, above); their runs' rows (power files, energy, plot) 0.09; 2.70 s in all without
power/, 3.49 with: ×1.29. The bytes, one listing and the power logs alone make ×1.24.

    bench/power_ingest.py [--repeat N] [--gzip]
"""

import argparse
import gzip
import hashlib
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


def floor_cpu(bundle: Path) -> float:
    """CPU seconds to read a bundle's bytes once and hash them, decompressing a .tar.gz on the way: the
    least any ingest does with them (storing a bundle hashes it; reading its files reads them)."""
    started = time.process_time()
    digest = hashlib.sha256()
    with open(bundle, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    if bundle.name.endswith(".gz"):
        with gzip.open(bundle, "rb") as f:
            while f.read(1 << 20):
                pass
    return time.process_time() - started


def gzipped(plain: Path) -> Path:
    """The bundle as `tar -czf` packs it (gzip level 6), beside the plain tar."""
    out = plain.with_name(plain.name + ".gz")
    with open(plain, "rb") as f, gzip.open(out, "wb", compresslevel=6) as g:
        shutil.copyfileobj(f, g, 1 << 20)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--gzip", action="store_true", help="also ingest each bundle as a .tar.gz, and its floor"
    )
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="power-ingest-"))
    try:
        src, made = bundles(tmp)
        forms = ["tar", "tar.gz"] if args.gzip else ["tar"]
        if args.gzip:
            for folder in FOLDERS:
                for kind in ("with", "without"):
                    made[folder][kind, "tar.gz"] = gzipped(made[folder][kind])
        reading = min(power_cpu(src) for _ in range(3))
        ratios: dict[str, list[float]] = {}
        for i in range(args.repeat):
            totals = {}
            for kind in ("with", "without") if i % 2 == 0 else ("without", "with"):
                for form in forms:
                    wall = cpu = floor = 0.0
                    for folder in FOLDERS:
                        bundle = made[folder][kind] if form == "tar" else made[folder][kind, form]
                        env = fresh_database(tmp, f"{i}-{kind}-{folder}-{form}")
                        w, c = ingest(env, bundle)
                        wall, cpu, floor = wall + w, cpu + c, floor + floor_cpu(bundle)
                    totals[kind, form] = (wall, cpu, floor)
                    print(
                        f"run {i + 1}: {kind:7} power/, {form:6}: wall {wall:6.1f} s, CPU {cpu:6.1f} s;"
                        f" floor {floor:5.2f} s CPU",
                        flush=True,
                    )
            for form in forms:
                (w1, c1, f1), (w0, c0, f0) = totals["with", form], totals["without", form]
                ratios.setdefault(f"{form} wall", []).append(w1 / w0)
                ratios.setdefault(f"{form} cpu", []).append(c1 / c0)
                ratios.setdefault(f"{form} floor", []).append(f1 / f0)
                # The ratio if power/ added nothing but the floor's work on its bytes.
                ratios.setdefault(f"{form} floor added", []).append((c0 + f1 - f0) / c0)
                ratios.setdefault(f"{form} without cpu", []).append(c0)
        median = {name: statistics.median(values) for name, values in ratios.items()}
        for form in forms:
            print(
                f"{form}: with/without power logs, median of {args.repeat}: wall × "
                f"{median[f'{form} wall']:.3f}, CPU × {median[f'{form} cpu']:.3f} (target ≤ {TARGET}); "
                f"floor (read and hash{', gunzip' if form != 'tar' else ''}) × "
                f"{median[f'{form} floor']:.2f}, its seconds added to the ingest without power/ × "
                f"{median[f'{form} floor added']:.3f}"
            )
        without = median["tar without cpu"]
        print(
            f"reading and checking the power logs alone: {reading:.2f} s CPU, "
            f"{reading / without:.1%} of the ingest CPU without them ({without:.1f} s)"
        )
        sys.exit(0 if median["tar wall"] <= TARGET else 1)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
