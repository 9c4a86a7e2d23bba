"""Validation on two real worker processes, with PostgreSQL and Redis: parallel, repeatable, and
surviving a worker killed with SIGKILL in the middle."""

import os
import signal
import tarfile
import time

import pytest
from django.core.management import call_command
from django.db import connection

from submissions.checking.bundles.split import submitter_root
from submissions.checking.tasks import revalidate
from submissions.models import Finding, RunCheck, Submission, TaskLease, Validation

from ...conftest import shared_plain_tar
from ...worker import QUICK_RECOVERY, Worker, purge_broker, require_services

pytestmark = [pytest.mark.services, pytest.mark.shared_rounds]


@pytest.fixture(scope="module")
def media_root(tmp_path_factory):
    return tmp_path_factory.mktemp("workers") / "media"


@pytest.fixture
def media(settings, media_root):
    settings.MEDIA_ROOT = media_root
    return media_root


@pytest.fixture(scope="module")
def bundles(tmp_path_factory):
    """Two v5.1 submitters' bundles, cut from the round's plain tar (tests/conftest.py's shared_plain_tar)."""
    tarball = shared_plain_tar("training_v5.1_results.tar.xz")
    out = tmp_path_factory.mktemp("bundles")
    wanted = {"Lenovo": out / "lenovo.tar", "University-of-Florida": out / "uf.tar"}
    writers = {name: tarfile.open(path, "w") for name, path in wanted.items()}
    with tarfile.open(tarball, "r:") as source:
        for member in source:
            writer = writers.get(submitter_root(member.name) or "")
            if writer:
                member.name = member.name.removeprefix("./")
                writer.addfile(member, source.extractfile(member) if member.isfile() else None)
    for writer in writers.values():
        writer.close()
    return wanted


@pytest.fixture
def services(transactional_db, rounds, media_root):
    require_services()
    purge_broker()
    media_root.mkdir(parents=True, exist_ok=True)
    started = []

    def start(name, **options):
        worker = Worker(media_root, concurrency=1, name=name, **options)
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.stop()


def wait_final(pk, timeout=600):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        submission = Submission.objects.get(pk=pk)
        if submission.is_final:
            return submission
        time.sleep(0.5)
    raise AssertionError(f"submission {pk} still {submission.status} after {timeout} s")


def finding_set(validation):
    return sorted(
        validation.findings.values_list("rule", "file", "line", "message", "severity"), key=repr
    )


@pytest.mark.django_db(transaction=True)  # other processes read the test's rows
def test_two_workers_validate_a_bundle_in_parallel_and_again_identically(
    services, bundles, monkeypatch
):
    # Several check tasks: with the site's 48 runs a batch, a worker busy with the ingest could find its
    # neighbour done with every batch on a loaded machine, and one worker had checked every run.
    monkeypatch.setenv("CHECK_BATCH_SIZE", "4")
    services("w1"), services("w2")
    call_command(
        "ingest", str(bundles["Lenovo"]), "--round", "training-v5.1", "--wait", "--timeout", "600"
    )
    submission = Submission.objects.get()
    assert (
        submission.status in ("valid", "invalid")
        and submission.runs_checked == submission.runs_total
    )
    first = submission.validations.get(number=1)
    workers = set(RunCheck.objects.filter(validation=first).values_list("worker", flat=True))
    assert len(workers) == 2, f"checked by {workers}"
    assert RunCheck.objects.filter(validation=first).count() == submission.runs_total

    revalidate.delay(submission.pk, "test: same rules again")
    time.sleep(1)
    wait_final(submission.pk)
    second = submission.validations.get(number=2)
    assert second.status == Validation.Status.DONE
    assert finding_set(first) == finding_set(second)
    assert (first.verdict, first.errors, first.warnings) == (
        second.verdict,
        second.errors,
        second.warnings,
    )


@pytest.mark.django_db(transaction=True)  # other processes read the test's rows
def test_a_worker_keeps_its_database_connection_from_task_to_task(services, bundles, monkeypatch):
    """Celery closes connections after each task unless told otherwise; a new PostgreSQL connection per
    task cost more CPU than a batch of checks. The worker's connection outlives the tasks that used it."""
    monkeypatch.setenv("CHECK_BATCH_SIZE", "4")  # several check tasks for one process
    services("w1")
    call_command(
        "ingest", str(bundles["Lenovo"]), "--round", "training-v5.1", "--wait", "--timeout", "600"
    )
    submission = Submission.objects.get()
    assert submission.is_final and submission.runs_total > 8
    first_check = (
        RunCheck.objects.order_by("checked_at").values_list("checked_at", flat=True).first()
    )
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT backend_start FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        opened = [start for (start,) in cursor.fetchall()]
    assert any(start < first_check for start in opened), (
        f"no connection of the worker opened before its first check and still open after its last task: {opened}"
    )


def test_a_failed_task_closes_its_database_connection_a_successful_one_keeps_it(transactional_db):
    from celery import signals

    from submissions.checking.tasks import check_runs

    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    signals.task_postrun.send(sender=check_runs, task=check_runs, state="SUCCESS")
    assert connection.connection is not None
    signals.task_postrun.send(sender=check_runs, task=check_runs, state="FAILURE")
    assert connection.connection is None


@pytest.mark.django_db(transaction=True)  # other processes read the test's rows
def test_a_worker_killed_mid_validation_is_replaced_within_minutes_with_every_run_checked_once(
    services, bundles, settings
):
    """The killed process's lease stops beating, and the beat's sweeper queues its batch again after
    LEASE_EXPIRY_S, not after the broker's half-hour visibility timeout. With QUICK_RECOVERY's intervals:
    tests/portal/test_settings.py checks that the site's defaults recover within the three minutes asserted here."""
    settings.LEASE_EXPIRY_S = int(QUICK_RECOVERY["LEASE_EXPIRY_S"])
    settings.SWEEP_EVERY_S = int(QUICK_RECOVERY["SWEEP_EVERY_S"])
    victim = services("victim", env=QUICK_RECOVERY)
    call_command("ingest", str(bundles["University-of-Florida"]), "--round", "training-v5.1")
    submission = Submission.objects.get()
    deadline = time.monotonic() + 300
    while Submission.objects.get(pk=submission.pk).runs_checked < 5:
        assert time.monotonic() < deadline, "the worker checked nothing"
        time.sleep(0.2)
    os.killpg(victim.process.pid, signal.SIGKILL)  # the worker and its pool, mid-validation
    victim.process.wait()
    killed = time.monotonic()
    submission.refresh_from_db()
    assert not submission.is_final, "the kill came too late to test anything"

    services("rescuer", beat=True, env=QUICK_RECOVERY)
    submission = wait_final(submission.pk, timeout=240)
    took = time.monotonic() - killed
    print(f"finished {took:.0f} s after the kill")
    assert took < 180
    assert submission.status in ("valid", "invalid"), submission.message
    validation = submission.validations.get(number=1)
    assert (
        RunCheck.objects.filter(validation=validation).count()
        == submission.runs_total
        == submission.runs_checked
    )
    assert validation.status == Validation.Status.DONE
    assert Finding.objects.filter(validation=validation, rule="run.timeout").count() == 0
    # The victim may die after its batch committed and before it gave its lease back: the next sweep
    # after the lease expires deletes it (its work is done), so none is left within a sweep of that.
    deadline = time.monotonic() + settings.LEASE_EXPIRY_S + 2 * settings.SWEEP_EVERY_S
    while TaskLease.objects.exists() and time.monotonic() < deadline:
        time.sleep(1)
    assert not TaskLease.objects.exists()


def hostile_bundle(tmp_path):
    """One result whose five logs are each hostile in a different way, beside good ones."""
    from submissions.synthetic.bundles import SystemSpec, write_bundle

    root = write_bundle(
        tmp_path,
        "Mallory",
        [SystemSpec("evil", results={"retinanet": [10.0] * 5})],
        {"retinanet": 0.34},
    )
    folder = root / "results" / "evil" / "retinanet"
    good = (folder / "result_0.txt").read_bytes()
    (folder / "result_0.txt").write_bytes(
        good + b":::MLLOG " + b"x" * 50_000_000 + b"\n"
    )  # a 50 MB line
    (folder / "result_1.txt").write_bytes(
        good.replace(b'"value": "retinanet"', b'"value": "../training_0.7.0/common"')
    )
    (folder / "result_2.txt").write_bytes(os.urandom(200_000) + b"\0\0\0" + good[:1000])
    (folder / "result_3.txt").write_bytes(
        b"\n".join(line for line in good.split(b"\n") if b'"run_stop"' not in line)
    )
    (folder / "result_4.txt").write_bytes(
        good.replace(b"retinanet", "r\xe9tinanet".encode("latin-1"))
    )
    return root


@pytest.mark.django_db(transaction=True)  # other processes read the test's rows
def test_hostile_logs_give_findings_and_the_worker_stays_healthy(services, tmp_path):
    services("w1")
    start = time.monotonic()
    call_command("ingest", str(hostile_bundle(tmp_path)), "--round", "training-v5.1")
    hostile = wait_final(Submission.objects.get().pk, timeout=300)
    elapsed = time.monotonic() - start
    assert hostile.status == "invalid"
    rules_by_file = {}
    for rule, file in Finding.objects.filter(validation__submission=hostile).values_list(
        "rule", "file"
    ):
        rules_by_file.setdefault(file.rsplit("/", 1)[-1], set()).add(rule)
    assert "run.line-too-long" in rules_by_file["result_0.txt"]
    assert "run.benchmark-key" in rules_by_file["result_1.txt"]
    assert "run.binary-content" in rules_by_file["result_2.txt"]
    assert "run.no-run-stop" in rules_by_file["result_3.txt"]
    assert "run.not-utf8" in rules_by_file["result_4.txt"]
    assert not Finding.objects.filter(rule="run.timeout").exists()
    print(f"hostile bundle validated in {elapsed:.1f} s")

    # The same worker takes the next, ordinary bundle.
    from submissions.synthetic.bundles import SystemSpec, write_bundle

    good = write_bundle(
        tmp_path / "next",
        "Acme",
        [SystemSpec("ok", results={"retinanet": [10.0] * 5})],
        {"retinanet": 0.34},
    )
    call_command("ingest", str(good), "--round", "training-v5.1", "--wait", "--timeout", "120")
    assert Submission.objects.get(submitter__name="Acme").status == "valid"
