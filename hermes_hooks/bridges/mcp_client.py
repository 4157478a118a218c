"""The MCP client: the servers of ``mcp_servers:`` become tools of ``pm.tools``.

:func:`install_mcp` reads the section (:mod:`~hermes_hooks.bridges.mcp_config`), starts one
background thread with one event loop that owns every session (each server is one task there,
so the SDK's transports enter and leave in one task), waits for the first connections (each
bounded by its ``connect_timeout``) and registers every tool a server lists as
``mcp_<server>_<tool>``, owned by ``config:mcp:<server>``. Those are ordinary tools:
``pre_tool_call``, approvals, ``post_tool_call``, ``transform_tool_result``, the result bounds
and the tool gate apply to each MCP call as to any other.

- A server that dies (its process killed, its connection lost) is found by the failed call or
  by the next keepalive ping; its tools then say they are unavailable (their ``check_fn`` is
  false, the reason is shown) while the client reconnects with exponential backoff (1 s, 2 s,
  4 s... at most 60 s); when the server is back its tools are offered again.
- A call that gets no answer within the server's ``timeout`` returns an error; a server that
  hangs cannot stall the turn.
- A tool whose input schema is not a JSON Schema object is refused alone (listed as refused
  by ``hermes mcp list``); the server's other tools are registered.
- A tool whose name a plugin or the host already holds is skipped with a warning.

The ``mcp`` SDK (the ``mcp`` extra) is imported when a server is configured, never before.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import json
import logging
import threading
import time
import weakref
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any, Final

import attrs

from hermes_hooks.bridges.mcp_config import ServerConfig, mcp_tool_name, read_servers
from hermes_hooks.errors import RegistrationError

if TYPE_CHECKING:
    from hermes_hooks.plugins.manager import PluginManager
    from hermes_hooks.registries.base import Handle

__all__ = [
    "McpClient",
    "ServerState",
    "call_from_plugin",
    "client_of",
    "install_mcp",
    "mcp_available",
]

logger = logging.getLogger(__name__)

BACKOFF_BASE: Final = 1.0
BACKOFF_MAX: Final = 60.0
RESULT_CHAR_CAP: Final = 65536
"""Characters of an MCP result ``ctx.call_mcp`` returns (Hermes's cap); longer ones are cut."""
_METHOD_NOT_FOUND: Final = -32601
_CLOSE_TIMEOUT: Final = 10.0
"""Seconds :meth:`McpClient.close` waits for the sessions to end (the SDK stops a stdio server
within its own bounds: stdin closed, a grace period, then the process group killed)."""


class _Failed(ConnectionError):
    """A connection attempt failed, and the server's state already says why."""


def _only_failed(exc: BaseException) -> bool:
    if isinstance(exc, BaseExceptionGroup):
        return all(_only_failed(inner) for inner in exc.exceptions)
    return isinstance(exc, _Failed)


def mcp_available() -> bool:
    """Whether the ``mcp`` SDK is installed (without importing it)."""
    import importlib.util

    return importlib.util.find_spec("mcp") is not None


def _error(message: str) -> str:
    return json.dumps({"error": message}, ensure_ascii=False)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_describe(inner) for inner in exc.exceptions)
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def render_result(result: Any) -> str:
    """Return the JSON text an MCP tool result becomes (Hermes's shape).

    ``{"result": "<the text blocks, joined>"}`` (with ``structuredContent`` when the server
    gave some), or ``{"error": ...}`` for a result marked ``isError``.
    """
    parts: list[str] = []
    for block in getattr(result, "content", None) or ():
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(str(getattr(block, "text", "")))
        elif kind in ("image", "audio"):
            parts.append(f"[{kind}: {getattr(block, 'mime_type', '') or 'data'}]")
        elif kind == "resource":
            resource = getattr(block, "resource", None)
            text = getattr(resource, "text", None)
            parts.append(str(text) if text is not None else f"[resource: {resource}]")
        elif kind == "resource_link":
            parts.append(f"[resource: {getattr(block, 'uri', '')}]")
        else:
            parts.append(f"[{kind or 'content'}]")
    text = "\n".join(parts)
    if getattr(result, "is_error", False):
        return _error(text or "the MCP tool reported an error")
    data: dict[str, Any] = {"result": text}
    structured = getattr(result, "structured_content", None)
    if structured is not None:
        data["structuredContent"] = structured
    return json.dumps(data, ensure_ascii=False, default=str)


def _schema_problem(schema: object) -> str | None:
    if schema is None:
        return None
    if not isinstance(schema, Mapping):
        return f"its input schema must be a JSON Schema object, found {type(schema).__name__}"
    from hermes_hooks.registries.schemas import schema_problem

    return schema_problem({"parameters": schema})


def _parameters(schema: Mapping[str, Any] | None) -> dict[str, Any]:
    # As Hermes normalises them: no schema is "no arguments"; an object needs "properties".
    if not schema:
        return {"type": "object", "properties": {}}
    parameters = dict(schema)
    if parameters.get("type") == "object" and "properties" not in parameters:
        parameters["properties"] = {}
    return parameters


@attrs.define(eq=False)
class ServerState:
    """What the client knows of one server now (``hermes mcp list`` shows it)."""

    config: ServerConfig
    status: str = "connecting"
    """``connecting``, ``connected``, ``reconnecting``, ``disabled`` or ``closed``."""
    error: str | None = None
    tools: dict[str, str] = attrs.field(factory=dict)
    """Registered tool name → the server's own tool name."""
    refused: dict[str, str] = attrs.field(factory=dict)
    """The server's tool name → why it was not registered."""
    server_tools: tuple[str, ...] = ()
    """Every tool name the server listed last."""
    retry_at: float | None = None
    connects: int = 0
    session: Any = None
    handles: dict[str, Handle] = attrs.field(factory=dict)
    task: asyncio.Task[None] | None = None
    first: threading.Event = attrs.field(factory=threading.Event)
    lost: asyncio.Event | None = None
    wake: asyncio.Event | None = None
    stopped: bool = False
    """Set when the client stops this server: its task ends at its next step."""

    def halted(self) -> bool:
        """Whether the client stopped this server (a call: the flag changes under the loop)."""
        return self.stopped

    @property
    def connected(self) -> bool:
        """Whether a session is open now."""
        return self.session is not None and self.status == "connected"

    def unavailable_reason(self) -> str:
        """Say why the server's tools cannot be called now."""
        why = f"MCP server {self.config.name!r} is {self.status}"
        if self.error:
            why += f" ({self.error})"
        if self.retry_at is not None and self.status == "reconnecting":
            why += f"; next attempt in {max(0.0, self.retry_at - time.monotonic()):.0f} s"
        return why


class McpClient:
    """The sessions of a manager's MCP servers, owned by one background event loop.

    :param pm: the manager whose ``pm.tools`` gets the servers' tools.
    :param servers: the servers (disabled ones are listed, not connected).
    :param backoff_base: seconds before the first reconnection; doubled each failure.
    :param backoff_max: the longest wait between two attempts.
    """

    def __init__(
        self,
        pm: PluginManager,
        servers: list[ServerConfig],
        *,
        backoff_base: float = BACKOFF_BASE,
        backoff_max: float = BACKOFF_MAX,
    ) -> None:
        self._pm_ref = weakref.ref(pm)
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.servers: dict[str, ServerState] = {}
        self.problems: list[str] = []
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run_loop, name="hermes-mcp", daemon=True)
        self._closed = False
        self._lock = threading.Lock()
        self._thread.start()
        self._set_servers(servers)

    @property
    def _pm(self) -> PluginManager:
        pm = self._pm_ref()
        if pm is None:
            raise RuntimeError("the plugin manager of this MCP client is gone")
        return pm

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closed

    # -- the loop -------------------------------------------------------------------------------

    def _run_loop(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_forever()

    def _submit(self, coro: Any) -> concurrent.futures.Future[Any]:
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    def _set_servers(self, servers: list[ServerConfig]) -> None:
        for config in servers:
            state = ServerState(config=config)
            self.servers[config.name] = state
            if not config.enabled:
                state.status = "disabled"
                state.first.set()
                continue
            self._submit(self._start(state)).result()

    async def _start(self, state: ServerState) -> None:
        state.lost = asyncio.Event()
        state.wake = asyncio.Event()
        state.task = asyncio.get_running_loop().create_task(
            self._run_server(state), name=f"mcp:{state.config.name}"
        )

    def wait_connected(self, timeout: float | None = None) -> None:
        """Wait until every enabled server connected once or failed its first attempt.

        Each server is bounded by its own ``connect_timeout`` (``timeout`` bounds the whole).
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        for state in self.servers.values():
            limit = state.config.connect_timeout + 1.0
            if deadline is not None:
                limit = max(0.0, min(limit, deadline - time.monotonic()))
            state.first.wait(limit)

    async def _run_server(self, state: ServerState) -> None:
        import anyio  # the SDK's (an extra): imported when a server is used

        delay = self.backoff_base
        while not state.stopped:
            state.status = "connecting" if state.connects == 0 else "reconnecting"
            state.retry_at = None
            try:
                await self._session(state)
                delay = self.backoff_base  # it was up: start the backoff again
            except asyncio.CancelledError:
                raise
            except BaseException as exc:  # the SDK raises exception groups
                if isinstance(exc, KeyboardInterrupt | SystemExit):
                    raise
                if not _only_failed(exc):  # a _Failed has said why already
                    state.error = _describe(exc)
                    logger.warning("MCP server %r: %s", state.config.name, state.error)
            finally:
                state.session = None
                state.first.set()
            if state.halted():
                break
            state.status = "reconnecting"
            state.retry_at = time.monotonic() + delay
            assert state.wake is not None
            state.wake.clear()
            with anyio.move_on_after(delay):
                await state.wake.wait()
            delay = min(delay * 2, self.backoff_max)
        state.status = "closed"

    @contextlib.asynccontextmanager
    async def _transport(self, config: ServerConfig) -> AsyncIterator[tuple[Any, Any]]:
        if config.transport == "stdio":
            from mcp.client.stdio import (
                StdioServerParameters,
                get_default_environment,
                stdio_client,
            )

            env = {**get_default_environment(), **config.env}
            parameters = StdioServerParameters(
                command=config.command or "", args=list(config.args), env=env
            )
            async with stdio_client(parameters) as streams:
                yield streams[0], streams[1]
            return
        import httpx2  # the HTTP client the SDK is built on
        from mcp.client.streamable_http import streamable_http_client

        timeout = httpx2.Timeout(config.connect_timeout, read=max(config.timeout, 300.0))
        async with (
            httpx2.AsyncClient(headers=dict(config.headers), timeout=timeout) as http,
            streamable_http_client(config.url or "", http_client=http) as streams,
        ):
            yield streams[0], streams[1]

    async def _session(self, state: ServerState) -> None:
        import anyio
        from mcp import ClientSession

        config = state.config
        # Nested, not an exit stack under one deadline: the SDK's contexts hold anyio cancel
        # scopes, which must close in the order they opened. The transport only starts the
        # process (or nothing, for HTTP); the deadline bounds what waits for the server.
        async with (
            self._transport(config) as (read, write),
            ClientSession(read, write) as session,
        ):
            try:
                with anyio.fail_after(config.connect_timeout):
                    await session.initialize()
                    listed = await self._list_tools(session)
            except TimeoutError:
                # Said now: stopping the server (leaving the contexts) may take a while.
                state.error = f"no answer within connect_timeout ({config.connect_timeout:g} s)"
                state.status = "reconnecting"
                state.first.set()
                logger.warning("MCP server %r: %s", config.name, state.error)
                raise _Failed(state.error) from None
            state.session = session
            state.status = "connected"
            state.error = None
            state.connects += 1
            assert state.lost is not None
            state.lost.clear()
            self._publish(state, listed)
            state.first.set()
            logger.info("MCP server %r connected: %d tools", config.name, len(state.tools))
            await self._watch(state, session)

    async def _list_tools(self, session: Any) -> list[Any]:
        tools: list[Any] = []
        cursor: str | None = None
        for _ in range(50):  # a server repeating its cursor cannot spin us
            if cursor is None:
                result = await session.list_tools()
            else:
                from mcp_types import PaginatedRequestParams

                result = await session.list_tools(params=PaginatedRequestParams(cursor=cursor))
            tools.extend(result.tools or ())
            cursor = getattr(result, "next_cursor", None)
            if not cursor:
                break
        return tools

    async def _watch(self, state: ServerState, session: Any) -> None:
        """Return when the session is lost: a failed call said so, or a ping went unanswered."""
        import anyio
        from mcp import MCPError

        assert state.lost is not None
        while not state.stopped:
            with anyio.move_on_after(state.config.keepalive_interval):
                await state.lost.wait()
            if state.lost.is_set():
                raise ConnectionError(state.error or "the connection was lost")
            try:
                with anyio.fail_after(max(5.0, state.config.keepalive_interval)):
                    await session.send_ping()
            except MCPError as exc:
                if getattr(getattr(exc, "error", None), "code", None) == _METHOD_NOT_FOUND:
                    continue  # a server without ping: alive as far as we know
                raise ConnectionError(f"ping failed: {exc}") from exc
            except TimeoutError as exc:
                raise ConnectionError("the server did not answer a ping") from exc

    # -- tools ----------------------------------------------------------------------------------

    def _publish(self, state: ServerState, listed: list[Any]) -> None:
        """Register the listed tools (and drop those the server no longer lists)."""
        config = state.config
        wanted: dict[str, Any] = {}
        before = dict(state.refused)
        state.refused.clear()
        state.server_tools = tuple(str(tool.name) for tool in listed)
        for tool in listed:
            name = str(tool.name)
            if not config.offers(name):
                continue
            schema = getattr(tool, "input_schema", None)
            problem = _schema_problem(schema)
            if problem is not None:
                state.refused[name] = problem
                if before.get(name) != problem:
                    logger.warning("MCP server %r: tool %r refused: %s", config.name, name, problem)
                continue
            wanted[mcp_tool_name(config.name, name)] = tool
        for registered in list(state.handles):
            if registered not in wanted:
                state.handles.pop(registered).unregister()
                state.tools.pop(registered, None)
        for registered, tool in wanted.items():
            if registered in state.handles:
                continue
            self._register(state, registered, tool)

    def _register(self, state: ServerState, registered: str, tool: Any) -> None:
        config = state.config
        name = str(tool.name)
        schema = {
            "name": registered,
            "description": getattr(tool, "description", None)
            or f"MCP tool {name} from {config.name}",
            "parameters": _parameters(getattr(tool, "input_schema", None)),
        }

        def handler(args: Mapping[str, Any], **kwargs: Any) -> str:
            return self.call(config.name, name, args)

        def check() -> bool:
            """Offered while its MCP server is connected ('hermes mcp list' shows why not)."""
            return state.connected

        try:
            handle = self._pm.tools.register_tool(
                registered,
                f"mcp-{config.name}",
                schema,
                handler,
                check_fn=check,
                owner=config.owner,
            )
        except RegistrationError as exc:
            state.refused[name] = f"the name {registered!r} is taken: {exc}"
            logger.warning("MCP server %r: tool %r skipped: %s", config.name, name, exc)
            return
        state.handles[registered] = handle
        state.tools[registered] = name

    # -- calls ----------------------------------------------------------------------------------

    def call(
        self,
        server: str,
        tool: str,
        arguments: Mapping[str, Any] | None = None,
        timeout: float | None = None,
    ) -> str:
        """Call ``tool`` of ``server`` and return its result as JSON text; never raises.

        ``{"result": ...}`` on success, ``{"error": ...}`` when the server is unknown or not
        connected, the call failed, or no answer came within ``timeout`` (the server's own by
        default).
        """
        state = self.servers.get(server)
        if state is None:
            known = ", ".join(sorted(self.servers)) or "none"
            return _error(f"no MCP server named {server!r} in mcp_servers (configured: {known})")
        if not state.connected:
            return _error(f"tool {tool!r} is not available: {state.unavailable_reason()}")
        limit = state.config.timeout if timeout is None else timeout
        future = self._submit(self._call(state, tool, dict(arguments or {}), limit))
        try:
            result: str = future.result(limit + 5.0)
        except concurrent.futures.TimeoutError:
            future.cancel()
            return _error(f"MCP server {server!r} did not answer {tool!r} within {limit:g} s")
        return result

    async def _call(
        self, state: ServerState, tool: str, arguments: dict[str, Any], timeout: float
    ) -> str:
        import anyio
        from mcp import MCPError

        session = state.session
        if session is None:
            return _error(f"tool {tool!r} is not available: {state.unavailable_reason()}")
        try:
            with anyio.fail_after(timeout):
                result = await session.call_tool(tool, arguments)
        except TimeoutError:
            name = state.config.name
            return _error(f"MCP server {name!r} did not answer {tool!r} within {timeout:g} s")
        except MCPError as exc:
            if "closed" in str(exc).lower():
                self._lose(state, f"connection closed during a call to {tool!r}")
                return _error(f"tool {tool!r} is not available: {state.unavailable_reason()}")
            return _error(f"MCP error from {state.config.name!r}: {exc}")
        except Exception as exc:
            self._lose(state, _describe(exc))
            return _error(f"MCP call to {tool!r} failed: {_describe(exc)}")
        return render_result(result)

    def _lose(self, state: ServerState, why: str) -> None:
        state.error = why
        state.status = "reconnecting"
        state.session = None
        if state.lost is not None:
            state.lost.set()

    # -- operator actions -----------------------------------------------------------------------

    def reconnect(self, server: str) -> None:
        """Drop ``server``'s session (if any) and connect again now, without waiting."""
        state = self.servers[server]

        def poke() -> None:
            if state.lost is not None:
                state.lost.set()
            if state.wake is not None:
                state.wake.set()

        self._loop.call_soon_threadsafe(poke)

    def reload(self, servers: list[ServerConfig], problems: list[str]) -> str:
        """Close every session, unregister the tools, and start on ``servers``; say what."""
        self._stop_all()
        self.servers = {}
        self.problems = list(problems)
        self._set_servers(servers)
        self.wait_connected()
        return self.summary()

    def summary(self) -> str:
        """One line per server: its state and tools."""
        if not self.servers:
            return "No MCP servers are configured (mcp_servers: in config.yaml)."
        lines = []
        for name, state in self.servers.items():
            line = f"{name}: {state.status}, {len(state.tools)} tools"
            if state.error and not state.connected:
                line += f" ({state.error})"
            lines.append(line)
        lines.extend(f"problem: {problem}" for problem in self.problems)
        return "\n".join(lines)

    def _stop_all(self) -> None:
        states = list(self.servers.values())
        for state in states:
            for handle in state.handles.values():
                handle.unregister()
            state.handles.clear()
            state.tools.clear()
        tasks = [state.task for state in states if state.task is not None]
        if not tasks or not self._loop.is_running():
            return

        async def cancel() -> None:
            # A flag and a wake-up as well as the cancellation: a cancel that lands while the
            # SDK stops a server (a shielded scope) can be absorbed there.
            for state in states:
                state.stopped = True
                for event in (state.wake, state.lost):
                    if event is not None:
                        event.set()
            for task in tasks:
                task.cancel()
            await asyncio.wait(tasks, timeout=_CLOSE_TIMEOUT)

        with contextlib.suppress(Exception):
            self._submit(cancel()).result(_CLOSE_TIMEOUT + 1.0)
        for state in states:
            state.status = "closed"
            state.session = None

    def close(self) -> None:
        """End every session (stdio servers are stopped) and the background loop."""
        with self._lock:
            if self._closed:
                return
            self._stop_all()
            self._closed = True
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(_CLOSE_TIMEOUT)
        if not self._thread.is_alive():
            self._loop.close()


_clients: weakref.WeakKeyDictionary[Any, McpClient] = weakref.WeakKeyDictionary()
_clients_lock = threading.Lock()


def client_of(pm: PluginManager) -> McpClient | None:
    """Return the MCP client installed on ``pm``, or ``None``."""
    return _clients.get(pm)


def install_mcp(
    pm: PluginManager,
    *,
    wait: bool = True,
    backoff_base: float = BACKOFF_BASE,
    backoff_max: float = BACKOFF_MAX,
) -> McpClient | None:
    """Connect ``pm`` to the servers of its ``mcp_servers:`` and register their tools.

    Returns the client, or ``None`` when no server is configured (nothing is imported then)
    or the ``mcp`` extra is not installed (a warning says so). Called again on the same
    manager it returns the client it made. ``/reload-mcp`` is registered in ``pm.commands``.

    :param wait: wait for the first connections (each bounded by its ``connect_timeout``).
    """
    with _clients_lock:
        existing = _clients.get(pm)
        if existing is not None:
            return existing
        servers, problems = read_servers(pm.config)
        for problem in problems:
            logger.warning("%s", problem)
        if not servers:
            return None
        if not mcp_available():
            logger.warning(
                "mcp_servers lists %d server(s) but the 'mcp' package is not installed: "
                "pip install 'hermes-hooks[mcp]'",
                len(servers),
            )
            return None
        client = McpClient(pm, servers, backoff_base=backoff_base, backoff_max=backoff_max)
        client.problems = problems
        _clients[pm] = client
    atexit.register(client.close)
    _register_reload_command(pm, client)
    if wait:
        client.wait_connected()
    return client


def reload_mcp(pm: PluginManager) -> str:
    """Read ``mcp_servers:`` again and reconnect every server; return the summary."""
    pm.reload_config()
    servers, problems = read_servers(pm.config)
    client = client_of(pm)
    if client is None:
        client = install_mcp(pm)
        return (
            client.summary()
            if client is not None
            else "\n".join(
                ["No MCP servers are configured (mcp_servers: in config.yaml).", *problems]
            )
        )
    return client.reload(servers, problems)


def _register_reload_command(pm: PluginManager, client: McpClient) -> None:
    from hermes_hooks.registries.base import HOST

    if pm.commands.get("reload-mcp") is not None:
        return

    def reload_command(raw_args: str = "") -> str:
        return reload_mcp(pm)

    with contextlib.suppress(RegistrationError):
        pm.commands.register_command(
            "reload-mcp",
            reload_command,
            description="read mcp_servers again and reconnect the MCP servers",
            owner=HOST,
        )


def call_from_plugin(
    pm: PluginManager,
    plugin_id: str,
    server: str,
    tool: str,
    arguments: Mapping[str, Any] | None = None,
    timeout: float = 30,
) -> dict[str, Any]:
    """``ctx.call_mcp``: Hermes's default-deny allowlist, its timeout clamp and its envelope.

    :raises PermissionError: ``server`` is not in ``plugins.entries.<plugin_id>.mcp_allowlist``.
    """
    entry = pm.plugins_config.entries.get(plugin_id) or {}
    allowlist = entry.get("mcp_allowlist") if isinstance(entry, Mapping) else None
    allowed = [str(item) for item in allowlist] if isinstance(allowlist, list) else []
    if server not in allowed:
        raise PermissionError(
            f"plugin {plugin_id!r} is not allowed to call MCP server {server!r}: add it to "
            f"plugins.entries.{plugin_id}.mcp_allowlist in config.yaml (no MCP access by default)"
        )
    try:
        seconds = float(timeout)
    except (TypeError, ValueError):
        seconds = 30.0
    seconds = max(1.0, min(seconds, 600.0))
    client = client_of(pm) or install_mcp(pm)
    if client is None:
        return {
            "ok": False,
            "error": f"MCP server {server!r} is not configured or 'mcp' is not installed",
        }
    raw = client.call(server, tool, dict(arguments or {}), seconds)
    return envelope(raw)


def envelope(raw: str) -> dict[str, Any]:
    """Return Hermes's envelope of an MCP result: ``{"ok", "result"|"error"[, "truncated"]}``."""
    truncated = len(raw) > RESULT_CHAR_CAP
    if truncated:
        raw = raw[:RESULT_CHAR_CAP] + "… [truncated]"
    try:
        parsed: Any = json.loads(raw)
    except ValueError:
        parsed = None
    result: dict[str, Any]
    if isinstance(parsed, dict) and "error" in parsed:
        result = {"ok": False, "error": parsed["error"]}
    elif isinstance(parsed, dict) and "result" in parsed:
        result = {"ok": True, "result": parsed["result"]}
        if "structuredContent" in parsed:
            result["structuredContent"] = parsed["structuredContent"]
    else:
        result = {"ok": True, "result": parsed if parsed is not None else raw}
    if truncated:
        result["truncated"] = True
    return result
