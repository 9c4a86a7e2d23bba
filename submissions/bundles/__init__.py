"""Bundles: safe unpacking of an uploaded archive and detection of the submission layout inside it."""

from .layout import Layout, LayoutError, ResultEntry, SystemEntry, detect
from .unpack import BundleError, Limits, UnpackReport, unpack

__all__ = [
    "BundleError", "Layout", "LayoutError", "Limits", "ResultEntry", "SystemEntry", "UnpackReport",
    "detect", "unpack",
]
