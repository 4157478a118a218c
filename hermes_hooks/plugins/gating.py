"""Gating: whether a discovered plugin is to be loaded, and why, from config and environment.

The plugin manager asks :func:`gate` for each candidate (:mod:`hermes_hooks.plugins.manager`):
``plugins.disabled`` and ``HERMES_DISABLE_PLUGINS`` first, then the provider family that serves
the plugin's kind (:func:`family_gate`: ``memory.provider``, ``context.engine``, the first
profile lookup for model providers) or ``plugins.enabled``, then project trust and the Hermes
version the plugin requires. An unset ``requires_env`` variable is a warning on the plugin's
status, as in Hermes (strict mode refuses the plugin). Config matches plugin keys (and the
aliases of old folder keys), never a manifest name.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from hermes_hooks.errors import ConfigError, PluginTrustError
from hermes_hooks.plugins import extensions
from hermes_hooks.plugins.config import DISABLE_PLUGINS_ENV, PluginsConfig, disabled_for_this_run
from hermes_hooks.plugins.kinds import FAMILY_KINDS, LOADED_ON_LOOKUP
from hermes_hooks.plugins.records import Record, Status
from hermes_hooks.spec.contract import HERMES_CONTRACT_VERSION

__all__ = ["family_gate", "gate"]


def gate(
    record: Record,
    config: Mapping[str, Any],
    plugins_config: PluginsConfig,
    *,
    strict: bool,
    note_alias: Callable[[Record, str, str], None],
    lookup: bool = False,
    home: Path | None = None,
) -> tuple[Status, str | None]:
    """Decide from config and environment whether a candidate is to be loaded.

    A ``requires_env`` variable counts as set when it is in the environment or in *home*'s
    ``.env`` (which the host applies when it starts), so a key just saved there is set.

    Config matches plugin keys (and the aliases of old folder keys), never a manifest
    name: a folder nobody enabled does not run because its manifest claims an enabled
    plugin's name.
    """
    candidate = record.candidate
    if candidate.error is not None:
        return "error", candidate.error
    disabled_as = plugins_config.listed_as(candidate.key, "disabled")
    if disabled_as is not None:
        note_alias(record, disabled_as, "plugins.disabled")
        return "disabled", "listed in plugins.disabled"
    if candidate.key in disabled_for_this_run():
        return "disabled", f"disabled for this run ({DISABLE_PLUGINS_ENV})"
    served = family_gate(record, config, plugins_config, lookup=lookup)
    if served is not None:
        selected, why = served
        if not selected:
            chosen = _chosen_anyway(record, config, plugins_config)
            if chosen is None:
                return "not enabled", why
            why = chosen
    elif (enabled_as := plugins_config.listed_as(candidate.key, "enabled")) is not None:
        note_alias(record, enabled_as, "plugins.enabled")
        why = "listed in plugins.enabled"
    elif candidate.source == "bundled" and candidate.kind == "backend":
        why = "bundled backend, loaded by default"
    else:
        return "not enabled", "not listed in plugins.enabled"
    if candidate.source == "project" and candidate.path is not None:
        # Trusted as its files were when enabled (hash recorded by hermes plugins enable).
        # Imported here: hashlib is only needed for project plugins.
        from hermes_hooks.plugins.trust import verify_trusted

        try:
            # Imported from the very bytes checked here: nothing changes in between.
            if record.checked is None or record.checked.folder != candidate.path:
                record.checked = verify_trusted(
                    candidate.path, candidate.key, plugins_config.entry(candidate.key)
                )
        except PluginTrustError as exc:
            return "error", str(exc)
    manifest = candidate.manifest
    if manifest is not None:
        mismatch = manifest.hermes_mismatch(HERMES_CONTRACT_VERSION)
        if mismatch is not None:
            return "error", mismatch
        if manifest.version_problem is not None and strict:
            return "error", manifest.version_problem
    missing = _missing_env(manifest.required_env_names, home) if manifest else []
    if missing:
        plural = "s" if len(missing) > 1 else ""
        said = (
            f"requires environment variable{plural} {', '.join(missing)}, which "
            f"{'are' if plural else 'is'} not set"
        )
        if strict:
            return "error", said
        # As in Hermes: requires_env is what to ask for at install and in the doctor, never a
        # refusal; plugins read their settings from the environment or config themselves.
        warning = f"{said}; loaded all the same (strict mode refuses it)"
        if warning not in record.warnings:
            record.warnings.append(warning)
    return "enabled", why


def _missing_env(names: Iterable[str], home: Path | None) -> list[str]:
    """The variables of ``names`` set neither in the environment nor in *home*'s ``.env``."""
    missing = [n for n in names if not os.environ.get(n)]
    if missing and home is not None:
        from hermes_hooks.plugins.envfile import read_env_file

        stored: Mapping[str, str] = {}
        with contextlib.suppress(ConfigError):  # an unreadable .env sets nothing
            stored = read_env_file(home)
        missing = [n for n in missing if not stored.get(n)]
    return missing


def _chosen_anyway(
    record: Record, config: Mapping[str, Any], plugins_config: PluginsConfig
) -> str | None:
    """Why a plugin its inferred kind does not select loads all the same, or ``None``.

    As Hermes: a context engine named by ``context.engine`` loads whatever kind its source
    was read as (Hermes infers only ``exclusive`` and ``model-provider``), and one whose kind
    was inferred ``context-engine`` loads when ``plugins.enabled`` lists it.
    """
    candidate = record.candidate
    if candidate.kind_inferred and candidate.kind != "context-engine":
        engines = extensions.find_kind_family("context-engine")
        if engines is not None:
            try:
                named = engines.selected_name(config)
            except ConfigError:
                named = None
            names = {candidate.key, candidate.key.rsplit("/", 1)[-1], candidate.name}
            if named is not None and named in names:
                key = engines.selection_key
                return f"selected by {key} (its kind was read as {candidate.kind!r})"
    listed = plugins_config.listed_as(candidate.key, "enabled") is not None
    if candidate.kind_inferred and candidate.kind == "context-engine" and listed:
        # Hermes does not infer this kind: to it, such a plugin is one plugins.enabled loads
        return "listed in plugins.enabled (its kind 'context-engine' was only inferred)"
    return None


def family_gate(
    record: Record,
    config: Mapping[str, Any],
    plugins_config: PluginsConfig,
    *,
    lookup: bool = False,
) -> tuple[bool, str] | None:
    """For a plugin a provider family serves: whether config selects it, and why.

    ``None`` for every other kind (``plugins.enabled`` decides those).

    :param lookup: the family is looking its plugins up now (``PluginManager.load_deferred``).
    """
    candidate = record.candidate
    kind = candidate.kind
    if kind not in FAMILY_KINDS:
        return None
    what, hermes_key = FAMILY_KINDS[kind]
    how = f"kind {kind!r}"
    if candidate.kind_inferred:
        how += ", inferred from its folder or its __init__.py"
    family = extensions.find_kind_family(kind)
    if family is None:
        record.served_by = hermes_key
        return False, (
            f"a {what} plugin ({how}): Hermes serves it through {hermes_key}, not "
            f"plugins.enabled, and this version has no {what} family yet; listed, not loaded"
        )
    key = family.selection_key
    record.served_by = key
    if kind in LOADED_ON_LOOKUP:
        return _lookup_gate(record, plugins_config, what, how, key, lookup)
    try:
        chosen = family.selected_name(config)
    except ConfigError as exc:
        return False, f"a {what} plugin ({how}), served by {key}: {exc}"
    names = {candidate.key, candidate.key.rsplit("/", 1)[-1], candidate.name}
    if chosen is not None and chosen in names:
        return True, f"selected by {key}"
    now = f"{key} is {chosen!r}" if chosen is not None else f"{key} is not set"
    return False, (
        f"a {what} plugin ({how}), served by {key}, not plugins.enabled; {now}. Set "
        f"{key}: {candidate.key.rsplit('/', 1)[-1]} in config.yaml to use it"
    )


def _lookup_gate(
    record: Record, plugins_config: PluginsConfig, what: str, how: str, key: str, lookup: bool
) -> tuple[bool, str]:
    """For a kind imported on its family's first lookup (model-provider plugins)."""
    candidate = record.candidate
    record.deferred = True
    opt_in = candidate.source in ("project", "entrypoint")
    if opt_in and plugins_config.listed_as(candidate.key, "enabled") is None:
        return False, (
            f"a {what} plugin ({how}) from {candidate.source}: imported on the first "
            f"profile lookup once listed in plugins.enabled"
        )
    if lookup:
        return True, "imported on the first profile lookup"
    return False, (
        f"a {what} plugin ({how}): imported on the first profile lookup ({key}, ctx.llm, "
        f"hermes models), not by plugins.enabled; not imported yet"
    )
