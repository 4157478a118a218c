"""``hermes models``: list the model providers and profiles, and choose the one the host runs.

The logic (which providers exist, whether a key is set, what a choice writes) lives in
:mod:`hermes_hooks.backends.models.catalog`; this module formats it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import click

from hermes_hooks.cli.common import build_manager, echo_json, fit_table, terminal_width, warn

__all__ = ["models"]


def _key(row: Mapping[str, Any]) -> str:
    if row["key"] == "set":
        return f"set ({row['key_variable']})"
    if row["key"] == "missing":
        return f"missing: {' or '.join(row['key_variables'])}"
    return "not needed"


def _mode(row: Mapping[str, Any]) -> str:
    return row["api_mode"] if row["supported"] else f"{row['api_mode']} (not supported)"


def _print_listing(info: Mapping[str, Any]) -> None:
    provider = info["provider"] or "(not set)"
    model = info["model"] or "(not set)"
    click.echo(f"model.provider: {provider}    model.default: {model}")
    if info["error"]:
        warn(info["error"])
    rows = [
        [
            ("* " if row["active"] else "  ") + row["name"],
            ", ".join(row["aliases"]) or "-",
            _mode(row),
            _key(row),
            row["display_name"] if row["display_name"] != row["name"] else "",
        ]
        for row in info["providers"]
    ]
    click.echo("")
    for line in fit_table(
        ["  NAME", "ALIASES", "MODE", "KEY", "DISPLAY NAME"], rows, terminal_width()
    ):
        click.echo(line)
    click.echo("\n'hermes models use NAME [--model ID]' chooses one.")


@click.group("models", invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@click.pass_context
def models(ctx: click.Context, as_json: bool) -> None:
    """List the model providers: the host's, and the profiles model-provider plugins register.

    Each with its aliases, its wire protocol (api_mode), whether its API key is set (and in
    which variable), and a * on the one model.provider chooses. Listing imports the
    model-provider plugins.

    \b
    Examples:
      hermes models
      hermes models --json
      hermes models use openrouter --model anthropic/claude-sonnet-4.6
    """
    if ctx.invoked_subcommand is not None:
        return
    from hermes_hooks.backends.models import get_models
    from hermes_hooks.backends.models.catalog import describe_models

    info = describe_models(get_models(build_manager(ctx)))
    if as_json:
        echo_json(info)
    else:
        _print_listing(info)


@models.command("use")
@click.argument("name")
@click.option("--model", "model", metavar="ID", help="Set model.default (the model id).")
@click.option("--json", "as_json", is_flag=True, help="Print what was written as JSON.")
@click.pass_context
def use(ctx: click.Context, name: str, model: str | None, as_json: bool) -> None:
    """Choose the model provider NAME (a name or an alias): write model.provider and
    model.default in config.yaml.

    Without --model, the model written stays when the provider does not change, else the
    provider's first suggested model is written. Switching to a profile removes
    model.base_url and model.api_key_env, which were the previous provider's.

    \b
    Examples:
      hermes models use anthropic
      hermes models use or --model openai/gpt-5.4
      hermes models use offline
    """
    from hermes_hooks.backends.family import ProviderChoiceError
    from hermes_hooks.backends.models import get_models
    from hermes_hooks.backends.models.catalog import describe_models, use_model

    pm = build_manager(ctx)
    registry = get_models(pm)
    try:
        written = use_model(pm.hermes_home, registry, name, model)
    except ProviderChoiceError as exc:
        raise click.UsageError(str(exc)) from exc
    if as_json:
        echo_json(written)
        return
    shown = f"model.provider = {written['provider']}"
    if written["model"]:
        shown += f", model.default = {written['model']}"
    click.echo(shown)
    if written["removed"]:
        click.echo(f"removed {', '.join(written['removed'])} from config.yaml")
    row = next(
        (r for r in describe_models(registry)["providers"] if r["name"] == written["provider"]),
        None,
    )
    if row is not None and row["key"] == "missing":
        warn(
            f"{written['provider']!r} needs its API key in {' or '.join(row['key_variables'])}, "
            f"which is not set: put it in $HERMES_HOME/.env"
        )
