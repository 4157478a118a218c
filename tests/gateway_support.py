"""Platform plugins of the shape Hermes ships (``kind: platform``, ``ctx.register_platform``,
a ``BasePlatformAdapter`` from ``gateway.platforms.base``), and the servers they talk to.

Written here, not copied: ``IRC_PLUGIN`` speaks IRC over asyncio streams as Hermes' IRC
adapter does (``NICK``/``USER``, ``001`` before ``JOIN``, ``PRIVMSG`` addressed ``nick:`` in a
channel, PING/PONG); ``LINE_PLUGIN`` speaks a JSON-lines chat protocol to
:class:`LineServer`, which the fault tests steer (drop the connection, never greet, hold).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

if TYPE_CHECKING:
    from hermes_hooks.compat.gateway_config import GatewayConfig
    from hermes_hooks.host.gateway_runner import GatewayRunner
    from hermes_hooks.plugins.manager import PluginManager

IRC_PLUGIN = """
import asyncio
import os
import time

from gateway.config import Platform
from gateway.platforms.base import BasePlatformAdapter, MessageEvent, MessageType, SendResult
from gateway.status import acquire_scoped_lock, release_scoped_lock


def _parse(raw):
    prefix = ""
    if raw.startswith(":"):
        prefix, _, raw = raw[1:].partition(" ")
    trailing = ""
    if " :" in raw:
        raw, trailing = raw.split(" :", 1)
    parts = raw.split()
    params = parts[1:]
    if trailing:
        params.append(trailing)
    return prefix.split("!")[0], (parts[0] if parts else ""), params


class IRCAdapter(BasePlatformAdapter):
    def __init__(self, config, **kwargs):
        super().__init__(config=config, platform=Platform("irc"))
        extra = getattr(config, "extra", {}) or {}
        self.server = os.getenv("IRC_SERVER") or extra.get("server", "")
        self.port = int(os.getenv("IRC_PORT") or extra.get("port", 6667))
        self.nickname = os.getenv("IRC_NICKNAME") or extra.get("nickname", "hermes-bot")
        self.channel = os.getenv("IRC_CHANNEL") or extra.get("channel", "")
        self._reader = self._writer = self._task = None
        self._welcome = asyncio.Event()

    @property
    def name(self):
        return "IRC"

    async def connect(self):
        if not self.server or not self.channel:
            self._set_fatal_error("config_missing", "IRC_SERVER and IRC_CHANNEL must be set",
                                  retryable=False)
            return False
        if not acquire_scoped_lock("irc", f"{self.server}:{self.port}:{self.nickname}"):
            self._set_fatal_error("lock_conflict", "IRC identity in use", retryable=False)
            return False
        self._reader, self._writer = await asyncio.open_connection(self.server, self.port)
        await self._raw(f"NICK {self.nickname}")
        await self._raw(f"USER {self.nickname} 0 * :Hermes Agent")
        self._task = asyncio.create_task(self._receive())
        await self._welcome.wait()
        await self._raw(f"JOIN {self.channel}")
        self._mark_connected()
        return True

    async def disconnect(self):
        release_scoped_lock("irc", f"{self.server}:{self.port}:{self.nickname}")
        self._mark_disconnected()
        if self._writer is not None and not self._writer.is_closing():
            try:
                await self._raw("QUIT :bye")
                self._writer.close()
                await self._writer.wait_closed()
            except Exception:
                pass
        if self._task is not None and self._task is not asyncio.current_task():
            self._task.cancel()
            try:
                await self._task
            except BaseException:
                pass
        self._welcome.clear()

    async def send(self, chat_id, content, reply_to=None, metadata=None):
        if self._writer is None or self._writer.is_closing():
            return SendResult(success=False, error="Not connected")
        for line in (part for part in content.split("\\n") if part.strip()):
            await self._raw(f"PRIVMSG {chat_id} :{line}")
        return SendResult(success=True, message_id=str(int(time.time() * 1000)))

    async def get_chat_info(self, chat_id):
        return {"name": chat_id, "type": "group" if chat_id.startswith("#") else "dm"}

    async def _raw(self, line):
        self._writer.write((line + "\\r\\n").encode())
        await self._writer.drain()

    async def _receive(self):
        try:
            while True:
                data = await self._reader.readline()
                if not data:
                    break
                sender, command, params = _parse(data.decode("utf-8", "replace").rstrip("\\r\\n"))
                if command == "PING":
                    await self._raw(f"PONG :{params[0] if params else ''}")
                elif command == "001":
                    self._welcome.set()
                elif command == "PRIVMSG" and len(params) >= 2:
                    await self._privmsg(sender, params[0], params[1])
        finally:
            if self.is_connected:
                self._set_fatal_error("connection_lost", "IRC connection closed", retryable=True)
                await self._notify_fatal_error()

    async def _privmsg(self, sender, target, text):
        channel = target.startswith("#")
        if channel:
            prefix = f"{self.nickname}:"
            if not text.startswith(prefix):
                return
            text = text[len(prefix):].strip()
        source = self.build_source(chat_id=target if channel else sender, chat_name=target,
                                   chat_type="group" if channel else "dm", user_id=sender,
                                   user_name=sender)
        await self.handle_message(MessageEvent(text=text, message_type=MessageType.TEXT,
                                               source=source, message_id=str(time.time())))


def check_requirements():
    return True


def validate_config(config):
    extra = getattr(config, "extra", {}) or {}
    return bool((os.getenv("IRC_SERVER") or extra.get("server"))
                and (os.getenv("IRC_CHANNEL") or extra.get("channel")))


def register(ctx):
    ctx.register_platform(
        name="irc",
        label="IRC",
        adapter_factory=lambda cfg: IRCAdapter(cfg),
        check_fn=check_requirements,
        validate_config=validate_config,
        required_env=["IRC_SERVER", "IRC_CHANNEL", "IRC_NICKNAME"],
        install_hint="No extra packages needed (stdlib only)",
        allowed_users_env="IRC_ALLOWED_USERS",
        allow_all_env="IRC_ALLOW_ALL_USERS",
        max_message_length=450,
        emoji="💬",
        platform_hint="You are chatting via IRC.",
    )
"""

LINE_PLUGIN = '''
import asyncio
import json

from gateway.config import Platform
from gateway.platforms.base import BasePlatformAdapter, MessageEvent, MessageType, SendResult


class LineAdapter(BasePlatformAdapter):
    """A JSON-lines chat: {"chat", "user", "text"} in, {"chat", "text"} out."""

    def __init__(self, config):
        super().__init__(config=config, platform=Platform("line_chat"))
        self.port = int(config.extra["port"])
        self._reader = self._writer = self._task = None
        self.images = []

    async def connect(self):
        self._reader, self._writer = await asyncio.open_connection("127.0.0.1", self.port)
        hello = await self._reader.readline()  # the server's greeting: the handshake
        if not hello:
            self._set_fatal_error("handshake", "closed during the handshake", retryable=True)
            return False
        self._task = asyncio.create_task(self._receive())
        self._mark_connected()
        return True

    async def disconnect(self):
        self._mark_disconnected()
        if self._writer is not None:
            self._writer.close()
        if self._task is not None and self._task is not asyncio.current_task():
            self._task.cancel()
            try:
                await self._task
            except BaseException:
                pass

    async def send(self, chat_id, content, reply_to=None, metadata=None):
        if chat_id.startswith("broken"):
            raise ConnectionResetError("the platform refused the message")
        if self._writer is None or self._writer.is_closing() or not self.is_connected:
            return SendResult(success=False, error="Not connected")
        self._writer.write((json.dumps({"chat": chat_id, "text": content}) + "\\n").encode())
        await self._writer.drain()
        return SendResult(success=True, message_id="m")

    async def send_image_file(self, chat_id, image_path, caption=None, reply_to=None, **kw):
        with open(image_path, "rb") as handle:
            size = len(handle.read())
        self._writer.write((json.dumps({"chat": chat_id, "photo": image_path, "bytes": size})
                            + "\\n").encode())
        await self._writer.drain()
        return SendResult(success=True, message_id="p")

    async def get_chat_info(self, chat_id):
        return {"name": chat_id, "type": "dm"}

    async def _receive(self):
        try:
            while True:
                data = await self._reader.readline()
                if not data:
                    break
                item = json.loads(data)
                if item.get("event"):
                    await self.emit_platform_event(item["event"], item.get("payload", {}),
                                                   self.build_source(chat_id=item["chat"],
                                                                     user_id=item["user"]))
                    continue
                source = self.build_source(chat_id=item["chat"], user_id=item["user"],
                                           user_name=item["user"])
                await self.handle_message(MessageEvent(text=item["text"], source=source,
                                                       message_type=MessageType.TEXT,
                                                       message_id=item.get("id")))
        except (ConnectionError, ValueError):
            pass
        finally:
            if self.is_connected:
                self._set_fatal_error("connection_lost", "closed", retryable=True)
                await self._notify_fatal_error()


def register(ctx):
    ctx.register_platform("line_chat", "Line chat", lambda cfg: LineAdapter(cfg), lambda: True,
                          allowed_users_env="LINE_CHAT_ALLOWED_USERS")
'''


NTFY_PLUGIN = '''
import asyncio
import json
import os
from pathlib import Path

import httpx

from gateway.config import Platform
from gateway.platforms.base import BasePlatformAdapter, MessageEvent, MessageType, SendResult

_ECHO_TAG = "hermes-agent"


def check_requirements():
    return True


def validate_config(config):
    extra = getattr(config, "extra", {}) or {}
    return bool(extra.get("topic") or os.getenv("NTFY_TOPIC"))


class NtfyAdapter(BasePlatformAdapter):
    """Subscribes to <server>/<topic>/json (JSON lines), publishes by POST."""

    def __init__(self, config):
        super().__init__(config=config, platform=Platform("ntfy"))
        extra = config.extra or {}
        self._server = (extra.get("server") or os.getenv("NTFY_SERVER_URL", "")).rstrip("/")
        self._topic = extra.get("topic") or os.getenv("NTFY_TOPIC", "")
        self._publish_topic = extra.get("publish_topic") or self._topic
        self._client = None
        self._task = None

    async def connect(self, *, is_reconnect=False):
        self._client = httpx.AsyncClient(timeout=None)
        opened = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(self._stream(opened))
        try:
            await opened
        except Exception as exc:
            await self._client.aclose()
            self._client = None
            self._set_fatal_error("ntfy_stream", str(exc), retryable=True)
            return False
        self._mark_connected()
        return True

    async def _stream(self, opened):
        url = f"{self._server}/{self._topic}/json"
        try:
            async with self._client.stream("GET", url, params={"poll": "false"}) as response:
                response.raise_for_status()
                opened.set_result(True)
                async for line in response.aiter_lines():
                    if line.strip():
                        event = json.loads(line)
                        if event.get("event") == "message":
                            await self._on_message(event)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if not opened.done():
                opened.set_exception(exc)
        finally:
            if self.is_connected:
                self._set_fatal_error("ntfy_stream", "stream closed", retryable=True)
                await self._notify_fatal_error()

    async def _on_message(self, event):
        if _ECHO_TAG in (event.get("tags") or []):
            return
        text = (event.get("message") or "").strip()
        if not text:
            return
        topic = event.get("topic") or self._topic
        source = self.build_source(chat_id=topic, chat_name=topic, chat_type="dm",
                                   user_id=topic, user_name=topic)
        await self.handle_message(MessageEvent(text=text, message_type=MessageType.TEXT,
                                               source=source, message_id=event.get("id"),
                                               raw_message=event))

    async def disconnect(self):
        self._mark_disconnected()
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except BaseException:
                pass
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def send(self, chat_id, content, reply_to=None, metadata=None):
        response = await self._client.post(
            f"{self._server}/{self._publish_topic or chat_id}", content=content.encode(),
            headers={"Content-Type": "text/plain; charset=utf-8", "X-Tags": _ECHO_TAG})
        if response.status_code >= 300:
            return SendResult(success=False, error=f"HTTP {response.status_code}")
        return SendResult(success=True, message_id=response.json().get("id"))

    async def send_image_file(self, chat_id, image_path, caption=None, reply_to=None, **kw):
        path = Path(image_path)
        response = await self._client.put(
            f"{self._server}/{self._publish_topic or chat_id}", content=path.read_bytes(),
            headers={"Filename": path.name, "X-Tags": _ECHO_TAG})
        return SendResult(success=response.status_code < 300)

    async def get_chat_info(self, chat_id):
        return {"name": chat_id, "type": "dm"}


def register(ctx):
    ctx.register_platform(
        name="ntfy", label="ntfy", adapter_factory=lambda cfg: NtfyAdapter(cfg),
        check_fn=check_requirements, validate_config=validate_config,
        required_env=["NTFY_TOPIC"], install_hint="pip install httpx",
        allowed_users_env="NTFY_ALLOWED_USERS", allow_all_env="NTFY_ALLOW_ALL_USERS",
        max_message_length=4096, emoji="🔔",
    )
'''


HA_PLUGIN = '''
import asyncio
import os

from gateway.config import Platform
from gateway.platforms.base import BasePlatformAdapter, MessageEvent, MessageType, SendResult


def check_requirements():
    try:
        import aiohttp  # noqa: F401
    except ImportError:
        return False
    return True


class HomeAssistantAdapter(BasePlatformAdapter):
    """Home Assistant: its WebSocket API in (an input_text entity's new state is a message),
    persistent notifications out through its REST API."""

    def __init__(self, config):
        super().__init__(config=config, platform=Platform("homeassistant"))
        extra = config.extra or {}
        self._url = (extra.get("url") or os.getenv("HASS_URL", "")).rstrip("/")
        self._token = config.token or os.getenv("HASS_TOKEN", "")
        self._entity = extra.get("entity_id", "input_text.hermes")
        self._session = self._ws = self._task = None

    async def connect(self):
        import aiohttp

        self._session = aiohttp.ClientSession(
            headers={"Authorization": f"Bearer {self._token}"})
        try:
            self._ws = await self._session.ws_connect(f"{self._url}/api/websocket")
            if (await self._ws.receive_json()).get("type") != "auth_required":
                raise ConnectionError("not a Home Assistant WebSocket")
            await self._ws.send_json({"type": "auth", "access_token": self._token})
            answer = await self._ws.receive_json()
            if answer.get("type") == "auth_invalid":
                self._set_fatal_error("auth_invalid", answer.get("message", ""), retryable=False)
                await self._close()
                return False
            await self._ws.send_json({"id": 1, "type": "subscribe_events",
                                      "event_type": "state_changed"})
            if not (await self._ws.receive_json()).get("success"):
                raise ConnectionError("subscribe_events refused")
        except Exception as exc:
            await self._close()
            self._set_fatal_error("connect_failed", str(exc), retryable=True)
            return False
        self._task = asyncio.create_task(self._receive())
        self._mark_connected()
        return True

    async def _receive(self):
        try:
            async for message in self._ws:
                data = message.json()
                if data.get("type") != "event":
                    continue
                change = data["event"]["data"]
                if change.get("entity_id") != self._entity:
                    continue
                state = change.get("new_state") or {}
                user = (state.get("context") or {}).get("user_id") or "unknown"
                source = self.build_source(chat_id=self._entity, chat_type="dm", user_id=user,
                                           user_name=user)
                await self.handle_message(MessageEvent(
                    text=state.get("state", ""), message_type=MessageType.TEXT,
                    source=source, message_id=(state.get("context") or {}).get("id")))
        finally:
            if self.is_connected:
                self._set_fatal_error("connection_lost", "WebSocket closed", retryable=True)
                await self._notify_fatal_error()

    async def disconnect(self):
        self._mark_disconnected()
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except BaseException:
                pass
        await self._close()

    async def _close(self):
        if self._ws is not None:
            await self._ws.close()
            self._ws = None
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def send(self, chat_id, content, reply_to=None, metadata=None):
        async with self._session.post(
            f"{self._url}/api/services/persistent_notification/create",
            json={"title": "Hermes", "message": content}) as response:
            if response.status >= 300:
                return SendResult(success=False, error=f"HTTP {response.status}")
        return SendResult(success=True)

    async def get_chat_info(self, chat_id):
        return {"name": chat_id, "type": "dm"}


def register(ctx):
    ctx.register_platform(
        name="homeassistant", label="Home Assistant",
        adapter_factory=lambda cfg: HomeAssistantAdapter(cfg), check_fn=check_requirements,
        required_env=["HASS_URL", "HASS_TOKEN"], install_hint="pip install aiohttp",
        allowed_users_env="HASS_ALLOWED_USERS", emoji="🏠",
    )
'''


POLICY_PLUGIN = """
from hermes_hooks import hookimpl

SEEN = []


@hookimpl
def pre_gateway_dispatch(event, gateway, session_store):
    SEEN.append((event.source.platform.value, event.message_type.value, event.text))
    if event.text.startswith("secret"):
        return {"action": "skip", "reason": "secret"}
    if event.text.startswith("plz "):
        return {"action": "rewrite", "text": event.text[4:]}
    return None


@hookimpl
def gateway_platform_event(platform, event_type, payload):
    SEEN.append((platform, event_type, payload.get("emoji")))
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


async def serve_app(app: Any) -> tuple[Any, int]:
    """Serve the aiohttp ``app`` on 127.0.0.1 at a port the OS picks; return its runner (for
    ``cleanup()``) and the port."""
    from aiohttp import web

    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    return runner, int(runner.addresses[0][1])


@contextlib.contextmanager
def miniircd(tmp_path: Path) -> Any:
    """Run a real IRC server (miniircd, from PyPI) on 127.0.0.1; yield its port."""
    port = free_port()
    command = [sys.executable, "-m", "miniircd", "--listen", "127.0.0.1", "--ports", str(port)]
    if os.geteuid() == 0:  # miniircd refuses root unless told (CI runs as root)
        command += ["--setuid", "root"]
    proc = subprocess.Popen(
        command, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("miniircd did not start") from None
                time.sleep(0.05)
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=10)


class IrcClient:
    """A person on IRC: registers, joins, says things, collects what the bot says."""

    def __init__(self, port: int, nick: str) -> None:
        self.port, self.nick = port, nick
        self.lines: asyncio.Queue[tuple[str, str, str]] = asyncio.Queue()
        self._writer: asyncio.StreamWriter | None = None
        self._task: asyncio.Task[None] | None = None

    async def start(self, channel: str) -> None:
        reader, self._writer = await asyncio.open_connection("127.0.0.1", self.port)
        self._say(f"NICK {self.nick}")
        self._say(f"USER {self.nick} 0 * :tester")
        welcome = asyncio.Event()
        self._task = asyncio.create_task(self._read(reader, welcome))
        await asyncio.wait_for(welcome.wait(), 10)
        self._say(f"JOIN {channel}")

    def _say(self, line: str) -> None:
        assert self._writer is not None
        self._writer.write((line + "\r\n").encode())

    def privmsg(self, target: str, text: str) -> None:
        self._say(f"PRIVMSG {target} :{text}")

    async def _read(self, reader: asyncio.StreamReader, welcome: asyncio.Event) -> None:
        while data := await reader.readline():
            line = data.decode().rstrip("\r\n")
            prefix, _, rest = line[1:].partition(" ") if line.startswith(":") else ("", "", line)
            command, _, params = rest.partition(" ")
            if command == "PING":
                self._say(f"PONG {params}")
            elif command == "001":
                welcome.set()
            elif command == "PRIVMSG":
                target, _, text = params.partition(" :")
                await self.lines.put((prefix.split("!")[0], target, text))

    async def next_line(self, timeout: float = 15) -> tuple[str, str, str]:
        return await asyncio.wait_for(self.lines.get(), timeout)

    async def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task


class LineServer:
    """The JSON-lines chat server ``LINE_PLUGIN`` connects to, on 127.0.0.1.

    :param greet: send the greeting (the handshake); ``False`` never answers it.
    """

    def __init__(self, *, greet: bool = True) -> None:
        self.greet = greet
        self.out: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.connections = 0
        self._writers: list[asyncio.StreamWriter] = []
        self._server: asyncio.Server | None = None
        self.port = 0

    async def __aenter__(self) -> LineServer:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        for writer in self._writers:
            writer.close()
        assert self._server is not None
        self._server.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self._writers.append(writer)
        if self.greet:
            writer.write(b'{"hello": true}\n')
        with contextlib.suppress(ConnectionError):
            while data := await reader.readline():
                await self.out.put(json.loads(data))

    async def connected(self, count: int = 1, timeout: float = 10) -> None:
        deadline = time.monotonic() + timeout
        while self.connections < count or not self._writers or self._writers[-1].is_closing():
            if time.monotonic() > deadline:
                raise TimeoutError("the adapter did not connect")
            await asyncio.sleep(0.01)

    def say(self, chat: str, user: str, text: str, **more: Any) -> None:
        line = json.dumps({"chat": chat, "user": user, "text": text, **more}) + "\n"
        self._writers[-1].write(line.encode())

    def drop(self) -> None:
        """Close the current connection (the platform hangs up)."""
        self._writers[-1].close()

    async def replies(self, count: int, timeout: float = 20) -> list[dict[str, Any]]:
        return [await asyncio.wait_for(self.out.get(), timeout) for _ in range(count)]


class AppServer:
    """A server of aiohttp routes on 127.0.0.1 (:func:`serve_app`), for ``async with``: a
    subclass adds its routes in :meth:`routes`; ``port`` is set once it is entered."""

    _runner: Any = None
    port: int = 0

    def routes(self, router: Any) -> None:
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        from aiohttp import web

        app = web.Application()
        self.routes(app.router)
        self._runner, self.port = await serve_app(app)
        return self


class NtfyServer(AppServer):
    """A server speaking ntfy's HTTP protocol on 127.0.0.1 (aiohttp): ``GET /<topic>/json``
    streams the topic's messages as JSON lines, ``POST /<topic>`` publishes text, ``PUT
    /<topic>`` with a ``Filename`` header publishes an attachment."""

    def __init__(self) -> None:
        self.published: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._subscribers: dict[str, list[asyncio.Queue[dict[str, Any]]]] = {}

    def routes(self, router: Any) -> None:
        router.add_get("/{topic}/json", self._subscribe)
        router.add_post("/{topic}", self._publish)
        router.add_put("/{topic}", self._publish)

    async def __aexit__(self, *exc: object) -> None:
        for queues in self._subscribers.values():
            for queue in queues:
                queue.put_nowait({"event": "close"})
        await self._runner.cleanup()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def _subscribe(self, request: Any) -> Any:
        from aiohttp import web

        topic = request.match_info["topic"]
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._subscribers.setdefault(topic, []).append(queue)
        response = web.StreamResponse(headers={"Content-Type": "application/x-ndjson"})
        await response.prepare(request)
        await response.write(json.dumps({"event": "open", "topic": topic}).encode() + b"\n")
        try:
            while (item := await queue.get()).get("event") != "close":
                await response.write(json.dumps(item).encode() + b"\n")
        finally:
            self._subscribers[topic].remove(queue)
        return response

    async def _publish(self, request: Any) -> Any:
        from aiohttp import web

        topic = request.match_info["topic"]
        body = await request.read()
        tags = [tag for tag in request.headers.get("X-Tags", "").split(",") if tag]
        item: dict[str, Any] = {
            "id": uuid.uuid4().hex[:12],
            "time": int(time.time()),
            "event": "message",
            "topic": topic,
            "tags": tags,
        }
        if request.method == "PUT":
            item["attachment"] = {
                "name": request.headers.get("Filename", "file"),
                "size": len(body),
            }
        else:
            item["message"] = body.decode()
        await self.published.put(item)
        for queue in self._subscribers.get(topic, []):
            queue.put_nowait(item)
        return web.json_response(item)

    def subscribers(self, topic: str) -> int:
        return len(self._subscribers.get(topic, []))

    async def post(self, topic: str, text: str) -> None:
        """Publish as a person does (their phone's ntfy app)."""
        import httpx

        async with httpx.AsyncClient() as client:
            (await client.post(f"{self.url}/{topic}", content=text.encode())).raise_for_status()

    async def next_from_bot(self, timeout: float = 15) -> dict[str, Any]:
        """The next message the bot published (it tags its own)."""
        while True:
            item = await asyncio.wait_for(self.published.get(), timeout)
            if item["tags"]:
                return item


class HomeAssistantServer(AppServer):
    """Home Assistant's WebSocket and REST APIs as far as the HA-shaped plugin uses them, on
    127.0.0.1 (aiohttp): the auth handshake, ``subscribe_events``, ``state_changed`` events,
    and ``POST /api/services/persistent_notification/create``."""

    def __init__(self, token: str) -> None:
        self.token = token
        self.notifications: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._sockets: list[Any] = []

    def routes(self, router: Any) -> None:
        router.add_get("/api/websocket", self._websocket)
        router.add_post("/api/services/persistent_notification/create", self._notify)

    async def __aexit__(self, *exc: object) -> None:
        for ws in self._sockets:
            await ws.close()
        await self._runner.cleanup()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def _websocket(self, request: Any) -> Any:
        from aiohttp import web

        ws = web.WebSocketResponse()
        await ws.prepare(request)
        await ws.send_json({"type": "auth_required", "ha_version": "2025.1.0"})
        auth = await ws.receive_json()
        if auth.get("access_token") != self.token:
            await ws.send_json({"type": "auth_invalid", "message": "Invalid access token"})
            await ws.close()
            return ws
        await ws.send_json({"type": "auth_ok", "ha_version": "2025.1.0"})
        subscribe = await ws.receive_json()
        await ws.send_json(
            {"id": subscribe["id"], "type": "result", "success": True, "result": None}
        )
        self._sockets.append(ws)
        async for _message in ws:
            pass
        return ws

    async def _notify(self, request: Any) -> Any:
        from aiohttp import web

        if request.headers.get("Authorization") != f"Bearer {self.token}":
            return web.json_response({"message": "401: Unauthorized"}, status=401)
        await self.notifications.put(await request.json())
        return web.json_response([])

    def subscribed(self) -> bool:
        return bool(self._sockets)

    async def set_text(self, entity_id: str, text: str, user_id: str) -> None:
        """A person types into an ``input_text`` entity: a ``state_changed`` event."""
        event = {
            "event_type": "state_changed",
            "data": {
                "entity_id": entity_id,
                "new_state": {
                    "entity_id": entity_id,
                    "state": text,
                    "context": {"id": uuid.uuid4().hex, "user_id": user_id},
                },
            },
        }
        await self._sockets[-1].send_json({"id": 1, "type": "event", "event": event})


@contextlib.asynccontextmanager
async def running(runner: Any) -> AsyncIterator[asyncio.Task[int]]:
    """Run ``runner`` on this loop; stop it (and check it exits 0) at the end."""
    task = asyncio.create_task(runner.run())
    try:
        yield task
    finally:
        runner.request_stop()
        assert await asyncio.wait_for(task, 30) == 0


def line_config(port: int, **bounds: float) -> GatewayConfig:
    """A gateway config with the line chat platform on ``port`` and quick bounds (connect,
    reconnect backoff, drain), each overridden by ``bounds``."""
    from hermes_hooks.compat.gateway_config import GatewayConfig, Platform, PlatformConfig

    platforms = {Platform("line_chat"): PlatformConfig(enabled=True, extra={"port": port})}
    options: dict[str, Any] = {
        "connect_timeout": 2.0,
        "reconnect_backoff_base": 0.05,
        "reconnect_backoff_cap": 0.2,
        "drain_timeout": 10.0,
        **bounds,
    }
    return GatewayConfig(platforms=platforms, **options)


@contextlib.asynccontextmanager
async def running_gateway(
    pm: PluginManager, *args: Any
) -> AsyncIterator[tuple[LineServer, GatewayRunner]]:
    """A :class:`LineServer` and ``pm``'s gateway runner (``args``: the model and any other
    positional argument) on :func:`line_config`, running and connected to it; the runner is
    stopped (and checked to exit 0), then the server closed, at the end."""
    from hermes_hooks.host.gateway_runner import GatewayRunner

    async with LineServer() as server:
        with pm.activate():
            runner = GatewayRunner(pm, *args, config=line_config(server.port))
        async with running(runner):
            await server.connected()
            yield server, runner
