"""Splitting a whole round's archive or folder into one bundle per submitter."""

import hashlib
import io
import os
import signal
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from submissions.checking.bundles.split import (
    RoundSplit,
    SplitProcess,
    split_folder,
    submitter_root,
)
from submissions.checking.bundles.unpack import BundleError, Limits


def _tar(path, files):
    with tarfile.open(path, "w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def split_archive(archive, out_dir):
    """{root: part} of the archive's last parts, or {} when it is to be submitted whole."""
    split = RoundSplit(archive, out_dir)
    parts = {part.root: part.path for part in split}
    return {} if split.whole else parts


def test_submitter_roots():
    assert submitter_root("NVIDIA/results/a/resnet/result_0.txt") == "NVIDIA"
    assert submitter_root("./NVIDIA/systems/a.json") == "NVIDIA"
    assert submitter_root("v0.5.0/google/cloud/results/tpu/resnet/result_0.txt") == "v0.5.0/google"
    assert submitter_root("results/a/resnet/result_0.txt") is None
    assert submitter_root("README.md") is None
    assert (
        submitter_root("training_results_v0.6/NVIDIA/results/a/resnet/result_0.txt")
        == "training_results_v0.6/NVIDIA"
    )
    assert (
        submitter_root("v5.1/results/a/resnet/result_0.txt") is None
    )  # one submitter's tree in a round folder
    # One v0.5 submitter's entry folders are not submitters, whether results/ is one level down or more.
    assert submitter_root("cloud_v2.8/resnet-tpuv2-8/results/tpu/resnet/result_0.txt") is None
    assert submitter_root("cloud_v100x8/submission.json") is None


def _v05_submitter(base: Path) -> Path:
    """One v0.5 submitter's folder as Google's: an entry with results/ directly in it, others one level down."""
    files = {
        "cloud_v100x8/submission.json": '{"org": "Google"}',
        "cloud_v100x8/results/8xV100/entry.json": "{}",
        "cloud_v100x8/results/8xV100/resnet/result_0.txt": "a",
        "cloud_v2.8/resnet-tpuv2-8/submission.json": '{"org": "Google"}',
        "cloud_v2.8/resnet-tpuv2-8/results/tpu/resnet/result_0.txt": "b",
        "research_v3.32/ssd/submission.json": '{"org": "Google"}',
        "research_v3.32/ssd/results/tpu/ssd/result_0.txt": "c",
    }
    for name, text in files.items():
        (base / name).parent.mkdir(parents=True, exist_ok=True)
        (base / name).write_text(text)
    return base


def test_one_v05_submitters_folder_is_one_bundle(tmp_path):
    google = _v05_submitter(tmp_path / "v0.5.0" / "google")
    parts = split_folder(google, tmp_path / "out")
    assert list(parts) == ["google"]
    with tarfile.open(parts["google"]) as tar:
        assert "google/cloud_v2.8/resnet-tpuv2-8/results/tpu/resnet/result_0.txt" in tar.getnames()
        assert "google/cloud_v100x8/results/8xV100/resnet/result_0.txt" in tar.getnames()


def test_an_archive_of_one_v05_submitters_entries_is_not_split(tmp_path):
    google = _v05_submitter(tmp_path / "google")
    for order in (
        sorted,
        lambda names: sorted(names, reverse=True),
    ):  # whichever entry the archive lists first
        _tar(
            tmp_path / "g.tgz",
            {
                f"./{p.relative_to(google).as_posix()}": p.read_bytes()
                for p in order(google.rglob("*"))
                if p.is_file()
            },
        )
        assert split_archive(tmp_path / "g.tgz", tmp_path / "out") == {}


def test_a_v05_round_folder_splits_per_submitter_whichever_folder_is_given(tmp_path):
    _v05_submitter(tmp_path / "tree" / "v0.5.0" / "google")
    (tmp_path / "tree/v0.5.0/intel/x/results/skx/ncf").mkdir(parents=True)
    (tmp_path / "tree/v0.5.0/intel/x/results/skx/ncf/result_0.txt").write_text("i")
    for folder in (tmp_path / "tree", tmp_path / "tree" / "v0.5.0"):
        parts = split_folder(folder, tmp_path / "out" / folder.name)
        assert sorted(parts) == ["v0.5.0/google", "v0.5.0/intel"]
        with tarfile.open(parts["v0.5.0/intel"]) as tar:
            assert (
                tar.getnames()[0] == "intel"
            )  # packed with the submitter folder on top, as an upload


def test_a_round_archive_splits_into_one_tar_per_submitter(tmp_path):
    _tar(
        tmp_path / "round.tgz",
        {
            "./A/results/s/resnet/result_0.txt": b"a",
            "./A/systems/s.json": b"{}",
            "./B/results/t/ssd/result_0.txt": b"b",
        },
    )
    parts = split_archive(tmp_path / "round.tgz", tmp_path / "out")
    assert set(parts) == {"A", "B"}
    with tarfile.open(parts["A"]) as tar:
        assert sorted(tar.getnames()) == ["A/results/s/resnet/result_0.txt", "A/systems/s.json"]


def test_v05_parts_keep_the_submitter_folder(tmp_path):
    _tar(
        tmp_path / "round.tgz",
        {
            "v0.5.0/google/e/results/tpu/resnet/result_0.txt": b"g",
            "v0.5.0/intel/e/results/skx/resnet/result_0.txt": b"i",
        },
    )
    parts = split_archive(tmp_path / "round.tgz", tmp_path / "out")
    with tarfile.open(parts["v0.5.0/google"]) as tar:
        assert tar.getnames() == ["google/e/results/tpu/resnet/result_0.txt"]


def test_a_single_submitter_archive_is_handed_over_whole_as_a_plain_tar(tmp_path):
    files = {"A/results/s/resnet/result_0.txt": b"a", "A/systems/s.json": b"{}"}
    _tar(tmp_path / "one.tgz", files)
    split = RoundSplit(tmp_path / "one.tgz", tmp_path / "out")
    (part,) = list(split)
    assert part.only and not split.whole and part.root == "A"
    assert part.sha256 == hashlib.sha256(part.path.read_bytes()).hexdigest()
    with tarfile.open(part.path, "r:") as tar:  # plain: read in place
        assert {m.name: tar.extractfile(m).read() for m in tar} == files
    # A member the part would not hold as it was (a file beside the folder, a name with ./, a link):
    # the archive is submitted as it is.
    link = tarfile.TarInfo("A/results/s/resnet/result_1.txt")
    link.type, link.linkname = tarfile.SYMTYPE, "result_0.txt"
    for other in ({"README": b"x"}, {"./A/systems/t.json": b"{}"}, link):
        with tarfile.open(tmp_path / "other.tgz", "w:gz") as tar:
            for name, data in files.items():
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
            if isinstance(other, tarfile.TarInfo):
                tar.addfile(other)
            else:
                for name, data in other.items():
                    info = tarfile.TarInfo(name)
                    info.size = len(data)
                    tar.addfile(info, io.BytesIO(data))
        assert split_archive(tmp_path / "other.tgz", tmp_path / "other") == {}
        assert list((tmp_path / "other").iterdir()) == []


def test_a_plain_tar_of_one_submitter_is_listed_not_copied(tmp_path):
    def plain(path, files):
        with tarfile.open(path, "w") as tar:
            for name, data in files.items():
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))

    plain(
        tmp_path / "one.tar", {f"A/results/s/resnet/result_{i}.txt": b"a" * 5000 for i in range(3)}
    )
    split = RoundSplit(tmp_path / "one.tar", tmp_path / "out")
    assert list(split) == [] and split.whole
    assert not (tmp_path / "out").exists()  # nothing written: its headers said it is one bundle
    plain(tmp_path / "two.tar", {"A/results/s/resnet/result_0.txt": b"a", "B/x/result_0.txt": b"b"})
    assert set(split_archive(tmp_path / "two.tar", tmp_path / "parts")) == {"A", "B"}


def test_a_truncated_archive_is_not_split(tmp_path):
    _tar(
        tmp_path / "round.tgz",
        {"A/x/result_0.txt": b"a" * 100000, "B/y/result_0.txt": b"b" * 100000},
    )
    data = (tmp_path / "round.tgz").read_bytes()
    (tmp_path / "cut.tgz").write_bytes(data[: len(data) // 2])
    assert split_archive(tmp_path / "cut.tgz", tmp_path / "out") == {}


def test_a_folder_with_one_submitter_packs_whole(tmp_path):
    root = tmp_path / "Org"
    (root / "results" / "s" / "resnet").mkdir(parents=True)
    (root / "results" / "s" / "resnet" / "result_0.txt").write_text("x")
    parts = split_folder(root, tmp_path / "out")
    assert list(parts) == ["Org"]
    with tarfile.open(parts["Org"]) as tar:
        assert "Org/results/s/resnet/result_0.txt" in tar.getnames()


def test_a_folder_written_again_packs_to_the_same_bytes(tmp_path):
    """A folder checked out again (manage.py import_round) or copied is the same bundle, the same submission."""
    root = tmp_path / "Org"
    (root / "results" / "s" / "resnet").mkdir(parents=True)
    (root / "results" / "s" / "resnet" / "result_0.txt").write_text("x")
    first = split_folder(root, tmp_path / "first")["Org"].read_bytes()
    os.utime(root / "results" / "s" / "resnet" / "result_0.txt", (1e9, 1e9))
    os.utime(root / "results", (2e9, 2e9))
    assert split_folder(root, tmp_path / "again")["Org"].read_bytes() == first


def test_parts_are_handed_over_as_the_archive_moves_on(tmp_path):
    _tar(
        tmp_path / "round.tgz",
        {
            "./A/results/s/resnet/result_0.txt": b"a",
            "./B/results/t/ssd/result_0.txt": b"b",
            "./A/systems/s.json": b"{}",
            "./C/systems/c.json": b"{}",
        },
    )
    split = RoundSplit(tmp_path / "round.tgz", tmp_path / "out")
    seen, first_a = [], None
    for part in split:
        with tarfile.open(part.path) as tar:  # complete when handed over
            seen.append((part.root, part.again, sorted(tar.getnames())))
        data = part.path.read_bytes()
        assert (
            part.sha256 in (None, hashlib.sha256(data).hexdigest())
            and (part.sha256 is None) == part.again
        )
        if part.root == "A" and first_a is None:
            first_a = (part.path, data)
    assert not split.whole
    assert (
        first_a[0].read_bytes() == first_a[1]
    )  # written on in a copy: the part handed over (stored) is as it was
    assert seen == [
        ("A", False, ["A/results/s/resnet/result_0.txt"]),
        ("B", False, ["B/results/t/ssd/result_0.txt"]),
        (
            "A",
            True,
            ["A/results/s/resnet/result_0.txt", "A/systems/s.json"],
        ),  # came back: all of it, again
        ("C", False, ["C/systems/c.json"]),
    ]


def _parts(split) -> list:
    return [(part.root, part.again, part.sha256, part.path.read_bytes()) for part in split]


def test_the_split_in_a_child_process_hands_over_what_roundsplit_does(tmp_path):
    _tar(
        tmp_path / "round.tgz",
        {
            "./A/results/s/resnet/result_0.txt": b"a",
            "./B/results/t/ssd/result_0.txt": b"b",
            "./A/systems/s.json": b"{}",
            "./C/systems/c.json": b"{}",
        },
    )
    expected = _parts(RoundSplit(tmp_path / "round.tgz", tmp_path / "here"))
    with SplitProcess(tmp_path / "round.tgz", tmp_path / "there") as split:
        got = _parts(split)
        assert split.process.returncode == 0 and not split.whole
    assert got == expected and len(got) == 4


def test_the_child_says_when_an_archive_is_to_be_submitted_whole(tmp_path):
    (tmp_path / "bundle.zip").write_bytes(b"PK\x05\x06" + bytes(18))  # not a tar
    _tar(tmp_path / "one.tgz", {"README": b"x", "A/results/s/resnet/result_0.txt": b"a"})
    for name in ("bundle.zip", "one.tgz"):
        with SplitProcess(tmp_path / name, tmp_path / "out") as split:
            assert list(split) == [] and split.whole


def test_a_child_that_stops_is_an_error_that_says_why(tmp_path):
    with SplitProcess(tmp_path / "missing.tgz", tmp_path / "out") as split:
        with pytest.raises(
            RuntimeError, match=r"Splitting missing.tgz stopped \(exit code 1\): FileNotFoundError"
        ):
            list(split)


def test_closing_stops_a_child_still_splitting(tmp_path):
    _tar(
        tmp_path / "round.tgz",
        {
            f"{org}/results/s/resnet/result_{i}.txt": os.urandom(200_000)
            for org in "ABCDEFGH"
            for i in range(5)
        },
    )
    split = SplitProcess(tmp_path / "round.tgz", tmp_path / "out")
    next(iter(split))
    split.close()
    assert split.process.returncode == -signal.SIGKILL  # killed mid-way, and reaped


def test_an_ingest_that_stops_early_leaves_no_split_behind(tmp_path):
    """The round is unknown: the command exits at once, and leaves no split folder behind."""
    _tar(
        tmp_path / "round.tgz",
        {
            f"{org}/results/s/resnet/result_{i}.txt": os.urandom(200_000)
            for org in "ABCDEFGH"
            for i in range(5)
        },
    )
    media = tmp_path / "media"
    env = {
        **os.environ,
        "MEDIA_ROOT": str(media),
        "DATABASE_URL": f"sqlite:///{tmp_path}/db.sqlite3",
    }
    manage = [sys.executable, "manage.py"]
    subprocess.run(manage + ["migrate", "-v0"], cwd=Path(__file__).parents[3], env=env, check=True)
    done = subprocess.run(
        manage + ["ingest", str(tmp_path / "round.tgz"), "--round", "no-such-round"],
        cwd=Path(__file__).parents[3],
        capture_output=True,
        text=True,
        env=env,
    )
    assert done.returncode == 1 and "No round 'no-such-round'" in done.stderr
    assert list(media.glob("tmp/*")) == []


def test_an_ingest_refused_by_its_options_leaves_no_split_behind(tmp_path):
    """--round is missing: argparse ends the command, which leaves no split folder behind."""
    _tar(
        tmp_path / "round.tgz",
        {
            f"{org}/results/s/resnet/result_{i}.txt": os.urandom(200_000)
            for org in "ABCDEFGH"
            for i in range(5)
        },
    )
    media = tmp_path / "media"
    done = subprocess.run(
        [sys.executable, "manage.py", "ingest", str(tmp_path / "round.tgz")],
        cwd=Path(__file__).parents[3],
        capture_output=True,
        text=True,
        env={**os.environ, "MEDIA_ROOT": str(media)},
    )
    assert done.returncode == 2 and "--round" in done.stderr
    assert list(media.glob("tmp/*")) == []


def test_a_child_that_writes_much_to_stderr_does_not_stop(tmp_path, monkeypatch):
    """Its stderr goes to a file: a pipe left unread until the end would fill up (64 KiB) and stop it."""
    import threading

    from submissions.checking.bundles import split as split_module

    noisy = tmp_path / "noisy.py"
    noisy.write_text(
        'import sys\nsys.stderr.write("w" * 1_000_000)\nprint(\'{"whole": true}\', flush=True)\n'
    )
    monkeypatch.setattr(split_module, "__file__", str(noisy))
    split = SplitProcess(tmp_path / "any.tgz", tmp_path / "out")
    done = threading.Thread(target=lambda: list(split))
    done.start()
    done.join(timeout=30)
    stuck = done.is_alive()
    split.close()  # kills a stuck child, which ends the thread
    done.join()
    assert not stuck and split.whole and split.process.returncode == 0


# The unpacker's limits, applied by the splitter before it writes.


def _zeros_tgz(path, members: dict[str, int]):
    """A tar.gz of members made of zeros (name -> size): megabytes that compress to a few kilobytes."""
    with tarfile.open(path, "w:gz") as tar:
        for name, size in members.items():
            info = tarfile.TarInfo(name)
            info.size = size
            tar.addfile(info, io.BytesIO(bytes(size)))
    return path


def _left(folder: Path) -> list:
    return sorted(p.name for p in folder.rglob("*")) if folder.exists() else []


def test_a_bomb_in_a_round_is_refused_on_the_ratio_before_it_is_written(tmp_path):
    archive = _zeros_tgz(
        tmp_path / "round.tgz",
        {"A/results/s/resnet/result_0.txt": 1000, "B/results/t/ssd/result_0.txt": 64 * 1024**2},
    )
    assert archive.stat().st_size < 100_000
    split = RoundSplit(archive, tmp_path / "out", Limits(max_ratio=10))
    handed = [part.root for part in split]
    assert handed == ["A"]  # complete before B began; B is never handed over
    assert split.whole and split.refused.rule == "bundle.ratio"
    assert split.refused.member == "B/results/t/ssd/result_0.txt"
    assert "more than 10 times its own size (stopped at 'B/results/t/ssd/result_0.txt')" in str(
        split.refused
    )
    assert _left(tmp_path / "out") == [
        "A.tar"
    ]  # the part handed over is the caller's; B's is not left


def test_each_part_is_held_to_a_bundles_limits_not_the_whole_round(tmp_path):
    files = {
        f"{org}/results/s/resnet/result_{i}.txt": os.urandom(3000) for org in "AB" for i in range(3)
    }
    _tar(tmp_path / "round.tgz", files)
    limits = Limits(max_total_bytes=10_000, max_files=3)
    assert set(split_archive(tmp_path / "round.tgz", tmp_path / "fits")) == {
        "A",
        "B",
    }  # 18,000 bytes in all
    split = RoundSplit(tmp_path / "round.tgz", tmp_path / "fits-too", limits)
    assert [part.root for part in split] == ["A", "B"] and split.refused is None

    _tar(tmp_path / "many.tgz", {**files, "B/results/s/resnet/result_3.txt": b"x"})
    split = RoundSplit(tmp_path / "many.tgz", tmp_path / "many", limits)
    assert [part.root for part in split] == ["A"] and split.whole
    assert (split.refused.rule, split.refused.member) == (
        "bundle.too-many-files",
        "B/results/s/resnet/result_3.txt",
    )

    _tar(tmp_path / "large.tgz", {**files, "B/results/s/resnet/result_2.txt": os.urandom(5000)})
    split = RoundSplit(tmp_path / "large.tgz", tmp_path / "large", limits)
    list(split)
    assert (split.refused.rule, split.refused.member) == (
        "bundle.too-large",
        "B/results/s/resnet/result_2.txt",
    )
    assert _left(tmp_path / "many") == _left(tmp_path / "large") == ["A.tar"]


def test_the_splitter_refuses_a_large_file_as_the_unpacker_does(tmp_path):
    from submissions.checking.bundles.unpack import unpack

    _tar(
        tmp_path / "round.tgz",
        {"A/results/s/resnet/result_0.txt": b"a", "B/results/t/ssd/result_0.txt": b"b" * 5000},
    )
    limits = Limits(max_file_bytes=4096)
    split = RoundSplit(tmp_path / "round.tgz", tmp_path / "out", limits)
    list(split)
    with pytest.raises(BundleError) as unpacked:
        unpack(tmp_path / "round.tgz", tmp_path / "unpacked", limits)
    assert split.refused.rule == unpacked.value.rule == "bundle.file-too-large"
    assert str(split.refused) == str(unpacked.value)  # one message, whichever reads it first
    assert "'B/results/t/ssd/result_0.txt' is larger than the 4.0 KiB allowed for one file" in str(
        split.refused
    )


def test_the_splitter_refuses_a_deep_folder_chain_before_writing_it_as_the_unpacker_does(tmp_path):
    from submissions.checking.bundles.unpack import unpack

    deep = "B/" + "d/" * 100 + "result_0.txt"
    _tar(tmp_path / "round.tgz", {"A/results/s/resnet/result_0.txt": b"a", deep: b"b"})
    split = RoundSplit(tmp_path / "round.tgz", tmp_path / "out", Limits())
    list(split)
    with pytest.raises(BundleError) as unpacked:
        unpack(tmp_path / "round.tgz", tmp_path / "unpacked", Limits())
    assert split.refused.rule == unpacked.value.rule == "bundle.path-too-deep"
    assert _left(tmp_path / "out") == ["A.tar"]


def test_copies_of_a_submitter_that_comes_back_count_towards_the_ratio(tmp_path):
    """A root that comes back is written on in a copy of its part: an archive alternating two roots would
    otherwise write its first root's part again at each return."""
    members = {"A/results/s/resnet/result_0.txt": 900 * 1024}
    for i in range(20):
        members[f"B/results/t/ssd/result_{i}.txt"] = 10
        members[f"A/results/s/resnet/result_{i + 1}.txt"] = 10
    archive = _zeros_tgz(tmp_path / "round.tgz", members)
    split = RoundSplit(
        archive, tmp_path / "out", Limits(max_ratio=10)
    )  # the 1 MiB floor is the cap here
    handed = [part.path.name for part in split]
    assert split.refused is not None and split.refused.rule == "bundle.ratio"
    assert len(handed) < 5 and _left(tmp_path / "out") == sorted(handed)


def test_the_child_process_refuses_under_the_settings_limits(tmp_path, settings):
    settings.BUNDLE_MAX_FILE_BYTES = 4096
    _tar(
        tmp_path / "round.tgz",
        {"A/results/s/resnet/result_0.txt": b"a", "B/results/t/ssd/result_0.txt": b"b" * 5000},
    )
    with SplitProcess(tmp_path / "round.tgz", tmp_path / "out") as split:
        assert [part.root for part in split] == ["A"]
        assert split.whole and split.process.returncode == 0
    assert isinstance(split.refused, BundleError)
    assert (split.refused.rule, split.refused.member) == (
        "bundle.file-too-large",
        "B/results/t/ssd/result_0.txt",
    )
    assert _left(tmp_path / "out") == ["A.tar"]


@pytest.mark.usefixtures("eager")
@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
def test_ingest_of_a_round_with_a_bomb_keeps_no_large_file_and_fails_with_the_rule(
    rounds, tmp_path, settings
):
    """The issue's case: a small archive that expanded to gigabytes. The split stops at the limit, the archive
    is submitted whole, and the unpacker refuses it with the same rule; nothing large is written or kept."""
    from django.core.management import call_command

    from submissions.models import Submission

    settings.BUNDLE_MAX_RATIO = 20
    archive = _zeros_tgz(
        tmp_path / "round.tgz",
        {"A/results/s/resnet/result_0.txt": 100, "B/results/t/ssd/result_0.txt": 256 * 1024**2},
    )
    call_command("ingest", str(archive), "--round", "training-v5.1")
    whole = Submission.objects.get(original_name="round.tgz")
    assert (whole.status, whole.rule) == ("failed", "bundle.ratio"), whole.message
    assert "B/results/t/ssd/result_0.txt" in whole.message
    media = Path(settings.MEDIA_ROOT)
    assert sum(p.stat().st_size for p in media.rglob("*") if p.is_file()) < 2 * 1024**2
