"""A file of a stored bundle, read long after its checks: the log viewer's source of run logs.

The pipeline's work folder is gone once a submission is final; the bundle itself is kept. A plain
tar (every part of a split round, any uploaded .tar) is read in place through an index made once
(milliseconds: tar headers only) and kept beside the other caches; a compressed bundle is unpacked
once, under the same limits as at ingest, into a folder of its own. Both live under
MEDIA_ROOT/logs/<submission id>, apart from the pipeline's work folder, whose clean-up never
touches them; a missing bundle (deleted by retention) gives None.
"""

import os
import shutil
import tempfile
from pathlib import Path

from django.conf import settings

from .files import FolderFiles, TarFiles
from .limits import BundleError
from .split import configured_limits
from .unpack import open_bundle


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
    else:  # the index outlives a bundle that retention deleted
        return files if os.path.isfile(files.archive) else None
    if folder.is_dir():
        return FolderFiles(folder)
    if not bundle_name:
        return None
    archive = Path(settings.MEDIA_ROOT) / bundle_name
    if not archive.is_file():
        return None
    cache.parent.mkdir(parents=True, exist_ok=True)
    # Unpacked beside the cache and renamed into place: a reader never sees half a folder, and two first
    # readers at once each unpack, one rename winning.
    scratch = Path(tempfile.mkdtemp(prefix=f"{submission_id}.", dir=cache.parent))
    try:
        files = open_bundle(archive, scratch / "files", configured_limits())
        cache.mkdir(exist_ok=True)
        if isinstance(files, TarFiles):
            files.archive = os.path.abspath(archive)
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
