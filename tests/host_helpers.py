"""Shared by the host, gateway and model tests: a recorder plugin, a scripted model and a real
HTTP server on 127.0.0.1 that speaks OpenAI's chat completions or Anthropic's Messages API (the
home and plugin folders come from :mod:`plugin_builders`).
"""

from __future__ import annotations

import collections
import json
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

# Also re-exported under the names test_async_handlers still imports them by.
from plugin_builders import isolated_home, user_plugin as write_plugin, write_config

from hermes_hooks.backends.models import ModelError, ModelProvider, ModelResponse, ToolCall
from hermes_hooks.plugins.manager import PluginManager


def plugin_module(pm: PluginManager, key: str) -> ModuleType:
    """Return the imported module of a folder plugin ``pm`` loaded."""
    info = pm.get_plugin_info(key)
    assert info is not None, f"plugin {key!r} was not discovered"
    assert info.status == "enabled", f"plugin {key!r} is {info.status}: {info.error}"
    init = str(Path(str(info.path)) / "__init__.py")
    for module in list(sys.modules.values()):
        if getattr(module, "__file__", None) == init:
            return module
    raise AssertionError(f"no module imported from {init}")


RECORDER = """
from hermes_hooks.spec.hookspecs import HOOK_NAMES

CALLS = []
# The stream hooks are delivered off the token path, on their own workers: their order among
# the other hooks is not the turn's, so the recorder of the turn's order leaves them out.
STREAM = {"on_stream_start", "on_stream_delta", "on_stream_end", "on_interim_message"}


def register(ctx):
    for name in HOOK_NAMES:
        if name in STREAM:
            continue
        def record(_name=name, **kwargs):
            CALLS.append((_name, kwargs))
        ctx.register_hook(name, record)
"""
"""A plugin that records every hook call as ``(name, kwargs)`` in its module's ``CALLS``."""


def recorder_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **plugins: str) -> Path:
    """An isolated home with the :data:`RECORDER` plugin and ``plugins`` (key: code), enabled."""
    home = isolated_home(tmp_path, monkeypatch)
    for key, code in {**plugins, "recorder": RECORDER}.items():
        write_plugin(home, key, code)
    write_config(home, [*plugins, "recorder"])
    return home


#: The hooks of a turn with one tool call, in the order they fire.
ONE_TOOL_TURN = [
    "on_session_start",
    "pre_llm_call",
    "pre_api_request",
    "post_api_request",
    "pre_tool_call",
    "transform_terminal_output",
    "post_tool_call",
    "transform_tool_result",
    "pre_api_request",
    "post_api_request",
    "transform_llm_output",
    "post_llm_call",
    "on_session_end",
]


def recorded(pm: PluginManager, key: str = "recorder") -> list[tuple[str, dict[str, Any]]]:
    """Return the recorder plugin's calls."""
    calls: list[tuple[str, dict[str, Any]]] = plugin_module(pm, key).CALLS
    return calls


def names(calls: Sequence[tuple[str, Any]]) -> list[str]:
    """Return the hook names of recorded calls, in order."""
    return [name for name, _ in calls]


# -- models ------------------------------------------------------------------------------------

Step = ModelResponse | ModelError | Callable[[list[dict[str, Any]]], ModelResponse]


def text(reply: str) -> ModelResponse:
    """A final answer."""
    return ModelResponse(text=reply)


def tool_call(name: str, args: Mapping[str, Any], call_id: str = "call_1") -> ModelResponse:
    """A response asking for one tool call."""
    return ModelResponse(
        tool_calls=(ToolCall(call_id, name, json.dumps(args)),), finish_reason="tool_calls"
    )


class ScriptedModel(ModelProvider):
    """Answers with the scripted steps in order and records every request it gets."""

    provider = "scripted"
    model = "scripted-1"

    def __init__(self, *steps: Step) -> None:
        self.steps = collections.deque(steps)
        self.requests: list[dict[str, Any]] = []

    def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] = (),
        **options: Any,
    ) -> ModelResponse:
        copied = json.loads(json.dumps(list(messages), default=str))
        self.requests.append({"messages": copied, "tools": list(tools), **options})
        if not self.steps:
            return text("(script finished)")
        step = self.steps.popleft()
        if isinstance(step, ModelError):
            raise step
        if callable(step):
            return step(copied)
        return step


# -- a real OpenAI-compatible server ----------------------------------------------------------


class ChatServer:
    """An HTTP server on 127.0.0.1 that answers every ``POST`` from a script, in order.

    It stands for an OpenAI-compatible endpoint (``POST /v1/chat/completions``) or Anthropic's
    (``POST /v1/messages``): the test queues the bodies. Each scripted reply is ``(status,
    body, headers, delay)``; ``body`` is a dict sent as JSON or a str sent as it is, ``delay``
    seconds pass before the answer. Requests are kept in :attr:`requests` as ``{"path",
    "headers", "json", "at"}`` (``at``: ``time.monotonic()`` on arrival).
    """

    def __init__(self) -> None:
        self.replies: collections.deque[tuple[int, Any, dict[str, str], float]] = (
            collections.deque()
        )
        self.requests: list[dict[str, Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                server.requests.append(
                    {
                        "path": self.path,
                        "headers": dict(self.headers.items()),
                        "json": json.loads(raw or b"null"),
                        "at": time.monotonic(),
                    }
                )
                empty: tuple[int, Any, dict[str, str], float] = (500, "empty", {}, 0.0)
                status, body, headers, delay = server.replies.popleft() if server.replies else empty
                if delay:
                    time.sleep(delay)
                data = body if isinstance(body, str) else json.dumps(body)
                payload = data.encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting (a timeout test)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )

    @property
    def root(self) -> str:
        """``http://127.0.0.1:PORT``, as Anthropic's base URL is given (no ``/v1``)."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``, as an OpenAI-compatible base URL is given."""
        return f"{self.root}/v1"

    def reply(
        self,
        body: Any,
        status: int = 200,
        *,
        headers: Mapping[str, str] | None = None,
        delay: float = 0.0,
    ) -> None:
        """Queue one reply (``headers`` sent with it, after ``delay`` seconds)."""
        self.replies.append((status, body, dict(headers or {}), delay))

    def reply_text(self, content: str, model: str = "served-model") -> None:
        """Queue a chat completion with a text answer."""
        self.reply(completion({"role": "assistant", "content": content}, "stop", model))

    def reply_tool_call(self, name: str, args: Mapping[str, Any], call_id: str = "c1") -> None:
        """Queue a chat completion asking for one tool call."""
        call = {
            "id": call_id,
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(args)},
        }
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
        self.reply(completion(message, "tool_calls"))

    def reply_message(
        self, *blocks: Mapping[str, Any], stop: str = "end_turn", model: str = "claude-served"
    ) -> None:
        """Queue an Anthropic Messages answer made of content ``blocks``."""
        self.reply(anthropic_message(list(blocks), stop, model))

    def reply_tool_use(self, name: str, args: Mapping[str, Any], call_id: str = "toolu_1") -> None:
        """Queue an Anthropic Messages answer asking for one tool call (a ``tool_use`` block)."""
        block = {"type": "tool_use", "id": call_id, "name": name, "input": dict(args)}
        self.reply_message({"type": "text", "text": "Let me check."}, block, stop="tool_use")

    def __enter__(self) -> ChatServer:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=10)


def completion(
    message: Mapping[str, Any], finish: str, model: str = "served-model"
) -> dict[str, Any]:
    """A chat completion body with one choice."""
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": model,
        "choices": [{"index": 0, "message": dict(message), "finish_reason": finish}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def anthropic_message(
    content: list[Mapping[str, Any]], stop: str = "end_turn", model: str = "claude-served"
) -> dict[str, Any]:
    """An Anthropic Messages API answer."""
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [dict(block) for block in content],
        "stop_reason": stop,
        "usage": {"input_tokens": 12, "output_tokens": 7},
    }


@pytest.fixture
def chat_server() -> Iterator[ChatServer]:
    """A running :class:`ChatServer` (import this fixture into the test module)."""
    with ChatServer() as server:
        yield server
