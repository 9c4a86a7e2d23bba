"""Faults an operator meets, with a real worker, beat, PostgreSQL and a Redis the test stops and starts."""

import contextlib
import os
import signal
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from submissions.models import Submission

from ..bundles import bundle_bytes
from ..server import free_port
from ..worker import QUICK_RECOVERY, ROOT, Worker, require_services


class PrivateRedis:
    """A Redis server of this test's own, on a free port: the one the other tests use stays up."""

    def __init__(self, folder):
        self.port, self.folder, self.process = free_port(), folder, None
        self.url = f"redis://127.0.0.1:{self.port}/0"

    def start(self):
        self.process = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.folder),
            ],
            stdout=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 20
        while (
            subprocess.run(["redis-cli", "-p", str(self.port), "ping"], capture_output=True).stdout
            != b"PONG\n"
        ):
            assert time.monotonic() < deadline, "the private Redis did not start"
            time.sleep(0.1)

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=20)


@contextlib.contextmanager
def celery_client_at(url, monkeypatch):
    """Point this process's Celery client (the one the upload view queues with) at another broker."""
    from portal.celery import app

    def reset_pools():  # made lazily from the broker's URL
        app._pool = None
        app.amqp._producer_pool = None

    monkeypatch.setenv("CELERY_BROKER_URL", url)  # Celery reads it before its own configuration
    reset_pools()
    try:
        yield
    finally:
        monkeypatch.undo()
        reset_pools()


@pytest.fixture
def private_redis(tmp_path):
    if subprocess.run(["which", "redis-server"], capture_output=True).returncode:
        pytest.skip("needs redis-server on the PATH to start a Redis of the test's own")
    redis = PrivateRedis(tmp_path)
    redis.start()
    yield redis
    redis.stop()


@pytest.mark.services
@pytest.mark.django_db(transaction=True)  # the worker process reads the upload
def test_an_upload_while_the_broker_is_down_is_kept_queued_and_runs_within_a_minute_of_its_return(
    rounds, cast, client, settings, tmp_path, private_redis, monkeypatch
):
    require_services()
    media = tmp_path / "media"
    media.mkdir()
    settings.MEDIA_ROOT = media
    worker = Worker(
        media, concurrency=1, name="faults", beat=True, broker=private_redis.url, env=QUICK_RECOVERY
    )
    try:
        with celery_client_at(private_redis.url, monkeypatch):
            private_redis.stop()
            client.force_login(cast["member_a"])
            asked = time.monotonic()
            response = client.post(
                "/submissions/upload/",
                {
                    "round": "training-v5.1",
                    "bundle": SimpleUploadedFile("acme.tgz", bundle_bytes(tmp_path)),
                },
            )
            assert response.status_code == 302, response.content[:500]
            print(f"upload answered in {time.monotonic() - asked:.1f} s with the broker down")
            page = client.get(response["Location"]).content.decode()
            assert "Queued: the task queue is not answering" in page
            submission = Submission.objects.get()
            assert submission.status == "received" and submission.queue_pending
            assert (media / submission.bundle.name).is_file()

            time.sleep(3)
            private_redis.start()
            back = time.monotonic()
            while Submission.objects.get(pk=submission.pk).status == "received":
                assert time.monotonic() - back < 75, (
                    "not started within a minute of the broker's return"
                )
                time.sleep(0.5)
            started = time.monotonic() - back
            while not Submission.objects.get(pk=submission.pk).is_final:
                assert time.monotonic() - back < 180, "started but not finished"
                time.sleep(0.5)
            print(
                f"started {started:.0f} s and finished {time.monotonic() - back:.0f} s after the broker's return"
            )
        submission.refresh_from_db()
        assert submission.status == "valid", submission.message
        assert not submission.queue_pending
    finally:
        worker.stop()


@pytest.mark.services
@pytest.mark.django_db(transaction=True)  # the worker process reads the upload
def test_a_chunked_upload_while_the_broker_is_down_is_kept_and_checked_once_it_is_back(
    rounds, cast, client, settings, tmp_path, private_redis, monkeypatch
):
    """Through API v1 in parts: completion answers at once, the submission waits with the reason in its
    steps, and the sweeper hands it over when Redis returns."""
    import hashlib

    from accounts.models import ApiToken

    require_services()
    media = tmp_path / "media"
    media.mkdir()
    settings.MEDIA_ROOT = media
    auth = {"HTTP_AUTHORIZATION": f"Token {ApiToken.create(cast['member_a'], 'ci')[1]}"}
    data = bundle_bytes(tmp_path)
    worker = Worker(
        media,
        concurrency=1,
        name="faults-api",
        beat=True,
        broker=private_redis.url,
        env=QUICK_RECOVERY,
    )
    try:
        with celery_client_at(private_redis.url, monkeypatch):
            private_redis.stop()
            uid = client.post(
                "/api/v1/uploads/",
                {"round": "training-v5.1", "name": "acme.tgz", "size": len(data)},
                content_type="application/json",
                **auth,
            ).json()["uid"]
            half = len(data) // 2
            for offset, part in ((0, data[:half]), (half, data[half:])):
                assert (
                    client.patch(
                        f"/api/v1/uploads/{uid}/",
                        part,
                        content_type="application/offset+octet-stream",
                        HTTP_UPLOAD_OFFSET=str(offset),
                        **auth,
                    ).status_code
                    == 204
                )
            asked = time.monotonic()
            done = client.post(
                f"/api/v1/uploads/{uid}/complete/",
                {"sha256": hashlib.sha256(data).hexdigest()},
                content_type="application/json",
                **auth,
            )
            assert done.status_code == 201, done.content
            print(f"completion answered in {time.monotonic() - asked:.1f} s with the broker down")
            status = client.get(f"/api/v1/submissions/{done.json()['uid']}/", **auth).json()
            unpacked = status["steps"][1]
            assert unpacked["state"] == "waiting"
            assert "task queue is not answering" in unpacked["detail"]
            submission = Submission.objects.get()
            assert submission.queue_pending and (media / submission.bundle.name).is_file()

            private_redis.start()
            back = time.monotonic()
            while not Submission.objects.get(pk=submission.pk).is_final:
                assert time.monotonic() - back < 180, "not checked within 3 minutes of the return"
                time.sleep(0.5)
            print(f"checked {time.monotonic() - back:.0f} s after the broker's return")
        submission.refresh_from_db()
        assert submission.status == "valid" and not submission.queue_pending
    finally:
        worker.stop()


def _processes_with(marker: str) -> list[int]:
    """Pids of the processes whose environment holds the marker (every process `make run` started)."""
    found = []
    for environ in Path("/proc").glob("[0-9]*/environ"):
        try:
            if marker.encode() in environ.read_bytes():
                found.append(int(environ.parent.name))
        except OSError:  # gone meanwhile, or not ours to read
            pass
    return found


def _assert_none_left(marker: str, within_s: float) -> None:
    deadline = time.monotonic() + within_s
    while (left := _processes_with(marker)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert left == [], f"left behind: {left}"


def _kill_all(marker: str) -> None:
    for pid in _processes_with(marker):
        os.kill(pid, signal.SIGKILL)


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


@pytest.mark.django_db
def test_pages_and_the_api_answer_while_the_shared_caches_redis_is_down(
    rounds, client, settings, private_redis, caplog, monkeypatch
):
    from portal.backends import cache

    from .. import leaderboard_factories as make

    monkeypatch.setattr(cache, "_warned_at", -cache.WARN_EVERY_S)  # warned by no earlier test
    settings.CACHES = {
        "default": {"BACKEND": "portal.backends.cache.RedisCache", "LOCATION": private_redis.url}
    }
    v51 = rounds["training-v5.1"]
    make.result(make.system(v51, "Acme", "alpha"), "retinanet", 10)
    assert "alpha" in client.get("/r/training-v5.1/").content.decode()
    private_redis.stop()
    # Warm (this process's copy), new (built from the database), and the API with its throttling.
    for path in ("/r/training-v5.1/", "/r/training-v5.1/?sort=b.retinanet", "/api/v1/rounds/"):
        response = client.get(path)
        assert response.status_code == 200, path
    assert client.get("/api/v1/results/?round=training-v5.1").json()["count"] == 1
    assert "The shared cache (CACHE_URL) does not answer" in caplog.text


@pytest.mark.skipif(
    not Path("/proc/self/environ").exists(), reason="finds the processes through /proc (Linux)"
)
@pytest.mark.parametrize("how", ["kill", "ctrl-c"])
def test_make_run_stopped_leaves_no_process_behind(tmp_path, how):
    """The embedded portal as a newcomer runs it (a generated demo round, SQLite, the file-system broker),
    stopped by `kill` (SIGTERM to make) or by Ctrl-C in its terminal (SIGINT to its process group)."""
    marker = f"PORTAL_TEST_MARKER={uuid.uuid4().hex}"
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DATABASE_URL", "CELERY_BROKER_URL", "MEDIA_ROOT", "DEBUG")
    }
    env.update(
        VAR_DIR=str(tmp_path / "var"),
        MLPERF_SHARED_DIR=str(tmp_path / "no-rounds"),
        PORTAL_TEST_MARKER=marker.split("=", 1)[1],
    )
    port = free_port()
    make = subprocess.Popen(
        ["make", "-s", "run", f"PORT={port}"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 300
        while not _answers(f"http://127.0.0.1:{port}/"):
            assert make.poll() is None, "make run exited before serving"
            assert time.monotonic() < deadline, "make run did not serve within 5 minutes"
            time.sleep(0.5)
        running = _processes_with(marker)
        assert len(running) >= 4, running  # make, the supervisor, the web server, the worker, beat

        if how == "kill":
            make.send_signal(signal.SIGTERM)
        else:
            os.killpg(make.pid, signal.SIGINT)
        make.wait(timeout=60)
        _assert_none_left(marker, within_s=10)
    finally:
        _kill_all(marker)


def test_the_supervised_processes_stop_when_the_supervisor_is_killed(tmp_path):
    marker = f"PORTAL_TEST_MARKER={uuid.uuid4().hex}"
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DATABASE_URL", "CELERY_BROKER_URL", "MEDIA_ROOT")
    }
    env.update(VAR_DIR=str(tmp_path / "var"), PORTAL_TEST_MARKER=marker.split("=", 1)[1])
    supervisor = subprocess.Popen(
        [sys.executable, "bin/serve.py", str(free_port())],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while len(_processes_with(marker)) < 4:  # the supervisor and its three children
            assert time.monotonic() < deadline, _processes_with(marker)
            time.sleep(0.2)
        supervisor.kill()  # SIGKILL: no handler runs; the kernel tells the children
        supervisor.wait()
        _assert_none_left(marker, within_s=30)
    finally:
        _kill_all(marker)
