"""Hermes' ``agent.secret_sources`` package (its ``base`` module is served beside it)."""

from __future__ import annotations

from hermes_hooks.backends.secret_sources.base import (
    SECRET_SOURCE_API_VERSION,
    ErrorKind,
    FetchResult,
    SecretSource,
)

__path__: list[str] = []  # a package to the import system: the finder serves its children
__hermes_compat__ = True  # the finder serves this package's children (base)

__all__ = ["SECRET_SOURCE_API_VERSION", "ErrorKind", "FetchResult", "SecretSource"]
