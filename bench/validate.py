#!/usr/bin/env python
"""Validate the whole v5.1 round on 2 worker processes and compare with mlperf-logging run sequentially.

Baseline: mlperf-logging's compliance checker over every result_*.txt of the round, one file
after the other, as its command line does (bench/baseline.py), in this process.
Portal: `ingest` of the round's tarball (split per submitter, unpack, parse, check every run
with the cached checker, result-level rules, RCP, scoring) on PostgreSQL and Redis with one
`celery worker` of 2 prefork processes, timed until every submission is final.
Verdicts: each file the baseline finds invalid must be a run with an error of mlperf-logging's compliance
rules in the portal (or one scoring tolerates, made a warning: a failed run a result may drop), and no
other (the portal's own rules are not compared).
Target (issue 27): the portal at least 8x faster than the baseline, with identical verdicts and no file
left unchecked.

With --against PATH (another checkout, e.g. `git worktree add --detach /tmp/before HEAD~1`; repeatable) the
portal's side runs again from each of them (its worker and ingest command started there, on a fresh database)
after this checkout's, against the same baseline: a speed device measured with and without it in one run. Each
side prints its wall time and the CPU seconds of its worker tree and ingest command (user + system, counted
when they end), which move less than wall time with the machine's load.

    bench/validate.py [--against PATH ...]
"""

import argparse
import os
import resource
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
SHARED = Path(os.environ.get("MLPERF_SHARED_DIR", ROOT.parent / "shared" / "mlperf"))
TARBALL = SHARED / "training_v5.1_results.tar.xz"
PG = os.environ.get("BENCH_PG", "postgres://postgres@127.0.0.1:5432")
REDIS = os.environ.get("BENCH_REDIS", "redis://127.0.0.1:6379/6")  # make test uses 8-15
DB = os.environ.get("BENCH_VALIDATE_DB", "portal_bench_validate")


def sh(*args, env=None, cwd=ROOT, **kw):
    return subprocess.run(args, cwd=cwd, env=env, check=True, **kw)


VERDICTS = """
SELECT r.path,
       EXISTS (SELECT 1 FROM submissions_finding f
               WHERE f.run_id = r.id AND f.rule = 'mlperf.compliance'
               AND (f.severity = 'error' OR f.hint LIKE '% Tolerated: the result still scores%'))
FROM leaderboard_run r
"""


def baseline(tmp: Path) -> tuple[float, int, int, dict]:
    from baseline import run_mlperf_checker_sequentially

    with tarfile.open(TARBALL) as tar:
        tar.extractall(tmp, filter="data")
    files = sorted(tmp.glob("*/results/*/*/result_*.txt"))
    size = sum(f.stat().st_size for f in files)
    start = time.perf_counter()
    verdicts = {}
    checked = run_mlperf_checker_sequentially(
        [(f, f.parent.name) for f in files], "5.1.0", verdicts
    )
    wall = time.perf_counter() - start
    return wall, checked, size, {str(f.relative_to(tmp)): valid for f, valid in verdicts.items()}


def fresh_database() -> None:
    import redis

    redis.Redis.from_url(REDIS).flushdb()
    sh("psql", f"{PG}/postgres", "-qc", f"DROP DATABASE IF EXISTS {DB}", stdout=subprocess.DEVNULL)
    sh("psql", f"{PG}/postgres", "-qc", f"CREATE DATABASE {DB}", stdout=subprocess.DEVNULL)


def children_cpu() -> float:
    """CPU seconds (user + system) of the child processes ended and waited for so far, their own children
    included once they waited for them (celery's prefork pool does)."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def portal(checkout: Path, tmp: Path) -> dict:
    """The portal's side, its code run from `checkout`: wall seconds, CPU seconds, runs checked, verdicts."""
    fresh_database()
    env = {
        **os.environ,
        "DATABASE_URL": f"{PG}/{DB}",
        "CELERY_BROKER_URL": REDIS,
        "MEDIA_ROOT": str(tmp / "media"),
        "CELERY_TASK_ALWAYS_EAGER": "0",
    }
    manage = [sys.executable, "manage.py"]
    sh(*manage, "migrate", "-v0", env=env, cwd=checkout)
    sh(*manage, "load_rounds", env=env, stdout=subprocess.DEVNULL, cwd=checkout)
    cpu_before = children_cpu()
    worker = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "portal",
            "worker",
            "-Q",
            "ingest,checks,celery",
            "-c",
            "2",
            "--pool=prefork",
            "--loglevel=WARNING",
        ],
        cwd=checkout,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        time.sleep(3)  # the worker's start-up is not part of validation
        start = time.perf_counter()
        command = [*manage, "ingest", str(TARBALL), "--round", "training-v5.1", "--wait"]
        try:
            sh(*command, "--timeout", "1800", env=env, stdout=subprocess.DEVNULL, cwd=checkout)
        except subprocess.CalledProcessError:
            pass  # --wait exits non-zero when a submission is invalid
        wall = time.perf_counter() - start
    finally:
        os.killpg(worker.pid, 15)
        worker.wait()
    cpu = children_cpu() - cpu_before
    checked = subprocess.run(
        ["psql", f"{PG}/{DB}", "-tAc", "SELECT count(*) FROM submissions_runcheck"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    rows = subprocess.run(
        ["psql", f"{PG}/{DB}", "-tAF", "\t", "-c", VERDICTS],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    valid = {key: error == "f" for key, error in (row.split("\t") for row in rows)}
    return {"wall": wall, "cpu": cpu, "checked": int(checked), "valid": valid}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--against",
        action="append",
        default=[],
        type=Path,
        metavar="PATH",
        help="another checkout whose portal side runs too, after this one's (repeatable)",
    )
    args = parser.parse_args()
    if not TARBALL.is_file():
        print(f"skipped: {TARBALL} is not here (set MLPERF_SHARED_DIR)")
        return 0
    try:
        fresh_database()
    except Exception as error:  # noqa: BLE001 - say why and stop
        print(f"skipped: needs PostgreSQL at {PG} and Redis at {REDIS} ({error})")
        return 0
    sides = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        cpu_before = time.process_time()
        base_wall, base_files, size, base_verdicts = baseline(tmp / "round")
        base_cpu = time.process_time() - cpu_before
        for n, checkout in enumerate([ROOT, *args.against]):
            sides[checkout] = portal(checkout.resolve(), tmp / f"portal-{n}")
    mb = size / 1e6
    print(
        f"v5.1 round: {base_files} result files, {mb:.1f} MB of logs; load average {os.getloadavg()}"
    )
    print(
        f"baseline (mlperf-logging, sequential): {base_wall:7.2f} s  {mb / base_wall:6.1f} MB/s  "
        f"CPU {base_cpu:7.2f} s  files {base_files}"
    )
    failed = False
    for checkout, side in sides.items():
        differ = sorted(
            key
            for key in base_verdicts.keys() | side["valid"].keys()
            if base_verdicts.get(key) != side["valid"].get(key)
        )
        failed = failed or bool(differ)
        label = "this checkout" if checkout == ROOT else str(checkout)
        print(
            f"portal ({label}; 2 worker processes, end to end): {side['wall']:7.2f} s  "
            f"{mb / side['wall']:6.1f} MB/s  CPU {side['cpu']:7.2f} s  runs checked {side['checked']}"
        )
        print(
            f"  speed-up over the baseline: {base_wall / side['wall']:.2f}x wall (target >= 8x), "
            f"{base_cpu / side['cpu']:.2f}x CPU; unchecked files: {base_files - side['checked']}"
        )
        print(
            f"  verdicts: {sum(not v for v in base_verdicts.values())} files invalid by the baseline, "
            f"{sum(not v for v in side['valid'].values())} runs with a compliance error in the portal; "
            f"{len(differ)} differ" + (f", the first: {differ[:5]}" if differ else "")
        )
    return 1 if failed else 0


if __name__ == "__main__":
    import django

    django.setup()
    sys.exit(main())
