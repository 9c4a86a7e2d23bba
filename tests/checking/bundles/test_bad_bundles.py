"""Bad bundles end as a failed Submission with a message that says what was wrong."""

import io
import tarfile
import zipfile

import pytest
from django.core.management import call_command

from leaderboard.models import System
from submissions.models import Submission

# Every test here commits its writes: eager tasks run in on_commit hooks.
pytestmark = [pytest.mark.usefixtures("eager"), pytest.mark.django_db(transaction=True)]


def ingest(path):
    call_command("ingest", str(path), "--round", "training-v5.1")
    return Submission.objects.order_by("-pk").first()


@pytest.fixture(params=["w:gz", "w"], ids=["tar.gz unpacked", "plain tar read in place"])
def mode(request):
    """How a tar bundle is packed: compressed, it is unpacked; plain, it is read in place. Both refuse alike."""
    return request.param


def tar_with(path, mode, members):
    with tarfile.open(path, mode) as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return path


def file_member(name, data):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return info, data


LOG = b':::MLLOG {"time_ms": 1, "key": "run_start", "value": null, "metadata": {}}\n'


def assert_failed(submission, rule, *words):
    assert submission.status == Submission.Status.FAILED
    assert submission.rule == rule
    for word in words:
        assert word in submission.message
    assert not System.objects.filter(submission=submission).exists()


def test_a_member_climbing_out_of_the_folder(rounds, tmp_path, media, mode):
    bundle = tar_with(
        tmp_path / "b.tgz",
        mode,
        [file_member("A/results/s/rgat/result_0.txt", LOG), file_member("../../escaped.txt", b"x")],
    )
    assert_failed(ingest(bundle), "bundle.path-traversal", "../../escaped.txt")
    assert not any(p.name == "escaped.txt" for p in tmp_path.rglob("*"))


def test_an_absolute_path(rounds, tmp_path, mode):
    bundle = tar_with(tmp_path / "b.tgz", mode, [file_member("/tmp/abs.txt", b"x")])
    assert_failed(ingest(bundle), "bundle.absolute-path", "/tmp/abs.txt")


def test_a_symlink(rounds, tmp_path, mode):
    link = tarfile.TarInfo("A/results/s/rgat/result_0.txt")
    link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
    assert_failed(
        ingest(tar_with(tmp_path / "b.tgz", mode, [(link, None)])), "bundle.link", "result_0.txt"
    )


def test_a_device_file(rounds, tmp_path, mode):
    dev = tarfile.TarInfo("A/dev")
    dev.type = tarfile.CHRTYPE
    assert_failed(
        ingest(tar_with(tmp_path / "b.tgz", mode, [(dev, None)])), "bundle.special-file", "A/dev"
    )


def test_too_many_files(rounds, tmp_path, settings, mode):
    settings.BUNDLE_MAX_FILES = 2
    members = [file_member(f"A/results/s/rgat/result_{i}.txt", LOG) for i in range(3)]
    assert_failed(ingest(tar_with(tmp_path / "b.tgz", mode, members)), "bundle.too-many-files")


def test_a_file_too_large(rounds, tmp_path, settings, mode):
    settings.BUNDLE_MAX_FILE_BYTES = 1000
    bundle = tar_with(
        tmp_path / "b.tgz", mode, [file_member("A/results/s/rgat/result_0.txt", b"x" * 2000)]
    )
    assert_failed(ingest(bundle), "bundle.file-too-large", "result_0.txt")


def test_too_large_in_total(rounds, tmp_path, settings, mode):
    settings.BUNDLE_MAX_TOTAL_BYTES = 3000
    members = [
        file_member(f"A/results/s/rgat/result_{i}.txt", bytes([65 + i]) * 1500) for i in range(3)
    ]
    assert_failed(ingest(tar_with(tmp_path / "b.tgz", mode, members)), "bundle.too-large")


def test_a_compression_bomb(rounds, tmp_path):
    bundle = tar_with(
        tmp_path / "b.tgz",
        "w:gz",
        [file_member("A/results/s/rgat/result_0.txt", b"\0" * 20_000_000)],
    )
    assert_failed(ingest(bundle), "bundle.ratio")


def test_a_truncated_archive(rounds, tmp_path, mode):
    import os

    members = [
        file_member(f"A/results/s/rgat/result_{i}.txt", os.urandom(50_000)) for i in range(4)
    ]
    whole = tar_with(tmp_path / "b.tgz", mode, members).read_bytes()
    (tmp_path / "cut.tgz").write_bytes(whole[: len(whole) // 2])
    assert_failed(ingest(tmp_path / "cut.tgz"), "bundle.truncated")


def test_an_empty_archive(rounds, tmp_path, mode):
    assert_failed(ingest(tar_with(tmp_path / "empty.tgz", mode, [])), "bundle.empty")


def test_an_empty_zip(rounds, tmp_path):
    with zipfile.ZipFile(tmp_path / "empty.zip", "w"):
        pass
    assert_failed(ingest(tmp_path / "empty.zip"), "bundle.empty")


def test_not_an_archive(rounds, tmp_path):
    (tmp_path / "notes.tgz").write_text("hello")
    assert_failed(ingest(tmp_path / "notes.tgz"), "bundle.not-an-archive")


def test_a_folder_with_no_results(rounds, tmp_path):
    (tmp_path / "Org" / "systems").mkdir(parents=True)
    (tmp_path / "Org" / "systems" / "s.json").write_text("{}")
    assert_failed(ingest(tmp_path / "Org"), "layout.no-results", "result_")


def test_logs_for_no_benchmark_of_the_round(rounds, tmp_path, mode):
    bundle = tar_with(
        tmp_path / "b.tgz", mode, [file_member("A/results/s/imagenet/result_0.txt", LOG)]
    )
    assert_failed(ingest(bundle), "layout.no-benchmarks", "imagenet", "retinanet")


def test_a_failed_bundle_leaves_no_work_folder_and_keeps_the_upload(rounds, tmp_path, media):
    (tmp_path / "notes.tgz").write_text("hello")
    submission = ingest(tmp_path / "notes.tgz")
    assert not (media / "work" / str(submission.pk)).exists()
    assert (media / submission.bundle.name).read_text() == "hello"
