"""``hermes plugins install`` and ``remove``; :mod:`hermes_hooks.admin.install` does the work."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

import click

from hermes_hooks.admin import install as installer
from hermes_hooks.cli.common import build_manager, get_home, is_terminal, progress, warn
from hermes_hooks.cli.completion import complete_plugins
from hermes_hooks.cli.enabling import consent_to_pip, enable_candidate
from hermes_hooks.errors import InstallError

__all__ = ["install", "remove"]


def _install_pip(
    ctx: click.Context, requirement: str, enable: bool, force: bool, yes: bool
) -> None:
    agreed, why = consent_to_pip(repr(requirement), yes)
    if not agreed:
        raise InstallError(f"Not installing {requirement!r} with pip: {why}")
    click.echo(f"Installing {requirement!r} with pip ...")
    with progress(f"pip install {requirement}…"):
        installer.run_pip([requirement], force=force)
    found = installer.find_pip_plugins(requirement)
    if not found:
        raise InstallError(
            f"{requirement!r} is installed, but it declares no entry point in the group "
            f"'hermes_agent.plugins', so it is not a Hermes plugin"
        )
    for candidate in found:
        click.echo(f"Installed plugin {candidate.key!r} from {candidate.distribution}.")
        if enable:
            enable_candidate(ctx, candidate, None, offer_pip=False)  # asked above
        else:
            click.echo(f"Enable it with: hermes plugins enable {candidate.key}")


def _prompt_env(home: Path, staged: installer.StagedPlugin) -> None:
    from hermes_hooks.admin.envfile import env_file_path, set_env_value

    missing = installer.missing_env(staged.manifest, home)
    if not missing:
        return
    names = ", ".join(env.name for env in missing)
    if not is_terminal():
        click.echo(f"{staged.name!r} needs {names}: set it in the environment or in "
                   f"{env_file_path(home)}.")  # fmt: skip
        return
    click.echo(f"{staged.name!r} needs these environment variables (empty to skip):")
    for env in missing:
        if env.description:
            click.echo(f"  {env.name}: {env.description}")
        if env.url:
            click.echo(f"  get one at {env.url}")
        # Hidden as typed, whatever the manifest says: a key on screen is a key leaked
        # (in a screen share, in the scrollback), as pip and gh ask for tokens.
        value = click.prompt(
            env.prompt or f"  {env.name}",
            default="",
            show_default=False,
            hide_input=True,
        ).strip()
        if value:
            click.echo(f"  saved to {set_env_value(home, env.name, value)}")
            os.environ[env.name] = value  # set for the rest of this command (the trial load)


@click.command("install")
@click.argument("source")
@click.option("--enable", is_flag=True, help="Enable the plugin once it is installed.")
@click.option("--force", is_flag=True, help="Replace an installed plugin of the same name.")
@click.option("--yes", "-y", is_flag=True, help="Agree to install pip dependencies with pip.")
@click.option(
    "--link",
    is_flag=True,
    help="Link the folder instead of copying it (a plugin under development: edits show).",
)
@click.pass_context
def install(
    ctx: click.Context, source: str, enable: bool, force: bool, yes: bool, link: bool
) -> None:
    """Install a plugin from SOURCE into $HERMES_HOME/plugins/<name>/.

    \b
    SOURCE is one of:
      PATH               a plugin folder, copied as it is
      URL[#SUBDIR]       a git repository (https://, ssh://, file://, git@host:...)
      PATH#SUBDIR        a local git repository (PATH# for its root)
      pip:NAME           a package with a 'hermes_agent.plugins' entry point

    A project root that holds the plugin in a subfolder is searched (the plugin is found, or
    the exact PATH or URL#SUBDIR of each is named). The folder is named after the manifest's
    name and copied atomically (--link: linked, for a plugin you are writing); names and
    symlinks that lead outside the plugins folder are refused. pip_dependencies, and pip:
    sources, are installed only when you agree (--yes, or a question on a terminal; no
    terminal means no).
    Missing requires_env values are asked for on a terminal and saved in $HERMES_HOME/.env.

    \b
    Examples:
      hermes plugins install ./no-rm --enable
      hermes plugins install --link ./my-plugin
      hermes plugins install https://github.com/me/hermes-plugins.git#no-rm
      hermes plugins install pip:hermes-no-rm --yes
    """
    home = get_home(ctx)
    parsed = installer.parse_source(source)
    if parsed.kind == "pip":
        _install_pip(ctx, parsed.location, enable, force, yes)
        return
    if parsed.kind == "git":
        where = f" (subdir {parsed.subdir})" if parsed.subdir else ""
        click.echo(f"Cloning {parsed.location}{where} ...")
    plugins_dir = home / "plugins"
    if link and parsed.kind != "folder":
        raise click.UsageError("--link takes a plugin folder on this machine, not a repository")
    with contextlib.ExitStack() as stack:
        with progress(f"fetching {source}…"):
            staged = stack.enter_context(installer.stage(parsed, work_dir=plugins_dir))
        installer.plugin_target(plugins_dir, staged.name)  # refuse a bad name before asking
        deps = installer.missing_pip_dependencies(staged.manifest)
        agreed, why = False, ""
        if deps:
            click.echo(f"{staged.name!r} needs pip packages: {', '.join(deps)}.")
            agreed, why = consent_to_pip("them", yes)
        replaced = _replaced(ctx, staged.name, force)
        if link:
            target = installer.link(staged.folder, plugins_dir, staged.name, force=force)
        else:
            target = installer.publish(staged, plugins_dir, force=force)
            origin = source if parsed.kind == "git" else str(staged.folder)
            installer.write_origin(plugins_dir, staged.name, origin)
    if link:
        click.echo(f"Linked plugin {staged.name!r}: {target} -> {staged.folder}.")
    else:
        click.echo(f"Installed plugin {staged.name!r} in {target}.")
    if replaced:
        _forget_enabled(home, staged.name)
        click.echo(
            f"It replaces the {replaced}; it is not enabled because that one was: review it, "
            f"then 'hermes plugins enable {staged.name}'."
        )
        if enable:
            click.echo("Not enabling it (--enable does not apply to a replacement).")
        return
    if deps and agreed:
        with progress(f"pip install {' '.join(deps)}…"):
            installer.run_pip(deps)
        click.echo(f"Installed its pip dependencies: {', '.join(deps)}.")
    elif deps:
        click.echo(f"Not installing its pip dependencies ({why}).")
    _prompt_env(home, staged)
    if not enable:
        click.echo(f"Enable it with: hermes plugins enable {staged.name}")
        return
    if deps and not agreed:
        raise InstallError(
            f"{staged.name!r} is installed but not enabled: its pip dependencies "
            f"{', '.join(deps)} are missing; run again with --force --yes to install them"
        )
    from hermes_hooks.admin.actions import resolve_plugin

    candidate = resolve_plugin(installer.user_candidates(home), target.name)
    enable_candidate(ctx, candidate, None, offer_pip=False)  # asked above


def _replaced(ctx: click.Context, name: str, force: bool) -> str | None:
    """What an install of *name* would replace that the operator relies on: a bundled plugin,
    or one listed in ``plugins.enabled``; ``None`` for nothing (or a plain reinstall).

    :raises InstallError: it would, and *force* was not given.
    """
    pm = build_manager(ctx, load=False)
    enabled = pm.reload_config().is_enabled(name)
    bundled = [c for c in pm.discover() if c.key == name and c.source == "bundled"]
    if not bundled and not enabled:
        return None
    what = (
        f"bundled{', enabled' if enabled else ''} plugin {name!r}"
        if bundled
        else f"enabled plugin {name!r}"
    )
    if not bundled and not force:
        return None  # reinstalling an enabled user plugin: publish asks for --force itself
    if not force:
        raise InstallError(
            f"a plugin named {name!r} is already the {what}; installing over it needs --force "
            f"(the copy installed would replace it, and would not be enabled)"
        )
    return what


def _forget_enabled(home: Path, name: str) -> None:
    """Take *name* out of ``plugins.enabled``: a replacement is not enabled by inheritance."""
    from hermes_hooks.plugins.config import update_config

    def drop(config: dict[str, Any]) -> None:
        plugins = config.get("plugins")
        enabled = plugins.get("enabled") if isinstance(plugins, dict) else None
        if isinstance(enabled, list) and name in enabled:
            enabled.remove(name)

    update_config(home, drop)


@click.command("remove")
@click.argument("name", shell_complete=complete_plugins)
@click.pass_context
def remove(ctx: click.Context, name: str) -> None:
    """Remove plugin NAME: delete its folder in $HERMES_HOME/plugins, and nothing else.

    Its settings in config.yaml are kept, so installing it again restores them. A plugin
    folder that is a symlink is unlinked; the folder it points to is left alone.

    \b
    Example:
      hermes plugins remove no-rm
    """
    from hermes_hooks.admin.actions import resolve_plugin
    from hermes_hooks.errors import PluginNotFoundError

    home = get_home(ctx)
    try:
        candidate = resolve_plugin(installer.user_candidates(home), name)
    except PluginNotFoundError:
        # Not a user plugin: say what it is instead (bundled, pip, project), or that it is unknown.
        candidate = resolve_plugin(build_manager(ctx, load=False).discover(), name)
    path = installer.remove_plugin(home / "plugins", candidate)
    click.echo(f"Removed plugin {candidate.key!r} ({path}).")
    from hermes_hooks.errors import ConfigError
    from hermes_hooks.plugins.config import PluginsConfig

    try:
        listed = {candidate.key, candidate.name} & PluginsConfig.from_home(home).enabled
    except ConfigError:
        return  # the removal is done; the config's own problem is reported where it is read
    if listed:
        warn(f"{candidate.key!r} is still listed in plugins.enabled in {home / 'config.yaml'}")


@click.command("update")
@click.argument("name", shell_complete=complete_plugins)
@click.option("--yes", "-y", is_flag=True, help="Agree to run pip (a pip-installed plugin).")
@click.pass_context
def update(ctx: click.Context, name: str, yes: bool) -> None:
    """Update plugin NAME from where it was installed: its git repository or folder again,
    or pip (--upgrade) for a pip-installed plugin. A linked plugin is always current.

    \b
    Examples:
      hermes plugins update no-rm
      hermes plugins update langfuse --yes
    """
    from hermes_hooks.admin.actions import resolve_plugin

    home = get_home(ctx)
    candidate = resolve_plugin(build_manager(ctx, load=False).discover(), name)
    if candidate.source == "entrypoint" and candidate.distribution:
        agreed, why = consent_to_pip(candidate.distribution, yes)
        if not agreed:
            raise InstallError(f"not updating {candidate.key!r}: {why}")
        _pip_upgrade(candidate.distribution)
        click.echo(f"Updated {candidate.key!r} ({candidate.distribution}) with pip.")
        return
    if candidate.source != "user" or candidate.path is None:
        raise InstallError(
            f"{candidate.key!r} is a {candidate.source} plugin; only installed plugins update"
        )
    if candidate.path.is_symlink():
        click.echo(f"{candidate.key!r} is linked to {candidate.path.resolve()}: always current.")
        return
    origin = installer.read_origin(home / "plugins", candidate.path.name)
    if origin is None:
        raise InstallError(
            f"{candidate.key!r} has no record of where it came from (installed by hand or by "
            f"an older version): install it again with 'hermes plugins install SOURCE --force'"
        )
    parsed = installer.parse_source(origin)
    with installer.stage(parsed, work_dir=home / "plugins") as staged:
        installer.publish(staged, home / "plugins", force=True)
        installer.write_origin(home / "plugins", staged.name, origin)
    version = staged.manifest.version or "?"
    click.echo(f"Updated plugin {staged.name!r} to {version} from {origin}.")


def _pip_upgrade(distribution: str) -> None:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--disable-pip-version-check", "--upgrade",
         "--", distribution],
        capture_output=True, text=True, timeout=installer.PIP_TIMEOUT, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise InstallError(f"pip install --upgrade {distribution} failed: {done.stderr.strip()}")


@click.command("search")
@click.argument("term")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of the plugins found.")
@click.pass_context
def search(ctx: click.Context, term: str, as_json: bool) -> None:
    """Search the bundled and installed plugins for TERM (key, description, tags, hooks).

    \b
    Examples:
      hermes plugins search memory
      hermes plugins search pre_tool_call --json
    """
    from hermes_hooks.cli.common import echo_json, fit_table, terminal_width

    wanted = term.lower()
    found = []
    for candidate in build_manager(ctx, load=False).discover():
        manifest = candidate.manifest
        words = [candidate.key, candidate.source]
        if manifest is not None:
            words += [manifest.description or "", *manifest.tags, *manifest.provides_hooks]
        if any(wanted in word.lower() for word in words):
            found.append(candidate)
    rows = [[c.key, c.source, (c.manifest.description or "") if c.manifest else ""] for c in found]
    if as_json:
        echo_json([dict(zip(("key", "source", "description"), row, strict=True)) for row in rows])
        return
    if not rows:
        click.echo(f"No plugin matches {term!r} (bundled and installed are searched).")
        return
    for line in fit_table(["KEY", "SOURCE", "DESCRIPTION"], rows, terminal_width()):
        click.echo(line)
