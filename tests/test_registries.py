"""Tests for hermes_hooks.registries.base: the one ownership policy every registry follows."""

from __future__ import annotations

import threading

import pytest
from plugin_builders import PluginHome, home, info

from hermes_hooks.errors import HermesHooksError, RegistrationError
from hermes_hooks.registries.base import HOST, Handle, Registry

__all__ = ["home"]  # the fixture, imported for pytest


@pytest.fixture
def registry() -> Registry[str]:
    """A registry of strings, as every real registry is built on."""
    return Registry("widget")


# --- owner and handle ----------------------------------------------------------------------------


def test_registration_records_its_owner(registry: Registry[str]) -> None:
    registry.register("a", "value-a", owner="plug")
    registry.register("b", "value-b")

    entry = registry.get_entry("a")
    assert entry is not None
    assert (entry.name, entry.value, entry.owner) == ("a", "value-a", "plug")
    assert registry.owner_of("a") == "plug"
    assert registry.owner_of("b") == HOST
    assert registry.owner_of("missing") is None
    assert registry.names(owner="plug") == ["a"]
    assert registry.names() == ["a", "b"]
    assert "a" in registry
    assert len(registry) == 2


def is_active(handle: Handle) -> bool:
    """``handle.active`` read afresh: mypy keeps an asserted attribute narrowed across calls."""
    return handle.active


def test_handle_undoes_and_twice_is_harmless(registry: Registry[str]) -> None:
    handle = registry.register("a", "value", owner="plug")
    assert isinstance(handle, Handle)
    assert (handle.name, handle.owner, handle.kind) == ("a", "plug", "widget")
    assert handle.active

    handle.unregister()
    assert registry.get("a") is None
    assert not is_active(handle)

    handle.unregister()
    handle.dispose()  # Hermes' name for the same thing
    assert registry.get("a") is None


def test_handle_speaks_hermes_plugin_registration(registry: Registry[str]) -> None:
    handle = registry.register("a", "value", owner="plug")
    assert (handle.key, handle.plugin_key) == ("a", "plug")

    handle.dispose()

    assert registry.get("a") is None
    assert not handle.active


def test_stale_handle_leaves_a_newer_registration_alone(registry: Registry[str]) -> None:
    first = registry.register("a", "one", owner="plug")
    registry.register("a", "two", owner="plug")

    first.unregister()

    assert registry.get("a") == "two"


# --- collisions ----------------------------------------------------------------------------------


def test_host_name_refused_to_a_plugin(registry: Registry[str]) -> None:
    registry.register("shared", "host value")

    with pytest.raises(RegistrationError, match=r"widget 'shared' from plugin 'plug'.*the host"):
        registry.register("shared", "plugin value", owner="plug")

    assert registry.get("shared") == "host value"
    assert registry.owner_of("shared") == HOST


def test_another_plugins_name_refused_naming_both_owners(registry: Registry[str]) -> None:
    registry.register("shared", "first", owner="alpha")

    with pytest.raises(RegistrationError) as caught:
        registry.register("shared", "second", owner="beta")

    message = str(caught.value)
    assert "'alpha'" in message
    assert "'beta'" in message
    assert "widget 'shared'" in message
    assert isinstance(caught.value, HermesHooksError)
    assert isinstance(caught.value, ValueError)
    assert registry.get("shared") == "first"


def test_host_refused_a_name_a_plugin_holds(registry: Registry[str]) -> None:
    registry.register("shared", "plugin", owner="alpha")

    with pytest.raises(RegistrationError, match=r"from the host.*plugin 'alpha'"):
        registry.register("shared", "host")


def test_same_owner_re_registering_replaces(registry: Registry[str]) -> None:
    registry.register("a", "one", owner="plug")
    handle = registry.register("a", "two", owner="plug")

    assert registry.get("a") == "two"
    assert registry.names() == ["a"]

    handle.unregister()
    assert registry.get("a") is None


def test_invalid_names_refused(registry: Registry[str]) -> None:
    with pytest.raises(RegistrationError, match="non-empty string"):
        registry.register("", "value", owner="plug")
    with pytest.raises(RegistrationError, match="non-empty string"):
        registry.register("   ", "value", owner="plug")
    with pytest.raises(RegistrationError, match="non-empty string"):
        registry.register(42, "value", owner="plug")  # type: ignore[arg-type]
    assert registry.get(42) is None  # type: ignore[arg-type]


def test_normalize_applies_to_register_and_lookup() -> None:
    registry: Registry[int] = Registry("thing", normalize=str.lower)
    registry.register("MiXeD", 1, owner="plug")

    assert registry.names() == ["mixed"]
    assert registry.get("MIXED") == 1
    assert "Mixed" in registry


def test_closest_names(registry: Registry[str]) -> None:
    for name in ("search_web", "search_files", "terminal"):
        registry.register(name, name)

    assert registry.closest("search_wbe")[0] == "search_web"
    assert registry.closest("zzz") == []
    assert registry.closest(None) == []


# --- removal and restore -------------------------------------------------------------------------


def test_remove_owner_removes_only_that_owner(registry: Registry[str]) -> None:
    registry.register("a1", "x", owner="alpha")
    registry.register("a2", "x", owner="alpha")
    registry.register("b1", "x", owner="beta")
    registry.register("h1", "x")

    assert registry.remove_owner("alpha") == ["a1", "a2"]

    assert registry.names() == ["b1", "h1"]
    assert registry.remove_owner("alpha") == []


def test_remove_owner_restores_displaced_host_entry(registry: Registry[str]) -> None:
    registry.register("shared", "host value")
    registry.register("shared", "plugin value", owner="plug", replace_host=True)
    assert registry.get("shared") == "plugin value"
    assert registry.owner_of("shared") == "plug"

    assert registry.remove_owner("plug") == ["shared"]

    assert registry.get("shared") == "host value"
    assert registry.owner_of("shared") == HOST


def test_handle_restores_displaced_host_entry(registry: Registry[str]) -> None:
    registry.register("shared", "host value")
    handle = registry.register("shared", "plugin value", owner="plug", replace_host=True)

    handle.unregister()

    assert registry.get("shared") == "host value"
    handle.unregister()
    assert registry.get("shared") == "host value"


def test_re_registered_replacement_still_restores_host(registry: Registry[str]) -> None:
    registry.register("shared", "host value")
    registry.register("shared", "one", owner="plug", replace_host=True)
    registry.register("shared", "two", owner="plug")
    assert registry.get("shared") == "two"

    registry.remove_owner("plug")

    assert registry.get("shared") == "host value"


def test_unregister_by_name_checks_the_owner(registry: Registry[str]) -> None:
    registry.register("a", "x", owner="alpha")

    assert not registry.unregister("a", owner="beta")
    assert registry.get("a") == "x"
    assert registry.unregister("a", owner="alpha")
    assert not registry.unregister("a")


def test_unloading_a_plugin_removes_its_entries(home: PluginHome) -> None:
    home.add_plugin(
        "reg_owner",
        """
        def register(ctx):
            ctx.register_tool("reg_owner_tool", "demo", {}, lambda args, **kw: "ok")
            ctx.register_command("reg-owner", lambda raw: "hi")
        """,
    )
    pm = home.load()
    assert info(pm, "reg_owner").tools == ("reg_owner_tool",)
    assert pm.tools.owner_of("reg_owner_tool") == "reg_owner"
    assert pm.commands.owner_of("reg-owner") == "reg_owner"

    assert pm.unload_plugin("reg_owner")

    assert pm.tools.get("reg_owner_tool") is None
    assert pm.commands.get("reg-owner") is None


def test_second_plugin_fails_on_first_plugins_name(home: PluginHome) -> None:
    for key in ("reg_first", "reg_second"):
        home.add_plugin(
            key,
            """
            def register(ctx):
                ctx.register_command("shared-cmd", lambda raw: "hi")
            """,
        )
    pm = home.load()

    second = info(pm, "reg_second")
    assert info(pm, "reg_first").status == "enabled"
    assert second.status == "enabled"
    (warning,) = second.warnings
    assert "'reg_first'" in warning
    assert "'reg_second'" in warning
    assert pm.commands.owner_of("shared-cmd") == "reg_first"


# --- threads -------------------------------------------------------------------------------------


def test_threads_registering_and_removing_distinct_names(registry: Registry[str]) -> None:
    threads_count, rounds = 8, 200
    errors: list[BaseException] = []
    start = threading.Barrier(threads_count)

    def work(index: int) -> None:
        owner = f"plug{index}"
        try:
            start.wait()
            for round_ in range(rounds):
                name = f"{owner}-{round_}"
                handle = registry.register(name, name, owner=owner)
                assert registry.get(name) == name
                registry.names()
                if round_ % 50 == 0:
                    registry.closest(name)
                if round_ % 2:
                    handle.unregister()
        except BaseException as exc:  # reported to the main thread
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(threads_count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    assert len(registry) == threads_count * rounds // 2
    for index in range(threads_count):
        kept = registry.names(owner=f"plug{index}")
        assert len(kept) == rounds // 2
        assert registry.remove_owner(f"plug{index}") == kept
    assert len(registry) == 0
