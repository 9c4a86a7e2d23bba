"""Tests for submissions.checking.bundles.unpack: formats, every refusal rule, cleanup, and the real rounds."""

import io
import os
import stat
import tarfile
import time
import zipfile
from pathlib import Path

import pytest

from submissions.checking.bundles import BundleError, Limits, unpack
from submissions.checking.bundles.unpack import _Writer

from ...bundles import info, make_tar
from ...conftest import SHARED, shared_plain_tar

FILES = {
    "NVIDIA/systems/dgx.json": b'{"submitter": "NVIDIA"}',
    "NVIDIA/results/dgx/resnet/result_0.txt": b":::MLLOG x\n" * 50,
}


@pytest.fixture(autouse=True)
def media():
    """These tests need no Django: shadow conftest's autouse fixture, which wants pytest-django."""
    return None


def make_zip(path: Path, members):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for m in members:
            if isinstance(m, zipfile.ZipInfo):
                zf.writestr(m, b"target")
            else:
                zf.writestr(*m)
    return path


def refused(archive, dest, rule, limits=Limits()):  # noqa: B008 - a frozen dataclass
    with pytest.raises(BundleError) as caught:
        unpack(archive, dest, limits)
    assert caught.value.rule == rule, str(caught.value)
    assert not dest.exists(), "a refused bundle must leave nothing behind"
    return caught.value


@pytest.mark.parametrize("mode,fmt", [("w", "tar"), ("w:gz", "tar.gz"), ("w:xz", "tar.xz")])
def test_tar_formats_unpack_by_magic_not_name(tmp_path, mode, fmt):
    archive = make_tar(tmp_path / "bundle.zip", list(FILES.items()), mode)  # the name lies
    report = unpack(archive, tmp_path / "out")
    assert (report.format, report.files) == (fmt, 2)
    assert report.total_bytes == sum(len(v) for v in FILES.values())
    for name, data in FILES.items():
        assert (tmp_path / "out" / name).read_bytes() == data


@pytest.mark.parametrize("fmt", [tarfile.GNU_FORMAT, tarfile.PAX_FORMAT])
def test_long_names_in_gnu_and_pax_headers(tmp_path, fmt):
    name = "NVIDIA/results/" + "x" * 150 + "/llama2_70b_lora/result_0.txt"
    with tarfile.open(tmp_path / "b.tar", "w", format=fmt) as tf:
        ti = tarfile.TarInfo(name)
        ti.size = 3
        tf.addfile(ti, io.BytesIO(b"abc"))
    unpack(tmp_path / "b.tar", tmp_path / "out")
    assert (tmp_path / "out" / name).read_bytes() == b"abc"


def test_zip_unpacks_with_directories_and_backslash_names(tmp_path):
    archive = make_zip(
        tmp_path / "b.tgz",
        [("NVIDIA/", b""), ("NVIDIA\\results\\r.txt", b"x")] + list(FILES.items()),
    )
    report = unpack(archive, tmp_path / "out")
    assert (report.format, report.files) == ("zip", 3)
    assert (tmp_path / "out/NVIDIA/results/r.txt").read_bytes() == b"x"


def test_existing_empty_dest_is_used_and_left_empty_on_error(tmp_path):
    dest = tmp_path / "out"
    dest.mkdir()
    unpack(make_tar(tmp_path / "ok.tar", list(FILES.items())), dest)
    assert (dest / "NVIDIA/systems/dgx.json").exists()
    with pytest.raises(FileExistsError):
        unpack(tmp_path / "ok.tar", dest)  # not empty any more
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(BundleError):
        unpack(make_tar(tmp_path / "bad.tar", [("a.txt", b"a"), ("../evil", b"x")]), empty)
    assert empty.is_dir() and not any(empty.iterdir())


@pytest.mark.parametrize("content", [b"just some text\n" * 40, b"BZh91AY&SY" + b"\0" * 600, b""])
def test_not_an_archive(tmp_path, content):
    path = tmp_path / "bundle.tar.gz"
    path.write_bytes(content)
    refused(path, tmp_path / "out", "bundle.not-an-archive")


def test_gzip_of_something_other_than_tar_is_not_an_archive(tmp_path):
    import gzip

    path = tmp_path / "log.gz"
    path.write_bytes(gzip.compress(b"hello " * 1000))
    err = refused(path, tmp_path / "out", "bundle.not-an-archive")
    assert "tar" in str(err)


def test_empty_archives(tmp_path):
    refused(make_tar(tmp_path / "p.tar", []), tmp_path / "o0", "bundle.empty")  # only zero blocks
    refused(
        make_tar(tmp_path / "d.tgz", [info("NVIDIA", tarfile.DIRTYPE)], "w:gz"),
        tmp_path / "o1",
        "bundle.empty",
    )
    empty_zip = tmp_path / "e.zip"
    zipfile.ZipFile(empty_zip, "w").close()
    assert empty_zip.read_bytes().startswith(b"PK\x05\x06")
    refused(empty_zip, tmp_path / "o2", "bundle.empty")


@pytest.mark.parametrize(
    "name,rule",
    [
        ("../evil", "bundle.path-traversal"),
        ("NVIDIA/../../evil", "bundle.path-traversal"),
        ("..\\evil", "bundle.path-traversal"),
        ("/tmp/evil-abs", "bundle.absolute-path"),
        ("C:\\evil", "bundle.absolute-path"),
    ],
)
@pytest.mark.parametrize("kind", ["tar", "zip"])
def test_paths_leaving_dest_are_refused_and_nothing_is_written(tmp_path, name, rule, kind):
    work = tmp_path / "work"
    work.mkdir()
    members = [("NVIDIA/ok.txt", b"fine"), (name, b"payload")]
    archive = (
        make_tar(tmp_path / "b.tar", members)
        if kind == "tar"
        else make_zip(tmp_path / "b.zip", members)
    )
    err = refused(archive, work / "out", rule)
    assert err.member == name and name in str(err)
    assert not (tmp_path / "evil").exists() and not (work / "evil").exists()
    assert not Path("/tmp/evil-abs").exists()
    assert sorted(p.name for p in work.iterdir()) == []


@pytest.mark.parametrize(
    "member",
    [
        info("NVIDIA/link", tarfile.SYMTYPE, linkname="/etc/passwd"),
        info("NVIDIA/hard", tarfile.LNKTYPE, linkname="NVIDIA/ok.txt"),
    ],
)
def test_tar_links_are_refused(tmp_path, member):
    err = refused(
        make_tar(tmp_path / "b.tar", [("NVIDIA/ok.txt", b"x"), member]),
        tmp_path / "out",
        "bundle.link",
    )
    assert err.member == member.name and member.linkname in str(err)


def test_zip_symlink_by_mode_bits_is_refused(tmp_path):
    link = zipfile.ZipInfo("NVIDIA/link")
    link.create_system = 3
    link.external_attr = (stat.S_IFLNK | 0o777) << 16
    refused(
        make_zip(tmp_path / "b.zip", [("NVIDIA/ok.txt", b"x"), link]),
        tmp_path / "out",
        "bundle.link",
    )


@pytest.mark.parametrize("type_", [tarfile.FIFOTYPE, tarfile.CHRTYPE, tarfile.BLKTYPE])
def test_tar_special_files_are_refused(tmp_path, type_):
    err = refused(
        make_tar(tmp_path / "b.tar", [info("NVIDIA/dev", type_)]),
        tmp_path / "out",
        "bundle.special-file",
    )
    assert err.member == "NVIDIA/dev"


def test_zip_special_file_is_refused(tmp_path):
    fifo = zipfile.ZipInfo("NVIDIA/fifo")
    fifo.external_attr = (stat.S_IFIFO | 0o644) << 16
    refused(make_zip(tmp_path / "b.zip", [fifo]), tmp_path / "out", "bundle.special-file")


def test_too_many_files(tmp_path):
    members = [(f"NVIDIA/f{i}.txt", b"x") for i in range(6)]
    err = refused(
        make_tar(tmp_path / "b.tar", members),
        tmp_path / "out",
        "bundle.too-many-files",
        Limits(max_files=5),
    )
    assert err.member == "NVIDIA/f5.txt"


def test_file_too_large_by_header_is_refused_before_writing(tmp_path):
    archive = make_tar(tmp_path / "b.tar", [("NVIDIA/big.txt", b"y" * 5000)])
    err = refused(archive, tmp_path / "out", "bundle.file-too-large", Limits(max_file_bytes=4096))
    assert err.member == "NVIDIA/big.txt"


def test_total_size_cap(tmp_path):
    members = [(f"NVIDIA/f{i}.txt", os.urandom(3000)) for i in range(4)]
    refused(
        make_tar(tmp_path / "b.tar", members),
        tmp_path / "out",
        "bundle.too-large",
        Limits(max_total_bytes=10_000),
    )


def test_writer_counts_real_bytes_when_the_header_lies(tmp_path):
    """A member whose header claims 10 bytes but streams 10 MiB stops at the cap, not at the header."""
    (tmp_path / "out").mkdir()
    w = _Writer(str(tmp_path / "out"), Limits(max_file_bytes=3 * 1024**2), archive_bytes=10**9)
    with pytest.raises(BundleError) as caught:
        w.write(["big.txt"], io.BytesIO(b"z" * 10 * 1024**2), 10, "big.txt")
    assert caught.value.rule == "bundle.file-too-large"
    assert (tmp_path / "out/big.txt").stat().st_size <= 3 * 1024**2


def test_decompression_bomb_stops_early(tmp_path):
    """256 MiB of zeros in a ~40 KB tar.xz: refused on the ratio after ~8 MB, quickly."""
    archive = tmp_path / "bomb.tar.xz"
    with tarfile.open(archive, "w:xz", preset=1) as tf:
        zeros = tarfile.TarInfo("NVIDIA/zeros.txt")
        zeros.size = 256 * 1024**2
        tf.addfile(zeros, _Zeros(zeros.size))
    assert archive.stat().st_size < 100_000
    started = time.perf_counter()
    err = refused(archive, tmp_path / "out", "bundle.ratio")  # the size caps alone would allow it
    assert time.perf_counter() - started < 1
    assert err.member == "NVIDIA/zeros.txt"


class _Zeros(io.RawIOBase):
    def __init__(self, size):
        self.left = size

    def readable(self):
        return True

    def readinto(self, b):
        n = min(len(b), self.left)
        b[:n] = bytes(n)
        self.left -= n
        return n


def _tar_bytes(mode, members):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode) as tf:
        for name, data in members:
            ti = tarfile.TarInfo(name)
            ti.size = len(data)
            tf.addfile(ti, io.BytesIO(data))
    return buf.getvalue()


@pytest.mark.parametrize("mode", ["w", "w:gz", "w:xz"])
def test_truncated_tar_is_refused_naming_the_member(tmp_path, mode):
    data = _tar_bytes(
        mode, [("NVIDIA/a.txt", os.urandom(20_000)), ("NVIDIA/b.txt", os.urandom(20_000))]
    )
    path = tmp_path / "cut"
    path.write_bytes(data[: len(data) * 3 // 4])  # inside b.txt for every format
    err = refused(path, tmp_path / "out", "bundle.truncated")
    assert err.member == "NVIDIA/b.txt" and "NVIDIA/b.txt" in str(err)


def test_plain_tar_cut_at_a_member_boundary_is_truncated(tmp_path):
    """tarfile alone takes a missing end-of-archive block as a clean end; we do not."""
    data = _tar_bytes("w", [("NVIDIA/a.txt", b"a" * 512), ("NVIDIA/b.txt", b"b" * 512)])
    path = tmp_path / "cut.tar"
    path.write_bytes(data[: 4 * 512])  # two headers + two data blocks, no zero blocks
    err = refused(path, tmp_path / "out", "bundle.truncated")
    assert err.member == "NVIDIA/b.txt"


def test_truncated_zip_is_refused(tmp_path):
    data = make_zip(tmp_path / "ok.zip", [("NVIDIA/a.txt", os.urandom(5000))]).read_bytes()
    (tmp_path / "cut.zip").write_bytes(data[:3000])  # the central directory is gone
    refused(tmp_path / "cut.zip", tmp_path / "out", "bundle.truncated")


def test_corrupt_zip_member_is_refused_naming_it(tmp_path):
    with zipfile.ZipFile(tmp_path / "ok.zip", "w", zipfile.ZIP_STORED) as zf:
        zf.writestr("NVIDIA/a.txt", b"A" * 4000)
    data = bytearray((tmp_path / "ok.zip").read_bytes())
    at = data.index(b"A" * 100)
    data[at : at + 100] = b"B" * 100  # same size, wrong CRC
    (tmp_path / "bad.zip").write_bytes(bytes(data))
    err = refused(tmp_path / "bad.zip", tmp_path / "out", "bundle.truncated")
    assert err.member == "NVIDIA/a.txt"


def test_file_and_folder_with_the_same_name(tmp_path):
    archive = make_tar(tmp_path / "b.tar", [("NVIDIA/x", b"file"), ("NVIDIA/x/y", b"under a file")])
    refused(archive, tmp_path / "out", "bundle.bad-path")


def test_modes_from_the_archive_are_not_applied(tmp_path):
    ti = tarfile.TarInfo("NVIDIA/setuid")
    ti.size, ti.mode = 1, 0o4777
    with tarfile.open(tmp_path / "b.tar", "w") as tf:
        tf.addfile(ti, io.BytesIO(b"x"))
    unpack(tmp_path / "b.tar", tmp_path / "out")
    assert not (tmp_path / "out/NVIDIA/setuid").stat().st_mode & (stat.S_ISUID | stat.S_IXOTH)


@pytest.mark.shared_rounds
@pytest.mark.parametrize("round_", ["0.5", "0.6", "5.1"])
def test_real_rounds_unpack_completely(tmp_path, round_):
    archive = SHARED / f"training_v{round_}_results.tar.xz"
    if not archive.exists():
        print(f"skipping: {archive} is absent (set MLPERF_SHARED_DIR)")
        pytest.skip(f"{archive} is absent")
    with tarfile.open(shared_plain_tar(archive.name)) as tf:  # the expectation: tarfile's listing
        files = {m.name.removeprefix("./"): m.size for m in tf if m.isreg()}
    started = time.perf_counter()
    report = unpack(archive, tmp_path / "out", Limits(max_total_bytes=4 * 1024**3))
    elapsed = time.perf_counter() - started
    print(f"v{round_}: {report.files} files, {report.total_bytes / 1e6:.0f} MB in {elapsed:.2f}s")
    assert (report.format, report.files, report.total_bytes) == (
        "tar.xz",
        len(files),
        sum(files.values()),
    )
    on_disk = {
        p.relative_to(tmp_path / "out").as_posix(): p.stat().st_size
        for p in (tmp_path / "out").rglob("*")
        if p.is_file()
    }
    assert on_disk == files
    if round_ == "5.1":
        assert report.files == 1845
