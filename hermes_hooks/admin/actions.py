"""What an operator does to installed plugins: find one by name, enable, disable, grant overrides.

Names resolve as in Hermes' ``hermes plugins enable``: the key (``image_gen/openai``; a flat
plugin's key is its manifest name), then an old folder key (the folder ``pr_review/`` of the
plugin ``pr-review``), then the manifest name, then the leaf of a category key (``openai``) when
only one plugin has it.
Every change goes through :func:`~hermes_hooks.plugins.config.update_config`, so it is atomic, keeps
the keys it does not change, and never overwrites a file that is not valid YAML.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar

import attrs

from hermes_hooks.admin.trial import trial_load
from hermes_hooks.errors import PluginNotFoundError, PluginTrustError
from hermes_hooks.plugins.config import (
    PluginsConfig,
    config_path,
    set_plugin_enabled,
    update_config,
)
from hermes_hooks.plugins.discovery import Candidate
from hermes_hooks.plugins.trust import TRUSTED_FILES_FIELD, TRUSTED_HASH_FIELD, read_content

__all__ = [
    "Named",
    "OverrideProbe",
    "closest_names",
    "get_tool_override_grant",
    "is_effectively_enabled",
    "probe_tool_overrides",
    "resolve_plugin",
    "set_enabled",
    "set_tool_override",
]


class Named(Protocol):
    """Anything with a plugin key and a manifest name (a candidate, a ``PluginInfo``)."""

    @property
    def key(self) -> str: ...

    @property
    def name(self) -> str: ...


_N = TypeVar("_N", bound=Named)


def closest_names(name: str, known: Iterable[str], n: int = 3) -> list[str]:
    """Return up to *n* names of *known* that look like *name*, best first."""
    return difflib.get_close_matches(name, sorted(set(known)), n=n, cutoff=0.6)


def _hint(names: Sequence[str]) -> str:
    return f"; did you mean {', '.join(map(repr, names))}?" if names else ""


def resolve_plugin(candidates: Sequence[_N], name: str) -> _N:
    """Return the plugin *name* designates: by key, folder alias, manifest name or category leaf.

    :raises PluginNotFoundError: nothing matches ("Plugin 'x' is not installed or bundled",
        with the closest names), or a manifest name or leaf matches several plugins.
    """
    for candidate in candidates:
        if candidate.key == name:
            return candidate
    for label, matches in (
        ("folder name", [c for c in candidates if name in getattr(c, "aliases", ())]),
        ("manifest name", [c for c in candidates if c.name == name]),
        ("name", [c for c in candidates if "/" in c.key and c.key.rsplit("/", 1)[1] == name]),
    ):
        if len(matches) == 1:
            return matches[0]
        if matches:
            keys = ", ".join(repr(c.key) for c in matches)
            raise PluginNotFoundError(
                f"Plugin {name!r} is ambiguous: it is the {label} of {keys}; use the full key",
                name=name,
                candidates=tuple(c.key for c in matches),
            )
    known = {c.key for c in candidates} | {c.name for c in candidates}
    close = closest_names(name, known)
    raise PluginNotFoundError(
        f"Plugin {name!r} is not installed or bundled{_hint(close)}",
        name=name,
        candidates=tuple(close),
    )


def _names(candidate: Candidate) -> set[str]:
    """The names config may list the plugin under: its key and its old folder keys."""
    return {candidate.key, *candidate.aliases}


def is_effectively_enabled(config: PluginsConfig, candidate: Candidate) -> bool:
    """Tell whether config lets *candidate* load (listed, or a bundled backend, not disabled)."""
    names = _names(candidate)
    if names & config.disabled:
        return False
    return bool(names & config.enabled) or (
        candidate.source == "bundled" and candidate.kind == "backend"
    )


def set_enabled(
    home: Path, candidate: Candidate, enabled: bool, *, shown: str | None = None
) -> bool:
    """Enable or disable *candidate* in ``config.yaml``; return ``False`` when already so.

    Enabling lists its key in ``plugins.enabled`` and removes key, leaf and manifest name from
    ``plugins.disabled``; disabling does the reverse. Enabling a project plugin also records
    the content hash of its folder as ``plugins.entries.<key>.trusted_hash`` and the digest of
    each file as ``trusted_files``, in the same atomic write, and enabling it again records
    them anew when its files changed; disabling removes them.

    :raises ConfigError: ``config.yaml`` is not valid YAML or has a wrong type; it is left as is.
    :raises PluginTrustError: a project plugin's folder cannot be hashed (a symlink leading
        out of it, a FIFO, too large), or its files no longer hash to *shown* (the hash of
        the files the person reviewed); nothing is written.
    """
    config = PluginsConfig.from_home(home)
    names = _names(candidate)
    listed, other = (
        (config.enabled, config.disabled) if enabled else (config.disabled, config.enabled)
    )
    entry = _trust_entry(config, candidate, enabled, shown)
    if candidate.key in listed and not names & other and entry is None:
        return False
    aliases = [n for n in (candidate.name, *candidate.aliases) if n != candidate.key]
    set_plugin_enabled(home, candidate.key, enabled, aliases=aliases, entry=entry)
    return True


def _trust_entry(
    config: PluginsConfig, candidate: Candidate, enabled: bool, shown: str | None = None
) -> dict[str, Any] | None:
    """Return the ``trusted_hash`` change enabling or disabling needs, or ``None`` for none."""
    if candidate.source != "project" or candidate.path is None:
        return None
    entry = config.entry(candidate.key)
    recorded, files = entry.get(TRUSTED_HASH_FIELD), entry.get(TRUSTED_FILES_FIELD)
    if not enabled:
        if recorded is None and files is None:
            return None
        return {TRUSTED_HASH_FIELD: None, TRUSTED_FILES_FIELD: None}
    content = read_content(candidate.path)
    if shown is not None and content.hash != shown:
        raise PluginTrustError(
            f"project plugin {candidate.key!r}: its files changed while they were shown for "
            f"review; nothing was trusted. Run 'hermes plugins enable {candidate.key}' again to "
            f"review them as they are now"
        )
    digests = dict(content.digests)
    if content.hash == recorded and files == digests:
        return None
    return {TRUSTED_HASH_FIELD: content.hash, TRUSTED_FILES_FIELD: digests}


def get_tool_override_grant(home: Path, key: str) -> bool | None:
    """Return ``plugins.entries.<key>.allow_tool_override``, or ``None`` when it is not set."""
    value = PluginsConfig.from_home(home).entry(key).get("allow_tool_override")
    return value if isinstance(value, bool) else None


def set_tool_override(home: Path, key: str, allowed: bool) -> None:
    """Write ``plugins.entries.<key>.allow_tool_override: <allowed>``, keeping everything else.

    :raises ConfigError: ``config.yaml`` is not valid YAML or has a wrong type; it is left as is.
    """

    def mutate(config: dict[str, Any]) -> None:
        PluginsConfig.from_config(config, source=config_path(home))  # refuse wrong types first
        node: dict[str, Any] = config
        for field in ("plugins", "entries", key):
            if node.get(field) is None:
                node[field] = {}
            node = node[field]
        node["allow_tool_override"] = allowed

    update_config(home, mutate)


@attrs.frozen
class OverrideProbe:
    """What a trial load told about a plugin's tool overrides.

    :param tools: tools it registered with ``override=True``.
    :param error: why it could not be loaded (then ``tools`` is unknown and empty).
    """

    tools: tuple[str, ...]
    error: str | None = None


def probe_tool_overrides(
    candidate: Candidate, *, load_timeout: float | None = None
) -> OverrideProbe:
    """Load *candidate* in a throwaway home and return the tools it asks to override.

    :param load_timeout: the operator's ``plugins.load_timeout``; the default when ``None``.
    """
    with trial_load(candidate, load_timeout=load_timeout) as pm:
        info = pm.get_plugin_info(candidate.key)
        if info is None or info.status != "enabled":
            reason = (info.error or info.reason) if info is not None else None
            return OverrideProbe((), reason or "it was not loaded")
        return OverrideProbe(pm.override_requests)
