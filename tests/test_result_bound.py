"""``plugins.max_hook_result_bytes``: a huge hook result is a failure under the hook's policy.

Issue 17, item 10: a 200 MB string returned from a transform hook stalled the turn. Real plugin
folders in a temporary home; each test runs with the default bound on the hook callback
(results come back from a worker) and with none (inline), and the async path is tried too.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
import yaml
from homes import plugin_home as home  # noqa: F401  (the fixture)
from plugin_builders import PluginHome, info

from hermes_hooks.calling.facade import Hooks
from hermes_hooks.calling.results import DEFAULT_MAX_HOOK_RESULT_BYTES, oversized
from hermes_hooks.errors import HookResultError
from hermes_hooks.plugins.config import PluginsConfig
from hermes_hooks.plugins.manager import PluginManager

LIMIT = 64 * 1024
TOO_BIG = f"returned str of {LIMIT + 1} bytes, more than plugins.max_hook_result_bytes ({LIMIT}"


@pytest.fixture(params=[None, 0], ids=["on-a-worker", "inline"])
def callback_timeout(request: pytest.FixtureRequest) -> float | None:
    value: float | None = request.param
    return value


def load(
    home: PluginHome,
    callback_timeout: float | None,
    limit: int | None = LIMIT,
    *,
    strict: bool = False,
) -> PluginManager:
    section: dict[str, Any] = {"enabled": home.enabled}
    if limit is not None:
        section["max_hook_result_bytes"] = limit
    if callback_timeout is not None:
        section["hook_callback_timeout"] = callback_timeout
    (home.root / "config.yaml").write_text(yaml.safe_dump({"plugins": section}), "utf-8")
    pm = PluginManager(home.root, strict=strict)
    home.managers.append(pm)
    pm.discover_and_load()
    return pm


def transform(size: int, value: str = "x") -> str:
    return f"""
from hermes_hooks import hookimpl

@hookimpl
def transform_tool_result(tool_name, result):
    return {value!r} * {size}
"""


def test_a_huge_transform_result_is_dropped_and_the_next_one_used(
    home: PluginHome, callback_timeout: float | None
) -> None:
    home.add_plugin("aa-small", transform(3, "y"))
    home.add_plugin("zz-huge", transform(LIMIT + 1))  # loaded last: called first
    pm = load(home, callback_timeout)
    result = Hooks(pm).transform_tool_result(tool_name="terminal", args={}, result="raw")
    assert result == "yyy"
    huge = info(pm, "zz-huge")
    assert huge.hook_errors == 1
    assert huge.last_hook_error is not None
    assert huge.last_hook_error.startswith(f"transform_tool_result: {TOO_BIG}")
    assert info(pm, "aa-small").hook_errors == 0


def test_a_result_of_exactly_the_bound_is_kept(
    home: PluginHome, callback_timeout: float | None
) -> None:
    home.add_plugin("exact", transform(LIMIT))
    pm = load(home, callback_timeout)
    result = Hooks(pm).transform_tool_result(tool_name="terminal", args={}, result="raw")
    assert len(result) == LIMIT
    assert info(pm, "exact").hook_errors == 0


def test_text_is_measured_in_utf8_bytes(home: PluginHome, callback_timeout: float | None) -> None:
    home.add_plugin("wide", transform(LIMIT // 4 + 1, "\N{GRINNING FACE}"))  # 4 bytes each
    pm = load(home, callback_timeout)
    result = Hooks(pm).transform_tool_result(tool_name="terminal", args={}, result="raw")
    assert result == "raw"
    assert "more than plugins.max_hook_result_bytes" in (info(pm, "wide").last_hook_error or "")


def test_the_default_bound_is_16_mib(home: PluginHome) -> None:
    assert DEFAULT_MAX_HOOK_RESULT_BYTES == 16 * 1024 * 1024
    home.add_plugin("huge", transform(DEFAULT_MAX_HOOK_RESULT_BYTES + 1))
    pm = load(home, None, limit=None)
    result = Hooks(pm).transform_tool_result(tool_name="terminal", args={}, result="raw")
    assert result == "raw"
    assert info(pm, "huge").hook_errors == 1


def test_zero_means_no_bound(home: PluginHome) -> None:
    home.add_plugin("big", transform(LIMIT * 4))
    pm = load(home, None, limit=0)
    result = Hooks(pm).transform_tool_result(tool_name="terminal", args={}, result="raw")
    assert len(result) == LIMIT * 4


HUGE_BLOCKER = f"""
from hermes_hooks import hookimpl

@hookimpl
def pre_tool_call(tool_name, args):
    return {{"action": "block", "message": "no " + "x" * {LIMIT}}}
"""


def test_a_huge_decision_of_the_fail_closed_tool_gate_blocks_naming_the_plugin(
    home: PluginHome, callback_timeout: float | None
) -> None:
    home.add_plugin("gate", HUGE_BLOCKER)
    pm = load(home, callback_timeout)
    decision = Hooks(pm).pre_tool_call(tool_name="terminal", args={"command": "ls"})
    assert decision.is_blocked
    assert decision.plugin == "gate"
    assert "max_hook_result_bytes" in (decision.message or "")
    assert len(decision.message or "") < LIMIT


HUGE_CONTEXT = f"""
from hermes_hooks import hookimpl

@hookimpl
def pre_llm_call(user_message):
    return {{"context": "x" * {LIMIT + 1}}}
"""

SMALL_CONTEXT = """
from hermes_hooks import hookimpl

@hookimpl
def pre_llm_call(user_message):
    return {"context": "remember the milk"}
"""


def test_a_huge_context_is_left_out_and_the_others_kept(
    home: PluginHome, callback_timeout: float | None
) -> None:
    home.add_plugin("aa-huge", HUGE_CONTEXT)
    home.add_plugin("bb-small", SMALL_CONTEXT)
    pm = load(home, callback_timeout)
    found = pm.hook.pre_llm_call(user_message="hi", conversation_history=[])
    assert found == [{"context": "remember the milk"}]
    assert "dict holding more, more than" in (info(pm, "aa-huge").last_hook_error or "")


def test_the_async_path_applies_the_same_bound(
    home: PluginHome, callback_timeout: float | None
) -> None:
    home.add_plugin("huge", transform(LIMIT + 1))
    pm = load(home, callback_timeout)
    hooks = Hooks(pm)
    result = asyncio.run(hooks.atransform_tool_result(tool_name="t", args={}, result="raw"))
    assert result == "raw"
    assert info(pm, "huge").hook_errors == 1


def test_strict_mode_raises_naming_the_plugin(home: PluginHome) -> None:
    home.add_plugin("huge", transform(LIMIT + 1))
    pm = load(home, 0, strict=True)
    with pytest.raises(HookResultError, match=r"plugin 'huge' hook 'transform_tool_result' \("):
        Hooks(pm).transform_tool_result(tool_name="terminal", args={}, result="raw")


WRAPPER = f"""
from hermes_hooks import hookimpl

@hookimpl(wrapper=True)
def transform_tool_result(tool_name, result):
    inner = yield
    return "x" * {LIMIT + 1}
"""

OLD_WRAPPER = f"""
from hermes_hooks import hookimpl

@hookimpl(hookwrapper=True)
def transform_tool_result(tool_name, result):
    outcome = yield
    outcome.force_result("x" * {LIMIT + 1})
"""


@pytest.mark.parametrize("code", [WRAPPER, OLD_WRAPPER], ids=["wrapper", "hookwrapper"])
def test_a_wrapper_cannot_put_a_huge_result_in_place_of_the_inner_one(
    home: PluginHome, code: str
) -> None:
    home.add_plugin("aa-wrap", code)
    home.add_plugin("bb-small", transform(3, "y"))
    pm = load(home, None)
    result = Hooks(pm).transform_tool_result(tool_name="terminal", args={}, result="raw")
    assert result == "yyy"
    error = info(pm, "aa-wrap").last_hook_error or ""
    assert "wrapper returned str of" in error
    assert "more than plugins.max_hook_result_bytes" in error


def test_the_failure_is_logged_naming_the_plugin(
    home: PluginHome, caplog: pytest.LogCaptureFixture
) -> None:
    home.add_plugin("huge", transform(LIMIT + 1))
    pm = load(home, None)
    with caplog.at_level(logging.WARNING):
        Hooks(pm).transform_tool_result(tool_name="terminal", args={}, result="raw")
    assert f"plugin 'huge' failed in hook 'transform_tool_result': {TOO_BIG}" in caplog.text


# --- the setting and the measure ---------------------------------------------------------------


@pytest.mark.parametrize("raw", ["16MB", -1, True, 1.5])
def test_a_wrong_setting_falls_back_to_the_default_with_a_warning(raw: object) -> None:
    config = PluginsConfig.from_config({"plugins": {"max_hook_result_bytes": raw}})
    assert config.max_hook_result_bytes == DEFAULT_MAX_HOOK_RESULT_BYTES
    assert len(config.warnings) == 1
    assert "plugins.max_hook_result_bytes: expected a whole number of bytes" in config.warnings[0]


def test_a_reload_applies_the_new_bound(home: PluginHome) -> None:
    home.add_plugin("big", transform(LIMIT + 1))
    pm = load(home, None)
    hooks = Hooks(pm)
    assert hooks.transform_tool_result(tool_name="t", args={}, result="raw") == "raw"
    config = yaml.safe_load((home.root / "config.yaml").read_text("utf-8"))
    config["plugins"]["max_hook_result_bytes"] = LIMIT * 2
    (home.root / "config.yaml").write_text(yaml.safe_dump(config), "utf-8")
    pm.reload_config()
    assert len(hooks.transform_tool_result(tool_name="t", args={}, result="raw")) == LIMIT + 1


def test_the_measure_counts_nested_text_bytes_and_items_and_survives_cycles() -> None:
    assert oversized({"context": "x" * 10}, 100) is None
    assert oversized({"context": "x" * 200}, 100) is not None
    assert oversized([b"y" * 101], 100) is not None
    assert oversized([None] * 101, 100) is not None  # every item counts
    loop: list[object] = []
    loop.append(loop)
    assert oversized(loop, 100) is None
    assert oversized("é" * 60, 100) == 120  # two UTF-8 bytes each
    assert oversized("x" * 10**6, 0) is None  # no bound
