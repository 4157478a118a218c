"""Slash commands (``/name args`` in a session) and ``hermes name ...`` commands of plugins."""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable, Iterable
from typing import Any, Final

import attrs

from hermes_hooks.errors import RegistrationError
from hermes_hooks.registries.base import (
    HOST,
    FailureCounter,
    Handle,
    Registry,
    describe_owner,
    guard_handler,
)

__all__ = [
    "ARGUMENT_MODES",
    "BUILTIN_CLI_COMMANDS",
    "BUILTIN_SLASH_COMMANDS",
    "CliCommand",
    "CliCommandRegistry",
    "CommandRegistry",
    "SlashCommand",
    "normalize_command_name",
]

BUILTIN_SLASH_COMMANDS: Final = frozenset(
    {
        "help",
        "new",
        "reset",
        "clear",
        "exit",
        "quit",
        "model",
        "tools",
        "plugins",
        "skills",
        "reload-mcp",
    }
)
"""Slash commands the host keeps for itself; plugins cannot register these names."""

BUILTIN_CLI_COMMANDS: Final = frozenset(
    {
        "plugins",
        "hooks",
        "tools",
        "skills",
        "doctor",
        "chat",
        "gateway",
        "models",
        "version",
        "help",
        "config",
        "mcp",
        "claude-hook",
    }
)
"""``hermes`` sub-commands of the framework; plugins cannot register these names."""

_VALID_COMMAND: Final = re.compile(r"^[a-z0-9][a-z0-9._-]*$")


def normalize_command_name(name: str) -> str:
    """Return the stored form of a command name: lower case, no leading ``/``, ``-`` for spaces.

    The steps are Hermes' (``name.lower().strip().lstrip("/").replace(" ", "-")``); what is
    left must then be a valid name.

    :raises RegistrationError: nothing usable is left, or characters other than
        ``[a-z0-9._-]`` remain.
    """
    if not isinstance(name, str):
        raise RegistrationError(f"command name must be a string, found {type(name).__name__}")
    normal = name.lower().strip().lstrip("/").replace(" ", "-")
    if not _VALID_COMMAND.match(normal):
        raise RegistrationError(
            f"command name {name!r} is invalid: expected letters, digits, '.', '_' or '-' "
            f"(after lower-casing and stripping '/'), found {normal!r}"
        )
    return normal


ARGUMENT_MODES: Final = frozenset({"options", "text", "mixed"})
"""How chat platforms offer a command's arguments (Hermes' ``argument_mode``)."""


@attrs.frozen
class SlashCommand:
    """A ``/name`` command usable inside a session.

    :param handler: ``handler(raw_args: str) -> str | None``, sync or async.
    :param argument_mode: ``options``, ``text`` or ``mixed``; ``text`` when only ``args_hint``
        is given, else ``None``.
    """

    name: str
    handler: Callable[..., Any]
    description: str = ""
    args_hint: str = ""
    owner: str = HOST
    argument_mode: str | None = None


@attrs.frozen
class CliCommand:
    """A ``hermes name`` command whose arguments are declared on an argparse-style parser."""

    name: str
    help: str
    setup_fn: Callable[[argparse.ArgumentParser], Any]
    handler_fn: Callable[[argparse.Namespace], Any] | None = None
    description: str = ""
    owner: str = HOST

    def build_parser(self, prog: str | None = None) -> argparse.ArgumentParser:
        """Return a parser for ``hermes <name>`` with the plugin's arguments added.

        As in Hermes, ``setup_fn(parser)`` runs first, then ``handler_fn`` (when given) becomes
        ``parser.set_defaults(func=handler_fn)``, so a sub-parser's own ``func`` default wins
        for its sub-command.
        """
        parser = argparse.ArgumentParser(
            prog=prog or f"hermes {self.name}",
            description=self.description or self.help,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        self.setup_fn(parser)
        if self.handler_fn is not None:
            parser.set_defaults(func=self.handler_fn)
        return parser

    def run(self, argv: list[str]) -> Any:
        """Parse ``argv`` and call ``args.func(args)``; return what it returns.

        :raises SystemExit: from argparse, for ``--help`` (code 0) or bad arguments (code 2).
        :raises RegistrationError: neither ``handler_fn`` nor a sub-parser set ``func``.
        """
        namespace = self.build_parser().parse_args(argv)
        handler = getattr(namespace, "func", None)
        if not callable(handler):
            raise RegistrationError(
                f"CLI command {self.name!r} of {describe_owner(self.owner)} has no handler: "
                f"expected handler_fn or a sub-parser with set_defaults(func=...), found "
                f"func={handler!r} for arguments {argv!r}"
            )
        return handler(namespace)


class _NamedRegistry(Registry[Any]):
    def __init__(self, kind: str, reserved: Iterable[str]) -> None:
        super().__init__(kind, normalize=normalize_command_name)
        self.reserved = frozenset(reserved)

    def _check_reserved(self, key: str, owner: str) -> None:
        if owner != HOST and key in self.reserved:
            raise RegistrationError(
                f"{self.kind} {key!r} from plugin {owner!r} is refused: it conflicts with a "
                f"built-in {self.kind} of the host; pick another name"
            )


class CommandRegistry(_NamedRegistry):
    """Slash commands; the host's built-ins are refused to plugins."""

    def __init__(
        self,
        reserved: Iterable[str] = BUILTIN_SLASH_COMMANDS,
        *,
        count_failure: FailureCounter | None = None,
    ) -> None:
        super().__init__("slash command", reserved)
        #: Where a plugin's handler failures count (the manager's ``count_failure``).
        self.count_failure = count_failure

    def register_command(
        self,
        name: str,
        handler: Callable[..., Any],
        *,
        description: str = "",
        args_hint: str = "",
        argument_mode: str | None = None,
        owner: str = HOST,
    ) -> Handle:
        """Register ``/name`` for ``owner``; ``handler(raw_args: str)`` returns the reply text.

        :raises RegistrationError: the name is invalid, a built-in, or another plugin's; the
            handler is not callable.
        """
        if not callable(handler):
            raise RegistrationError(
                f"slash command {name!r} from {describe_owner(owner)}: handler must be "
                f"callable, found {type(handler).__name__}"
            )
        key = self.normalize(name)
        self._check_reserved(key, owner)
        if owner != HOST and self.count_failure is not None:
            handler = guard_handler(owner, f"command '/{key}'", handler, self.count_failure)
        hint = (args_hint or "").strip()
        mode = argument_mode if argument_mode in ARGUMENT_MODES else ("text" if hint else None)
        command = SlashCommand(
            name=key,
            handler=handler,
            description=description or "Plugin command",
            args_hint=hint,
            owner=owner,
            argument_mode=mode,
        )
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
        """Register ``hermes name`` for ``owner``.

        :raises RegistrationError: the name is invalid, a built-in, or another plugin's;
            ``setup_fn`` or ``handler_fn`` is not callable.
        """
        if not callable(setup_fn):
            raise RegistrationError(
                f"CLI command {name!r} from {describe_owner(owner)}: setup_fn must be callable, "
                f"found {type(setup_fn).__name__}"
            )
        if handler_fn is not None and not callable(handler_fn):
            raise RegistrationError(
                f"CLI command {name!r} from {describe_owner(owner)}: handler_fn must be "
                f"callable, found {type(handler_fn).__name__}"
            )
        key = self.normalize(name)
        self._check_reserved(key, owner)
        command = CliCommand(key, help, setup_fn, handler_fn, description, owner)
        return self.register(key, command, owner=owner)
