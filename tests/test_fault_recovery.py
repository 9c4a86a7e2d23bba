"""Faults the portal recovers from by itself (issue 26, item 9), each injected into real processes: gunicorn,
`celery worker`, PostgreSQL reached through a proxy the test cuts, a small file system that fills up."""

import hashlib
import http.client
import json
import os
import signal
import threading
import time
from pathlib import Path

import psycopg
import pytest
from django.db import connection

from accounts.models import ApiToken
from submissions.models import Submission, Upload

from .server import Gunicorn
from .test_pages import bundle_bytes
from .worker import require_services


def _dsn() -> str:
    db = connection.settings_dict
    return f"host={db['HOST']} port={db['PORT']} user={db['USER']} dbname={db['NAME']}"


def _children(pid: int) -> list[int]:
    return [
        int(child)
        for task in Path(f"/proc/{pid}/task").iterdir()
        for child in (task / "children").read_text().split()
    ]


def _wait(condition, within_s: float, what: str, every_s: float = 0.1):
    deadline = time.monotonic() + within_s
    while not (found := condition()):
        assert time.monotonic() < deadline, f"not within {within_s:.0f} s: {what}"
        time.sleep(every_s)
    return found


class Api:
    """Requests to the live server as a member's CI sends them."""

    def __init__(self, server: Gunicorn, token: str):
        self.server, self.headers = server, {"Authorization": f"Token {token}"}

    def send(self, method: str, path: str, body: bytes = b"", **headers):
        conn = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=120)
        conn.request(method, path, body=body, headers={**self.headers, **headers})
        response = conn.getresponse()
        response.body = response.read()
        conn.close()
        return response

    def json(self, method: str, path: str, data: dict):
        body = json.dumps(data).encode()
        return self.send(method, path, body, **{"Content-Type": "application/json"})

    def upload(self, data: bytes, name: str = "acme.tgz") -> str:
        """Create an upload and send all its bytes; its uid."""
        created = self.json(
            "POST", "/api/v1/uploads/", {"round": "training-v5.1", "name": name, "size": len(data)}
        )
        assert created.status == 201, created.body
        uid = json.loads(created.body)["uid"]
        sent = self.send(
            "PATCH",
            f"/api/v1/uploads/{uid}/",
            data,
            **{"Content-Type": "application/offset+octet-stream", "Upload-Offset": "0"},
        )
        assert sent.status == 204, sent.body
        return uid


@pytest.mark.services
@pytest.mark.commits  # the server process reads the upload
def test_a_complete_cut_off_between_storing_the_bundle_and_its_commit_can_be_sent_again(
    rounds, users, tmp_path
):
    """The web process is killed inside `complete`, after the bundle was put into bundles/ and before the
    submission was committed (held there by a lock the test takes on the submissions' table). The client's
    retry makes the submission, once, from the bytes it sent."""
    require_services()
    media = tmp_path / "media"
    server = Gunicorn(tmp_path / "web", media, workers=1)
    holder = psycopg.connect(_dsn(), autocommit=False)
    try:
        api = Api(server, ApiToken.create(users["owner"], "ci")[1])
        data = bundle_bytes(tmp_path)
        sha = hashlib.sha256(data).hexdigest()
        uid = api.upload(data)
        holder.execute("LOCK TABLE submissions_submission IN SHARE MODE")
        answers = []
        cut = threading.Thread(
            target=lambda: answers.append(
                _attempt(
                    lambda: api.json("POST", f"/api/v1/uploads/{uid}/complete/", {"sha256": sha})
                )
            )
        )
        cut.start()
        _wait(lambda: list(media.glob("bundles/??/*")), 60, "the bundle stored")
        _wait(_waiting_insert, 30, "the submission's INSERT waiting on the lock")
        (process,) = _children(server.process.pid)
        os.kill(process, signal.SIGKILL)
        cut.join(timeout=60)
        assert answers and answers[0] is None  # the connection was cut: no answer
        holder.rollback()  # the lock goes; gunicorn starts another worker process

        again = _wait(
            lambda: _attempt(
                lambda: api.json("POST", f"/api/v1/uploads/{uid}/complete/", {"sha256": sha})
            ),
            60,
            "an answer to the retried complete",
        )
        assert again.status == 201, again.body[:2000]
        submission = Submission.objects.get()
        assert (submission.sha256, submission.size) == (sha, len(data))
        assert hashlib.sha256((media / submission.bundle.name).read_bytes()).hexdigest() == sha
        upload = Upload.objects.get(uid=uid)
        assert upload.status == "complete" and upload.submission_id == submission.pk
        assert not list(media.glob("uploads/*.part"))  # its bytes are kept once, in bundles/
        assert api.json("POST", f"/api/v1/uploads/{uid}/complete/", {"sha256": sha}).status == 200
        assert Submission.objects.count() == 1
    finally:
        holder.close()
        server.stop()


def _attempt(request):
    """The answer, or None where the connection was refused or cut."""
    try:
        return request()
    except (OSError, http.client.HTTPException):
        return None


def _waiting_insert() -> bool:
    with psycopg.connect(_dsn(), autocommit=True) as watcher:
        rows = watcher.execute(
            "SELECT query FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()"
        ).fetchall()
    return any("submissions_submission" in query and "INSERT" in query for (query,) in rows)
