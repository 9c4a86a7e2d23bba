#!/usr/bin/env python
"""The deadline rush (issue 26, item 10): 15 organisations upload their real v5.1 bundles at once while 50
readers load the round's pages and the API.

1. Unpacks /work/shared/mlperf/training_v5.1_results.tar.xz (MLPERF_SHARED_DIR) once into a temporary folder
   and packs one bundle per submitter, as each would upload it (`tar -czf <name>.tgz <Submitter>`): the 15
   smallest of its 19 submitters (--orgs; --largest takes the largest instead).
2. A fresh PostgreSQL database (RUSH_DATABASE_URL), Redis as broker and cache (RUSH_REDIS, two of its
   databases, emptied), the round v5.1 opened for uploads, an organisation per submitter with a member and
   an API token. gunicorn as the README deploys it (gunicorn.conf.py: 2 processes of 8 threads), two Celery
   workers (`-Q ingest,checks,celery`, --concurrency each) and the clock worker with beat.
3. Readers: 50 threads, each with its own connection, loading in turn the round page, the home page and
   the API's results and rounds. The readers stand for 50 clients: the per-address throttles are set
   past what they send. They run --before seconds alone, then the uploads start, all at once, each through
   the chunked API (create, PATCH parts of --chunk-mb MiB, complete with the sha256), and the readers go on
   until every submission is final.
4. Prints each upload's completion time, the time until all were validated, the readers' p50/p95 before
   and during the rush, every error answered to any client, and checks the database afterwards: every
   upload stored once with its sha256, every run checked once in its submission's final validation, every
   submission final (not failed).
Target: the readers' p95 during the rush within 5x of before; no client error. On a shared machine the
ratio is the figure to read (both halves run in the same minutes).
"""

import argparse
import hashlib
import http.client
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.serving import serve, stop  # noqa: E402

DATABASE = os.environ.get("RUSH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/portal_rush")
REDIS = os.environ.get("RUSH_REDIS", "redis://127.0.0.1:6379")
SHARED = Path(os.environ.get("MLPERF_SHARED_DIR", ROOT.parent / "shared" / "mlperf"))
READER_PATHS = [
    "/r/training-v5.1/",
    "/",
    "/api/v1/results/?round=training-v5.1",
    "/api/v1/rounds/",
]


def bundles(folder: Path, count: int, largest: bool) -> list[tuple[str, Path]]:
    """(submitter, its .tgz) for the `count` smallest (or largest) submitters of v5.1."""
    tree = folder / "tree"
    tree.mkdir()
    with tarfile.open(SHARED / "training_v5.1_results.tar.xz") as tar:
        tar.extractall(tree, filter="data")
    top = tree if len(list(tree.iterdir())) > 1 else next(tree.iterdir())
    sizes = {
        d.name: sum(f.stat().st_size for f in d.rglob("*") if f.is_file())
        for d in top.iterdir()
        if d.is_dir()
    }
    by_size = sorted(sizes, key=sizes.get)
    chosen = by_size[-count:] if largest else by_size[:count]
    made = []
    for name in sorted(chosen):
        target = folder / f"{name}.tgz"
        subprocess.run(["tar", "-C", str(top), "-czf", str(target), name], check=True)
        made.append((name, target))
    shutil.rmtree(tree)
    return made


def fresh_database(url: str) -> None:
    from urllib.parse import urlparse

    import psycopg

    parsed = urlparse(url)
    name = parsed.path.lstrip("/")
    with psycopg.connect(parsed._replace(path="/postgres").geturl(), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def setup(env: dict, submitters: list[str]) -> dict[str, str]:
    """Migrate, load the rounds, open v5.1 for uploads; an organisation, a member and a token per
    submitter. Returns {submitter: token}."""
    os.environ.update(env)
    import django

    django.setup()
    from datetime import timedelta

    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.utils import timezone

    from accounts.models import ApiToken, Membership, Organisation
    from leaderboard.catalogue.organisations import organisation_of
    from leaderboard.catalogue.rounds import load_all
    from leaderboard.models import Round

    call_command("migrate", verbosity=0)
    load_all()
    now, hour = timezone.now(), timedelta(hours=1)
    Round.objects.filter(key="training-v5.1").update(
        opens_at=now - hour,
        deadline_at=now + 5 * hour,
        review_ends_at=now + 19 * hour,
        publish_at=now + 20 * hour,
    )
    tokens = {}
    for n, submitter in enumerate(submitters):
        name = organisation_of(submitter)
        org = Organisation.objects.create(name=name, slug=f"org-{n}")
        user = get_user_model().objects.create_user(f"member{n}", password="x")
        Membership.objects.create(user=user, organisation=org, role=Membership.Role.ADMIN)
        tokens[submitter] = ApiToken.create(user, "rush")[1]
    return tokens


class Readers:
    """`count` threads loading READER_PATHS in turn; each request's (start, seconds, status)."""

    def __init__(self, port: int, count: int):
        self.port, self.samples, self.errors = port, [], []
        self.running = True
        self.lock = threading.Lock()
        self.threads = [
            threading.Thread(target=self._read, args=(n,), daemon=True) for n in range(count)
        ]
        for thread in self.threads:
            thread.start()

    def _read(self, n: int):
        conn = None
        i = n
        while self.running:
            path = READER_PATHS[i % len(READER_PATHS)]
            i += 1
            started = time.monotonic()
            try:
                if conn is None:
                    conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
                conn.request("GET", path)
                response = conn.getresponse()
                response.read()
                status = response.status
                if response.getheader("Connection", "").lower() == "close":
                    conn.close()
                    conn = None
            except (OSError, http.client.HTTPException) as error:
                status = f"{type(error).__name__}: {error}"
                conn = None
            took = time.monotonic() - started
            with self.lock:
                self.samples.append((started, took, status))
                if status != 200:
                    self.errors.append((path, status))

    def between(self, start: float, end: float) -> list[float]:
        with self.lock:
            return [
                took for at, took, status in self.samples if start <= at < end and status == 200
            ]

    def stop(self):
        self.running = False
        for thread in self.threads:
            thread.join(timeout=70)


def upload(port: int, token: str, path: Path, chunk: int, done: dict, errors: list, t0: float):
    """Through the chunked API, as portal-submit does; records the completion time (s after t0)."""
    data = path.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    headers = {"Authorization": f"Token {token}"}
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)

    def ask(method, url, body=b"", **more):
        conn.request(method, url, body=body, headers={**headers, **more})
        response = conn.getresponse()
        return response.status, response.read()

    try:
        status, body = ask(
            "POST",
            "/api/v1/uploads/",
            json.dumps({"round": "training-v5.1", "name": path.name, "size": len(data)}).encode(),
            **{"Content-Type": "application/json"},
        )
        if status != 201:
            raise RuntimeError(f"create: {status} {body[:300]!r}")
        uid = json.loads(body)["uid"]
        for offset in range(0, len(data), chunk):
            status, body = ask(
                "PATCH",
                f"/api/v1/uploads/{uid}/",
                data[offset : offset + chunk],
                **{"Content-Type": "application/offset+octet-stream", "Upload-Offset": str(offset)},
            )
            if status != 204:
                raise RuntimeError(f"PATCH at {offset}: {status} {body[:300]!r}")
        status, body = ask(
            "POST",
            f"/api/v1/uploads/{uid}/complete/",
            json.dumps({"sha256": sha}).encode(),
            **{"Content-Type": "application/json"},
        )
        if status != 201:
            raise RuntimeError(f"complete: {status} {body[:300]!r}")
        done[path.name] = (time.monotonic() - t0, sha, json.loads(body)["uid"])
    except Exception as error:  # noqa: BLE001 - every failure is a figure of the run
        errors.append((path.name, repr(error)))
    finally:
        conn.close()


def workers(env: dict, folder: Path, concurrency: int) -> list[subprocess.Popen]:
    celery = [sys.executable, "-m", "celery", "-A", "portal", "worker", "--loglevel=WARNING"]
    commands = [
        [*celery, "-Q", "ingest,checks,celery", "-c", str(concurrency), "-n", f"w{n}@%h"]
        for n in (1, 2)
    ]
    commands.append(
        [*celery, "-Q", "clock", "-n", "clock@%h", "--pool=solo", "-B", "-s", str(folder / "beat")]
    )
    return [
        subprocess.Popen(
            command,
            cwd=ROOT,
            env=env,
            stdout=open(folder / f"worker{n}.log", "w"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        for n, command in enumerate(commands)
    ]


def quantile(values: list[float], q: float) -> float:
    return (
        statistics.quantiles(values, n=100)[int(q * 100) - 1] if len(values) > 1 else float("nan")
    )


def check_database(done: dict) -> list[str]:
    """What is wrong in the database after the rush (nothing, when it held)."""
    from django.db.models import Count

    from leaderboard.models import Run
    from submissions.models import RunCheck, Submission, Upload

    problems = []
    for name, (_, sha, uid) in done.items():
        same = Submission.objects.filter(sha256=sha)
        if same.count() != 1:
            problems.append(f"{name}: {same.count()} submissions with its sha256")
            continue
        submission = same.get()
        if str(submission.uid) != uid:
            problems.append(f"{name}: the submission answered is not the one stored")
        if submission.status not in ("valid", "invalid"):
            problems.append(f"{name}: {submission.status} ({submission.message[:200]})")
        bundle = Path(os.environ["MEDIA_ROOT"]) / submission.bundle.name
        if hashlib.sha256(bundle.read_bytes()).hexdigest() != sha:
            problems.append(f"{name}: the stored bundle's sha256 differs")
        final = submission.validations.order_by("-number").first()
        runs = Run.objects.filter(result__system__submission=submission)
        checks = RunCheck.objects.filter(validation=final)
        twice = checks.values("run").annotate(n=Count("pk")).filter(n__gt=1).count()
        if final is None or final.status != "done" or checks.count() != runs.count() or twice:
            problems.append(
                f"{name}: {runs.count()} runs, {checks.count()} checks in its final validation, "
                f"{twice} runs checked twice"
            )
    if Upload.objects.exclude(status="complete").exists():
        problems.append(f"{Upload.objects.exclude(status='complete').count()} uploads not complete")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--orgs", type=int, default=15)
    parser.add_argument(
        "--largest", action="store_true", help="the largest submitters instead of the smallest"
    )
    parser.add_argument("--readers", type=int, default=50)
    parser.add_argument("--before", type=float, default=20.0, help="seconds of readers alone")
    parser.add_argument("--chunk-mb", type=int, default=8)
    parser.add_argument(
        "--concurrency", type=int, default=1, help="processes of each of the two workers"
    )
    parser.add_argument(
        "--limit", type=float, default=1200.0, help="seconds to wait for all to be final"
    )
    args = parser.parse_args()
    if not (SHARED / "training_v5.1_results.tar.xz").exists():
        print(f"no {SHARED / 'training_v5.1_results.tar.xz'}: set MLPERF_SHARED_DIR")
        return 2
    folder = Path(tempfile.mkdtemp(prefix="rush-"))
    processes = []
    try:
        packed = bundles(folder, args.orgs, args.largest)
        print(
            f"{len(packed)} bundles, {sum(p.stat().st_size for _, p in packed) / 1e6:.0f} MB: "
            + ", ".join(name for name, _ in packed)
        )
        fresh_database(DATABASE)
        import redis

        for db in (1, 2):
            redis.Redis.from_url(f"{REDIS}/{db}").flushdb()
        media = folder / "media"
        media.mkdir()
        env = {
            **os.environ,
            "DATABASE_URL": DATABASE,
            "CELERY_BROKER_URL": f"{REDIS}/1",
            "CACHE_URL": f"{REDIS}/2",
            "MEDIA_ROOT": str(media),
            "DEBUG": "0",
            "SECRET_KEY": "rush-bench-only",
            "LOG_LEVEL": "ERROR",
            "DJANGO_SETTINGS_MODULE": "portal.settings",
            # 50 readers stand for 50 clients: one address here, past the per-address limits.
            "API_THROTTLE_ANON": "100000/minute",
            "PAGE_THROTTLE_ANON": "100000/minute",
            "API_THROTTLE_USER": "100000/minute",
            "PAGE_THROTTLE_USER": "100000/minute",
        }
        tokens = setup(env, [name for name, _ in packed])
        server, base = serve(env, workers=2)
        processes.append(server)
        port = int(base.rsplit(":", 1)[1])
        processes += workers(env, folder, args.concurrency)
        time.sleep(10)  # the workers import and connect
        readers = Readers(port, args.readers)
        before_start = time.monotonic()
        time.sleep(args.before)
        t0 = time.monotonic()
        done, upload_errors = {}, []
        chunk = args.chunk_mb * 1024 * 1024
        uploaders = [
            threading.Thread(
                target=upload, args=(port, tokens[name], path, chunk, done, upload_errors, t0)
            )
            for name, path in packed
        ]
        for thread in uploaders:
            thread.start()
        for thread in uploaders:
            thread.join()
        from django.db.models import Count

        from submissions.models import Submission

        while time.monotonic() - t0 < args.limit:
            open_ = Submission.objects.exclude(
                status__in=["valid", "invalid", "failed", "published", "withdrawn"]
            ).count()
            if len(done) + len(upload_errors) == len(packed) and open_ == 0:
                break
            time.sleep(0.5)
        all_final = time.monotonic() - t0
        readers.stop()
        before = readers.between(before_start, t0)
        during = readers.between(t0, t0 + all_final)

        print("\nuploads (seconds after the rush began, completion answered):")
        for name, (at, _, _) in sorted(done.items(), key=lambda x: x[1][0]):
            print(f"  {name:40} {at:7.1f}")
        first = min((at for at, _, _ in done.values()), default=0.0)
        print(
            f"all {len(done)} received in {max((a for a, _, _ in done.values()), default=0):.1f} s"
        )
        print(
            f"all final {all_final:.1f} s after the rush began ({all_final - first:.1f} s after the first arrived)"
        )
        p50b, p95b = quantile(before, 0.5) * 1000, quantile(before, 0.95) * 1000
        p50d, p95d = quantile(during, 0.5) * 1000, quantile(during, 0.95) * 1000
        print(f"readers before: {len(before)} answers, p50 {p50b:.0f} ms, p95 {p95b:.0f} ms")
        print(f"readers during: {len(during)} answers, p50 {p50d:.0f} ms, p95 {p95d:.0f} ms")
        print(f"p95 during / before: {p95d / p95b:.1f}x (target: within 5x)")
        errors = readers.errors + upload_errors
        print(f"errors to clients: {len(errors)}")
        for path, status in errors[:20]:
            print(f"  {path}: {status}")
        problems = check_database(done)
        by_status = dict(Submission.objects.values_list("status").annotate(n=Count("pk")))
        print(f"submissions: {by_status}")
        print(
            "database check: "
            + (
                "every upload stored once, every run checked once, all final"
                if not problems
                else "PROBLEMS"
            )
        )
        for problem in problems:
            print(f"  {problem}")
        return 0 if not problems and not errors and p95d <= 5 * p95b else 1
    finally:
        for process in processes:
            try:
                stop(process)
            except (OSError, subprocess.TimeoutExpired):
                pass
        for log in folder.glob("worker*.log"):  # kept for a look after the run
            shutil.copy(log, Path(tempfile.gettempdir()) / f"rush-{log.name}")
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
