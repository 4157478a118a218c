"""The ``hermes tools`` picker: on a terminal, choose a family, a provider and a model, and key.

As the seed describes it: ``hermes tools`` → "Image generation" → choose ``my-backend`` → enter
the API key if it is missing. A key is saved to ``$HERMES_HOME/.env`` (mode 0600) and set for
the rest of the command; the choice is written as ``hermes tools <family> --provider NAME
--model ID`` writes it (:func:`~hermes_hooks.backends.listing.choose_provider`). Off a terminal
``hermes tools`` only lists, and the non-interactive commands do the rest.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import click

from hermes_hooks.cli.common import warn

if TYPE_CHECKING:
    from hermes_hooks.backends.family import Family
    from hermes_hooks.plugins.manager import PluginManager

__all__ = ["run_picker"]

QUIT = "q"


def _menu(title: str, options: Sequence[str], *, default: int | None = None) -> int | None:
    """Show a numbered menu; return the index chosen, or ``None`` for ``q`` (or no options)."""
    if not options:
        return None
    click.echo(title)
    for number, text in enumerate(options, start=1):
        click.echo(f"  {number}) {text}")
    click.echo(f"  {QUIT}) done")
    choices = [str(n) for n in range(1, len(options) + 1)] + [QUIT]
    answer = click.prompt(
        "Choose",
        type=click.Choice(choices),
        default=str(default + 1) if default is not None else QUIT,
        show_choices=False,
    )
    return None if answer == QUIT else int(answer) - 1


def _families() -> list[Family[Any]]:
    from hermes_hooks.plugins import extensions

    found = [f for f in extensions.families() if getattr(f, "cli_name", None)]
    return found  # type: ignore[return-value]


def run_picker(pm: PluginManager) -> None:
    """Ask on the terminal which provider (and model) each family uses, until ``q``."""
    from hermes_hooks.backends.listing import describe_family

    families = _families()
    while True:
        labels = []
        for family in families:
            info = describe_family(family.registry(pm))
            labels.append(f"{family.title.capitalize()}  (now: {info['active'] or 'none'})")
        index = _menu("\nConfigure a provider family:", labels)
        if index is None:
            return
        _pick_provider(pm, families[index])


def _pick_provider(pm: PluginManager, family: Family[Any]) -> None:
    from hermes_hooks.backends.listing import choose_provider, describe_family, model_ids

    registry = family.registry(pm)
    info = describe_family(registry)
    providers = info["providers"]
    if not providers:
        warn(f"no {family.title} provider is registered: 'hermes plugins list --all' shows them")
        return
    labels = []
    for entry in providers:
        state = "available" if entry["available"] else "not available"
        missing = [v["key"] for v in entry["env_vars"] if not v["set"]]
        needs = f"; needs {', '.join(missing)}" if missing else ""
        badge = f" [{entry['badge']}]" if entry["badge"] else ""
        labels.append(f"{entry['name']}  {entry['display_name']}{badge}  ({state}{needs})")
    current = next((i for i, e in enumerate(providers) if e["active"]), None)
    index = _menu(f"\n{family.title.capitalize()} providers:", labels, default=current)
    if index is None:
        return
    entry = providers[index]
    provider = registry.get_provider(entry["name"])
    model = None
    ids = model_ids(provider)
    if ids and family.model_key:
        default_model = entry.get("default_model") or ids[0]
        shown = [f"{i} (default)" if i == default_model else i for i in ids]
        picked = _menu(
            f"\nModels of {entry['name']}:",
            shown,
            default=ids.index(default_model) if default_model in ids else 0,
        )
        model = ids[picked] if picked is not None else None
    for var in entry["env_vars"]:
        if not var["set"]:
            _ask_key(pm, var)
    written = choose_provider(registry, pm.hermes_home, entry["name"], model)
    main = family.selections[0]
    text = f"{main.key} = {written[main.field]}"
    if family.model_key and family.model_field and written.get(family.model_field):
        text += f", {family.model_key} = {written[family.model_field]}"
    click.echo(text)
    for message in written.get("warnings", []):
        warn(message)
    if not written["available"] and not written.get("warnings"):
        warn(f"{entry['name']!r} is not available yet; 'hermes tools {family.cli_name}' says why")


def _ask_key(pm: PluginManager, var: dict[str, Any]) -> None:
    from hermes_hooks.admin.envfile import set_env_value

    name = str(var.get("key", ""))
    prompt = str(var.get("prompt") or name)
    url = f" ({var['url']})" if var.get("url") else ""
    click.echo(f"{name} is not set: {prompt}{url}")
    value = click.prompt(
        f"Enter {name} (saved to $HERMES_HOME/.env; empty to skip)",
        default="",
        hide_input=True,
        show_default=False,
    )
    if not value:
        return
    path = set_env_value(pm.hermes_home, name, value)
    os.environ[name] = value  # the provider sees it for the rest of this command
    click.echo(f"Saved {name} in {path}.")
