"""Every HTTP model call: connect and read timeouts from config, retries on 429 and 5xx with
jittered backoff honouring ``Retry-After``, and a key that is never shown, against real
servers on 127.0.0.1."""

from __future__ import annotations

import gzip
import json
import socket
import subprocess
import sys
import threading
import tracemalloc
from email.utils import formatdate
from pathlib import Path

import pytest
from cli_support import clean_env
from host_helpers import ChatServer, chat_server, completion
from plugin_builders import isolated_home, write_config

from hermes_hooks.backends.models import ModelError, ModelSettings
from hermes_hooks.backends.models.openai_compat import OpenAICompatibleModel
from hermes_hooks.backends.models.retry import (
    MAX_RETRY_AFTER,
    call_with_retries,
    parse_retry_after,
    retry_delay,
)
from hermes_hooks.backends.models.transport import redact

__all__ = ["chat_server"]

SECRET = "sk-test-0123456789abcdef"


def test_retry_after_in_seconds_or_as_a_date() -> None:
    assert parse_retry_after("2") == 2.0
    assert parse_retry_after(" 1.5 ") == 1.5
    assert parse_retry_after("-3") == 0.0
    assert parse_retry_after(formatdate(1_000_030, usegmt=True), now=1_000_000) == 30.0
    assert parse_retry_after("soon") is None
    assert parse_retry_after(None) is None


def test_the_backoff_is_jittered_doubled_and_bows_to_retry_after() -> None:
    error = ModelError("busy", retryable=True, reason="server_error")
    waits = {retry_delay(0, error, backoff=1.0) for _ in range(50)}
    assert all(w is not None and 0.5 <= w <= 1.5 for w in waits)
    assert len(waits) > 1  # jittered: not all the same
    assert all(1.0 <= (retry_delay(2, error, backoff=0.5) or 0) <= 3.0 for _ in range(20))
    limited = ModelError("slow down", retryable=True, reason="rate_limit", retry_after=7.0)
    assert retry_delay(0, limited, backoff=0.1) == 7.0
    too_long = ModelError("later", retryable=True, retry_after=MAX_RETRY_AFTER + 1)
    assert retry_delay(0, too_long, backoff=1.0) is None
    assert retry_delay(0, ModelError("bad key", reason="auth"), backoff=1.0) is None


def test_a_429_with_retry_after_is_waited_for_then_retried(chat_server: ChatServer) -> None:
    chat_server.reply(
        {"error": {"message": "rate limited"}}, status=429, headers={"Retry-After": "3"}
    )
    chat_server.reply({"error": {"message": "upstream"}}, status=502)
    chat_server.reply_text("third time lucky")
    model = OpenAICompatibleModel(chat_server.base_url, "m")
    waited: list[float] = []
    response = call_with_retries(
        lambda: model.complete([{"role": "user", "content": "x"}]),
        max_retries=2,
        backoff=0.0,
        sleep=waited.append,
    )
    model.close()
    assert response.text == "third time lucky"
    assert waited == [3.0, 0.0]  # Retry-After honoured; no backoff configured
    assert len(chat_server.requests) == 3


def test_retries_stop_at_max_retries_and_a_4xx_is_not_retried(chat_server: ChatServer) -> None:
    model = OpenAICompatibleModel(chat_server.base_url, "m")
    for _ in range(3):
        chat_server.reply("down", status=503)
    with pytest.raises(ModelError, match="answered HTTP 503"):
        call_with_retries(
            lambda: model.complete([]), max_retries=1, backoff=0, sleep=lambda s: None
        )
    assert len(chat_server.requests) == 2
    chat_server.replies.clear()
    chat_server.reply({"error": {"message": "bad model"}}, status=400)
    with pytest.raises(ModelError, match="bad model"):
        call_with_retries(
            lambda: model.complete([]), max_retries=3, backoff=0, sleep=lambda s: None
        )
    assert len(chat_server.requests) == 3
    model.close()


def test_the_read_timeout_comes_from_config(chat_server: ChatServer) -> None:
    settings = ModelSettings.from_config(
        {"model": {"provider": "openai-compatible", "base_url": chat_server.base_url,
                   "name": "m", "read_timeout": 0.3, "connect_timeout": 2}}
    )  # fmt: skip
    model = OpenAICompatibleModel.from_settings(settings)
    assert (model.timeouts.connect, model.timeouts.read) == (2.0, 0.3)
    chat_server.reply(completion({"role": "assistant", "content": "too late"}, "stop"), delay=2.0)
    with pytest.raises(ModelError, match=r"read timeout of 0.3 s \(model.read_timeout\)") as caught:
        model.complete([{"role": "user", "content": "x"}])
    assert (caught.value.reason, caught.value.retryable) == ("timeout", True)
    model.close()


def test_a_key_the_server_echoes_is_redacted_from_the_error(chat_server: ChatServer) -> None:
    chat_server.reply({"error": {"message": f"Incorrect API key provided: {SECRET}"}}, status=401)
    model = OpenAICompatibleModel(chat_server.base_url, "m", api_key=SECRET)
    with pytest.raises(ModelError) as caught:
        model.complete([{"role": "user", "content": "x"}])
    model.close()
    assert SECRET not in str(caught.value)
    assert "Incorrect API key provided: ***" in str(caught.value)
    assert redact(f"a {SECRET} b {SECRET}", [SECRET, ""]) == "a *** b ***"


def test_the_host_turn_retries_with_retry_after_and_says_how_long(
    chat_server: ChatServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = isolated_home(tmp_path, monkeypatch)
    write_config(
        home,
        model={"provider": "openai-compatible", "base_url": chat_server.base_url, "name": "m",
               "retry_backoff": 0, "max_retries": 2},
    )  # fmt: skip
    chat_server.reply({"error": {"message": "slow down"}}, status=429, headers={"Retry-After": "1"})
    chat_server.reply(completion({"role": "assistant", "content": "after the wait"}, "stop"))
    result = subprocess.run(
        [sys.executable, "-m", "hermes_hooks", "-z", "hello", "--json"],
        env=clean_env(home, HERMES_BUNDLED_PLUGINS=str(tmp_path / "bundled-empty")),
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["answer"] == "after the wait"
    (error,) = [e for e in data["events"] if e["type"] == "api_error"]
    assert (error["retry_count"], error["retry_in"]) == (0, 1.0)
    assert "HTTP 429: slow down" in error["error"]
    hooks = [e["hook"] for e in data["events"] if e["type"] == "hook"]
    assert hooks.count("api_request_error") == 1
    assert hooks.count("pre_api_request") == 2
    first, second = chat_server.requests
    assert second["at"] - first["at"] >= 1.0  # the server's Retry-After was honoured


def test_debug_output_and_errors_never_show_the_key(
    chat_server: ChatServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = isolated_home(tmp_path, monkeypatch)
    write_config(
        home,
        model={"provider": "openai-compatible", "base_url": chat_server.base_url, "name": "m",
               "api_key_env": "TEST_SECRET_KEY", "max_retries": 0},
    )  # fmt: skip
    chat_server.reply({"error": {"message": f"key {SECRET} is revoked"}}, status=401)
    result = subprocess.run(
        [sys.executable, "-m", "hermes_hooks", "--debug", "-z", "hello", "--json"],
        env=clean_env(home, TEST_SECRET_KEY=SECRET,
                      HERMES_BUNDLED_PLUGINS=str(tmp_path / "bundled-empty")),
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert chat_server.requests[0]["headers"]["Authorization"] == f"Bearer {SECRET}"
    assert result.returncode == 1
    assert "key *** is revoked" in result.stdout
    assert "POST " in result.stderr
    assert "'Authorization': '***'" in result.stderr
    assert SECRET not in result.stdout + result.stderr


# --- issue 26, items 11 and 12: a deadline for the whole request, a bound on the decoded size ---


class RawServer:
    """One HTTP/1.1 answer per connection on 127.0.0.1: headers, then the body in timed pieces."""

    def __init__(self, headers: dict[str, str], pieces: list[bytes], pause: float = 0.0) -> None:
        self.headers, self.pieces, self.pause = headers, pieces, pause
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"

    def serve(self) -> None:
        self.sock.settimeout(0.1)
        while not self.stopped.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            with conn:
                read_request(conn)
                head = "HTTP/1.1 200 OK\r\n" + "".join(
                    f"{k}: {v}\r\n" for k, v in self.headers.items()
                )
                try:
                    conn.sendall(head.encode() + b"\r\n")
                    for piece in self.pieces:
                        if self.stopped.wait(self.pause):
                            break
                        conn.sendall(piece)
                except OSError:
                    pass  # the client hung up: what the bounds are for

    def close(self) -> None:
        self.stopped.set()
        self.thread.join(timeout=5)
        self.sock.close()


def read_request(conn: socket.socket) -> None:
    """Read a whole request (closing a socket with unread bytes would reset the connection)."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += conn.recv(65536)
    head, _, rest = data.partition(b"\r\n\r\n")
    length = next(
        (int(line.split(b":")[1]) for line in head.split(b"\r\n")
         if line.lower().startswith(b"content-length:")),
        0,
    )  # fmt: skip
    while len(rest) < length:
        rest += conn.recv(65536)


def answer_bytes(content: str) -> bytes:
    return json.dumps(completion({"role": "assistant", "content": content}, "stop")).encode()


def test_model_timeout_bounds_the_whole_request_against_a_byte_a_tick(tmp_path: Path) -> None:
    """Headers, then one byte every 0.1 s for ~30 s: each read is well inside the read timeout,
    yet ``model.timeout`` (0.5 s) ends the request (item 11)."""
    body = answer_bytes("x" * 200)
    server = RawServer(
        {"Content-Type": "application/json", "Content-Length": str(len(body))},
        [body[i : i + 1] for i in range(len(body))],
        pause=0.1,
    )
    settings = ModelSettings.from_config(
        {"model": {"provider": "openai-compatible", "base_url": server.base_url, "name": "m",
                   "timeout": 0.5, "read_timeout": 5}}
    )  # fmt: skip
    assert settings.deadline == 0.5
    model = OpenAICompatibleModel.from_settings(settings)
    try:
        with pytest.raises(ModelError, match=r"more than 0.5 s \(model.timeout\)") as caught:
            model.complete([{"role": "user", "content": "x"}])
    finally:
        model.close()
        server.close()
    assert (caught.value.reason, caught.value.retryable) == ("timeout", True)


def test_a_gzip_bomb_is_refused_at_the_decoded_bound_without_inflating_it(
    tmp_path: Path,
) -> None:
    """32 KB of gzip that would inflate to 32 MB: refused at ``model.max_response_bytes``
    (256 KiB here) with never more than a few chunks in memory (item 12)."""
    bomb = gzip.compress(b"\0" * (32 * 1024 * 1024), compresslevel=9)
    assert len(bomb) < 64 * 1024
    server = RawServer(
        {"Content-Type": "application/json", "Content-Encoding": "gzip",
         "Content-Length": str(len(bomb))},
        [bomb],
    )  # fmt: skip
    settings = ModelSettings.from_config(
        {"model": {"provider": "openai-compatible", "base_url": server.base_url, "name": "m",
                   "max_response_bytes": 256 * 1024}}
    )  # fmt: skip
    model = OpenAICompatibleModel.from_settings(settings)
    tracemalloc.start()
    try:
        with pytest.raises(ModelError, match=r"larger than 262144 bytes once decoded") as caught:
            model.complete([{"role": "user", "content": "x"}])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        model.close()
        server.close()
    assert caught.value.reason == "bad_response"
    assert peak < 4 * 1024 * 1024, peak


def test_a_plain_answer_past_the_bound_is_refused_and_one_within_it_read(tmp_path: Path) -> None:
    big = answer_bytes("y" * 300_000)
    small = answer_bytes("fits")
    for body, fits in ((big, False), (small, True)):
        server = RawServer(
            {"Content-Type": "application/json", "Content-Length": str(len(body))}, [body]
        )
        model = OpenAICompatibleModel(server.base_url, "m", max_response_bytes=256 * 1024)
        try:
            if fits:
                assert model.complete([{"role": "user", "content": "x"}]).text == "fits"
            else:
                with pytest.raises(ModelError, match="larger than 262144 bytes"):
                    model.complete([{"role": "user", "content": "x"}])
        finally:
            model.close()
            server.close()


def test_a_key_read_with_a_trailing_cr_is_stripped_and_never_shown(
    chat_server: ChatServer,
) -> None:
    """A key from a CRLF file (issue 26, item 10) is sent stripped, and neither it nor its
    lower-cased, URL-encoded, base64 or truncated forms appear in an error."""
    import base64
    import urllib.parse

    encoded = base64.b64encode(SECRET.encode()).decode()
    echoed = (
        f"bad key {SECRET}; lower {SECRET.lower()}; upper {SECRET.upper()}; url "
        f"{urllib.parse.quote(SECRET + '/x', safe='')}; b64 {encoded}; cut {SECRET[:14]}..."
    )
    chat_server.reply({"error": {"message": echoed}}, status=401)
    model = OpenAICompatibleModel(chat_server.base_url, "m", api_key=SECRET + "\r")
    with pytest.raises(ModelError) as caught:
        model.complete([{"role": "user", "content": "x"}])
    model.close()
    assert chat_server.requests[0]["headers"]["Authorization"] == f"Bearer {SECRET}"
    shown = str(caught.value)
    for form in (SECRET, SECRET.lower(), SECRET.upper(), encoded, SECRET[:14],
                 urllib.parse.quote(SECRET + "/x", safe="")[:20]):  # fmt: skip
        assert form not in shown, form
    assert shown.count("***") >= 6


def test_a_key_with_a_control_character_inside_is_refused_without_showing_it() -> None:
    with pytest.raises(ModelError, match="API key") as caught:
        OpenAICompatibleModel("http://127.0.0.1:9/v1", "m", api_key=SECRET[:8] + "\n" + SECRET)
    assert SECRET not in str(caught.value)
    assert SECRET[:8] not in str(caught.value)
