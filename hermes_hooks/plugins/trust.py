"""Trust in project plugins: the content hash recorded when one is enabled, checked at gating.

A project plugin (``./.hermes/plugins/``) comes with whatever repository the person is working
in, so enabling it trusts its files *as they are then*. ``hermes plugins enable`` records
:func:`content_hash` of its folder in ``plugins.entries.<key>.trusted_hash``; the manager loads
it only while the folder still hashes the same (:func:`get_untrusted_reason`). A changed file, a
new file or a new symlink means it is not loaded until it is enabled again.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from hermes_hooks.errors import PluginTrustError

__all__ = [
    "MAX_TRUSTED_BYTES",
    "MAX_TRUSTED_FILES",
    "TRUSTED_HASH_FIELD",
    "content_hash",
    "get_untrusted_reason",
]

TRUSTED_HASH_FIELD: Final = "trusted_hash"
"""The field of ``plugins.entries.<key>`` that holds the hash recorded at enable time."""
MAX_TRUSTED_FILES: Final = 10_000
"""Most files a project plugin folder may hold to be hashed (and so trusted)."""
MAX_TRUSTED_BYTES: Final = 64 * 1024 * 1024
"""Most bytes a project plugin folder may hold to be hashed (and so trusted)."""

_SKIPPED: Final = frozenset({"__pycache__"})  # written by Python itself when the plugin loads
_CHUNK: Final = 1024 * 1024


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def content_hash(folder: Path) -> str:
    """Return ``sha256:<hex>`` over the names, kinds and contents of everything in *folder*.

    ``__pycache__`` folders are left out. A symlink counts by its target text, and must point
    inside the folder; it is not followed.

    :raises PluginTrustError: a symlink leads outside the folder, an entry is neither a file, a
        folder nor a symlink (a FIFO would block the read), or the folder holds more than
        :data:`MAX_TRUSTED_FILES` files or :data:`MAX_TRUSTED_BYTES` bytes; or it cannot be read.
    """
    root = folder.resolve()
    digest = hashlib.sha256()
    files = size = 0
    try:
        for current, dirs, names in os.walk(folder, followlinks=False):
            dirs[:] = sorted(d for d in dirs if d not in _SKIPPED)
            base = Path(current)
            for name in sorted([*dirs, *names]):
                path = base / name
                relative = path.relative_to(folder).as_posix()
                info = path.lstat()
                label = relative.encode("utf-8", "surrogateescape")
                if stat.S_ISLNK(info.st_mode):
                    target = os.readlink(path)
                    if os.path.isabs(target) or not _inside(Path(os.path.realpath(path)), root):
                        raise PluginTrustError(
                            f"{path}: a symlink to {target!r}, which leads outside the plugin "
                            f"folder {folder}; refused"
                        )
                    digest.update(b"L\0" + label + b"\0" + os.fsencode(target) + b"\0")
                elif stat.S_ISDIR(info.st_mode):
                    digest.update(b"D\0" + label + b"\0")
                elif stat.S_ISREG(info.st_mode):
                    files += 1
                    size += info.st_size
                    if files > MAX_TRUSTED_FILES or size > MAX_TRUSTED_BYTES:
                        raise PluginTrustError(
                            f"{folder}: expected at most {MAX_TRUSTED_FILES} files and "
                            f"{MAX_TRUSTED_BYTES} bytes to check, found more"
                        )
                    digest.update(b"F\0" + label + b"\0" + _file_digest(path) + b"\0")
                else:
                    raise PluginTrustError(
                        f"{path}: expected a file, a folder or a symlink, found something else "
                        f"(a FIFO, socket or device); refused"
                    )
    except OSError as exc:
        raise PluginTrustError(f"{folder}: cannot read the plugin folder: {exc}") from exc
    return "sha256:" + digest.hexdigest()


def _file_digest(path: Path) -> bytes:
    digest = hashlib.sha256()
    # O_NOFOLLOW: the entry was a regular file when listed; a swap for a symlink is not followed.
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as stream:
        while chunk := stream.read(_CHUNK):
            digest.update(chunk)
    return digest.digest()


def _short(value: str) -> str:
    return value[: len("sha256:") + 12] + "…" if len(value) > 20 else value


def get_untrusted_reason(folder: Path, key: str, entry: Mapping[str, object]) -> str | None:
    """Return why the project plugin *key* in *folder* must not load, or ``None`` when it may.

    :param entry: its ``plugins.entries.<key>`` from ``config.yaml``.
    """
    try:
        current = content_hash(folder)
    except PluginTrustError as exc:
        return f"project plugin cannot be trusted: {exc}"
    recorded = entry.get(TRUSTED_HASH_FIELD)
    again = f"run 'hermes plugins enable {key}' to trust its files as they are now"
    if not isinstance(recorded, str) or not recorded:
        return (
            f"project plugin not enabled with 'hermes plugins enable': no content hash is "
            f"recorded in plugins.entries.{key}.{TRUSTED_HASH_FIELD}; {again}"
        )
    if current != recorded:
        return (
            f"project plugin changed since it was enabled: its files hash to {_short(current)}, "
            f"not the {_short(recorded)} recorded; check the changes, then {again}"
        )
    return None
