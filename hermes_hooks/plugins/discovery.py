"""Discovery: the four plugin sources turned into candidates, reading manifests only.

Nothing here imports plugin code. Sources, in order (a later source wins on the same key):
bundled (``hermes_plugins/``, or ``$HERMES_BUNDLED_PLUGINS``), user (``$HERMES_HOME/plugins``),
project (``./.hermes/plugins``, only when ``HERMES_ENABLE_PROJECT_PLUGINS`` is truthy) and pip
entry points in the group ``hermes_agent.plugins``.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal

import attrs

from hermes_hooks.errors import ManifestError
from hermes_hooks.plugins.config import (
    BUNDLED_PLUGINS_ENV,
    PROJECT_PLUGINS_ENV,
    SAFE_MODE_ENV,
    env_flag,
)
from hermes_hooks.plugins.manifest import PluginManifest, find_manifest

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

__all__ = [
    "ENTRY_POINT_GROUP",
    "SOURCES",
    "Candidate",
    "Source",
    "bundled_plugins_dir",
    "discover_candidates",
    "discover_entry_points",
    "scan_directory",
]

logger = logging.getLogger(__name__)

ENTRY_POINT_GROUP: Final = "hermes_agent.plugins"

Source = Literal["bundled", "user", "project", "entrypoint"]
SOURCES: Final[tuple[Source, ...]] = ("bundled", "user", "project", "entrypoint")

_SKIP_DIRS: Final = frozenset({"__pycache__", "node_modules"})


@attrs.frozen
class Candidate:
    """A plugin found by discovery, before any of its code runs.

    :param key: the plugin's identity: its folder relative to the source root (``name`` or
        ``category/name``), or the entry point's name.
    :param manifest: the parsed manifest, or ``None`` when it could not be read.
    :param error: why the candidate cannot be loaded, already known at discovery.
    :param path: the plugin folder (``None`` for entry points).
    :param entry_point: the entry point to load, for ``source == "entrypoint"``.
    """

    key: str
    source: Source
    manifest: PluginManifest | None
    path: Path | None = None
    error: str | None = None
    entry_point: EntryPoint | None = attrs.field(default=None, eq=False)
    distribution: str | None = None

    @property
    def name(self) -> str:
        """The manifest name, or the key when the manifest could not be read."""
        return self.manifest.name if self.manifest is not None else self.key.rsplit("/", 1)[-1]

    @property
    def kind(self) -> str:
        """The manifest kind (``standalone`` when the manifest could not be read)."""
        return self.manifest.kind if self.manifest is not None else "standalone"


def bundled_plugins_dir(env: Mapping[str, str] | None = None) -> Path:
    """Return the bundled plugins folder: ``$HERMES_BUNDLED_PLUGINS`` or ``hermes_plugins/``."""
    environ = os.environ if env is None else env
    override = environ.get(BUNDLED_PLUGINS_ENV)
    if override:
        return Path(override).expanduser().absolute()
    return Path(__file__).resolve().parents[2] / "hermes_plugins"


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _is_plain_key(key: str) -> bool:
    """Tell whether a folder key is printable ASCII: no look-alike letters, no control codes."""
    return key.isascii() and key.isprintable()


def _folder_candidate(
    folder: Path, key: str, source: Source, confined_to: Path | None = None
) -> Candidate | None:
    if confined_to is not None and not _inside(folder.resolve(), confined_to):
        return Candidate(
            key=key,
            source=source,
            manifest=None,
            path=folder,
            error=(
                f"{folder}: a symlink to {folder.resolve()}, outside {confined_to}; a "
                f"{source} plugin must be a folder inside it, so nothing of it is read"
            ),
        )
    manifest_path = find_manifest(folder)
    if manifest_path is None:
        return None
    if not _is_plain_key(key):
        # A folder named with a Cyrillic "o" (U+043E) lists as "no-rm", and its manifest may
        # claim any name; nothing of it is read.
        return Candidate(
            key=key,
            source=source,
            manifest=None,
            path=folder,
            error=(
                f"{folder}: expected a plugin key of printable ASCII characters, found "
                f"{key!a}; refused, as it could pass for another plugin's name"
            ),
        )
    try:
        manifest = PluginManifest.from_path(manifest_path, default_name=folder.name)
    except ManifestError as exc:
        return Candidate(key=key, source=source, manifest=None, path=folder, error=str(exc))
    error = None
    if not (folder / "__init__.py").is_file():
        error = f"{folder}: no __init__.py next to {manifest_path.name}"
    return Candidate(key=key, source=source, manifest=manifest, path=folder, error=error)


def _subdirs(folder: Path) -> list[Path]:
    try:
        children = sorted(folder.iterdir())
    except OSError as exc:
        logger.warning("cannot list plugin folder %s: %s", folder, exc)
        return []
    return [
        c
        for c in children
        if c.name not in _SKIP_DIRS and not c.name.startswith(".") and c.is_dir()
    ]


def scan_directory(root: Path, source: Source) -> list[Candidate]:
    """Return the candidates in ``root``: plugin folders, and category folders one level deep.

    A folder with a manifest is a plugin keyed by its name. A folder without one is a category
    whose sub-folders with manifests are plugins keyed ``category/name``; deeper folders are not
    looked at. A folder with an ``__init__.py`` but no manifest and no plugins below is reported
    as an error candidate, so that a missing ``plugin.yaml`` does not go unnoticed.

    Project plugins come with a repository, not from the person: there a plugin or category
    folder that is a symlink leading outside ``root`` is an error candidate, not read.
    """
    if not root.is_dir():
        return []
    confined_to = root.resolve() if source == "project" else None
    found: list[Candidate] = []
    for folder in _subdirs(root):
        candidate = _folder_candidate(folder, folder.name, source, confined_to)
        if candidate is not None:
            found.append(candidate)
            continue
        nested = [
            c
            for sub in _subdirs(folder)
            if (c := _folder_candidate(sub, f"{folder.name}/{sub.name}", source, confined_to))
            is not None
        ]
        if nested:
            found.extend(nested)
        elif (folder / "__init__.py").is_file() and source != "bundled":
            found.append(
                Candidate(
                    key=folder.name,
                    source=source,
                    manifest=None,
                    path=folder,
                    error=f"{folder}: no plugin.yaml (a plugin folder needs a manifest)",
                )
            )
    logger.debug("scanned %s plugins in %s: %d found", source, root, len(found))
    return found


def discover_entry_points(group: str = ENTRY_POINT_GROUP) -> list[Candidate]:
    """Return one candidate per entry point in ``group``, without loading any of them."""
    from importlib.metadata import entry_points  # imported here: costly, and often unneeded

    found: dict[str, Candidate] = {}
    for ep in entry_points(group=group):
        dist = ep.dist
        metadata: Mapping[str, str] = dist.metadata if dist is not None else {}  # type: ignore[assignment]
        data: dict[str, object] = {"name": ep.name}
        if dist is not None:
            data["version"] = dist.version
            summary = metadata.get("Summary")
            if summary:
                data["description"] = summary
        dist_name = metadata.get("Name") if dist is not None else None
        try:
            manifest = PluginManifest.from_mapping(data, path=None)
            error = None
        except ManifestError as exc:
            manifest, error = None, f"entry point {ep.name!r} ({ep.value}): {exc}"
        found.setdefault(
            ep.name,
            Candidate(
                key=ep.name,
                source="entrypoint",
                manifest=manifest,
                error=error,
                entry_point=ep,
                distribution=dist_name,
            ),
        )
    return list(found.values())


def discover_candidates(
    *,
    hermes_home: Path,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    include_entry_points: bool = True,
) -> list[Candidate]:
    """Return the plugins of every source, in load order, one per key (the last source wins).

    Load order is bundled, user, project, entry points, and alphabetical by key within each.
    With ``HERMES_SAFE_MODE`` truthy nothing is discovered.
    """
    environ = os.environ if env is None else env
    if env_flag(SAFE_MODE_ENV, environ):
        logger.debug("%s is set: no plugin is discovered", SAFE_MODE_ENV)
        return []
    # Absolute paths: a plugin's folder becomes its module's __path__, which must survive a chdir.
    batches: list[Iterable[Candidate]] = [
        scan_directory(bundled_plugins_dir(environ), "bundled"),
        scan_directory(hermes_home.absolute() / "plugins", "user"),
    ]
    if env_flag(PROJECT_PLUGINS_ENV, environ):
        project = (cwd or Path.cwd()).absolute() / ".hermes" / "plugins"
        batches.append(scan_directory(project, "project"))
    else:
        logger.debug("project plugins are off (%s is not set)", PROJECT_PLUGINS_ENV)
    if include_entry_points:
        batches.append(discover_entry_points())
    by_key: dict[str, Candidate] = {}
    for batch in batches:
        for candidate in batch:
            if candidate.key in by_key:
                logger.debug(
                    "plugin %r from %s overrides the one from %s",
                    candidate.key,
                    candidate.source,
                    by_key[candidate.key].source,
                )
                del by_key[candidate.key]
            by_key[candidate.key] = candidate
    rank = {source: i for i, source in enumerate(SOURCES)}
    return sorted(by_key.values(), key=lambda c: (rank[c.source], c.key))
