"""The portal served by gunicorn on loopback, against the test database, as a site serves it: with the
deployment's settings (gunicorn.conf.py, read from the project's folder: threaded workers), two worker
processes unless told otherwise; its access log names the process that answered each request. With
`behind_nginx`, the README's whole deployment: Debian's nginx (deploy/nginx.conf) in front. And what
the tests of served processes share: a free loopback port (free_port), the Redis a served portal may use
as its shared cache (cache_url)."""

import http.client
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from django.conf import settings

from bench.serving import nginx

from .worker import ROOT, database_url, stop_group

ACCESS = re.compile(r"^<(?P<pid>\d+)> (?P<status>\d{3}) (?P<method>\S+) (?P<path>\S+)$")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cache_url() -> str:
    """The Redis database the tests may use as the shared cache (TEST_CACHE_URL; bin/run_tests.py sets it
    when it answers); the test skips, saying why, without one."""
    import redis

    url = os.environ.get("TEST_CACHE_URL", "")
    if not url:
        pytest.skip(
            "needs a Redis for the shared cache: TEST_CACHE_URL is not set (bin/run_tests.py sets it "
            "when the Redis it names answers, by default redis://127.0.0.1:6379/14)"
        )
    try:
        redis.Redis.from_url(url, socket_connect_timeout=2).ping()
    except redis.RedisError as error:
        pytest.skip(f"the shared cache's Redis at TEST_CACHE_URL does not answer ({error})")
    return url


class Gunicorn:
    def __init__(
        self,
        folder: Path,
        media_root: Path,
        workers: int = 2,
        worker_class: str = "",
        behind_nginx: bool = False,
        **env,
    ):
        """`env`: settings of the served portal's own (CACHE_URL, API_THROTTLE_ANON ...).
        `worker_class`: "sync" for get_on_two_processes, else "" for the deployment's (gunicorn.conf.py).
        `behind_nginx`: nginx in front, as deployed (API_NUM_PROXIES=1); skips, saying why, without it."""
        if behind_nginx and not shutil.which("nginx"):
            pytest.skip(
                "needs Debian's nginx, the deployment's front (make server-deps installs it)"
            )
        folder.mkdir(parents=True, exist_ok=True)
        self.access = folder / "access.log"
        self.access.write_text("")
        self.port = free_port()
        gunicorn_port = free_port() if behind_nginx else self.port
        if behind_nginx:
            env = {"API_NUM_PROXIES": "1", **env}
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = open(folder / "gunicorn.log", "w")
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "portal.wsgi:application",
                "-b",
                f"127.0.0.1:{gunicorn_port}",
                "-w",
                str(workers),
                "--access-logfile",
                str(self.access),
                "--access-logformat",
                "%(p)s %(s)s %(m)s %(U)s",
                # gunicorn takes sync workers with more than one thread (gunicorn.conf.py) as gthread.
                *(["--worker-class", "sync", "--threads", "1"] if worker_class == "sync" else []),
            ],
            cwd=ROOT,
            env={
                **os.environ,
                "DATABASE_URL": database_url(),
                "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
                "MEDIA_ROOT": str(media_root),
                "DEBUG": "0",
                "SECRET_KEY": settings.SECRET_KEY,  # the sessions the tests make are signed with it
                "LOG_LEVEL": "ERROR",
                **env,
            },
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.nginx = None
        if behind_nginx:  # its files in a folder its workers (nobody) reach, unlike pytest's
            self.nginx_folder = Path(tempfile.mkdtemp(prefix="nginx-"))
            self.nginx_folder.chmod(0o755)
            self.nginx = nginx(self.nginx_folder, self.port, gunicorn_port, self.log)
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{self.url}/", timeout=2).read()
                break
            except urllib.error.HTTPError as error:  # an answer all the same: it is up ...
                if error.code != 502:  # ... unless nginx's, before gunicorn listens
                    break
            except OSError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"gunicorn did not start; see {self.log.name}") from None
            time.sleep(0.2)

    def answered(self) -> list[dict]:
        """The requests answered so far, oldest first: pid, status, method, path (without the query)."""
        lines = self.access.read_text().splitlines()
        return [m.groupdict() for m in map(ACCESS.match, lines) if m]

    def get(self, path: str, headers: dict | None = None) -> http.client.HTTPResponse:
        """GET `path`; the answer, read whole (`.body`), whatever its status."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        conn.request("GET", path, headers=headers or {})
        response = conn.getresponse()
        response.body = response.read()
        conn.close()
        return response

    def get_on_two_processes(
        self, path: str, headers: dict | None = None
    ) -> list[http.client.HTTPResponse]:
        """GET `path` twice, answered by two different worker processes: the first request is sent
        half (a process takes it and waits for the rest) while the second is sent whole, so another
        process answers that one; then the first is finished. Answers in the order they were sent.
        Only with sync workers (worker_class="sync"), where a half-sent request holds a process: what
        the deployment's threaded workers no longer let a client do."""
        held = socket.create_connection(("127.0.0.1", self.port), timeout=30)
        held.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n".encode())
        second = self.get(path, headers)
        rest = "".join(f"{name}: {value}\r\n" for name, value in (headers or {}).items())
        held.sendall(f"{rest}Connection: close\r\n\r\n".encode())
        first = http.client.HTTPResponse(held)
        first.begin()
        first.body = first.read()
        held.close()
        return [first, second]

    def stop(self):
        if self.nginx is not None:
            stop_group(self.nginx)
            shutil.rmtree(self.nginx_folder, ignore_errors=True)
        stop_group(self.process)
        self.log.close()
