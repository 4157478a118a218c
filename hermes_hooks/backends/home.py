"""The Hermes home a provider call works in: where it saves files, whose config it reads.

Every family's tool wraps each provider call in :func:`using_hermes_home` with its manager's
home, so that a helper a provider calls (``save_b64_image``, ``save_b64_video``, the URL
policy of ``web_extract``) finds that home in this thread or task, and never reads
``$HERMES_HOME`` at import time.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from pathlib import Path

from hermes_hooks.plugins.config import get_hermes_home

__all__ = ["active_home", "get_active_home", "using_hermes_home"]

_ACTIVE_HOME: contextvars.ContextVar[Path | None] = contextvars.ContextVar(
    "hermes_hooks_active_home", default=None
)


@contextlib.contextmanager
def using_hermes_home(home: Path) -> Iterator[None]:
    """Within the block (in this thread or task), provider helpers work in ``home``."""
    token = _ACTIVE_HOME.set(Path(home))
    try:
        yield
    finally:
        _ACTIVE_HOME.reset(token)


def get_active_home() -> Path | None:
    """Return the home :func:`using_hermes_home` set for this thread or task, or ``None``."""
    return _ACTIVE_HOME.get()


def active_home() -> Path:
    """Return the home set by :func:`using_hermes_home`, else ``$HERMES_HOME`` read now."""
    return _ACTIVE_HOME.get() or get_hermes_home()
