"""A file of a stored bundle, read long after its checks: the log viewer's source of run logs.

The pipeline's work folder is gone once a submission is final; the bundle itself is kept. A plain
tar (every part of a split round, any uploaded .tar) is read in place through an index made once
(milliseconds: tar headers only) and kept beside the other caches; a compressed tar (.tar.gz, .tgz,
.tar.xz) is decompressed once, under the same limits as at ingest, into a plain tar kept in the cache
(its uncompressed size on disk, as long as the bundle is kept) and read in place the same way; a zip
is unpacked once into a folder of its own. All live under
MEDIA_ROOT/logs/<submission id>, apart from the pipeline's work folder, whose clean-up never
touches them; a missing bundle (deleted by retention) gives None. A bundle kept in a bucket is copied in
first (the copy of a plain tar is kept beside its index).
"""

import os
import shutil
import tempfile
from pathlib import Path

from django.conf import settings

from submissions import storage

from .bundles.files import FolderFiles, TarFiles
from .bundles.limits import BundleError
from .bundles.split import configured_limits
from .bundles.unpack import open_bundle, sniff


def _cache(submission_id: int) -> Path:
    return Path(settings.MEDIA_ROOT) / "logs" / str(submission_id)


def bundle_files(submission_id: int, bundle_name: str) -> FolderFiles | TarFiles | None:
    """The stored bundle's files, indexed or unpacked on first use; None when the bundle is gone or
    cannot be opened."""
    cache = _cache(submission_id)
    index, folder = cache / "index.json", cache / "files"
    try:
        files = TarFiles.load(index)
    except (FileNotFoundError, ValueError, KeyError):
        pass
    else:
        if not os.path.isfile(files.archive):  # the index outlives a bundle that retention deleted
            return None
        if sniff(files.archive) == "tar":
            return files
        # An index that reads a compressed bundle's bytes as if they were its plain tar's (left by the portal
        # before this was mended): made again.
        forget(submission_id)
    if folder.is_dir():
        return FolderFiles(folder)
    if not bundle_name:
        return None
    cache.parent.mkdir(parents=True, exist_ok=True)
    # Unpacked beside the cache and renamed into place: a reader never sees half a folder, and two first
    # readers at once each unpack, one rename winning.
    scratch = Path(tempfile.mkdtemp(prefix=f"{submission_id}.", dir=cache.parent))
    try:
        archive = storage.local_path(bundle_name)
        if archive is None:  # in a bucket: copied here, and kept where it is read in place
            archive = storage.readable_copy(bundle_name, scratch / "bundle")
        elif not archive.is_file():
            return None
        files = open_bundle(archive, scratch / "files", configured_limits())
        cache.mkdir(exist_ok=True)
        if isinstance(files, TarFiles):
            # The plain tar read in place: the stored bundle itself, or one made in scratch (a compressed
            # bundle's decompressed form, a bucket's copy), kept in the cache; never the compressed bytes.
            plain = Path(files.archive)
            if plain.is_relative_to(scratch):
                plain = plain.replace(cache / "bundle.tar")
            files.archive = os.path.abspath(plain)
            files.save(index)
            return files
        try:
            os.rename(scratch / "files", folder)
        except OSError:  # another reader's rename came first
            pass
        return FolderFiles(folder)
    except (BundleError, OSError):
        return None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def opener(submission_id: int, bundle_name: str, path: str):
    """A callable that opens the bundle's file `path` (bundle-relative) for binary reading, or None."""
    files = bundle_files(submission_id, bundle_name)
    if files is None:
        return None
    if isinstance(files, TarFiles):
        if path not in files.files:
            return None
        member = files.file(path)
        return member.open
    target = (files.base / path).resolve()
    if not target.is_relative_to(files.base.resolve()) or not target.is_file():
        return None
    return lambda: open(target, "rb")


def forget(submission_id: int) -> None:
    """Remove what bundle_files kept of the submission's bundle (when the bundle itself is deleted)."""
    shutil.rmtree(_cache(submission_id), ignore_errors=True)
