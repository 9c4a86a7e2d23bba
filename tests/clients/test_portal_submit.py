"""portal-submit (clients/portal-submit), installed with pip, against the portal served by gunicorn on loopback
with a real worker: a connection dropped mid-chunk is resumed; it waits, prints the report, and its exit
status says valid (0), blocking findings (1) or refused (2)."""

import hashlib
import io
import os
import shutil
import socket
import subprocess
import sys
import tarfile
import threading
import time

import pytest

from accounts.models import ApiToken
from notifications.models import Webhook
from submissions.models import Submission, Upload
from submissions.synthetic.bundles import SystemSpec, write_bundle

from ..bundles import TARGETS, bundle_bytes
from ..disks import fill, small_disk
from ..server import Gunicorn
from ..worker import ROOT, media, media_root, worker  # noqa: F401


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """`pip install ./clients/portal-submit`, into a folder of its own (no download: the build backend is the
    setuptools already installed)."""
    target = tmp_path_factory.mktemp("portal-submit")
    source = (
        tmp_path_factory.mktemp("source") / "portal-submit"
    )  # the build writes beside its source
    shutil.copytree(ROOT / "clients" / "portal-submit", source)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--target",
            str(target),
            str(source),
        ],
        check=True,
        capture_output=True,
    )
    assert (target / "bin" / "portal-submit").is_file()
    return target


@pytest.fixture(scope="module")
def gunicorn(worker, media_root, tmp_path_factory):  # noqa: F811 - the fixture above
    served = Gunicorn(tmp_path_factory.mktemp("gunicorn"), media_root)
    yield served.url
    served.stop()


class DroppingProxy:
    """Forwards connections to the portal; the first PATCH is cut after `keep` bytes of its body."""

    def __init__(self, target: str, keep: int):
        self.target = ("127.0.0.1", int(target.rsplit(":", 1)[1]))
        self.keep, self.dropped = keep, False
        self.server = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.server.getsockname()[1]}"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            threading.Thread(target=self._connection, args=(client,), daemon=True).start()

    def _connection(self, client):
        upstream = socket.create_connection(self.target)
        threading.Thread(target=self._pipe, args=(upstream, client), daemon=True).start()
        # cut: where this request is cut; -1: not this one, forwarded as it comes.
        head, cut = b"", None
        try:
            while data := client.recv(65536):
                if cut == -1:
                    upstream.sendall(data)
                    continue
                head += data
                if cut is None and b"\r\n\r\n" in head:
                    if not self.dropped and head.startswith(b"PATCH"):
                        self.dropped = True
                        cut = head.index(b"\r\n\r\n") + 4 + self.keep
                    else:
                        upstream.sendall(head)
                        cut = -1
                if cut is not None and cut > 0 and len(head) >= cut:
                    upstream.sendall(head[:cut])
                    break  # the connection drops half-way through the chunk
        except OSError:
            pass
        for s in (client, upstream):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def _pipe(self, source, sink):
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass

    def close(self):
        self.server.close()


def command(installed, url, token, bundle, *args) -> dict:
    """The arguments of subprocess.run or Popen that run the installed portal-submit."""
    return {
        "args": [
            str(installed / "bin" / "portal-submit"),
            "--url",
            url,
            "--token",
            token,
            "--round",
            "training-v5.1",
            str(bundle),
            *args,
        ],
        "env": {
            **os.environ,
            "PYTHONPATH": str(installed),
            "XDG_CACHE_HOME": str(bundle.parent / "cache"),
        },
        "text": True,
    }


def portal_submit(installed, url, token, bundle, *args):
    return subprocess.run(
        **command(installed, url, token, bundle, *args), capture_output=True, timeout=300
    )


@pytest.mark.services
@pytest.mark.django_db(transaction=True)  # a worker process reads the test's rows
def test_a_connection_dropped_mid_chunk_is_resumed_and_the_valid_report_exits_0(
    installed, gunicorn, rounds, cast, tmp_path
):
    bundle = tmp_path / "acme.tgz"
    bundle.write_bytes(bundle_bytes(tmp_path))
    proxy = DroppingProxy(gunicorn, keep=500)
    try:
        done = portal_submit(
            installed,
            proxy.url,
            ApiToken.create(cast["member_a"], "ci")[1],
            bundle,
            "--wait",
            "--chunk-mb",
            "0.001",
            "--poll",
            "0.5",
        )
    finally:
        proxy.close()
    assert done.returncode == 0, done.stdout + done.stderr
    assert proxy.dropped and "connection lost at byte 0" in done.stdout
    submission = Submission.objects.get()
    assert (
        submission.status == "valid"
        and submission.sha256 == hashlib.sha256(bundle.read_bytes()).hexdigest()
    )
    assert f"Submission {submission.uid} (training-v5.1): valid" in done.stdout
    assert "Runs checked: done. checked 5 of 5 runs" in done.stdout


@pytest.mark.services
@pytest.mark.django_db(transaction=True)  # a worker process reads the test's rows
def test_blocking_findings_exit_1_and_are_printed(installed, gunicorn, rounds, cast, tmp_path):
    root = write_bundle(
        tmp_path / "Acme",
        "Acme",
        [SystemSpec("alpha", results={"retinanet": [10.0, 11.0]})],
        TARGETS,
    )
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        tar.add(root, arcname="Acme")
    bundle = tmp_path / "short.tgz"
    bundle.write_bytes(buffer.getvalue())
    done = portal_submit(
        installed,
        gunicorn,
        ApiToken.create(cast["member_a"], "ci")[1],
        bundle,
        "--wait",
        "--poll",
        "0.5",
    )
    assert done.returncode == 1, done.stdout + done.stderr
    submission = Submission.objects.get()
    assert submission.status == "invalid"
    assert (
        "ERROR" in done.stdout
        and f"Submission {submission.uid} (training-v5.1): invalid" in done.stdout
    )


@pytest.mark.services
@pytest.mark.django_db(transaction=True)  # a worker process reads the test's rows
def test_a_refused_upload_exits_2_with_the_reason(installed, gunicorn, rounds, cast, tmp_path):
    bundle = tmp_path / "acme.tgz"
    bundle.write_bytes(b"not really")
    done = portal_submit(installed, gunicorn, "not-a-token", bundle)
    assert done.returncode == 2 and "refused: HTTP 401" in done.stderr
    done = portal_submit(installed, gunicorn, ApiToken.create(cast["staff"], "ci")[1], bundle)
    assert done.returncode == 2 and "member of none" in done.stderr
    assert not Submission.objects.exists()


@pytest.mark.services
@pytest.mark.django_db(transaction=True)  # the served portal reads the token
def test_it_says_when_and_why_it_waits_on_a_full_disk(installed, rounds, cast, tmp_path):
    """It waited in silence when the portal answered 5xx (0.5 s to 15 s, 8 times), whatever Retry-After
    asked. A full disk answers a part 507 with Retry-After: 60: portal-submit prints the portal's reason,
    how long it waits and until when, and waits that long."""
    with small_disk(tmp_path / "media") as media:
        server = Gunicorn(tmp_path / "web", media, workers=1)
        bundle = tmp_path / "acme.tgz"
        bundle.write_bytes(os.urandom(2 << 20))
        fill(media, leave_bytes=256 << 10)
        token = ApiToken.create(cast["member_a"], "ci")[1]
        client = subprocess.Popen(
            **command(installed, server.url, token, bundle), stdout=subprocess.PIPE
        )
        try:
            said = []
            while not any("waiting" in line for line in said):
                line = (
                    client.stdout.readline()
                )  # the test's timeout ends a client that says nothing
                assert line, f"it ended without saying it waits: {said}"
                said.append(line)
            waiting = said[-1]
            assert "HTTP 507" in waiting and "disk is full" in waiting, waiting
            assert "waiting 60 s, until" in waiting and "before trying again" in waiting, waiting
            time.sleep(3)
            assert client.poll() is None  # still waiting, as Retry-After asked
            assert Upload.objects.get().offset < bundle.stat().st_size
        finally:
            client.kill()
            client.wait()
            server.stop()


SECRET = "the-ci-webhook-secret-0123456789"


def free_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as probe:
        return probe.getsockname()[1]


def waiting_for_webhook(port: int, poll: str) -> tuple[str, ...]:
    """portal-submit's options to wait for the webhook on loopback `port`, looking every `poll` seconds too."""
    return ("--wait-webhook", f"127.0.0.1:{port}", "--webhook-secret", SECRET, "--poll", poll)


@pytest.mark.services
@pytest.mark.django_db(transaction=True)  # a worker process reads the test's rows
def test_it_waits_for_the_webhooks_verdict_instead_of_polling(
    installed, gunicorn, rounds, cast, tmp_path
):
    """--wait-webhook: the worker's signed validation.finished wakes it; its looks every --poll seconds
    (300 here) are only a fallback, so a run that ends well before that was woken by the webhook."""
    from portal.celery import app

    bundle = tmp_path / "acme.tgz"
    bundle.write_bytes(bundle_bytes(tmp_path))
    port = free_port()
    Webhook.objects.create(organisation=cast["a"], url=f"http://127.0.0.1:{port}/ci", secret=SECRET)
    # The worker takes no ingest until the client's first look: a verdict before it (a busy machine, once in
    # about ten runs) was found final there, and rightly no event was waited for.
    # limit=1: the module's one worker; without a limit Celery waits out the whole timeout for more replies.
    assert app.control.cancel_consumer("ingest", reply=True, timeout=10, limit=1), (
        "no worker answered"
    )
    started = time.monotonic()
    client = subprocess.Popen(
        **command(
            installed,
            gunicorn,
            ApiToken.create(cast["member_a"], "ci")[1],
            bundle,
            *waiting_for_webhook(port, poll="300"),
        ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    said = []
    try:
        for line in client.stdout:
            said.append(line)
            if len(said) > 1 and said[-2].startswith("receipt:"):
                break  # the line after the receipt: the first look's steps
    finally:
        assert app.control.add_consumer("ingest", reply=True, timeout=10, limit=1), (
            "no worker answered"
        )
    rest, errors = client.communicate(timeout=300)
    assert said and "Unpacked: waiting" in said[-1], said  # the first look found it unfinished
    took = time.monotonic() - started
    stdout = "".join(said) + rest
    assert client.returncode == 0, stdout + errors
    submission = Submission.objects.get()
    assert f"Submission {submission.uid} (training-v5.1): valid" in stdout
    assert "the portal's webhook: validation.finished: Valid: acme.tgz" in stdout
    assert took < 240, took  # never waited for a second look
    verdict = Webhook.objects.get().deliveries.get(kind="validation.finished")
    assert (verdict.state, verdict.last_status, verdict.attempts) == ("delivered", 200, 1)


@pytest.mark.services
@pytest.mark.django_db(transaction=True)  # a worker process reads the test's rows
def test_a_webhook_it_cannot_verify_is_refused_and_it_falls_back_to_polling(
    installed, gunicorn, rounds, cast, tmp_path
):
    bundle = tmp_path / "acme.tgz"
    bundle.write_bytes(bundle_bytes(tmp_path))
    port = free_port()
    Webhook.objects.create(
        organisation=cast["a"], url=f"http://127.0.0.1:{port}/ci", secret="another-secret-of-16+"
    )
    done = portal_submit(
        installed,
        gunicorn,
        ApiToken.create(cast["member_a"], "ci")[1],
        bundle,
        *waiting_for_webhook(port, poll="1"),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "valid" in done.stdout and "the portal's webhook:" not in done.stdout
    answered = Webhook.objects.get().deliveries.get(kind="upload.received")
    assert (answered.last_status, answered.last_answer) == (401, "bad signature")


def test_a_token_that_begins_with_a_dash_is_taken_as_the_token():
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "portal_submit_cli", ROOT / "clients" / "portal-submit" / "portal_submit" / "cli.py"
    )
    cli = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cli)
    assert cli._token_kept_whole(["--url", "u", "--token", "-x1", "b.tgz"]) == [
        "--url",
        "u",
        "--token=-x1",
        "b.tgz",
    ]
