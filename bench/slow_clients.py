#!/usr/bin/env python
"""Slow and stalled clients (issue 34, item 5): other clients' p95 while 64 half-open connections are held.

1. A fresh PostgreSQL database (SLOW_DATABASE_URL), migrated, with the rounds' catalogue; the cache on Redis
   (SLOW_CACHE_URL, emptied), as the README deploys it.
2. For each front (--fronts, in turn, the same minutes): the site served by it, then
   - idle: --clients threads, each request on a new connection (new visitors), loading /rounds/, / and
     /api/v1/rounds/ in turn for --idle seconds;
   - held: the same clients for --hold seconds while --held connections are held half-open, half of them
     having sent part of a request head (and one more header line every 5 s, as slowloris does), half
     having sent nothing; any the server closes is opened again at once, so --held are held throughout.
   A request not answered within 30 s counts as 30 s and as an error.
3. Prints, per front, the idle p95, the p95 while held, their ratio, the errors and how often the server
   closed a held connection. Target: ratio within 2x.

Fronts: `nginx` is the README's deployment: Debian's nginx (deploy/nginx.conf) buffering requests in front
of `gunicorn portal.wsgi` (gunicorn.conf.py: 2 processes of 8 threads); `gthread` is that gunicorn alone,
facing the clients (the deployment before issue 34); `asgi` is gunicorn's own asyncio worker (`-k asgi`,
2 processes) serving Django's ASGI handler.
"""

import argparse
import http.client
import os
import selectors
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.serving import free_port, nginx  # noqa: E402

DATABASE = os.environ.get("SLOW_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/portal_slow")
CACHE = os.environ.get("SLOW_CACHE_URL", "redis://127.0.0.1:6379/5")  # make test uses 8-15
PATHS = ["/rounds/", "/", "/api/v1/rounds/"]
ANSWER_WITHIN_S = 30.0
DRIP_EVERY_S = 5.0


def fresh_database(url: str) -> None:
    from urllib.parse import urlparse

    import psycopg

    parsed = urlparse(url)
    name = parsed.path.lstrip("/")
    with psycopg.connect(parsed._replace(path="/postgres").geturl(), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def setup(env: dict) -> None:
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    load = "from leaderboard.catalogue.rounds import load_all; load_all()"
    subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", load], cwd=ROOT, env=env, check=True
    )


def gunicorn(app: str, bind: str, *more: str) -> list[str]:
    return [sys.executable, "-m", "gunicorn", app, "-b", bind, "--log-level", "warning", *more]


def start(front: str, folder: Path, env: dict) -> tuple[list[subprocess.Popen], int]:
    """The site served by `front`: its processes (each the leader of its own group) and its port."""
    port = free_port()
    upstream = free_port() if front == "nginx" else port
    if front in ("gthread", "nginx"):  # gunicorn as gunicorn.conf.py sets it
        command = gunicorn("portal.wsgi", f"127.0.0.1:{upstream}")
    elif front == "asgi":
        app = "django.core.asgi:get_asgi_application()"
        command = gunicorn(app, f"127.0.0.1:{port}", "-k", "asgi", "-w", "2")
    else:
        raise SystemExit(f"unknown front {front!r}")
    log = open(folder / f"{front}.log", "w")
    processes = [
        subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
    ]
    if front == "nginx":  # deploy/nginx.conf on `port`, in front of that gunicorn
        processes.append(nginx(folder / f"nginx-{port}", port, upstream, log))
    for _ in range(300):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/rounds/", timeout=5) as answer:
                answer.read()
            break
        except OSError:
            time.sleep(0.2)
    else:
        stop(processes)
        raise SystemExit(f"{front} did not start: see {folder}")
    return processes, port


def stop(processes: list[subprocess.Popen]) -> None:
    for process in processes:
        try:
            os.killpg(process.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    for process in processes:
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


class Clients:
    """`count` threads, each loading PATHS in turn, every request on a new connection; each request's
    (start, seconds, error or None)."""

    def __init__(self, port: int, count: int):
        self.port, self.samples, self.running = port, [], True
        self.lock = threading.Lock()
        self.threads = [threading.Thread(target=self._load, args=(n,)) for n in range(count)]
        for thread in self.threads:
            thread.start()

    def _load(self, n: int):
        while self.running:
            path = PATHS[n % len(PATHS)]
            n += 1
            started = time.monotonic()
            error = None
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=ANSWER_WITHIN_S)
                conn.request("GET", path)
                answer = conn.getresponse()
                answer.read()
                conn.close()
                if answer.status != 200:
                    error = f"{path}: {answer.status}"
            except (OSError, http.client.HTTPException) as e:
                error = f"{path}: {type(e).__name__}: {e}"
            took = time.monotonic() - started
            if error and "timed out" in error:
                took = max(took, ANSWER_WITHIN_S)
            with self.lock:
                self.samples.append((started, took, error))

    def between(self, start: float, end: float) -> list[tuple[float, str | None]]:
        with self.lock:
            return [(took, error) for at, took, error in self.samples if start <= at < end]

    def stop(self):
        self.running = False
        for thread in self.threads:
            thread.join()


class HalfOpen:
    """`count` connections held half-open by one thread: even ones sent part of a request head and drip
    one more header line every DRIP_EVERY_S, odd ones sent nothing. One the server closes (or answers) is
    opened again at once; `reopened` counts those."""

    def __init__(self, port: int, count: int):
        self.port, self.count, self.reopened, self.running = port, count, 0, True
        self.selector = selectors.DefaultSelector()
        self.thread = threading.Thread(target=self._hold)
        self.thread.start()

    def _open(self, n: int) -> None:
        try:
            conn = socket.create_connection(("127.0.0.1", self.port), timeout=5)
            if n % 2 == 0:
                conn.sendall(b"GET /rounds/ HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            conn.setblocking(False)
            self.selector.register(conn, selectors.EVENT_READ, n)
        except OSError:
            pass  # the backlog is full: tried again at the next round

    def _hold(self):
        for n in range(self.count):
            self._open(n)
        dripped = time.monotonic()
        while self.running:
            for key, _ in self.selector.select(timeout=0.5):
                self._reopen(key)
            held = {key.data for key in self.selector.get_map().values()}
            for n in set(range(self.count)) - held:
                self._open(n)
            if time.monotonic() - dripped > DRIP_EVERY_S:
                dripped = time.monotonic()
                for key in list(self.selector.get_map().values()):
                    if key.data % 2 == 0:
                        try:
                            key.fileobj.send(b"X-Slow: 1\r\n")
                        except OSError:
                            self._reopen(key)
        for key in list(self.selector.get_map().values()):
            self.selector.unregister(key.fileobj)
            key.fileobj.close()

    def _reopen(self, key) -> None:
        self.selector.unregister(key.fileobj)
        key.fileobj.close()
        self.reopened += 1
        self._open(key.data)

    def stop(self):
        self.running = False
        self.thread.join()


class Connections:
    """The most connections PostgreSQL held to `url`'s database at once, sampled twice a second."""

    def __init__(self, url: str):
        from urllib.parse import urlparse

        self.url, self.name = url, urlparse(url).path.lstrip("/")
        self.most, self.running = 0, True
        self.thread = threading.Thread(target=self._sample)
        self.thread.start()

    def _sample(self):
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as conn:
            while self.running:
                query = "SELECT count(*) - 1 FROM pg_stat_activity WHERE datname = %s"
                self.most = max(self.most, conn.execute(query, [self.name]).fetchone()[0])
                time.sleep(0.5)

    def stop(self) -> int:
        self.running = False
        self.thread.join()
        return self.most


def p95(samples: list[tuple[float, str | None]]) -> float:
    values = [took for took, _ in samples]
    return statistics.quantiles(values, n=100)[94] if len(values) > 1 else float("nan")


def measure(front: str, folder: Path, env: dict, args) -> dict:
    processes, port = start(front, folder, env)
    try:
        for path in PATHS:  # warm: the first answers fill the cache
            urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=30).read()
        connections = Connections(DATABASE)
        clients = Clients(port, args.clients)
        t0 = time.monotonic()
        time.sleep(args.idle)
        t1 = time.monotonic()
        held = HalfOpen(port, args.held)
        time.sleep(args.hold)
        t2 = time.monotonic()
        held.stop()
        clients.stop()
        idle, loaded = clients.between(t0, t1), clients.between(t1, t2)
        return {
            "front": front,
            "idle": p95(idle),
            "held": p95(loaded),
            "answers": (len(idle), len(loaded)),
            "errors": [error for _, error in idle + loaded if error],
            "reopened": held.reopened,
            "database": connections.stop(),
        }
    finally:
        stop(processes)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--fronts", default="nginx", help="comma-separated, measured in turn: nginx, gthread, asgi"
    )
    parser.add_argument("--held", type=int, default=64, help="half-open connections held")
    parser.add_argument("--hold", type=float, default=60.0, help="seconds they are held")
    parser.add_argument("--idle", type=float, default=20.0, help="seconds measured without them")
    parser.add_argument(
        "--clients", type=int, default=4, help="other clients, one request at a time"
    )
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="slow-clients-"))
    folder.chmod(0o755)  # nginx's workers (nobody) reach their temporary files in it
    import redis

    redis.Redis.from_url(CACHE).flushdb()
    fresh_database(DATABASE)
    env = {
        **os.environ,
        "DATABASE_URL": DATABASE,
        "CACHE_URL": CACHE,
        "VAR_DIR": str(folder / "var"),
        "MEDIA_ROOT": str(folder / "media"),
        "DEBUG": "0",
        "SECRET_KEY": "slow-clients-bench-only",
        "LOG_LEVEL": "ERROR",
        "DJANGO_SETTINGS_MODULE": "portal.settings",
        # The clients stand for many visitors: one address here, past the per-address limits.
        "API_THROTTLE_ANON": "1000000/minute",
        "PAGE_THROTTLE_ANON": "1000000/minute",
    }
    setup(env)
    results = []
    try:
        for front in args.fronts.split(","):
            print(
                f"{front}: {args.idle:.0f} s idle, then {args.held} held for {args.hold:.0f} s",
                flush=True,
            )
            results.append(measure(front, folder, env, args))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(
        f"\n{'front':10} {'idle p95':>9} {'held p95':>9} {'ratio':>7} {'answers':>13} errors  reopened  db conns"
    )
    for r in results:
        print(
            f"{r['front']:10} {r['idle'] * 1000:7.0f}ms {r['held'] * 1000:7.0f}ms "
            f"{r['held'] / r['idle']:6.1f}x {r['answers'][0]:6}/{r['answers'][1]:<6} "
            f"{len(r['errors']):6}  {r['reopened']:8}  {r['database']:8}"
        )
        for error in sorted(set(r["errors"]))[:5]:
            print(f"    {error}")
    print("target: held p95 within 2x of idle")
    return 0 if all(r["held"] <= 2 * r["idle"] and not r["errors"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
