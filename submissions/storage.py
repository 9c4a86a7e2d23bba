"""Bundles in Django's storage (settings.STORAGES["default"]): putting one there, reading one, deleting one.

A bundle arrives in a local file first (a streamed body, or the parts of a chunked upload), hashed on the way,
so that its name can be its sha256. It is then put in storage: renamed into place where the storage is a folder
on the same file system (a 2 GB bundle is not copied again), else streamed into it (an S3-compatible bucket).
A worker reads a bundle from a local path: the storage's own, or a copy made in the work folder.
"""

import os
import shutil
from pathlib import Path

from django.core.files import File
from django.core.files.storage import FileSystemStorage, default_storage, storages

COPY_BLOCK = 1024 * 1024


def local_path(name: str) -> Path | None:
    """The bundle's path on this machine where the storage is a local folder, else None (a bucket; and
    Django's in-memory storage, whose path() names a file that is not there)."""
    storage = storages["default"]
    if isinstance(storage, FileSystemStorage):
        return Path(storage.path(name))
    return None


def put(local: Path, name: str) -> str:
    """Move the local file into storage under `name`; returns the stored name. The local file is gone
    afterwards. Names are content addressed: a file of that name and size already holds these bytes, and
    is kept (not sent again, nor deleted first, which would fail a worker reading it meanwhile)."""
    target = local_path(name)
    if target is not None:
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.replace(local, target)
            _sync_folder(target.parent)
            return name
        except OSError:  # another file system: streamed below
            pass
    stored_size = _size(name)
    if stored_size == os.path.getsize(local):
        Path(local).unlink()
        return name
    if stored_size is not None:  # a copy cut short: replaced, not saved beside under another name
        default_storage.delete(name)
    with open(local, "rb") as f:
        stored = default_storage.save(name, _OnDisk(f, name=Path(name).name))
    Path(local).unlink(missing_ok=True)
    return stored


class _OnDisk(File):
    """A file a storage may take by its path, as Django's temporary uploads (a bucket's sends it from there,
    portal/backends/bundlestorage.py; a folder's moves it)."""

    def temporary_file_path(self) -> str:
        return self.file.name


def _size(name: str) -> int | None:
    try:
        return default_storage.size(name)
    except FileNotFoundError:
        return None


def _sync_folder(folder: Path) -> None:
    """Make a rename into `folder` survive a crash (the file's bytes were synced when written)."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def delete(name: str) -> None:
    if name:
        default_storage.delete(name)


def readable_copy(name: str, scratch: Path) -> Path:
    """A local path to read the bundle from: its own where the storage is local, else `scratch`, a copy
    streamed from storage (made once; the caller removes it with its work folder)."""
    path = local_path(name)
    if path is not None:
        return path
    if not scratch.is_file():
        scratch.parent.mkdir(parents=True, exist_ok=True)
        part = scratch.with_name(scratch.name + ".part")
        with default_storage.open(name, "rb") as source, open(part, "wb") as out:
            # A bucket's object is fetched in parts straight into `out`; read() would fetch it whole first.
            if _is_s3_file(source):
                source.obj.download_fileobj(out, Config=default_storage.transfer_config)
            else:
                shutil.copyfileobj(source, out, COPY_BLOCK)
        os.replace(part, scratch)
    return scratch


def _is_s3_file(f) -> bool:
    from storages.backends.s3 import S3File  # boto3: imported only where a bucket is used

    return isinstance(f, S3File)
