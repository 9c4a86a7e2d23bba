#!/usr/bin/env python
"""Ingest the whole v5.1 round and compare with the floor: decompress and read every byte.

Prints wall time, MB/s (unpacked bytes), peak RSS of each stage, and the ratio of ingest
to the floor measured in the same run. Ingest runs in one process with tasks in-process
(CELERY_TASK_ALWAYS_EAGER=1) on a fresh SQLite database, i.e. the work one worker does.
Targets: ingest within 3x of the floor; peak RSS under 500 MB.
"""

import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("MLPERF_SHARED_DIR", ROOT.parent / "shared" / "mlperf"))
TARBALL = SHARED / "training_v5.1_results.tar.xz"


def floor() -> int:
    """Decompress the tarball and read every member's bytes; return the unpacked byte count."""
    total = 0
    with tarfile.open(TARBALL, "r|xz") as tar:
        for member in tar:
            if member.isfile():
                f = tar.extractfile(member)
                while chunk := f.read(1 << 20):
                    total += len(chunk)
    return total


def timed_child(args, env) -> tuple[float, float]:
    """Run a child process; return (wall seconds, that child's own peak RSS in MB)."""
    start = time.perf_counter()
    child = subprocess.Popen(args, env=env, cwd=ROOT, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        raise SystemExit(f"{' '.join(map(str, args))} failed with exit code {child.returncode}")
    return wall, usage.ru_maxrss / 1024


def main() -> int:
    if not TARBALL.is_file():
        print(f"skipped: {TARBALL} is not here (set MLPERF_SHARED_DIR)")
        return 0
    if len(sys.argv) > 1 and sys.argv[1] == "--floor":
        print(floor())
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        env = {
            **os.environ, "DATABASE_URL": f"sqlite:///{tmp}/bench.sqlite3", "MEDIA_ROOT": f"{tmp}/media",
            "CELERY_TASK_ALWAYS_EAGER": "1", "DJANGO_SETTINGS_MODULE": "portal.settings",
        }
        manage = [sys.executable, "manage.py"]
        subprocess.run(manage + ["migrate", "-v0"], env=env, cwd=ROOT, check=True)
        subprocess.run(manage + ["load_rounds"], env=env, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)

        floor_wall, floor_rss = timed_child([sys.executable, __file__, "--floor"], env)
        total_bytes = floor()
        ingest_wall, ingest_rss = timed_child(
            manage + ["ingest", str(TARBALL), "--round", "training-v5.1"], env  # eager: final on return
        )
    mb = total_bytes / 1e6
    print(f"v5.1 round: {TARBALL.stat().st_size / 1e6:.1f} MB compressed, {mb:.1f} MB unpacked")
    print(f"floor (decompress + read every byte): {floor_wall:6.2f} s  {mb / floor_wall:6.1f} MB/s  peak RSS {floor_rss:6.1f} MB")
    print(f"ingest (split, unpack, parse, score): {ingest_wall:6.2f} s  {mb / ingest_wall:6.1f} MB/s  peak RSS {ingest_rss:6.1f} MB")
    print(f"ratio ingest / floor: {ingest_wall / floor_wall:.2f}x (target <= 3x); peak RSS target < 500 MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
