"""Bundles in an S3-compatible bucket (S3_BUCKET: settings.s3_storage, portal/backends/bundlestorage.py), against a real
S3 server on loopback: moto's standalone server (requirements-dev.txt), which boto3 speaks to over HTTP as it
would to AWS. A chunked upload ends in the bucket under its content-addressed name, once per bundle; the
pipeline and the log viewer read it from there; retention deletes it; a large bundle goes in and out holding a
bounded part of it in memory."""

import hashlib
import importlib.util
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from portal.settings import s3_storage
from submissions.models import Submission

from ..bundles import bundle_bytes, log_url, publish
from ..server import free_port
from ..uploads import files_under, token_for, upload_whole
from ..worker import ROOT

REGION = "us-east-1"


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory):
    """moto's S3 server in a process of its own on a free loopback port; its address."""
    missing = [m for m in ("moto", "flask", "flask_cors") if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(
            f"needs moto's S3 server ({', '.join(missing)} not installed: pip install -r requirements-dev.txt)"
        )
    port = free_port()
    log = open(tmp_path_factory.mktemp("s3") / "moto.log", "w")
    process = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            urllib.request.urlopen(url, timeout=5).close()
            break
        except OSError:  # not listening yet, or slow to answer on a busy machine (a timeout)
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                pytest.fail(f"moto's S3 server did not start: see {log.name}")
            time.sleep(0.1)
    yield url
    process.terminate()
    process.wait(10)
    log.close()


class Bucket:
    """A fresh bucket on the server, versioned so that every write of a key is counted; `environ`: the
    S3_* variables a deployment would set for it."""

    def __init__(self, server: str):
        import boto3

        self.name = f"bundles-{uuid.uuid4().hex[:12]}"
        self.environ = {
            "S3_BUCKET": self.name,
            "S3_ENDPOINT_URL": server,
            "S3_PREFIX": "portal",
            "S3_REGION": REGION,
            "S3_ACCESS_KEY_ID": "test",
            "S3_SECRET_ACCESS_KEY": "test",
        }
        self.client = boto3.client(
            "s3",
            endpoint_url=server,
            region_name=REGION,
            aws_access_key_id="test",
            aws_secret_access_key="test",
        )
        self.client.create_bucket(Bucket=self.name)
        self.client.put_bucket_versioning(
            Bucket=self.name, VersioningConfiguration={"Status": "Enabled"}
        )

    def keys(self) -> list[str]:
        return [o["Key"] for o in self.client.list_objects_v2(Bucket=self.name).get("Contents", [])]

    def writes(self, key: str) -> int:
        listed = self.client.list_object_versions(Bucket=self.name, Prefix=key)
        return len(listed.get("Versions", [])) + len(listed.get("DeleteMarkers", []))

    def get(self, key: str) -> dict:
        return self.client.get_object(Bucket=self.name, Key=key)

    def sha256(self, key: str) -> str:
        return hashlib.sha256(self.get(key)["Body"].read()).hexdigest()


@pytest.fixture
def bucket(s3_server, settings) -> Bucket:
    """A fresh bucket, and the default storage pointed at it as settings.py does from S3_* variables."""
    bucket = Bucket(s3_server)
    settings.STORAGES = {**settings.STORAGES, "default": s3_storage(bucket.environ)}
    return bucket


@pytest.mark.usefixtures("eager")
@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
def test_a_chunked_upload_ends_in_the_bucket_under_its_sha256_and_is_checked_from_there(
    client, rounds, cast, tmp_path, settings, bucket
):
    import requests
    from django.core.files.storage import default_storage

    data = bundle_bytes(tmp_path)
    sha = hashlib.sha256(data).hexdigest()
    done = upload_whole(client, token_for(cast["member_a"]), data)
    assert done.status_code == 201, done.content
    submission = Submission.objects.get()
    assert submission.status == "valid", submission.message  # ingest read it from the bucket
    key = f"portal/{submission.bundle.name}"
    assert bucket.keys() == [key] and key.startswith(f"portal/bundles/{sha[:2]}/{sha}-acme")
    assert bucket.sha256(key) == sha
    stored = bucket.get(key)
    assert stored["ContentType"] == "application/octet-stream" and "ContentEncoding" not in stored
    # An HTTP client undoes a Content-Encoding on the way: what it saves is the bundle only without one.
    download = requests.get(default_storage.url(submission.bundle.name), timeout=10)
    assert hashlib.sha256(download.content).hexdigest() == sha
    media = Path(settings.MEDIA_ROOT)
    assert files_under(media / "uploads") == [] and files_under(media / "bundles") == []
    assert not list((media / "work").glob("*.bundle*"))  # the worker's copy went with the checks


@pytest.mark.django_db
def test_the_same_bundle_twice_is_one_object_and_one_submission(
    client, rounds, cast, tmp_path, bucket
):
    data = bundle_bytes(tmp_path)
    owner = token_for(cast["member_a"])
    first, again = (
        upload_whole(client, owner, data),
        upload_whole(client, owner, data, name="b.tgz"),
    )
    assert (first.status_code, again.status_code) == (201, 200)
    assert first.json()["uid"] == again.json()["uid"] and Submission.objects.count() == 1
    key = f"portal/{Submission.objects.get().bundle.name}"
    assert bucket.keys() == [key]  # b.tgz's copy, under another name, was dropped
    # The same bytes under the same name from another organisation: a submission of its own, and the object
    # already there is kept as it is (not sent again, nor deleted and written again under a reader's feet).
    other = upload_whole(client, token_for(cast["member_b"]), data)
    assert other.status_code == 201 and Submission.objects.count() == 2
    assert bucket.keys() == [key] and bucket.writes(key) == 1


@pytest.mark.django_db
def test_a_failed_bundle_past_its_retention_is_deleted_from_the_bucket(
    client, rounds, cast, tmp_path, bucket
):
    from submissions.checking.pipeline.retention import purge_failed_bundles
    from submissions.checking.stored import bundle_files

    assert (
        upload_whole(client, token_for(cast["member_a"]), bundle_bytes(tmp_path)).status_code == 201
    )
    submission = Submission.objects.get()
    Submission.objects.filter(pk=submission.pk).update(
        status="failed", finished_at=timezone.now() - timedelta(days=40)
    )
    assert bucket.keys() == [f"portal/{submission.bundle.name}"]
    assert bundle_files(submission.pk, submission.bundle.name) is not None  # the log viewer's copy
    assert purge_failed_bundles(timedelta(days=30)) == [submission.pk]
    assert bucket.keys() == [] and bundle_files(submission.pk, "") is None  # its copy went too


@pytest.mark.usefixtures("eager")
# A plain tar is read in place (its copy kept), a gzipped one unpacked.
@pytest.mark.parametrize("archive", [None, "tgz"])
@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
def test_a_run_log_is_read_from_the_bundle_in_the_bucket(client, rounds, tmp_path, bucket, archive):
    submission = publish(tmp_path, archive)
    assert bucket.keys() == [f"portal/{submission.bundle.name}"]
    response = client.get(log_url("alpha", 2))
    assert response.status_code == 200 and 'class="ln rec"' in response.content.decode()


# Run in a process of its own, configured by S3_* variables as a deployment is: stores a file with
# submissions.storage.put and copies it back with readable_copy, measuring the peak resident memory that each
# adds (VmHWM, reset before each through /proc/self/clear_refs).
MEMORY_PROBE = """
import hashlib, json, os, re, sys
from pathlib import Path
from django.core.files.storage import default_storage
from submissions import storage

def peak_mib():
    return int(re.search(r"VmHWM:\\s+(\\d+)", Path("/proc/self/status").read_text()).group(1)) / 1024

def measure(step):
    default_storage.exists("warm-up")  # the client, its threads and imports are not the bundle's
    Path("/proc/self/clear_refs").write_text("5")
    before = peak_mib()
    out = step()
    return out, peak_mib() - before

source, scratch = Path(sys.argv[1]), Path(sys.argv[2])
sha = hashlib.sha256(source.read_bytes()).hexdigest()
name, put_mib = measure(lambda: storage.put(source, f"bundles/{sha[:2]}/{sha}-large.tgz"))
copy, copy_mib = measure(lambda: storage.readable_copy(name, scratch))
print(json.dumps({
    "storage": type(default_storage._wrapped).__name__, "put_mib": put_mib, "copy_mib": copy_mib,
    "source_left": source.exists(), "copy_sha256": hashlib.sha256(copy.read_bytes()).hexdigest(), "sha256": sha,
}))
"""


def test_a_large_bundle_goes_in_and_out_of_the_bucket_holding_a_bounded_part_of_it_in_memory(
    bucket, tmp_path
):
    size = 64 * 1024 * 1024
    source = tmp_path / "media" / "bundles" / "incoming" / "large.part"
    source.parent.mkdir(parents=True)
    with open(source, "wb") as f:
        f.write(os.urandom(1024 * 1024))
        f.truncate(size)  # the rest a hole: no time spent writing it
    env = {
        **os.environ,
        **bucket.environ,
        "DJANGO_SETTINGS_MODULE": "portal.settings",
        "MEDIA_ROOT": str(tmp_path / "media"),
    }
    probe = subprocess.run(
        [sys.executable, "-c", MEMORY_PROBE, str(source), str(tmp_path / "work" / "1.bundle")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert probe.returncode == 0, probe.stderr
    found = json.loads(probe.stdout)
    print(
        f"{size >> 20} MiB: put held {found['put_mib']:.0f}, readable_copy {found['copy_mib']:.0f}"
    )
    # Configured from the S3_* variables, as settings.py reads them.
    assert found["storage"] == "S3BundleStorage"
    assert not found["source_left"] and found["copy_sha256"] == found["sha256"]
    assert bucket.keys() == [f"portal/bundles/{found['sha256'][:2]}/{found['sha256']}-large.tgz"]
    # Before portal/backends/bundlestorage.py set the transfers: 71 MiB held to put, 81-95 MiB to copy back.
    assert found["put_mib"] < size / 2**20 / 2 and found["copy_mib"] < size / 2**20 / 2
