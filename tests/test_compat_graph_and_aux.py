"""What Hermes' teams_pipeline plugin imports: the Microsoft Graph token provider and client
(against a Graph-protocol server on 127.0.0.1), ``agent.auxiliary_client`` on the host's model,
and ``tools.transcription_tools``."""

from __future__ import annotations

import asyncio
import importlib
import json
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from host_helpers import ScriptedModel
from plugin_builders import isolated_home

from hermes_hooks.backends.models import ModelResponse
from hermes_hooks.host import Session, create_manager
from hermes_hooks.plugins.manager import PluginManager


def served(name: str) -> Any:
    """Import a Hermes module the compatibility layer serves (untyped, as plugins see it)."""
    return importlib.import_module(name)


@pytest.fixture
def pm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> PluginManager:
    return create_manager(isolated_home(tmp_path, monkeypatch))


class GraphServer:
    """The token endpoint and a few Graph routes, with a 401 and a 429 to recover from."""

    def __init__(self) -> None:
        self.tokens = 0
        self.seen_auth: list[str] = []
        self.throttled = False
        self.port = 0
        self._runner: web.AppRunner | None = None

    async def token(self, request: web.Request) -> web.Response:
        form = await request.post()
        if form.get("client_secret") != "s3cret":
            return web.json_response({"error_description": "bad secret"}, status=401)
        self.tokens += 1
        return web.json_response({"access_token": f"tok{self.tokens}", "expires_in": 3600})

    async def me(self, request: web.Request) -> web.Response:
        self.seen_auth.append(request.headers["Authorization"])
        if request.headers["Authorization"] == "Bearer tok1":  # the first token is revoked
            return web.json_response(
                {"error": {"code": "InvalidAuth", "message": "no"}}, status=401
            )
        return web.json_response({"displayName": "Hermes"})

    async def items(self, request: web.Request) -> web.Response:
        if not self.throttled:
            self.throttled = True
            return web.json_response({}, status=429, headers={"Retry-After": "0"})
        if request.query.get("page") == "2":
            return web.json_response({"value": [3]})
        link = f"http://127.0.0.1:{self.port}/v1.0/items?page=2"
        return web.json_response({"value": [1, 2], "@odata.nextLink": link})

    async def blob(self, request: web.Request) -> web.Response:
        return web.Response(body=b"recording-bytes", content_type="video/mp4")

    async def __aenter__(self) -> GraphServer:
        app = web.Application()
        app.router.add_post("/tenant-1/oauth2/v2.0/token", self.token)
        app.router.add_get("/v1.0/me", self.me)
        app.router.add_get("/v1.0/items", self.items)
        app.router.add_get("/v1.0/blob", self.blob)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = self._runner.addresses[0][1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._runner is not None
        await self._runner.cleanup()


def test_graph_tokens_retries_pages_and_downloads(
    pm: PluginManager, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    auth = served("tools.microsoft_graph_auth")
    client_module = served("tools.microsoft_graph_client")
    with pytest.raises(auth.MicrosoftGraphConfigError, match="MSGRAPH_TENANT_ID"):
        auth.GraphCredentials.from_env({})
    assert auth.GraphCredentials.from_env({}, required=False) is None

    async def scenario() -> None:
        async with GraphServer() as server:
            base = f"http://127.0.0.1:{server.port}"
            env = {
                "MSGRAPH_TENANT_ID": "tenant-1",
                "MSGRAPH_CLIENT_ID": "app",
                "MSGRAPH_CLIENT_SECRET": "s3cret",
                "MSGRAPH_AUTHORITY_URL": base,
            }
            provider = auth.MicrosoftGraphTokenProvider.from_env(env)
            client = client_module.MicrosoftGraphClient(provider, base_url=f"{base}/v1.0")
            assert await client.get_json("/me") == {"displayName": "Hermes"}
            assert server.seen_auth == ["Bearer tok1", "Bearer tok2"]  # refreshed after 401
            assert await client.collect_paginated("items") == [1, 2, 3]  # after a 429
            result = await client.download_to_file("/blob", tmp_path / "out" / "rec.mp4")
            assert Path(result["path"]).read_bytes() == b"recording-bytes"
            assert result["content_type"] == "video/mp4"
            health = provider.inspect_token_health()
            assert (health["cached"], health["token_url"]) == (
                True,
                f"{base}/tenant-1/oauth2/v2.0/token",
            )
            bad = auth.MicrosoftGraphTokenProvider.from_env(env | {"MSGRAPH_CLIENT_SECRET": "x"})
            with pytest.raises(auth.MicrosoftGraphTokenError, match="HTTP 401: bad secret"):
                await bad.get_access_token()

    asyncio.run(scenario())


def test_auxiliary_calls_run_on_the_active_model(pm: PluginManager) -> None:
    aux = served("agent.auxiliary_client")
    model = ScriptedModel(ModelResponse(text="<think>hmm</think>A short title", model="m1"))
    session = Session(pm, model)
    try:
        with pm.activate():
            response = asyncio.run(
                aux.async_call_llm("title_generation", messages=[{"role": "user", "content": "x"}])
            )
        assert response.model == "m1"
        assert aux.extract_content_or_reasoning(response) == "A short title"
        assert model.requests[0]["messages"][-1]["content"] == "x"
    finally:
        session.close()
    empty = type("R", (), {})()
    message = type("M", (), {"content": "", "reasoning_content": "because"})()
    empty.choices = [type("C", (), {"message": message})()]
    assert aux.extract_content_or_reasoning(empty) == "because"


def test_transcribe_audio_answers_hermes_envelope(pm: PluginManager, tmp_path: Path) -> None:
    tools = served("tools.transcription_tools")
    with pm.activate():
        missing = tools.transcribe_audio(str(tmp_path / "none.ogg"))
        audio = tmp_path / "a.ogg"
        audio.write_bytes(b"OggS")
        no_provider = tools.transcribe_audio(str(audio))
    assert (missing["success"], missing["transcript"]) == (False, "")
    assert "no audio file" in missing["error"]
    assert no_provider["success"] is False
    assert json.dumps(no_provider)  # a plain envelope
