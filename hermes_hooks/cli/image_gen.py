"""``hermes tools image-gen``: list the image generation providers, and choose one.

The logic (which providers exist, which one is active, what a model id may be) lives in
:mod:`hermes_hooks.backends.image_gen`; this module formats it and writes ``image_gen.provider`` /
``image_gen.model`` with :func:`~hermes_hooks.plugins.config.update_config`. The command is a
sub-command of ``hermes tools`` (:mod:`hermes_hooks.cli.hooks`).
"""

from __future__ import annotations

import difflib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from hermes_hooks.cli.common import build_manager, echo_json, warn
from hermes_hooks.errors import HermesHooksError
from hermes_hooks.plugins.config import update_config

if TYPE_CHECKING:
    from hermes_hooks.plugins.manager import PluginManager

__all__ = ["describe_providers", "image_gen"]


def _safe(call: Any, default: Any) -> Any:
    try:
        return call()
    except Exception as exc:  # a broken provider must not break the listing
        return default if default is not None else f"<{type(exc).__name__}: {exc}>"


def _plain(value: Any) -> Any:
    """Return ``value`` as JSON data: what a plugin returned may hold anything."""
    return json.loads(json.dumps(value, default=str))


def describe_providers(pm: PluginManager) -> dict[str, Any]:
    """Return what ``hermes tools image-gen --json`` prints: settings, active and providers."""
    from hermes_hooks.backends.image_gen import is_available_safe

    registry = pm.image_gen
    out: dict[str, Any] = {"provider": None, "model": None, "active": None, "error": None}
    try:
        settings = registry.settings()
        out["provider"], out["model"] = settings.provider, settings.model
        out["active"] = registry.select_provider(settings).name
    except HermesHooksError as exc:
        out["error"] = str(exc)
    providers = []
    for provider in registry.list_providers():
        schema = _safe(provider.get_setup_schema, {}) or {}
        env_vars = [
            {**var, "set": bool(os.environ.get(str(var.get("key", ""))))}
            for var in schema.get("env_vars", [])
            if isinstance(var, dict)
        ]
        providers.append(
            {
                "name": provider.name,
                "display_name": _safe(lambda p=provider: p.display_name, provider.name),
                "plugin": registry.owner_of(provider.name),
                "available": is_available_safe(provider),
                "active": provider.name == out["active"],
                "default_model": _safe(provider.default_model, ""),
                "models": _plain(_safe(provider.list_models, [])),
                "capabilities": _plain(_safe(provider.capabilities, {})),
                "badge": schema.get("badge", ""),
                "tag": schema.get("tag", ""),
                "env_vars": env_vars,
            }
        )
    out["providers"] = providers
    return out


def _print_listing(info: dict[str, Any]) -> None:
    configured = info["provider"] or "(not set)"
    click.echo(
        f"image_gen.provider: {configured}    image_gen.model: {info['model'] or '(not set)'}"
    )
    if info["error"]:
        warn(info["error"])
    if not info["providers"]:
        click.echo("No image generation provider is registered.")
        return
    click.echo("")
    for p in info["providers"]:
        mark = "*" if p["active"] else " "
        state = "available" if p["available"] else "not available"
        badge = f" [{p['badge']}]" if p["badge"] else ""
        click.echo(
            f"{mark} {p['name']}  {p['display_name']}{badge}  ({state}; plugin {p['plugin']})"
        )
        if p["tag"]:
            click.echo(f"      {p['tag']}")
        modalities = p["capabilities"].get("modalities", ["text"]) if p["capabilities"] else []
        can_edit = "image" in modalities
        click.echo(f"      input: {'text and images (editing)' if can_edit else 'text'}")
        ids = [str(m.get("id")) for m in p["models"] if isinstance(m, dict) and m.get("id")]
        if ids:
            shown = [f"{i} (default)" if i == p["default_model"] else i for i in ids]
            click.echo(f"      models: {', '.join(shown)}")
        for var in p["env_vars"]:
            status = "set" if var["set"] else "missing"
            url = f"  {var['url']}" if var.get("url") else ""
            click.echo(f"      needs {var.get('key')} ({status}){url}")
    if info["active"]:
        click.echo(f"\n* serves image_generate: {info['active']}")


def _choose(
    pm: PluginManager, home: Path, provider_name: str | None, model: str | None
) -> dict[str, Any]:
    """Validate and write ``image_gen.provider``/``image_gen.model``; return what was written."""
    registry = pm.image_gen
    provider = (
        registry.select_provider()
        if provider_name is None
        else registry.get_provider(provider_name)
    )
    if provider is None:
        names = registry.names()
        close = difflib.get_close_matches(str(provider_name), names, n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
        raise click.UsageError(
            f"no image provider named {provider_name!r}{hint} (registered: "
            f"{', '.join(names) or 'none'}; 'hermes plugins list --all' shows the plugins)"
        )
    models = _safe(provider.list_models, [])
    ids = [str(m["id"]) for m in models if isinstance(m, dict) and isinstance(m.get("id"), str)]
    if model is not None and ids and model not in ids:
        raise click.UsageError(
            f"provider {provider.name!r} has no model {model!r}; its models: {', '.join(ids)}"
        )
    chosen_model = model if model is not None else _safe(provider.default_model, None)

    def mutate(config: dict[str, Any]) -> None:
        section = config.get("image_gen")
        if not isinstance(section, dict):
            section = config["image_gen"] = {}
        section["provider"] = provider.name
        if chosen_model:
            section["model"] = chosen_model
        else:
            section.pop("model", None)  # a model of the previous provider would not fit

    update_config(home, mutate)
    return {"provider": provider.name, "model": chosen_model, "available": provider.is_available()}


@click.command("image-gen")
@click.option("--provider", "provider_name", metavar="NAME", help="Set image_gen.provider.")
@click.option("--model", metavar="ID", help="Set image_gen.model (a model of the provider).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@click.pass_context
def image_gen(
    ctx: click.Context, provider_name: str | None, model: str | None, as_json: bool
) -> None:
    """List image generation providers, or choose the one behind image_generate.

    \b
    Examples:
      hermes tools image-gen
      hermes tools image-gen --provider openai --model gpt-image-2-high
      hermes tools image-gen --provider local --json
    """
    pm = build_manager(ctx)
    if provider_name is None and model is None:
        info = describe_providers(pm)
        if as_json:
            echo_json(info)
        else:
            _print_listing(info)
        return
    written = _choose(pm, pm.hermes_home, provider_name, model)
    if as_json:
        echo_json(written)
        return
    model_text = f", image_gen.model = {written['model']}" if written["model"] else ""
    click.echo(f"image_gen.provider = {written['provider']}{model_text}")
    if not written["available"]:
        warn(
            f"{written['provider']!r} is not available yet; "
            f"'hermes tools image-gen' shows what it needs"
        )
