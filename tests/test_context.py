"""Tests for hermes_hooks.plugins.context: what ``register(ctx)`` receives and what it can do."""

from __future__ import annotations

import importlib
import inspect
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from plugin_builders import PluginHome, home, info

from hermes_hooks.plugins import extensions
from hermes_hooks.plugins.context import PluginContext
from hermes_hooks.plugins.manager import PluginManager
from hermes_hooks.plugins.manifest import PluginManifest
from hermes_hooks.registries.base import Handle

__all__ = ["home"]  # the fixture, imported for pytest


CAPTURE = """
captured = {}

def register(ctx):
    captured["ctx"] = ctx
"""


def context_of(pm: PluginManager, key: str) -> PluginContext:
    """Return the context plugin ``key`` was loaded with, failing when it did not load."""
    assert info(pm, key).status == "enabled", info(pm, key).error
    ctx = pm.get_context(key)
    assert isinstance(ctx, PluginContext)
    return ctx


# --- identity ------------------------------------------------------------------------------------


def test_manifest_and_plugin_id(home: PluginHome) -> None:
    folder = home.add_plugin(
        "ctx_ident", CAPTURE, manifest={"version": "2.1.0", "description": "Who am I"}
    )
    pm = home.load()

    ctx = context_of(pm, "ctx_ident")

    assert isinstance(ctx.manifest, PluginManifest)
    assert (ctx.manifest.name, ctx.manifest.version) == ("ctx_ident", "2.1.0")
    assert ctx.manifest.description == "Who am I"
    assert ctx.plugin_id == "ctx_ident"
    assert ctx.path == folder
    assert repr(ctx) == "<PluginContext 'ctx_ident'>"


def test_plugin_id_is_the_category_key(home: PluginHome) -> None:
    home.add_plugin("image_gen/ctx_cat", CAPTURE)
    pm = home.load()

    ctx = context_of(pm, "image_gen/ctx_cat")

    assert ctx.plugin_id == "image_gen/ctx_cat"
    assert ctx.manifest.name == "ctx_cat"


def test_plugin_sees_its_context_during_register(home: PluginHome) -> None:
    home.add_plugin(
        "ctx_during",
        """
        seen = {}

        def register(ctx):
            seen["id"] = ctx.plugin_id
            seen["name"] = ctx.manifest.name
            handle = ctx.register_tool("ctx_during_tool", "demo", {}, lambda a, **k: "ok")
            seen["handle"] = handle
        """,
    )
    pm = home.load()
    context_of(pm, "ctx_during")

    module = importlib.import_module("hermes_plugins.ctx_during")

    assert module.seen["id"] == "ctx_during"
    assert module.seen["name"] == "ctx_during"
    assert isinstance(module.seen["handle"], Handle)
    assert module.seen["handle"].owner == "ctx_during"


def test_context_methods_are_hermes_named() -> None:
    def params(method: Any) -> list[str]:
        return list(inspect.signature(method).parameters)[1:]

    assert params(PluginContext.register_hook) == ["hook_name", "callback"]
    assert params(PluginContext.register_command) == [
        "name",
        "handler",
        "description",
        "args_hint",
        "argument_mode",
    ]
    assert params(PluginContext.register_cli_command) == [
        "name",
        "help",
        "setup_fn",
        "handler_fn",
        "description",
    ]
    assert params(PluginContext.register_skill) == ["name", "path", "description", "frontmatter"]
    assert params(PluginContext.dispatch_tool) == ["tool_name", "args", "kwargs"]
    assert params(PluginContext.inject_message) == ["content", "role", "session_key"]
    assert params(PluginContext.get_config) == ["key", "default"]


def test_register_hook_by_hermes_keyword_names(home: PluginHome) -> None:
    home.add_plugin(
        "ctx_hook",
        """
        started = []

        def register(ctx):
            ctx.register_hook(hook_name="on_session_start",
                              callback=lambda session_id: started.append(session_id))
        """,
    )
    pm = home.load()
    context_of(pm, "ctx_hook")

    pm.invoke_hook("on_session_start", session_id="s1", model="m", platform="cli")

    module = importlib.import_module("hermes_plugins.ctx_hook")

    assert module.started == ["s1"]
    assert info(pm, "ctx_hook").hooks == ("on_session_start",)


# --- dispatch_tool -------------------------------------------------------------------------------


def test_dispatch_tool_calls_any_registered_tool(home: PluginHome) -> None:
    home.add_plugin(
        "ctx_dispatch",
        """
        def register(ctx):
            ctx.register_tool("ctx_dispatch_upper", "demo", {},
                              lambda args, **kw: args["text"].upper() + kw.get("suffix", ""))
        """,
    )
    home.add_plugin("ctx_caller", CAPTURE)
    home.write_config()
    pm = home.manager()
    pm.tools.register_tool("host_echo", "host", {}, lambda args, **kw: "host:" + args["text"])
    pm.discover_and_load()

    ctx = context_of(pm, "ctx_caller")

    assert ctx.dispatch_tool("ctx_dispatch_upper", {"text": "hi"}) == "HI"
    assert ctx.dispatch_tool("ctx_dispatch_upper", {"text": "hi"}, suffix="!") == "HI!"
    assert ctx.dispatch_tool(tool_name="host_echo", args={"text": "x"}) == "host:x"
    error = json.loads(ctx.dispatch_tool("host_ecko", {}))["error"]
    assert "Unknown tool: 'host_ecko'" in error
    assert "'host_echo'" in error


# --- inject_message ------------------------------------------------------------------------------


def test_inject_message_without_session_is_false(home: PluginHome) -> None:
    home.add_plugin("ctx_inject_none", CAPTURE)
    pm = home.load()
    ctx = context_of(pm, "ctx_inject_none")

    assert pm.message_sink is None
    assert ctx.inject_message("hello") is False


def test_inject_message_reaches_the_sink(home: PluginHome) -> None:
    home.add_plugin("ctx_inject", CAPTURE)
    pm = home.load()
    ctx = context_of(pm, "ctx_inject")
    received: list[tuple[str, str]] = []

    def sink(content: str, role: str) -> bool:
        received.append((content, role))
        return True

    pm.message_sink = sink

    assert ctx.inject_message("hello") is True
    assert ctx.inject_message("be brief", role="system") is True
    # A session key addresses a gateway session (Hermes' gateway injection), never the sink.
    assert ctx.inject_message("gateway", session_key="tg:1") is False
    assert received == [("hello", "user"), ("be brief", "system")]


def test_inject_message_failing_sink_is_false(home: PluginHome) -> None:
    home.add_plugin("ctx_inject_fail", CAPTURE)
    pm = home.load()
    ctx = context_of(pm, "ctx_inject_fail")

    def sink(content: str, role: str) -> bool:
        raise RuntimeError("session closed")

    pm.message_sink = sink

    assert ctx.inject_message("hello") is False


# --- get_config ----------------------------------------------------------------------------------


def test_get_config_reads_settings_with_dotted_keys(home: PluginHome) -> None:
    home.add_plugin("ctx_config", CAPTURE)
    home.entry(
        "ctx_config",
        settings={
            "endpoint": "https://example.invalid",
            "retry": {"policy": "backoff", "max": 3},
            "empty": None,
        },
        config={"legacy_only": "old", "endpoint": "shadowed"},
    )
    home.entry("other_plugin", settings={"token": "not yours"})
    pm = home.load()
    ctx = context_of(pm, "ctx_config")

    assert ctx.get_config("endpoint") == "https://example.invalid"
    assert ctx.get_config("retry.policy") == "backoff"
    assert ctx.get_config("retry.max") == 3
    assert ctx.get_config("retry") == {"policy": "backoff", "max": 3}
    assert ctx.get_config("empty", "default") is None
    assert ctx.get_config("missing") is None
    assert ctx.get_config("missing", 7) == 7
    assert ctx.get_config("retry.policy.deeper", "d") == "d"
    assert ctx.get_config("endpoint.deeper", "d") == "d"
    assert ctx.get_config("token", "none") == "none"
    assert ctx.get_config("legacy_only") == "old"


def test_get_config_for_a_category_plugin(home: PluginHome) -> None:
    home.add_plugin("image_gen/ctx_catcfg", CAPTURE)
    home.entry("image_gen/ctx_catcfg", settings={"size": "1024x1024"})
    pm = home.load()

    assert context_of(pm, "image_gen/ctx_catcfg").get_config("size") == "1024x1024"


def test_get_config_without_an_entry_gives_default(home: PluginHome) -> None:
    home.add_plugin("ctx_noentry", CAPTURE)
    pm = home.load()

    assert context_of(pm, "ctx_noentry").get_config("anything", "dflt") == "dflt"


@pytest.mark.parametrize(
    "key", ["", "a..b", ".a", "a/b", "..\\up", "plugins.other", "settings.x", "Model", "sp ace"]
)
def test_get_config_refuses_keys_outside_the_plugin(home: PluginHome, key: str) -> None:
    home.add_plugin("ctx_badkey", CAPTURE)
    pm = home.load()
    ctx = context_of(pm, "ctx_badkey")

    with pytest.raises(ValueError, match=r"plugin 'ctx_badkey': config key .* is invalid"):
        ctx.get_config(key)


# --- the examples of docs/reference/context.md ---------------------------------------------------

CONTEXT_DOC = Path(__file__).resolve().parents[1] / "docs" / "reference" / "context.md"
_BLOCK = re.compile(r"^```(\w+)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def doc_blocks(language: str) -> list[str]:
    """Return the fenced blocks of the ``ctx`` reference in ``language``, in page order."""
    text = CONTEXT_DOC.read_text(encoding="utf-8")
    return [body for lang, body in _BLOCK.findall(text) if lang == language]


def test_context_reference_examples_run(home: PluginHome) -> None:
    plugins: list[str] = []
    host: list[str] = []
    for block in doc_blocks("python"):
        first, _, _ = block.partition("\n")
        if first.startswith("# plugin: "):
            name = first.removeprefix("# plugin: ").strip()
            home.add_plugin(name, block, files={"skills/summarise/SKILL.md": "---\n---\nHi\n"})
            plugins.append(name)
        else:
            assert first == "# host", (
                f"a python block must start with '# plugin:' or '# host': {first!r}"
            )
            host.append(block)
    (config,) = [b for b in doc_blocks("yaml") if b.startswith("# config.yaml")]
    for key, entry in yaml.safe_load(config)["plugins"]["entries"].items():
        home.entry(key, **entry)
    assert len(plugins) >= 8
    assert len(host) >= 6

    pm = home.load()

    for name in plugins:
        assert info(pm, name).status == "enabled", info(pm, name).error
    for number, block in enumerate(host, 1):
        where = f"{CONTEXT_DOC.name}, host block {number}"
        exec(compile(block, where, "exec"), {"pm": pm, "json": json, "sys": sys})


def test_context_reference_documents_every_public_member() -> None:
    text = CONTEXT_DOC.read_text(encoding="utf-8")
    public = [name for name in vars(PluginContext) if not name.startswith("_")]
    # What the provider families add: register_<family>_provider, and ctx.llm.
    from_families = [
        name
        for family in extensions.families()
        for name in [family.ctx_method, *family.context_attributes]
        if name is not None
    ]
    assert "register_image_gen_provider" in from_families
    for name in [*public, *from_families, "path", "manifest"]:
        assert f"### `{name}`" in text or f"### `ctx.{name}`" in text, name
    for name in public:
        member = getattr(PluginContext, name)
        if callable(member):
            params = ", ".join(list(inspect.signature(member).parameters)[1:])
            assert f"ctx.{name}(" in text, name
            for param in inspect.signature(member).parameters:
                if param not in ("self", "kwargs"):
                    assert param in text, f"{name}: {param} ({params})"


# --- what Hermes plugins also call ---------------------------------------------------------------


def test_has_plugin_answers_by_key_or_manifest_name(home: PluginHome) -> None:
    home.add_plugin("ctx_other_dir", "def register(ctx):\n    pass\n", manifest={"name": "other"})
    home.add_plugin("ctx_probe", CAPTURE)
    home.add_plugin("ctx_idle", "def register(ctx):\n    pass\n", enable=False)
    ctx = context_of(home.load(), "ctx_probe")
    assert ctx.has_plugin("other") is True
    assert ctx.has_plugin("ctx_probe") is True
    assert ctx.has_plugin("ctx_idle") is False  # discovered, not loaded
    assert ctx.has_plugin("nowhere") is False


def test_on_unload_runs_latest_first_and_a_raising_callback_is_logged(
    home: PluginHome,
) -> None:
    home.add_plugin(
        "ctx_unload",
        """
        log = []

        def register(ctx):
            ctx.on_unload(lambda: log.append("first"))
            ctx.on_unload(lambda: 1 / 0)  # logged, never raised
            taken_back = ctx.on_unload(lambda: log.append("taken back"))
            taken_back.dispose()
            ctx.on_unload(lambda: log.append("last"))
        """,
    )
    pm = home.load()
    unload = sys.modules["hermes_plugins.ctx_unload"]
    assert pm.unload_plugin("ctx_unload")
    assert unload.log == ["last", "first"]
    with pytest.raises(TypeError, match="must be callable"):
        PluginContext(pm, "x", PluginManifest(name="x"), None).on_unload("not a function")  # type: ignore[arg-type]


def test_on_unload_of_a_failed_load_runs_its_callbacks(home: PluginHome) -> None:
    home.add_plugin(
        "ctx_unload_fails",
        """
        import sys

        def register(ctx):
            ctx.on_unload(lambda: sys.modules["ctx_unload_fails_log"].append("rolled back"))
            raise RuntimeError("cannot start")
        """,
    )
    log: list[str] = []
    sys.modules["ctx_unload_fails_log"] = log  # type: ignore[assignment]
    try:
        pm = home.load()
    finally:
        del sys.modules["ctx_unload_fails_log"]
    assert info(pm, "ctx_unload_fails").status == "error"
    assert log == ["rolled back"]


@pytest.mark.parametrize(
    ("relative", "profile"),
    [(".hermes", "default"), (".hermes/profiles/coder", "coder"), ("elsewhere", "custom")],
)
def test_profile_name_follows_the_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, relative: str, profile: str
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    home = tmp_path / relative
    home.mkdir(parents=True)
    ctx = PluginContext(PluginManager(home), "p", PluginManifest(name="p"), None)
    assert ctx.profile_name == profile


def test_a_platform_is_registered_refused_when_broken_and_removed_at_unload(
    home: PluginHome,
) -> None:
    home.add_plugin(
        "ctx_platform",
        """
        def register(ctx):
            ctx.register_platform("matrix", "Matrix", lambda config: None, lambda: True)
            ctx.register_platform("broken", "Broken", "not callable", lambda: True)
        """,
        manifest={"kind": "platform"},
    )
    pm = home.load()
    found = info(pm, "ctx_platform")
    assert (found.status, found.kind, found.platforms) == ("enabled", "platform", ("matrix",))
    assert not any("no gateway adapter runs it" in w for w in found.warnings)
    assert any(w.startswith("platform 'broken' refused") for w in found.warnings)
    assert pm.platforms.owner_of("matrix") == "ctx_platform"
    pm.unload_plugin("ctx_platform")
    assert pm.platforms.names() == []
