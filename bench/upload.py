#!/usr/bin/env python
"""Measure a large upload through the API in chunks, against a minimal reference sink in the same run.

1. Writes a bundle of --gb GB (default 2) of random-looking bytes in /tmp (every block written, no holes; a
   16 MB random block with its index in front, so the file is not one repeated block), deleted at the end.
2. Serves the portal with gunicorn on loopback (2 sync workers, DEBUG off) on PostgreSQL when it answers
   (BENCH_UPLOAD_DATABASE_URL), else SQLite; MEDIA_ROOT in /tmp, the file system of the bundle.
3. Uploads it with portal-submit's own client code (clients/portal-submit): create, PATCH chunks of
   --chunk-mb MiB, complete with the sha256 (which the portal checks). No worker runs: the bundle is
   stored and its submission queued, nothing more, so the figure is the upload's alone.
4. Sends, in --rounds rounds interleaved with the uploads (this machine's speed drifts while it is shared),
   the same chunks with the same client code to the reference sink (bench/upload_sink.py: a raw socket that
   reads each chunk, updates a hashlib sha256, writes and fsyncs it), and reads the sink's sha256. Reads the
   peak RSS (VmHWM) of each gunicorn process.
Targets: the web process's peak RSS under 150 MB whatever the bundle's size (issue 16); the upload's
throughput at least 0.75x the sink's (issue 27).
"""

import argparse
import io
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "clients" / "portal-submit"))
from bench.serving import serve, stop  # noqa: E402

BENCH_DB = os.environ.get(
    "BENCH_UPLOAD_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/portal_upload_bench"
)
BLOCK = 16 * 1024 * 1024


def write_bundle(path: Path, size: int) -> None:
    block = bytearray(os.urandom(BLOCK))
    with open(path, "wb") as out:
        written, index = 0, 0
        while written < size:
            block[:8] = index.to_bytes(8, "little")
            n = min(BLOCK, size - written)
            out.write(memoryview(block)[:n])
            written, index = written + n, index + 1


def flush_to_disk(path: Path) -> None:
    """Written pages go to disk before anything is timed: neither cp nor the upload pays for the other's."""
    subprocess.run(["sync"], check=False)


def time_sink(portal_class, bundle: Path, size: int, chunk: int, sha: str, tmp: Path) -> float:
    """Seconds to send the bundle to a fresh reference sink (bench/upload_sink.py) with portal-submit's
    client; the sink's sha256 must be the bundle's."""
    from bench.serving import free_port

    flush_to_disk(bundle)
    port, target = free_port(), tmp / "sink.tar"
    sink = subprocess.Popen(
        [sys.executable, str(ROOT / "bench" / "upload_sink.py"), str(port), str(target)]
    )
    try:
        base = f"http://127.0.0.1:{port}"
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)
        portal = portal_class(base, "-", out=open(os.devnull, "w"))
        started = time.perf_counter()
        portal.send("sink", bundle, size, 0, chunk)
        seconds = time.perf_counter() - started
        with urllib.request.urlopen(base + "/") as answer:
            assert answer.read().decode() == sha, "the sink's sha256 is not the bundle's"
    finally:
        sink.kill()
        sink.wait()
        target.unlink(missing_ok=True)
    flush_to_disk(bundle)
    return seconds


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process, its threads included."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            pass
    return found


def ensure_database(url: str) -> None:
    from urllib.parse import urlparse

    import psycopg

    parsed = urlparse(url)
    name = parsed.path.lstrip("/")
    with psycopg.connect(parsed._replace(path="/postgres").geturl(), autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')


def choose_database(tmp: Path) -> str:
    if BENCH_DB.startswith("postgres"):
        try:
            ensure_database(BENCH_DB)
            return BENCH_DB
        except Exception as error:  # noqa: BLE001
            print(f"PostgreSQL at {BENCH_DB} does not answer ({error}); using SQLite")
    return f"sqlite:///{tmp / 'portal.sqlite3'}"


def setup_django(db: str, media: Path, broker: Path) -> dict:
    env = {
        "DATABASE_URL": db,
        "DJANGO_SETTINGS_MODULE": "portal.settings",
        "DEBUG": "0",
        "SECRET_KEY": "bench-only",
        "MEDIA_ROOT": str(media),
        "CELERY_BROKER_URL": "filesystem://",
        "BROKER_DIR": str(broker),
        "LOG_LEVEL": "ERROR",
        "UPLOAD_MAX_BYTES": str(64 * 1024**3),
    }
    os.environ.update(env)
    import django

    django.setup()
    return env


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--gb", type=float, default=2.0, help="bundle size in GB (10^9 bytes)")
    parser.add_argument("--chunk-mb", type=int, default=64, help="bytes per PATCH, in MiB")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn sync workers")
    parser.add_argument("--rounds", type=int, default=3, help="uploads, each between copies")
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="bench-upload-", dir="/tmp"))
    server = None
    try:
        media, broker = tmp / "media", tmp / "broker"
        env = setup_django(choose_database(tmp), media, broker)
        from django.contrib.auth import get_user_model
        from django.core.management import call_command

        from accounts.models import ApiToken, Membership, Organisation

        call_command("migrate", verbosity=0)
        call_command("load_rounds", stdout=io.StringIO())
        User = get_user_model()
        user = User.objects.filter(username="bench-uploader").first() or User.objects.create_user(
            "bench-uploader", password=None
        )
        organisation, _ = Organisation.objects.get_or_create(name="Bench uploaders")
        Membership.objects.get_or_create(user=user, organisation=organisation)
        _, token = ApiToken.create(user, "bench")
        from portal_submit.cli import Portal, sha256_of

        size = int(args.gb * 1e9)
        bundle = tmp / "bundle.tar"
        started = time.perf_counter()
        write_bundle(bundle, size)
        print(
            f"bundle: {size:,} bytes in {bundle} (written in {time.perf_counter() - started:.1f} s)"
        )

        server, base = serve(
            {**os.environ, **env}, args.workers, ready_path="/api/v1/", timeout_s=300
        )
        port = base.rpartition(":")[2]
        workers = children(server.pid)
        baseline_rss = {pid: peak_rss_mb(pid) for pid in workers}

        portal = Portal(base, token, out=open(os.devnull, "w"))
        started = time.perf_counter()
        sha = sha256_of(bundle)
        hashed = time.perf_counter() - started
        sinks, uploads = [], []
        chunk = args.chunk_mb * 1024 * 1024
        cpu_before = sum(cpu_seconds(pid) for pid in workers)
        for _ in range(args.rounds):
            sinks.append(time_sink(Portal, bundle, size, chunk, sha, tmp))
            started = time.perf_counter()
            created = portal.start("training-v5.1", bundle, size, sha)
            portal.send(created["uid"], bundle, size, 0, chunk)
            sent_s = time.perf_counter() - started
            submission = portal.complete(created["uid"], sha)
            uploads.append((time.perf_counter() - started, sent_s))
            assert submission["sha256"] == sha and submission["size"] == size, submission
            for stored in (media / "bundles").rglob("*.tar"):
                stored.unlink()  # the next round stores the bundle anew
        web_cpu = sum(cpu_seconds(pid) for pid in workers) - cpu_before
        rss = {pid: peak_rss_mb(pid) for pid in workers}
        master_rss = peak_rss_mb(server.pid)

        mb = size / 1e6
        upload_s = statistics.median(total for total, _ in uploads)
        sink_s = statistics.median(sinks)

        def listed(seconds) -> str:
            return ", ".join(f"{s:.2f}" for s in seconds) + " s"

        print(
            f"gunicorn: {args.workers} sync workers on 127.0.0.1:{port}; chunks of {args.chunk_mb} MiB; "
            f"database {env['DATABASE_URL'].split('://')[0]}; {args.rounds} rounds, medians below"
        )
        print(
            f"client's sha256 of the bundle first: {hashed:.1f} s ({mb / hashed:.0f} MB/s), not counted below"
        )
        print(
            f"sink:      {listed(sinks)}; median {mb / sink_s:.0f} MB/s (the same chunks, hashed, fsynced)"
        )
        print(
            f"upload:    {listed(t for t, _ in uploads)}; median {mb / upload_s:.0f} MB/s (create, "
            f"{-(-size // (args.chunk_mb << 20))} PATCHes each synced to disk, complete with the sha256 "
            f"checked; completing took {listed(t - sent for t, sent in uploads)})"
        )
        print(
            f"web processes' CPU: {web_cpu / args.rounds:.2f} s per upload "
            f"({web_cpu / args.rounds / (size / 1e9):.2f} s per GB; sha256 alone takes {hashed / (size / 1e9):.2f})"
        )
        ratio = sink_s / upload_s
        rounds = [s / total for s, (total, _) in zip(sinks, uploads)]
        peak = max(rss.values())
        print(
            f"ratio upload/sink throughput: {ratio:.2f} of the medians; per round "
            + ", ".join(f"{r:.2f}" for r in rounds)
            + f" (target >= 0.75: {'met' if ratio >= 0.75 else 'NOT met'})"
        )
        print(
            "web process peak RSS: "
            + ", ".join(
                f"worker {pid} {rss[pid]:.0f} MB (idle {baseline_rss[pid]:.0f})" for pid in workers
            )
            + f", master {master_rss:.0f} MB; target < 150 MB: {'met' if peak < 150 else 'NOT met'}"
        )
        return 0 if ratio >= 0.75 and peak < 150 else 1
    finally:
        if server is not None:
            stop(server)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
