"""`manage.py ingest ARCHIVE` starts splitting the archive before Django starts, and the command takes it over.

Django's start-up (about half a second) would otherwise come first, with the second core and the workers
idle; in that time the child (SplitProcess) writes the first submitter's part, a third of v5.1. Only the
settings are read here, not the apps: portal/__init__.py imports nothing, so that this is cheap.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .bundles.split import SplitProcess

_started: dict[Path, SplitProcess] = {}


def start(argv: list[str]) -> None:
    """For `manage.py ingest ARCHIVE ...` (the archive first, as the README gives it): start splitting it."""
    if argv[1:2] != ["ingest"] or len(argv) < 3 or not os.path.isfile(argv[2]):
        return
    from .bundles.split import SplitProcess  # imported here: manage.py imports this module for every command

    path = Path(argv[2]).resolve()
    _started[path] = SplitProcess(path, scratch_folder())
    atexit.register(_stop_untaken)  # the command may never take it: a wrong option ends it in argparse


def _stop_untaken() -> None:
    while _started:
        split = _started.popitem()[1]
        split.close()
        shutil.rmtree(split.out_dir, ignore_errors=True)


def take(path: Path) -> SplitProcess | None:
    """The split start() began for this archive, now the caller's to close; None if there is none."""
    return _started.pop(Path(path).resolve(), None)


def scratch_folder() -> Path:
    """A new folder under MEDIA_ROOT/tmp, on the bundles' file system, so that parts are linked into place."""
    from django.conf import settings

    root = Path(settings.MEDIA_ROOT) / "tmp"
    root.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix="split-", dir=root))
