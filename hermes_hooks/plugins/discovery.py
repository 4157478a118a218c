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
from hermes_hooks.plugins.kinds import infer_kind_of_folder, infer_kind_of_module, module_origin
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

    :param key: the plugin's identity, as in Hermes: a flat plugin's manifest ``name``, a
        category plugin's ``category/folder``, or the entry point's name.
    :param manifest: the parsed manifest, or ``None`` when it could not be read.
    :param error: why the candidate cannot be loaded, already known at discovery.
    :param path: the plugin folder (``None`` for entry points).
    :param entry_point: the entry point to load, for ``source == "entrypoint"``.
    :param aliases: other names config may know the plugin by: the folder name of a flat
        plugin whose manifest names it otherwise (its key before keys followed Hermes).
    :param kind_inferred: the kind was inferred from the plugin's source, not declared.
    :param displaces: the plugin of the same key from an earlier source that this one
        replaces (a project plugin over the user's, an entry point over a folder plugin); the
        manager falls back to it when this one is an untrusted project plugin.
    """

    key: str
    source: Source
    manifest: PluginManifest | None
    path: Path | None = None
    error: str | None = None
    entry_point: EntryPoint | None = attrs.field(default=None, eq=False)
    distribution: str | None = None
    aliases: tuple[str, ...] = ()
    kind_inferred: bool = False
    displaces: Candidate | None = attrs.field(default=None, eq=False, repr=False)

    def __attrs_post_init__(self) -> None:
        # The manifest carries the key, as Hermes' PluginManifest.key does.
        if self.manifest is not None and self.manifest.key != self.key:
            object.__setattr__(self, "manifest", attrs.evolve(self.manifest, key=self.key))

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


def _with_inferred_kind(manifest: PluginManifest, infer: object) -> tuple[PluginManifest, bool]:
    """Return the manifest with the kind its source implies when it declares none."""
    if "kind" in manifest.declared_fields or not callable(infer):
        return manifest, False
    kind = infer()
    if kind is None or kind == manifest.kind:
        return manifest, False
    return attrs.evolve(manifest, kind=kind), True


def _folder_candidate(
    folder: Path, key: str, source: Source, confined_to: Path | None = None, *, flat: bool = False
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
    category = key.partition("/")[0] if not flat and "/" in key else None
    manifest, inferred = _with_inferred_kind(
        manifest, lambda: infer_kind_of_folder(folder, category)
    )
    aliases: tuple[str, ...] = ()
    if flat and manifest.name != key:
        # Hermes keys a flat plugin by its manifest name; the folder name stays an alias.
        key, aliases = manifest.name, (key,)
    elif not flat:
        # A category plugin was also enabled by its bare name (image_gen/x as x); that name
        # is kept as an alias, taken from the folder, never from what the manifest claims.
        aliases = (folder.name,)
    return Candidate(
        key=key,
        source=source,
        manifest=manifest,
        path=folder,
        error=error,
        aliases=aliases,
        kind_inferred=inferred,
    )


def folder_name(candidate: Candidate) -> str:
    """Return where a folder candidate sits in its source: ``pr_review``, ``image_gen/x``.

    A flat plugin's key is its manifest name, which has no ``/``; a category plugin's key is
    its folder path already. An entry point's is its key.
    """
    if candidate.path is None or "/" in candidate.key:
        return candidate.key
    return candidate.path.name


def _claim_conflict(candidate: Candidate, holder: Candidate, why: str) -> Candidate:
    """Turn a folder that claims another plugin's key into an error candidate of its own."""
    assert candidate.path is not None
    own = folder_name(candidate)
    message = (
        f"{candidate.path}: its manifest names it {candidate.key!r}, the key of the plugin in "
        f"{holder.path or holder.key} ({holder.source}); {why}. Rename this folder to "
        f"{candidate.key!r} to make it that plugin, or give its manifest another name"
    )
    return Candidate(
        key=own, source=candidate.source, manifest=None, path=candidate.path, error=message
    )


def _settle_claims(found: list[Candidate]) -> list[Candidate]:
    """Resolve flat folders of one source whose manifests claim the same key.

    The folder named like the key keeps it; every other claimant becomes an error candidate
    under its folder name, naming the holder. When no folder is named like the key, none
    keeps it.
    """
    by_key: dict[str, list[Candidate]] = {}
    for candidate in found:
        by_key.setdefault(candidate.key, []).append(candidate)
    settled: list[Candidate] = []
    for key, claimants in by_key.items():
        if len(claimants) == 1:
            settled.extend(claimants)
            continue
        owners = [c for c in claimants if folder_name(c) == key]
        holder = owners[0] if owners else None
        for candidate in claimants:
            if candidate is holder:
                settled.append(candidate)
            elif holder is not None:
                settled.append(
                    _claim_conflict(candidate, holder, "that folder is named like the key")
                )
            else:
                other = next(c for c in claimants if c is not candidate)
                settled.append(_claim_conflict(candidate, other, "no folder is named like the key"))
    return settled


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
    flat: list[Candidate] = []
    for folder in _subdirs(root):
        candidate = _folder_candidate(folder, folder.name, source, confined_to, flat=True)
        if candidate is not None:
            flat.append(candidate)
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
    found = _prune_aliases(_settle_claims(flat) + found)
    logger.debug("scanned %s plugins in %s: %d found", source, root, len(found))
    return sorted(found, key=lambda c: c.key)


def _prune_aliases(found: Iterable[Candidate]) -> list[Candidate]:
    """Keep an alias only while it is no plugin's key and names one plugin alone."""
    found = list(found)
    keys = {c.key for c in found}
    counts: dict[str, int] = {}
    for candidate in found:
        for alias in candidate.aliases:
            counts[alias] = counts.get(alias, 0) + 1
    return [
        attrs.evolve(c, aliases=tuple(a for a in c.aliases if a not in keys and counts[a] == 1))
        if c.aliases
        else c
        for c in found
    ]


_PACKAGE_MANIFEST_FIELDS: Final = ("provides_tools", "provides_hooks", "hooks", "kind")
"""What a ``plugin.yaml`` shipped inside a pip package adds to the metadata's manifest."""


def _package_manifest(module_name: str) -> dict[str, object]:
    """Return ``provides_*``, ``hooks`` and ``kind`` of the ``plugin.yaml`` in a pip package.

    It is looked for next to the module's package ``__init__.py`` (or module file), then in
    the top-level package; nothing is imported. A file that cannot be read is logged and
    ignored: the metadata alone still describe the plugin.
    """
    origin = module_origin(module_name)
    top = module_origin(module_name.split(".", 1)[0])
    folders = [p.parent for p in (origin, top) if p is not None]
    for folder in dict.fromkeys(folders):
        path = find_manifest(folder)
        if path is None:
            continue
        try:
            manifest = PluginManifest.from_path(path, default_name=folder.name)
        except ManifestError as exc:
            logger.warning("entry point module %s: its %s is ignored: %s", module_name, path, exc)
            return {}
        return {
            field: value if isinstance(value := getattr(manifest, field), str) else list(value)
            for field in _PACKAGE_MANIFEST_FIELDS
            if field in manifest.declared_fields
        }
    return {}


def discover_entry_points(group: str = ENTRY_POINT_GROUP) -> list[Candidate]:
    """Return one candidate per entry point in ``group``, without loading any of them.

    The manifest comes from the distribution's metadata, plus the ``provides_*`` fields of a
    ``plugin.yaml`` shipped in the package; the kind is inferred from the module's source, as
    for folders.
    """
    from importlib.metadata import entry_points  # imported here: costly, and often unneeded

    found: dict[str, Candidate] = {}
    try:
        selected = entry_points(group=group)
    except TypeError:
        # A stand-in taking no arguments, as Hermes' own tests patch it: Hermes asks
        # entry_points().select(group=...).
        selected = entry_points().select(group=group)
    for ep in selected:
        dist = ep.dist
        metadata: Mapping[str, str] = dist.metadata if dist is not None else {}  # type: ignore[assignment]
        data: dict[str, object] = {"name": ep.name}
        if dist is not None:
            data["version"] = dist.version
            summary = metadata.get("Summary")
            if summary:
                data["description"] = summary
        dist_name = metadata.get("Name") if dist is not None else None
        data.update(_package_manifest(ep.module))
        inferred = False
        try:
            manifest: PluginManifest | None = PluginManifest.from_mapping(data, path=None)
            error = None
        except ManifestError as exc:
            manifest, error = None, f"entry point {ep.name!r} ({ep.value}): {exc}"
        if manifest is not None:
            manifest, inferred = _with_inferred_kind(
                manifest, lambda module=ep.module: infer_kind_of_module(module)
            )
        found.setdefault(
            ep.name,
            Candidate(
                key=ep.name,
                source="entrypoint",
                manifest=manifest,
                error=error,
                entry_point=ep,
                distribution=dist_name,
                kind_inferred=inferred,
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
            earlier = by_key.get(candidate.key)
            if earlier is not None and _is_impostor(candidate, earlier):
                # As Hermes: a folder named otherwise that claims a plugin's name by its
                # manifest does not override that plugin.
                own = folder_name(candidate)
                why = (
                    f"a {candidate.source} plugin overrides a {earlier.source} one only from a "
                    f"folder of the same name, {folder_name(earlier)!r}"
                )
                by_key.setdefault(own, _claim_conflict(candidate, earlier, why))
                continue
            if earlier is not None:
                logger.debug(
                    "plugin %r from %s overrides the one from %s",
                    candidate.key,
                    candidate.source,
                    earlier.source,
                )
                del by_key[candidate.key]
                candidate = attrs.evolve(candidate, displaces=earlier)
            by_key[candidate.key] = candidate
    rank = {source: i for i, source in enumerate(SOURCES)}
    return sorted(_prune_aliases(by_key.values()), key=lambda c: (rank[c.source], c.key))


def _is_impostor(candidate: Candidate, earlier: Candidate) -> bool:
    """Tell whether a flat folder claims an earlier source's plugin key from another folder."""
    if candidate.path is None or earlier.path is None or "/" in candidate.key:
        return False
    return folder_name(candidate) not in {folder_name(earlier), candidate.key}
