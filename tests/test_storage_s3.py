"""Bundles in an S3-compatible bucket (S3_BUCKET: settings.s3_storage, portal/bundlestorage.py), against a
real S3 server on loopback: moto's standalone server (requirements-dev.txt), which boto3 speaks to over HTTP as
it would to AWS. A chunked upload ends in the bucket as the bundle's bytes under its content-addressed name,
once per bundle; the pipeline reads it from there; retention deletes it."""

import hashlib
import importlib.util
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

from .test_faults import free_port
from .test_pages import bundle_bytes
from .test_uploads import files_under, token_for, upload_whole

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
            urllib.request.urlopen(url, timeout=1).close()
            break
        except (urllib.error.URLError, ConnectionError):
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
def test_a_chunked_upload_ends_in_the_bucket_under_its_sha256_and_is_checked_from_there(
    client, rounds, users, tmp_path, settings, bucket
):
    import requests
    from django.core.files.storage import default_storage

    data = bundle_bytes(tmp_path)
    sha = hashlib.sha256(data).hexdigest()
    done = upload_whole(client, token_for(users["owner"]), data)
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


def test_the_same_bundle_twice_is_one_object_and_one_submission(
    client, rounds, users, tmp_path, bucket
):
    data = bundle_bytes(tmp_path)
    owner = token_for(users["owner"])
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
    other = upload_whole(client, token_for(users["outsider"]), data)
    assert other.status_code == 201 and Submission.objects.count() == 2
    assert bucket.keys() == [key] and bucket.writes(key) == 1


def test_a_failed_bundle_past_its_retention_is_deleted_from_the_bucket(
    client, rounds, users, tmp_path, bucket
):
    from submissions.pipeline.retention import purge_failed_bundles

    assert (
        upload_whole(client, token_for(users["owner"]), bundle_bytes(tmp_path)).status_code == 201
    )
    submission = Submission.objects.get()
    Submission.objects.filter(pk=submission.pk).update(
        status="failed", finished_at=timezone.now() - timedelta(days=40)
    )
    assert bucket.keys() == [f"portal/{submission.bundle.name}"]
    assert purge_failed_bundles(timedelta(days=30)) == [submission.pk]
    assert bucket.keys() == []
