#!/usr/bin/env python
"""Measure the read side on a large catalogue: the round page and its CSV export, cold and warm.

1. Builds (once; --rebuild to redo) a catalogue of ROUNDS rounds × SYSTEMS systems × BENCHMARKS
   benchmarks in its own PostgreSQL database (BENCH_DATABASE_URL). Systems and run times come
   from the project's bundle generator (submissions.synthetic.bundles.demo_systems; every
   benchmark filled, so each round has SYSTEMS × BENCHMARKS results) and are scored and
   described by the pipeline's own functions (submissions.checking.scoring, submissions.checking.systems).
   One small round goes through the whole pipeline (write_bundle → ingest → checks →
   finalize → publish) to show that the shape matches; the big rounds are bulk-inserted,
   because pushing ~200,000 results (≈1,000,000 run logs) through the pipeline would take
   hours on this machine. The bulk rows carry no Run rows: the round page and the export
   never read runs.
2. Serves the portal with gunicorn on loopback (DEBUG off) and measures with wrk (Debian's
   package) as the second process:
   - cold: the first render after the round's cache was invalidated (sequential requests,
     each after `invalidate_round`), p50/p95;
   - warm: the cached page under concurrent load (wrk), p50/p95 and requests per second;
   - uncached render: every request a different filter (a cold render of the page), under load.
   - the static floor: the same bytes as the warm round page, written before the start as a
     static file and served by whitenoise from the same gunicorn, in the same run; the ratio
     warm page ÷ static file is the figure to watch, since absolute req/s swing 2–4× between
     days on these machines.
   - the API's v1 results list (a page of 100, filtered by the round), cold and warm, against the
     warm round page in the same run (issue 16: at least its requests/s, a p95 no higher).
   - with --cache-url (or BENCH_CACHE_URL): the warm round page and v1 list again from a second
     gunicorn that has CACHE_URL set (a cache shared by its processes), each between two runs of
     the same URL on the first, which has each process's own cache.
   - with --against PATH (another checkout, e.g. `git worktree add --detach /tmp/before HEAD~1`): the
     warm round page and v1 list served by that checkout's code and by this one's, in turns (this,
     that, this, that), on the same database: requests/s, p95, their ratio, and the servers' CPU
     milliseconds a request, which move less with the machine's load than wall time.
Targets (issue 4, 2-core machine): warm round page p95 < 50 ms and ≥ 500 req/s; cold render
of the largest round < 300 ms. Issue 15: the warm round page at least 0.5 of the static file's
req/s.
"""

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.serving import cpu_seconds, free_port, serve, stop  # noqa: E402

BENCH_DB = os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/portal_bench")
PREFIX = "bench-"

WRK_STATS = """
local counter = 0
local unique = os.getenv("BENCH_UNIQUE") == "1"
setup = function(thread) thread:set("tid", tostring(math.random(1, 1e9))) end
request = function()
  if not unique then return wrk.request() end
  counter = counter + 1
  return wrk.format("GET", wrk.path .. "&acc_max=" .. tostring(100000 + counter) .. "&t=" .. tid)
end
done = function(summary, latency, requests)
  local errors = summary.errors.connect + summary.errors.read + summary.errors.write
    + summary.errors.status + summary.errors.timeout
  io.write(string.format('{"p50": %.3f, "p95": %.3f, "p99": %.3f, "rps": %.1f, "requests": %d, "errors": %d}\\n',
    latency:percentile(50) / 1000, latency:percentile(95) / 1000, latency:percentile(99) / 1000,
    summary.requests / (summary.duration / 1e6), summary.requests, errors))
end
"""


def ensure_database(url: str, fresh: bool = False) -> None:
    """Create the bench's database if it is missing; `fresh`: drop it first. Dropping is how the
    catalogue is rebuilt: deleting 50 rounds' rows through Django's cascade (systems → results → the
    rows that point at them, collected in Python) took ~4 s a round, three times the bulk insert."""
    if not url.startswith("postgres"):
        return
    from urllib.parse import urlparse

    import psycopg

    parsed = urlparse(url)
    name = parsed.path.lstrip("/")
    admin = parsed._replace(path="/postgres").geturl()
    with psycopg.connect(admin, autocommit=True) as conn:
        if fresh:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')


def setup_django(url: str, media: str) -> None:
    os.environ.update(
        DATABASE_URL=url,
        DJANGO_SETTINGS_MODULE="portal.settings",
        DEBUG="0",
        SECRET_KEY="bench-only",
        MEDIA_ROOT=media,
        CELERY_TASK_ALWAYS_EAGER="1",
        LOG_LEVEL="ERROR",
    )
    import django

    django.setup()


def round_file(i: int, benchmarks: int) -> dict:
    return {
        "key": f"{PREFIX}{i:02d}",
        "name": f"Bench round {i:02d}",
        "ruleset": "5.1.0",
        "log_format": "mllog",
        "publication_date": f"{2000 + i // 12:04d}-{i % 12 + 1:02d}-01",
        "history": False,
        "reference_system": "Bench reference (b0 only)",
        "benchmarks": [
            {
                "key": f"b{j}",
                "name": f"Benchmark {j}",
                "quality_target": 0.75,
                "required_runs": 5,
                **({"reference_time_s": 500_000.0} if j == 0 else {}),
            }
            for j in range(benchmarks)
        ],
    }


def pipeline_sample(tmp: Path, rebuild: bool) -> str:
    """One small round through the whole pipeline, to compare its rows with the bulk rows."""
    from django.core.management import call_command

    from leaderboard.catalogue.rounds import ROUNDS_DIR, load_round, read_round_file
    from leaderboard.models import Result, Round, System
    from submissions.synthetic.bundles import demo_systems, write_bundle

    # Real benchmark definitions (v5.1's), so that the rules and MLPerf's compliance checker apply.
    data = read_round_file(ROUNDS_DIR / "training-v5.1.toml")
    data["key"], data["name"] = f"{PREFIX}pipeline", "Bench round through the pipeline"
    data["benchmarks"] = [b for b in data["benchmarks"] if b["key"] in ("retinanet", "rgat")]
    if rebuild:
        from submissions.models import Submission

        Submission.objects.filter(round__key=data["key"]).delete()
        Round.objects.filter(key=data["key"]).delete()
    round_ = load_round(data)

    def counts():
        results = Result.objects.filter(system__round=round_)
        return (
            f"{System.objects.filter(round=round_).count()} systems, {results.count()} results "
            f"({results.filter(published=True).count()} published)"
        )

    if Result.objects.filter(system__round=round_).exists():
        return counts() + ", from an earlier run"
    benches = {b.key: b.required_runs for b in round_.benchmarks.all()}
    targets = {b.key: b.quality_target for b in round_.benchmarks.all()}
    specs = demo_systems(6, benches, seed=99)
    folder = write_bundle(tmp, "Pipeline Org", specs, targets)
    started = time.perf_counter()
    call_command(
        "ingest", str(folder), "--round", round_.key, "--publish", stdout=open(os.devnull, "w")
    )
    return counts() + f" in {time.perf_counter() - started:.1f} s"


def build(rounds: int, systems: int, benchmarks: int) -> None:
    from django.db import transaction

    from leaderboard.cache import invalidate_round
    from leaderboard.catalogue.rounds import load_round
    from leaderboard.models import CloudPrice, Result, Submitter, System
    from submissions.checking.scoring import olympic
    from submissions.checking.systems import from_system_json
    from submissions.models import Submission
    from submissions.synthetic.bundles import demo_systems, system_json

    orgs = [Submitter.objects.get_or_create(name=f"Org {k:02d}")[0] for k in range(20)]
    for i in range(rounds):
        started = time.perf_counter()
        with transaction.atomic():
            round_ = load_round(round_file(i, benchmarks))
            System.objects.filter(round=round_).delete()
            Submission.objects.filter(round=round_).delete()
            benches = list(round_.benchmarks.all())
            runs = {b.key: b.required_runs for b in benches}
            specs = demo_systems(systems, runs, seed=1000 + i)
            rng = random.Random(i)
            subs = {
                org.pk: Submission.objects.create(
                    round=round_,
                    submitter=org,
                    bundle=f"bundles/bench-{i}-{org.pk}.tgz",
                    original_name=f"bench-{i}-{org.pk}.tgz",
                    sha256=f"{i:032d}{org.pk:032d}",
                    size=1,
                    status=Submission.Status.PUBLISHED,
                )
                for org in orgs
            }
            system_rows, org_of = [], {}
            for n, spec in enumerate(specs):
                org = org_of[spec.name] = orgs[n % len(orgs)]
                for (
                    bench
                ) in benches:  # fill every benchmark the generator left out, the generator's way
                    if bench.key not in spec.results:
                        base = (
                            rng.uniform(5, 200) / (spec.nodes * spec.accelerators_per_node) ** 0.8
                        )
                        spec.results[bench.key] = [
                            round(base * rng.uniform(0.97, 1.05), 3) for _ in range(5)
                        ]
                description = system_json(org.name, spec)
                fields = from_system_json(description)
                system_rows.append(
                    System(
                        submission=subs[org.pk],
                        round=round_,
                        submitter=org,
                        key=spec.name,
                        description=description,
                        description_path=f"{org.name}/systems/{spec.name}.json",
                        published=True,
                        **fields,
                    )
                )
            System.objects.bulk_create(system_rows, batch_size=1000)
            saved = {s.key: s for s in System.objects.filter(round=round_)}
            result_rows = []
            for spec in specs:
                system = saved[spec.name]
                for bench in benches:
                    times = [None if m is None else m * 60 for m in spec.results[bench.key]]
                    score = olympic(times, bench.required_runs)
                    if score.seconds is None:
                        continue
                    result_rows.append(
                        Result(
                            system=system,
                            benchmark=bench,
                            path=f"{org_of[spec.name].name}/results/{spec.name}/{bench.key}",
                            score_s=score.seconds,
                            runs_counted=len(score.counted),
                            published=True,
                            speedup=bench.reference_time_s / score.seconds
                            if bench.reference_time_s
                            else None,
                            warning_count=1 if rng.random() < 0.1 else 0,
                        )
                    )
            Result.objects.bulk_create(result_rows, batch_size=2000)
            CloudPrice.objects.filter(round=round_).delete()
            CloudPrice.objects.create(
                round=round_,
                reference=True,
                provider="Bench",
                instance="1 reference GPU",
                price_per_hour=2,
                status="placeholder",
                notes="bench data",
            )
            CloudPrice.objects.bulk_create(
                [
                    CloudPrice(
                        round=round_,
                        submitter=org_of[s.key].name,
                        system_key=s.key,
                        provider="Bench",
                        instance=s.name,
                        price_per_hour=2 * (s.accelerator_count or 1),
                        status="placeholder",
                    )
                    for s in saved.values()
                    if s.category == "cloud"
                ]
            )
        invalidate_round(round_.key)
        print(
            f"  {round_.key}: {len(system_rows)} systems, {len(result_rows)} results "
            f"({time.perf_counter() - started:.1f} s)",
            flush=True,
        )


def catalogue_ok(rounds: int, systems: int, benchmarks: int) -> bool:
    from leaderboard.models import Result, Round, System

    keys = [f"{PREFIX}{i:02d}" for i in range(rounds)]
    return (
        Round.objects.filter(key__in=keys).count() == rounds
        and System.objects.filter(round__key__in=keys).count() == rounds * systems
        and Result.objects.filter(system__round__key__in=keys).count()
        >= rounds * systems * benchmarks * 0.95
    )


def get(url: str) -> tuple[float, int, int]:
    """(milliseconds, status, bytes on the wire) of one GET, sent as a browser does (gzip accepted)."""
    started = time.perf_counter()
    request = urllib.request.Request(url, headers={"Accept-Encoding": "gzip"})
    with urllib.request.urlopen(request, timeout=60) as response:
        body = response.read()
    return (time.perf_counter() - started) * 1000, response.status, len(body)


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered), p95


def cold(url: str, round_key: str, samples: int) -> dict:
    from leaderboard.cache import ROUND_MEMO_SECONDS, invalidate_round

    times, size = [], 0
    for _ in range(samples):
        invalidate_round(round_key)
        # The server's processes trust their copy of the round this long (leaderboard.cache): a
        # request sooner is answered from the cache of the old token, which is not a cold render.
        time.sleep(ROUND_MEMO_SECONDS + 0.05)
        ms, status, size = get(url)
        assert status == 200, status
        times.append(ms)
    p50, p95 = percentiles(times)
    return {"p50": p50, "p95": p95, "max": max(times), "bytes": size, "n": samples}


def wrk(url: str, seconds: int, connections: int, unique: bool = False) -> dict:
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write(WRK_STATS)
    env = {**os.environ, "BENCH_UNIQUE": "1" if unique else "0"}
    out = subprocess.run(
        [
            "wrk",
            "-t2",
            f"-c{connections}",
            f"-d{seconds}s",
            "--timeout",
            "10s",
            "-H",
            "Accept-Encoding: gzip",
            "-s",
            script.name,
            url,
        ],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    ).stdout
    os.unlink(script.name)
    line = next(line for line in out.splitlines() if line.startswith("{"))
    return json.loads(line)


def shared_cache_rows(args, env: dict, paths: dict, local_base: str) -> list[tuple]:
    """The warm round page and v1 list served by the same gunicorn with CACHE_URL (a cache shared by its
    processes, leaderboard/cache.py), each run between two runs of the same URL on the server without
    it (each process's own cache): the load on a shared machine drifts."""
    server, base = serve({**env, "CACHE_URL": args.cache_url}, args.workers, free_port())
    rows = []
    try:
        for _ in range(20):  # every process reads the round and copies the pages
            for path in paths.values():
                get(base + path)
        for name, path in paths.items():
            before = wrk(local_base + path, args.seconds, args.connections)
            shared = wrk(base + path, args.seconds, args.connections)
            after = wrk(local_base + path, args.seconds, args.connections)
            local = {k: statistics.mean((before[k], after[k])) for k in ("p50", "p95", "rps")}
            for label, w, notes in (
                (f"{name}, warm, each process's own cache", local, "mean of the runs around"),
                (
                    f"{name}, warm, shared cache (CACHE_URL)",
                    shared,
                    f"{shared['rps'] / local['rps']:.2f}× the req/s of each process's own",
                ),
            ):
                rows.append(
                    (label, f"{w['p50']:.1f}", f"{w['p95']:.1f}", f"{w['rps']:.0f}", notes, None)
                )
    finally:
        stop(server)
    return rows


def against_rows(args, env: dict, paths: dict, this_server, this_base: str) -> list[tuple]:
    """The warm round page and v1 list served by another checkout's code (--against) and by this one's,
    in turns, two runs each; CPU milliseconds a request of each server's processes."""
    other, other_base = serve(env, args.workers, free_port(), cwd=Path(args.against))
    rows = []
    try:
        for _ in range(20):  # every process reads the round and copies the pages
            for path in paths.values():
                get(other_base + path)
        for name, path in paths.items():
            runs = {"this": [], "that": []}
            for _ in range(2):
                for side, server, base in (
                    ("this", this_server, this_base),
                    ("that", other, other_base),
                ):
                    cpu = cpu_seconds(server)
                    w = wrk(base + path, args.seconds, args.connections)
                    w["cpu_ms"] = (cpu_seconds(server) - cpu) * 1e3 / max(w["requests"], 1)
                    runs[side].append(w)
            mean = {
                side: {
                    k: statistics.mean(w[k] for w in ws) for k in ("p50", "p95", "rps", "cpu_ms")
                }
                for side, ws in runs.items()
            }
            for side, label in (("that", f"{args.against}"), ("this", "this checkout")):
                w, other_side = mean[side], mean["that" if side == "this" else "this"]
                notes = (
                    f"CPU {w['cpu_ms']:.2f} ms a request; runs "
                    + ", ".join(f"{r['rps']:.0f}" for r in runs[side])
                    + " req/s"
                )
                if side == "this":
                    notes += (
                        f"; {w['rps'] / other_side['rps']:.2f}× the req/s, "
                        f"{w['p95'] / other_side['p95']:.2f}× the p95, "
                        f"{w['cpu_ms'] / other_side['cpu_ms']:.2f}× the CPU of {args.against}"
                    )
                rows.append(
                    (
                        f"{name}, warm, {label}",
                        f"{w['p50']:.1f}",
                        f"{w['p95']:.1f}",
                        f"{w['rps']:.0f}",
                        notes,
                        None,
                    )
                )
    finally:
        stop(other)
    return rows


def fetch_gzipped(url: str) -> bytes:
    request = urllib.request.Request(url, headers={"Accept-Encoding": "gzip"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return response.read()


def write_static_copy(path: str, static_root: Path) -> str:
    """The round page as the server sends it (gzipped), written as a static file with its gzip copy,
    for whitenoise to serve from the same gunicorn; returns its URL path."""
    import gzip

    from django.test import Client

    response = Client().get(path, HTTP_ACCEPT_ENCODING="gzip")
    assert response.status_code == 200 and response["Content-Encoding"] == "gzip"
    folder = static_root / "bench"
    folder.mkdir(exist_ok=True)
    (folder / "round-page.html").write_bytes(gzip.decompress(response.content))
    (folder / "round-page.html.gz").write_bytes(response.content)
    return "/static/bench/round-page.html"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--systems", type=int, default=400)
    parser.add_argument("--benchmarks", type=int, default=10)
    parser.add_argument(
        "--rebuild", action="store_true", help="rebuild the catalogue even if it is there"
    )
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers")
    parser.add_argument("--seconds", type=int, default=10, help="length of each wrk run")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--cold-samples", type=int, default=20)
    parser.add_argument(
        "--cache-url",
        default=os.environ.get("BENCH_CACHE_URL", ""),
        help="also serve with this CACHE_URL (e.g. redis://127.0.0.1:6379/3) and measure the warm round "
        "page and v1 list there against the same without it",
    )
    parser.add_argument(
        "--against",
        default="",
        help="another checkout (the code before a change): serve it too and measure the warm round page "
        "and v1 list there and here, in turns",
    )
    args = parser.parse_args()

    if not shutil.which("wrk"):
        print("skipped: wrk is not installed (apt-get install -y wrk)")
        return 0
    try:
        ensure_database(BENCH_DB, fresh=args.rebuild)
    except Exception as error:  # noqa: BLE001
        print(f"skipped: PostgreSQL at {BENCH_DB} does not answer ({error})")
        return 0
    os.environ.pop("CACHE_URL", None)  # each process's own cache, except the server of --cache-url
    media = tempfile.mkdtemp(prefix="bench-media-")
    # Collected static files, as a deployment has them; the server inherits STATIC_ROOT.
    static_root = tempfile.mkdtemp(prefix="bench-static-")
    os.environ["STATIC_ROOT"] = static_root
    setup_django(BENCH_DB, media)
    from django.core.management import call_command

    from leaderboard.models import Result, Round

    call_command("migrate", verbosity=0)
    call_command("load_rounds", stdout=open(os.devnull, "w"))
    print(
        f"catalogue: {args.rounds} rounds × {args.systems} systems × {args.benchmarks} benchmarks in {BENCH_DB}"
    )
    print(
        "  sample round through the whole pipeline (write_bundle → ingest → publish): "
        + pipeline_sample(Path(media), args.rebuild)
    )
    if args.rebuild or not catalogue_ok(args.rounds, args.systems, args.benchmarks):
        print(
            "  bulk-inserting the big rounds (generator-shaped rows, pipeline scoring; NOT through the "
            "pipeline: see the docstring)"
        )
        started = time.perf_counter()
        build(args.rounds, args.systems, args.benchmarks)
        print(f"  built in {time.perf_counter() - started:.0f} s")
    else:
        print("  reusing the catalogue already in the database (--rebuild to redo it)")
    # The planner's statistics, as a database in use has them (autovacuum gathers them, late under load):
    # on the freshly bulk-loaded tables it read all 200,000 results for one round's 4,000 (82 ms, not 26).
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    total = Result.objects.filter(system__round__key__startswith=PREFIX, published=True).count()
    largest = (
        Round.objects.filter(key__startswith=PREFIX)
        .exclude(key=f"{PREFIX}pipeline")
        .order_by("-key")
        .first()
    )
    per_round = Result.objects.filter(system__round=largest).count()
    print(f"  {total} published results; measured round {largest.key} has {per_round} results")

    call_command("collectstatic", interactive=False, verbosity=0)
    static_page = write_static_copy(f"/r/{largest.key}/", Path(static_root))

    port = free_port()
    # Persistent database connections, as a deployment would set them (a new PostgreSQL
    # connection per request costs more than serving a cached page).
    served_db = BENCH_DB + ("&" if "?" in BENCH_DB else "?") + "conn_max_age=600"
    env = {
        **os.environ,
        "DATABASE_URL": served_db,
        "DEBUG": "0",
        "SECRET_KEY": "bench-only",
        "LOG_LEVEL": "ERROR",
        # wrk is one client: measure serving, not refusing (pages answered 429 past 120/minute). DRF's
        # user throttle counts an anonymous client by address too, so its rate is lifted as well.
        "API_THROTTLE_ANON": "1000000/second",
        "API_THROTTLE_USER": "1000000/second",
        "PAGE_THROTTLE_ANON": "1000000/second",
    }
    server, base = serve(env, args.workers, port)
    try:
        page = f"{base}/r/{largest.key}/"
        export = f"{page}?format=csv"
        filtered = f"{page}?category=cloud&sort=b.b3"
        api = f"{base}/api/v1/results/?round={largest.key}&page_size=100"
        print(
            f"\ngunicorn: {args.workers} sync workers on 127.0.0.1:{port} (DEBUG off, conn_max_age=600); load from wrk "
            f"(-t2 -c{args.connections}, {args.seconds} s per run, Accept-Encoding: gzip as browsers send)"
        )
        for _ in range(
            10
        ):  # every worker imports and compiles its templates before anything is timed
            (
                get(f"{base}/r/{PREFIX}00/?division=open"),
                get(f"{base}/r/{PREFIX}00/?format=csv&division=open"),
            )
        rows = []
        c = cold(page, largest.key, args.cold_samples)
        rows.append(
            (
                "round page, cold (first render after invalidation)",
                f"{c['p50']:.1f}",
                f"{c['p95']:.1f}",
                "-",
                f"{c['bytes'] / 1024:.0f} KB gzipped",
                c["p95"] < 300,
            )
        )
        c = cold(export, largest.key, args.cold_samples)
        rows.append(
            (
                "CSV export, cold",
                f"{c['p50']:.1f}",
                f"{c['p95']:.1f}",
                "-",
                f"{c['bytes'] / 1024:.0f} KB gzipped",
                None,
            )
        )
        c = cold(api, largest.key, args.cold_samples)
        rows.append(
            (
                "v1 results list (a page of 100, by round), cold",
                f"{c['p50']:.1f}",
                f"{c['p95']:.1f}",
                "-",
                f"{c['bytes'] / 1024:.0f} KB gzipped",
                None,
            )
        )
        for _ in range(20):  # warm every worker's cache
            get(page), get(export), get(filtered), get(api), get(f"{base}{static_page}")
        served, copied = fetch_gzipped(page), fetch_gzipped(f"{base}{static_page}")
        same = served == copied
        if not same:  # say where, so that a difference is a finding, not a mystery
            import difflib
            import gzip

            lines = difflib.unified_diff(
                gzip.decompress(copied).decode().splitlines(),
                gzip.decompress(served).decode().splitlines(),
                "static copy",
                "served page",
                lineterm="",
                n=0,
            )
            print("  the page differs from its static copy:", *list(lines)[:8], sep="\n    ")
        # The page and the static file in turns (static, page, static), so drift hits both.
        floor = [wrk(f"{base}{static_page}", args.seconds, args.connections)]
        warm_page = wrk(page, args.seconds, args.connections)
        floor.append(wrk(f"{base}{static_page}", args.seconds, args.connections))
        static_rps = statistics.mean(w["rps"] for w in floor)
        ratio = warm_page["rps"] / static_rps
        rows.append(
            (
                "static file, the same bytes (whitenoise)" + ("" if same else " [BYTES DIFFER]"),
                f"{floor[0]['p50']:.1f}",
                f"{floor[0]['p95']:.1f}",
                f"{static_rps:.0f}",
                f"mean of 2 runs around the page's ({floor[0]['rps']:.0f}, {floor[1]['rps']:.0f})",
                None,
            )
        )
        rows.append(
            (
                "round page, warm, ÷ the static file",
                f"{warm_page['p50']:.1f}",
                f"{warm_page['p95']:.1f}",
                f"{warm_page['rps']:.0f}",
                f"ratio {ratio:.2f} (target ≥ 0.5)",
                ratio >= 0.5 and not warm_page["errors"],
            )
        )
        warm = {}
        for label, url, target in (
            ("round page, warm", page, True),
            # Between two runs of the round page, which it is compared with: the load drifts.
            ("v1 results list (a page of 100, by round), warm", api, None),
            ("round page, warm, again after the v1 list", page, None),
            ("CSV export, warm", export, None),
            ("filtered round page, warm", filtered, None),
        ):
            w = warm[label] = wrk(url, args.seconds, args.connections)
            ok = (w["p95"] < 50 and w["rps"] >= 500 and not w["errors"]) if target else None
            rows.append(
                (
                    label,
                    f"{w['p50']:.1f}",
                    f"{w['p95']:.1f}",
                    f"{w['rps']:.0f}",
                    f"{w['requests']} req, {w['errors']} errors",
                    ok,
                )
            )
        w = wrk(filtered, args.seconds, args.connections, unique=True)
        rows.append(
            (
                "round page, uncached render under load (new filter each request)",
                f"{w['p50']:.1f}",
                f"{w['p95']:.1f}",
                f"{w['rps']:.0f}",
                f"{w['requests']} req, {w['errors']} errors",
                None,
            )
        )
        if args.cache_url:
            paths = {
                "round page": f"/r/{largest.key}/",
                "v1 results list": api.removeprefix(base),
            }
            rows += shared_cache_rows(args, env, paths, base)
        if args.against:
            paths = {
                "round page": f"/r/{largest.key}/",
                "v1 results list": api.removeprefix(base),
            }
            rows += against_rows(args, env, paths, server, base)
    finally:
        stop(server)
        shutil.rmtree(media, ignore_errors=True)
        shutil.rmtree(static_root, ignore_errors=True)

    print(f"\n{'measure':<68} {'p50 ms':>8} {'p95 ms':>8} {'req/s':>7}  notes")
    for label, p50, p95, rps, notes, ok in rows:
        verdict = "" if ok is None else ("  target met" if ok else "  TARGET MISSED")
        print(f"{label:<68} {p50:>8} {p95:>8} {rps:>7}  {notes}{verdict}")
    print(
        "\ntargets: warm round page p95 < 50 ms and ≥ 500 req/s; cold render of the largest round < 300 ms"
    )
    # Issue 16: the API's page of results, in the same run, at least as fast as the round page.
    a = warm["v1 results list (a page of 100, by round), warm"]
    around = [warm["round page, warm"], warm["round page, warm, again after the v1 list"]]
    r = {k: statistics.mean(w[k] for w in around) for k in ("rps", "p95")}
    met = a["rps"] >= r["rps"] and a["p95"] <= r["p95"]
    print(
        f"v1 results list against the round page (mean of the runs before and after it): "
        f"{a['rps']:.0f} vs {r['rps']:.0f} req/s ({a['rps'] / r['rps']:.2f}×), "
        f"p95 {a['p95']:.1f} vs {r['p95']:.1f} ms" + ("  target met" if met else "  TARGET MISSED")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
