"""Splitting a whole round's archive or folder into one bundle per submitter."""

import hashlib
import io
import tarfile

from submissions.bundles.split import RoundSplit, split_folder, submitter_root


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


def test_a_round_archive_splits_into_one_tar_per_submitter(tmp_path):
    _tar(tmp_path / "round.tgz", {
        "./A/results/s/resnet/result_0.txt": b"a",
        "./A/systems/s.json": b"{}",
        "./B/results/t/ssd/result_0.txt": b"b",
    })
    parts = split_archive(tmp_path / "round.tgz", tmp_path / "out")
    assert set(parts) == {"A", "B"}
    with tarfile.open(parts["A"]) as tar:
        assert sorted(tar.getnames()) == ["A/results/s/resnet/result_0.txt", "A/systems/s.json"]


def test_v05_parts_keep_the_submitter_folder(tmp_path):
    _tar(tmp_path / "round.tgz", {
        "v0.5.0/google/e/results/tpu/resnet/result_0.txt": b"g",
        "v0.5.0/intel/e/results/skx/resnet/result_0.txt": b"i",
    })
    parts = split_archive(tmp_path / "round.tgz", tmp_path / "out")
    with tarfile.open(parts["v0.5.0/google"]) as tar:
        assert tar.getnames() == ["google/e/results/tpu/resnet/result_0.txt"]


def test_a_single_submitter_archive_is_not_split(tmp_path):
    _tar(tmp_path / "one.tgz", {"A/results/s/resnet/result_0.txt": b"a"})
    assert split_archive(tmp_path / "one.tgz", tmp_path / "out") == {}
    assert list((tmp_path / "out").iterdir()) == []


def test_a_truncated_archive_is_not_split(tmp_path):
    _tar(tmp_path / "round.tgz", {"A/x/result_0.txt": b"a" * 100000, "B/y/result_0.txt": b"b" * 100000})
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


def test_parts_are_handed_over_as_the_archive_moves_on(tmp_path):
    _tar(tmp_path / "round.tgz", {
        "./A/results/s/resnet/result_0.txt": b"a", "./B/results/t/ssd/result_0.txt": b"b",
        "./A/systems/s.json": b"{}", "./C/systems/c.json": b"{}",
    })
    split = RoundSplit(tmp_path / "round.tgz", tmp_path / "out")
    seen, first_a = [], None
    for part in split:
        with tarfile.open(part.path) as tar:  # complete when handed over
            seen.append((part.root, part.again, sorted(tar.getnames())))
        data = part.path.read_bytes()
        assert part.sha256 in (None, hashlib.sha256(data).hexdigest()) and (part.sha256 is None) == part.again
        if part.root == "A" and first_a is None:
            first_a = (part.path, data)
    assert not split.whole
    assert first_a[0].read_bytes() == first_a[1]  # written on in a copy: the part handed over (stored) is as it was
    assert seen == [
        ("A", False, ["A/results/s/resnet/result_0.txt"]),
        ("B", False, ["B/results/t/ssd/result_0.txt"]),
        ("A", True, ["A/results/s/resnet/result_0.txt", "A/systems/s.json"]),  # came back: all of it, again
        ("C", False, ["C/systems/c.json"]),
    ]
