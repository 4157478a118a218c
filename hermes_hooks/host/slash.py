"""Slash commands in a session: the host's own (``/help``, ``/new``...) and the plugins'."""

from __future__ import annotations

import difflib
import logging
from typing import TYPE_CHECKING, Final

from hermes_hooks.calling import aio
from hermes_hooks.calling.tracebacks import trimmed
from hermes_hooks.host.records import CommandReply
from hermes_hooks.spec.hookspecs import TELEMETRY_SCHEMA_VERSION

if TYPE_CHECKING:
    from hermes_hooks.host.session import Session

__all__ = ["HOST_COMMANDS", "run_slash_command"]

logger = logging.getLogger(__name__)

HOST_COMMANDS: Final[dict[str, str]] = {
    "help": "list the commands",
    "new": "start a fresh conversation (also /reset, /clear)",
    "tools": "list the tools offered to the model",
    "plugins": "list the loaded plugins",
    "skills": "list the skills the agent can load (skill_view)",
    "model": "show the model in use",
    "exit": "end the session (also /quit)",
}
_RESET: Final = frozenset({"new", "reset", "clear"})
_EXIT: Final = frozenset({"exit", "quit"})
_ALIASES: Final = {"reset": "new", "clear": "new", "quit": "exit"}


def _help(session: Session) -> str:
    lines = [f"/{name:<10} {text}" for name, text in HOST_COMMANDS.items()]
    for entry in session.pm.commands.entries():
        command = entry.value
        hint = f" {command.args_hint}" if command.args_hint else ""
        lines.append(f"/{entry.name}{hint:<{max(10 - len(entry.name), 1)}} {command.description}")
    return "\n".join(lines)


def run_slash_command(session: Session, text: str) -> CommandReply:
    """Run ``/name args`` and return its reply; a failing plugin command is reported, not raised."""
    name, _, raw_args = text[1:].strip().partition(" ")
    name = name.lower()
    raw_args = raw_args.strip()
    canonical = _ALIASES.get(name, name)
    if canonical in HOST_COMMANDS or session.pm.commands.get(name) is not None:
        session.hooks.pre_command(
            telemetry_schema_version=TELEMETRY_SCHEMA_VERSION,
            surface=session.surface,
            command=canonical,
            alias_used=name if canonical != name else None,
            args_raw=raw_args,
            session_key=session.session_id,
            platform=session.platform,
        )
    if name in _EXIT:
        return CommandReply(name, "Bye.", exit=True)
    if name in _RESET:
        new_id = session.reset(reason=f"/{name}")
        return CommandReply(name, f"New conversation: {new_id}")
    if name == "help":
        return CommandReply(name, _help(session))
    if name == "tools":
        names = [d["function"]["name"] for d in session.tool_definitions()]
        return CommandReply(name, "Tools: " + (", ".join(names) if names else "(none)"))
    if name == "plugins":
        loaded = [info.key for info in session.pm.list_plugins() if info.status == "enabled"]
        return CommandReply(name, "Plugins: " + (", ".join(loaded) if loaded else "(none)"))
    if name == "skills":
        from hermes_hooks.host.skills import list_skills

        skills = list_skills(session.pm)
        if not skills:
            return CommandReply(name, "Skills: (none)")
        width = max(len(s.name) for s in skills)
        lines = [f"{s.name:<{width}}  {s.description}".rstrip() for s in skills]
        return CommandReply(name, "Skills:\n" + "\n".join(lines))
    if name == "model":
        return CommandReply(name, f"Model: {session.model.describe()}")
    command = session.pm.commands.get(name)
    if command is None:
        known = [*HOST_COMMANDS, *session.pm.commands.names()]
        close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join('/' + c for c in close)}?" if close else ""
        return CommandReply(name, f"Unknown command /{name}{hint} (/help lists them)")
    try:
        reply = aio.resolve(command.handler(raw_args))
    except Exception as exc:
        logger.warning(
            "slash command /%s of plugin %r failed", name, command.owner, exc_info=trimmed(exc)
        )
        return CommandReply(name, f"/{name} failed: {type(exc).__name__}: {exc}")
    return CommandReply(name, "" if reply is None else str(reply))
