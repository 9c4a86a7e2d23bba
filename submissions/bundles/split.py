"""Splitting a whole round (one archive or folder holding many submitters) into bundles.

A published round is one tree with a folder per submitter (`NVIDIA/`, or `v0.5.0/nvidia/`
in v0.5). Each submitter's part becomes a plain tar of its own, written in a single
streaming pass, so it can go through the same pipeline as an uploaded bundle. Nothing is
checked here: the unpacker applies every limit to each part.
"""

import lzma
import os
import re
import tarfile
import zlib
from pathlib import Path, PurePosixPath

_VERSION_FOLDER = re.compile(r"^v\d+(\.\d+)*$")


def submitter_root(member: str) -> str | None:
    """'NVIDIA/results/x/result_0.txt' -> 'NVIDIA'; 'v0.5.0/google/...' -> 'v0.5.0/google'.

    None for top-level files and for a tree whose top already is one submitter.
    """
    parts = [p for p in PurePosixPath(member).parts if p not in (".", "/")]
    if len(parts) < 2:
        return None
    if _VERSION_FOLDER.match(parts[0]):
        return "/".join(parts[:2]) if len(parts) > 2 else None
    if parts[0] in ("results", "systems", "benchmarks", "documentation"):
        return None
    return parts[0]


def split_archive(archive: Path, out_dir: Path) -> dict[str, Path]:
    """Write one plain tar per submitter root found in `archive`; return {root: tar path}.

    Returns {} when the archive is not a tar or holds fewer than two roots (it is a bundle).
    """
    if not tarfile.is_tarfile(archive):
        return {}
    out_dir.mkdir(parents=True, exist_ok=True)
    writers: dict[str, tarfile.TarFile] = {}
    broken = False
    try:
        with tarfile.open(archive, "r|*") as source:
            for member in source:
                root = submitter_root(member.name)
                if root is None:
                    continue
                writer = writers.get(root)
                if writer is None:
                    name = re.sub(r"[^A-Za-z0-9._-]+", "_", root)
                    writer = writers[root] = tarfile.open(out_dir / f"{name}.tar", "w", format=tarfile.PAX_FORMAT)
                # Paths inside each part keep the submitter folder, as an upload would.
                member.pax_headers.pop("path", None)  # else the old name wins on write
                member.name = str(PurePosixPath(member.name)).removeprefix("./")
                if root.count("/"):
                    member.name = member.name[len(root) - len(root.rpartition("/")[2]):]
                writer.addfile(member, source.extractfile(member) if member.isfile() else None)
    except (tarfile.TarError, EOFError, OSError, lzma.LZMAError, zlib.error):
        broken = True  # submit it whole: the unpacker will say what is wrong with it
    finally:
        for writer in writers.values():
            writer.close()
    paths = {root: Path(w.name) for root, w in writers.items()}
    if broken or len(paths) < 2:
        for path in paths.values():
            path.unlink(missing_ok=True)
        return {}
    return paths


def split_folder(folder: Path, out_dir: Path) -> dict[str, Path]:
    """Pack a folder on disk as one plain tar per submitter root (or one for the whole folder)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    roots = sorted({
        root for dirpath, _, files in os.walk(folder) for f in files
        if (root := submitter_root((Path(dirpath) / f).relative_to(folder).as_posix()))
    })
    if len(roots) < 2:
        roots = [""]
    packed = {}
    for root in roots:
        source = folder / root if root else folder
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
