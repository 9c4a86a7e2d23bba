#!/usr/bin/env python
"""Validate the whole v5.1 round on 2 worker processes and compare with mlperf-logging run sequentially.

Baseline: mlperf-logging's compliance checker over every result_*.txt of the round, one file
after the other, as its command line does (bench/baseline.py), in this process.
Portal: `ingest` of the round's tarball (split per submitter, unpack, parse, check every run
with the cached checker, result-level rules, RCP, scoring) on PostgreSQL and Redis with one
`celery worker` of 2 prefork processes, timed until every submission is final.
Target: the portal at least 1.8x faster than the baseline, and no file left unchecked.
"""

import os
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
REDIS = os.environ.get("BENCH_REDIS", "redis://127.0.0.1:6379/14")
DB = "portal_bench_validate"


def sh(*args, env=None, **kw):
    return subprocess.run(args, cwd=ROOT, env=env, check=True, **kw)


def baseline(tmp: Path) -> tuple[float, int, int]:
    from baseline import run_mlperf_checker_sequentially

    with tarfile.open(TARBALL) as tar:
        tar.extractall(tmp, filter="data")
    files = sorted(tmp.glob("*/results/*/*/result_*.txt"))
    size = sum(f.stat().st_size for f in files)
    start = time.perf_counter()
    checked = run_mlperf_checker_sequentially([(f, f.parent.name) for f in files], "5.1.0")
    return time.perf_counter() - start, checked, size


def main() -> int:
    if not TARBALL.is_file():
        print(f"skipped: {TARBALL} is not here (set MLPERF_SHARED_DIR)")
        return 0
    import redis

    try:
        redis.Redis.from_url(REDIS).flushdb()
        sh(
            "psql",
            f"{PG}/postgres",
            "-qc",
            f"DROP DATABASE IF EXISTS {DB}",
            stdout=subprocess.DEVNULL,
        )
        sh("psql", f"{PG}/postgres", "-qc", f"CREATE DATABASE {DB}", stdout=subprocess.DEVNULL)
    except Exception as error:  # noqa: BLE001 - say why and stop
        print(f"skipped: needs PostgreSQL at {PG} and Redis at {REDIS} ({error})")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        env = {
            **os.environ,
            "DATABASE_URL": f"{PG}/{DB}",
            "CELERY_BROKER_URL": REDIS,
            "MEDIA_ROOT": str(tmp / "media"),
            "CELERY_TASK_ALWAYS_EAGER": "0",
        }
        manage = [sys.executable, "manage.py"]
        sh(*manage, "migrate", "-v0", env=env)
        sh(*manage, "load_rounds", env=env, stdout=subprocess.DEVNULL)

        base_wall, base_files, size = baseline(tmp / "round")
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
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            time.sleep(3)  # the worker's start-up is not part of validation
            start = time.perf_counter()
            sh(
                *manage,
                "ingest",
                str(TARBALL),
                "--round",
                "training-v5.1",
                "--wait",
                "--timeout",
                "1800",
                env=env,
                stdout=subprocess.DEVNULL,
            )
            wall = time.perf_counter() - start
        except subprocess.CalledProcessError:
            wall = time.perf_counter() - start  # --wait exits non-zero when a submission is invalid
        finally:
            os.killpg(worker.pid, 15)
            worker.wait()
        checked = subprocess.run(
            ["psql", f"{PG}/{DB}", "-tAc", "SELECT count(*) FROM submissions_runcheck"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    mb = size / 1e6
    print(f"v5.1 round: {base_files} result files, {mb:.1f} MB of logs")
    print(
        f"baseline (mlperf-logging, sequential): {base_wall:7.2f} s  {mb / base_wall:6.1f} MB/s  files {base_files}"
    )
    print(
        f"portal (2 worker processes, end to end): {wall:7.2f} s  {mb / wall:6.1f} MB/s  runs checked {checked}"
    )
    print(
        f"speed-up over the baseline: {base_wall / wall:.2f}x (target >= 1.8x); "
        f"unchecked files: {base_files - int(checked)}"
    )
    return 0


if __name__ == "__main__":
    import django

    django.setup()
    sys.exit(main())
