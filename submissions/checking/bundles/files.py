"""The files of a bundle as its checks read them: unpacked in a folder, or in place in a plain tar.

A plain tar (every streamed part of a round, and any uploaded .tar) keeps each member's bytes
in one contiguous range, so its files need not be written out again: creating a file costs
more than reading it on some file systems (about a millisecond each on an ext4 VM). The
unpacker checks such a tar as it would unpack it and returns a TarFiles, the list of ranges; a
compressed tar it decompresses into one plain tar, indexed as it is written.

Both kinds answer the same questions: the listing (for the layout), a file's bytes, the files
of one folder (for the RCP check). A file is given as something with open() -> binary file:
a Path for a folder, a Member for a tar.
"""

import io
import json
import os
from pathlib import Path


class _Range(io.RawIOBase):
    """Bytes [offset, offset + size) of a file, read with pread on a descriptor of its own."""

    def __init__(self, path: str, offset: int, size: int):
        self.fd = os.open(path, os.O_RDONLY)
        self.pos, self.end = offset, offset + size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        n = min(len(buffer), self.end - self.pos)
        if n <= 0:
            return 0
        got = os.preadv(self.fd, [memoryview(buffer)[:n]], self.pos)
        if not got:  # the index was checked against the file: it must have changed since
            raise OSError(
                f"the stored bundle ends {self.end - self.pos} bytes before this file does"
            )
        self.pos += got
        return got

    def close(self) -> None:
        if not self.closed and hasattr(self, "fd"):  # no fd when os.open failed
            os.close(self.fd)
        super().close()


class Member:
    """One regular file of a plain tar, read in place."""

    __slots__ = ("archive", "path", "offset", "size")

    def __init__(self, archive: str, path: str, offset: int, size: int):
        self.archive, self.path, self.offset, self.size = archive, path, offset, size

    @property
    def name(self) -> str:
        return self.path.rpartition("/")[2]

    def open(self, buffer_size: int = 64 * 1024) -> io.BufferedReader:
        return io.BufferedReader(_Range(self.archive, self.offset, self.size), buffer_size)

    def read_bytes(self, limit: int | None = None) -> bytes:
        """The file's bytes, with a limit at most limit + 1 of them, read with pread into one buffer of
        their size. Reading through open() asks the buffered reader for limit + 1 bytes, which it
        allocates whole: 256 MiB for each of the 1,505 power logs of a v4.0 bundle, 0.09 s of 0.1."""
        size = self.size if limit is None else min(self.size, limit + 1)
        fd = os.open(self.archive, os.O_RDONLY)
        try:
            chunks, at = [], self.offset
            while at < self.offset + size:
                chunk = os.pread(fd, min(self.offset + size - at, 1 << 30), at)
                if not chunk:  # the index was checked against the file: it must have changed since
                    raise OSError(
                        f"the stored bundle ends {self.offset + size - at} bytes before this file does"
                    )
                chunks.append(chunk)
                at += len(chunk)
        finally:
            os.close(fd)
        return b"".join(chunks)

    def __repr__(self) -> str:
        return f"<Member {self.path} of {self.archive}>"


class TarFiles:
    """A plain tar's files by bundle-relative path: where each one's bytes lie, and the folders it names."""

    def __init__(
        self, archive: str, files: dict[str, tuple[int, int]], folders: set[str], name: str
    ):
        self.archive = archive
        self.files = files  # path -> (offset, size)
        self.folders = folders  # every folder, named or implied by a file's path ("" is the top)
        self.name = name  # stands in for the folder's name where a layout needs one
        self._by_folder: dict[str, list[tuple[str, str]]] | None = None

    def file(self, path: str) -> Member:
        offset, size = self.files[path]
        return Member(self.archive, path, offset, size)

    def read_bytes(self, path: str, limit: int | None = None) -> bytes:
        """The file's bytes; with a limit, at most limit + 1 of them (enough to tell a file that is larger)."""
        return self.file(path).read_bytes(limit)

    def folder(self, path: str) -> dict[str, Member]:
        """The files directly inside folder `path`, by name."""
        if self._by_folder is None:  # once: finalize asks for every result folder of the bundle
            self._by_folder = {}
            for rel in self.files:
                parent, _, name = rel.rpartition("/")
                self._by_folder.setdefault(parent, []).append((name, rel))
        return {name: self.file(rel) for name, rel in self._by_folder.get(path, [])}

    def walk(self) -> dict[str, tuple[list[str], list[str]]]:
        """{folder: (sorted subfolder names, sorted file names)} for every folder, like os.walk's."""
        tree = {folder: ([], []) for folder in self.folders}
        for folder in self.folders:
            if folder:
                parent, _, name = folder.rpartition("/")
                tree[parent][0].append(name)
        for path in self.files:
            parent, _, name = path.rpartition("/")
            tree[parent][1].append(name)
        for dirs, files in tree.values():
            dirs.sort()
            files.sort()
        return tree

    def save(self, path: Path) -> None:
        """Write the index for the steps after ingest (written aside and renamed: never half there). The
        archive is named relative to the index, so that workers may mount the media folder anywhere."""
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.tmp")
        tmp.write_text(
            json.dumps(
                {
                    "archive": os.path.relpath(self.archive, path.parent),
                    "name": self.name,
                    "files": self.files,
                    "folders": sorted(self.folders),
                }
            )
        )
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: Path) -> "TarFiles":
        data = json.loads(path.read_text())
        files = {rel: (offset, size) for rel, (offset, size) in data["files"].items()}
        return cls(
            os.path.join(path.parent, data["archive"]), files, set(data["folders"]), data["name"]
        )


class FolderFiles:
    """A bundle unpacked into a folder (or a folder on disk): the same questions, answered by the file system."""

    def __init__(self, base: str | os.PathLike):
        self.base = Path(base)
        self.name = os.path.basename(os.path.abspath(base))

    def file(self, path: str) -> Path:
        return self.base / path

    def read_bytes(self, path: str, limit: int | None = None) -> bytes:
        """As TarFiles.read_bytes."""
        with open(self.base / path, "rb") as f:
            if limit is None:
                return f.read()
            # Not read(limit + 1), which allocates that much whatever the file's size (as Member's).
            return f.read(min(limit, os.fstat(f.fileno()).st_size) + 1)

    def folder(self, path: str) -> Path:
        return self.base / path

    def walk(self) -> dict[str, tuple[list[str], list[str]]]:
        """As TarFiles.walk."""
        tree = {}
        for dirpath, dirnames, filenames in os.walk(self.base):
            dirnames.sort()
            rel = os.path.relpath(dirpath, self.base).replace(os.sep, "/")
            tree["" if rel == "." else rel] = (list(dirnames), sorted(filenames))
        return tree
