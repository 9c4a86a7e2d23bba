"""Hostile bundles on a real `celery worker` process, with PostgreSQL and Redis (issue 34): uploaded through the
API, each ends with a finding that names what it passed and the file, never a pool process killed or a
submission left checking, and the same worker then checks a normal bundle as usual.

Each worker runs under a hard cap on its address space (tests/worker.py memory_cap), so that where the portal's
own limits fail, the test takes no more of the machine than that: a power log named
node_99999999999999999999999.txt grew a pool process to 20 GB before."""

import io
import json
import os
import re
import tarfile
import time

import pytest

from submissions.models import Finding, Submission
from submissions.synthetic.bundles import SystemSpec, write_bundle

from ...bundles import TARGETS, bundle_bytes
from ...uploads import token_for, upload_whole
from ...worker import Worker, peak_memory, purge_broker, require_services

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]
CAP = 8 * 1024**3  # each worker process's whole address space
HUGE_NODE = "9" * 23
TIMES = [10.0, 12.0, 11.0, 13.0, 9.0]  # minutes


@pytest.fixture
def start_worker(transactional_db, rounds, tmp_path):
    require_services()
    purge_broker()
    media = tmp_path / "media"
    media.mkdir()
    started = []

    def start(**env):
        worker = Worker(media, concurrency=1, name=f"budget{len(started)}", env=env, memory_cap=CAP)
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.stop()


@pytest.fixture
def media(settings, tmp_path):  # the worker's media folder, for the uploads this process stores
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


def mllog(key, time_ms, value=None) -> str:
    record = {"namespace": "", "time_ms": time_ms, "event_type": "POINT_IN_TIME", "key": key}
    return ":::MLLOG " + json.dumps(record | {"value": value, "metadata": {}})


def node_log(log_text: str) -> str:
    """A node measured every 2 s from a minute before the run's run_start to a minute after its run_stop."""
    start, stop = (
        int(re.search(rf'"time_ms": ?(\d+)[^\n]*"key": ?"{key}"', log_text).group(1))
        for key in ("run_start", "run_stop")
    )
    times = range(start - 60_000, stop + 60_000, 2000)
    lines = [mllog("power_measurement_start", times[0])]
    lines += [mllog("power_reading", t, 5000.0) for t in times[1:]]
    return "\n".join([*lines, mllog("power_measurement_stop", times[-1])]) + "\n"


def packed(root) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        tar.add(root, arcname=root.name)
    return buffer.getvalue()


def hostile_power_bundle(tmp_path) -> tuple[bytes, str]:
    """Acme's alpha with power logs for every run; result_0's are node_0.txt and node_<23 nines>.txt.
    Returns the .tgz and the hostile file's path."""
    spec = SystemSpec("alpha", nodes=2, results={"retinanet": TIMES})
    root = write_bundle(tmp_path / "hostile", "Acme", [spec], TARGETS)
    folder = root / "results" / "alpha" / "retinanet"
    for log in sorted(folder.glob("result_*.txt")):
        power = folder / "power" / log.stem
        power.mkdir(parents=True)
        nodes = ("0", HUGE_NODE) if log.stem == "result_0" else ("0", "1")
        for node in nodes:
            (power / f"node_{node}.txt").write_text(node_log(log.read_text()))
    hostile = f"Acme/results/alpha/retinanet/power/result_0/node_{HUGE_NODE}.txt"
    return packed(root), hostile


def wait_final(pk: int, timeout: float = 180) -> Submission:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        submission = Submission.objects.get(pk=pk)
        if submission.is_final:
            return submission
        time.sleep(0.2)
    raise AssertionError(f"submission {pk} still {submission.status} after {timeout:.0f} s")


def upload(client, cast, data: bytes, name: str) -> Submission:
    done = upload_whole(client, token_for(cast["member_a"]), data, name=name)
    assert done.status_code == 201, done.content
    return Submission.objects.get(uid=done.json()["uid"])


def rules_of(submission) -> dict[str, list[Finding]]:
    found = {}
    for finding in Finding.objects.filter(validation__submission=submission):
        found.setdefault(finding.rule, []).append(finding)
    return found


def test_a_power_log_numbered_past_any_node_is_a_finding_and_the_worker_goes_on(
    client, cast, media, start_worker, tmp_path
):
    worker = start_worker()
    data, hostile = hostile_power_bundle(tmp_path)
    started = time.monotonic()
    submission = wait_final(upload(client, cast, data, "hostile.tgz").pk)
    took = time.monotonic() - started
    peak = max(map(peak_memory, worker.pool()))
    print(
        f"\n{len(data):,} bytes uploaded; final in {took:.1f} s; pool peak {peak / 2**20:.0f} MiB"
    )
    assert submission.status == Submission.Status.VALID, submission.message
    found = rules_of(submission)
    assert [f.file for f in found["power.node-number"]] == [hostile]
    assert not {rule for rule in found if "crashed" in rule or rule.startswith("internal")}
    assert peak < 1024**3
    normal = wait_final(upload(client, cast, bundle_bytes(tmp_path, system="beta"), "beta.tgz").pk)
    assert normal.status == Submission.Status.VALID, normal.message


def test_a_check_past_its_memory_budget_is_a_finding_naming_the_limit_and_the_file(
    client, cast, media, start_worker, tmp_path
):
    """A power log whose check takes more than the worker's CHECK_MEMORY_BYTES (64 MiB; a node read every
    millisecond, 50 MB: the file and its records are held at once): power.over-budget on that file, the run's
    energy withheld and its time scored, and the same pool process checks a normal bundle next."""
    worker = start_worker(CHECK_MEMORY_BYTES=str(64 << 20))
    spec = SystemSpec("alpha", nodes=1, results={"retinanet": TIMES})
    root = write_bundle(tmp_path / "big", "Acme", [spec], TARGETS)
    folder = root / "results" / "alpha" / "retinanet"
    for log in sorted(folder.glob("result_*.txt")):
        (folder / "power" / log.stem).mkdir(parents=True)
        (folder / "power" / log.stem / "node_0.txt").write_text(node_log(log.read_text()))
    big = folder / "power" / "result_0" / "node_0.txt"
    lines = big.read_text().splitlines()
    start = json.loads(lines[0].partition(" ")[2])["time_ms"]
    watts = (f"{4000 + n:.1f}" for n in os.urandom(400_000))  # readings that vary: no ratio refusal
    readings = (
        f':::MLLOG {{"namespace": "", "time_ms": {start + k}, "event_type": "POINT_IN_TIME", '
        f'"key": "power_reading", "value": {w}, "metadata": {{}}}}'
        for k, w in enumerate(watts, start=1)
    )
    big.write_text("\n".join([lines[0], *readings, *lines[1:]]) + "\n")
    pool = worker.pool()
    submission = wait_final(upload(client, cast, packed(root), "big.tgz").pk)
    assert submission.status == Submission.Status.VALID, submission.message  # the time is scored
    over = rules_of(submission)["power.over-budget"]
    assert [f.file for f in over] == [str(big.relative_to(root.parent))]
    assert "more than its 64 MiB of memory" in over[0].message
    normal = wait_final(upload(client, cast, bundle_bytes(tmp_path, system="beta"), "beta.tgz").pk)
    assert normal.status == Submission.Status.VALID, normal.message
    assert worker.pool() == pool  # no pool process was lost on the way
