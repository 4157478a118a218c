"""``ctx.llm``: the host's active model for plugins, and the trust policy on overrides."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from host_helpers import ChatServer, ScriptedModel, chat_server, text
from plugin_builders import isolated_home, user_plugin, write_config

from hermes_hooks.backends.models import ModelResponse, get_active_model
from hermes_hooks.backends.models.openai_compat import OpenAICompatibleModel
from hermes_hooks.backends.models.plugin_llm import PluginLlm, TrustPolicy
from hermes_hooks.errors import PluginLlmTrustError
from hermes_hooks.host import Session, create_manager
from hermes_hooks.plugins.manager import PluginManager

__all__ = ["chat_server"]


def manager(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    llm: dict[str, object] | None = None,
    **config: Any,
) -> PluginManager:
    home = isolated_home(tmp_path, monkeypatch)
    user_plugin(home, "helper", "def register(ctx):\n    pass\n")
    entries = {"helper": {"llm": llm}} if llm is not None else {}
    write_config(home, ["helper"], entries=entries, **config)
    return create_manager(home)


def test_complete_runs_on_the_active_model_of_the_running_host(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pm = manager(tmp_path, monkeypatch)
    model = ScriptedModel(ModelResponse(text="summary", model="scripted-served"))
    session = Session(pm, model)
    assert get_active_model(pm) is model
    result = PluginLlm(pm, "helper").complete(
        [{"role": "user", "content": "summarise"}], temperature=0.2, purpose="test"
    )
    assert (result.text, result.provider, result.model) == (
        "summary",
        "scripted",
        "scripted-served",
    )
    assert result.audit == {"plugin_id": "helper", "purpose": "test", "profile": ""}
    assert (result.agent_id, result.usage.total_tokens) == ("default", 0)
    assert model.requests[0]["temperature"] == 0.2
    session.close()
    assert get_active_model(pm) is None


def test_without_a_host_it_uses_the_configured_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pm = manager(tmp_path, monkeypatch)
    result = PluginLlm(pm, "helper").complete([{"role": "user", "content": "hi"}])
    assert result.provider == "offline"
    assert "stand-in" in result.text


@pytest.mark.parametrize(
    ("llm", "kwargs", "match"),
    [
        (None, {"model": "other"}, r"may not choose the model.*helper.llm.allow_model_override"),
        (None, {"provider": "offline"}, r"may not choose the provider"),
        (
            {"allow_model_override": True, "allowed_models": ["a"]},
            {"model": "b"},
            r"not in .*allowed_models \(a\)",
        ),
        (
            {"allow_provider_override": "yes"},
            {"provider": "offline"},
            r"may not choose the provider",
        ),
    ],
)
def test_overrides_without_trust_are_refused(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    llm: dict[str, object] | None,
    kwargs: dict[str, Any],
    match: str,
) -> None:
    pm = manager(tmp_path, monkeypatch, llm)
    with pytest.raises(PluginLlmTrustError, match=match) as caught:
        PluginLlm(pm, "helper").complete([{"role": "user", "content": "x"}], **kwargs)
    assert isinstance(caught.value, PermissionError)


def test_a_trusted_model_override_goes_to_the_active_provider(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pm = manager(tmp_path, monkeypatch, {"allow_model_override": True, "allowed_models": ["*"]})
    model = ScriptedModel(text("ok"))
    Session(pm, model)
    result = PluginLlm(pm, "helper").complete([{"role": "user", "content": "x"}], model="Big-1")
    assert (result.model, model.requests[0]["model"]) == ("Big-1", "Big-1")


def test_a_trusted_provider_override_reaches_another_provider(
    chat_server: ChatServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    llm = {
        "allow_provider_override": True,
        "allowed_providers": ["openai-compatible"],
        "allow_model_override": True,
    }
    model_section = {"base_url": chat_server.base_url, "name": "configured"}
    pm = manager(tmp_path, monkeypatch, llm, model=model_section)
    chat_server.reply_text("from the server")
    result = PluginLlm(pm, "helper").complete(
        [{"role": "user", "content": "x"}], provider="OpenAI-Compatible", model="chosen"
    )
    assert (result.text, result.provider) == ("from the server", "openai-compatible")
    assert chat_server.requests[0]["json"]["model"] == "chosen"


def test_complete_structured_parses_json(
    chat_server: ChatServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pm = manager(tmp_path, monkeypatch)
    schema = {"type": "object", "properties": {"mood": {"type": "string"}}}
    llm = PluginLlm(pm, "helper")
    offline = llm.complete_structured("Rate the mood", ["I love it"], schema)
    assert (offline.parsed, offline.content_type) == ({"mood": ""}, "json")

    chat_server.reply_text('```json\n{"mood": "happy"}\n```')
    remote = OpenAICompatibleModel(chat_server.base_url, "m")
    Session(pm, remote)
    image = {"type": "image", "data": b"\x89PNG", "mime_type": "image/png"}
    result = llm.complete_structured("Rate the mood", ["I love it", image], json_schema=schema)
    assert (result.parsed, result.content_type) == ({"mood": "happy"}, "json")
    sent = chat_server.requests[0]["json"]
    assert sent["response_format"]["json_schema"]["schema"] == schema
    parts = sent["messages"][-1]["content"]
    assert parts[1] == {"type": "text", "text": "I love it"}
    assert parts[2]["image_url"]["url"].startswith("data:image/png;base64,")
    assert "JSON object" in sent["messages"][0]["content"]
    remote.close()


def test_complete_structured_checks_its_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    llm = PluginLlm(manager(tmp_path, monkeypatch), "helper")
    with pytest.raises(ValueError, match="non-empty instructions"):
        llm.complete_structured(" ", ["x"])
    with pytest.raises(ValueError, match="at least one input block"):
        llm.complete_structured("do", [])
    with pytest.raises(ValueError, match="unknown input block"):
        llm.complete_structured("do", [{"type": "video"}])
    plain = llm.complete_structured("do", ["x"])
    assert (plain.parsed, plain.content_type) == (None, "text")


def test_policy_allowlists_ignore_case_and_accept_a_star() -> None:
    policy = TrustPolicy.from_entry(
        "p", {"llm": {"allow_model_override": True, "allowed_models": ["GPT-X", 3]}}
    )
    policy.check(None, "gpt-x")
    assert policy.allowed_models == frozenset({"gpt-x"})
    star = TrustPolicy.from_entry(
        "p", {"llm": {"allow_provider_override": True, "allowed_providers": ["*"]}}
    )
    star.check("anything", None)
    assert TrustPolicy.from_entry("p", {"llm": "yes"}) == TrustPolicy("p")


def test_ctx_llm_in_a_real_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = isolated_home(tmp_path, monkeypatch)
    user_plugin(
        home,
        "summariser",
        """
        from hermes_hooks import PluginLlmTrustError

        def register(ctx):
            def summarise(raw_args):
                answer = ctx.llm.complete([{"role": "user", "content": raw_args}])
                try:
                    ctx.llm.complete([{"role": "user", "content": "x"}], model="other")
                except PluginLlmTrustError as exc:
                    return f"{answer.text} / refused: {exc}"
                return answer.text

            ctx.register_command("summarise", summarise)
        """,
    )
    write_config(home, ["summariser"])
    session = Session(create_manager(home), ScriptedModel(text("short version")))
    (reply,) = session.send("/summarise a long text")
    assert reply.text.startswith("short version / refused: plugin 'summariser' may not choose")


def test_usage_follows_hermes_and_reads_both_shapes() -> None:
    from hermes_hooks.backends.models.plugin_llm import PluginLlmUsage

    openai = PluginLlmUsage.from_mapping({"prompt_tokens": 7, "completion_tokens": 3})
    assert (openai.input_tokens, openai.output_tokens, openai.total_tokens) == (7, 3, 10)
    anthropic = PluginLlmUsage.from_mapping(
        {"input_tokens": 5, "output_tokens": 2, "total_tokens": 9, "cache_read_input_tokens": 4}
    )
    assert (anthropic.total_tokens, anthropic.cache_read_tokens) == (9, 4)
    assert PluginLlmUsage.from_mapping(None) == PluginLlmUsage()


def test_agent_id_and_profile_need_their_own_grants(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pm = manager(tmp_path, monkeypatch)
    llm = PluginLlm(pm, "helper")
    with pytest.raises(PluginLlmTrustError, match=r"agent id.*allow_agent_id_override: true"):
        llm.complete([{"role": "user", "content": "x"}], agent_id="reviewer")
    with pytest.raises(PluginLlmTrustError, match=r"auth profile.*allow_profile_override"):
        llm.complete([{"role": "user", "content": "x"}], profile="work")
    (tmp_path / "granted").mkdir()
    granted = manager(
        tmp_path / "granted",
        monkeypatch,
        {"allow_agent_id_override": True, "allow_profile_override": True},
    )
    model = ScriptedModel(ModelResponse(text="ok", usage={"prompt_tokens": 2}))
    Session(granted, model)
    result = PluginLlm(granted, "helper").complete(
        [{"role": "user", "content": "x"}], agent_id="reviewer", profile="work", timeout=5
    )
    assert (result.agent_id, result.audit["profile"], result.usage.input_tokens) == (
        "reviewer",
        "work",
        2,
    )


def test_async_calls_and_hermes_input_blocks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import asyncio

    from hermes_hooks.backends.models.plugin_llm import PluginLlmImageInput, PluginLlmTextInput

    pm = manager(tmp_path, monkeypatch)
    model = ScriptedModel(text("first"), text('{"ok": true}'))
    Session(pm, model)
    llm = PluginLlm(pm, "helper")

    async def both() -> tuple[str, object]:
        plain = await llm.acomplete([{"role": "user", "content": "hi"}], purpose="async")
        blocks: list[PluginLlmTextInput | PluginLlmImageInput] = [
            PluginLlmTextInput("look"),
            PluginLlmImageInput(url="https://x.test/a.png"),
        ]
        structured = await llm.acomplete_structured(
            "Check", blocks, json_mode=True, schema_name="verdict"
        )
        return plain.text, (structured.parsed, structured.audit["schema_name"])

    assert asyncio.run(both()) == ("first", ({"ok": True}, "verdict"))
    parts = model.requests[1]["messages"][-1]["content"]
    assert parts[0]["text"].startswith("Check\n\nSchema name: verdict")
    assert parts[1:] == [
        {"type": "text", "text": "look"},
        {"type": "image_url", "image_url": {"url": "https://x.test/a.png"}},
    ]


def test_the_seeds_allow_list_reaches_both_bundled_profiles(
    chat_server: ChatServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``allowed_providers: [openrouter, anthropic]``, as the seed writes it: local servers stand
    in for both endpoints, an alias matches its profile, another profile is refused."""
    home = isolated_home(tmp_path, monkeypatch, bundled=True)
    user_plugin(
        home,
        "my-plugin",
        """
        from hermes_hooks import PluginLlmTrustError

        def register(ctx):
            def ask(raw_args, **kwargs):
                said = []
                for provider in ("openrouter", "claude"):
                    result = ctx.llm.complete(
                        [{"role": "user", "content": raw_args}], provider=provider
                    )
                    said.append(f"{result.provider}/{result.model}: {result.text}")
                try:
                    ctx.llm.complete([{"role": "user", "content": "x"}], provider="openai")
                except PluginLlmTrustError as exc:
                    said.append(f"refused: {exc}")
                return " | ".join(said)

            ctx.register_command("ask", ask)
        """,
    )
    with ChatServer() as anthropic:
        write_config(
            home,
            ["my-plugin"],
            entries={
                "my-plugin": {
                    "llm": {
                        "allow_provider_override": True,
                        "allowed_providers": ["openrouter", "anthropic"],
                    }
                }
            },
            model={"retry_backoff": 0},
            providers={
                "openrouter": {"base_url": chat_server.base_url},
                "anthropic": {"base_url": anthropic.root},
            },
        )
        monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-test")
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
        chat_server.reply_text("routed", model="openai/gpt-4.1")
        anthropic.reply_message({"type": "text", "text": "claude here"})
        session = Session(create_manager(home), ScriptedModel(text("unused")))
        (reply,) = session.send("/ask hello")
        sent = anthropic.requests[0]
    assert reply.text.startswith(
        "openrouter/openai/gpt-4.1: routed | anthropic/claude-served: claude here | refused: "
        "plugin 'my-plugin' asked for provider 'openai'"
    )
    (routed,) = chat_server.requests
    assert routed["headers"]["Authorization"] == "Bearer sk-or-test"
    assert routed["json"]["messages"] == [{"role": "user", "content": "hello"}]
    assert (sent["path"], sent["headers"]["x-api-key"]) == ("/v1/messages", "sk-ant-test")
    assert sent["json"]["model"] == "claude-sonnet-4-5"  # the profile's first suggestion
