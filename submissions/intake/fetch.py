"""Fetching a published round from a git repository: only each submitter's results/ and systems/ folders.

MLCommons publishes a round as a git repository (`training_results_v5.1`) with one folder per submitter
holding results/ and systems/ (the logs and descriptions the portal reads) beside benchmarks/ (the code,
often larger than the logs). A partial clone without blobs (`--filter=blob:none`) brings the commits and
trees alone; a sparse checkout in cone mode then brings, submitter by submitter, the blobs of the folders
named (and the small files of the folders above them: a v0.5 entry's submission.json). So the bytes moved are
the logs and descriptions, compressed as git packs them, and the trees; the host's archive of the commit
(GitHub's tarball) would carry every submitter's code besides, gzip-compressed, with no way to leave it out.

Run again, the same folder is fetched into (`git fetch`: only the new commits and trees) and checked out at
the commit asked for; the blobs already here are not fetched again, so an import cut off goes on where it
stopped, and a round unchanged upstream moves a few kilobytes.

git runs as a subprocess (`git` 2.27 or newer, for cone mode with a partial clone); nothing here reads the
database. Progress goes to a callable as short sentences; `received` counts the bytes git wrote into its
object store in this run (what came over the wire, as packed).
"""

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

from submissions.checking.bundles.split import submitter_root

# A submitter's folders that the portal reads; a v0.5 entry folder holds its own results/ (v0.5.0/google/
# cloud_v2.8/resnet-tpuv2-8/results) beside its submission.json, which cone mode brings with it.
WANTED = ("results", "systems")
# Code: nothing below these is fetched, even a folder named results/ inside an implementation.
CODE = ("benchmarks", "code", "documentation")
POLL_S = 0.5  # how often a running git's received bytes are reported


class FetchError(Exception):
    """git refused or failed: str(e) says which command and git's last words."""


def wanted_folders(paths) -> dict[str, list[str]]:
    """{submitter root: [its folders to fetch]} from the paths of a round's files (`git ls-tree -r`):
    'NVIDIA/results/x/bert/result_0.txt' -> {'NVIDIA': ['NVIDIA/results']}; in v0.5,
    'v0.5.0/google/cloud_v2.8/resnet-tpuv2-8/results/...' -> {'v0.5.0/google': ['v0.5.0/google/cloud_v2.8/
    resnet-tpuv2-8/results']}. Folders under code folders are left out; roots in sorted order."""
    found: dict[str, set[str]] = {}
    for path in paths:
        root = submitter_root(path)
        if root is None:
            continue
        parts = path[len(root) + 1 :].split("/")
        for i, part in enumerate(parts[:-1]):
            if part in CODE:
                break
            if part in WANTED:
                found.setdefault(root, set()).add("/".join([root, *parts[: i + 1]]))
                break
    return {root: sorted(folders) for root, folders in sorted(found.items())}


def object_bytes(folder: Path) -> int:
    """Bytes in the clone's object store: its packs, and a pack being received (tmp_pack_*)."""
    total = 0
    for dirpath, _, files in os.walk(folder / ".git" / "objects"):
        for name in files:
            try:
                total += os.path.getsize(os.path.join(dirpath, name))
            except FileNotFoundError:  # a temporary pack renamed while counted
                pass
    return total


class Clone:
    """A partial, sparse clone of `url` in `folder`, made or brought up to date by open(); then bring() checks
    out one submitter's folders at a time. `say(text)` is told what happens, every POLL_S while git works."""

    def __init__(self, url: str, folder: Path, say: Callable[[str], None] = lambda text: None):
        self.url, self.folder, self.say = url, Path(folder), say
        self.start_bytes = 0
        self.commit = ""

    @property
    def received(self) -> int:
        """Bytes fetched into the object store since open() began."""
        return max(0, object_bytes(self.folder) - self.start_bytes)

    def git(self, *args: str, what: str = "", cwd: Path | None = None) -> str:
        """Run git; while it runs, say `what` with the bytes received so far. Its output, or FetchError."""
        command = ["git", *args]
        env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}  # never ask for a password
        with open(os.devnull, "rb") as nothing:
            process = subprocess.Popen(
                command,
                cwd=cwd or self.folder,
                stdin=nothing,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                text=True,
            )
        out, err = "", ""
        while True:
            try:
                out, err = process.communicate(timeout=POLL_S)
                break
            except subprocess.TimeoutExpired:
                if what:
                    self.say(f"{what}: {self.received / 1e6:,.1f} MB received")
        if process.returncode:
            last = [line for line in err.replace("\r", "\n").splitlines() if line.strip()]
            raise FetchError(
                f"git {args[0]} failed ({process.returncode}): {' / '.join(last[-2:])}"
            )
        return out

    def open(self, revision: str = "") -> str:
        """Clone `url` without blobs and without a checkout, or fetch into the clone already here; then check
        out `revision` (a commit, or the remote's default branch where empty) with no folder of any
        submitter yet. Returns the commit's full id."""
        if (self.folder / ".git").is_dir():
            self.start_bytes = object_bytes(self.folder)
            self.git("remote", "set-url", "origin", self.url)
            self.git("fetch", "--quiet", "origin", what=f"Fetching {self.url}")
            self.git("sparse-checkout", "reapply")  # a run cut off while it checked out
        else:
            self.folder.parent.mkdir(parents=True, exist_ok=True)
            self.git(
                "clone", "--quiet", "--filter=blob:none", "--no-checkout", "--sparse",
                self.url, str(self.folder),
                what=f"Cloning {self.url}", cwd=self.folder.parent,
            )  # fmt: skip
        target = revision or "origin/HEAD"
        self.commit = self.git("rev-parse", "--verify", f"{target}^{{commit}}").strip()
        self.git("checkout", "--quiet", "--detach", self.commit, what="Checking out")
        return self.commit

    def submitters(self) -> dict[str, list[str]]:
        """wanted_folders of the commit checked out, read from its trees (no blob is fetched)."""
        listing = self.git("ls-tree", "-r", "-z", "--name-only", self.commit)
        return wanted_folders(p for p in listing.split("\0") if p)

    def bring(self, root: str, folders: list[str]) -> Path:
        """Check out the submitter's folders (fetching what is missing of them); returns its folder."""
        self.git("sparse-checkout", "add", "--", *folders, what=f"Fetching {root}")
        return self.folder / root
