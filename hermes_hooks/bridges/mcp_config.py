"""``mcp_servers:`` in ``config.yaml``, read as Hermes reads it, and Hermes's MCP tool names.

Each entry is one server, by name::

    mcp_servers:
      files:                      # stdio: a command the client starts
        command: npx
        args: ["-y", "@modelcontextprotocol/server-filesystem", "/srv"]
        env: {LOG_LEVEL: warn}
        timeout: 120              # seconds a tool call may take (Hermes's default)
        connect_timeout: 60       # seconds to start and initialise (Hermes's default)
        tools: {include: [read_file], exclude: []}
      search:                     # streamable HTTP
        url: https://mcp.example.com/mcp
        headers: {Authorization: "Bearer ..."}
        enabled: false            # kept in the file, not connected

A tool ``read-file`` of server ``files`` becomes ``mcp_files_read_file``: both parts keep
``[A-Za-z0-9_]`` and every other character becomes ``_``, as Hermes's
``sanitize_mcp_name_component`` does. Its owner in ``pm.tools`` is ``config:mcp:files``.

``${NAME}`` in ``command``, ``args``, ``env``, ``url`` and ``headers`` is the environment
variable ``NAME`` (so a token can stay in ``$HERMES_HOME/.env``).

A bad entry is reported naming ``config.yaml``, the field, what was expected and what was found;
that server is left out and the others are read.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Mapping
from typing import Any, Final, Literal

import attrs

__all__ = [
    "DEFAULT_CONNECT_TIMEOUT",
    "DEFAULT_TOOL_TIMEOUT",
    "OWNER_PREFIX",
    "ServerConfig",
    "mcp_tool_name",
    "owner_of",
    "read_servers",
    "sanitize",
    "server_of_owner",
]

DEFAULT_TOOL_TIMEOUT: Final = 120.0
"""Seconds an MCP tool call may take (Hermes's ``timeout`` default)."""
DEFAULT_CONNECT_TIMEOUT: Final = 60.0
"""Seconds to start a server and initialise its session (Hermes's ``connect_timeout``)."""
DEFAULT_KEEPALIVE: Final = 30.0
"""Seconds between the pings that find a server gone while nobody calls it."""
OWNER_PREFIX: Final = "config:mcp:"

_UNSAFE: Final = re.compile(r"[^A-Za-z0-9_]")
_VARIABLE: Final = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def expand(value: str, environ: Mapping[str, str] | None = None) -> str:
    """Replace each ``${NAME}`` with the environment variable (``$HERMES_HOME/.env`` is
    applied first by the commands); an unset one is left as written."""
    env = os.environ if environ is None else environ
    return _VARIABLE.sub(lambda match: env.get(match.group(1), match.group(0)), value)


def sanitize(value: object) -> str:
    """Return a name part a model API accepts: ``[A-Za-z0-9_]`` kept, anything else ``_``."""
    return _UNSAFE.sub("_", str(value or ""))


def mcp_tool_name(server: str, tool: str) -> str:
    """Return Hermes's name for ``tool`` of ``server``: ``mcp_<server>_<tool>``, sanitised."""
    return f"mcp_{sanitize(server)}_{sanitize(tool)}"


def owner_of(server: str) -> str:
    """Return the owner recorded in ``pm.tools`` for the tools of ``server``."""
    return f"{OWNER_PREFIX}{server}"


def server_of_owner(owner: str) -> str | None:
    """Return the server an owner such as ``config:mcp:files`` stands for, or ``None``."""
    return owner[len(OWNER_PREFIX) :] if owner.startswith(OWNER_PREFIX) else None


@attrs.frozen
class ServerConfig:
    """One ``mcp_servers.<name>`` entry."""

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = attrs.field(factory=dict)
    url: str | None = None
    headers: Mapping[str, str] = attrs.field(factory=dict)
    timeout: float = DEFAULT_TOOL_TIMEOUT
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    keepalive_interval: float = DEFAULT_KEEPALIVE
    enabled: bool = True
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    @property
    def transport(self) -> Literal["stdio", "http"]:
        """``stdio`` for a ``command``, ``http`` (streamable HTTP) for a ``url``."""
        return "stdio" if self.command else "http"

    @property
    def owner(self) -> str:
        """The owner of this server's tools in ``pm.tools``."""
        return owner_of(self.name)

    def offers(self, tool: str) -> bool:
        """Whether ``tools.include`` / ``tools.exclude`` let ``tool`` through (include wins)."""
        if self.include:
            return tool in self.include
        return tool not in self.exclude

    def describe(self) -> str:
        """Return the command line or the URL, for listings."""
        if self.command:
            return shlex.join([self.command, *self.args])
        return self.url or ""


class _Bad(ValueError):
    pass


def _where(name: str, field: str) -> str:
    return f"config.yaml: mcp_servers.{name}.{field}"


def _string_map(name: str, field: str, value: object) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise _Bad(
            f"{_where(name, field)} must be a mapping of names to strings, "
            f"found {type(value).__name__}"
        )
    return {str(key): "" if item is None else expand(str(item)) for key, item in value.items()}


def _args(name: str, value: object) -> tuple[str, ...]:
    # Hermes accepts a list, or a string: a JSON list, or a shell line.
    if value is None:
        return ()
    if isinstance(value, list | tuple):
        return tuple(str(item) for item in value)
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                parsed = json.loads(text)
            except ValueError as exc:
                raise _Bad(
                    f"{_where(name, 'args')} looks like a JSON list but is not one: {exc}"
                ) from exc
            if not isinstance(parsed, list):
                raise _Bad(f"{_where(name, 'args')} must be a list, found {text!r}")
            return tuple(str(item) for item in parsed)
        try:
            return tuple(shlex.split(text))
        except ValueError as exc:
            raise _Bad(f"{_where(name, 'args')} has bad shell quoting: {exc}") from exc
    return (str(value),)


def _seconds(name: str, field: str, value: object, default: float, low: float) -> float:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise _Bad(
            f"{_where(name, field)} must be a number of seconds, found {type(value).__name__}"
        )
    try:
        number = float(value)
    except ValueError as exc:
        raise _Bad(f"{_where(name, field)} must be a number of seconds, found {value!r}") from exc
    if number <= 0:
        raise _Bad(f"{_where(name, field)} must be more than 0 seconds, found {value!r}")
    return max(low, number)


def _names(name: str, field: str, value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, list | tuple):
        raise _Bad(
            f"{_where(name, field)} must be a list of tool names, found {type(value).__name__}"
        )
    return tuple(str(item) for item in value)


def _enabled(name: str, value: object) -> bool:
    if value is None:
        return True
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "yes", "no"):
        return value.strip().lower() in ("true", "yes")
    raise _Bad(f"{_where(name, 'enabled')} must be true or false, found {value!r}")


def _server(name: str, entry: object) -> ServerConfig:
    if not isinstance(entry, Mapping):
        raise _Bad(
            f"config.yaml: mcp_servers.{name} must be a mapping (command or url), "
            f"found {type(entry).__name__}"
        )
    command, url = entry.get("command"), entry.get("url")
    if command is not None and (not isinstance(command, str) or not command.strip()):
        raise _Bad(f"{_where(name, 'command')} must be a command name, found {command!r}")
    if url is not None and (not isinstance(url, str) or not url.strip()):
        raise _Bad(f"{_where(name, 'url')} must be a URL, found {url!r}")
    if not command and not url:
        raise _Bad(
            f"config.yaml: mcp_servers.{name} needs a 'command' (stdio) or a 'url' "
            f"(streamable HTTP), found neither"
        )
    if command and url:
        raise _Bad(
            f"config.yaml: mcp_servers.{name} has both 'command' and 'url'; "
            f"keep the one that matches the server"
        )
    if isinstance(url, str) and not url.startswith(("http://", "https://")):
        raise _Bad(f"{_where(name, 'url')} must start with http:// or https://, found {url!r}")
    tools = entry.get("tools")
    if tools is not None and not isinstance(tools, Mapping):
        raise _Bad(
            f"{_where(name, 'tools')} must be a mapping (include, exclude), "
            f"found {type(tools).__name__}"
        )
    tools = tools or {}
    return ServerConfig(
        name=name,
        command=expand(command.strip()) if isinstance(command, str) else None,
        args=tuple(expand(arg) for arg in _args(name, entry.get("args"))),
        env=_string_map(name, "env", entry.get("env")),
        url=expand(url.strip()) if isinstance(url, str) else None,
        headers=_string_map(name, "headers", entry.get("headers")),
        timeout=_seconds(name, "timeout", entry.get("timeout"), DEFAULT_TOOL_TIMEOUT, 0.1),
        connect_timeout=_seconds(
            name, "connect_timeout", entry.get("connect_timeout"), DEFAULT_CONNECT_TIMEOUT, 0.1
        ),
        keepalive_interval=_seconds(
            name, "keepalive_interval", entry.get("keepalive_interval"), DEFAULT_KEEPALIVE, 0.1
        ),
        enabled=_enabled(name, entry.get("enabled")),
        include=_names(name, "tools.include", tools.get("include")),
        exclude=_names(name, "tools.exclude", tools.get("exclude")),
    )


def read_servers(config: Mapping[str, Any]) -> tuple[list[ServerConfig], list[str]]:
    """Return the servers of ``config["mcp_servers"]`` (enabled or not) and the problems found.

    A server whose entry is wrong is left out, its problem said once in the list.
    """
    section = config.get("mcp_servers")
    if section is None:
        return [], []
    if not isinstance(section, Mapping):
        found = type(section).__name__
        return [], [f"config.yaml: mcp_servers must be a mapping of server names, found {found}"]
    servers: list[ServerConfig] = []
    problems: list[str] = []
    for name, entry in section.items():
        try:
            servers.append(_server(str(name), entry))
        except _Bad as exc:
            problems.append(str(exc))
    return servers, problems
