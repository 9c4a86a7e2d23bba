#!/usr/bin/env python
"""Where a cold render of the round page spends its time: CPU or waiting (issue 39).

bench/leaderboard.py measures the cold render over HTTP (gunicorn, p95 < 300 ms for the largest round); its
figure moved from 106-125 ms on a quiet machine to 378-383 ms at load about 2. This renders the same page in
this one process, on the same catalogue (bench/leaderboard.py's, built here if missing: --rounds rounds of
400 systems x 10 benchmarks in BENCH_DATABASE_URL), each render after `invalidate_round`, and splits each
render's wall time into
  - this process's CPU time (time.thread_time: Python building the table and the page);
  - time in the database (the wall time of each query, through connection.execute_wrapper: PostgreSQL's
    own CPU, its I/O, and the wait for either);
  - the rest: the wall time this process was runnable but not running (waiting for a core), with the
    page's compression and the view's set-up.
It prints p50 and p95 of each, the load average before and after, and the functions of one cold render by
CPU time (cProfile, --profile).

usage: bench/cold_render.py [--rounds 2] [--samples 30] [--profile]
"""

import argparse
import cProfile
import io
import os
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.leaderboard import (  # noqa: E402
    BENCH_DB,
    PREFIX,
    build,
    catalogue_ok,
    ensure_database,
    percentiles,
    setup_django,
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--systems", type=int, default=400)
    parser.add_argument("--benchmarks", type=int, default=10)
    parser.add_argument("--samples", type=int, default=30)
    parser.add_argument("--profile", action="store_true", help="cProfile one more cold render")
    args = parser.parse_args()

    ensure_database(BENCH_DB)
    os.environ.pop("CACHE_URL", None)
    setup_django(BENCH_DB, tempfile.mkdtemp(prefix="bench-media-"))
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client

    from leaderboard.cache import invalidate_round
    from leaderboard.models import Result, Round

    call_command("migrate", verbosity=0)
    call_command("load_rounds", stdout=open(os.devnull, "w"))
    if not catalogue_ok(args.rounds, args.systems, args.benchmarks):
        print(f"building the catalogue: {args.rounds} rounds x {args.systems} x {args.benchmarks}")
        build(args.rounds, args.systems, args.benchmarks)
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
    largest = (
        Round.objects.filter(key__startswith=PREFIX)
        .exclude(key=f"{PREFIX}pipeline")
        .order_by("-key")
        .first()
    )
    results = Result.objects.filter(system__round=largest).count()
    page = f"/r/{largest.key}/"
    client = Client(HTTP_ACCEPT_ENCODING="gzip")
    for _ in range(3):  # imports, templates, the first connection
        assert client.get(page).status_code == 200

    in_db = []

    def timed(execute, sql, params, many, context):
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            in_db.append(time.perf_counter() - started)

    def render() -> tuple[float, float, float, int, int]:
        invalidate_round(largest.key)
        in_db.clear()
        wall, cpu = time.perf_counter(), time.thread_time()
        with connection.execute_wrapper(timed):
            response = client.get(page)
        cpu, wall = time.thread_time() - cpu, time.perf_counter() - wall
        assert response.status_code == 200
        return wall * 1000, cpu * 1000, sum(in_db) * 1000, len(in_db), len(response.content)

    load_before = os.getloadavg()
    samples = [render() for _ in range(args.samples)]
    load_after = os.getloadavg()
    print(
        f"cold render of {page} ({results} results), {args.samples} renders in one process; "
        f"load average {load_before[0]:.1f} before, {load_after[0]:.1f} after, on {os.cpu_count()} cores"
    )
    columns = {
        "wall": [s[0] for s in samples],
        "CPU of this process": [s[1] for s in samples],
        "in the database": [s[2] for s in samples],
        "waiting (wall - CPU - database)": [max(s[0] - s[1] - s[2], 0) for s in samples],
    }
    for name, values in columns.items():
        p50, p95 = percentiles(values)
        print(
            f"  {name:<34} p50 {p50:7.1f} ms   p95 {p95:7.1f} ms   mean {statistics.mean(values):7.1f}"
        )
    print(f"  {samples[0][3]} queries a render, {samples[0][4] / 1024:.0f} KB gzipped")

    if args.profile:
        invalidate_round(largest.key)
        profile = cProfile.Profile(time.thread_time)
        profile.enable()
        client.get(page)
        profile.disable()
        out = io.StringIO()
        pstats.Stats(profile, stream=out).sort_stats("tottime").print_stats(18)
        print("\none cold render, CPU time by function (cProfile, thread CPU clock):")
        print("\n".join(line for line in out.getvalue().splitlines()[4:] if line.strip()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
