"""Slash commands (``/name args`` in a session) and ``hermes name ...`` commands of plugins."""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable, Iterable
from typing import Any, Final

import attrs

from hermes_hooks.errors import RegistrationError
from hermes_hooks.registries import HOST, Handle, Registry

__all__ = [
    "BUILTIN_CLI_COMMANDS",
    "BUILTIN_SLASH_COMMANDS",
    "CliCommand",
    "CliCommandRegistry",
    "CommandRegistry",
    "SlashCommand",
    "normalize_command_name",
]

BUILTIN_SLASH_COMMANDS: Final = frozenset(
    {"help", "new", "reset", "clear", "exit", "quit", "model", "tools", "plugins", "skills"}
)
"""Slash commands the host keeps for itself; plugins cannot register these names."""

BUILTIN_CLI_COMMANDS: Final = frozenset(
    {"plugins", "hooks", "tools", "doctor", "chat", "gateway", "version", "help", "config"}
)
"""``hermes`` sub-commands of the framework; plugins cannot register these names."""

_VALID_COMMAND: Final = re.compile(r"^[a-z0-9][a-z0-9._-]*$")


def normalize_command_name(name: str) -> str:
    """Return the stored form of a command name: lower case, no leading ``/``, ``-`` for spaces.

    :raises RegistrationError: nothing usable is left, or characters other than
        ``[a-z0-9._-]`` remain.
    """
    normal = "-".join(name.strip().lstrip("/").lower().split())
    if not _VALID_COMMAND.match(normal):
        raise RegistrationError(
            f"command name {name!r} is invalid: expected letters, digits, '.', '_' or '-' "
            f"(after lower-casing and stripping '/'), found {normal!r}"
        )
    return normal


@attrs.frozen
class SlashCommand:
    """A ``/name`` command usable inside a session."""

    name: str
    handler: Callable[..., Any]
    description: str = ""
    args_hint: str = ""
    owner: str = HOST


@attrs.frozen
class CliCommand:
    """A ``hermes name`` command whose arguments are declared on an argparse-style parser."""

    name: str
    help: str
    setup_fn: Callable[[argparse.ArgumentParser], Any]
    handler_fn: Callable[[argparse.Namespace], Any] | None = None
    description: str = ""
    owner: str = HOST

    def build_parser(self) -> argparse.ArgumentParser:
        """Return a parser for ``hermes <name>`` with the plugin's arguments added."""
        parser = argparse.ArgumentParser(
            prog=f"hermes {self.name}", description=self.description or self.help
        )
        self.setup_fn(parser)
        return parser

    def run(self, argv: list[str]) -> Any:
        """Parse ``argv`` and call the handler (or the ``func`` a sub-parser set)."""
        namespace = self.build_parser().parse_args(argv)
        handler = self.handler_fn or getattr(namespace, "func", None)
        if handler is None:
            raise RegistrationError(
                f"CLI command {self.name!r} of plugin {self.owner!r} has no handler_fn and its "
                f"parser set no func default"
            )
        return handler(namespace)


class _NamedRegistry(Registry[Any]):
    def __init__(self, kind: str, reserved: Iterable[str]) -> None:
        super().__init__(kind, normalize=normalize_command_name)
        self.reserved = frozenset(reserved)

    def _check_reserved(self, key: str, owner: str) -> None:
        if owner != HOST and key in self.reserved:
            raise RegistrationError(
                f"{self.kind} {key!r} from plugin {owner!r} is refused: it is a built-in "
                f"{self.kind}"
            )


class CommandRegistry(_NamedRegistry):
    """Slash commands; the host's built-ins are refused to plugins."""

    def __init__(self, reserved: Iterable[str] = BUILTIN_SLASH_COMMANDS) -> None:
        super().__init__("slash command", reserved)

    def register_command(
        self,
        name: str,
        handler: Callable[..., Any],
        *,
        description: str = "",
        args_hint: str = "",
        owner: str = HOST,
    ) -> Handle:
        """Register ``/name`` for ``owner``; ``handler(args: str)`` returns the reply text."""
        if not callable(handler):
            raise RegistrationError(f"slash command {name!r}: handler must be callable")
        key = self.normalize(name)
        self._check_reserved(key, owner)
        command = SlashCommand(key, handler, description, args_hint, owner)
        return self.register(key, command, owner=owner)


class CliCommandRegistry(_NamedRegistry):
    """``hermes`` sub-commands from plugins; the framework's own are refused."""

    def __init__(self, reserved: Iterable[str] = BUILTIN_CLI_COMMANDS) -> None:
        super().__init__("CLI command", reserved)

    def register_cli_command(
        self,
        name: str,
        help: str,
        setup_fn: Callable[[argparse.ArgumentParser], Any],
        handler_fn: Callable[[argparse.Namespace], Any] | None = None,
        *,
        description: str = "",
        owner: str = HOST,
    ) -> Handle:
        """Register ``hermes name`` for ``owner``."""
        if not callable(setup_fn):
            raise RegistrationError(f"CLI command {name!r}: setup_fn must be callable")
        if handler_fn is not None and not callable(handler_fn):
            raise RegistrationError(f"CLI command {name!r}: handler_fn must be callable")
        key = self.normalize(name)
        self._check_reserved(key, owner)
        command = CliCommand(key, help, setup_fn, handler_fn, description, owner)
        return self.register(key, command, owner=owner)
