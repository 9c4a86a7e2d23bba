"""`manage.py ingest ARCHIVE` starts splitting the archive before Django starts, and the command takes it over.

Django's start-up (about half a second) would otherwise come first, with the second core and the workers
idle; in that time the child (SplitProcess) writes the first submitter's part, a third of v5.1. Only the
settings are read here, not the apps: portal/__init__.py imports nothing, so that this is cheap. One of the
start-up speed-ups listed in startup.py.
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
# The options of `ingest` and Django's whose value is the next argument (unless it follows "="), copied by hand:
# Django's parser is not built yet. tests/test_startup.py fails when the copy and the command disagree.
_VALUE_OPTIONS = {"--round", "--timeout", "--settings", "--pythonpath", "-v", "--verbosity"}


def start(argv: list[str]) -> None:
    """For `manage.py ingest ARCHIVE ...`, with options before or after the archive: start splitting it."""
    archive = _archive(argv)
    if archive is None:
        return
    from .bundles.split import (
        SplitProcess,
    )  # imported here: manage.py imports this module for every command

    path = Path(archive).resolve()
    _started[path] = SplitProcess(path, scratch_folder())
    atexit.register(
        _stop_untaken
    )  # the command may never take it: a wrong option ends it in argparse


def _archive(argv: list[str]) -> str | None:
    """The path argument of `manage.py ingest`, if it is a file. A misreading costs only a split no one takes."""
    if argv[1:2] != ["ingest"]:
        return None
    args = iter(argv[2:])
    for arg in args:
        if arg in _VALUE_OPTIONS:
            next(args, None)
        elif not arg.startswith("-"):
            return arg if os.path.isfile(arg) else None
    return None


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
