"""A real `celery worker` process against the test database and the Redis broker."""

import os
import resource
import signal
import subprocess
import sys
import time
from functools import partial
from pathlib import Path
from urllib.parse import quote

import pytest
from django.conf import settings
from django.db import connection

from .conftest import ROOT


def services_missing() -> str | None:
    """Why the tests cannot use a real worker here (they run on PostgreSQL with a Redis broker), or None."""
    if connection.vendor != "postgresql":
        return f"needs PostgreSQL (running on {connection.vendor}; `make test` uses it when it answers)"
    if not settings.CELERY_BROKER_URL.startswith("redis://"):
        return f"needs a Redis broker (CELERY_BROKER_URL is {settings.CELERY_BROKER_URL})"
    return None


def require_services():
    """Skip, saying why, unless the tests run on PostgreSQL with a Redis broker."""
    reason = services_missing()
    if reason:
        pytest.skip(reason)


def purge_broker():
    import redis

    redis.Redis.from_url(settings.CELERY_BROKER_URL).flushdb()


# Recovery intervals for the tests that wait for it (a killed worker, a broker back from an outage): with the
# site's defaults (portal/settings.py) each such test waited half a minute to a minute for the sweeper's
# clock and a lease's expiry. tests/portal/test_settings.py checks that the defaults keep the bounds they promise.
# A live worker's lease is renewed six times before it can expire: a process held up for a few seconds on a busy
# machine is not taken for dead. (10 s and beats of 2 s until issue 35: the tests of killed workers waited 4-5 s
# longer for each kill, 10-11 s for two.)
QUICK_RECOVERY = {"LEASE_BEAT_S": "1", "LEASE_EXPIRY_S": "6", "SWEEP_EVERY_S": "1"}


def stop_group(process: subprocess.Popen, timeout: float = 20) -> None:
    """End a process started in its own session and all it started: SIGTERM, then SIGKILL after
    `timeout` seconds."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=timeout)


def _cap_memory(size: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (size, size))


def peak_memory(pid: int) -> int:
    """The most memory the process `pid` has held, resident (VmHWM), in bytes."""
    status = Path(f"/proc/{pid}/status").read_text()
    return (
        int(next(line for line in status.splitlines() if line.startswith("VmHWM:")).split()[1])
        * 1024
    )


def database_url(port: int | None = None) -> str:
    """The test database's URL for a process the test starts, with the suite's connection options
    (bin/run_tests.py: synchronous_commit off); `port`: reach it there instead (a proxy)."""
    db = connection.settings_dict
    options = db.get("OPTIONS", {}).get("options")
    query = f"?options={quote(options)}" if options else ""
    return f"postgres://{db['USER']}@{db['HOST']}:{port or db['PORT']}/{db['NAME']}{query}"


class Worker:
    """Starts `celery -A portal worker` with the test's database and media folder."""

    def __init__(
        self,
        media_root: Path,
        concurrency: int = 2,
        name: str = "w1",
        *,
        beat: bool = False,
        broker: str | None = None,
        env: dict[str, str] | None = None,
        database_port: int | None = None,
        queues: str = "ingest,checks,clock,celery",
        memory_cap: int | None = None,
    ):
        """`beat`: run the sweeper's clock inside this worker (`-B`), as a site's one beat would; `env`: more
        settings for it (QUICK_RECOVERY); `database_port`: reach the test database there (a proxy); `queues`: what
        it consumes (a site's clock worker: "clock" alone); `memory_cap`: the address space each of its processes
        may never pass (a hard RLIMIT_AS), so that a test of a bundle that takes memory without bound takes no
        more of the machine than that where the portal's own limits fail."""
        more = env or {}
        env = dict(os.environ)
        env.update(
            DATABASE_URL=database_url(database_port),
            CELERY_BROKER_URL=broker or settings.CELERY_BROKER_URL,
            MEDIA_ROOT=str(media_root),
            CELERY_TASK_ALWAYS_EAGER="0",
            EMAIL_FILE_PATH=str(media_root.parent / "mail"),  # the .eml files of the embedded mail
            # Celery's Django fix-up runs Django's system checks at each worker's start: 0.29 s of CPU of its
            # 2.06 s (median), in each of the 45 workers a run starts. tests/portal/test_checks.py runs them.
            CELERY_SKIP_CHECKS="1",
        )
        env.update(more)  # the test's own settings win, EMAIL_FILE_PATH included
        self.log = open(media_root.parent / f"worker-{name}.log", "w")
        clock = ["-B", "-s", str(media_root.parent / f"beat-{name}")] if beat else []
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "portal",
                "worker",
                "-Q",
                queues,
                "-c",
                str(concurrency),
                "--pool=prefork",
                "-n",
                f"{name}@%h",
                "--loglevel=INFO",
                "--without-mingle",  # its 1 s wait for neighbours at each start, as the agents' tests
                "--without-gossip",
                *clock,
            ],
            cwd=ROOT,
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=None if memory_cap is None else partial(_cap_memory, memory_cap),
        )
        self._wait_ready()

    def _wait_ready(self, timeout: float = 60):
        """Until the worker logs `<name> ready.`: a test that queues work before then may find one worker
        doing everything while the other is still importing."""
        deadline = time.monotonic() + timeout
        while " ready." not in Path(self.log.name).read_text(errors="replace"):
            if self.process.poll() is not None:
                raise RuntimeError(f"the worker exited at start-up; see {self.log.name}")
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"the worker was not ready after {timeout:.0f} s; see {self.log.name}"
                )
            time.sleep(0.1)

    def pool(self) -> list[int]:
        """The process ids of its pool processes (the worker's children)."""
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
        return [int(pid) for pid in children.read_text().split()]

    def kill(self):
        """SIGKILL the worker and its pool processes at once, as a machine that died: no task ends."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=20)

    def stop(self):
        stop_group(self.process)
        if not self.log.closed:
            self.log.close()


# Fixtures for a module whose tests share one real worker; import them into the module:
# `from .worker import media, media_root, worker` (with noqa F401: ruff sees them unused).


@pytest.fixture(scope="module")
def media_root(tmp_path_factory):
    return tmp_path_factory.mktemp("worker") / "media"


@pytest.fixture
def media(settings, media_root):  # one media folder shared with the worker process
    settings.MEDIA_ROOT = media_root
    return media_root


@pytest.fixture(scope="module")
def worker(django_db_setup, django_db_blocker, media_root):
    with django_db_blocker.unblock():
        require_services()
        purge_broker()
        media_root.mkdir(parents=True, exist_ok=True)
        # the tests' webhook receivers (portal-submit --wait-webhook) listen on loopback
        process = Worker(media_root, env={"NOTIFY_WEBHOOKS_TO_INTERNAL": "1"})
    yield process
    process.stop()
