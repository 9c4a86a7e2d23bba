"""Faults the portal recovers from by itself (issue 26, item 9), each injected into real processes: gunicorn,
`celery worker`, PostgreSQL reached through a proxy the test cuts, a small file system that fills up."""

import contextlib
import hashlib
import http.client
import io
import json
import os
import signal
import socket
import tarfile
import threading
import time
import zipfile
from pathlib import Path

import psycopg
import pytest
from django.db import connection

from accounts.models import ApiToken
from submissions.models import Submission, Upload
from submissions.synthetic.bundles import SystemSpec, write_bundle

from ..bundles import TARGETS, bundle_bytes
from ..disks import fill, small_disk
from ..server import Gunicorn, free_port
from ..worker import QUICK_RECOVERY, Worker, database_url, purge_broker, require_services

# Every test here commits its writes: the server and worker processes read the upload.
pytestmark = pytest.mark.django_db(transaction=True)


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


def _verdict(submission: Submission) -> tuple:
    """What a submission was judged: its status, its last validation's findings (as a set) and its runs."""
    from leaderboard.models import Run

    submission.refresh_from_db()
    validation = submission.validations.order_by("-number").first()
    findings = validation.findings.values_list("severity", "rule", "file", "line", "message")
    runs = Run.objects.filter(result__system__submission=submission).count()
    return submission.status, frozenset(findings), runs


def _undisturbed_verdict(submission: Submission) -> tuple:
    """The verdict of the same bundle taken in again, undisturbed, by the pipeline's steps in this process
    (as a command-line import of the same bytes, which organisations leave alone)."""
    from submissions.checking import pipeline

    again = Submission.objects.create(
        round=submission.round,
        bundle=submission.bundle.name,
        original_name=submission.original_name,
        sha256=submission.sha256,
        size=submission.size,
    )
    validation_id, run_ids = pipeline.ingest(again.pk)
    assert pipeline.check_runs(run_ids, validation_id) == [again.pk]
    pipeline.finalize(again.pk)
    return _verdict(again)


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
def test_a_complete_cut_off_between_storing_the_bundle_and_its_commit_can_be_sent_again(
    rounds, cast, tmp_path
):
    """The web process is killed inside `complete`, after the bundle was put into bundles/ and before the
    submission was committed (held there by a lock the test takes on the submissions' table). The client's
    retry makes the submission, once, from the bytes it sent."""
    require_services()
    media = tmp_path / "media"
    server = Gunicorn(tmp_path / "web", media, workers=1)
    holder = psycopg.connect(_dsn(), autocommit=False)
    try:
        api = Api(server, ApiToken.create(cast["member_a"], "ci")[1])
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


class CuttableProxy:
    """A TCP proxy in front of PostgreSQL for the worker's connections: `cut()` drops every connection and
    refuses new ones, as a database that stopped; `restore()` takes them again. The test's own connection
    goes straight to the server, and the other tests' database is never stopped."""

    def __init__(self, host: str, port: int):
        self.target = (host, port)
        self.port = free_port()
        self._pairs: list[socket.socket] = []
        self._lock = threading.Lock()
        self._listener = None
        self.restore()

    def restore(self):
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def _accept(self, listener):
        while True:
            try:
                client, _ = listener.accept()
            except OSError:  # closed by cut()
                return
            try:
                server = socket.create_connection(self.target)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._pairs += [client, server]
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(source, sink):
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        for end in (source, sink):
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)

    def cut(self):
        with contextlib.suppress(
            OSError
        ):  # wakes the thread blocked in accept(), which close() alone does not
            self._listener.shutdown(socket.SHUT_RDWR)
        self._listener.close()
        with self._lock:
            pairs, self._pairs = self._pairs, []
        for end in pairs:
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)
            end.close()


def _many_runs_bundle(tmp_path, packed_as: str = "tgz") -> bytes:
    """Twelve systems of five runs each: 60 runs, checked in batches of four by the worker. As a zip it is
    unpacked file by file, so its ingest lasts long enough to be caught while it unpacks; a tar.gz is read
    from one plain tar, which can be over before a poll of the database sees it."""
    specs = [
        SystemSpec(f"sys{n}", results={"retinanet": [10.0, 12.0, 11.0, 13.0, 9.0]})
        for n in range(12)
    ]
    root = write_bundle(tmp_path / "Acme", "Acme", specs, TARGETS)
    buffer = io.BytesIO()
    if packed_as == "zip":
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
            for path in sorted(root.rglob("*")):
                if path.is_file():
                    zf.write(path, f"Acme/{path.relative_to(root)}")
    else:
        with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
            tar.add(root, arcname="Acme")
    return buffer.getvalue()


@pytest.mark.services
@pytest.mark.parametrize("during", ["ingesting", "checking"])
def test_a_database_outage_of_30_s_mid_step_is_recovered_within_two_minutes_of_its_return(
    rounds, cast, settings, tmp_path, during
):
    """PostgreSQL stops answering the worker (and its beat) for 30 s while it unpacks or checks a submission:
    the tasks give up after their retries and their leases cannot be given back then. Within two minutes of
    the database's return the submission is final, judged as an undisturbed run judges the same bundle, each
    run checked once; the outage is no attempt (each batch that lost the database counted one, and a valid
    submission failed "after 4 attempts while checking runs": issue 34)."""
    from leaderboard.models import Run
    from submissions.intake.submit import submit

    require_services()
    purge_broker()
    media = tmp_path / "media"
    media.mkdir()
    settings.MEDIA_ROOT = media
    db = connection.settings_dict
    proxy = CuttableProxy(db["HOST"], int(db["PORT"]))
    worker = Worker(
        media,
        concurrency=2,
        name=f"outage-{during}",
        beat=True,
        # Leases outlast the outage, as the site's 60 s do: a lease expired during it was no test of them.
        # Lost work is queued again 20 s after its last change (the site: 60 s), sooner after the return.
        env={
            **QUICK_RECOVERY,
            "LEASE_EXPIRY_S": "45",
            "CHECK_BATCH_SIZE": "4",
            "SWEEP_IDLE_S": "20",
        },
        database_port=proxy.port,
    )
    try:
        data = _many_runs_bundle(tmp_path, packed_as="zip")
        submission, _ = submit(
            rounds["training-v5.1"], [data], "acme.zip", user=cast["member_a"], organisation=None
        )
        state = _wait(
            lambda: (s := Submission.objects.get(pk=submission.pk)).status == during and s,
            60,
            f"the submission {during}",
            every_s=0.02,
        )
        proxy.cut()
        print(f"cut while {state.status}, {state.runs_checked} of {state.runs_total} runs checked")
        time.sleep(30)
        proxy.restore()
        back = time.monotonic()
        _wait(
            lambda: Submission.objects.get(pk=submission.pk).is_final,
            120,
            "the submission final after the database's return",
            every_s=0.5,
        )
        print(f"final {time.monotonic() - back:.0f} s after the database's return")
        submission.refresh_from_db()
        assert (submission.status, submission.attempts) == ("valid", 1), submission.message
        validation = submission.validations.get(status="done")
        runs = Run.objects.filter(result__system__submission=submission)
        assert runs.count() == 60 == submission.runs_total == submission.runs_checked
        assert validation.run_checks.count() == 60  # each run once
        assert not submission.validations.filter(status="running").exists()
        worker.stop()
        assert _verdict(submission) == _undisturbed_verdict(submission)
    finally:
        worker.stop()
        proxy.cut()


@pytest.mark.services
def test_a_full_disk_makes_uploads_and_ingest_wait_and_both_go_on_once_it_empties(
    rounds, cast, settings, tmp_path
):
    """MEDIA_ROOT is a small file system that the test fills: a PATCH is answered 507 in JSON with
    Retry-After (not an HTML 500), and the upload resumes at the offset the portal kept once there is room;
    the ingest waits for room instead of failing, and the submission is valid within two minutes of the
    disk's emptying."""
    require_services()
    purge_broker()
    with small_disk(tmp_path / "media") as media:
        settings.MEDIA_ROOT = media
        server = Gunicorn(tmp_path / "web", media, workers=1)
        worker = Worker(  # a reserve that fits the small disk (the site's: 256 MiB)
            media,
            concurrency=1,
            name="disk",
            beat=True,
            # DISK_WAIT_S: the ingest tries again every 2 s (the site's 30), so that the 10 s of a full disk
            # below see it try and wait several times.
            env={**QUICK_RECOVERY, "DISK_RESERVE_BYTES": "65536", "DISK_WAIT_S": "2"},
        )
        try:
            api = Api(server, ApiToken.create(cast["member_a"], "ci")[1])
            data = bundle_bytes(tmp_path)
            sha = hashlib.sha256(data).hexdigest()
            created = api.json(
                "POST",
                "/api/v1/uploads/",
                {"round": "training-v5.1", "name": "acme.tgz", "size": len(data)},
            )
            uid = json.loads(created.body)["uid"]
            filler = fill(media, leave_bytes=len(data) // 4)
            full = api.send(
                "PATCH",
                f"/api/v1/uploads/{uid}/",
                data,
                **{"Content-Type": "application/offset+octet-stream", "Upload-Offset": "0"},
            )
            assert full.status == 507, full.body[:300]
            assert (
                full.getheader("Retry-After") and "disk is full" in json.loads(full.body)["detail"]
            )
            offset = int(api.send("HEAD", f"/api/v1/uploads/{uid}/").getheader("Upload-Offset"))
            filler.unlink()
            rest = api.send(
                "PATCH",
                f"/api/v1/uploads/{uid}/",
                data[offset:],
                **{"Content-Type": "application/offset+octet-stream", "Upload-Offset": str(offset)},
            )
            assert rest.status == 204, rest.body[:300]

            # No room to unpack it: the submission waits, and is never failed for it.
            fill(media, leave_bytes=len(data))
            done = api.json("POST", f"/api/v1/uploads/{uid}/complete/", {"sha256": sha})
            assert done.status == 201, done.body[:300]
            submission = Submission.objects.get()
            _wait(
                lambda: "Waiting for disk space" in Submission.objects.get().message,
                60,
                "waiting for space",
            )
            time.sleep(10)
            assert Submission.objects.get().status == "received"
            (media / "filler").unlink()
            emptied = time.monotonic()
            _wait(
                lambda: Submission.objects.get().is_final,
                120,
                "final after the disk emptied",
                every_s=0.5,
            )
            print(f"final {time.monotonic() - emptied:.0f} s after the disk emptied")
            submission.refresh_from_db()
            assert submission.status == "valid", submission.message
            assert hashlib.sha256((media / submission.bundle.name).read_bytes()).hexdigest() == sha
        finally:
            worker.stop()
            server.stop()


@pytest.mark.services
def test_the_rest_of_a_part_refused_for_a_full_disk_is_not_read_as_the_next_request(
    rounds, cast, settings, tmp_path
):
    """After a 507 the unread rest of the PATCH body stayed on the kept-alive connection and was parsed as
    the next request's head ("Invalid request ... bare LF"): the next request on it got a 400, or the
    connection was reset. Now the rest is read and dropped: the next request on the same connection is
    answered, and the upload holds what was written."""
    require_services()
    with small_disk(tmp_path / "media") as media:
        settings.MEDIA_ROOT = media
        server = Gunicorn(tmp_path / "web", media, workers=1)
        try:
            token = ApiToken.create(cast["member_a"], "ci")[1]
            data = os.urandom(4 << 20)  # bytes that read as no request head
            created = Api(server, token).json(
                "POST",
                "/api/v1/uploads/",
                {"round": "training-v5.1", "name": "acme.tgz", "size": len(data)},
            )
            uid = json.loads(created.body)["uid"]
            fill(media, leave_bytes=256 << 10)
            connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
            auth = {"Authorization": f"Token {token}"}
            connection.request(
                "PATCH",
                f"/api/v1/uploads/{uid}/",
                body=data,
                headers={
                    **auth,
                    "Content-Type": "application/offset+octet-stream",
                    "Upload-Offset": "0",
                },
            )
            full = connection.getresponse()
            assert full.status == 507 and "disk is full" in json.loads(full.read())["detail"]
            connection.request(
                "GET", f"/api/v1/uploads/{uid}/", headers=auth
            )  # the same connection
            after = connection.getresponse()
            assert after.status == 200, after.read()[:300]
            held = json.loads(after.read())["offset"]
            assert 0 <= held < len(data) and held == Upload.objects.get(uid=uid).offset
            connection.close()
        finally:
            server.stop()


@pytest.mark.services
def test_a_submission_whose_worker_died_at_the_publication_minute_is_published_when_its_check_ends(
    rounds, cast, settings, tmp_path
):
    """The worker checking an on-time submission is killed; the round is published meanwhile (without it: it
    is still being checked). Another worker takes the check up again, and the submission goes public as it
    would have at the minute."""
    from leaderboard.models import Result
    from submissions.checking.pipeline import publish_round
    from submissions.intake.submit import submit

    from ..live_round import set_phase

    require_services()
    purge_broker()
    media = tmp_path / "media"
    media.mkdir()
    settings.MEDIA_ROOT = media
    round_ = set_phase(rounds["training-v5.1"], "review")
    # SWEEP_IDLE_S: the killed worker's prefetched batches had no lease to expire; they are queued again after
    # the idle time, 6 s here (the site's 60).
    quick = {
        **QUICK_RECOVERY,
        "CHECK_BATCH_SIZE": "1",
        "SWEEP_IDLE_S": QUICK_RECOVERY["LEASE_EXPIRY_S"],
    }
    first = Worker(media, concurrency=1, name="dies", env=quick)
    second = None
    try:
        submission, _ = submit(
            round_, [_many_runs_bundle(tmp_path)], "acme.tgz", user=cast["member_a"]
        )
        _wait(
            lambda: Submission.objects.get(pk=submission.pk).status == "checking",
            60,
            "the submission checking",
            every_s=0.05,
        )
        first.kill()
        assert publish_round(round_) == 0  # the minute: nothing of it public yet
        second = Worker(media, concurrency=2, name="takes-over", beat=True, env=quick)
        _wait(lambda: Submission.objects.get(pk=submission.pk).is_final, 120, "final", every_s=0.5)
        submission.refresh_from_db()
        assert submission.status == "published", submission.message
        results = Result.objects.filter(system__submission=submission)
        assert results.count() == 12 == results.filter(published=True).count()
    finally:
        first.stop()
        if second is not None:
            second.stop()


@pytest.mark.services
def test_two_workers_killed_in_a_row_while_unpacking_leave_the_verdict_of_an_undisturbed_run(
    rounds, cast, settings, tmp_path
):
    """The worker unpacking a submission is killed, then the one that took it up again: with
    SWEEP_MAX_ATTEMPTS 3 the third attempt checks it, and judges it as an undisturbed run judges the same
    bundle. (Each crash counted twice, the second gave up; then one sweep queued the unpack twice, as the
    dead worker's task and as idle work, both copies unpacked at once, and the submission failed or was
    judged invalid with errors the bundle has not: issue 34.) Lost work is queued again as soon as a dead
    worker's task (SWEEP_IDLE_S = LEASE_EXPIRY_S, as the site's 60 s each), so that the two meet."""
    from submissions.intake.submit import submit

    require_services()
    purge_broker()
    media = tmp_path / "media"
    media.mkdir()
    settings.MEDIA_ROOT = media
    quick = {**QUICK_RECOVERY, "SWEEP_IDLE_S": QUICK_RECOVERY["LEASE_EXPIRY_S"]}
    clock = Worker(media, concurrency=1, name="clock", beat=True, env=quick, queues="clock")
    workers = []
    try:
        # Thousands of files to unpack: each attempt stays in its ingest for seconds, long enough to be
        # caught there and killed, however busy the machine.
        data, _ = _bundle_with_many_files(tmp_path)
        submission, _ = submit(rounds["training-v5.1"], [data], "acme.zip", user=cast["member_a"])
        killed = set()
        for attempt in (1, 2):
            workers.append(Worker(media, concurrency=1, name=f"dies{attempt}", env=quick))
            lease = _wait(
                lambda: _claimed_ingest(submission.pk, killed),
                90,
                f"attempt {attempt} unpacking",
                every_s=0.01,
            )
            workers[-1].kill()
            killed.add(lease.worker)
        workers.append(Worker(media, concurrency=2, name="lives", env=quick))
        _wait(lambda: Submission.objects.get(pk=submission.pk).is_final, 120, "final", every_s=0.5)
        submission.refresh_from_db()
        assert (submission.status, submission.attempts) == ("valid", 3), submission.message
        assert submission.validations.count() == 1
        assert _verdict(submission) == _undisturbed_verdict(submission)
    finally:
        for worker in [*workers, clock]:
            worker.stop()


@pytest.mark.services
def test_two_workers_killed_in_a_row_while_checking_leave_the_verdict_of_an_undisturbed_run(
    rounds, cast, settings, tmp_path
):
    """A worker checking two batches of a submission at once is killed, then the one that took the check up
    again: each crash is one attempt lost (each dead batch counted one, 1 -> 3, and the second crash gave
    up: issue 34), and the third attempt judges the submission as an undisturbed run judges the same
    bundle, each run checked once."""
    from submissions.intake.submit import submit
    from submissions.models import RunCheck

    require_services()
    purge_broker()
    media = tmp_path / "media"
    media.mkdir()
    settings.MEDIA_ROOT = media
    quick = {
        **QUICK_RECOVERY,
        "SWEEP_IDLE_S": QUICK_RECOVERY["LEASE_EXPIRY_S"],
        "CHECK_BATCH_SIZE": "2",
    }
    clock = Worker(media, concurrency=1, name="clock", beat=True, env=quick, queues="clock")
    workers = []
    try:
        data = _many_runs_bundle(tmp_path)  # a tar.gz: read in place, checked at once
        submission, _ = submit(rounds["training-v5.1"], [data], "acme.tgz", user=cast["member_a"])
        killed = set()
        for attempt in (1, 2):
            workers.append(Worker(media, concurrency=2, name=f"dies{attempt}", env=quick))
            lease = _wait(
                lambda: _running_check(submission.pk, killed),
                90,
                f"attempt {attempt} checking",
                every_s=0.01,
            )
            workers[-1].kill()
            killed.add(lease.worker)
            # The next worker starts once the sweeper found this attempt lost: what it checks is the next.
            _wait(
                lambda n=attempt: Submission.objects.get(pk=submission.pk).attempts > n,
                60,
                f"attempt {attempt} found lost",
                every_s=0.2,
            )
        workers.append(Worker(media, concurrency=2, name="lives", env=quick))
        _wait(lambda: Submission.objects.get(pk=submission.pk).is_final, 120, "final", every_s=0.5)
        submission.refresh_from_db()
        assert (submission.status, submission.attempts) == ("valid", 3), submission.message
        validation = submission.validations.get()
        assert (
            RunCheck.objects.filter(validation=validation).count() == 60 == submission.runs_checked
        )
        assert _verdict(submission) == _undisturbed_verdict(submission)
    finally:
        for worker in [*workers, clock]:
            worker.stop()


def _running_check(submission_id: int, not_by: set):
    """The lease of a batch of the submission's checks that a process not in `not_by` runs, or None."""
    from submissions.models import TaskLease

    return (
        TaskLease.objects.filter(submission_id=submission_id, task_name__endswith=".check_runs")
        .exclude(worker__in=not_by)
        .first()
    )


def _claimed_ingest(submission_id: int, not_by: set):
    """The lease of an ingest of the submission that a process not in `not_by` runs and has claimed (the
    claim stamps the submission after the lease was taken), or None."""
    from submissions.models import TaskLease

    submission = Submission.objects.get(pk=submission_id)
    lease = (
        TaskLease.objects.filter(submission_id=submission_id, task_name__endswith=".ingest")
        .exclude(worker__in=not_by)
        .first()
    )
    if lease is None or submission.status != "ingesting" or submission.updated_at <= lease.beat_at:
        return None
    return lease


def _bundle_with_many_files(
    tmp_path, files: int = 4000, system: str = "alpha"
) -> tuple[bytes, int]:
    """A valid bundle whose unpacked folder takes a while to delete: `files` small files beside its logs,
    in a zip (a tar.gz is read from one plain tar, not unpacked). Returns (its bytes, how many files it
    unpacks to)."""
    root = write_bundle(
        tmp_path / "Acme",
        "Acme",
        [SystemSpec(system, results={"retinanet": [10.0, 12.0, 11.0, 13.0, 9.0]})],
        TARGETS,
    )
    filler = root / "benchmarks" / "retinanet" / "implementations" / "notes"
    filler.mkdir(parents=True)
    for n in range(files):
        (filler / f"note_{n}.txt").write_text(f"note {n}\n")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(root.rglob("*")):
            if path.is_file():
                zf.write(path, f"Acme/{path.relative_to(root)}")
    return buffer.getvalue(), sum(1 for p in root.rglob("*") if p.is_file())


@pytest.mark.services
def test_two_workers_opening_bundles_at_once_are_admitted_by_the_room_left_for_both(
    rounds, cast, settings, tmp_path
):
    """Admission by free space: each worker process looked at the disk's free space alone, so with room
    for one bundle's unpacking, a second bundle taken in while the first was being unpacked was admitted
    on the same room. Two pool processes of a real worker, two bundles of 15,000 files (seconds to
    unpack), the room set for one at a time: the second waits for disk space while the first is being
    opened, and both end valid."""
    import shutil

    from submissions.checking.pipeline.common import work_dir
    from submissions.intake.submit import submit

    require_services()
    purge_broker()
    media = tmp_path / "media"
    (media / "work").mkdir(parents=True)
    settings.MEDIA_ROOT = media
    first, _ = _bundle_with_many_files(tmp_path / "first", files=15000, system="alpha")
    second, _ = _bundle_with_many_files(tmp_path / "second", files=15000, system="beta")
    # Each bundle needs about 8 GiB to open; the disk has room for one and a half of them beyond the
    # reserve, whatever else the machine writes meanwhile (within 4 GiB).
    factor = (8 << 30) // max(len(first), len(second))
    need = factor * max(len(first), len(second))
    reserve = shutil.disk_usage(media / "work").free - need * 3 // 2
    assert reserve > 0, "the test needs 12 GiB free"
    worker = Worker(
        media,
        concurrency=2,
        name="room",
        # DISK_WAIT_S: the second tries again 2 s after the first has let go of the room, not 30 s.
        env={
            "UNPACK_SPACE_FACTOR": str(factor),
            "DISK_RESERVE_BYTES": str(reserve),
            "DISK_WAIT_S": "2",
        },
    )
    try:
        a, _ = submit(rounds["training-v5.1"], [first], "first.zip", user=cast["member_a"])
        _wait(lambda: work_dir(a.pk).is_dir(), 60, "the first bundle being unpacked", every_s=0.01)
        b, _ = submit(rounds["training-v5.1"], [second], "second.zip", user=cast["member_a"])
        _wait(
            lambda: "Waiting for disk space" in Submission.objects.get(pk=b.pk).message,
            20,
            "the second waiting for the room the first holds",
            every_s=0.05,
        )
        assert Submission.objects.get(pk=a.pk).status in ("ingesting", "checking", "valid")
        _wait(
            lambda: all(s.is_final for s in Submission.objects.filter(pk__in=[a.pk, b.pk])),
            120,
            "both final",
            every_s=0.5,
        )
        for submission in Submission.objects.filter(pk__in=[a.pk, b.pk]):
            assert submission.status == "valid", submission.message
    finally:
        worker.stop()


@pytest.mark.services
def test_a_revalidation_taken_as_finalize_commits_is_not_undone_by_finalizes_clean_up(
    rounds, cast, settings, tmp_path
):
    """finalize commits the verdict, then deletes the work folder. A re-validation taken at that moment (the
    test stops finalize's process as soon as the verdict shows, takes the re-validation, and lets the process
    go on) opens the bundle into the same folder: the folder it opened is whole once finalize is done, and
    the new pass ends valid, as the first."""
    from submissions.checking.pipeline import common, revalidate
    from submissions.checking.tasks import _queue_checks
    from submissions.intake.submit import submit

    require_services()
    purge_broker()
    media = tmp_path / "media"
    media.mkdir()
    settings.MEDIA_ROOT = media
    data, unpacked = _bundle_with_many_files(tmp_path)
    worker = Worker(media, concurrency=1, name="finalize", env=QUICK_RECOVERY)
    try:
        submission, _ = submit(rounds["training-v5.1"], [data], "acme.zip", user=cast["member_a"])
        _wait(
            lambda: Submission.objects.filter(pk=submission.pk, status="valid").exists(),
            120,
            "the first verdict",
            every_s=0.002,
        )
        # finalize's process is held where the verdict found it (in its clean-up, or about to start it),
        # while the re-validation is taken; then it goes on.
        pool = _children(worker.process.pid)
        for pid in pool:
            os.kill(pid, signal.SIGSTOP)
        taken = []

        def take():
            try:
                taken.append(revalidate(submission.pk, "at finalize's commit"))
            finally:
                connection.close()  # this thread's own

        thread = threading.Thread(target=take)
        thread.start()
        thread.join(timeout=5)  # it waits for the clean-up where that holds the submission's row
        for pid in pool:
            os.kill(pid, signal.SIGCONT)
        thread.join(timeout=60)
        ((validation_id, run_ids),) = taken
        assert validation_id is not None
        work = common.work_dir(submission.pk)
        time.sleep(3)  # finalize's clean-up is over
        left = sum(1 for p in work.rglob("*") if p.is_file())
        assert left == unpacked, (
            f"{left} of the {unpacked} files the re-validation unpacked are left"
        )
        _queue_checks(run_ids, validation_id)
        _wait(lambda: Submission.objects.get(pk=submission.pk).is_final, 120, "final", every_s=0.5)
        submission.refresh_from_db()
        assert submission.status == "valid", submission.message
        assert submission.validations.get(pk=validation_id).status == "done"
    finally:
        worker.stop()


@pytest.mark.services
def test_a_patch_while_the_database_is_down_is_answered_503_in_json_and_resumes_after(
    rounds, cast, tmp_path
):
    """The web process reaches PostgreSQL through a proxy the test cuts: a PATCH is answered 503 in JSON
    with Retry-After (not an HTML 500), and once the database is back the upload goes on at its offset."""
    require_services()
    db = connection.settings_dict
    proxy = CuttableProxy(db["HOST"], int(db["PORT"]))
    server = Gunicorn(
        tmp_path / "web", tmp_path / "media", workers=1, DATABASE_URL=database_url(proxy.port)
    )
    try:
        api = Api(server, ApiToken.create(cast["member_a"], "ci")[1])
        data = bundle_bytes(tmp_path)
        created = api.json(
            "POST",
            "/api/v1/uploads/",
            {"round": "training-v5.1", "name": "acme.tgz", "size": len(data)},
        )
        uid = json.loads(created.body)["uid"]
        proxy.cut()
        part = {"Content-Type": "application/offset+octet-stream", "Upload-Offset": "0"}
        down = api.send("PATCH", f"/api/v1/uploads/{uid}/", data, **part)
        assert down.status == 503, down.body[:300]
        assert down.getheader("Content-Type").startswith("application/json")
        assert int(down.getheader("Retry-After")) > 0
        proxy.restore()
        back = _wait(
            lambda: (
                (r := api.send("PATCH", f"/api/v1/uploads/{uid}/", data, **part)).status != 503
                and r
            ),
            30,
            "an answer once the database is back",
            every_s=0.5,
        )
        assert back.status == 204, back.body[:300]
        sha = hashlib.sha256(data).hexdigest()
        assert api.json("POST", f"/api/v1/uploads/{uid}/complete/", {"sha256": sha}).status == 201
    finally:
        server.stop()
        proxy.cut()
