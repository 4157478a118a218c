"""What ``hermes tools <family>`` shows and writes: every family's providers, and the choice.

The logic behind the command, for any family: :func:`describe_family` returns what the listing
shows (as JSON data), :func:`choose_provider` checks a choice and writes it to ``config.yaml``.
The CLI (:mod:`hermes_hooks.cli.families`) only formats.
"""

from __future__ import annotations

import difflib
import functools
import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_hooks.backends.family import ProviderChoiceError, ProviderRegistry, is_available_safe
from hermes_hooks.errors import HermesHooksError
from hermes_hooks.plugins.config import update_config

if TYPE_CHECKING:
    from hermes_hooks.plugins.manager import PluginInfo

__all__ = ["choose_provider", "describe_family", "model_ids"]

def _safe(call: Callable[[], Any], default: Any) -> Any:
    try:
        return call()
    except Exception:  # a broken provider must not break the listing
        return default


def _plain(value: Any) -> Any:
    """Return ``value`` as JSON data: what a plugin returned may hold anything."""
    return json.loads(json.dumps(value, default=str))


def model_ids(provider: object) -> list[str]:
    """Return the ids of the models a provider lists (``list_models()``), or ``[]``."""
    lister = getattr(provider, "list_models", None)
    models = _safe(lister, []) if callable(lister) else []
    return [str(m["id"]) for m in models if isinstance(m, dict) and isinstance(m.get("id"), str)]


def _plugin_names(info: PluginInfo) -> set[str]:
    return {info.key, info.key.rsplit("/", 1)[-1], info.name, *info.aliases}


def describe_family(
    registry: ProviderRegistry[Any], plugins: Sequence[PluginInfo] = ()
) -> dict[str, Any]:
    """Return what ``hermes tools <family> --json`` prints: settings, active and providers.

    The settings are one entry per selection field (``provider``) and ``model`` where the
    family has a model key; ``active`` is the provider the first selection key chooses now,
    and ``error`` why none is, when none is.

    :param plugins: the plugins of the kind the family serves (memory plugins), listed under
        ``plugins`` whether or not they loaded: they load only when the key names them.
    """
    family = registry.family
    main = family.selections[0]
    out: dict[str, Any] = {s.field: None for s in family.selections}
    if family.model_field:
        out[family.model_field] = None
    out.update(active=None, error=None)
    try:
        settings = registry.settings()
        for selection in family.selections:
            out[selection.field] = settings.choice(selection)
        if family.model_field:
            out[family.model_field] = settings.model
        out["active"] = _name_of(registry.select_provider(settings, selection=main))
    except HermesHooksError as exc:
        out["error"] = str(exc)
    providers = []
    for provider in registry.list_providers():
        name = _name_of(provider)
        setup = getattr(provider, "get_setup_schema", None)
        schema = _safe(setup, {}) if callable(setup) else {}
        schema = schema if isinstance(schema, dict) else {}
        env_vars = [
            {**var, "set": bool(os.environ.get(str(var.get("key", ""))))}
            for var in schema.get("env_vars", [])
            if isinstance(var, dict)
        ]
        default_model = getattr(provider, "default_model", None)
        lister = getattr(provider, "list_models", None)
        entry: dict[str, Any] = {
            "name": name,
            "display_name": _safe(functools.partial(getattr, provider, "display_name"), name),
            "plugin": registry.owner_of(name),
            "available": is_available_safe(provider),
            "active": name == out["active"],
            "default_model": _safe(default_model, "") if callable(default_model) else "",
            "models": _plain(_safe(lister, [])) if callable(lister) else [],
        }
        if family.describe_extra is not None:
            entry.update(_plain(family.describe_extra(provider)))
        entry.update(
            badge=schema.get("badge", ""), tag=schema.get("tag", ""), env_vars=_plain(env_vars)
        )
        providers.append(entry)
    out["providers"] = providers
    chosen = out.get(main.field)
    out["plugins"] = [
        {
            "key": info.key,
            "name": info.key.rsplit("/", 1)[-1],
            "status": info.status,
            "selected": chosen is not None and chosen in _plugin_names(info),
            "providers": [p.partition(":")[2] for p in info.providers],
            "reason": info.error or info.reason,
        }
        for info in plugins
    ]
    return out


def _name_of(provider: object) -> str:
    return str(getattr(provider, "name", ""))


def choose_provider(
    registry: ProviderRegistry[Any],
    home: Path,
    provider_name: str | None,
    model: str | None,
    plugins: Sequence[PluginInfo] = (),
) -> dict[str, Any]:
    """Check a choice and write it to ``home``'s ``config.yaml``; return what was written.

    :param provider_name: the provider for the family's first selection key; ``None`` keeps
        the one chosen now (to change only the model).
    :param model: the model id, one of the provider's models when it lists any; ``None``
        writes the provider's default model (or removes a model of the previous provider).
    :param plugins: the plugins of the kind the family serves: naming one (its folder name)
        writes that name, so that the plugin loads next time, though it is not loaded now.
    :raises ProviderChoiceError: no provider of that name, or the provider has no such model.
    """
    family = registry.family
    main = family.selections[0]
    if provider_name is not None and registry.get_provider(provider_name) is None:
        served = next((i for i in plugins if provider_name in _plugin_names(i)), None)
        if served is not None:
            leaf = served.key.rsplit("/", 1)[-1]

            def select(config: dict[str, Any]) -> None:
                section = config.get(main.section)
                if not isinstance(section, dict):
                    section = config[main.section] = {}
                section[main.field] = leaf

            update_config(home, select)
            return {main.field: leaf, "available": served.status != "error", "plugin": served.key}
    provider = (
        registry.select_provider(selection=main)
        if provider_name is None
        else registry.get_provider(provider_name)
    )
    if provider is None:
        names = sorted({*registry.names(), *(i.key.rsplit("/", 1)[-1] for i in plugins)})
        close = difflib.get_close_matches(str(provider_name), names, n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
        raise ProviderChoiceError(
            f"no {family.kind} named {provider_name!r}{hint} (registered: "
            f"{', '.join(names) or 'none'}; 'hermes plugins list --all' shows the plugins)"
        )
    name = _name_of(provider)
    ids = model_ids(provider)
    if model is not None and ids and model not in ids:
        raise ProviderChoiceError(
            f"provider {name!r} has no model {model!r}; its models: {', '.join(ids)}"
        )
    default_model = getattr(provider, "default_model", None)
    chosen_model = model
    if chosen_model is None and callable(default_model):
        chosen_model = _safe(default_model, None)
    model_field = family.model_field

    def mutate(config: dict[str, Any]) -> None:
        section = config.get(main.section)
        if not isinstance(section, dict):
            section = config[main.section] = {}
        section[main.field] = name
        if model_field is None:
            return
        if chosen_model:
            section[model_field] = chosen_model
        else:
            section.pop(model_field, None)  # a model of the previous provider would not fit

    update_config(home, mutate)
    return {
        main.field: name,
        **({model_field: chosen_model} if model_field else {}),
        "available": is_available_safe(provider),
    }
