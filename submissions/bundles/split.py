"""Splitting a whole round (one archive or folder holding many submitters) into bundles.

A published round is one tree with a folder per submitter (`NVIDIA/`, or `v0.5.0/nvidia/`
in v0.5). Each submitter's part becomes a plain tar of its own, written in a single
streaming pass, so it can go through the same pipeline as an uploaded bundle. A part is
handed over as soon as the archive moves on to the next submitter (a published round lists
each one's files together), so its checks start while the rest is still being read. Nothing
is checked here: open_bundle applies every limit to each part.

SplitProcess runs the split in a process of its own (this file run as a script): it is mostly
decompression, which then runs beside the caller's work instead of taking turns with it.
This module imports nothing but the standard library, so that the script starts at once.
"""

import hashlib
import json
import lzma
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zlib
from pathlib import Path, PurePosixPath
from typing import Iterator, NamedTuple

# Folders above the submitters: v0.5.0/ in v0.5, training_results_v0.6/ where a round was packed in its folder.
_ROUND_FOLDER = re.compile(r"^(training_results_)?v\d+(\.\d+)*$")
# What a v0.6+ submitter's folder holds. A v0.5 entry folder holds results/ too, but with submission.json beside it.
_TREE_FOLDERS = ("results", "systems", "benchmarks", "documentation")
_ENTRY_FILE = "submission.json"
_COPY_BUFFER = 1 << 20  # tarfile copies members 16 KiB at a time by default


def _root(member: str) -> tuple[str, str] | None:
    """(the member's top folder below any round folders, what the member says of it: "tree" when it is a
    submitter's, "entry" when it is a v0.5 entry folder, else ""); None for a member outside such a folder."""
    parts = [p for p in PurePosixPath(member).parts if p not in (".", "/")]
    lead = 0
    while lead < len(parts) - 1 and _ROUND_FOLDER.match(parts[lead]):
        lead += 1
    if len(parts) - lead < 2 or parts[lead] in _TREE_FOLDERS:
        return None  # a file at the top, or the tree of one submitter
    root = "/".join(parts[: lead + 1])
    if lead:  # below a round folder every folder is a submitter's (v0.5.0/google)
        return root, "tree"
    if parts[1] in _TREE_FOLDERS:
        return root, "tree"
    return root, "entry" if parts[1:] == [_ENTRY_FILE] else ""


class _Trees:
    """Which top folders are submitters' trees, from what their members say."""

    def __init__(self):
        self.marks: dict[str, set[str]] = {}

    def add(self, root: str, mark: str) -> None:
        if mark:
            self.marks.setdefault(root, set()).add(mark)

    def __contains__(self, root: str) -> bool:
        return self.marks.get(root) == {"tree"}


def submitter_root(member: str) -> str | None:
    """'NVIDIA/results/x/result_0.txt' -> 'NVIDIA'; 'v0.5.0/google/...' -> 'v0.5.0/google'.

    None for top-level files, for a tree whose top already is one submitter, and for a top folder that is
    not known from this one path to be a submitter's tree (one v0.5 submitter's entry folders).
    """
    found = _root(member)
    return found[0] if found and found[1] == "tree" else None


class Part(NamedTuple):
    root: str  # the submitter folder, e.g. "NVIDIA" or "v0.5.0/google"
    path: Path  # the plain tar holding it
    again: bool  # the root came back after it was handed over: this part holds all of it, the earlier one not
    sha256: str | None = None  # of the file, hashed as it was written (None for a part written on again)


class _Hashing:
    """A file written through: hashed on the way, so that storing the part need not read it again."""

    def __init__(self, path: Path):
        self.file = open(path, "wb")
        self.digest = hashlib.sha256()

    def write(self, data) -> int:
        self.digest.update(data)
        return self.file.write(data)

    def tell(self) -> int:
        return self.file.tell()

    def close(self) -> None:
        self.file.close()


class RoundSplit:
    """Iterate to split a round archive into parts, one per submitter root, each handed over complete.

    A root's part is handed over when the next root starts. Should a root come back later (an archive
    not made by `tar` from a folder), its part is written on and handed over again with `again` set, to
    replace the earlier one. After iterating, `whole` is True when the archive is to be submitted as it
    is: it is not a tar, holds fewer than two roots, or is broken (the unpacker then says what is wrong).
    """

    def __init__(self, archive: Path, out_dir: Path):
        self.archive, self.out_dir = archive, out_dir
        self.whole = False

    def __iter__(self) -> Iterator[Part]:
        if not tarfile.is_tarfile(self.archive):
            self.whole = True
            return
        self.out_dir.mkdir(parents=True, exist_ok=True)
        paths: dict[str, Path] = {}
        handed: set[str] = set()
        trees = _Trees()
        root = writer = None
        try:
            with tarfile.open(self.archive, "r|*", copybufsize=_COPY_BUFFER) as source:
                for member in source:
                    found = _root(member.name)
                    if found is None:
                        continue
                    member_root, mark = found
                    trees.add(member_root, mark)
                    if member_root != root:
                        if writer is not None:
                            if not handed and root not in trees:
                                # The first top folder is no submitter's tree (one v0.5 submitter's entry
                                # folders): the archive is one bundle, not a round.
                                self.whole = True
                                break
                            yield self._close(writer, root, paths, root in handed)
                            handed.add(root)
                        root = member_root
                        writer = self._open(root, paths)
                    # Paths inside each part keep the submitter folder, as an upload would.
                    member.pax_headers.pop("path", None)  # else the old name wins on write
                    member.name = str(PurePosixPath(member.name)).removeprefix("./")
                    if root.count("/"):
                        member.name = member.name[len(root) - len(root.rpartition("/")[2]):]
                    writer.addfile(member, source.extractfile(member) if member.isfile() else None)
        except (tarfile.TarError, EOFError, OSError, lzma.LZMAError, zlib.error):
            self.whole = True  # submit it whole: the unpacker will say what is wrong with it
        finally:
            last = self._close(writer, root, paths, root in handed) if writer is not None else None
        if self.whole or (len(paths) < 2 and not handed):
            self.whole = True
            for path in paths.values():
                path.unlink(missing_ok=True)
            return
        yield last

    def _open(self, root: str, paths: dict[str, Path]) -> tarfile.TarFile:
        if root in paths:  # it came back: write on at the end of a copy of its part (the part may be stored)
            again = paths[root].with_name(f"{paths[root].stem}+.tar")
            shutil.copyfile(paths[root], again)
            paths[root] = again
            return tarfile.open(again, "a", format=tarfile.PAX_FORMAT, copybufsize=_COPY_BUFFER)
        name = re.sub(r"[^A-Za-z0-9._-]+", "_", root)
        paths[root] = self.out_dir / f"{name}.tar"
        out = _Hashing(paths[root])
        return tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT, copybufsize=_COPY_BUFFER)

    @staticmethod
    def _close(writer: tarfile.TarFile, root: str, paths: dict[str, Path], again: bool) -> Part:
        writer.close()
        out = writer.fileobj
        if isinstance(out, _Hashing):
            out.close()
            return Part(root, paths[root], again, out.digest.hexdigest())
        return Part(root, paths[root], again)


class SplitProcess:
    """RoundSplit(archive, out_dir) in a child process: iterate for its parts, as each is handed over; then
    `whole` is RoundSplit's. The child starts at once; close() stops it if it is still running (a part file it
    was writing stays in out_dir, which the caller removes)."""

    def __init__(self, archive: Path, out_dir: Path):
        self.archive, self.out_dir = Path(archive).resolve(), Path(out_dir).resolve()
        self.whole = False
        # Its errors go to a file: a pipe read only at the end could fill up and stop the child.
        self.errors = tempfile.TemporaryFile("w+")
        # -I: nothing from the environment or the script's folder on sys.path (its neighbours are no stdlib).
        self.process = subprocess.Popen(
            [sys.executable, "-I", __file__, str(self.archive), str(self.out_dir)],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=self.errors, text=True,
        )

    def __iter__(self) -> Iterator[Part]:
        for line in self.process.stdout:
            item = json.loads(line)
            if "whole" in item:
                self.whole = item["whole"]
            else:
                yield Part(item["root"], Path(item["path"]), item["again"], item["sha256"])
        if self.process.wait():
            self.errors.seek(0)
            error = self.errors.read()
            raise RuntimeError(f"Splitting {self.archive.name} stopped (exit code {self.process.returncode}): "
                               + (error.strip().splitlines() or ["no message"])[-1])

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        self.process.stdout.close()
        self.errors.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _print_parts(archive: str, out_dir: str) -> None:
    """SplitProcess's child: each part as a JSON line, as soon as it is handed over; then {"whole": ...}."""
    split = RoundSplit(Path(archive), Path(out_dir))
    for part in split:
        print(json.dumps({"root": part.root, "path": str(part.path), "again": part.again, "sha256": part.sha256}),
              flush=True)
    print(json.dumps({"whole": split.whole}), flush=True)


def split_folder(folder: Path, out_dir: Path) -> dict[str, Path]:
    """Pack a folder on disk as one plain tar per submitter root (or one for the whole folder).

    It is split only when its top level holds several submitters' trees, as a round archive is.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    # A round folder's own name says that its folders are submitters (the v0.5.0 folder itself).
    base = folder.parent if _ROUND_FOLDER.match(folder.name) else folder
    roots, trees = set(), _Trees()
    for dirpath, _, files in os.walk(folder):
        for f in files:
            found = _root((Path(dirpath) / f).relative_to(base).as_posix())
            if found:
                roots.add(found[0])
                trees.add(*found)
    roots = sorted(roots) if len(roots) > 1 and any(root in trees for root in roots) else [""]
    packed = {}
    for root in roots:
        source = base / root if root else folder
        name = re.sub(r"[^A-Za-z0-9._-]+", "_", root or folder.name)
        path = out_dir / f"{name}.tar"
        with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as tar:
            # Links are stored as links, so the unpacker rejects them as it would in an upload.
            tar.add(source, arcname=source.name, recursive=True, filter=_anonymous)
        packed[root or folder.name] = path
    return packed


def _anonymous(info: tarfile.TarInfo) -> tarfile.TarInfo:
    """The packer's account names and ids are nobody's business."""
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


if __name__ == "__main__":
    _print_parts(*sys.argv[1:])
