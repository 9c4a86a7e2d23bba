"""A small file system that the tests fill: MEDIA_ROOT on a tmpfs of a few MiB (small_disk; needs root, else
the test skips saying why), and a file that leaves a given room on it (fill)."""

import contextlib
import shutil
import subprocess
from pathlib import Path

import pytest


@contextlib.contextmanager
def small_disk(path: Path, size: str = "16m"):
    """A tmpfs of `size` mounted at `path` (needs root); skips with the reason where mounting is refused."""
    path.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode:
        pytest.skip(f"cannot mount a small file system for MEDIA_ROOT: {mounted.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def fill(disk: Path, leave_bytes: int) -> Path:
    """A file that leaves about `leave_bytes` free on the disk."""
    filler = disk / "filler"
    free = shutil.disk_usage(disk).free + (filler.stat().st_size if filler.exists() else 0)
    with open(filler, "wb") as f:
        f.truncate(0)
        remaining = max(0, free - leave_bytes)
        block = b"\0" * (1 << 20)
        while remaining > 0:
            remaining -= f.write(block[: min(len(block), remaining)])
    return filler
