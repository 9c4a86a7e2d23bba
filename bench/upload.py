#!/usr/bin/env python
"""Measure a large upload through the API in chunks, against `cp` of the same file in the same run.

1. Writes a bundle of --gb GB (default 2) of random-looking bytes in /tmp (every block written, no holes; a
   16 MB random block with its index in front, so the file is not one repeated block), deleted at the end.
2. Serves the portal with gunicorn on loopback (2 sync workers, DEBUG off) on PostgreSQL when it answers
   (BENCH_UPLOAD_DATABASE_URL), else SQLite; MEDIA_ROOT in /tmp, the file system of the bundle.
3. Uploads it with portal-submit's own client code (clients/portal-submit): create, PATCH chunks of
   --chunk-mb MiB, complete with the sha256 (which the portal checks). No worker runs: the bundle is
   stored and its submission queued, nothing more, so the figure is the upload's alone.
4. Times `cp` of the same file to the same file system before and after the upload (the ratio is to the
   mean of the two), and reads the peak RSS (VmHWM) of each gunicorn process.
Targets (issue 16): the web process's peak RSS under 150 MB whatever the bundle's size; the upload's
throughput at least half of cp's.
"""

import argparse
import io
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "clients" / "portal-submit"))
BENCH_DB = os.environ.get(
    "BENCH_UPLOAD_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/portal_upload_bench"
)
BLOCK = 16 * 1024 * 1024


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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


def time_cp(source: Path, target: Path) -> float:
    flush_to_disk(source)
    started = time.perf_counter()
    subprocess.run(["cp", str(source), str(target)], check=True)
    seconds = time.perf_counter() - started
    target.unlink()
    return seconds


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


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

        cp_before = time_cp(bundle, tmp / "copy.tar")

        port = free_port()
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "portal.wsgi:application",
                "-b",
                f"127.0.0.1:{port}",
                "-w",
                str(args.workers),
                "--timeout",
                "300",
                "--log-level",
                "warning",
            ],
            cwd=ROOT,
            env={**os.environ, **env},
            start_new_session=True,
        )
        base = f"http://127.0.0.1:{port}"
        for _ in range(200):
            try:
                urllib.request.urlopen(f"{base}/api/v1/", timeout=2).read()
                break
            except OSError:
                time.sleep(0.2)
        workers = children(server.pid)
        baseline_rss = {pid: peak_rss_mb(pid) for pid in workers}

        portal = Portal(base, token, out=open(os.devnull, "w"))
        started = time.perf_counter()
        sha = sha256_of(bundle)
        hashed = time.perf_counter() - started
        flush_to_disk(bundle)
        started = time.perf_counter()
        created = portal.start("training-v5.1", bundle, size, sha)
        portal.send(created["uid"], bundle, size, 0, args.chunk_mb * 1024 * 1024)
        sent_s = time.perf_counter() - started
        submission = portal.complete(created["uid"], sha)
        upload_s = time.perf_counter() - started
        assert submission["sha256"] == sha and submission["size"] == size, submission
        rss = {pid: peak_rss_mb(pid) for pid in workers}
        master_rss = peak_rss_mb(server.pid)

        for stored in (media / "bundles").rglob("*.tar"):
            stored.unlink()
        cp_after = time_cp(bundle, tmp / "copy.tar")
        cp_s = (cp_before + cp_after) / 2

        mb = size / 1e6
        print(
            f"gunicorn: {args.workers} sync workers on 127.0.0.1:{port}; chunks of {args.chunk_mb} MiB; "
            f"database {env['DATABASE_URL'].split('://')[0]}"
        )
        print(
            f"client's sha256 of the bundle first: {hashed:.1f} s ({mb / hashed:.0f} MB/s), not counted below"
        )
        print(
            f"cp:     {cp_before:.2f} s before, {cp_after:.2f} s after; mean {cp_s:.2f} s = {mb / cp_s:.0f} MB/s"
        )
        print(
            f"upload: {upload_s:.2f} s = {mb / upload_s:.0f} MB/s (create, {size // (args.chunk_mb << 20) + 1} "
            f"PATCHes, complete with the sha256 checked); sending {sent_s:.2f} s, completing "
            f"{upload_s - sent_s:.2f} s"
        )
        ratio = cp_s / upload_s
        peak = max(rss.values())
        print(
            f"ratio upload/cp throughput: {ratio:.2f} (target >= 0.5: {'met' if ratio >= 0.5 else 'NOT met'})"
        )
        print(
            "web process peak RSS: "
            + ", ".join(
                f"worker {pid} {rss[pid]:.0f} MB (idle {baseline_rss[pid]:.0f})" for pid in workers
            )
            + f", master {master_rss:.0f} MB; target < 150 MB: {'met' if peak < 150 else 'NOT met'}"
        )
        return 0 if ratio >= 0.5 and peak < 150 else 1
    finally:
        if server is not None:
            os.killpg(server.pid, 15)
            server.wait(timeout=30)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
