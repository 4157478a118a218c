"""The ctx members Hermes added since the seeds, each through a plugin loaded from a folder:
what it does, and how a bad argument is refused (that entry alone, saying why)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from host_helpers import ScriptedModel, text, tool_call
from plugin_builders import PluginHome, home, recorder_module
from recording import noted

from hermes_hooks.host import Session, create_manager
from hermes_hooks.plugins.newer_ctx import extras, redact_text

__all__ = ["home"]

REC = "hermes_test_newer_ctx"


@pytest.fixture
def rec(monkeypatch: pytest.MonkeyPatch) -> Any:
    return recorder_module(monkeypatch, REC, ctx={}, errors={}, seen=[])


def load(home: PluginHome, rec: Any, code: str, key: str = "p", **manifest: Any) -> Any:
    header = f"import {REC} as rec\n"
    home.add_plugin(key, header + code, manifest=manifest or None)
    pm = home.load()
    info = pm.get_plugin_info(key)
    assert info is not None
    assert info.status == "enabled", info.error
    return pm


CATCH = """
def attempt(label, call):
    try:
        return call()
    except Exception as exc:
        rec.errors[label] = f"{type(exc).__name__}: {exc}"
"""


def test_set_config_writes_the_plugins_own_settings_atomically(home: PluginHome, rec: Any) -> None:
    (home.root / "config.yaml").write_text("# keep me\nplugins:\n  enabled: [p]\n")
    pm = load(
        home,
        rec,
        CATCH
        + """
def register(ctx):
    rec.ctx["p"] = ctx
    ctx.set_config("retry.policy", {"max": 3})
    rec.seen.append(ctx.get_config("retry.policy"))
    attempt("key", lambda: ctx.set_config("model.name", "x"))
    attempt("value", lambda: ctx.set_config("blob", object()))
""",
    )
    assert rec.seen == [{"max": 3}]
    assert rec.errors["key"].startswith("ValueError: plugin 'p': config key 'model.name'")
    assert rec.errors["value"].startswith("TypeError: plugin 'p': set_config('blob') needs plain")
    config = yaml.safe_load((home.root / "config.yaml").read_text())
    assert config["plugins"]["entries"]["p"]["settings"] == {"retry": {"policy": {"max": 3}}}
    assert pm.get_plugin_info("p") is not None


def test_state_is_durable_json_per_plugin(home: PluginHome, rec: Any) -> None:
    load(
        home,
        rec,
        CATCH
        + """
def register(ctx):
    ctx.state.set("count", ctx.state.get("count", 0) + 1)
    ctx.state.update({"a": [1, 2]})
    attempt("value", lambda: ctx.state.set("bad", {1, 2}))
    attempt("key", lambda: ctx.state.get(""))
    rec.seen.append(ctx.state.all())
""",
    )
    assert rec.seen == [{"count": 1, "a": [1, 2]}]
    load(home, rec, "def register(ctx):\n    rec.seen.append(ctx.state.get('count'))\n")
    assert rec.seen[-1] == 1  # the same plugin, a new manager: the state survived
    assert rec.errors["value"].startswith("TypeError: plugin 'p': state values must be JSON")
    assert rec.errors["key"].startswith("ValueError")
    saved = json.loads((home.root / "plugin-state" / "p.json").read_text())
    assert saved == {"count": 1, "a": [1, 2]}


def test_emit_and_subscribe_are_namespaced_by_plugin_key(home: PluginHome, rec: Any) -> None:
    home.add_plugin(
        "listener",
        f"import {REC} as rec\n"
        "def register(ctx):\n"
        "    ctx.subscribe('talker:ping', lambda **kw: rec.seen.append(kw))\n",
    )
    pm = load(
        home,
        rec,
        CATCH
        + """
def register(ctx):
    rec.ctx["talker"] = ctx
    attempt("namespaced", lambda: ctx.emit("hermes:ping"))
    attempt("payload", lambda: ctx.emit("ping", ["x"]))
    attempt("callback", lambda: ctx.subscribe("x:y", 3))
""",
        key="talker",
    )
    assert rec.ctx["talker"].emit("ping", {"n": 1}) == 1
    assert rec.ctx["talker"].emit("nobody-listens") == 0
    assert extras(pm).events.wait()
    assert rec.seen == [{"n": 1}]
    assert "may not emit 'hermes:ping'" in rec.errors["namespaced"]
    assert rec.errors["payload"].startswith("TypeError")
    assert rec.errors["callback"].startswith("TypeError")
    pm.unload_plugin("listener")
    assert rec.ctx["talker"].emit("ping", {"n": 2}) == 0  # the subscription left with it


def test_spawn_task_runs_on_the_loop_and_is_cancelled_at_unload(home: PluginHome, rec: Any) -> None:
    pm = load(
        home,
        rec,
        CATCH
        + """
import asyncio

def register(ctx):
    rec.ctx["p"] = ctx
    attempt("loop", lambda: ctx.spawn_task(asyncio.sleep(0)))
    attempt("coro", lambda: ctx.spawn_task(lambda: None))
""",
    )
    assert rec.errors["loop"].startswith("RuntimeError: plugin 'p': spawn_task needs a running")
    assert rec.errors["coro"].startswith("TypeError")

    async def main() -> bool:
        task = rec.ctx["p"].spawn_task(asyncio.sleep(60), name="forever")
        await asyncio.sleep(0)
        pm.unload_plugin("p")
        await asyncio.sleep(0.01)
        return bool(task.cancelled())

    assert asyncio.run(main()) is True


SECTIONS = (
    CATCH
    + """
def register(ctx):
    ctx.register_system_prompt_section("p.rules", lambda info: f"Session {info['session_id']}.")
    ctx.register_system_prompt_section("p.fixed", "Always answer in French.", max_chars=100)
    ctx.register_system_prompt_section("p.broken", lambda info: 1 / 0)
    attempt("id", lambda: ctx.register_system_prompt_section("Bad Id", "x"))
    attempt("dup", lambda: ctx.register_system_prompt_section("p.fixed", "x"))
    attempt("max", lambda: ctx.register_system_prompt_section("p.big", "x", max_chars=9999))
    attempt("pos", lambda: ctx.register_system_prompt_section("p.pos", "x", position="top"))
"""
)


def test_register_system_prompt_section_is_frozen_into_new_sessions(
    home: PluginHome, rec: Any
) -> None:
    pm = load(home, rec, SECTIONS)
    model = ScriptedModel(text("oui"), text("encore"))
    session = Session(pm, model)
    session.run_turn("hi")
    session.run_turn("again")
    first, second = (r["messages"][0]["content"] for r in model.requests)
    assert first == second  # frozen for the session
    assert "## Plugin Context: p.fixed" in first
    assert first.index("p.fixed") < first.index("p.rules")  # sorted by id
    assert f"Session {session.session_id}." in first
    assert "p.broken" not in first  # raised: skipped, the prompt goes on
    assert sorted(rec.errors) == ["dup", "id", "max", "pos"]
    assert "already registered by plugin 'p'" in rec.errors["dup"]


def test_registries_refuse_bad_entries_alone(home: PluginHome, rec: Any) -> None:
    pm = load(
        home,
        rec,
        CATCH
        + """
class Ref:
    prefix = "ticket"
    def resolve(self, value):
        return f"ticket {value}"

class Builtin(Ref):
    prefix = "file"

def register(ctx):
    ctx.register_approval_transport("Slack", lambda request: "deny")
    attempt("transport", lambda: ctx.register_approval_transport("builtin", print))
    attempt("transport-fn", lambda: ctx.register_approval_transport("other", 3))
    rec.seen.append(ctx.register_redaction_patterns([r"tok_[a-z0-9]{8}", ".*", "ab("]))
    ctx.register_auxiliary_task("p_summary", display_name="Summary", description="d",
                                defaults={"model": "small"})
    attempt("aux", lambda: ctx.register_auxiliary_task("vision", display_name="v",
                                                        description="d"))
    attempt("aux-key", lambda: ctx.register_auxiliary_task("bad key", display_name="v",
                                                            description="d"))
    ctx.register_context_reference(Ref())
    attempt("ref", lambda: ctx.register_context_reference(Builtin()))
""",
    )
    found = extras(pm)
    assert list(found.approval_transports) == ["slack"]
    assert rec.seen == [1]
    assert redact_text(pm, "key tok_abcdef12 here") == "key *** here"
    assert found.aux_tasks["p_summary"]["defaults"]["model"] == "small"
    assert found.aux_tasks["p_summary"]["defaults"]["provider"] == "auto"
    assert found.context_references["ticket"][1].resolve("7") == "ticket 7"
    assert "reserved" in rec.errors["transport"]
    assert rec.errors["transport-fn"].startswith("TypeError")
    assert "a built-in task has it" in rec.errors["aux"]
    assert "letters, digits" in rec.errors["aux-key"]
    assert "@file: is a built-in reference" in rec.errors["ref"]
    pm.unload_plugin("p")
    assert (found.approval_transports, found.aux_tasks, found.context_references) == ({}, {}, {})
    assert redact_text(pm, "tok_abcdef12") == "tok_abcdef12"


def test_has_capability_needs_the_manifest_and_the_grant(home: PluginHome, rec: Any) -> None:
    home.entry("p", granted_capabilities=["gateway.platform_actions"])
    code = """
def register(ctx):
    rec.seen.append((ctx.has_capability("gateway.platform_actions"),
                     ctx.has_capability("tools.override"),
                     ctx.platform_actions.add_reaction(platform="telegram", chat_id="1",
                                                       message_id="2", emoji="👍")))
"""
    pm = load(home, rec, code, capabilities=["gateway.platform_actions"])
    granted, undeclared, action = rec.seen[0]
    assert (granted, undeclared) == (True, False)
    assert action == {
        "ok": False,
        "error": "gateway_unavailable",
        "detail": "no live gateway serves platform actions",
    }
    done: list[tuple[str, str, Any]] = []
    extras(pm).platform_action_sink = lambda plugin, verb, args: noted(
        done, (plugin, verb, args), {"id": "r1"}
    )
    ctx = pm.get_context("p")
    assert ctx is not None
    answer = ctx.platform_actions.set_thread_title(
        platform="discord", chat_id="c", thread_id="t", title="New"
    )
    assert answer == {"ok": True, "id": "r1"}
    assert done == [("p", "set_thread_title", {"platform": "discord", "chat_id": "c",
                                                "thread_id": "t", "title": "New"})]  # fmt: skip


def test_has_capability_without_the_grant_is_false(home: PluginHome, rec: Any) -> None:
    code = """
def register(ctx):
    rec.seen.append(ctx.has_capability("gateway.platform_actions"))
    rec.seen.append(ctx.platform_actions.add_reaction(platform="t", chat_id="1",
                                                      message_id="2", emoji="x")["ok"])
"""
    load(home, rec, code, capabilities=["gateway.platform_actions"])
    assert rec.seen == [False, False]


def test_subagent_lifecycle_shows_running_children(
    home: PluginHome, rec: Any, tmp_path: Path
) -> None:
    code = """
def register(ctx):
    rec.ctx["p"] = ctx
    def peek(**kwargs):
        rec.seen.append(ctx.subagent_lifecycle.list_active())
    ctx.register_hook("pre_llm_call", peek)
"""
    home.add_plugin("p", f"import {REC} as rec\n" + code)
    home.write_config()
    pm = create_manager(home.root)  # with the host tools: delegate_task
    model = ScriptedModel(tool_call("delegate_task", {"goal": "look"}), text("child"), text("ok"))
    result = Session(pm, model, cwd=tmp_path).run_turn("delegate")
    assert [c.tool_name for c in result.tool_calls] == ["delegate_task"], result
    outside, inside = rec.seen
    assert outside == []
    (child,) = inside
    assert (child["role"], child["depth"]) == ("leaf", 1)
    assert child["subagent_id"].startswith("subagent-")
    assert rec.ctx["p"].subagent_lifecycle.list_active() == []


TTS_PLUGIN = """
from pathlib import Path
from agent.tts_provider import TTSProvider

class Beep(TTSProvider):
    name = "beep"

    def synthesize(self, text, output_path, *, voice=None, model=None, speed=None,
                   format="mp3", **extra):
        Path(output_path).write_text(f"{format}:{voice}:{text}")
        return output_path

class Taken(Beep):
    name = "edge"

def register(ctx):
    ctx.register_tts_provider(Beep())
    ctx.register_tts_provider(Taken())   # refused alone: a built-in name
    ctx.register_tts_provider("not a provider")
"""


def test_register_tts_provider_serves_tts_provider_and_refuses_builtin_names(
    home: PluginHome, rec: Any, tmp_path: Path
) -> None:
    from hermes_hooks.backends.tts import synthesize

    pm = load(home, rec, TTS_PLUGIN)
    assert pm.tts.names() == ["beep"]
    info = pm.get_plugin_info("p")
    assert info is not None
    warnings = " ".join(info.warnings)
    assert "built-in text-to-speech engine" in warnings
    assert "expected an TTSProvider instance" in warnings
    result = synthesize(pm, "hello", tmp_path / "out" / "a.ogg", voice="v1", format="OGG")
    assert result == {
        "success": True,
        "file_path": str(tmp_path / "out" / "a.ogg"),
        "provider": "beep",
    }
    assert (tmp_path / "out" / "a.ogg").read_text() == "ogg:v1:hello"
