"""Trust in project plugins: per-file digests recorded when one is enabled, checked at gating.

A project plugin (``./.hermes/plugins/``) comes with whatever repository the person is working
in, so enabling it trusts its files *as they are then*. ``hermes plugins enable`` records the
sha256 of every file (``plugins.entries.<key>.trusted_files``) and :func:`content_hash` over
them all (``trusted_hash``); the manager loads it only while the folder still hashes the same
(:func:`verify_trusted`). A changed file, a new file or a new symlink means it is not loaded
until it is enabled again, and the message names the files.

The check reads every file once, and keeps the bytes of each ``.py`` source
(:class:`TrustedContent`): the plugin is then imported from those very bytes
(:mod:`hermes_hooks.plugins.loading`), so nothing can change between the check and the
import, and Python never runs a ``.pyc`` from ``__pycache__`` (which the digests leave out) or
from anywhere else. A sourceless ``.pyc`` and an extension module (``.so``, ``.pyd``) are
listed in :attr:`TrustedContent.refused`: importing one fails, naming the file.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Final

import attrs

from hermes_hooks.errors import PluginTrustError

__all__ = [
    "MAX_TRUSTED_BYTES",
    "MAX_TRUSTED_FILES",
    "TRUSTED_FILES_FIELD",
    "TRUSTED_HASH_FIELD",
    "TrustedContent",
    "content_hash",
    "get_untrusted_reason",
    "read_content",
    "verify_trusted",
]

TRUSTED_HASH_FIELD: Final = "trusted_hash"
"""The field of ``plugins.entries.<key>`` that holds the hash recorded at enable time."""
TRUSTED_FILES_FIELD: Final = "trusted_files"
"""The field of ``plugins.entries.<key>`` that maps each file to its sha256, at enable time."""
MAX_TRUSTED_FILES: Final = 10_000
"""Most files a project plugin folder may hold to be hashed (and so trusted)."""
MAX_TRUSTED_BYTES: Final = 64 * 1024 * 1024
"""Most bytes a project plugin folder may hold to be hashed (and so trusted)."""

_SKIPPED: Final = frozenset({"__pycache__"})  # never run: sources are compiled from checked bytes
_CHUNK: Final = 1024 * 1024
_EXTENSION_SUFFIXES: Final = (".so", ".pyd", ".dylib")


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _refusal(relative: str) -> str | None:
    """Why a file is never imported from a trusted plugin, or ``None`` for one that may be."""
    name = relative.rsplit("/", 1)[-1]
    if name.endswith((".pyc", ".pyo")):
        return "sourceless bytecode"
    if name.endswith(_EXTENSION_SUFFIXES):
        return "an extension module (compiled code)"
    return None


@attrs.frozen
class TrustedContent:
    """A project plugin folder as read once: what it hashes to and the sources to import.

    :param folder: the plugin folder.
    :param hash: ``sha256:<hex>`` over names, kinds and contents (``__pycache__`` left out).
    :param digests: each regular file (relative POSIX path) and the sha256 hex of its bytes.
    :param sources: the bytes of each ``.py`` file, as they were hashed.
    :param refused: files never imported (sourceless ``.pyc``, extension modules) and why.
    """

    folder: Path
    hash: str
    digests: Mapping[str, str]
    sources: Mapping[str, bytes] = attrs.field(repr=False)
    refused: Mapping[str, str]

    def source_of(self, relative: str) -> bytes | None:
        """Return the checked bytes of the ``.py`` file at *relative*, or ``None``."""
        return self.sources.get(relative)


def read_content(folder: Path) -> TrustedContent:
    """Read *folder* once: its hash, each file's digest and the bytes of its ``.py`` sources.

    ``__pycache__`` folders are left out. A symlink counts by its target text, and must point
    inside the folder; it is not followed.

    :raises PluginTrustError: a symlink leads outside the folder, an entry is neither a file, a
        folder nor a symlink (a FIFO would block the read), or the folder holds more than
        :data:`MAX_TRUSTED_FILES` files or :data:`MAX_TRUSTED_BYTES` bytes; or it cannot be read.
    """
    root = folder.resolve()
    digest = hashlib.sha256()
    digests: dict[str, str] = {}
    sources: dict[str, bytes] = {}
    refused: dict[str, str] = {}
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
                    keep = name.endswith(".py")
                    file_digest, data = _file_digest(path, keep)
                    digests[relative] = file_digest.hex()
                    if data is not None:
                        sources[relative] = data
                    why = _refusal(relative)
                    if why is not None:
                        refused[relative] = why
                    digest.update(b"F\0" + label + b"\0" + file_digest + b"\0")
                else:
                    raise PluginTrustError(
                        f"{path}: expected a file, a folder or a symlink, found something else "
                        f"(a FIFO, socket or device); refused"
                    )
    except OSError as exc:
        raise PluginTrustError(f"{folder}: cannot read the plugin folder: {exc}") from exc
    return TrustedContent(
        folder=folder,
        hash="sha256:" + digest.hexdigest(),
        digests=digests,
        sources=sources,
        refused=refused,
    )


def content_hash(folder: Path) -> str:
    """Return ``sha256:<hex>`` over the names, kinds and contents of everything in *folder*.

    :raises PluginTrustError: as :func:`read_content`.
    """
    return read_content(folder).hash


def _file_digest(path: Path, keep: bool) -> tuple[bytes, bytes | None]:
    digest = hashlib.sha256()
    kept: list[bytes] = []
    # O_NOFOLLOW: the entry was a regular file when listed; a swap for a symlink is not followed.
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as stream:
        while chunk := stream.read(_CHUNK):
            digest.update(chunk)
            if keep:
                kept.append(chunk)
    return digest.digest(), b"".join(kept) if keep else None


def _short(value: str) -> str:
    return value[: len("sha256:") + 12] + "…" if len(value) > 20 else value


def _changes(recorded: object, digests: Mapping[str, str]) -> str:
    """Name the files that changed since the digests were recorded (up to a few)."""
    if not isinstance(recorded, Mapping):
        return ""
    changed = [f for f in digests if f in recorded and recorded[f] != digests[f]]
    added = [f for f in digests if f not in recorded]
    removed = [f for f in recorded if f not in digests]
    parts = []
    for label, names in (("changed", changed), ("new", added), ("removed", removed)):
        if names:
            more = f" and {len(names) - 5} more" if len(names) > 5 else ""
            parts.append(f"{label}: {', '.join(map(str, names[:5]))}{more}")
    return f" ({'; '.join(parts)})" if parts else ""


def verify_trusted(folder: Path, key: str, entry: Mapping[str, object]) -> TrustedContent:
    """Return the content of the project plugin *key* in *folder* when it may load.

    :param entry: its ``plugins.entries.<key>`` from ``config.yaml``.
    :raises PluginTrustError: it cannot be read, no hash is recorded, or its files changed.
    """
    try:
        content = read_content(folder)
    except PluginTrustError as exc:
        raise PluginTrustError(f"project plugin cannot be trusted: {exc}") from exc
    recorded = entry.get(TRUSTED_HASH_FIELD)
    again = f"run 'hermes plugins enable {key}' to review its files and trust them as they are now"
    if not isinstance(recorded, str) or not recorded:
        raise PluginTrustError(
            f"project plugin not enabled with 'hermes plugins enable': no content hash is "
            f"recorded in plugins.entries.{key}.{TRUSTED_HASH_FIELD}; {again}"
        )
    files = entry.get(TRUSTED_FILES_FIELD)
    if content.hash != recorded or (isinstance(files, Mapping) and files != content.digests):
        raise PluginTrustError(
            f"project plugin changed since it was enabled: its files hash to "
            f"{_short(content.hash)}, not the {_short(recorded)} recorded"
            f"{_changes(files, content.digests)}; check the changes, then {again}"
        )
    return content


def get_untrusted_reason(folder: Path, key: str, entry: Mapping[str, object]) -> str | None:
    """Return why the project plugin *key* in *folder* must not load, or ``None`` when it may.

    :param entry: its ``plugins.entries.<key>`` from ``config.yaml``.
    """
    try:
        verify_trusted(folder, key, entry)
    except PluginTrustError as exc:
        return str(exc)
    return None
