"""Model-provider profiles: Hermes-shaped plugins registering a ``ProviderProfile`` at import,
imported on the first profile lookup (never by listing plugins), owned by their plugin, chosen
by ``model.provider`` (a name or an alias) and resolved against ``config.yaml`` and the
environment; the profile's hooks shape requests sent to a real server on 127.0.0.1."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from host_helpers import ChatServer, chat_server
from plugin_builders import info, load, user_plugin, write_config

from hermes_hooks.backends.models import ModelError, ModelSettings, ProviderProfile, get_models
from hermes_hooks.backends.models.openai_compat import OpenAICompatibleModel
from hermes_hooks.errors import ConfigError, RegistrationError
from hermes_hooks.plugins.manager import PluginManager

__all__ = ["chat_server"]

# Shaped like Hermes' plugins/model-providers/*: Hermes' imports, registration at import time,
# no register(ctx); a subclass overriding hooks.
ACME = '''
"""Acme provider profile."""

from typing import Any

from providers import register_provider
from providers.base import OMIT_TEMPERATURE, ProviderProfile

IMPORTS = []
IMPORTS.append(1)


class AcmeProfile(ProviderProfile):
    """Acme: a reasoning switch in extra_body, a header per model."""

    def prepare_messages(self, messages):
        return [m for m in messages if m.get("role") != "developer"]

    def build_extra_body(self, *, session_id=None, **context: Any) -> dict[str, Any]:
        return {"provider": {"sort": "price"}}

    def build_api_kwargs_extras(self, *, reasoning_config=None, model=None, **context):
        return {"thinking": {"type": "enabled"}}, {
            "reasoning_effort": "low",
            "extra_headers": {"x-acme-model": model},
        }


acme = AcmeProfile(
    name="acme",
    aliases=("ac", "acme-ai"),
    display_name="Acme AI",
    env_vars=("ACME_API_KEY", "ACME_BASE_URL"),
    base_url="https://api.acme.invalid/v1",
    fallback_models=("acme-large", "acme-small"),
    default_headers={"X-Client": "hermes"},
    fixed_temperature=OMIT_TEMPERATURE,
    default_max_tokens=256,
)

register_provider(acme)
'''

MANIFEST = {"kind": "model-provider"}


@pytest.fixture
def acme_home(clean_home: Path) -> Iterator[Path]:
    user_plugin(clean_home, "model-providers/acme", ACME, manifest=MANIFEST)
    yield clean_home
    sys.modules.pop("hermes_plugins.model_providers__acme", None)


def acme_module(pm: PluginManager) -> object:
    module = pm.get_plugin_module("model-providers/acme")
    assert module is not None
    return module


def test_listing_plugins_imports_no_model_provider_until_a_profile_is_looked_up(
    acme_home: Path,
) -> None:
    write_config(acme_home)
    pm = load(acme_home)
    acme = info(pm, "model-providers/acme")
    assert (acme.kind, acme.status, acme.served_by) == (
        "model-provider",
        "not enabled",
        "model.provider",
    )
    assert "imported on the first profile lookup" in (acme.reason or "")
    assert pm.get_plugin_module("model-providers/acme") is None
    # The host's own backends are looked up without importing any plugin.
    assert get_models(pm).get_provider("offline") is not None
    assert pm.get_plugin_module("model-providers/acme") is None

    profile = get_models(pm).get_profile("acme-ai")  # an alias: every plugin is imported
    assert profile is not None
    assert profile.name == "acme"
    acme = info(pm, "model-providers/acme")
    assert (acme.status, acme.reason) == ("enabled", "imported on the first profile lookup")
    assert acme.providers == ("models:acme",)
    assert acme_module(pm).IMPORTS == [1]  # type: ignore[attr-defined]
    get_models(pm).get_profile("ac")
    assert acme_module(pm).IMPORTS == [1]  # type: ignore[attr-defined]  # imported once


def test_a_profile_is_owned_by_its_plugin_and_goes_when_it_unloads(acme_home: Path) -> None:
    write_config(acme_home)
    pm = load(acme_home)
    registry = get_models(pm)
    assert registry.canonical("AC") == "acme"
    assert registry.owner_of("acme") == "model-providers/acme"
    assert registry.aliases_of("acme") == ["ac", "acme-ai"]
    assert pm.unload_plugin("model-providers/acme")
    assert registry.get_profile("acme") is None
    assert registry.canonical("ac") is None


def test_a_user_plugin_overrides_a_bundled_profile_of_the_same_name(
    acme_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bundled = tmp_path / "bundled"
    user_plugin(bundled, "model-providers/acme", ACME.replace("Acme AI", "Bundled Acme"),
                manifest=MANIFEST)  # fmt: skip
    user_plugin(
        acme_home,
        "model-providers/acme-eu",
        "from providers import ProviderProfile, register_provider\n"
        "register_provider(ProviderProfile(name='acme', display_name='Acme EU',"
        " aliases=('ac',), base_url='https://eu.acme.invalid/v1'))\n",
        manifest=MANIFEST,
    )
    monkeypatch.setenv("HERMES_BUNDLED_PLUGINS", str(bundled / "plugins"))
    write_config(acme_home)
    pm = load(acme_home)
    registry = get_models(pm)
    profile = registry.get_profile("ac")
    assert profile is not None
    assert profile.display_name == "Acme EU"
    assert pm.unload_plugin("model-providers/acme-eu")
    profile = registry.get_profile("ac")  # the displaced one comes back, alias and all
    assert profile is not None
    assert profile.display_name in ("Bundled Acme", "Acme AI")
    sys.modules.pop("hermes_plugins.model_providers__acme_eu", None)


def test_disabled_applies_and_requires_env_warns_at_the_lookup(acme_home: Path) -> None:
    user_plugin(acme_home, "model-providers/needs-env", "raise SystemExit('never imported')",
                manifest={**MANIFEST, "requires_env": ["NEEDS_ENV_TOKEN"]})  # fmt: skip
    write_config(acme_home, disabled=["model-providers/acme"])
    pm = load(acme_home)
    assert get_models(pm).get_profile("acme") is None
    assert info(pm, "model-providers/acme").status == "disabled"
    needs = info(pm, "model-providers/needs-env")
    # requires_env warns, as in Hermes: the plugin is imported, and its own failure is said
    assert needs.status == "error"
    assert "never imported" in (needs.error or "")
    assert "NEEDS_ENV_TOKEN" in " ".join(needs.warnings)


def test_a_plugin_that_registers_nothing_at_import_and_has_no_register_fails(
    acme_home: Path,
) -> None:
    user_plugin(acme_home, "model-providers/empty", "X = 1\n", manifest=MANIFEST)
    write_config(acme_home)
    pm = load(acme_home)
    get_models(pm).names()
    error = info(pm, "model-providers/empty").error or ""
    assert "nothing registered when imported" in error


def test_the_profile_chosen_by_model_provider_or_an_alias(
    acme_home: Path, chat_server: ChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ACME_API_KEY", "sk-acme-secret")
    monkeypatch.setenv("ACME_BASE_URL", chat_server.base_url)
    write_config(acme_home, model={"provider": "acme-ai"})
    pm = load(acme_home)
    model = get_models(pm).create_model()
    assert isinstance(model, OpenAICompatibleModel)
    assert (model.provider, model.model, model.base_url) == (
        "acme",
        "acme-large",
        chat_server.base_url,
    )
    chat_server.reply_text("hi from acme")
    response = model.complete(
        [{"role": "developer", "content": "dropped"}, {"role": "user", "content": "hi"}],
        temperature=0.9,
    )
    model.close()
    assert response.text == "hi from acme"
    (request,) = chat_server.requests
    assert request["headers"]["Authorization"] == "Bearer sk-acme-secret"
    assert request["headers"]["X-Client"] == "hermes"
    assert request["headers"]["x-acme-model"] == "acme-large"
    assert request["json"] == {
        "model": "acme-large",
        "messages": [{"role": "user", "content": "hi"}],  # prepare_messages dropped one
        "max_tokens": 256,  # default_max_tokens; no temperature: OMIT_TEMPERATURE
        "provider": {"sort": "price"},
        "thinking": {"type": "enabled"},
        "reasoning_effort": "low",
    }


def test_where_the_model_endpoint_and_key_come_from(
    acme_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ACME_API_KEY", "k1")
    monkeypatch.setenv("OTHER_ACME_KEY", "k2")
    write_config(acme_home)
    registry = get_models(load(acme_home))
    backend = registry.get_provider("acme")
    assert backend is not None

    def resolved(**config: object) -> tuple[str, str, str | None]:
        settings = ModelSettings.from_config(config)
        found = backend.resolve(settings)  # type: ignore[attr-defined]
        return found.base_url, found.model, found.api_key

    assert resolved() == ("https://api.acme.invalid/v1", "acme-large", "k1")
    monkeypatch.setenv("ACME_BASE_URL", "http://127.0.0.1:1/v1")
    assert resolved()[0] == "http://127.0.0.1:1/v1"
    entry = {"acme": {"base_url": "http://127.0.0.1:2/v1", "default": "acme-small",
                      "api_key_env": "OTHER_ACME_KEY"}}  # fmt: skip
    assert resolved(providers=entry) == ("http://127.0.0.1:2/v1", "acme-small", "k2")
    # model: applies when model.provider names this profile (an alias counts), not otherwise.
    main = {"provider": "ac", "default": "acme-xl", "base_url": "http://127.0.0.1:3/v1"}
    assert resolved(model=main, providers=entry) == ("http://127.0.0.1:3/v1", "acme-xl", "k2")
    other = {"provider": "offline", "default": "x", "base_url": "http://127.0.0.1:4/v1"}
    assert resolved(model=other) == ("http://127.0.0.1:1/v1", "acme-large", "k1")


def test_a_missing_key_names_the_variables_and_a_local_endpoint_needs_none(
    acme_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_config(acme_home, model={"provider": "acme"})
    registry = get_models(load(acme_home))
    with pytest.raises(
        ConfigError, match=r"'acme' needs an API key in ACME_API_KEY, which is not set"
    ):
        registry.create_model()
    monkeypatch.setenv("ACME_BASE_URL", "http://localhost:11434/v1")
    model = registry.create_model()
    assert isinstance(model, OpenAICompatibleModel)
    assert not model.has_key
    model.close()


def test_other_api_modes_are_listed_and_refused_when_chosen_by_name(acme_home: Path) -> None:
    user_plugin(
        acme_home,
        "model-providers/codexish",
        "from providers import register_provider\nfrom providers.base import ProviderProfile\n"
        "register_provider(ProviderProfile(name='codexish', api_mode='codex_responses',"
        " base_url='http://127.0.0.1:1/v1', fallback_models=('m',)))\n"
        "register_provider(ProviderProfile(name='weird', api_mode='telepathy',"
        " base_url='http://127.0.0.1:1/v1', fallback_models=('m',)))\n",
        manifest=MANIFEST,
    )
    write_config(acme_home, model={"provider": "codexish"})
    registry = get_models(load(acme_home))
    assert "codexish" in registry.names()
    with pytest.raises(ConfigError, match=r"uses api_mode 'codex_responses' \(one Hermes knows\), "
                                          r"which this version does not speak"):  # fmt: skip
        registry.create_model()
    with pytest.raises(ConfigError, match=r"api_mode 'telepathy' \(not one Hermes knows\)"):
        registry.create_model(ModelSettings(provider="weird"))
    sys.modules.pop("hermes_plugins.model_providers__codexish", None)


def test_a_raising_hook_fails_the_request_naming_the_profile(chat_server: ChatServer) -> None:
    class Broken(ProviderProfile):
        def build_extra_body(self, *, session_id: str | None = None, **context: object) -> dict:  # type: ignore[type-arg]
            raise RuntimeError("oops")

    model = OpenAICompatibleModel(chat_server.base_url, "m", profile=Broken(name="broken"))
    with pytest.raises(ModelError, match=r"profile 'broken' \(Broken.build_extra_body\) raised "
                                         r"RuntimeError: oops"):  # fmt: skip
        model.complete([{"role": "user", "content": "x"}])
    assert chat_server.requests == []


def test_registrations_that_do_not_fit_are_refused(acme_home: Path) -> None:
    write_config(acme_home)
    registry = get_models(load(acme_home))
    with pytest.raises(RegistrationError, match="expected a ProviderProfile"):
        registry.register_profile("acme")  # type: ignore[arg-type]
    with pytest.raises(RegistrationError, match="name must be a non-empty string without spaces"):
        registry.register_profile(ProviderProfile(name="two words"))
    with pytest.raises(RegistrationError, match="aliases must be a tuple of strings"):
        registry.register_profile(ProviderProfile(name="ok", aliases="abc"))  # type: ignore[arg-type]
    assert registry.get_profile("ok") is None


def test_a_second_thread_looking_up_waits_for_the_first_lookups_imports(acme_home: Path) -> None:
    """Two threads look a profile up at once: the second waits for the imports the first began,
    and finds the profile (it does not see an empty registry, nor import anything twice)."""
    user_plugin(
        acme_home,
        "model-providers/slow",
        "import threading, time\n"
        "from providers import ProviderProfile, register_provider\n"
        "STARTED = threading.Event()\n"
        "STARTED.set()\n"
        "time.sleep(0.5)\n"
        "register_provider(ProviderProfile(name='slow', base_url='http://127.0.0.1:9/v1'))\n",
        manifest=MANIFEST,
    )
    write_config(acme_home)
    pm = load(acme_home)
    registry = get_models(pm)
    found: dict[str, object] = {}

    def first() -> None:
        found["first"] = registry.get_profile("slow")

    thread = threading.Thread(target=first)
    thread.start()
    module = "hermes_plugins.model_providers__slow"
    while getattr(sys.modules.get(module), "STARTED", None) is None and thread.is_alive():
        time.sleep(0.01)  # until the first thread's import of the plugin is under way
    under_way = thread.is_alive()
    found["second"] = registry.get_profile("slow")
    thread.join()
    assert under_way, "the first lookup ended before the second began: nothing was tested"
    assert found["first"] is not None
    assert found["second"] is found["first"]
    sys.modules.pop("hermes_plugins.model_providers__slow", None)
