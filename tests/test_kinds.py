"""Kinds as in Hermes: inferred from a plugin's source, and served by a family's config key.

A plugin without ``kind`` whose ``__init__.py`` registers a memory provider is ``exclusive``;
one that registers a ``ProviderProfile`` is ``model-provider``. Both are chosen by their
family's key (``memory.provider``, ``model.provider``), not by ``plugins.enabled``; until a
family serves them they are listed, never imported. A memory family of this test's own, in
place of the real one, shows the selection working on its own; ``test_memory.py`` tests the
real one.
"""

from __future__ import annotations

import abc
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from plugin_builders import info, load, status_of, write_config, write_distribution, write_plugin

from hermes_hooks.backends.family import Family, Selection
from hermes_hooks.plugins import extensions
from hermes_hooks.plugins.kinds import SCAN_LIMIT, infer_kind

pytestmark = pytest.mark.usefixtures("bundled")

MEMORY_PLUGIN = """
from hermes_hooks_test_memory import Recall

IMPORTED = True

def register(ctx):
    ctx.register_memory_provider(Recall("{name}"))
"""

PROFILE_PLUGIN = """
from providers import ProviderProfile, register_provider

register_provider(ProviderProfile(name="acme"))
"""


class MemoryProvider(abc.ABC):
    """The ABC of the test's memory family."""

    @property
    @abc.abstractmethod
    def name(self) -> str: ...


class Recall(MemoryProvider):
    def __init__(self, name: str) -> None:
        self._name = name

    @property
    def name(self) -> str:
        return self._name


MEMORY: Family[MemoryProvider] = Family(
    name="memory",
    title="memory",
    provider_type=MemoryProvider,
    selections=(Selection("memory.provider"),),
    ctx_method="register_memory_provider",
    plugin_kind="exclusive",
)


@pytest.fixture
def memory_family(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """List the test's memory family, and a module its plugins import."""
    module = type(sys)("hermes_hooks_test_memory")
    module.Recall = Recall  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "hermes_hooks_test_memory", module)
    extensions.add_family("memory", f"{__name__}:MEMORY")
    yield
    extensions.add_family("memory", REAL_MEMORY)


REAL_MEMORY = "hermes_hooks.backends.memory:MEMORY"


@pytest.fixture
def no_memory_family() -> Iterator[None]:
    """Take the real memory family away, as in a version without one."""
    extensions.remove_family("memory")
    yield
    extensions.add_family("memory", REAL_MEMORY)


def test_the_scan_reads_the_markers_hermes_reads() -> None:
    assert infer_kind("ctx.register_memory_provider(P())") == "exclusive"
    assert infer_kind("class P(MemoryProvider): ...") == "exclusive"
    assert infer_kind("register_provider(ProviderProfile(name='x'))") == "model-provider"
    assert infer_kind("register_provider(x)") is None  # an image provider, say
    assert infer_kind("#" * SCAN_LIMIT + "\nregister_memory_provider") is None
    assert infer_kind("ctx.register_context_engine(E())") == "context-engine"
    assert infer_kind("class E(ContextEngine): ...") == "context-engine"


def test_a_plugin_in_a_memory_or_context_engine_folder_is_of_that_kind(
    home: Path, user: Path
) -> None:
    # As Hermes loads every folder of plugins/memory/ and plugins/context_engine/.
    write_plugin(user, "memory/plain", "def register(ctx):\n    pass\n")
    write_plugin(user, "context_engine/lean", "def register(ctx):\n    pass\n")
    write_plugin(user, "tools/plain", "def register(ctx):\n    pass\n")
    pm = load(home)
    assert (info(pm, "memory/plain").kind, info(pm, "memory/plain").kind_inferred) == (
        "exclusive", True,
    )  # fmt: skip
    assert info(pm, "context_engine/lean").kind == "context-engine"
    assert info(pm, "context_engine/lean").served_by == "context.engine"
    assert info(pm, "tools/plain").kind == "standalone"


@pytest.mark.usefixtures("no_memory_family")
def test_a_memory_plugin_without_a_family_is_listed_and_never_imported(
    home: Path, user: Path
) -> None:
    write_plugin(user, "memory/mem0", MEMORY_PLUGIN.format(name="mem0"))
    write_plugin(user, "acme", PROFILE_PLUGIN)
    write_config(home, enabled=["memory/mem0", "acme"])
    pm = load(home)
    mem0, acme = info(pm, "memory/mem0"), info(pm, "acme")
    assert (mem0.kind, mem0.kind_inferred, mem0.status) == ("exclusive", True, "not enabled")
    assert mem0.served_by == "memory.provider"
    assert "through memory.provider, not plugins.enabled" in (mem0.reason or "")
    assert "listed, not loaded" in (mem0.reason or "")
    assert mem0.error is None
    assert (acme.kind, acme.status, acme.served_by) == (
        "model-provider",
        "not enabled",
        "model.provider",
    )
    assert not [
        m for m in sys.modules if m.startswith(("hermes_plugins.memory", "hermes_plugins.acme"))
    ]


def test_a_declared_kind_is_never_replaced_by_the_scan(home: Path, user: Path) -> None:
    write_plugin(user, "notes", MEMORY_PLUGIN.format(name="n"), manifest={"kind": "standalone"})
    pm = load(home)
    assert (info(pm, "notes").kind, info(pm, "notes").kind_inferred) == ("standalone", False)


@pytest.mark.usefixtures("memory_family")
def test_the_family_key_selects_one_memory_plugin_and_lists_the_others(
    home: Path, user: Path
) -> None:
    write_plugin(user, "memory/mem0", MEMORY_PLUGIN.format(name="mem0"))
    write_plugin(user, "memory/honcho", MEMORY_PLUGIN.format(name="honcho"))
    write_config(home, memory={"provider": "honcho"})  # and not in plugins.enabled
    pm = load(home)
    assert status_of(pm, "memory/honcho") == ("enabled", None)
    assert info(pm, "memory/honcho").reason == "selected by memory.provider"
    assert info(pm, "memory/honcho").providers == ("memory:honcho",)
    mem0 = info(pm, "memory/mem0")
    assert (mem0.status, mem0.error) == ("not enabled", None)
    assert "memory.provider is 'honcho'" in (mem0.reason or "")
    assert "Set memory.provider: mem0 in config.yaml" in (mem0.reason or "")
    assert "hermes_plugins.memory__mem0" not in sys.modules


@pytest.mark.usefixtures("memory_family")
def test_disabled_and_requires_env_still_apply_to_a_selected_plugin(home: Path, user: Path) -> None:
    write_plugin(user, "memory/mem0", MEMORY_PLUGIN.format(name="mem0"))
    write_plugin(
        user, "memory/cloud", MEMORY_PLUGIN.format(name="cloud"),
        manifest={"requires_env": ["CLOUD_MEMORY_KEY"]},
    )  # fmt: skip
    write_config(home, disabled=["memory/mem0"], memory={"provider": "mem0"})
    pm = load(home)
    assert status_of(pm, "memory/mem0") == ("disabled", None)
    pm.unload_all()
    write_config(home, memory={"provider": "cloud"})
    pm = load(home)
    cloud = info(pm, "memory/cloud")
    assert (cloud.status, cloud.error) == ("enabled", None)  # a warning, as in Hermes
    assert "CLOUD_MEMORY_KEY" in " ".join(cloud.warnings)


@pytest.mark.usefixtures("memory_family")
def test_a_malformed_family_section_is_said_not_raised(home: Path, user: Path) -> None:
    write_plugin(user, "memory/mem0", MEMORY_PLUGIN.format(name="mem0"))
    write_config(home, memory={"provider": 7})
    pm = load(home)
    mem0 = info(pm, "memory/mem0")
    assert mem0.status == "not enabled"
    assert "memory.provider: expected a string, found an integer" in (mem0.reason or "")


def test_an_entry_point_plugin_is_classified_from_its_source_without_import(
    home: Path, site: Path
) -> None:
    write_distribution(
        site,
        "mem-plugin",
        {"mem": "mem_plugin"},
        {
            "mem_plugin/__init__.py": MEMORY_PLUGIN.format(name="pip"),
            "mem_plugin/plugin.yaml": (
                "name: mem\nprovides_tools: [recall]\nhooks: [on_session_end]\n"
            ),
        },
    )
    write_config(home, enabled=["mem"])
    pm = load(home)
    mem = info(pm, "mem")
    assert (mem.source, mem.kind, mem.kind_inferred, mem.status) == (
        "entrypoint", "exclusive", True, "not enabled",
    )  # fmt: skip
    assert "mem_plugin" not in sys.modules
    candidate = next(c for c in pm.discover() if c.key == "mem")
    assert candidate.manifest is not None
    assert candidate.manifest.provides_tools == ("recall",)
    assert candidate.manifest.hooks == ("on_session_end",)


@pytest.mark.usefixtures("memory_family")
def test_enabling_a_memory_plugin_points_at_its_family_key(
    home: Path, user: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cli_support import invoke

    write_plugin(user, "memory/honcho", MEMORY_PLUGIN.format(name="honcho"))
    monkeypatch.setenv("HERMES_HOME", str(home))
    result = invoke("plugins", "enable", "honcho")
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        "Plugin 'memory/honcho' enabled.\n"
        "'memory/honcho' is a memory provider plugin: it loads when memory.provider names it "
        "(set memory.provider: honcho in config.yaml).\n"
    )
