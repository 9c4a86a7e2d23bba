"""A plain tar read in place (open_bundle -> TarFiles) against the same tar unpacked: the same refusals,
the same bytes, the same layout and the same check outcomes, down to the real rounds. A compressed tar
is decompressed into one plain tar and read in place there: the same again."""

import gzip
import random
import shutil
import subprocess
import tarfile

import pytest

from submissions.checking.bundles import (
    BundleError,
    FolderFiles,
    Limits,
    TarFiles,
    detect,
    open_bundle,
    unpack,
)
from submissions.checking.bundles.split import RoundSplit
from submissions.checking.bundles.unpack import PLAIN_TAR
from submissions.checking.rules import RunContext, check_run, rcp_check

from ...bundles import info as entry
from ...bundles import make_tar
from ...conftest import shared_plain_tar


@pytest.fixture(autouse=True)
def media():
    """These tests need no Django: shadow conftest's autouse fixture, which wants pytest-django."""
    return None


def outcome(call):
    """(rule, member) of the BundleError call raises, or None."""
    try:
        call()
    except BundleError as error:
        return error.rule, error.member
    return None


OK = ("NVIDIA/results/s/b/result_0.txt", b":::MLLOG x\n" * 40)
BAD = {
    "traversal": [OK, ("NVIDIA/../../evil", b"x")],
    "absolute": [OK, ("/tmp/evil-abs", b"x")],
    "symlink": [OK, entry("NVIDIA/link", tarfile.SYMTYPE, linkname="/etc/passwd")],
    "hard link": [OK, entry("NVIDIA/hard", tarfile.LNKTYPE, linkname=OK[0])],
    "device": [OK, entry("NVIDIA/dev", tarfile.CHRTYPE)],
    "fifo": [entry("NVIDIA/fifo", tarfile.FIFOTYPE)],
    "file then folder": [("NVIDIA/x", b"file"), ("NVIDIA/x/y", b"under a file")],
    "folder then file": [
        entry("NVIDIA/x", tarfile.DIRTYPE),
        ("NVIDIA/x", b"a file where a folder is"),
    ],
    "file then deeper folder": [("NVIDIA/x", b"file"), entry("NVIDIA/x/y/z", tarfile.DIRTYPE)],
    "only folders": [entry("NVIDIA", tarfile.DIRTYPE), entry("NVIDIA/results", tarfile.DIRTYPE)],
    "too many files": [(f"NVIDIA/f{i}.txt", b"x") for i in range(6)],
    "file too large": [OK, ("NVIDIA/big.txt", b"y" * 5000)],
    "too large in total": [(f"NVIDIA/f{i}.txt", bytes([65 + i]) * 1500) for i in range(4)],
}
LIMITS = Limits(max_files=5, max_file_bytes=4096, max_total_bytes=5000)


FORMS = {"tar": "w", "tar.gz": "w:gz", "tar.xz": "w:xz"}


@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("case", sorted(BAD))
def test_in_place_refuses_what_unpack_refuses_and_writes_nothing(tmp_path, case, form):
    archive = make_tar(tmp_path / f"b.{form}", BAD[case], FORMS[form])
    unpacked = outcome(lambda: unpack(archive, tmp_path / "unpacked", LIMITS))
    assert unpacked is not None, "the case must be one unpack refuses"
    assert outcome(lambda: open_bundle(archive, tmp_path / "in-place", LIMITS)) == unpacked
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"b.{form}"]


@pytest.mark.parametrize(
    "where", ["inside the last file", "at a member boundary", "inside a header"]
)
def test_a_truncated_plain_tar_is_refused_naming_the_member(tmp_path, where):
    whole = make_tar(
        tmp_path / "whole.tar", [("NVIDIA/a.txt", b"a" * 2000), ("NVIDIA/b.txt", b"b" * 2000)]
    )
    data = whole.read_bytes()
    b_data = data.index(b"b" * 512)
    at = {
        "inside the last file": b_data + 700,
        "at a member boundary": b_data + 2048,
        "inside a header": data.index(b"a" * 512) + 2048 + 100,
    }[where]
    (tmp_path / "cut.tar").write_bytes(data[:at])
    unpacked = outcome(lambda: unpack(tmp_path / "cut.tar", tmp_path / "unpacked"))
    assert unpacked is not None and unpacked[0] == "bundle.truncated"
    in_place = outcome(lambda: open_bundle(tmp_path / "cut.tar", tmp_path / "in-place"))
    assert in_place == unpacked, where
    assert not (tmp_path / "in-place").exists()
    (tmp_path / "cut.tar.gz").write_bytes(gzip.compress(data[:at]))
    unpacked = outcome(lambda: unpack(tmp_path / "cut.tar.gz", tmp_path / "unpacked"))
    in_place = outcome(lambda: open_bundle(tmp_path / "cut.tar.gz", tmp_path / "in-place"))
    assert in_place == unpacked and in_place[0] == "bundle.truncated", where
    assert not (tmp_path / "in-place").exists()


def _random_tree(rng: random.Random) -> list:
    """Files of random sizes (empty, across block ends, a few MB) in nested folders, with long names,
    folder entries, a file given twice, and ./ and backslash spellings."""
    members, names = [], []
    for i in range(rng.randint(5, 40)):
        depth = rng.randint(1, 4)
        folder = "/".join(
            rng.choice(["Org", "results", "sys", "b" * rng.randint(1, 150)]) for _ in range(depth)
        )
        name = f"{folder}/f{i}{rng.choice(['.txt', '.json', ''])}"
        size = rng.choice([0, 1, 511, 512, 513, rng.randint(0, 70_000), rng.randint(1, 3 << 20)])
        members.append((rng.choice(["", "./"]) + name, rng.randbytes(size)))
        names.append(name)
    members.append(entry("Org/empty-folder", tarfile.DIRTYPE))
    again = rng.choice(names)
    members.append((again, b"the second copy wins"))
    return members


@pytest.mark.parametrize("seed", range(8))
def test_in_place_gives_the_bytes_and_listing_unpack_gives(tmp_path, seed):
    rng = random.Random(seed)
    fmt = rng.choice([tarfile.PAX_FORMAT, tarfile.GNU_FORMAT])
    archive = make_tar(tmp_path / "b.tar", _random_tree(rng), format=fmt)
    files = open_bundle(archive, tmp_path / "unused")
    assert isinstance(files, TarFiles)
    assert not (tmp_path / "unused").exists(), "nothing is written for a plain tar"
    _same_as_unpacked(files, archive, tmp_path, rng)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("form", ["tar.gz", "tar.xz"])
def test_a_compressed_tar_is_read_in_place_from_one_plain_tar_written_for_it(tmp_path, seed, form):
    rng = random.Random(seed)
    fmt = rng.choice([tarfile.PAX_FORMAT, tarfile.GNU_FORMAT])
    archive = make_tar(tmp_path / f"b.{form}", _random_tree(rng), FORMS[form], format=fmt)
    files = open_bundle(archive, tmp_path / "work")
    assert isinstance(files, TarFiles)
    assert [p.name for p in (tmp_path / "work").iterdir()] == [PLAIN_TAR]  # one file, not one each
    assert files.archive == str(tmp_path / "work" / PLAIN_TAR) and files.name == "work"
    _same_as_unpacked(files, archive, tmp_path, rng)


def _same_as_unpacked(files: TarFiles, archive, tmp_path, rng: random.Random) -> None:
    """The bundle's files read in place are the bytes, listing and folders that unpacking it gives, and
    read the same from their saved index with the media folder moved."""
    unpack(archive, tmp_path / "out")
    folder = FolderFiles(tmp_path / "out")
    assert files.walk() == folder.walk()
    for path in files.files:
        member = files.file(path)
        assert member.read_bytes() == folder.read_bytes(path), path
        with member.open(
            buffer_size=rng.choice([1, 100, 8192])
        ) as f:  # small reads and lines across buffers
            assert b"".join(iter(lambda: f.read(rng.randint(1, 5000)), b"")) == folder.read_bytes(
                path
            )
    some = next(p for p in files.files if "/" in p)
    parent = some.rpartition("/")[0]
    assert {n: m.read_bytes() for n, m in files.folder(parent).items()} == {
        p.name: p.read_bytes() for p in folder.folder(parent).iterdir() if p.is_file()
    }
    files.save(tmp_path / "index" / "index.json")
    (tmp_path / "moved").mkdir()
    for path in tmp_path.iterdir():  # the media folder mounted elsewhere
        if path.name not in ("moved", "out"):
            path.rename(tmp_path / "moved" / path.name)
    again = TarFiles.load(tmp_path / "moved" / "index" / "index.json")
    assert (again.files, again.folders, again.walk()) == (files.files, files.folders, files.walk())
    assert again.file(some).read_bytes() == folder.read_bytes(some)


def test_a_sparse_member_is_unpacked_instead(tmp_path):
    if shutil.which("tar") is None:
        pytest.skip("no tar command to write a sparse member")
    (tmp_path / "Org").mkdir()
    sparse = tmp_path / "Org" / "sparse.txt"
    with open(sparse, "wb") as f:
        f.write(b"start\n")
        f.seek(
            600_000
        )  # under the ratio check's 1 MiB floor: a sparse file counts as its full size
        f.write(b"end\n")
    (tmp_path / "Org" / "plain.txt").write_bytes(b"plain\n")
    subprocess.run(
        [
            "tar",
            "--sparse",
            "--format=gnu",
            "-C",
            str(tmp_path),
            "-cf",
            str(tmp_path / "b.tar"),
            "Org",
        ],
        check=True,
    )
    with tarfile.open(tmp_path / "b.tar") as tf:
        assert tf.getmember("Org/sparse.txt").issparse(), (
            "the tar command did not write a sparse member"
        )
    files = open_bundle(tmp_path / "b.tar", tmp_path / "out")
    assert isinstance(files, FolderFiles)
    assert files.read_bytes("Org/sparse.txt") == sparse.read_bytes()
    (tmp_path / "b.tar.gz").write_bytes(gzip.compress((tmp_path / "b.tar").read_bytes()))
    files = open_bundle(tmp_path / "b.tar.gz", tmp_path / "out-gz")
    assert (
        isinstance(files, FolderFiles) and files.read_bytes("Org/sparse.txt") == sparse.read_bytes()
    )
    assert not (tmp_path / "out-gz" / PLAIN_TAR).exists()  # the plain tar begun is gone


def test_a_member_reader_refuses_to_read_past_a_shrunken_archive(tmp_path):
    archive = make_tar(tmp_path / "b.tar", [("Org/a.txt", b"a" * 10_000)])
    files = open_bundle(archive, tmp_path / "unused")
    with open(archive, "r+b") as f:
        f.truncate(2048)
    with pytest.raises(OSError, match="ends"):
        files.file("Org/a.txt").read_bytes()


# --- the real rounds ------------------------------------------------------------


@pytest.fixture(scope="module")
def parts(tmp_path_factory):
    """Each real round split into one plain tar per submitter, as `manage.py ingest` splits it."""
    out = {}
    for round_ in ("0.5", "0.6", "5.1"):
        tarball = shared_plain_tar(f"training_v{round_}_results.tar.xz")
        split = RoundSplit(tarball, tmp_path_factory.mktemp(f"parts-{round_}"))
        out[round_] = {part.root: part.path for part in split}
    return out


V51_KEYS = frozenset(
    {"llama31_405b", "llama31_8b", "llama2_70b_lora", "flux1", "dlrm_dcnv2", "rgat", "retinanet"}
)


@pytest.mark.shared_rounds
def test_real_rounds_read_in_place_give_the_layouts_and_checks_of_unpacked_ones(parts, tmp_path):
    checked = 0
    for round_, by_root in parts.items():
        for root, part in by_root.items():
            name = root.rpartition("/")[2]
            files = open_bundle(
                part, tmp_path / round_ / "in-place" / name
            )  # the same folder name both ways
            assert isinstance(files, TarFiles)
            folder = tmp_path / round_ / "unpacked" / name
            unpack(part, folder)
            in_place = detect(files)
            assert in_place == detect(folder), f"v{round_} {root}"
            if round_ != "5.1":
                continue
            for result in in_place.results[::9]:  # a sample: checking every log takes minutes
                ctx = RunContext(
                    ruleset="5.1.0", benchmark=result.benchmark, benchmark_keys=V51_KEYS
                )
                for run in result.run_files[:2]:
                    assert check_run(files.file(run), run, ctx) == check_run(
                        folder / run, run, ctx
                    ), run
                    checked += 1
                assert rcp_check(files.folder(result.path), "5.1.0", result.benchmark) == rcp_check(
                    folder / result.path, "5.1.0", result.benchmark
                ), result.path
    print(f"{checked} v5.1 runs checked both ways")
    assert checked >= 30
