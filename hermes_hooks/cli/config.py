"""``hermes config``: show, read, change and check ``config.yaml``; ``hermes plugins config``.

Keys are dotted (``plugins.load_timeout``, ``plugins.entries.no-rm.limit``; ``\\.`` is a dot
inside one key). Values of the keys the framework reads are type-checked against the one
table of keys (:mod:`hermes_hooks.plugins.settings`); writes keep the file's comments and
order, and are atomic: a refused value leaves the file as it was.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click

from hermes_hooks.cli.common import echo_json, get_home
from hermes_hooks.cli.completion import complete_plugins

__all__ = ["config", "plugin_config", "split_key"]


def split_key(dotted: str) -> list[str]:
    """Split a dotted key; ``\\.`` is a dot inside one part (``models.gpt-4\\.1``)."""
    parts: list[str] = [""]
    index = 0
    while index < len(dotted):
        char = dotted[index]
        if char == "\\" and dotted[index + 1 : index + 2] == ".":
            parts[-1] += "."
            index += 2
            continue
        if char == ".":
            parts.append("")
        else:
            parts[-1] += char
        index += 1
    if any(not part for part in parts):
        raise click.BadParameter(f"{dotted!r} is not a dotted key (a.b.c)", param_hint="KEY")
    return parts


def _dotted(parts: list[str]) -> str:
    return ".".join(part.replace(".", "\\.") for part in parts)


def _lookup(config: Mapping[str, Any], parts: list[str]) -> tuple[bool, Any]:
    node: Any = config
    for part in parts:
        if not isinstance(node, Mapping) or part not in node:
            return False, None
        node = node[part]
    return True, node


def _render(value: Any) -> str:
    """Write a value for people: a scalar as text, a list or mapping as YAML."""
    import yaml

    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, str | int | float):
        return str(value)
    plain = _plain(value)
    text: str = yaml.safe_dump(plain, sort_keys=False, allow_unicode=True, default_flow_style=False)
    return text.rstrip("\n")


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _load(ctx: click.Context) -> tuple[Path, dict[str, Any]]:
    from hermes_hooks.plugins.configfile import config_path, load_config

    home = get_home(ctx)
    return config_path(home), load_config(home)


def _report(path: Path, config: Mapping[str, Any]) -> int:
    """Print the problems of *config* (errors and warnings); return how many are errors."""
    from hermes_hooks.plugins.settings import check_config

    problems = check_config(config, source=path)
    for problem in problems:
        label = "Error" if problem.level == "error" else "Warning"
        click.echo(f"{label}: {problem.message}", err=True)
    return sum(1 for p in problems if p.level == "error")


def _set_in(config: dict[str, Any], parts: list[str], value: Any) -> None:
    node: Any = config
    for depth, part in enumerate(parts[:-1]):
        child = node.get(part)
        if child is None:
            child = node[part] = {}
        elif not isinstance(child, dict):
            where = _dotted(parts[: depth + 1])
            raise click.ClickException(
                f"{where} is {_render(child)!r}, not a mapping: unset it first to give it keys"
            )
        node = child
    node[parts[-1]] = value


@click.group()
def config() -> None:
    """Show, read, change and check config.yaml.

    Keys are dotted: 'model.provider', 'plugins.load_timeout',
    'plugins.entries.no-rm.limit' ('\\.' is a dot inside a key). Values are read as YAML
    (20, true, [a, b]); the keys hermes-hooks reads are type-checked, and the file keeps its
    comments.

    \b
    Examples:
      hermes config show
      hermes config get model.provider
      hermes config set plugins.load_timeout 20
      hermes config unset model.name
      hermes config check
    """


@config.command("path")
@click.pass_context
def config_path_command(ctx: click.Context) -> None:
    """Print the path of config.yaml (it may not exist yet).

    \b
    Examples:
      hermes config path
      $EDITOR "$(hermes config path)"
    """
    from hermes_hooks.plugins.configfile import config_path

    click.echo(str(config_path(get_home(ctx))))


@config.command("show")
@click.option("--json", "as_json", is_flag=True, help="Print the configuration as JSON.")
@click.pass_context
def show(ctx: click.Context, as_json: bool) -> None:
    """Print the whole configuration.

    \b
    Examples:
      hermes config show
      hermes config show --json
    """
    path, loaded = _load(ctx)
    if as_json:
        echo_json(_plain(loaded))
        return
    if not loaded:
        click.echo(f"{path} sets nothing: every key has its default (hermes config check).")
        return
    click.echo(f"# {path}")
    click.echo(_render(loaded))


@config.command("get")
@click.argument("key")
@click.pass_context
def get(ctx: click.Context, key: str) -> None:
    """Print the value of KEY; a key hermes-hooks reads shows its default when unset.

    Exits 1 when KEY is neither set nor known.

    \b
    Examples:
      hermes config get model.provider
      hermes config get plugins.enabled
    """
    from hermes_hooks.plugins.settings import find_key

    parts = split_key(key)
    _, loaded = _load(ctx)
    found, value = _lookup(loaded, parts)
    if found:
        click.echo(_render(value))
        return
    known = find_key(".".join(parts))
    if known is not None and known.default is not None:
        click.echo(_render(known.default))
        return
    if known is not None:
        ctx.exit(0)  # known, unset and without a default: nothing to print
    click.echo(f"Error: {key} is not set", err=True)
    ctx.exit(1)


@config.command("set")
@click.argument("key")
@click.argument("value")
@click.pass_context
def set_command(ctx: click.Context, key: str, value: str) -> None:
    """Set KEY to VALUE (read as YAML) in config.yaml.

    A key hermes-hooks reads must get a value of its type ('plugins.load_timeout' a number
    of seconds); the file is then left as it was.

    \b
    Examples:
      hermes config set model.provider openrouter
      hermes config set plugins.load_timeout 20
      hermes config set plugins.enabled '[no-rm, tool-log]'
    """
    from hermes_hooks.errors import ConfigError
    from hermes_hooks.plugins.configfile import config_path, update_config
    from hermes_hooks.plugins.settings import check_config, parse_value

    parts = split_key(key)
    home = get_home(ctx)
    try:
        parsed = parse_value(".".join(parts), value)
    except ConfigError as exc:
        raise click.UsageError(str(exc), ctx) from None

    def mutate(document: dict[str, Any]) -> None:
        _set_in(document, parts, parsed)
        errors = [p for p in check_config(document, source=config_path(home)) if p.level == "error"]
        if errors:
            raise ConfigError(errors[0].message)

    update_config(home, mutate)
    click.echo(f"Set {key} = {_render(parsed)} in {config_path(home)}.")


@config.command("unset")
@click.argument("key")
@click.pass_context
def unset(ctx: click.Context, key: str) -> None:
    """Remove KEY from config.yaml (it goes back to its default). Exits 1 when not set.

    \b
    Examples:
      hermes config unset model.name
    """
    from hermes_hooks.plugins.configfile import config_path, update_config

    parts = split_key(key)
    home = get_home(ctx)
    removed: list[bool] = []

    def mutate(document: dict[str, Any]) -> None:
        found, parent = _lookup(document, parts[:-1])
        if found and isinstance(parent, dict) and parts[-1] in parent:
            del parent[parts[-1]]
            removed.append(True)

    update_config(home, mutate)
    if not removed:
        click.echo(f"Error: {key} is not set in {config_path(home)}", err=True)
        ctx.exit(1)
    click.echo(f"Unset {key} in {config_path(home)}.")


@config.command("edit")
@click.pass_context
def edit(ctx: click.Context) -> None:
    """Open config.yaml in $VISUAL or $EDITOR, then check it.

    \b
    Examples:
      hermes config edit
      EDITOR=nano hermes config edit
    """
    from hermes_hooks.plugins.configfile import config_path, load_config

    home = get_home(ctx)
    path = config_path(home)
    home.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        path.write_text("# Hermes configuration: hermes config check explains the keys.\n")
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    click.edit(filename=str(path), editor=editor)
    if _report(path, load_config(home)):
        ctx.exit(1)


@config.command("check")
@click.option("--json", "as_json", is_flag=True, help="Print the problems as JSON.")
@click.pass_context
def check(ctx: click.Context, as_json: bool) -> None:
    """Check config.yaml: types, unknown keys and likely typos ('modle' for 'model').

    Exits 1 when there is an error (a value of the wrong type, a file that does not parse);
    warnings alone exit 0.

    \b
    Examples:
      hermes config check
      hermes config check --json
    """
    from hermes_hooks.errors import ConfigError
    from hermes_hooks.plugins.configfile import config_path, load_config
    from hermes_hooks.plugins.settings import Problem, check_config

    home = get_home(ctx)
    path = config_path(home)
    try:
        problems = check_config(load_config(home), source=path)
    except ConfigError as exc:
        problems = [Problem("error", "", str(exc))]
    errors = sum(1 for p in problems if p.level == "error")
    if as_json:
        echo_json([{"level": p.level, "key": p.key, "message": p.message} for p in problems])
    else:
        for problem in problems:
            label = "Error" if problem.level == "error" else "Warning"
            click.echo(f"{label}: {problem.message}", err=True)
        if not problems:
            click.echo(f"{path}: no problems found.")
    if errors:
        ctx.exit(1)


@click.command("config")
@click.argument("name", shell_complete=complete_plugins)
@click.argument("key", required=False)
@click.argument("value", required=False)
@click.pass_context
def plugin_config(ctx: click.Context, name: str, key: str | None, value: str | None) -> None:
    """Show or change plugin NAME's settings (plugins.entries.NAME).

    With KEY, print that setting; with KEY and VALUE, set it (VALUE read as YAML).

    \b
    Examples:
      hermes plugins config no-rm
      hermes plugins config no-rm limit 5
    """
    prefix = ["plugins", "entries", name]
    if key is None:
        _, loaded = _load(ctx)
        found, entry = _lookup(loaded, prefix)
        if not found or not entry:
            click.echo(f"Plugin {name!r} has no settings in config.yaml.")
            return
        click.echo(_render(entry))
        return
    dotted = _dotted([*prefix, *split_key(key)])
    if value is None:
        ctx.invoke(get, key=dotted)
    else:
        ctx.invoke(set_command, key=dotted, value=value)
