"""Each private name of pluggy that hermes-hooks uses still means what we rely on.

``hermes_hooks/calling/pluggy_private.py`` is the only module that touches them; when pluggy
changes one, the test of that name fails and says which and where to adapt.
"""

from __future__ import annotations

import ast
import inspect
import warnings
from collections.abc import Generator, Mapping, Sequence
from pathlib import Path

import pluggy
import pytest

import hermes_hooks
from hermes_hooks.calling import pluggy_private
from hermes_hooks.calling.pluggy_private import (
    PluggySeams,
    live_hookimpls,
    raise_wrapfail,
    run_old_style_hookwrapper,
)

ADAPT = "adapt hermes_hooks/calling/pluggy_private.py (and docs/explanation/pluggy-internals.md)"
PROJECT = "pins"
spec = pluggy.HookspecMarker(PROJECT)
impl = pluggy.HookimplMarker(PROJECT)


class Spec:
    @spec
    def ping(self, x: int) -> None: ...


def manager() -> PluggySeams:
    pm = PluggySeams(PROJECT)
    pm.add_hookspecs(Spec)
    return pm


def test_raise_wrapfail_raises_pluggys_runtime_error() -> None:
    def wrapper() -> Generator[None, object, object]:
        yield

    gen = wrapper()
    with pytest.raises(RuntimeError, match=r"wrap_controller at 'wrapper' .* did not yield"):
        raise_wrapfail(gen, "did not yield")


def test_run_old_style_hookwrapper_adapts_a_hookwrapper() -> None:
    seen: list[object] = []

    class Plugin:
        @impl(hookwrapper=True)
        def ping(self, x: int) -> Generator[None, pluggy.Result[object], None]:
            outcome = yield
            seen.append(outcome.get_result())
            outcome.force_result(["wrapped"])

    pm = manager()
    pm.register(Plugin())
    (hookimpl,) = pm.hook.ping.get_hookimpls()
    params = list(inspect.signature(pluggy._callers.run_old_style_hookwrapper).parameters)
    assert params == ["hook_impl", "hook_name", "args", "kwargs"], (
        f"pluggy's run_old_style_hookwrapper takes {params} now: {ADAPT}"
    )
    gen = run_old_style_hookwrapper(hookimpl, "ping", (1,), None)
    next(gen)
    with pytest.raises(StopIteration) as stop:
        gen.send([1])
    assert seen == [[1]]
    assert stop.value.value == ["wrapped"], f"the adapter's result changed: {ADAPT}"


def test_hookcaller_hookimpls_is_the_live_list() -> None:
    class Plugin:
        @impl
        def ping(self, x: int) -> None:
            return None

    pm = manager()
    caller = pm.hook.ping
    live = live_hookimpls(caller)
    assert isinstance(live, list), f"HookCaller._hookimpls is no longer a list: {ADAPT}"
    pm.register(Plugin())
    assert len(live) == 1, f"HookCaller._hookimpls is not the list pluggy adds to: {ADAPT}"
    assert live == caller.get_hookimpls()
    assert live is live_hookimpls(caller)


def test_inner_hookexec_is_what_tracing_wraps() -> None:
    pm = manager()
    assert pm.is_untraced(), f"PluginManager._inner_hookexec changed at start: {ADAPT}"
    undo = pm.enable_tracing()
    assert not pm.is_untraced(), f"enable_tracing no longer replaces _inner_hookexec: {ADAPT}"
    undo()
    assert pm.is_untraced()
    undo = pm.add_hookcall_monitoring(lambda *a: None, lambda *a: None)
    assert not pm.is_untraced(), f"call monitoring no longer replaces _inner_hookexec: {ADAPT}"
    undo()


def test_every_hookcaller_calls_the_managers_hookexec() -> None:
    calls: list[str] = []

    class Seen(PluggySeams):
        def run_hook_call(
            self,
            hook_name: str,
            methods: Sequence[pluggy.HookImpl],
            kwargs: Mapping[str, object],
            firstresult: bool,
        ) -> object | list[object]:
            calls.append(hook_name)
            return super().run_hook_call(hook_name, methods, kwargs, firstresult)

    class Plugin:
        @impl
        def ping(self, x: int) -> int:
            return x

    pm = Seen(PROJECT)
    pm.add_hookspecs(Spec)
    pm.register(Plugin())
    assert pm.hook.ping(x=2) == [2]
    assert pm.hook.ping.call_extra([lambda x: 3], {"x": 1}) == [3, 1]
    assert calls == ["ping", "ping"], f"HookCaller no longer calls manager._hookexec: {ADAPT}"
    params = list(inspect.signature(pluggy.PluginManager._hookexec).parameters)
    assert params == ["self", "hook_name", "methods", "kwargs", "firstresult"], (
        f"PluginManager._hookexec takes {params} now: {ADAPT}"
    )


def test_verify_hook_runs_before_the_implementation_is_added() -> None:
    order: list[tuple[str, int]] = []

    class Seen(PluggySeams):
        def on_hookimpl_verified(self, hook: pluggy.HookCaller, hookimpl: pluggy.HookImpl) -> None:
            order.append((hook.name, len(hook.get_hookimpls())))

    class Plugin:
        @impl
        def ping(self, x: int) -> None:
            return None

    pm = Seen(PROJECT)
    pm.add_hookspecs(Spec)
    pm.register(Plugin())
    assert order == [("ping", 0)], (
        f"PluginManager._verify_hook is no longer called before pluggy adds the "
        f"implementation: {ADAPT}"
    )
    params = list(inspect.signature(pluggy.PluginManager._verify_hook).parameters)
    assert params == ["self", "hook", "hookimpl"], f"_verify_hook takes {params} now: {ADAPT}"


def test_the_overridden_methods_and_attributes_exist_in_pluggy() -> None:
    for name in pluggy_private.OVERRIDDEN_METHODS:
        assert callable(getattr(pluggy.PluginManager, name, None)), f"pluggy lost {name}: {ADAPT}"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pm = pluggy.PluginManager(PROJECT)
    assert hasattr(pm, "_inner_hookexec"), f"pluggy lost PluginManager._inner_hookexec: {ADAPT}"
    slots = pluggy.HookCaller.__slots__
    assert "_hookimpls" in slots, f"pluggy lost HookCaller._hookimpls: {ADAPT}"


def _private_uses(source: str) -> list[str]:
    """Return the pluggy private names a module imports or the private attributes it reads."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("pluggy._"):
            found.append(f"import from {node.module}")
        elif isinstance(node, ast.Attribute) and node.attr in (
            "_hookimpls",
            "_inner_hookexec",
            "_hookexec",
            "_verify_hook",
        ):
            found.append(f".{node.attr} at line {node.lineno}")
        elif isinstance(node, ast.FunctionDef) and node.name in ("_hookexec", "_verify_hook"):
            found.append(f"def {node.name}")
    return found


def test_no_other_module_touches_pluggys_private_names() -> None:
    root = Path(hermes_hooks.__file__).parent
    offenders = {
        str(path.relative_to(root)): uses
        for path in sorted(root.rglob("*.py"))
        if path.name != "pluggy_private.py"
        and (uses := _private_uses(path.read_text(encoding="utf-8")))
    }
    assert offenders == {}, "only calling/pluggy_private.py may use pluggy's private names"
