"""What ``hermes models`` shows and writes: the model providers, and the choice of one.

:func:`describe_models` returns the listing as JSON data (every backend and profile: its
aliases, its ``api_mode``, whether this version speaks it, whether its key is set, which plugin
registered it, which one ``model.provider`` chooses); :func:`use_model` checks a choice and
writes ``model.provider`` and ``model.default`` to ``config.yaml`` atomically. The CLI
(``hermes_hooks.cli.models``) only formats.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path
from typing import Any

from hermes_hooks.backends.family import ProviderChoiceError
from hermes_hooks.backends.models.base import ModelBackend, ModelSettings
from hermes_hooks.backends.models.profile_backend import ProfileBackend
from hermes_hooks.backends.models.registry import ModelsRegistry
from hermes_hooks.errors import HermesHooksError
from hermes_hooks.plugins.config import update_config
from hermes_hooks.registries.base import HOST

__all__ = ["describe_backend", "describe_models", "use_model"]

_HOST_MODES = {"offline": "offline", "openai-compatible": "chat_completions"}
_STALE = ("base_url", "api_key_env")  # model.provider's own: they do not fit another profile


def describe_backend(
    registry: ModelsRegistry, backend: ModelBackend, settings: ModelSettings
) -> dict[str, Any]:
    """Return one row of the listing, as JSON data."""
    owner = registry.owner_of(backend.name)
    row: dict[str, Any] = {
        "name": backend.name,
        "display_name": backend.display_name,
        "aliases": registry.aliases_of(backend.name),
        "api_mode": _HOST_MODES.get(backend.name, "custom"),
        "supported": True,
        "key": "not needed",
        "key_variable": None,
        "key_variables": [],
        "base_url": None,
        "models": [],
        "description": "",
        "plugin": "host" if owner in (None, HOST) else owner,
    }
    if isinstance(backend, ProfileBackend):
        profile = backend.profile
        status = backend.key_status(settings)
        row.update(
            api_mode=backend.api_mode,
            supported=backend.is_supported(),
            key=status.state,
            key_variable=status.variable,
            key_variables=list(status.variables),
            base_url=profile.base_url or None,
            models=[str(m) for m in profile.fallback_models],
            description=str(profile.description or ""),
        )
    elif backend.name == "openai-compatible":
        main = settings.provider == "openai-compatible"
        variable = settings.api_key_env if main else None
        if variable:
            row.update(
                key="set" if os.environ.get(variable) else "missing",
                key_variable=variable if os.environ.get(variable) else None,
                key_variables=[variable],
            )
        row["base_url"] = settings.base_url if main else None
    return row


def describe_models(registry: ModelsRegistry) -> dict[str, Any]:
    """Return what ``hermes models --json`` prints: the choice, and every provider.

    ``provider`` and ``model`` are ``model.provider`` and ``model.default`` as written;
    ``active`` is the provider that choice stands for (an alias resolved), ``error`` why there
    is none. Importing the model-provider plugins is part of it.
    """
    out: dict[str, Any] = {"provider": None, "model": None, "active": None, "error": None}
    try:
        settings = registry.settings()
    except HermesHooksError as exc:
        out["error"] = str(exc)
        settings = ModelSettings()
    else:
        out["provider"], out["model"] = settings.provider, settings.name
        out["active"] = registry.canonical(settings.provider)
        if out["active"] is None:
            out["error"] = f"model.provider {settings.provider!r} names no registered provider"
    rows = [describe_backend(registry, b, settings) for b in registry.list_providers()]
    for row in rows:
        row["active"] = row["name"] == out["active"]
    out["providers"] = rows
    return out


def use_model(home: Path, registry: ModelsRegistry, name: str, model: str | None) -> dict[str, Any]:
    """Write ``model.provider: NAME`` (its canonical name) and ``model.default``, atomically.

    Without ``model``: the model already written when the provider does not change, else the
    profile's first suggested model; a profile that suggests none needs ``model``. Switching
    to a profile removes ``model.base_url`` and ``model.api_key_env``, which were the previous
    provider's (``providers.<name>`` holds a profile's own).

    :returns: ``{"provider", "model", "removed"}`` as written.
    :raises ProviderChoiceError: no provider has that name or alias (the closest are named),
        its ``api_mode`` is not spoken here, or no model is known for it.
    :raises ConfigError: ``config.yaml`` cannot be read or written.
    """
    canonical = registry.canonical(name)
    backend = registry.get_provider(canonical) if canonical is not None else None
    if canonical is None or backend is None:
        known = registry.names()
        close = difflib.get_close_matches(
            name.strip().lower(), [*known, *registry.aliases()], n=3, cutoff=0.5
        )
        hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
        raise ProviderChoiceError(
            f"no model provider is called {name!r}{hint} ('hermes models' lists them: "
            f"{', '.join(known)})"
        )
    profile = backend.profile if isinstance(backend, ProfileBackend) else None
    if isinstance(backend, ProfileBackend) and not backend.is_supported():
        raise ProviderChoiceError(
            f"model provider {canonical!r} uses api_mode {backend.api_mode!r}, which this "
            f"version does not speak; choose another provider"
        )
    current = registry.settings()
    same = registry.canonical(current.provider) == canonical
    chosen = model or (current.name if same else None)
    if chosen is None and profile is not None and profile.fallback_models:
        chosen = str(profile.fallback_models[0])
    if chosen is None and canonical != "offline":
        raise ProviderChoiceError(
            f"model provider {canonical!r} suggests no model: give one with --model ID"
        )
    removed: list[str] = []

    def write(config: dict[str, Any]) -> None:
        section = config.get("model")
        if not isinstance(section, dict):
            section = {}  # nothing, or "model: NAME" (its name is ``chosen`` when it stays)
        section["provider"] = canonical
        for alias in ("name", "model"):  # Hermes' default wins only when these are gone
            if section.pop(alias, None) is not None:
                removed.append(f"model.{alias}")
        if chosen is None:
            if section.pop("default", None) is not None:
                removed.append("model.default")
        else:
            section["default"] = chosen
        if profile is not None and not same:
            for key in _STALE:
                if section.pop(key, None) is not None:
                    removed.append(f"model.{key}")
        config["model"] = section

    update_config(home, write)
    return {"provider": canonical, "model": chosen, "removed": removed}
