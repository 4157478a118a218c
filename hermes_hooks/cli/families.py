"""``hermes tools <family>``: list a provider family's providers, and choose one.

One command per family with a ``cli_name`` (``hermes tools image-gen``), made from the family's
declaration. The logic (which providers exist, which one is active, what a model id may be)
lives in :mod:`hermes_hooks.backends.listing`; this module formats it. The commands are
sub-commands of ``hermes tools`` (:mod:`hermes_hooks.cli.hooks`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import click

from hermes_hooks.backends.family import Family, ProviderChoiceError
from hermes_hooks.cli.common import build_manager, echo_json, warn

__all__ = ["family_command", "family_commands", "print_listing"]


def print_listing(family: Family[Any], info: Mapping[str, Any]) -> None:
    """Print what :func:`~hermes_hooks.backends.listing.describe_family` returned, for people."""
    keys = [(s.key, s.field) for s in family.selections]
    if family.model_key and family.model_field:
        keys.append((family.model_key, family.model_field))
    click.echo("    ".join(f"{key}: {info.get(field) or '(not set)'}" for key, field in keys))
    if info["error"]:
        warn(info["error"])
    if not info["providers"]:
        click.echo(f"No {family.title} provider is registered.")
        return
    click.echo("")
    several = len(family.selections) > 1
    for p in info["providers"]:
        mark = "*" if p["active"] else " "
        if not p.get("loaded", True):
            state = f"not loaded; plugin {p['plugin']}"
        else:
            state = "available" if p["available"] else "not available"
            state += f"; plugin {p['plugin']}"
        badge = f" [{p['badge']}]" if p["badge"] else ""
        click.echo(f"{mark} {p['name']}  {p['display_name']}{badge}  ({state})")
        if p["tag"]:
            click.echo(f"      {p['tag']}")
        if p.get("reason") and not p["available"]:
            click.echo(f"      why: {p['reason']}")
        for line in family.detail_lines(p) if family.detail_lines is not None else []:
            click.echo(f"      {line}")
        ids = [str(m.get("id")) for m in p["models"] if isinstance(m, dict) and m.get("id")]
        if ids:
            shown = [f"{i} (default)" if i == p["default_model"] else i for i in ids]
            click.echo(f"      models: {', '.join(shown)}")
        for var in p["env_vars"]:
            status = "set" if var["set"] else "missing"
            url = f"  {var['url']}" if var.get("url") else ""
            click.echo(f"      needs {var.get('key')} ({status}){url}")
    waiting = [p for p in info.get("plugins", []) if p["status"] != "enabled"]
    if waiting:
        key = family.selections[0].key
        click.echo(f"\n{family.title.capitalize()} plugins (they load when {key} names them):")
        for p in waiting:
            mark = "*" if p["selected"] else " "
            why = f": {p['reason']}" if p["reason"] and p["status"] == "error" else ""
            click.echo(f"{mark} {p['name']}  (plugin {p['key']}, {p['status']}{why})")
    if info["active"]:
        click.echo("")
        main = family.selections[0]
        serves = main.serves or ", ".join(family.tool_names) or main.key
        click.echo(f"* serves {serves}: {info['active']}")
        serving = info.get("serving") or {}
        for selection in family.selections[1:] if several else ():
            chosen = serving.get(selection.key) or "(none)"
            click.echo(f"* serves {selection.serves or selection.key}: {chosen}")


def family_command(family: Family[Any]) -> click.Command:
    """Return the ``hermes tools <family>`` command of ``family`` (which has a ``cli_name``)."""
    assert family.cli_name is not None
    main = family.selections[0]
    others = [s for s in family.selections[1:] if s.cli_option]
    serves = ", ".join(family.tool_names) or main.key
    examples = [f"hermes tools {family.cli_name}"]
    examples += [f"hermes tools {family.cli_name} {args}" for args in family.cli_examples]
    help_text = (
        f"List {family.title} providers, or choose the one behind {serves}.\n\n\b\nExamples:\n"
        + "\n".join(f"  {line}" for line in examples)
    )

    @click.pass_context
    def callback(ctx: click.Context, /, **kwargs: Any) -> None:
        other_values = {
            s.key: kwargs[f"other_{s.field}"]
            for s in others
            if kwargs.get(f"other_{s.field}") is not None
        }
        _run_family(
            family,
            ctx,
            kwargs["provider_name"],
            kwargs.get("model"),
            kwargs["as_json"],
            other_values,
        )

    params = _family_params(family, others)
    return click.Command(family.cli_name, callback=callback, params=params, help=help_text)


def _family_params(family: Family[Any], others: list[Any]) -> list[click.Parameter]:
    """The options of ``hermes tools <family>``: ``--provider``, ``--model`` (when the family
    has models), one per other selection with a ``cli_option``, and ``--json``."""
    main = family.selections[0]
    params: list[click.Parameter] = [
        click.Option(["--provider", "provider_name"], metavar="NAME", help=f"Set {main.key}."),
    ]
    if family.model_key:
        model_help = f"Set {family.model_key} (a model of the provider)."
        params.append(click.Option(["--model"], metavar="ID", help=model_help))
    for selection in others:
        assert selection.cli_option is not None
        params.append(
            click.Option(
                [selection.cli_option, f"other_{selection.field}"],
                metavar="NAME",
                help=f"Set {selection.key}.",
            )
        )
    params.append(
        click.Option(["--json", "as_json"], is_flag=True, help="Print JSON instead of text.")
    )
    return params


def _run_family(
    family: Family[Any],
    ctx: click.Context,
    provider_name: str | None,
    model: str | None,
    as_json: bool,
    other_values: dict[str, str],
) -> None:
    """List the family's providers (no option given), or write the choice the options make."""
    from hermes_hooks.backends.listing import choose_provider, describe_family

    main = family.selections[0]
    model_key, model_field = family.model_key, family.model_field
    pm = build_manager(ctx)
    registry = family.registry(pm)
    served = [i for i in pm.list_plugins() if i.served_by == main.key]
    if provider_name is None and model is None and not other_values:
        info = describe_family(registry, served)
        if as_json:
            echo_json(info)
        else:
            print_listing(family, info)
        return
    try:
        written = choose_provider(
            registry, pm.hermes_home, provider_name, model, other_values or None, served
        )
    except ProviderChoiceError as exc:
        raise click.UsageError(str(exc)) from exc
    if as_json:
        echo_json(written)
        return
    parts = [f"{s.key} = {written[s.field]}" for s in family.selections if s.field in written]
    if model_key and model_field and written.get(model_field):
        parts.append(f"{model_key} = {written[model_field]}")
    click.echo(", ".join(parts))
    for message in written.get("warnings", []):
        warn(message)
    chosen = written.get(main.field)
    if chosen and not written["available"] and not written.get("warnings"):
        warn(
            f"{chosen!r} is not available yet; 'hermes tools {family.cli_name}' shows what it needs"
        )


def family_commands() -> list[click.Command]:
    """Return the ``hermes tools`` section of every family that has one, in listing order."""
    from hermes_hooks.plugins import extensions

    return [
        family_command(family)  # type: ignore[arg-type]
        for family in extensions.families()
        if getattr(family, "cli_name", None)
    ]
