"""Bundles: an uploaded archive checked and unpacked (or read in place), and the submission layout inside it."""

from .files import FolderFiles, Member, TarFiles
from .layout import Layout, LayoutError, ResultEntry, SystemEntry, detect
from .unpack import BundleError, Limits, UnpackReport, open_bundle, unpack

__all__ = [
    "BundleError",
    "FolderFiles",
    "Layout",
    "LayoutError",
    "Limits",
    "Member",
    "ResultEntry",
    "SystemEntry",
    "TarFiles",
    "UnpackReport",
    "detect",
    "open_bundle",
    "unpack",
]
