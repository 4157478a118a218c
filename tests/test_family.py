"""Tests for hermes_hooks.backends.family: one mechanism for every provider family.

A family of this test's own, ``notes``, is listed at the extension point the way the
composition root lists image generation and the models: a plugin registers a provider through
``ctx.register_notes_provider``, config chooses it, its host tool dispatches to it, unloading
brings back what it displaced, and ``hermes tools notes`` lists and chooses.
"""

from __future__ import annotations

import abc
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest
import yaml
from click.testing import CliRunner
from plugin_builders import PluginHome, home, write_config

from hermes_hooks.backends.family import (
    Family,
    NoProviderError,
    ProviderNotRegisteredError,
    ProviderRegistry,
    Selection,
)
from hermes_hooks.backends.listing import choose_provider, describe_family
from hermes_hooks.backends.models import (
    FactoryBackend,
    ModelBackend,
    ModelProvider,
    ModelResponse,
    ModelSettings,
    get_models,
)
from hermes_hooks.cli import cli
from hermes_hooks.errors import ConfigError, RegistrationError
from hermes_hooks.plugins import extensions
from hermes_hooks.plugins.extensions import ExtensionError
from hermes_hooks.plugins.manager import PluginManager
from hermes_hooks.registries.base import HOST

__all__ = ["home"]


class NoteProvider(abc.ABC):
    """The ABC of the test family."""

    @property
    @abc.abstractmethod
    def name(self) -> str: ...

    @property
    def display_name(self) -> str:
        return self.name.title()

    def is_available(self) -> bool:
        return True

    supports_archive = False

    @abc.abstractmethod
    def read(self, title: str) -> str: ...


class Plain(NoteProvider):
    def __init__(self, name: str = "plain", *, available: bool = True) -> None:
        self._name = name
        self._available = available

    @property
    def name(self) -> str:
        return self._name

    def is_available(self) -> bool:
        return self._available

    def read(self, title: str) -> str:
        return f"{self._name}: {title}"


class Archive(Plain):
    supports_archive = True


def _install(manager: PluginManager, registry: ProviderRegistry[NoteProvider]) -> None:
    def notes_read(args: dict[str, Any], **kwargs: Any) -> str:
        return registry.select_provider().read(str(args.get("title", "")))

    schema = {"name": "notes_read", "parameters": {"type": "object", "properties": {}}}
    manager.tools.register_tool(
        "notes_read", "notes", schema, notes_read, check_fn=registry.has_providers
    )


NOTES: Family[NoteProvider] = Family(
    name="notes",
    title="note",
    provider_type=NoteProvider,
    selections=(
        Selection("notes.provider", default="plain"),
        Selection("notes.archive", accepts=lambda p: bool(p.supports_archive)),
    ),
    model_key="notes.model",
    cli_name="notes",
    ctx_method="register_notes_provider",
    context_attributes={"notebook": lambda manager, key: f"notebook of {key}"},
    install_tools=_install,
    tool_names=("notes_read",),
)

PLUGIN = """
from test_family import Plain

def register(ctx):
    ctx.register_notes_provider(Plain({name!r}))
"""


@pytest.fixture(autouse=True)
def notes_family() -> Iterator[None]:
    extensions.add_family("notes", f"{__name__}:NOTES")
    yield
    extensions.remove_family("notes")


def configure(plugin_home: PluginHome, **notes: Any) -> None:
    write_config(plugin_home.root, plugin_home.enabled, notes=notes)


# --- the extension point --------------------------------------------------------------------------


def test_a_listed_family_gives_every_manager_its_registry_and_tools(home: PluginHome) -> None:
    pm = home.load()
    assert isinstance(pm.notes, ProviderRegistry)
    assert pm.backend("notes") is pm.notes
    assert pm.tools.owner_of("notes_read") == HOST
    assert not pm.tools.is_available("notes_read")  # no provider yet
    with pytest.raises(KeyError, match=r"no provider family 'nope' \(families: .*notes"):
        pm.backend("nope")
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        pm.nope  # noqa: B018


def test_a_plugin_registers_through_the_family_ctx_method(home: PluginHome) -> None:
    home.add_plugin("jotter", PLUGIN.format(name="jot"))
    pm = home.load()
    assert pm.notes.owner_of("jot") == "jotter"
    assert pm.get_plugin_info("jotter").providers == ("notes:jot",)  # type: ignore[union-attr]
    ctx = pm.get_context("jotter")
    assert ctx is not None
    assert "register_notes_provider" in dir(ctx)
    assert "notebook" in dir(ctx)
    assert ctx.notebook == "notebook of jotter"
    with pytest.raises(AttributeError, match="no attribute 'register_nothing_provider'"):
        ctx.register_nothing_provider  # noqa: B018
    assert json.loads(json.dumps(pm.tools.dispatch("notes_read", {"title": "t"}))) == "jot: t"


def test_register_provider_of_refuses_an_unknown_family(home: PluginHome) -> None:
    home.add_plugin("lost", "def register(ctx):\n    ctx.register_provider_of('nope', object())\n")
    pm = home.load()
    info = pm.get_plugin_info("lost")
    assert info is not None
    assert info.status == "enabled"
    assert "no provider family 'nope'" in info.warnings[0]


def test_a_provider_that_does_not_fit_is_refused_alone(home: PluginHome) -> None:
    home.add_plugin(
        "wrong",
        "from test_family import Plain\n"
        "def register(ctx):\n"
        "    assert ctx.register_notes_provider(object()) is None\n"
        "    ctx.register_notes_provider(Plain('fits'))\n",
    )
    home.add_plugin("jotter", PLUGIN.format(name="jot"))
    pm = home.load()
    wrong = pm.get_plugin_info("wrong")
    assert wrong is not None
    # As Hermes warns and ignores a provider of the wrong type: the rest of the plugin loads.
    assert (wrong.status, wrong.error) == ("enabled", None)
    (warning,) = wrong.warnings
    assert "notes provider 'object' refused" in warning
    assert "expected an NoteProvider instance (from hermes_hooks), found object" in warning
    assert pm.notes.names() == ["fits", "jot"]


def test_unloading_restores_the_provider_a_plugin_displaced(home: PluginHome) -> None:
    home.add_plugin("mine", PLUGIN.format(name="plain"))
    home.write_config()
    pm = home.manager()
    shipped = Plain()
    pm.notes.register_provider(shipped)  # the host's, before any plugin loads
    pm.discover_and_load()
    mine = pm.notes.get_provider("plain")
    assert mine is not shipped
    assert pm.notes.owner_of("plain") == "mine"  # last writer wins
    assert pm.unload_plugin("mine")
    assert pm.notes.get_provider("plain") is shipped
    assert pm.notes.owner_of("plain") == HOST
    assert pm.notes.names(owner="mine") == []


def test_plugin_code_may_register_a_provider_only_as_itself(home: PluginHome) -> None:
    home.add_plugin(
        "impostor",
        "from test_family import Plain\n"
        "def register(ctx):\n"
        "    ctx._manager.notes.register_provider(Plain('x'), owner='someone-else')\n",
    )
    pm = home.load()
    info = pm.get_plugin_info("impostor")
    assert info is not None
    assert info.status == "error"
    assert "may not register as plugin 'someone-else'" in (info.error or "")


def test_extension_errors_name_the_target() -> None:
    extensions.add_family("broken", "no_such_module_anywhere:FAMILY")
    try:
        with pytest.raises(ExtensionError, match="'no_such_module_anywhere:FAMILY'"):
            extensions.get_family("broken")
    finally:
        extensions.remove_family("broken")
    extensions.add_family("other", f"{__name__}:NOTES")
    try:
        with pytest.raises(ExtensionError, match="holds 'notes' instead"):
            extensions.get_family("other")
    finally:
        extensions.remove_family("other")
    with pytest.raises(ValueError, match="module:attribute"):
        extensions.add_family("bad", "no-colon")


# --- selection ------------------------------------------------------------------------------------


def registry(home: Path, *providers: NoteProvider) -> ProviderRegistry[NoteProvider]:
    found = ProviderRegistry(NOTES, home)
    for provider in providers:
        found.register_provider(provider)
    return found


def test_selection_follows_the_key_then_availability_then_the_default(home: PluginHome) -> None:
    configure(home)
    plain, other = Plain(), Plain("other")
    assert registry(home.root, other).select_provider() is other
    assert registry(home.root, plain, other).select_provider() is plain
    with pytest.raises(NoProviderError, match=r"several note providers .* notes.provider"):
        registry(home.root, Plain("a"), Plain("b")).select_provider()
    with pytest.raises(NoProviderError, match="no note provider is registered: enable a notes"):
        registry(home.root).select_provider()
    configure(home, provider="other")
    assert registry(home.root, plain, other).select_provider() is other
    configure(home, provider="othr")
    with pytest.raises(ProviderNotRegisteredError, match="did you mean 'other'"):
        registry(home.root, plain, other).select_provider()


def test_a_second_selection_key_chooses_among_the_providers_it_accepts(home: PluginHome) -> None:
    configure(home)
    archive = Archive("vault")
    notes = registry(home.root, Plain(), archive)
    archive_key = NOTES.selections[1]
    assert notes.select_provider(selection=archive_key) is archive
    configure(home, archive="plain")  # plain does not archive
    with pytest.raises(ProviderNotRegisteredError, match=r"notes.archive is 'plain'.*vault"):
        notes.select_provider(selection=archive_key)
    assert notes.get_active_provider(selection=archive_key) is None


def test_settings_refuse_wrong_types(home: PluginHome) -> None:
    (home.root / "config.yaml").write_text("notes: [x]\n", encoding="utf-8")
    with pytest.raises(
        ConfigError,
        match=r"yaml: notes: expected a mapping \(provider, archive, model, \.\.\.\), found a list",
    ):
        registry(home.root).settings()
    (home.root / "config.yaml").write_text("notes: {archive: 3}\n", encoding="utf-8")
    with pytest.raises(
        ConfigError, match=r"yaml: notes\.archive: expected a string, found an integer \(3\)"
    ):
        registry(home.root).settings()


def test_register_refuses_classes_and_bad_names(home: PluginHome) -> None:
    notes = registry(home.root)
    with pytest.raises(RegistrationError, match=r"found ABCMeta \(a class: pass an instance\)"):
        notes.register_provider(Plain)
    with pytest.raises(RegistrationError, match=r"without spaces \(used as notes\.provider\)"):
        notes.register_provider(Plain("two words"))


# --- hermes tools <family> ------------------------------------------------------------------------


def run(home: PluginHome, *args: str) -> Any:
    return CliRunner().invoke(cli, ["--home", str(home.root), "tools", "notes", *args])


def test_hermes_tools_lists_and_chooses_a_provider(home: PluginHome) -> None:
    home.add_plugin("jotter", PLUGIN.format(name="jot"))
    home.add_plugin("plainly", PLUGIN.format(name="plain"))
    configure(home)
    listed = run(home)
    assert listed.exit_code == 0, listed.output
    assert "notes.provider: (not set)    notes.archive: (not set)    notes.model: (not set)" in (
        listed.output
    )
    assert "* plain  Plain  (available; plugin plainly)" in listed.output
    assert "* serves notes_read: plain" in listed.output
    data = json.loads(run(home, "--json").output)
    assert (data["provider"], data["archive"], data["active"]) == (None, None, "plain")
    assert [p["name"] for p in data["providers"]] == ["jot", "plain"]

    chosen = run(home, "--provider", "jot")
    assert chosen.exit_code == 0, chosen.output
    assert chosen.output.startswith("notes.provider = jot")
    config = yaml.safe_load((home.root / "config.yaml").read_text(encoding="utf-8"))
    assert config["notes"] == {"provider": "jot"}
    wrong = run(home, "--provider", "jott")
    assert wrong.exit_code == 2
    assert "no notes provider named 'jott'; did you mean 'jot'?" in wrong.output


def test_describe_and_choose_are_library_calls(home: PluginHome) -> None:
    configure(home)
    notes = registry(home.root, Plain())
    assert describe_family(notes)["active"] == "plain"
    written = choose_provider(notes, home.root, "plain", None)
    assert written == {"provider": "plain", "model": None, "available": True}


# --- the models family ----------------------------------------------------------------------------


class Echo(ModelProvider):
    provider = "echo"

    def complete(self, messages: Any, tools: Any = (), **kwargs: Any) -> ModelResponse:
        return ModelResponse(text="echo")


class EchoBackend(ModelBackend):
    @property
    def name(self) -> str:
        return "echo"

    def create(self, settings: ModelSettings) -> ModelProvider:
        return Echo()


def test_ctx_llm_finds_its_model_through_the_models_family(home: PluginHome) -> None:
    home.add_plugin("asker", "def register(ctx):\n    pass\n")
    write_config(home.root, home.enabled, model={"provider": "echo"})
    pm = home.manager()
    pm.discover_and_load()
    assert "offline" in pm.models.names(owner=HOST)
    get_models(pm).register_provider(EchoBackend())
    ctx = pm.get_context("asker")
    assert ctx is not None
    assert ctx.llm.complete([{"role": "user", "content": "hi"}]).text == "echo"


def test_an_unknown_model_provider_names_the_known_ones(home: PluginHome) -> None:
    write_config(home.root, model={"provider": "ofline"})
    pm = PluginManager(home.root)
    unknown = r"model\.provider 'ofline' is unknown.*did you mean 'offline'"
    with pytest.raises(ConfigError, match=unknown):
        get_models(pm).create_model()
    backend = FactoryBackend("lazy", target="hermes_hooks.backends.models.offline:OfflineModel")
    assert backend.create(ModelSettings(provider="lazy")).provider == "offline"


def test_a_family_refuses_the_names_it_reserves_in_any_case(home: PluginHome) -> None:
    kept = attrs.evolve(
        NOTES, reserved_names=frozenset({"local"}), reserved_what="the host's own notes"
    )
    notes = ProviderRegistry(kept, home.root)
    with pytest.raises(RegistrationError) as refused:
        notes.register_provider(Plain("Local"), owner="jotter")
    assert str(refused.value) == (
        "notes provider 'Local' from plugin 'jotter' is refused: that is the name of the host's "
        "own notes (local); choose another name"
    )
    assert notes.register_provider(Plain("plain"), owner="jotter") is not None
