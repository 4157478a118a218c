"""The image generation contract: the ABC and helpers, the provider registry, the tool."""

from __future__ import annotations

import base64
import json
import re
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from homes import detached_home as home  # noqa: F401  (the fixture)

from hermes_hooks import PluginManager
from hermes_hooks.backends.image_gen import (
    DEFAULT_ASPECT_RATIO,
    IMAGE_GENERATE_SCHEMA,
    VALID_ASPECT_RATIOS,
    ImageGenProvider,
    ImageGenRegistry,
    ImageGenSettings,
    NoImageProviderError,
    ProviderNotRegisteredError,
    error_response,
    get_images_dir,
    load_image_gen_section,
    normalize_reference_images,
    resolve_aspect_ratio,
    run_image_generate,
    save_b64_image,
    success_response,
    using_hermes_home,
)
from hermes_hooks.errors import ConfigError, PluginLoadError, RegistrationError
from hermes_hooks.registries.base import HOST

PNG_1PX = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
NAME_PATTERN = re.compile(r"^(?P<prefix>.+)_\d{8}_\d{6}_[0-9a-f]{8}\.(?P<ext>\w+)$")


class Fake(ImageGenProvider):
    """A provider whose behaviour each test sets: it records the calls it gets."""

    def __init__(
        self,
        name: str = "fake",
        *,
        available: bool = True,
        caps: dict[str, Any] | None = None,
        models: list[str] | None = None,
        answer: Any = None,
        raises: BaseException | None = None,
    ) -> None:
        self._name = name
        self.available = available
        self.caps = caps
        self.models = models or []
        self.answer = answer
        self.raises = raises
        self.calls: list[dict[str, Any]] = []

    @property
    def name(self) -> str:
        return self._name

    def is_available(self) -> bool:
        return self.available

    def list_models(self) -> list[dict[str, Any]]:
        return [{"id": m} for m in self.models]

    def capabilities(self) -> dict[str, Any]:
        return self.caps if self.caps is not None else super().capabilities()

    def generate(
        self,
        prompt: str,
        aspect_ratio: str = DEFAULT_ASPECT_RATIO,
        *,
        image_url: str | None = None,
        reference_image_urls: list[str] | None = None,
        **kwargs: Any,
    ) -> dict[str, Any]:
        self.calls.append(
            {
                "prompt": prompt,
                "aspect_ratio": aspect_ratio,
                "image_url": image_url,
                "reference_image_urls": reference_image_urls,
                **kwargs,
            }
        )
        if self.raises is not None:
            raise self.raises
        if self.answer is not None:
            return self.answer  # type: ignore[no-any-return]
        path = save_b64_image(base64.b64encode(PNG_1PX).decode(), prefix=self.name)
        return success_response(
            image=str(path),
            model=kwargs.get("model") or "m1",
            prompt=prompt,
            aspect_ratio=aspect_ratio,
            provider=self.name,
        )


def write_config(home: Path, **image_gen: Any) -> None:
    data: dict[str, Any] = {"plugins": {"enabled": ["image_gen/user-fake"]}}
    if image_gen:
        data["image_gen"] = image_gen
    (home / "config.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")


def call(pm: PluginManager, **args: Any) -> dict[str, Any]:
    result = json.loads(pm.tools.dispatch("image_generate", args))
    assert isinstance(result, dict)
    return result


# --- the ABC and helpers -------------------------------------------------------------------------


def test_abc_needs_name_and_generate() -> None:
    class Nameless(ImageGenProvider):
        def generate(self, prompt: str, aspect_ratio: str = "landscape", **kw: Any) -> Any:
            return {}

    with pytest.raises(TypeError, match="abstract"):
        Nameless()  # type: ignore[abstract]


def test_abc_defaults_are_hermes_defaults() -> None:
    provider = Fake("my-backend")
    assert provider.display_name == "My-Backend"
    assert provider.default_model() is None
    assert provider.get_setup_schema() == {
        "name": "My-Backend",
        "badge": "",
        "tag": "",
        "env_vars": [],
    }
    assert provider.capabilities() == {"modalities": ["text"], "max_reference_images": 0}
    assert Fake(models=["a", "b"]).default_model() == "a"
    assert ImageGenProvider.is_available(provider) is True
    assert ImageGenProvider.list_models(provider) == []


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("square", "square"),
        (" Portrait ", "portrait"),
        ("LANDSCAPE", "landscape"),
        ("16:9", DEFAULT_ASPECT_RATIO),
        (None, DEFAULT_ASPECT_RATIO),
        (3, DEFAULT_ASPECT_RATIO),
    ],
)
def test_resolve_aspect_ratio_coerces_to_the_valid_set(given: object, expected: str) -> None:
    assert resolve_aspect_ratio(given) == expected
    assert VALID_ASPECT_RATIOS == ("landscape", "square", "portrait")


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (None, None),
        ("", None),
        (" https://x/a.png ", ["https://x/a.png"]),
        (["a.png", " ", 3, "b.png "], ["a.png", "b.png"]),
        (("a.png",), ["a.png"]),
        ({"a": 1}, None),
        ([], None),
    ],
)
def test_normalize_reference_images(given: object, expected: list[str] | None) -> None:
    assert normalize_reference_images(given) == expected


def test_responses_have_the_hermes_fields() -> None:
    ok = success_response(
        image="/tmp/x.png",
        model="m",
        prompt="p",
        aspect_ratio="square",
        provider="fake",
        extra={"seed": 7, "image": "must not replace"},
    )
    assert ok == {
        "success": True,
        "image": "/tmp/x.png",
        "model": "m",
        "prompt": "p",
        "aspect_ratio": "square",
        "modality": "text",
        "provider": "fake",
        "seed": 7,
    }
    assert error_response(error="boom") == {
        "success": False,
        "image": None,
        "error": "boom",
        "error_type": "provider_error",
        "model": "",
        "prompt": "",
        "aspect_ratio": "landscape",
        "provider": "",
    }


def test_save_b64_image_writes_under_the_active_home(tmp_path: Path) -> None:
    data = base64.b64encode(PNG_1PX).decode()
    with using_hermes_home(tmp_path / "h"):
        path = save_b64_image(data, prefix="my-backend", extension="png")
    assert path.is_absolute()
    assert path.parent == (tmp_path / "h" / "cache" / "images").resolve()
    match = NAME_PATTERN.match(path.name)
    assert match is not None
    assert (match["prefix"], match["ext"]) == ("my-backend", "png")
    assert path.read_bytes() == PNG_1PX


def test_save_b64_image_reads_hermes_home_when_called(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "late"))
    path = save_b64_image("data:image/png;base64," + base64.b64encode(PNG_1PX).decode())
    assert path.parent == (tmp_path / "late" / "cache" / "images").resolve()
    assert path.name.startswith("image_")


def test_save_b64_image_keeps_names_inside_the_cache(tmp_path: Path) -> None:
    data = base64.b64encode(PNG_1PX).decode()
    path = save_b64_image(data, prefix="../../evil/x", extension=".p/ng", home=tmp_path)
    assert path.parent == get_images_dir(tmp_path).resolve()
    assert path.suffix == ".png"
    first, second = (save_b64_image(data, prefix="same", home=tmp_path) for _ in range(2))
    assert first != second


def test_save_b64_image_refuses_what_is_not_base64(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not valid base64"):
        save_b64_image("not base64 !!", home=tmp_path)
    with pytest.raises(ValueError, match="empty"):
        save_b64_image("", home=tmp_path)


# --- the registry ---------------------------------------------------------------------------------


def test_register_refuses_what_is_not_a_provider() -> None:
    registry = ImageGenRegistry()
    with pytest.raises(RegistrationError, match=r"expected an ImageGenProvider instance.*found"):
        registry.register_provider(object())
    with pytest.raises(RegistrationError, match=r"found ABCMeta \(a class: pass an instance\)"):
        registry.register_provider(Fake)
    with pytest.raises(RegistrationError, match="name must be a non-empty string without spaces"):
        registry.register_provider(Fake("my backend"))
    with pytest.raises(RegistrationError, match="name must be"):
        registry.register_provider(Fake(""))
    assert len(registry) == 0


def test_last_writer_wins_and_removal_restores() -> None:
    registry = ImageGenRegistry()
    bundled, user, again = Fake("openai"), Fake("openai"), Fake("openai")
    registry.register_provider(bundled, owner="image_gen/openai")
    handle = registry.register_provider(user, owner="image_gen/my-openai")
    assert registry.get_provider("openai") is user
    assert registry.owner_of("openai") == "image_gen/my-openai"
    registry.register_provider(again, owner="image_gen/third")
    assert registry.get_provider(" openai ") is again

    handle.unregister()
    assert registry.get_provider("openai") is again
    assert registry.remove_owner("image_gen/third") == ["openai"]
    assert registry.get_provider("openai") is bundled
    assert registry.names(owner="image_gen/openai") == ["openai"]
    assert registry.remove_owner("image_gen/openai") == ["openai"]
    assert registry.get_provider("openai") is None
    assert not registry.has_providers()


def test_list_providers_is_sorted_and_get_is_none_for_strangers() -> None:
    registry = ImageGenRegistry()
    for name in ("zeta", "alpha"):
        registry.register_provider(Fake(name))
    assert [p.name for p in registry.list_providers()] == ["alpha", "zeta"]
    assert registry.get_provider(42) is None
    assert "alpha" in registry
    assert registry.owner_of("alpha") == HOST


# --- choosing the active provider ----------------------------------------------------------------


def registry_with(home: Path, *providers: Fake) -> ImageGenRegistry:
    registry = ImageGenRegistry(home)
    for provider in providers:
        registry.register_provider(provider)
    return registry


def test_configured_provider_wins_even_when_unavailable(home: Path) -> None:
    write_config(home, provider="openai")
    keyless = Fake("openai", available=False)
    registry = registry_with(home, Fake("local"), keyless)
    assert registry.select_provider() is keyless


def test_configured_but_unregistered_is_an_error_not_a_switch(home: Path) -> None:
    write_config(home, provider="opnai")
    registry = registry_with(home, Fake("local"), Fake("openai"))
    with pytest.raises(ProviderNotRegisteredError) as caught:
        registry.select_provider()
    message = str(caught.value)
    assert "image_gen.provider is 'opnai'" in message
    assert "did you mean 'openai'?" in message
    assert "hermes tools image-gen" in message
    assert registry.get_active_provider() is None


def test_unset_picks_the_single_available_provider(home: Path) -> None:
    write_config(home)
    only = Fake("comfyui")
    registry = registry_with(home, Fake("openai", available=False), only)
    assert registry.select_provider() is only


def test_unset_with_several_available_picks_local(home: Path) -> None:
    write_config(home)
    local = Fake("local")
    registry = registry_with(home, Fake("openai"), local, Fake("comfyui"))
    assert registry.select_provider() is local


def test_unset_with_several_available_and_no_local_asks_to_choose(home: Path) -> None:
    write_config(home)
    registry = registry_with(home, Fake("openai"), Fake("comfyui"))
    with pytest.raises(NoImageProviderError, match=r"several .* \(comfyui, openai\).*--provider"):
        registry.select_provider()


def test_unset_with_none_available_or_registered(home: Path) -> None:
    write_config(home)
    with pytest.raises(NoImageProviderError, match="no image generation provider is registered"):
        registry_with(home).select_provider()
    broken = Fake("broken")
    broken.is_available = lambda: bool(1 / 0)  # type: ignore[method-assign]
    registry = registry_with(home, Fake("openai", available=False), broken)
    with pytest.raises(NoImageProviderError, match=r"none|no image generation provider is avail"):
        registry.select_provider()


def test_settings_reject_wrong_types(home: Path) -> None:
    (home / "config.yaml").write_text("image_gen: [openai]\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="yaml: image_gen: expected a mapping"):
        ImageGenSettings.from_home(home)
    (home / "config.yaml").write_text("image_gen: {provider: 3}\n", encoding="utf-8")
    with pytest.raises(
        ConfigError, match=r"image_gen\.provider: expected a string, found an integer \(3\)"
    ):
        ImageGenSettings.from_home(home)
    (home / "config.yaml").write_text(
        "image_gen: {provider: ' x ', model: '', comfyui: {url: u}}\n", encoding="utf-8"
    )
    settings = ImageGenSettings.from_home(home)
    assert (settings.provider, settings.model) == ("x", None)
    assert load_image_gen_section(home, "comfyui") == {"url": "u"}
    assert load_image_gen_section(home, "openai") == {}


# --- the image_generate tool ---------------------------------------------------------------------


@pytest.fixture
def pm(home: Path) -> PluginManager:
    write_config(home)
    manager = PluginManager(home)
    manager.discover_and_load()
    return manager


def test_every_manager_offers_image_generate_as_a_host_tool(pm: PluginManager) -> None:
    entry = pm.tools.get("image_generate")
    assert entry is not None
    assert entry.owner == HOST
    assert entry.toolset == "image_gen"
    assert set(IMAGE_GENERATE_SCHEMA["parameters"]["properties"]) == {
        "prompt",
        "aspect_ratio",
        "image_url",
        "reference_image_urls",
    }
    assert pm.tools.unavailable_reason("image_generate") == (
        "not offered now: Offered while an image generation provider is registered "
        "(an image_gen plugin)"
    )
    handle = pm.image_gen.register_provider(Fake())
    (definition,) = [d for d in pm.tools.definitions() if d["function"]["name"] == "image_generate"]
    assert definition["function"]["parameters"]["required"] == ["prompt"]
    handle.unregister()
    assert not pm.tools.is_available("image_generate")


def definition(pm: PluginManager) -> dict[str, Any]:
    (found,) = [d for d in pm.tools.definitions() if d["function"]["name"] == "image_generate"]
    function = found["function"]
    assert isinstance(function, dict)
    return function


def test_the_schema_shown_follows_the_active_providers_capabilities(
    pm: PluginManager, home: Path
) -> None:
    pm.image_gen.register_provider(Fake("local"))
    pm.image_gen.register_provider(
        Fake("editor", caps={"modalities": ["text", "image"], "max_reference_images": 3})
    )
    pm.image_gen.register_provider(Fake("retoucher", caps={"modalities": ["text", "image"]}))
    text_only = definition(pm)
    assert set(text_only["parameters"]["properties"]) == {"prompt", "aspect_ratio"}
    assert "text-to-image only" in text_only["description"]

    write_config(home, provider="editor")
    editing = definition(pm)
    assert set(editing["parameters"]["properties"]) == set(
        IMAGE_GENERATE_SCHEMA["parameters"]["properties"]
    )
    assert editing["parameters"]["properties"]["reference_image_urls"]["maxItems"] == 3
    assert "edit an existing image by passing image_url" in editing["description"]

    write_config(home, provider="retoucher")
    assert set(definition(pm)["parameters"]["properties"]) == {
        "prompt",
        "aspect_ratio",
        "image_url",
    }
    write_config(home, provider="gone")
    assert set(definition(pm)["parameters"]["properties"]) == {"prompt", "aspect_ratio"}


def test_without_a_provider_the_tool_says_how_to_configure_one(pm: PluginManager) -> None:
    result = call(pm, prompt="a corgi")
    assert result["success"] is False
    assert result["error_type"] == "no_provider"
    assert "hermes tools image-gen --provider" in result["error"]


def test_the_tool_calls_the_active_provider_and_saves_in_the_managers_home(
    pm: PluginManager, home: Path
) -> None:
    fake = Fake()
    pm.image_gen.register_provider(fake)
    result = call(pm, prompt="  a corgi  ", aspect_ratio="Square")
    assert result["success"] is True
    assert fake.calls == [
        {
            "prompt": "a corgi",
            "aspect_ratio": "square",
            "image_url": None,
            "reference_image_urls": None,
        }
    ]
    assert Path(result["image"]).parent == (home / "cache" / "images").resolve()


def test_the_tool_passes_the_configured_model(pm: PluginManager, home: Path) -> None:
    write_config(home, provider="fake", model="m2")
    fake = Fake(models=["m1", "m2"])
    pm.image_gen.register_provider(fake)
    assert call(pm, prompt="x")["model"] == "m2"
    assert fake.calls[0]["model"] == "m2"


def test_a_model_the_provider_does_not_offer_is_an_error(pm: PluginManager, home: Path) -> None:
    write_config(home, provider="fake", model="gpt-image-2-high")
    fake = Fake(models=["m1", "m2"])
    pm.image_gen.register_provider(fake)
    result = call(pm, prompt="x")
    assert result["error_type"] == "model_not_found"
    assert "its models: m1, m2" in result["error"]
    assert fake.calls == []


@pytest.mark.parametrize("args", [{}, {"prompt": "  "}, {"prompt": 3}])
def test_a_missing_prompt_is_invalid_input(pm: PluginManager, args: dict[str, Any]) -> None:
    pm.image_gen.register_provider(Fake())
    result = call(pm, **args)
    assert (result["success"], result["error_type"]) == (False, "invalid_input")


def test_source_images_are_checked_against_capabilities(pm: PluginManager) -> None:
    text_only = Fake()
    pm.image_gen.register_provider(text_only)
    result = call(pm, prompt="x", image_url="https://img/a.png")
    assert result["error_type"] == "modality_unsupported"
    assert "generates from text only" in result["error"]
    assert text_only.calls == []

    editor = Fake(caps={"modalities": ["text", "image"], "max_reference_images": 1})
    pm.image_gen.register_provider(editor)
    result = call(pm, prompt="x", image_url="a.png", reference_image_urls=["b.png", "c.png"])
    assert result["error_type"] == "too_many_images"
    result = call(pm, prompt="x", image_url=" a.png ", reference_image_urls="b.png")
    assert result["success"] is True
    assert editor.calls[-1]["image_url"] == "a.png"
    assert editor.calls[-1]["reference_image_urls"] == ["b.png"]

    capped = Fake(caps={"modalities": ["image"], "max_reference_images": 5, "max_source_images": 2})
    pm.image_gen.register_provider(capped)
    result = call(pm, prompt="x", image_url="a.png", reference_image_urls=["b.png", "c.png"])
    assert result["error_type"] == "too_many_images"
    assert "at most 2 source images" in result["error"]


def test_a_generate_without_image_url_is_told_apart(pm: PluginManager) -> None:
    class OldStyle(ImageGenProvider):
        name = "old"

        def capabilities(self) -> dict[str, Any]:
            return {"modalities": ["text", "image"], "max_reference_images": 1}

        def generate(self, prompt: str, aspect_ratio: str = "landscape") -> dict[str, Any]:  # type: ignore[override]
            return success_response(
                image="https://x/y.png",
                model="",
                prompt=prompt,
                aspect_ratio=aspect_ratio,
                provider="old",
            )

    pm.image_gen.register_provider(OldStyle())
    assert call(pm, prompt="x", image_url="a.png")["error_type"] == "modality_unsupported"
    assert call(pm, prompt="x")["success"] is True


@pytest.mark.parametrize(
    ("fake", "error_type", "fragment"),
    [
        (Fake(raises=RuntimeError("quota")), "provider_exception", "RuntimeError: quota"),
        (Fake(raises=SystemExit(3)), "provider_exception", "SystemExit"),
        (Fake(answer="a string"), "provider_contract", "returned str"),
        (Fake(answer={"success": True, "image": ""}), "provider_contract", "without an image"),
        (Fake(answer={"success": False}), "provider_error", "without a message"),
        (
            Fake(answer=error_response(error="key missing", error_type="auth_required")),
            "auth_required",
            "key missing",
        ),
    ],
)
def test_provider_failures_become_error_json(
    pm: PluginManager, fake: Fake, error_type: str, fragment: str
) -> None:
    pm.image_gen.register_provider(fake)
    raw = pm.tools.dispatch("image_generate", {"prompt": "x"})
    result = json.loads(raw)
    assert result["success"] is False
    assert result["image"] is None
    assert result["error_type"] == error_type
    assert fragment in result["error"]
    assert result["provider"] == "fake"


def test_a_broken_config_is_an_error_not_a_crash(pm: PluginManager, home: Path) -> None:
    pm.image_gen.register_provider(Fake())
    (home / "config.yaml").write_text("image_gen: {model: [1]}\n", encoding="utf-8")
    result = call(pm, prompt="x")
    assert result["error_type"] == "config_error"
    assert "image_gen.model: expected a string, found a list" in result["error"]


def test_run_image_generate_takes_an_explicit_home(tmp_path: Path, home: Path) -> None:
    registry = registry_with(home, Fake())
    result = run_image_generate(registry, {"prompt": "x"}, home=tmp_path / "other")
    assert Path(result["image"]).parent == (tmp_path / "other" / "cache" / "images").resolve()


# --- through plugins: ctx.register_image_gen_provider ---------------------------------------------

USER_FAKE = textwrap.dedent(
    """
    from hermes_hooks.backends.image_gen import ImageGenProvider, success_response


    class Mine(ImageGenProvider):
        @property
        def name(self):
            return NAME

        def generate(self, prompt, aspect_ratio="landscape", **kwargs):
            return success_response(
                image="https://mine/" + NAME, model="", prompt=prompt,
                aspect_ratio=aspect_ratio, provider=NAME,
            )


    def register(ctx):
        ctx.register_image_gen_provider(VALUE)
    """
)


def add_user_plugin(home: Path, name: str, value: str) -> None:
    folder = home / "plugins" / "image_gen" / "user-fake"
    folder.mkdir(parents=True)
    manifest = {"name": "user-fake", "version": "1.0.0", "kind": "backend"}
    (folder / "plugin.yaml").write_text(yaml.safe_dump(manifest), encoding="utf-8")
    code = USER_FAKE.replace("NAME", repr(name)).replace("VALUE", value)
    (folder / "__init__.py").write_text(code, encoding="utf-8")


def test_a_user_plugin_overrides_a_provider_until_it_is_unloaded(home: Path) -> None:
    add_user_plugin(home, "openai", "Mine()")
    write_config(home, provider="openai")
    pm = PluginManager(home)
    bundled = Fake("openai")
    pm.image_gen.register_provider(bundled)
    pm.discover_and_load()
    assert pm.image_gen.owner_of("openai") == "image_gen/user-fake"
    assert call(pm, prompt="x")["image"] == "https://mine/openai"

    assert pm.unload_plugin("image_gen/user-fake")
    assert pm.image_gen.get_provider("openai") is bundled


def test_a_plugin_registering_a_non_provider_is_told_clearly(home: Path) -> None:
    add_user_plugin(home, "x", "Mine")
    write_config(home)
    pm = PluginManager(home)
    pm.discover_and_load()
    info = pm.get_plugin_info("image_gen/user-fake")
    assert info is not None
    assert info.status == "enabled"
    assert "a class: pass an instance" in info.warnings[0]
    assert not pm.image_gen.has_providers()
    strict = PluginManager(home, strict=True)
    with pytest.raises(PluginLoadError, match="a class: pass an instance"):
        strict.discover_and_load()
