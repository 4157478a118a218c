"""``hermes claude-hook install``: the entries of Claude Code's settings file that call us.

The user's file is ``~/.claude/settings.json``; ``--project`` writes ``.claude/settings.json``
of the current folder. Every other key and every other hook the file has are kept; an event
that already runs our command is left as it is (installing twice changes nothing). The file is
replaced in one step (a temporary file, then a rename), so Claude Code never reads half of it.
"""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from hermes_hooks.bridges.claude_code import EVENTS
from hermes_hooks.errors import ConfigError

__all__ = ["TOOL_EVENTS", "hook_command", "install_hooks", "settings_path", "uninstall_hooks"]

TOOL_EVENTS: Final = frozenset({"PreToolUse", "PostToolUse"})
"""The events whose entries take a tool ``matcher`` (``*``: every tool)."""


def settings_path(project: bool, cwd: Path | None = None, home: Path | None = None) -> Path:
    """Return the settings file to write: the user's, or the project's with ``project``."""
    if project:
        return (cwd or Path.cwd()) / ".claude" / "settings.json"
    return (home or Path.home()) / ".claude" / "settings.json"


def hook_command(hermes_home: Path | None = None) -> str:
    """Return the command line Claude Code runs: this installation's ``hermes claude-hook``.

    The ``hermes`` script next to the running Python when there is one (a virtual
    environment's), else ``python -m hermes_hooks``; ``--home`` when a home was chosen.
    """
    script = Path(sys.executable).with_name("hermes")
    argv = [str(script)] if script.is_file() else [sys.executable, "-m", "hermes_hooks"]
    if hermes_home is not None:
        argv += ["--home", str(hermes_home)]
    return shlex.join([*argv, "claude-hook"])


def _read(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read it: {exc.strerror or exc}") from exc
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"{path}: not valid JSON ({exc}); fix it or move it away") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a JSON object, found {type(data).__name__}")
    return data


def _runs(entry: object, command: str) -> bool:
    if not isinstance(entry, Mapping):
        return False
    hooks = entry.get("hooks")
    return isinstance(hooks, list) and any(
        isinstance(hook, Mapping) and hook.get("command") == command for hook in hooks
    )


def install_hooks(path: Path, command: str) -> list[str]:
    """Add an entry running ``command`` to every event of :data:`EVENTS` in ``path``.

    :returns: the events that got one now (the others ran it already).
    :raises ConfigError: the file is not a JSON object, or its ``hooks`` is not one.
    """
    from hermes_hooks.compat.utils import atomic_json_write

    settings = _read(path)
    hooks = settings.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise ConfigError(f"{path}: 'hooks' must be a JSON object, found {type(hooks).__name__}")
    added = []
    for event in EVENTS:
        entries = hooks.setdefault(event, [])
        if not isinstance(entries, list):
            raise ConfigError(
                f"{path}: hooks.{event} must be a list, found {type(entries).__name__}"
            )
        if any(_runs(entry, command) for entry in entries):
            continue
        entry: dict[str, Any] = {"hooks": [{"type": "command", "command": command}]}
        if event in TOOL_EVENTS:
            entry = {"matcher": "*", **entry}
        entries.append(entry)
        added.append(event)
    if added:
        atomic_json_write(path, settings, indent=2)
    return added


def _is_ours(command: object) -> bool:
    return (
        isinstance(command, str)
        and command.split()[-1:] == ["claude-hook"]
        and ("hermes" in command)
    )


def uninstall_hooks(path: Path) -> list[str]:
    """Remove every ``hermes ... claude-hook`` command from ``path``'s hooks.

    An entry left with no command is removed, then an event left with no entry; the rest of
    the file stays as it was.

    :returns: the events that ran it.
    :raises ConfigError: the file is not a JSON object, or its ``hooks`` is not one.
    """
    from hermes_hooks.compat.utils import atomic_json_write

    settings = _read(path)
    hooks = settings.get("hooks")
    if hooks is None:
        return []
    if not isinstance(hooks, dict):
        raise ConfigError(f"{path}: 'hooks' must be a JSON object, found {type(hooks).__name__}")
    removed = []
    for event in list(hooks):
        entries = hooks[event]
        if not isinstance(entries, list):
            continue
        kept_entries = []
        for entry in entries:
            commands = entry.get("hooks") if isinstance(entry, Mapping) else None
            if not isinstance(commands, list):
                kept_entries.append(entry)
                continue
            kept = [
                hook
                for hook in commands
                if not (isinstance(hook, Mapping) and _is_ours(hook.get("command")))
            ]
            if len(kept) != len(commands) and event not in removed:
                removed.append(event)
            if kept:
                kept_entries.append({**entry, "hooks": kept})
        if kept_entries:
            hooks[event] = kept_entries
        else:
            del hooks[event]
    if removed:
        if not hooks:
            del settings["hooks"]
        atomic_json_write(path, settings, indent=2)
    return removed
