"""Errors of the release stage. Every message names the release/version/file and the reason."""

from __future__ import annotations

from classforge_bench.pipeline.core.errors import ReleaseError

__all__ = ["ExportError", "ReleaseError", "ReleaseExistsError"]


class ReleaseExistsError(ReleaseError):
    """The version already exists: a release is written once and never overwritten."""


class ExportError(ReleaseError):
    """Publishing to the Hugging Face Hub was refused or failed; the message says what state it left."""
