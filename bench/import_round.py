#!/usr/bin/env python
"""The bytes and seconds of `manage.py import_round`'s fetch for a whole real round, from a local git repository.

No network here, so the round is made into a git repository on this machine from its shared tarball (one commit
of every file, as MLCommons' `training_results_vX.Y` holds them, less the code the tarballs were stripped of), and
fetched from it by file:// with `git daemon`'s protocol (`--no-local`: git packs and sends objects as it would over
the network, instead of hard-linking them). Three ways, each timed and counted in the same run:

- import_round's way (submissions/intake/fetch.py): a partial clone without blobs, then a sparse checkout of each
  submitter's results/ and systems/ folders; the bytes are what git wrote into the clone's object store;
- a whole clone of the commit, for comparison: every blob;
- the host's archive of the commit (GitHub's tarball: `git archive --format=tar.gz`), its size in bytes.

The real repositories also hold each submitter's code (benchmarks/), which the partial clone never fetches and the
archive always carries: on them the partial clone saves more than here. The ingest that follows the fetch is timed
by bench/ingest.py (the same work as `ingest` of the tarball).

    bench/import_round.py [--tarball training_v5.1_results.tar.xz]
"""

import argparse
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from submissions.intake.fetch import Clone, object_bytes  # noqa: E402 (no Django needed)

SHARED = Path(os.environ.get("MLPERF_SHARED_DIR", ROOT.parent / "shared" / "mlperf"))


def git(*args, cwd):
    return subprocess.run(
        ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.org", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    ).stdout


def folder_bytes(folder: Path) -> tuple[int, int]:
    """(files, bytes) under folder, .git left out."""
    files = size = 0
    for dirpath, dirnames, names in os.walk(folder):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in names:
            files += 1
            size += os.path.getsize(os.path.join(dirpath, name))
    return files, size


def timed(action):
    started = time.monotonic()
    value = action()
    return value, time.monotonic() - started


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tarball", default="training_v5.1_results.tar.xz")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-import-") as tmp:
        tmp = Path(tmp)
        repository = tmp / "repository"
        with tarfile.open(SHARED / args.tarball) as tar:
            tar.extractall(repository, filter="data")
        files, size = folder_bytes(repository)
        git("init", "-q", "-b", "main", cwd=repository)
        git("add", "-A", cwd=repository)
        git("commit", "-q", "-m", args.tarball, cwd=repository)
        git("gc", "-q", cwd=repository)  # packed, as a served repository is
        git("config", "uploadpack.allowFilter", "true", cwd=repository)  # as GitHub serves
        url = f"file://{repository}"
        print(f"{args.tarball}: {files:,} files, {size / 1e6:,.1f} MB unpacked")
        print(f"  repository: {object_bytes(repository) / 1e6:,.1f} MB of packed objects")

        clone = Clone(url, tmp / "partial")

        def partial():
            clone.open()
            roots = clone.submitters()
            for root, folders in roots.items():
                clone.bring(root, folders)
            return roots

        roots, seconds = timed(partial)
        fetched_files, fetched = folder_bytes(tmp / "partial")
        print(
            f"  import_round's fetch (partial, sparse clone of {len(roots)} submitters' results/ and "
            f"systems/): {clone.received / 1e6:,.1f} MB received in {seconds:.1f} s; "
            f"{fetched_files:,} files, {fetched / 1e6:,.1f} MB checked out"
        )
        _, again = timed(partial)
        print(
            f"  the same again (a second run): {clone.received / 1e3:,.1f} kB received in {again:.1f} s"
        )

        _, seconds = timed(
            lambda: git("clone", "-q", "--no-local", "--no-checkout", url, "whole", cwd=tmp)
        )
        print(
            f"  a whole clone: {object_bytes(tmp / 'whole') / 1e6:,.1f} MB received in {seconds:.1f} s"
        )
        archive = tmp / "archive.tar.gz"
        _, seconds = timed(
            lambda: git("archive", "--format=tar.gz", "-o", str(archive), "HEAD", cwd=repository)
        )
        print(
            f"  the host's archive of the commit (tar.gz): {archive.stat().st_size / 1e6:,.1f} MB "
            f"({seconds:.1f} s to make here)"
        )


if __name__ == "__main__":
    main()
