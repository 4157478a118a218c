"""Enabling a plugin from the command line: the config change and the tool-override question.

Shared by ``hermes plugins enable`` and ``hermes plugins install --enable``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from hermes_hooks.cli.common import confirm, get_home, is_terminal, warn

if TYPE_CHECKING:
    from hermes_hooks.plugins.discovery import Candidate

__all__ = ["enable_candidate"]


def _load_timeout(home: Path) -> float | None:
    """The operator's ``plugins.load_timeout``, or ``None`` (the default) when unreadable."""
    from hermes_hooks.errors import ConfigError
    from hermes_hooks.plugins.config import PluginsConfig

    try:
        return PluginsConfig.from_home(home).load_timeout
    except ConfigError:
        return None


def _grant_tool_override(home: Path, candidate: Candidate, answer: bool | None) -> None:
    """Ask (once) whether a non-bundled plugin may replace host tools, and record the answer."""
    from hermes_hooks.admin.actions import (
        get_tool_override_grant,
        probe_tool_overrides,
        set_tool_override,
    )

    key = candidate.key
    if answer is None:
        if candidate.source == "bundled" or candidate.error is not None:
            return  # bundled plugins are trusted; a broken one registers nothing
        if get_tool_override_grant(home, key) is not None:
            return  # asked before: the recorded answer stands (flags change it)
        probe = probe_tool_overrides(candidate, load_timeout=_load_timeout(home))
        if probe.error is not None:
            warn(f"could not load {key!r} to check whether it replaces host tools: {probe.error}")
            return
        if not probe.tools:
            return
        click.echo(f"Plugin {key!r} asks to replace host tools: {', '.join(probe.tools)}.")
        if not is_terminal():
            click.echo(
                f"Not allowed: no terminal to ask. Run 'hermes plugins enable {key} "
                f"--allow-tool-override' to allow it."
            )
            return
        answer = confirm("Allow it to replace host tools? It sees every call to them")
    set_tool_override(home, key, answer)
    if answer:
        click.echo(f"Allowed {key!r} to replace host tools (plugins.entries.{key}).")
    else:
        click.echo(
            f"{key!r} may not replace host tools; 'hermes plugins enable {key} "
            f"--allow-tool-override' allows it later."
        )


def enable_candidate(ctx: click.Context, candidate: Candidate, allow: bool | None) -> None:
    """Enable *candidate* in config and settle its tool-override grant; say what happened."""
    from hermes_hooks.admin.actions import set_enabled

    home = get_home(ctx)
    key = candidate.key
    if set_enabled(home, candidate, True):
        click.echo(f"Plugin {key!r} enabled.")
    else:
        click.echo(f"Plugin {key!r} is already enabled.")
    if candidate.error is not None:
        warn(f"{key!r} cannot load as it is: {candidate.error}")
    _grant_tool_override(home, candidate, allow)
