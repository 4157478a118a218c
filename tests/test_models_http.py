"""Every HTTP model call: connect and read timeouts from config, retries on 429 and 5xx with
jittered backoff honouring ``Retry-After``, and a key that is never shown, against real
servers on 127.0.0.1."""

from __future__ import annotations

import json
import subprocess
import sys
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
