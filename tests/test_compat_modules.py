"""Hermes plugins, written the way Hermes' own plugins are, load and work through the compat layer.

Each plugin here has the shape of a real one (the bundled ``image_gen/xai``, ``spotify``,
``observability/langfuse``, ``disk-cleanup`` and ``google_meet``) and imports Hermes' modules
by their Hermes names; none is a copy of Hermes' code. Real folders, a real ``config.yaml`` and
an HTTP server on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from local_http import Server, running
from plugin_builders import PluginHome, home, info
from test_image_gen_providers import png_bytes

from hermes_hooks import Hooks, PluginManager
from hermes_hooks.errors import RegistrationError
from hermes_hooks.plugins import active

__all__ = ["home"]


@pytest.fixture
def server() -> Iterator[Server]:
    with running() as srv:
        yield srv


def loaded(home: PluginHome) -> PluginManager:
    """Load ``home``, failing the test when a plugin did not load."""
    pm = home.load()
    broken = {i.key: i.error for i in pm.list_plugins() if i.status == "error"}
    assert broken == {}
    return pm


# -- agent.image_gen_provider and agent.image_gen_registry: the xai shape -----------------------

GROK_LIKE = """
import logging
import os
from typing import Any, Dict, List, Optional

from agent.image_gen_provider import (
    DEFAULT_ASPECT_RATIO,
    ImageGenProvider,
    error_response,
    resolve_aspect_ratio,
    save_b64_image,
    save_url_image,
    success_response,
)
from hermes_cli.config import load_config

logger = logging.getLogger(__name__)


def _section() -> Dict[str, Any]:
    cfg = load_config()
    section = cfg.get("image_gen") if isinstance(cfg, dict) else None
    grok = section.get("grok") if isinstance(section, dict) else None
    return grok if isinstance(grok, dict) else {}


class GrokLike(ImageGenProvider):
    @property
    def name(self) -> str:
        return "grok-like"

    def is_available(self) -> bool:
        return bool(os.environ.get("GROK_LIKE_KEY"))

    def generate(self, prompt: str, aspect_ratio: str = DEFAULT_ASPECT_RATIO, *,
                 image_url: Optional[str] = None, reference_image_urls: Optional[List[str]] = None,
                 **kwargs: Any) -> Dict[str, Any]:
        aspect = resolve_aspect_ratio(aspect_ratio)
        base = _section().get("base_url")
        if not base:
            return error_response(error="image_gen.grok.base_url is not set",
                                  error_type="config", provider=self.name, prompt=prompt,
                                  aspect_ratio=aspect)
        try:
            saved = save_url_image(f"{base}/tmp/{aspect}.png", prefix=f"grok_{aspect}")
        except Exception as exc:
            return error_response(error=str(exc), error_type=type(exc).__name__,
                                  provider=self.name, prompt=prompt, aspect_ratio=aspect)
        return success_response(image=str(saved), model="grok-like-1", prompt=prompt,
                                aspect_ratio=aspect, provider=self.name)


def register(ctx) -> None:
    ctx.register_image_gen_provider(GrokLike())
"""

REGISTRY_AT_IMPORT = """
from agent.image_gen_provider import ImageGenProvider, save_b64_image, success_response
from agent.image_gen_registry import get_active_provider, get_provider, list_providers
from agent.image_gen_registry import register_provider

PNG = {png!r}


class Inline(ImageGenProvider):
    @property
    def name(self):
        return "inline"

    def generate(self, prompt, aspect_ratio="landscape", **kwargs):
        path = save_b64_image(PNG, prefix="inline")
        return success_response(image=str(path), model="m", prompt=prompt,
                                aspect_ratio=aspect_ratio, provider=self.name)


register_provider(Inline())  # at import, as Hermes' older providers did
SEEN = {{"listed": [p.name for p in list_providers()], "got": get_provider("inline").name}}


def register(ctx):
    SEEN["active"] = get_active_provider().name
"""


def test_an_xai_shaped_provider_saves_what_its_url_answers(
    home: PluginHome, server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    image = png_bytes("blue")
    server.routes[("GET", "/tmp/square.png")] = lambda r: (
        200,
        {"Content-Type": "image/png"},
        image,
    )
    server.routes[("GET", "/tmp/portrait.png")] = lambda r: (
        200,
        {"Content-Type": "text/html"},
        b"<html>expired</html>",
    )
    monkeypatch.setenv("GROK_LIKE_KEY", "k")
    home.add_plugin("image_gen/grok-like", GROK_LIKE)
    home.write_config()
    config = (home.root / "config.yaml").read_text(encoding="utf-8")
    config += f"image_gen:\n  provider: grok-like\n  grok:\n    base_url: {server.url}\n"
    (home.root / "config.yaml").write_text(config, encoding="utf-8")
    pm = home.manager()
    pm.discover_and_load()
    assert info(pm, "image_gen/grok-like").status == "enabled"

    result = json.loads(
        pm.tools.dispatch("image_generate", {"prompt": "a fox", "aspect_ratio": "square"})
    )
    assert result["success"] is True, result
    saved = Path(result["image"])
    assert saved.parent == home.root / "cache" / "images"
    assert saved.name.startswith("grok_square_")
    assert saved.suffix == ".png"
    assert saved.read_bytes() == image

    refused = json.loads(
        pm.tools.dispatch("image_generate", {"prompt": "x", "aspect_ratio": "portrait"})
    )
    assert refused["success"] is False
    assert "Content-Type 'text/html', not an image" in refused["error"]
    assert sorted(p.name for p in saved.parent.iterdir()) == [saved.name]  # nothing half-written


def test_a_provider_registered_at_import_is_owned_by_its_plugin(home: PluginHome) -> None:
    import base64

    code = REGISTRY_AT_IMPORT.format(png=base64.b64encode(png_bytes()).decode())
    home.add_plugin("image_gen/inline", code)
    pm = loaded(home)
    module = sys.modules["hermes_plugins.image_gen__inline"]
    assert module.SEEN["got"] == "inline"
    assert "inline" in module.SEEN["listed"]
    assert module.SEEN["active"] == "inline"
    assert pm.image_gen.owner_of("inline") == "image_gen/inline"
    assert info(pm, "image_gen/inline").providers == ("image_gen:inline",)
    result = json.loads(pm.tools.dispatch("image_generate", {"prompt": "p"}))
    assert Path(result["image"]).read_bytes() == png_bytes()
    pm.unload_plugin("image_gen/inline")
    assert "inline" not in pm.image_gen.names()
    from agent.image_gen_registry import register_provider

    with pytest.raises(TypeError, match="expects an ImageGenProvider instance, got str"):
        register_provider("not a provider")


# -- tools.registry and hermes_constants: the spotify and disk-cleanup shapes -------------------

SELF_REGISTERING_TOOLS = """
from tools.registry import registry, tool_error, tool_result

def handle_weather(args, **kw):
    if not args.get("city"):
        return tool_error("city is required", code="missing")
    return tool_result(city=args["city"], sky="clear")

# A Hermes tools/*.py registers itself at import time.
registry.register(
    name="weather_now",
    toolset="weather",
    schema={"name": "weather_now", "parameters": {"type": "object", "properties": {}}},
    handler=handle_weather,
    emoji="☀",
)
"""

CLEANUP_LIKE = """
import json
from pathlib import Path

from . import state
from hermes_constants import display_hermes_home, get_hermes_dir, get_hermes_home
from tools.registry import registry


def _on_post_tool_call(tool_name="", args=None, result=None, task_id="", session_id="",
                       tool_call_id="", **_):
    state.SEEN.append((tool_name, str(get_hermes_home()), _.get("telemetry_schema_version")))


def _slash(raw_args):
    return json.dumps({"home": display_hermes_home(),
                       "cache": str(get_hermes_dir("cache/images", "image_cache")),
                       "tools": registry.get_all_tool_names()})


def register(ctx):
    state.SEEN.append(("register", str(get_hermes_home()), None))
    ctx.register_hook("post_tool_call", _on_post_tool_call)
    ctx.register_command("cleanup-like", handler=_slash, description="Status")
"""


def test_tools_registered_through_tools_registry_belong_to_their_plugin(home: PluginHome) -> None:
    home.add_plugin(
        "weather",
        "from . import tools\n\ndef register(ctx):\n    pass\n",
        files={"tools.py": SELF_REGISTERING_TOOLS},
    )
    home.add_plugin("other", "def register(ctx):\n    pass\n")
    pm = loaded(home)
    from tools.registry import registry, tool_error

    assert pm.tools.owner_of("weather_now") == "weather"
    assert info(pm, "weather").tools == ("weather_now",)
    assert json.loads(registry.dispatch("weather_now", {"city": "Oslo"})) == {
        "city": "Oslo",
        "sky": "clear",
    }
    assert json.loads(registry.dispatch("weather_now", {})) == {
        "error": "city is required",
        "code": "missing",
    }
    assert registry.get_toolset_for_tool("weather_now") == "weather"
    assert registry.get_emoji("weather_now") == "☀"
    assert registry.get_emoji("image_generate", default="?") == "🎨"
    assert [d["function"]["name"] for d in registry.get_definitions({"weather_now", "nope"})] == [
        "weather_now"
    ]
    assert registry.is_toolset_available("weather") is True
    assert json.loads(tool_error("x" * 5000))["error"].endswith("… [truncated]")
    pm.unload_plugin("weather")
    assert "weather_now" not in registry.get_all_tool_names()


def test_plugin_code_may_not_deregister_another_plugins_tool(home: PluginHome) -> None:
    home.add_plugin("weather", "from . import tools\n\ndef register(ctx):\n    pass\n",
                    files={"tools.py": SELF_REGISTERING_TOOLS})  # fmt: skip
    home.add_plugin(
        "zz-thief",  # loads after weather
        """
        from tools.registry import registry

        def register(ctx):
            registry.deregister("weather_now")
        """,
    )
    pm = home.load()
    thief = info(pm, "zz-thief")
    assert thief.status == "error"
    assert "code of plugin 'zz-thief' may not remove an entry of plugin 'weather'" in (
        thief.error or ""
    )
    assert pm.tools.owner_of("weather_now") == "weather"


def test_hermes_constants_answer_for_the_manager_loading_and_calling_the_plugin(
    home: PluginHome, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "env-home"
    monkeypatch.setenv("HERMES_HOME", str(elsewhere))  # not this manager's home
    home.add_plugin("cleanup-like", CLEANUP_LIKE, files={"state.py": "SEEN = []\n"},
                    manifest={"hooks": ["post_tool_call"]})  # fmt: skip
    (home.root / "image_cache").mkdir()
    (home.root / "image_cache" / "old.png").write_bytes(b"x")
    pm = loaded(home)
    state = sys.modules["hermes_plugins.cleanup_like.state"]
    Hooks(pm).post_tool_call(tool_name="terminal", args={}, result="ok")
    assert [
        ("register", str(home.root), None),
        ("terminal", str(home.root), "hermes.observer.v1"),
    ] == state.SEEN
    command = pm.commands.get("cleanup-like")
    assert command is not None
    reply = json.loads(command.handler(""))
    assert reply["cache"] == str(home.root / "image_cache")  # the legacy folder holds a file
    assert reply["home"] == str(home.root)  # not under ~: the full path
    assert "image_generate" in reply["tools"]
    from hermes_constants import get_hermes_home

    with pm.activate():
        assert get_hermes_home() == home.root


def test_with_two_managers_each_plugin_sees_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from plugin_builders import make_home

    (tmp_path / "a").mkdir()
    first = make_home(tmp_path / "a", monkeypatch)
    second = PluginHome(tmp_path / "b" / "home")
    try:
        for plugin_home in (first, second):
            plugin_home.add_plugin("cleanup-like", CLEANUP_LIKE, files={"state.py": "SEEN = []\n"})
        pm_a = loaded(first)
        state_a = sys.modules["hermes_plugins.cleanup_like.state"]
        pm_b = loaded(second)
        state_b = sys.modules["hermes_plugins.cleanup_like__2.state"]
        Hooks(pm_a).post_tool_call(tool_name="a", args={}, result="")
        Hooks(pm_b).post_tool_call(tool_name="b", args={}, result="")
        assert state_a.SEEN[-1][:2] == ("a", str(first.root))
        assert state_b.SEEN[-1][:2] == ("b", str(second.root))
        assert active.current_manager() is pm_b  # from host code: the most recent
    finally:
        first.close()
        second.close()


# -- observability/langfuse: keyword-only callbacks, hooks:, requires_env -----------------------

LANGFUSE_LIKE = """
import logging
import os
import threading

logger = logging.getLogger(__name__)
TRACES = []
_LOCK = threading.Lock()

try:
    from agent.redact import redact_sensitive_text  # a Hermes internal, guarded
except Exception:
    redact_sensitive_text = None


def _on(kind):
    def callback(*, task_id: str = "", session_id: str = "", tool_name: str = "", **_):
        with _LOCK:
            TRACES.append((kind, tool_name, _.get("telemetry_schema_version")))
    return callback


def register(ctx) -> None:
    for hook in ("pre_api_request", "post_api_request", "pre_llm_call", "post_llm_call",
                 "pre_tool_call", "post_tool_call"):
        ctx.register_hook(hook, _on(hook))
"""


def test_a_langfuse_shaped_observer_traces_a_turn(
    home: PluginHome, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from hermes_hooks.host import Session, create_manager

    monkeypatch.setenv("HERMES_LANGFUSE_PUBLIC_KEY", "pk-lf-test")
    manifest = {
        "requires_env": ["HERMES_LANGFUSE_PUBLIC_KEY"],
        "hooks": ["pre_api_request", "post_api_request", "pre_llm_call", "post_llm_call",
                  "pre_tool_call", "post_tool_call"],
    }  # fmt: skip
    home.add_plugin("observability/langfuse", LANGFUSE_LIKE, manifest=manifest)
    home.write_config()
    pm = create_manager(home.root)  # the reference host, with its tools
    home.managers.append(pm)
    assert info(pm, "observability/langfuse").status == "enabled"
    session = Session(pm, cwd=tmp_path)
    session.run_turn("run `echo hi`")
    session.close()
    traces = sys.modules["hermes_plugins.observability__langfuse"].TRACES
    kinds = [kind for kind, _, _ in traces]
    assert kinds[:3] == ["pre_llm_call", "pre_api_request", "post_api_request"]
    assert ("pre_tool_call", "terminal", "hermes.observer.v1") in traces
    assert {schema for _, _, schema in traces} == {"hermes.observer.v1"}


# -- google_meet: absolute self-imports of submodules, a CLI command ----------------------------

MEET_LIKE = {
    "__init__.py": """
        from plugins.meet_like import process_manager as pm
        from plugins.meet_like.tools import MEET_STATUS_SCHEMA, handle_meet_status

        LOADS = []
        LOADS.append("init")

        def _setup(parser):
            parser.add_argument("--json", action="store_true")

        def _on_session_finalize(**kwargs):
            pm.stop()

        def register(ctx):
            ctx.register_tool(name="meet_status", toolset="meet", schema=MEET_STATUS_SCHEMA,
                              handler=handle_meet_status)
            ctx.register_cli_command(name="meet", help="Meet bot", setup_fn=_setup,
                                     handler_fn=lambda args: pm.status())
            ctx.register_hook("on_session_finalize", _on_session_finalize)
        """,
    "process_manager.py": """
        import json
        from hermes_constants import get_hermes_home

        STATE = {"alive": True}

        def status():
            return json.dumps({"alive": STATE["alive"], "home": str(get_hermes_home())})

        def stop():
            STATE["alive"] = False
        """,
    "tools.py": """
        from plugins.meet_like import process_manager as pm

        MEET_STATUS_SCHEMA = {"name": "meet_status", "parameters": {"type": "object"}}

        def handle_meet_status(args, **_kw):
            return pm.status()
        """,
}


def test_a_google_meet_shaped_plugin_imports_itself_once(home: PluginHome) -> None:
    files = dict(MEET_LIKE)
    code = files.pop("__init__.py")
    home.add_plugin("meet_like", code, files=files)
    pm = loaded(home)
    import plugins.meet_like
    import plugins.meet_like.process_manager
    import plugins.meet_like.tools

    own = sys.modules["hermes_plugins.meet_like"]
    assert plugins.meet_like is own
    assert plugins.meet_like.tools is sys.modules["hermes_plugins.meet_like.tools"]
    assert plugins.meet_like.process_manager is own.pm  # one module, one STATE
    assert own.LOADS == ["init"]  # imported once: no second copy ran
    assert json.loads(pm.tools.dispatch("meet_status", {}))["alive"] is True
    meet = pm.cli_commands.get("meet")
    assert meet is not None
    assert json.loads(meet.run([]))["home"] == str(home.root)
    Hooks(pm).on_session_finalize(session_id="s")
    assert json.loads(pm.tools.dispatch("meet_status", {}))["alive"] is False
    pm.unload_plugin("meet_like")
    assert not [m for m in sys.modules if m.startswith("plugins.meet_like")]


# -- plugins.<key>: categories, helpers, and what is never importable ---------------------------


def test_category_keys_helpers_and_unloaded_plugins(home: PluginHome) -> None:
    home.add_plugin(
        "web/tavily",
        """
        from plugins.web.tavily.provider import PROVIDER
        from plugins.web._shared import VERSION

        def register(ctx):
            pass
        """,
        files={"provider.py": "PROVIDER = 'tavily'\n"},
    )
    (home.plugins / "web" / "_shared.py").write_text("VERSION = 3\n", encoding="utf-8")
    home.add_plugin("web/exa", "RAN = True\n\ndef register(ctx):\n    pass\n", enable=False)
    pm = loaded(home)
    import plugins.web
    import plugins.web.tavily

    assert plugins.web.__hermes_plugins_category__ == "web"
    assert plugins.web.tavily is sys.modules["hermes_plugins.web__tavily"]
    assert plugins.web.tavily.PROVIDER == "tavily"
    with pytest.raises(ModuleNotFoundError, match=r"plugins\.web\.exa"):
        import plugins.web.exa  # discovered, not enabled: never runs
    assert "hermes_plugins.web__exa" not in sys.modules
    assert info(pm, "web/exa").status == "not enabled"


def test_an_old_folder_key_names_the_plugin_too(home: PluginHome) -> None:
    home.add_plugin(
        "pr_review",
        "from plugins.pr_review.checks import CHECKS\n\ndef register(ctx):\n    pass\n",
        manifest={"name": "pr-review"},
        files={"checks.py": "CHECKS = ['lint']\n"},
        enable=False,
    )
    home.enabled.append("pr-review")
    pm = loaded(home)
    assert info(pm, "pr-review").status == "enabled"
    import plugins.pr_review

    assert plugins.pr_review.CHECKS == ["lint"]


# -- agent.plugin_llm, hermes_cli.plugins ------------------------------------------------------

LLM_USER = """
from agent.plugin_llm import PluginLlm, PluginLlmTextInput, PluginLlmTrustError
from hermes_cli.plugins import VALID_HOOKS, get_plugin_manager, invoke_hook

SEEN = {}


def register(ctx):
    llm = PluginLlm(plugin_id="llm-user")
    SEEN["manager"] = get_plugin_manager()
    SEEN["hooks"] = "pre_tool_call" in VALID_HOOKS

    def summarise(raw_args):
        answer = llm.complete([{"role": "user", "content": raw_args}])
        structured = llm.complete_structured(instructions="Rate", input=[PluginLlmTextInput("ok")])
        try:
            llm.complete([{"role": "user", "content": "x"}], agent_id="other")
        except PluginLlmTrustError:
            pass
        return f"{answer.provider}:{answer.usage.total_tokens}:{structured.content_type}"

    ctx.register_command("summarise", summarise)
    ctx.register_hook("on_session_start", lambda **kw: kw["telemetry_schema_version"])
    SEEN["results"] = invoke_hook("on_session_start", session_id="s")
"""


def test_plugin_llm_and_hermes_cli_plugins_answer_for_the_loading_manager(
    home: PluginHome,
) -> None:
    home.add_plugin("llm-user", LLM_USER)
    pm = loaded(home)
    seen = sys.modules["hermes_plugins.llm_user"].SEEN
    assert seen["manager"] is pm
    assert seen["hooks"] is True
    # invoke_hook during register: the plugin's own hook is not registered until it loaded.
    assert seen["results"] == []
    assert pm.commands.get("summarise").handler("hello") == "offline:0:text"
    from hermes_cli.plugins import discover_plugins, invoke_hook

    with pm.activate():
        assert invoke_hook("on_session_start", session_id="s2") == ["hermes.observer.v1"]
        discover_plugins(force=True)
    assert info(pm, "llm-user").status == "enabled"


# -- hermes_cli.config and utils ----------------------------------------------------------------


def test_hermes_cli_config_reads_and_writes_the_current_home(
    home: PluginHome, monkeypatch: pytest.MonkeyPatch
) -> None:
    pm = loaded(home)
    monkeypatch.setenv("WEATHER_TOKEN", "t0ken")
    config_file = home.root / "config.yaml"
    config_file.write_text(
        config_file.read_text(encoding="utf-8")
        + "weather:\n  token: ${WEATHER_TOKEN}\n  unset: ${NOT_SET_ANYWHERE}\n  units: metric\n",
        encoding="utf-8",
    )
    from hermes_cli import config as hc

    with pm.activate():
        assert hc.get_config_path() == config_file
        loaded_config = hc.load_config()
        assert loaded_config["weather"] == {
            "token": "t0ken",
            "unset": "${NOT_SET_ANYWHERE}",
            "units": "metric",
        }
        assert hc.read_raw_config()["weather"]["token"] == "${WEATHER_TOKEN}"
        assert hc.cfg_get(loaded_config, "weather", "units") == "metric"
        assert hc.cfg_get(loaded_config, "weather", "nope", default=7) == 7
        assert hc.cfg_get({"a": None}, "a", default=1) is None
        loaded_config["weather"]["units"] = "imperial"
        hc.save_config(loaded_config)
        # The secret is written back as its reference, never as its value.
        text = config_file.read_text(encoding="utf-8")
        assert "${WEATHER_TOKEN}" in text
        assert "t0ken" not in text
        assert "imperial" in text
        hc.save_config({"display": {"compact": True}}, merge_existing=True)
        assert hc.read_raw_config()["weather"]["units"] == "imperial"
        assert hc.read_raw_config()["display"] == {"compact": True}

        hc.save_env_value("WEATHER_SECRET", "s3cret\n")
        env_file = home.root / ".env"
        assert "WEATHER_SECRET=s3cret" in env_file.read_text(encoding="utf-8")
        assert stat.S_IMODE(env_file.stat().st_mode) == 0o600
        assert os.environ["WEATHER_SECRET"] == "s3cret"
        monkeypatch.delenv("WEATHER_SECRET")
        assert hc.get_env_value("WEATHER_SECRET") == "s3cret"  # from the file
        with pytest.raises(ValueError, match="'PATH' changes how the next process runs"):
            hc.save_env_value("PATH", "/tmp/evil")
        assert hc.remove_env_value("WEATHER_SECRET") is True
        assert hc.get_env_value("WEATHER_SECRET") is None

        config_file.write_text("plugins: [unclosed\n", encoding="utf-8")
        assert hc.load_config() == {}  # broken: logged, not raised, as Hermes falls back
        from hermes_hooks.errors import ConfigError

        with pytest.raises(ConfigError, match="invalid YAML"):
            hc.save_config({"a": 1})  # and never overwritten
        assert config_file.read_text(encoding="utf-8") == "plugins: [unclosed\n"


def test_utils_env_readers_and_atomic_writes(
    home: PluginHome, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loaded(home)
    import utils

    monkeypatch.setenv("FLAG_ON", " Yes ")
    monkeypatch.setenv("NUMBER", "12")
    monkeypatch.setenv("RATIO", "nope")
    assert utils.env_bool("FLAG_ON") is True
    assert utils.env_bool("FLAG_UNSET", True) is True
    assert utils.env_var_enabled("FLAG_ON") is True
    assert utils.env_int("NUMBER") == 12
    assert utils.env_float("RATIO", 0.5) == 0.5
    assert utils.is_truthy_value(None, default=True) is True
    assert utils.is_truthy_value(0) is False
    target = tmp_path / "state" / "data.json"
    utils.atomic_json_write(target, {"ü": 1}, mode=0o600)
    assert json.loads(target.read_text(encoding="utf-8")) == {"ü": 1}
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    link = tmp_path / "link.json"
    link.symlink_to(target)
    utils.atomic_json_write(link, [1, 2])
    assert link.is_symlink()
    assert json.loads(target.read_text(encoding="utf-8")) == [1, 2]
    assert stat.S_IMODE(target.stat().st_mode) == 0o600  # kept
    with pytest.raises(TypeError):
        utils.atomic_json_write(target, {"x": object()})
    assert json.loads(target.read_text(encoding="utf-8")) == [1, 2]
    assert [p.name for p in target.parent.iterdir()] == ["data.json"]  # no temp file left


def test_a_refused_registration_through_tools_registry_raises(home: PluginHome) -> None:
    home.add_plugin(
        "owner", "def register(ctx):\n    ctx.register_tool('dup', 't', {}, lambda a, **k: 'x')\n"
    )
    home.add_plugin(
        "second",
        """
        from tools.registry import registry

        def register(ctx):
            registry.register(name="dup", toolset="t", schema={}, handler=lambda a, **k: "y")
        """,
    )
    pm = home.load()
    assert info(pm, "second").status == "error"
    assert "already registered by plugin 'owner'" in (info(pm, "second").error or "")
    with pytest.raises(RegistrationError):
        pm.tools.register_tool("dup", "t", {}, lambda a, **k: "z", owner="third")


# -- issue 22: one registration path, one guard, whichever door a tool comes through ------------

EXITING_TOOL = """
import sys

from tools.registry import registry


def handle_exit(args, **kw):
    sys.exit(3)  # a Hermes tool that ends the process on a bad day


registry.register(
    name="quit_now",
    toolset="exits",
    schema={"name": "quit_now", "parameters": {"type": "object", "properties": {}}},
    handler=handle_exit,
)
"""


def test_a_tools_registry_tool_that_raises_systemexit_does_not_end_the_turn(
    home: PluginHome, tmp_path: Path
) -> None:
    from host_helpers import ScriptedModel, text, tool_call

    from hermes_hooks.host import Session

    home.add_plugin(
        "exits",
        "from . import tools\n\ndef register(ctx):\n    pass\n",
        files={"tools.py": EXITING_TOOL},
    )
    pm = loaded(home)
    model = ScriptedModel(tool_call("quit_now", {}), text("done"))
    result = Session(pm, model, cwd=tmp_path).run_turn("quit, please")
    assert result.completed
    assert result.text == "done"
    status = info(pm, "exits")
    assert status.hook_errors == 1
    assert "tool 'quit_now': SystemExit: 3" in (status.last_hook_error or "")
    tool_message = model.requests[1]["messages"][-1]
    assert "SystemExit" in tool_message["content"]
