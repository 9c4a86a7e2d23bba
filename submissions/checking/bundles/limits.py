"""The hard limits on what a bundle may hold, and the one place that refuses a bundle for passing them.

The unpacker and the round splitter both count through a Tally, so a bundle is refused with the same rule
and message whichever of them reads it first. This module imports nothing but the standard library and the
rule catalogue (pure Python): the splitter's child process loads it on its own (see split.py).
"""

from dataclasses import dataclass

from leaderboard.catalogue import rule_catalogue

# A bundle this small cannot be a bomb; without the floor a tiny tar.gz of a few padded
# files would trip the ratio check.
RATIO_FLOOR = 1024 * 1024


@dataclass(frozen=True)
class Limits:
    max_total_bytes: int = 2 * 1024**3
    max_files: int = 20_000
    max_file_bytes: int = 512 * 1024**2
    max_ratio: float = (
        200.0  # total uncompressed bytes / archive bytes, checked as bytes are written
    )
    # Shapes no submission has (published rounds: 8 levels, names of 45 bytes, paths of 101 characters), refused
    # before anything reads them: a folder chain thousands deep, a name no file system takes (NAME_MAX), a path
    # longer than the tables keep for a run's or a result's path (500 characters).
    max_depth: int = 64
    max_name_bytes: int = 255
    max_path_chars: int = 500


class BundleError(Exception):
    """A bundle that cannot be accepted; str(e) is a message for the submitter."""

    def __init__(self, rule: str, message: str, member: str | None = None):
        super().__init__(message)
        self.rule = rule
        self.member = member


def shown(name: str, limit: int = 120) -> str:
    """A member's name as a message shows it: its start and its end."""
    return name if len(name) <= limit else f"{name[: limit // 2]}…{name[-limit // 2 :]}"


def size_text(n: float) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return ""


class Tally:
    """What a bundle holds so far (files, folders, bytes) counted against its Limits. Every count is a plain
    integer compared at each member and each chunk, so the checks cost nothing beside the copying."""

    def __init__(self, limits: Limits, archive_bytes: int | None):
        """archive_bytes: the compressed archive's size, for the ratio; None for no ratio (a part of a round,
        whose ratio is counted for the whole archive)."""
        self.limits = limits
        self.max_ratio_bytes = (
            float("inf")
            if archive_bytes is None
            else max(limits.max_ratio * archive_bytes, RATIO_FLOOR)
        )
        self.files = self.dirs = self.total = 0

    def check_path(self, parts: list[str], member: str) -> None:
        """A member's path, as its components: refused when deeper, or a name or the path longer, than the
        limits (the checks cost a few comparisons per member)."""
        lim = self.limits
        if len(parts) > lim.max_depth:
            raise BundleError(
                rule_catalogue.BUNDLE_PATH_TOO_DEEP,
                f"'{shown(member)}' lies {len(parts)} folders deep; the portal reads bundles up to {lim.max_depth} "
                "deep. Leave out everything but results/ and systems/.",
                member,
            )
        for part in parts:
            size = len(part.encode("utf-8", "surrogateescape"))
            if size > lim.max_name_bytes:
                raise BundleError(
                    rule_catalogue.BUNDLE_NAME_TOO_LONG,
                    f"'{shown(member)}' has a name of {size} bytes ('{shown(part, 40)}'); file systems take "
                    f"{lim.max_name_bytes}. Rename it.",
                    member,
                )
        length = sum(map(len, parts)) + len(parts) - 1
        if length > lim.max_path_chars:
            raise BundleError(
                rule_catalogue.BUNDLE_PATH_TOO_LONG,
                f"'{shown(member)}' has a path of {length} characters; the portal keeps paths of up to "
                f"{lim.max_path_chars}. Shorten the folder names, or leave the file out.",
                member,
            )

    def count_dir(self, member: str) -> None:
        self.dirs += 1
        if self.dirs > self.limits.max_files:
            raise BundleError(
                rule_catalogue.BUNDLE_TOO_MANY_FILES,
                f"The bundle has more than {self.limits.max_files} folders (stopped at '{member}'). "
                "Leave out everything but results/ and systems/.",
                member,
            )

    def count_file(self, member: str, declared: int) -> None:
        """One more file, whose header says it holds `declared` bytes: refused here, before a byte of it is
        written, when that size would pass a limit. A header is trusted only to refuse early: count_bytes
        counts the bytes really written."""
        self.files += 1
        if self.files > self.limits.max_files:
            raise BundleError(
                rule_catalogue.BUNDLE_TOO_MANY_FILES,
                f"The bundle has more than {self.limits.max_files} files (stopped at '{member}'). "
                "Leave out everything but results/ and systems/.",
                member,
            )
        self._check(member, declared, self.total + declared)

    def count_copied(self, member: str, size: int) -> None:
        """One more file whose header's size is exactly what is written: a tar member copied as it is."""
        self.count_file(member, size)
        self.total += size

    def count_bytes(self, member: str, file_bytes: int, n: int) -> None:
        """n more bytes written, of member's `file_bytes` so far."""
        self.total += n
        self._check(member, file_bytes, self.total)

    def _check(self, member: str, file_bytes: int, total: int) -> None:
        lim = self.limits
        if file_bytes > lim.max_file_bytes:
            raise BundleError(
                rule_catalogue.BUNDLE_FILE_TOO_LARGE,
                f"'{member}' is larger than the {size_text(lim.max_file_bytes)} allowed for one file. "
                "Leave it out unless it is a result log; if it is, ask the portal's administrators.",
                member,
            )
        if total > lim.max_total_bytes:
            raise BundleError(
                rule_catalogue.BUNDLE_TOO_LARGE,
                f"The bundle unpacks to more than {size_text(lim.max_total_bytes)} (stopped at '{member}'). "
                "Leave out checkpoints, data sets and code outside results/ and systems/.",
                member,
            )
        if total > self.max_ratio_bytes:
            raise BundleError(
                rule_catalogue.BUNDLE_RATIO,
                f"The bundle expands to more than {lim.max_ratio:g} times its own size (stopped at "
                f"'{member}'), which looks like a decompression bomb. Upload the real result files.",
                member,
            )
