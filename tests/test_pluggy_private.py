"""Each private name of pluggy that hermes-hooks uses still means what we rely on.

``hermes_hooks/calling/pluggy_private.py`` is the only module that touches them; when pluggy
changes one, the test of that name fails and says which and where to adapt.
"""

from __future__ import annotations

import ast
import inspect
import random
import warnings
from collections.abc import Callable, Generator, Mapping
from pathlib import Path
from typing import Any

import pluggy
import pytest

import hermes_hooks
from hermes_hooks.calling import pluggy_private
from hermes_hooks.calling.aio import raise_wrapfail
from hermes_hooks.calling.pluggy_private import ContractHookCaller, PluggySeams, live_hookimpls

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


def test_our_wrapfail_error_is_worded_as_pluggys() -> None:
    def wrapper() -> Generator[None, object, object]:
        yield
        return None

    gen = wrapper()
    with pytest.raises(RuntimeError) as ours:
        raise_wrapfail(gen, "did not yield")
    with pytest.raises(RuntimeError) as theirs:
        pluggy._callers._raise_wrapfail(gen, "did not yield")  # compared, never called by us
    assert str(ours.value) == str(theirs.value), f"pluggy words a wrapfail otherwise now: {ADAPT}"


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


def test_every_call_runs_through_pluggys_loop_where_monitors_see_it() -> None:
    calls: list[tuple[str, dict[str, object]]] = []

    class Plugin:
        @impl
        def ping(self, x: int) -> int:
            return x

    pm = manager()
    pm.register(Plugin())
    undo = pm.add_hookcall_monitoring(
        lambda name, impls, kwargs: calls.append((name, dict(kwargs))), lambda *a: None
    )
    try:
        assert pm.hook.ping(x=2) == [2]
        assert pm.hook.ping.call_extra([lambda x: 3], {"x": 1}) == [3, 1]
    finally:
        undo()
    assert calls == [("ping", {"x": 2}), ("ping", {"x": 1})]


def test_verify_hook_is_pluggys_check_and_runs_before_the_implementation_is_added() -> None:
    order: list[tuple[str, int]] = []

    class Seen(PluggySeams):
        def on_hookimpl_added(self, hook: pluggy.HookCaller, hookimpl: pluggy.HookImpl) -> None:
            order.append((hook.name, len(hook.get_hookimpls())))

    class Plugin:
        @impl
        def ping(self, x: int) -> None:
            return None

    class Wrong:
        @impl
        def ping(self, y: int) -> None:
            return None

    pm = Seen(PROJECT)
    pm.add_hookspecs(Spec)
    pm.register(Plugin())
    assert order == [("ping", 0)]
    params = list(inspect.signature(pluggy.PluginManager._verify_hook).parameters)
    assert params == ["self", "hook", "hookimpl"], f"_verify_hook takes {params} now: {ADAPT}"
    with pytest.raises(pluggy.PluginValidationError, match=r"Argument\(s\) \{'y'\} are declared"):
        pm.register(Wrong(), name="wrong")
    assert pm.get_plugin("wrong") is None, "a refused plugin must leave nothing behind"
    assert len(pm.hook.ping.get_hookimpls()) == 1


def test_every_hook_is_a_contract_hook_caller_made_as_pluggy_makes_its_own() -> None:
    params = list(inspect.signature(pluggy.HookCaller.__init__).parameters)
    assert params == ["self", "name", "hook_execute", "specmodule_or_class", "spec_opts"], (
        f"HookCaller.__init__ takes {params} now: {ADAPT}"
    )

    class Plugin:
        @impl
        def ping(self, x: int) -> None:
            return None

        @impl(optionalhook=True)
        def unknown(self) -> None:
            return None

    pm = manager()
    pm.register(Plugin())
    assert type(pm.hook.ping) is ContractHookCaller
    assert type(pm.hook.unknown) is ContractHookCaller
    assert pm.hook.ping.spec is not None
    assert pm.hook.unknown.spec is None


class Defaulted:
    @spec
    def call(self, required: int, text: str, items: list[int], mapping: dict[str, int]) -> None:
        """A hook whose contract lets a call leave out ``text``, ``items`` and ``mapping``."""

    @spec(historic=True)
    def remembered(self, required: int, text: str) -> None:
        """A historic hook."""


DEFAULTS = {"text": "", "items": [], "mapping": {}}


class WithDefaults(PluggySeams):
    def hook_defaults(self, spec_function: object) -> Mapping[str, object]:
        assert callable(spec_function)
        parameters = inspect.signature(spec_function).parameters
        return {k: v for k, v in DEFAULTS.items() if k in parameters}


def test_a_call_leaving_out_defaulted_arguments_gets_fresh_defaults_and_no_warning() -> None:
    seen: list[dict[str, object]] = []

    class Plugin:
        @impl
        def call(self, required: int, text: str, items: list[int], mapping: dict[str, int]) -> None:
            items.append(required)
            seen.append({"text": text, "items": items, "mapping": mapping})

    pm = WithDefaults(PROJECT)
    pm.add_hookspecs(Defaulted)
    pm.register(Plugin())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pm.hook.call(required=1)
        pm.hook.call(required=2)
        pm.hook.call.call_extra([], {"required": 3})
    assert seen == [
        {"text": "", "items": [1], "mapping": {}},
        {"text": "", "items": [2], "mapping": {}},
        {"text": "", "items": [3], "mapping": {}},
    ]
    assert seen[0]["items"] is not seen[1]["items"]  # a fresh list per call


def test_a_call_leaving_out_a_required_argument_warns_in_pluggys_words() -> None:
    class Plugin:
        @impl
        def call(self, required: int) -> None:
            return None

    ours = WithDefaults(PROJECT)
    ours.add_hookspecs(Defaulted)
    ours.register(Plugin())
    theirs = pluggy.PluginManager(PROJECT)
    theirs.add_hookspecs(Defaulted)
    theirs.register(Plugin())
    caught = []
    for pm in (ours, theirs):
        with (
            pytest.warns(UserWarning, match="cannot be found") as record,
            pytest.raises(pluggy.HookCallError),
        ):
            pm.hook.call(text="t")
        caught.append((str(record[0].message), record[0].filename))
    tail = "which are declared in the hookspec cannot be found in this hook call"
    # Only the argument without a default is missing here; pluggy names the defaulted ones too.
    assert caught == [
        (f"Argument(s) 'required' {tail}", __file__),
        (f"Argument(s) 'required', 'items', 'mapping' {tail}", __file__),
    ], f"pluggy words or points its warning differently now: {ADAPT}"


def test_a_full_call_is_passed_on_without_a_copy_and_historic_calls_keep_pluggys_rules() -> None:
    got: list[Mapping[str, object]] = []
    pm = WithDefaults(PROJECT)
    pm.add_hookspecs(Defaulted)
    undo = pm.add_hookcall_monitoring(
        lambda name, impls, kwargs: got.append(kwargs), lambda *a: None
    )
    given = {"required": 1, "text": "x", "items": [], "mapping": {}}
    pm.hook.call(**given)
    undo()
    assert got[-1] == given
    with pytest.raises(AssertionError, match="historic"):
        pm.hook.remembered(required=1, text="")
    replayed: list[object] = []

    class Late:
        @impl
        def remembered(self, required: int, text: str) -> int:
            replayed.append((required, text))
            return required

    pm.hook.remembered.call_historic(kwargs={"required": 5})
    pm.register(Late())
    assert replayed == [(5, "")]
    params = list(inspect.signature(pluggy.HookCaller._maybe_apply_history).parameters)
    assert params == ["self", "method"], f"_maybe_apply_history takes {params} now: {ADAPT}"


def _random_plugin(rng: random.Random, index: int) -> object:
    """A plugin with a few implementations of ``ping`` and ``pong`` (no spec), random options."""
    namespace: dict[str, Callable[..., object]] = {}
    for n in range(rng.randint(1, 3)):
        hook = rng.choice(["ping", "pong"])
        kind = rng.choice(["plain", "plain", "tryfirst", "trylast", "both", "wrapper", "old"])
        opts: dict[str, object] = {"specname": hook}
        if kind in ("tryfirst", "both"):
            opts["tryfirst"] = True
        if kind in ("trylast", "both"):
            opts["trylast"] = True
        if kind == "wrapper":
            opts["wrapper"] = True
        elif kind == "old":
            opts["hookwrapper"] = True
        if opts.get("wrapper") or opts.get("hookwrapper"):
            if rng.random() < 0.5:
                opts["tryfirst"] = True

            def wrapping(x: int) -> Generator[None, object, object]:
                return (yield)

            function: Callable[[int], object] = wrapping
        else:

            def plain(x: int) -> None:
                return None

            function = plain

        namespace[f"impl_{n}"] = impl(**opts)(function)  # type: ignore[call-overload]
    return type(f"Plugin{index}", (), {k: staticmethod(v) for k, v in namespace.items()})()


def _order(pm: pluggy.PluginManager, hook: str) -> list[tuple[str, int]]:
    caller = getattr(pm.hook, hook, None)
    impls = caller.get_hookimpls() if caller is not None else []
    return [(i.plugin_name, id(i.function)) for i in impls]


@pytest.mark.parametrize("seed", range(40))
def test_registering_and_unregistering_orders_implementations_as_pluggy_does(seed: int) -> None:
    rng = random.Random(seed)
    ours = manager()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = pluggy.PluginManager(PROJECT)
    theirs.add_hookspecs(Spec)
    plugins = [_random_plugin(rng, i) for i in range(12)]
    live: list[object] = []
    for step in range(30):
        if live and rng.random() < 0.3:
            plugin = live.pop(rng.randrange(len(live)))
            assert ours.unregister(plugin) is theirs.unregister(plugin) is plugin
        else:
            free = [p for p in plugins if p not in live]
            if not free:
                continue
            plugin = rng.choice(free)
            name = f"p{plugins.index(plugin)}"
            assert ours.register(plugin, name=name) == theirs.register(plugin, name=name)
            live.append(plugin)
        for hook in ("ping", "pong"):
            assert _order(ours, hook) == _order(theirs, hook), f"seed {seed} step {step} {hook}"
        for plugin in plugins:
            assert ours.get_name(plugin) == theirs.get_name(plugin)
            assert ours.is_registered(plugin) is theirs.is_registered(plugin)
            mine_callers = ours.get_hookcallers(plugin)
            pluggy_callers = theirs.get_hookcallers(plugin)
            assert (None if mine_callers is None else [c.name for c in mine_callers]) == (
                None if pluggy_callers is None else [c.name for c in pluggy_callers]
            )
    assert ours.list_name_plugin() == theirs.list_name_plugin()


def test_registration_refuses_what_pluggy_refuses_in_its_words() -> None:
    class Plugin:
        @impl
        def ping(self, x: int) -> None:
            return None

    messages = []
    for pm in (manager(), pluggy.PluginManager(PROJECT)):
        plugin = Plugin()
        pm.register(plugin, name="one")
        found = []
        for again, name in ((Plugin(), "one"), (plugin, "two")):
            with pytest.raises(ValueError, match="already registered") as raised:
                pm.register(again, name=name)
            found.append(str(raised.value).split("\n")[0].split("=")[0])
        pm.set_blocked("blocked")
        assert pm.register(Plugin(), name="blocked") is None
        with pytest.raises(ValueError, match="do not agree"):
            pm.unregister(plugin, name="blocked")
        assert pm.unregister(name="nobody") is None
        messages.append(found)
    assert messages[0] == messages[1]


def test_a_hook_given_its_spec_after_its_implementations_follows_the_spec() -> None:
    class Later:
        @spec(firstresult=True)
        def late(self) -> int:
            """A first-result hook whose spec comes after its implementations."""
            return 0

    class One:
        @impl(optionalhook=True)
        def late(self) -> int:
            return 1

    pm = manager()
    pm.register(One())
    assert pm.hook.late() == [1]  # no spec yet: a list, from the hook's plan
    pm.add_hookspecs(Later)
    assert pm.hook.late() == 1  # the plan follows the spec now given


def test_a_staged_change_is_published_at_once() -> None:
    class One:
        @impl
        def ping(self, x: int) -> int:
            return 1

    class Two:
        @impl
        def ping(self, x: int) -> int:
            return 2

    pm = manager()
    one = One()
    pm.register(one)
    with pm.staged():
        pm.unregister(one)
        pm.register(Two())
        assert pm.hook.ping(x=0) == [1], "inside the block, calls see the hook as it was"
        with pm.staged():  # nested: the outer block publishes
            pm.register(One())
        assert pm.hook.ping(x=0) == [1]
    assert sorted(pm.hook.ping(x=0)) == [1, 2]


def test_the_overridden_methods_and_attributes_exist_in_pluggy() -> None:
    for name in pluggy_private.CALLER_OVERRIDES:
        assert callable(getattr(pluggy.HookCaller, name, None)), (
            f"pluggy lost HookCaller.{name}: {ADAPT}"
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pm = pluggy.PluginManager(PROJECT)
    found: dict[str, object] = {
        "PluginManager": pm,
        "HookCaller": pluggy.HookCaller("ping", pm._hookexec),
    }
    for dotted in pluggy_private.PRIVATE_ATTRIBUTES:
        owner, name = dotted.split(".")
        assert hasattr(found[owner], name), f"pluggy lost {dotted}: {ADAPT}"
    assert callable(pm._hookexec), f"pluggy lost PluginManager._hookexec: {ADAPT}"
    assert "_hookimpls" in pluggy.HookCaller.__slots__, f"HookCaller._hookimpls moved: {ADAPT}"


def test_registration_is_pluggys_own_register_and_unregister(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[str] = []
    register, unregister = pluggy.PluginManager.register, pluggy.PluginManager.unregister

    def counted_register(
        self: pluggy.PluginManager, plugin: object, name: str | None = None
    ) -> Any:
        calls.append("register")
        return register(self, plugin, name)

    def counted_unregister(
        self: pluggy.PluginManager, plugin: object | None = None, name: str | None = None
    ) -> Any:
        calls.append("unregister")
        return unregister(self, plugin, name)

    monkeypatch.setattr(pluggy.PluginManager, "register", counted_register)
    monkeypatch.setattr(pluggy.PluginManager, "unregister", counted_unregister)

    class Plugin:
        @impl
        def ping(self, x: int) -> None:
            return None

    pm = manager()
    plugin = Plugin()
    pm.register(plugin, name="one")
    assert pm.get_plugin("one") is plugin
    pm.unregister(plugin)
    assert calls == ["register", "unregister"]
    assert pm.get_hookcallers(plugin) is None


def test_pluggys_register_adds_every_implementation_through_the_callers_seam() -> None:
    # A hook without a spec too: its caller is a ContractHookCaller before pluggy adds to it,
    # so every implementation passes on_hookimpl_added (where the manager guards it).
    seen: list[tuple[str, str]] = []

    class Seen(PluggySeams):
        def on_hookimpl_added(self, hook: pluggy.HookCaller, hookimpl: pluggy.HookImpl) -> None:
            seen.append((hook.name, hookimpl.plugin_name))

    class Plugin:
        @impl
        def ping(self, x: int) -> None:
            return None

        @impl(specname="nospec")
        def other(self) -> None:
            return None

    pm = Seen(PROJECT)
    pm.add_hookspecs(Spec)
    pm.register(Plugin(), name="p")
    assert sorted(seen) == [("nospec", "p"), ("ping", "p")]
    assert type(pm.hook.nospec) is ContractHookCaller


PRIVATE_NAMES = frozenset(
    {
        "_hookimpls",
        "_inner_hookexec",
        "_multicall",
        "_hookexec",
        "_verify_hook",
        "_name2plugin",
        "_call_history",
        "_maybe_apply_history",
        "_apply_defaults",
        "_add_hookimpl",
        "_remove_plugin",
        "_verify_all_args_are_provided",
    }
)


def _private_uses(source: str) -> list[str]:
    """Return the pluggy private names a module imports or the private attributes it reads."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("pluggy._"):
            found.append(f"import from {node.module}")
        elif isinstance(node, ast.Attribute) and node.attr in PRIVATE_NAMES:
            found.append(f".{node.attr} at line {node.lineno}")
        elif isinstance(node, ast.FunctionDef) and node.name in PRIVATE_NAMES:
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


class HistoricSpec:
    @spec
    def a_plain(self, x: int) -> None: ...

    @spec(historic=True)
    def b_remembered(self, x: int) -> None: ...


def test_a_historic_replay_is_guarded_and_a_strict_failure_leaves_nothing_registered() -> None:
    from hermes_hooks.calling.guarded import GuardedManager

    class Failing:
        @impl
        def a_plain(self, x: int) -> None:
            return None

        @impl
        def b_remembered(self, x: int) -> None:
            raise RuntimeError("replayed and failed")

    lenient = GuardedManager(PROJECT)
    lenient.add_hookspecs(HistoricSpec)
    lenient.hook.b_remembered.call_historic(kwargs={"x": 1})
    lenient.register(Failing(), name="failing")  # the replay ran guarded: isolated
    assert lenient.get_failures("failing").count == 1

    strict = GuardedManager(PROJECT, strict=True)
    strict.add_hookspecs(HistoricSpec)
    strict.hook.b_remembered.call_historic(kwargs={"x": 1})
    plugin = Failing()
    with pytest.raises(RuntimeError, match="replayed and failed"):
        strict.register(plugin, name="failing")
    assert not strict.is_registered(plugin)
    assert strict.get_plugin("failing") is None
    assert strict.hook.a_plain.get_hookimpls() == []

    class Fine:
        @impl
        def a_plain(self, x: int) -> None:
            return None

    assert strict.register(Fine(), name="failing") == "failing"  # nothing was left in the way
