"""Safe, streaming unpacking of an uploaded bundle (tar, tar.gz, tar.xz, zip) under hard limits."""

import errno
import gzip
import lzma
import os
import queue
import shutil
import stat
import tarfile
import threading
import zipfile
import zlib
from dataclasses import dataclass

from leaderboard.catalogue import rule_catalogue

from .files import FolderFiles, TarFiles
from .limits import BundleError, Limits, Tally  # Limits and BundleError are imported from here too

CHUNK = 1024 * 1024
# tarfile re-slices its read-ahead buffer on every read: a small read-ahead keeps that cheap
# for the many small members, while 1 MiB reads of big members still gather several blocks.
_TAR_READAHEAD = 64 * 1024
_NAME_ERRNOS = (
    errno.EEXIST,
    errno.EISDIR,
    errno.ENOTDIR,
    errno.ENAMETOOLONG,
    errno.EINVAL,
    errno.EILSEQ,
    errno.ELOOP,
)
_PACK_HINT = (
    "Pack the submission folder itself, e.g. `tar -C <round folder> -czf bundle.tgz <Submitter>`."
)


@dataclass
class UnpackReport:
    files: int
    total_bytes: int
    format: str  # "tar", "tar.gz", "tar.xz", "zip"


def sniff(path) -> str | None:
    """The archive format from its first bytes, or None when it is none we take."""
    with open(path, "rb") as f:
        head = f.read(512)
    if head.startswith(b"\x1f\x8b"):
        return "tar.gz"
    if head.startswith(b"\xfd7zXZ\x00"):
        return "tar.xz"
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return "zip"
    if (
        head[257:262] == b"ustar"
        or _is_tar_header(head)
        or (len(head) == 512 and not head.strip(b"\0"))
    ):
        return "tar"  # the last: a tar of no members is only its end blocks of zeros
    return None


def _is_tar_header(block: bytes) -> bool:
    """An old (pre-POSIX) tar has no magic: its first header's checksum is the test."""
    try:
        tarfile.TarInfo.frombuf(block, "utf-8", "surrogateescape")
        return True
    except tarfile.HeaderError:
        return False


class _Writer(Tally):
    """Checks each member before writing and writes it under dest, counting every byte (the Tally's limits)."""

    def __init__(self, dest: str, limits: Limits, archive_bytes: int):
        super().__init__(limits, archive_bytes)
        self.dest = dest
        self.made: set[str] = set()  # folders made so far: no makedirs call per file

    def parts(self, name: str) -> list[str]:
        """Validated path components of a member name ([] for the archive's own root)."""
        path = name.replace("\\", "/")  # Windows zip tools write backslashes
        if "\x00" in path:
            raise BundleError(
                rule_catalogue.BUNDLE_BAD_PATH,
                f"'{name}' has a NUL byte in its name. Rename it.",
                name,
            )
        if path.startswith("/") or (len(path) > 1 and path[1] == ":" and path[0].isalpha()):
            raise BundleError(
                rule_catalogue.BUNDLE_ABSOLUTE_PATH,
                f"'{name}' has an absolute path; every path in a bundle must be relative. {_PACK_HINT}",
                name,
            )
        parts = [p for p in path.split("/") if p not in ("", ".")]
        if ".." in parts:
            raise BundleError(
                rule_catalogue.BUNDLE_PATH_TRAVERSAL,
                f"'{name}' contains '..' and would land outside the bundle. {_PACK_HINT}",
                name,
            )
        self.check_path(parts, name)
        return parts

    def mkdir(self, parts: list[str], member: str) -> None:
        self.count_dir(member)
        path = os.path.join(self.dest, *parts)
        self._os(member, os.makedirs, path, exist_ok=True)
        self.made.add(path)

    def take(self, parts: list[str], tf: tarfile.TarFile, info: tarfile.TarInfo) -> None:
        """A regular file of a tar: written out."""
        self.write(parts, tf.extractfile(info), info.size, info.name)

    def write(self, parts: list[str], src, declared: int, member: str) -> None:
        self.count_file(member, declared)
        path = os.path.join(self.dest, *parts)
        folder = os.path.dirname(path)
        if len(parts) > 1 and folder not in self.made:
            self._os(member, os.makedirs, folder, exist_ok=True)
            self.made.add(folder)
        fd = self._os(
            member, os.open, path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644
        )
        written = 0
        with open(fd, "wb") as out:
            while chunk := src.read(CHUNK):
                written += len(chunk)
                self.count_bytes(
                    member, written, len(chunk)
                )  # real bytes: a lying header still stops here
                out.write(chunk)

    @staticmethod
    def _os(member, fn, *args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except OSError as e:
            if e.errno in _NAME_ERRNOS:
                raise BundleError(
                    rule_catalogue.BUNDLE_BAD_PATH,
                    f"'{member}' cannot be written ({e.strerror}): a file and a folder share that name, "
                    "or the name is too long. Rename it.",
                    member,
                ) from None
            raise


class _NotInPlace(Exception):
    """A member whose bytes are not one range of the archive (a sparse file): unpack instead."""


class _Indexer(_Writer):
    """Checks each member of a plain tar as _Writer does, but writes nothing: it records where the
    bytes of each file lie. A file and a folder of the same name are refused, as writing them would be.
    tar_bytes: the size of the plain tar, None where it is being written as it is read (a compressed
    archive's: a file's bytes that are not there then stop the reading)."""

    def __init__(self, limits: Limits, archive_bytes: int, tar_bytes: int | None):
        super().__init__("", limits, archive_bytes)
        self.tar_bytes = tar_bytes
        self.ranges: dict[str, tuple[int, int]] = {}
        self.folders: set[str] = {""}

    def mkdir(self, parts: list[str], member: str) -> None:
        self.count_dir(member)
        self._add_folders(parts, member)

    def take(self, parts: list[str], tf: tarfile.TarFile, info: tarfile.TarInfo) -> None:
        member = info.name
        if info.issparse():
            raise _NotInPlace(member)
        self.count_file(member, info.size)
        if self.tar_bytes is not None and info.offset_data + info.size > self.tar_bytes:
            raise _corrupt(
                member, EOFError(f"the file's bytes end past the archive's {self.tar_bytes}")
            )
        self.total += info.size
        self._add_folders(parts[:-1], member)
        path = "/".join(parts)
        if path in self.folders:
            raise self._clash(member)
        self.ranges[path] = (
            info.offset_data,
            info.size,
        )  # a later member of the same name wins, as on disk

    def _add_folders(self, parts: list[str], member: str) -> None:
        path = "/".join(parts)
        if path in self.folders:
            return
        for end in range(1, len(parts) + 1):
            folder = "/".join(parts[:end])
            if folder in self.ranges:
                raise self._clash(member)
            self.folders.add(folder)

    @staticmethod
    def _clash(member: str) -> BundleError:
        return BundleError(
            rule_catalogue.BUNDLE_BAD_PATH,
            f"'{member}' cannot be written: a file and a folder share that name. Rename it.",
            member,
        )


def _corrupt(member: str | None, error: BaseException, done: bool = False) -> BundleError:
    where = f"{'after' if done else 'at'} '{member}'" if member else "at its start"
    return BundleError(
        rule_catalogue.BUNDLE_TRUNCATED,
        f"The archive is truncated or corrupt {where} ({type(error).__name__}: {error}). "
        "Check that the upload finished, create the archive again and re-upload.",
        member,
    )


class _CorruptHeader(Exception):
    """Raised instead of tarfile's header errors, which tarfile would take as a silent end."""


class _StrictInfo(tarfile.TarInfo):
    @classmethod
    def fromtarfile(cls, tf):
        try:
            return super().fromtarfile(tf)
        except (
            tarfile.EmptyHeaderError,
            tarfile.TruncatedHeaderError,
            tarfile.InvalidHeaderError,
        ) as e:
            if tf.offset == 0:
                raise  # tarfile reports this as ReadError: not a tar at all
            raise _CorruptHeader(f"no valid tar header at byte {tf.offset}: {e}") from None


_TAR_ERRORS = (
    EOFError,
    tarfile.TarError,
    zlib.error,
    lzma.LZMAError,
    gzip.BadGzipFile,
    _CorruptHeader,
)


class _Inflater:
    """Decompresses ahead in a thread: liblzma and zlib release the GIL, so inflating overlaps
    creating files, as `tar xJf` overlaps xz and tar. Chunks come from read1, so everything
    before a truncation is handed over and the error surfaces on the read that crosses the cut."""

    def __init__(self, f):
        self.chunks = queue.Queue(8)  # at most 8 MiB ahead
        self.stop = threading.Event()
        self.buf, self.pos, self.end = b"", 0, None  # end: b"" at EOF, or the reader's exception
        self.thread = threading.Thread(target=self._run, args=(f,), daemon=True)
        self.thread.start()

    def _run(self, f):
        try:
            while chunk := f.read1(CHUNK):
                if not self._put(chunk):
                    return
            self._put(b"")
        except Exception as e:
            self._put(e)

    def _put(self, item) -> bool:
        while not self.stop.is_set():
            try:
                self.chunks.put(item, timeout=0.1)
                return True
            except queue.Full:
                pass
        return False

    def read(self, n=-1):
        while self.pos == len(self.buf):
            if self.end is not None:
                if isinstance(self.end, Exception):
                    raise self.end
                return b""
            item = self.chunks.get()
            if isinstance(item, bytes) and item:
                self.buf, self.pos = item, 0
            else:
                self.end = item
        out = self.buf[self.pos :] if n < 0 else self.buf[self.pos : self.pos + n]
        self.pos += len(out)
        return out

    def close(self):
        self.stop.set()
        self.thread.join()


class _Copying:
    """A stream whose bytes are written to `out` as they are read."""

    def __init__(self, stream, out):
        self.stream, self.out = stream, out

    def read(self, n=-1):
        data = self.stream.read(n)
        self.out.write(data)
        return data


def _untar(archive: str, fmt: str, w: _Writer, copy_to=None) -> None:
    """Check each member with w (which writes it out, or indexes it); copy_to: a binary file that the
    tar's bytes, decompressed, are written to as they are read."""
    member, done = None, False
    with open(archive, "rb") as raw:
        # Our own decompressor wrappers bound each read's output, unlike tarfile's 'r|xz'.
        stream = (
            raw
            if fmt == "tar"
            else _Inflater(gzip.GzipFile(fileobj=raw) if fmt == "tar.gz" else lzma.LZMAFile(raw))
        )
        # The indexer seeks past the files' bytes of a plain tar; those of a tar being copied are read.
        mode = "r:" if isinstance(w, _Indexer) and copy_to is None else "r|"
        read_from = stream if copy_to is None else _Copying(stream, copy_to)
        try:
            with tarfile.open(
                fileobj=read_from, mode=mode, bufsize=_TAR_READAHEAD, tarinfo=_StrictInfo
            ) as tf:
                for info in tf:
                    member, done = info.name, False
                    parts = w.parts(info.name)
                    if info.issym() or info.islnk():
                        raise BundleError(
                            rule_catalogue.BUNDLE_LINK,
                            f"'{member}' is a {'symbolic' if info.issym() else 'hard'} link to '{info.linkname}'; "
                            "links are not accepted. Put a copy of the file there (tar -h follows links).",
                            member,
                        )
                    if info.isdir():
                        if parts:
                            w.mkdir(parts, member)
                    elif info.isreg() and parts:
                        w.take(parts, tf, info)
                    else:
                        raise BundleError(
                            rule_catalogue.BUNDLE_SPECIAL_FILE,
                            f"'{member}' is a device, FIFO or other special file, not a regular file. Remove it.",
                            member,
                        )
                    done = True
        except tarfile.ReadError as e:
            # Header errors before any member: the stream decompressed fine but is no tar.
            if member is None and fmt != "tar" and isinstance(e.__context__, tarfile.HeaderError):
                raise BundleError(
                    rule_catalogue.BUNDLE_NOT_AN_ARCHIVE,
                    f"The {fmt.split('.')[1]} stream does not hold a tar archive ({e}). {_PACK_HINT}",
                ) from None
            raise _corrupt(member, e, done) from None
        except _TAR_ERRORS as e:
            raise _corrupt(member, e, done) from None
        finally:
            if stream is not raw:
                stream.close()


def _unzip(archive: str, w: _Writer) -> None:
    try:
        zf = zipfile.ZipFile(archive)
    except (zipfile.BadZipFile, EOFError, OSError) as e:
        raise BundleError(
            rule_catalogue.BUNDLE_TRUNCATED,
            f"The zip file is truncated or corrupt: its table of contents is unreadable ({e}). "
            "Check that the upload finished, create the archive again and re-upload.",
        ) from None
    except NotImplementedError as e:  # found by fuzzing: a member needing a zip version past 6.3
        raise BundleError(
            rule_catalogue.BUNDLE_UNSUPPORTED,
            f"The zip file uses a format the portal cannot read ({e}). Use a .tar.gz.",
        ) from None
    except UnicodeDecodeError as e:  # found by fuzzing: a name flagged as UTF-8 that is not
        raise BundleError(
            rule_catalogue.BUNDLE_BAD_PATH,
            f"A name in the zip file is marked as UTF-8 but is not ({e}). Create the archive "
            "again, or pack it as a .tar.gz.",
        ) from None
    member = None
    with zf:
        try:
            for info in zf.infolist():
                member = info.filename
                parts = w.parts(info.filename)
                mode = info.external_attr >> 16
                if stat.S_ISLNK(mode):
                    raise BundleError(
                        rule_catalogue.BUNDLE_LINK,
                        f"'{member}' is a symbolic link; links are not accepted. Put a copy of the file there.",
                        member,
                    )
                if not info.filename:  # found by fuzzing: ZipInfo.is_dir() raised IndexError on it
                    raise BundleError(
                        rule_catalogue.BUNDLE_BAD_PATH,
                        "A member of the zip file has an empty name. Create the "
                        "archive again with your zip tool or as a .tar.gz.",
                    )
                if info.is_dir() or stat.S_ISDIR(mode):
                    if parts:
                        w.mkdir(parts, member)
                    continue
                if stat.S_IFMT(mode) not in (0, stat.S_IFREG) or not parts:  # 0: no unix type bits
                    raise BundleError(
                        rule_catalogue.BUNDLE_SPECIAL_FILE,
                        f"'{member}' is a device, FIFO or other special file, not a regular file. Remove it.",
                        member,
                    )
                if info.flag_bits & 0x1:
                    raise BundleError(
                        rule_catalogue.BUNDLE_UNSUPPORTED,
                        f"'{member}' is encrypted. Upload an archive without a password.",
                        member,
                    )
                try:
                    src = zf.open(info)
                except NotImplementedError as e:
                    raise BundleError(
                        rule_catalogue.BUNDLE_UNSUPPORTED,
                        f"'{member}' uses a compression the portal cannot read ({e}). Use deflate, or a .tar.gz.",
                        member,
                    ) from None
                except OSError as e:
                    if e.errno != errno.EINVAL:
                        raise
                    # The member's header offset points before the file's start (found by fuzzing): seek fails.
                    raise _corrupt(member, e) from None
                with src:
                    w.write(parts, src, info.file_size, member)
        except (
            zipfile.BadZipFile,
            EOFError,
            zlib.error,
            lzma.LZMAError,
            OSError,
            UnicodeDecodeError,
        ) as e:
            if isinstance(e, OSError) and e.errno is not None:
                raise  # a real disk problem on our side, not the bundle's
            raise _corrupt(member, e) from None


def _prepare(dest: str) -> bool:
    """Create dest (or accept an empty one); True when we created it."""
    if os.path.isdir(dest) and not os.path.islink(dest):
        if os.listdir(dest):
            raise FileExistsError(f"{dest} is not empty; unpack needs a fresh folder")
        return False
    os.makedirs(dest)
    return True


def _clear(dest: str, created: bool) -> None:
    if created:
        shutil.rmtree(dest, ignore_errors=True)
        return
    for entry in os.scandir(dest):
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path, ignore_errors=True)
        else:
            os.unlink(entry.path)


def unpack(
    archive: str | os.PathLike, dest: str | os.PathLike, limits: Limits = Limits()
) -> UnpackReport:
    """Unpack archive into a new folder dest; on any error dest is left absent (or empty)."""
    archive, dest = os.fspath(archive), os.fspath(dest)
    fmt = sniff(archive)
    if fmt is None:
        raise BundleError(
            rule_catalogue.BUNDLE_NOT_AN_ARCHIVE,
            "The uploaded file is not a .tar, .tar.gz, .tar.xz or .zip archive (judged by its content, "
            f"not its name). {_PACK_HINT}",
        )
    created = _prepare(dest)
    w = _Writer(dest, limits, os.path.getsize(archive))
    try:
        if fmt == "zip":
            _unzip(archive, w)
        else:
            _untar(archive, fmt, w)
        if w.files == 0:
            raise _empty()
    except BaseException:
        _clear(dest, created)
        raise
    return UnpackReport(files=w.files, total_bytes=w.total, format=fmt)


def _empty() -> BundleError:
    return BundleError(rule_catalogue.BUNDLE_EMPTY, f"The archive holds no files. {_PACK_HINT}")


PLAIN_TAR = "bundle.tar"  # what a compressed tar is decompressed into, in open_bundle's dest


def open_bundle(
    archive: str | os.PathLike, dest: str | os.PathLike, limits: Limits = Limits()
) -> TarFiles | FolderFiles:
    """The bundle's files, checked under limits as unpack checks them: read in place when archive is a
    plain tar (nothing is written); a compressed tar is decompressed into one plain tar in dest
    (PLAIN_TAR), indexed as it is written, and read in place there; anything else (a zip, a tar with a
    sparse file) is unpacked into dest. A BundleError leaves dest absent (or empty).

    Decompressing into one file instead of unpacking a file per member: smc-ac-power's v4.0 power
    bundle as a .tar.gz took 0.7 to 2.7 s CPU and 2,000 files created, now 0.6 s (0.4 s of it gunzip)."""
    archive, dest = os.fspath(archive), os.fspath(dest)
    fmt = sniff(archive)
    name = os.path.basename(os.path.abspath(dest))
    if fmt == "tar":
        w = _Indexer(limits, os.path.getsize(archive), os.path.getsize(archive))
        try:
            _untar(archive, "tar", w)
        except _NotInPlace:
            pass  # a sparse file: its bytes are not one range of the archive
        else:
            if w.files == 0:
                raise _empty()
            return TarFiles(archive, w.ranges, w.folders, name)
    elif fmt in ("tar.gz", "tar.xz"):
        created = _prepare(dest)
        plain = os.path.join(dest, PLAIN_TAR)
        w = _Indexer(limits, os.path.getsize(archive), None)
        try:
            with open(plain, "wb") as out:
                _untar(archive, fmt, w, copy_to=out)
            if w.files == 0:
                raise _empty()
        except _NotInPlace:
            _clear(dest, created)  # unpacked below
        except BaseException:
            _clear(dest, created)
            raise
        else:
            return TarFiles(plain, w.ranges, w.folders, name)
    unpack(archive, dest, limits)
    return FolderFiles(dest)
