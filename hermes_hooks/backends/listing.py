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
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_hooks.backends.calls import unavailable_reason
from hermes_hooks.backends.family import (
    ProviderChoiceError,
    ProviderRegistry,
    Selection,
    is_available_safe,
)
from hermes_hooks.errors import HermesHooksError
from hermes_hooks.plugins.config import update_config
from hermes_hooks.plugins.kinds import SCAN_LIMIT

__all__ = ["choose_provider", "describe_family", "family_plugins", "model_ids"]

if TYPE_CHECKING:
    from hermes_hooks.plugins.manager import PluginInfo


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


def _provider_entry(
    registry: ProviderRegistry[Any],
    provider: Any,
    active: str | None,
    serving: Mapping[str, str | None],
) -> dict[str, Any]:
    """One registered provider as ``describe_family`` lists it (whatever it raises)."""
    family = registry.family
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
        "loaded": True,
        "available": is_available_safe(provider),
        "reason": unavailable_reason(provider),
        "active": name == active,
        "serves": [key for key, chosen in serving.items() if chosen == name],
        "default_model": _safe(default_model, "") if callable(default_model) else "",
        "models": _plain(_safe(lister, [])) if callable(lister) else [],
    }
    if family.describe_extra is not None:
        entry.update(_plain(family.describe_extra(provider)))
    entry.update(
        badge=schema.get("badge", ""), tag=schema.get("tag", ""), env_vars=_plain(env_vars)
    )
    return entry


def describe_family(
    registry: ProviderRegistry[Any], plugins: Sequence[PluginInfo] = ()
) -> dict[str, Any]:
    """Return what ``hermes tools <family> --json`` prints: settings, active and providers.

    The settings are one entry per selection field (``provider``) and ``model`` where the
    family has a model key; ``active`` is the provider the first selection key chooses now,
    and ``error`` why none is, when none is; ``serving`` what each selection key chooses.
    Each provider says whether it is ``available`` and, when not, the ``reason``. The
    family's plugins that registered no provider (a ``requires_env`` unset, not enabled,
    failed) are listed too, from their manifests (``loaded`` false), with the variables
    they need: never hidden, and they can be chosen.

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
    serving: dict[str, str | None] = {}
    for selection in family.selections:
        try:
            chosen = registry.select_provider(selection=selection)
            serving[selection.key] = _name_of(chosen)
        except HermesHooksError:
            serving[selection.key] = None
    out["serving"] = serving
    providers = [
        _provider_entry(registry, provider, out["active"], serving)
        for provider in registry.list_providers()
    ]
    served = {info.key for info in plugins}  # listed under "plugins" below, not twice
    providers.extend(e for e in family_plugins(registry) if e["plugin"] not in served)
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


def _registers_in_source(path: str | None, family_name: str) -> bool:
    """Return whether a plugin's ``__init__.py`` calls ``ctx.register_<family>_provider``.

    For a plugin outside the family's category folders whose manifest lists no providers:
    it is still the family's when its code registers one (read, never imported).
    """
    if not path:
        return False
    folder = Path(path)
    source = folder / "__init__.py" if folder.is_dir() else folder
    try:
        with source.open(encoding="utf-8-sig", errors="replace") as stream:
            head = stream.read(SCAN_LIMIT)
    except OSError:
        return False
    return f"register_{family_name}_provider" in head


def family_plugins(registry: ProviderRegistry[Any]) -> list[dict[str, Any]]:
    """Return the family's discovered plugins that registered no provider in it, as entries.

    A plugin belongs to a family when its manifest lists providers in the family's manifest
    field (``provides_web_providers``), its key's category is one of the family's
    (``web/searxng``), or its ``__init__.py`` calls ``register_<family>_provider``. Each
    entry is named by the plugin's manifest name, says why it has no provider (``reason``)
    and lists its ``requires_env`` variables as ``env_vars``.
    """
    manager = registry.manager
    if manager is None:
        return []
    family = registry.family
    found = []
    for info in manager.list_plugins():
        if registry.names(owner=info.key):
            continue  # listed with its providers
        manifest = manager.get_manifest(info.key)
        provides: tuple[str, ...] = ()
        if manifest is not None and family.manifest_field:
            provides = tuple(getattr(manifest, family.manifest_field, ()) or ())
        category = info.key.partition("/")[0] if "/" in info.key else None
        if (
            not provides
            and category not in family.categories
            and not _registers_in_source(info.path, family.name)
        ):
            continue
        if info.status == "enabled":
            why = f"plugin {info.key!r} is loaded but registered no {family.kind}"
        else:
            detail = info.error or info.reason or ""
            why = f"plugin {info.key!r} is {info.status}" + (f": {detail}" if detail else "")
        env_vars = [
            {
                "key": env.name,
                "prompt": env.prompt or env.description or env.name,
                "url": env.url,
                "set": bool(os.environ.get(env.name, "").strip()),
            }
            for env in (manifest.requires_env if manifest is not None else ())
        ]
        found.append(
            {
                "name": info.name,
                "display_name": (manifest.label if manifest is not None else "") or info.name,
                "plugin": info.key,
                "loaded": False,
                "available": False,
                "reason": why,
                "active": False,
                "serves": [],
                "default_model": "",
                "models": [],
                "badge": "",
                "tag": info.description,
                "env_vars": env_vars,
                "provides": list(provides),
            }
        )
    return found


def _name_of(provider: object) -> str:
    return str(getattr(provider, "name", ""))


def _resolve_choice(
    registry: ProviderRegistry[Any], selection: Selection, wanted: str, warnings: list[str]
) -> tuple[str, object | None]:
    """Return the value to write for ``selection`` and the provider it is now, if loaded.

    ``wanted`` is a registered provider's name, or the manifest name (key, folder) of a
    plugin of the family, loaded or not.

    :raises ProviderChoiceError: it names neither, or a provider that cannot serve the key.
    """
    family = registry.family
    provider = registry.get_provider(wanted)
    if provider is not None:
        if not selection.accepts_provider(provider):
            raise ProviderChoiceError(
                f"{family.kind} {wanted!r} cannot serve {selection.key} (it does not offer "
                f"what that key chooses); {family.list_hint()} to see which can"
            )
        return wanted, provider
    manager = registry.manager
    infos = manager.list_plugins() if manager is not None else []
    for info in infos:
        if wanted not in {info.key, info.key.rsplit("/", 1)[-1], info.name, *info.aliases}:
            continue
        own = [
            n
            for n in registry.names(owner=info.key)
            if selection.accepts_provider(registry.get_provider(n))
        ]
        if len(own) == 1:
            if own[0] != info.name:
                warnings.append(
                    f"plugin {info.key!r} registers its {family.kind} as {own[0]!r}, not "
                    f"{info.name!r}: {selection.key} = {info.name} selects it; "
                    f"'--provider {own[0]}' names the provider itself"
                )
            return info.name, registry.get_provider(own[0])
    for entry in family_plugins(registry):
        names = {entry["name"], entry["plugin"], entry["plugin"].rsplit("/", 1)[-1]}
        if wanted in names or wanted in entry["provides"]:
            value = wanted if wanted in entry["provides"] else entry["name"]
            missing = [v["key"] for v in entry["env_vars"] if not v["set"]]
            needs = f"; set {', '.join(missing)} (saved in $HERMES_HOME/.env)" if missing else ""
            warnings.append(
                f"{value!r} is not loaded yet ({entry['reason']}){needs}; "
                f"'hermes tools {family.cli_name}' shows what it needs"
            )
            return value, None
    known = sorted({*registry.names(), *(e["name"] for e in family_plugins(registry))})
    close = difflib.get_close_matches(str(wanted), known, n=3, cutoff=0.6)
    hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
    raise ProviderChoiceError(
        f"no {family.kind} named {wanted!r}{hint} (registered: "
        f"{', '.join(registry.names()) or 'none'}; 'hermes plugins list --all' shows the "
        f"plugins)"
    )


def _section(config: dict[str, Any], name: str) -> dict[str, Any]:
    """``config[name]``, made a mapping when it is not one (nothing, or ``model: NAME``)."""
    section = config.get(name)
    if not isinstance(section, dict):
        section = config[name] = {}
    return section


def _choose_plugin(home: Path, main: Selection, served: PluginInfo) -> dict[str, Any]:
    """Write the name of a plugin of the family that is not loaded (it loads next time)."""
    leaf = served.key.rsplit("/", 1)[-1]
    update_config(home, lambda config: _section(config, main.section).update({main.field: leaf}))
    return {main.field: leaf, "available": served.status != "error", "plugin": served.key}


def _chosen_model(provider: object | None, model: str | None) -> Any:
    """The model to write: ``model``, which must be one the provider lists (when it lists
    any), or else the provider's default model.

    :raises ProviderChoiceError: the provider has no such model.
    """
    ids = model_ids(provider) if provider is not None else []
    if model is not None and ids and model not in ids:
        raise ProviderChoiceError(
            f"provider {_name_of(provider)!r} has no model {model!r}; its models: {', '.join(ids)}"
        )
    default_model = getattr(provider, "default_model", None)
    if model is None and callable(default_model):
        return _safe(default_model, None)
    return model


def choose_provider(
    registry: ProviderRegistry[Any],
    home: Path,
    provider_name: str | None,
    model: str | None,
    others: Mapping[str, str] | None = None,
    plugins: Sequence[PluginInfo] = (),
) -> dict[str, Any]:
    """Check a choice and write it to ``home``'s ``config.yaml``; return what was written.

    :param provider_name: the provider for the family's first selection key: a registered
        provider's name, or the manifest name of a plugin of the family (listed while it is
        not loaded); ``None`` keeps the one chosen now (to change only the model).
    :param model: the model id, one of the provider's models when it lists any; ``None``
        writes the provider's default model (or removes a model of the previous provider).
    :param others: values for the family's other selection keys, by key
        (``{"web.extract_backend": "local"}``).
    :param plugins: the plugins of the kind the family serves: naming one (its folder name)
        writes that name, so that the plugin loads next time, though it is not loaded now.
    :returns: each field written, ``available`` (the first key's provider can serve now) and
        ``warnings``.
    :raises ProviderChoiceError: no provider of that name, one that cannot serve the key, or
        the provider has no such model.
    """
    family = registry.family
    main = family.selections[0]
    if provider_name is not None and registry.get_provider(provider_name) is None:
        served = next((i for i in plugins if provider_name in _plugin_names(i)), None)
        if served is not None:
            return _choose_plugin(home, main, served)
    warnings: list[str] = []
    writes: dict[Selection, str] = {}
    provider: object | None
    if provider_name is None:
        provider = registry.select_provider(selection=main)
        name: str | None = _name_of(provider)
        if others:
            name = None  # only the other keys change
    else:
        name, provider = _resolve_choice(registry, main, provider_name, warnings)
        writes[main] = name
    by_key = {s.key: s for s in family.selections}
    for key, wanted in (others or {}).items():
        selection = by_key.get(key)
        if selection is None:
            raise ProviderChoiceError(
                f"{family.title} has no selection key {key!r} (its keys: {', '.join(by_key)})"
            )
        writes[selection] = _resolve_choice(registry, selection, wanted, warnings)[0]
    chosen_model = _chosen_model(provider, model)
    model_field = family.model_field
    change_model = model_field is not None and (name is not None or model is not None)

    def mutate(config: dict[str, Any]) -> None:
        for selection, value in writes.items():
            _section(config, selection.section)[selection.field] = value
        if not change_model or model_field is None:
            return
        section = _section(config, main.section)
        if chosen_model:
            section[model_field] = chosen_model
        else:
            section.pop(model_field, None)  # a model of the previous provider would not fit

    update_config(home, mutate)
    written: dict[str, Any] = {selection.field: value for selection, value in writes.items()}
    if provider_name is None and not others:
        written[main.field] = name
    if change_model and model_field:
        written[model_field] = chosen_model
    written["available"] = provider is not None and is_available_safe(provider)
    if warnings:
        written["warnings"] = warnings
    return written
