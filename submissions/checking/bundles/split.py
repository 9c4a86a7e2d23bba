"""Splitting a whole round (one archive or folder holding many submitters) into bundles.

A published round is one tree with a folder per submitter (`NVIDIA/`, or `v0.5.0/nvidia/`
in v0.5). Each submitter's part becomes a plain tar of its own, written in a single
streaming pass, so it can go through the same pipeline as an uploaded bundle. A part is
handed over as soon as the archive moves on to the next submitter (a published round lists
each one's files together), so its checks start while the rest is still being read.

The unpacker's size and count limits (limits.Tally) are applied here too, from each member's
header before a byte of it is written: each part is held to a bundle's limits (files, bytes per
file, bytes in all), and everything written to the ratio against the round archive's own size.
A refusal stops the split and removes the part it was writing; the archive is then submitted
whole, which the unpacker refuses under the same limits with the same rule. Everything else
(paths, links, special files) open_bundle checks in each part.

SplitProcess runs the split in a process of its own (this file run as a script): it is mostly
decompression, which then runs beside the caller's work instead of taking turns with it.
This module imports nothing but the standard library and its neighbour limits.py (which names its rules
by the rule catalogue, pure Python too), so that the script starts at once.
"""

import dataclasses
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
from collections.abc import Iterable, Iterator
from pathlib import Path, PurePosixPath
from typing import NamedTuple

if __package__:
    from .limits import BundleError, Limits, Tally
else:  # SplitProcess's child, run as a script: its neighbour is loaded from its file, neither through the
    # package (whose __init__ imports the log parsers) nor by a bare name (an installed module may have it).
    # The project's folder goes last on sys.path for limits.py's one import of the project, the rule catalogue
    # (leaderboard/ and leaderboard/catalogue/ have empty __init__ files).
    import importlib.util

    sys.path.append(str(Path(__file__).resolve().parents[3]))

    _spec = importlib.util.spec_from_file_location(
        "_split_limits", os.path.join(os.path.dirname(os.path.abspath(__file__)), "limits.py")
    )
    _limits = sys.modules[_spec.name] = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(_limits)
    BundleError, Limits, Tally = _limits.BundleError, _limits.Limits, _limits.Tally

# Folders above the submitters: v0.5.0/ in v0.5, training_results_v0.6/ where a round was packed in its folder.
_ROUND_FOLDER = re.compile(r"^(training_results_)?v\d+(\.\d+)*$")
# What a v0.6+ submitter's folder holds. A v0.5 entry folder holds results/ too, but with submission.json beside it.
_TREE_FOLDERS = ("results", "systems", "benchmarks", "documentation")
_ENTRY_FILE = "submission.json"
_COPY_BUFFER = 1 << 20  # tarfile copies members 16 KiB at a time by default
_PLAIN = (tarfile.REGTYPE, tarfile.AREGTYPE, tarfile.DIRTYPE)  # no links, special or sparse files


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
    sha256: str | None = (
        None  # of the file, hashed as it was written (None for a part written on again)
    )
    # The archive's one submitter, every member copied as it was: the same bundle, as a plain tar.
    only: bool = False


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
    is: it is not a tar, holds fewer than two roots, is broken, or passes a limit (the unpacker then
    says what is wrong); `refused` is the BundleError of a limit passed, else None.

    A compressed archive of one submitter's tree whose every member is a file or folder copied under
    its own name is handed over as its one part, with `only` set: the same bundle as a plain tar, read
    in place by the pipeline. Submitting the archive instead had it decompressed a second time and
    unpacked to disk file by file: 0.62 s CPU for smc-ac-power's power bundle as a .tar.gz, against
    0.09 s to index the part in place.
    """

    def __init__(self, archive: Path, out_dir: Path, limits: Limits = Limits()):  # noqa: B008 - frozen
        self.archive, self.out_dir, self.limits = archive, out_dir, limits
        self.whole = False
        self.refused: BundleError | None = None

    def __iter__(self) -> Iterator[Part]:
        if not tarfile.is_tarfile(self.archive) or _one_root_in_plain_tar(self.archive):
            self.whole = True
            return
        self.out_dir.mkdir(parents=True, exist_ok=True)
        paths: dict[str, Path] = {}
        handed: set[str] = set()
        kept: set[Path] = set()  # the files of the parts handed over
        trees = _Trees()
        # Each part is a bundle, held to a bundle's limits; the ratio is of all that is written to the archive.
        tallies: dict[str, Tally] = {}
        written = Tally(_ratio_only(self.limits), os.path.getsize(self.archive))
        root = writer = None
        as_it_was = True  # every member so far copied under its own name, or the top folder itself
        try:
            with tarfile.open(self.archive, "r|*", copybufsize=_COPY_BUFFER) as source:
                for member in source:
                    found = _root(member.name)
                    if found is None:
                        as_it_was = as_it_was and member.isdir() and "/" not in member.name
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
                            part = self._close(writer, root, paths, root in handed)
                            handed.add(root)
                            kept.add(part.path)
                            yield part
                        if (
                            member_root in paths
                        ):  # it comes back: its part is copied to be written on
                            written.count_bytes(member.name, 0, paths[member_root].stat().st_size)
                        root = member_root
                        writer = self._open(root, paths)
                    tally = tallies.setdefault(root, Tally(self.limits, None))
                    tally.check_path(
                        [p for p in member.name.split("/") if p not in ("", ".")], member.name
                    )
                    if member.isdir():
                        tally.count_dir(member.name)
                    else:  # links and special files too: each is a header written, and the unpacker refuses them
                        size = member.size if member.isfile() else 0
                        tally.count_copied(member.name, size)
                        written.count_copied(member.name, size)
                    # Paths inside each part keep the submitter folder, as an upload would.
                    member.pax_headers.pop("path", None)  # else the old name wins on write
                    name = member.name
                    member.name = str(PurePosixPath(member.name)).removeprefix("./")
                    if root.count("/"):
                        member.name = member.name[len(root) - len(root.rpartition("/")[2]) :]
                    as_it_was = as_it_was and member.name == name and member.type in _PLAIN
                    writer.addfile(member, source.extractfile(member) if member.isfile() else None)
        except BundleError as refusal:
            self.refused, self.whole = refusal, True  # the part being written is removed below
        except (tarfile.TarError, EOFError, OSError, lzma.LZMAError, zlib.error):
            self.whole = True  # submit it whole: the unpacker will say what is wrong with it
        finally:
            last = self._close(writer, root, paths, root in handed) if writer is not None else None
        if not (self.whole or handed) and len(paths) == 1 and as_it_was and root in trees:
            yield last._replace(only=True)
            return
        if self.whole or (len(paths) < 2 and not handed):
            self.whole = True
            # The parts handed over are the caller's, who may be storing one now; the others go.
            for path in set(paths.values()) - kept:
                path.unlink(missing_ok=True)
            return
        yield last

    def _open(self, root: str, paths: dict[str, Path]) -> tarfile.TarFile:
        if (
            root in paths
        ):  # it came back: write on at the end of a copy of its part (the part may be stored)
            again = paths[root].with_name(f"{paths[root].stem}+.tar")
            shutil.copyfile(paths[root], again)
            paths[root] = again
            return tarfile.open(again, "a", format=tarfile.PAX_FORMAT, copybufsize=_COPY_BUFFER)
        name = re.sub(r"[^A-Za-z0-9._-]+", "_", root)
        paths[root] = self.out_dir / f"{name}.tar"
        out = _Hashing(paths[root])
        return tarfile.open(
            fileobj=out, mode="w", format=tarfile.PAX_FORMAT, copybufsize=_COPY_BUFFER
        )

    @staticmethod
    def _close(writer: tarfile.TarFile, root: str, paths: dict[str, Path], again: bool) -> Part:
        writer.close()
        out = writer.fileobj
        if isinstance(out, _Hashing):
            out.close()
            return Part(root, paths[root], again, out.digest.hexdigest())
        return Part(root, paths[root], again)


def _one_root_in_plain_tar(archive: Path) -> bool:
    """Whether the archive is a plain (uncompressed) tar of fewer than two submitter roots, found from its
    headers alone: tarfile seeks over the members' bytes. Such a bundle (one submitter's, as uploaded)
    was copied and hashed into a part only to be submitted as it is: 0.56 s CPU for smc-ac-power's
    134 MB, 0.16 s listed. False for a compressed archive (listing it costs its decompression) and for
    one that cannot be listed (the split says what to do with it)."""
    try:
        with tarfile.open(archive, "r:") as tar:
            return one_bundle(member.name for member in tar)
    except (tarfile.TarError, EOFError, OSError):
        return False


def one_bundle(names: Iterable[str]) -> bool:
    """Whether the member names lie under fewer than two submitter roots (below any round folders): one
    submitter's bundle, not a round to split."""
    roots = set()
    for name in names:
        found = _root(name)
        if found is not None:
            roots.add(found[0])
            if len(roots) > 1:
                return False
    return True


def _ratio_only(limits: Limits) -> Limits:
    """The limits of everything a split writes: the ratio alone (each part is held to the rest)."""
    return dataclasses.replace(
        limits, max_total_bytes=sys.maxsize, max_files=sys.maxsize, max_file_bytes=sys.maxsize
    )


class SplitProcess:
    """RoundSplit(archive, out_dir, limits) in a child process: iterate for its parts, as each is handed over;
    then `whole` and `refused` are RoundSplit's. limits: the settings' BUNDLE_MAX_* when not given. The child
    starts at once; close() stops it if it is still running (a part file it was writing stays in out_dir,
    which the caller removes)."""

    def __init__(self, archive: Path, out_dir: Path, limits: Limits | None = None):
        self.archive, self.out_dir = Path(archive).resolve(), Path(out_dir).resolve()
        self.whole = False
        self.refused: BundleError | None = None
        limits = limits or configured_limits()
        # Its errors go to a file: a pipe read only at the end could fill up and stop the child.
        self.errors = tempfile.TemporaryFile("w+")
        # -I: nothing from the environment or the script's folder on sys.path (its neighbours are no stdlib).
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-I",
                __file__,
                str(self.archive),
                str(self.out_dir),
                json.dumps(dataclasses.asdict(limits)),
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=self.errors,
            text=True,
        )

    def __iter__(self) -> Iterator[Part]:
        for line in self.process.stdout:
            item = json.loads(line)
            if "whole" in item:
                self.whole = item["whole"]
                if item.get("refused"):
                    self.refused = BundleError(**item["refused"])
            else:
                yield Part(
                    item["root"], Path(item["path"]), item["again"], item["sha256"], item["only"]
                )
        if self.process.wait():
            self.errors.seek(0)
            error = self.errors.read()
            raise RuntimeError(
                f"Splitting {self.archive.name} stopped (exit code {self.process.returncode}): "
                + (error.strip().splitlines() or ["no message"])[-1]
            )

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


def configured_limits() -> Limits:
    """The settings' BUNDLE_MAX_*, under which the pipeline opens a bundle and the round splitter splits one."""
    from django.conf import settings

    return Limits(
        max_total_bytes=settings.BUNDLE_MAX_TOTAL_BYTES,
        max_files=settings.BUNDLE_MAX_FILES,
        max_file_bytes=settings.BUNDLE_MAX_FILE_BYTES,
        max_ratio=settings.BUNDLE_MAX_RATIO,
    )


def _print_parts(archive: str, out_dir: str, limits: str) -> None:
    """SplitProcess's child: each part as a JSON line, as soon as it is handed over; then
    {"whole": ..., "refused": {"rule": ..., "message": ..., "member": ...} or null}."""
    split = RoundSplit(Path(archive), Path(out_dir), Limits(**json.loads(limits)))
    for part in split:
        print(
            json.dumps(
                {
                    "root": part.root,
                    "path": str(part.path),
                    "again": part.again,
                    "sha256": part.sha256,
                    "only": part.only,
                }
            ),
            flush=True,
        )
    refused = split.refused and {
        "rule": split.refused.rule,
        "message": str(split.refused),
        "member": split.refused.member,
    }
    print(json.dumps({"whole": split.whole, "refused": refused}), flush=True)


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
    """The packer's account names and ids are nobody's business, and when a file was written on this disk is
    no part of what it says: the same files make the same bytes (the same sha256), so that a folder
    submitted again, or checked out again by `manage.py import_round`, is the same submission."""
    info.uid = info.gid = 0
    info.mtime = 0
    info.uname = info.gname = ""
    return info


if __name__ == "__main__":
    _print_parts(*sys.argv[1:])
