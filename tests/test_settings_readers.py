"""The config sections read through the settings table (plugins/settings.py) report a wrong
value the one way: ``FILE: KEY: expected X, found Y``, and take what the table takes.

One test per reader moved onto the table: a family's call timeout, the memory extras, the URL
policy (``security``), a web provider's own sub-section, the compressor's ``model.context_length``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_hooks.backends.calls import read_timeout
from hermes_hooks.backends.home import using_hermes_home
from hermes_hooks.backends.image_gen.registry import IMAGE_GEN
from hermes_hooks.backends.memory.registry import MAX_PREFETCH_TIMEOUT, MemorySettings
from hermes_hooks.backends.web_search.provider import load_web_section
from hermes_hooks.backends.web_search.urlsafety import UrlPolicy
from hermes_hooks.errors import ConfigError


def test_a_familys_timeout_takes_seconds_as_the_table_says() -> None:
    source = Path("/h/config.yaml")
    assert read_timeout(IMAGE_GEN, {}, source) == IMAGE_GEN.default_timeout
    assert read_timeout(IMAGE_GEN, {"timeout": 45}, source) == 45.0
    assert read_timeout(IMAGE_GEN, {"timeout": "45"}, source) == 45.0  # as Hermes reads it
    with pytest.raises(
        ConfigError,
        match=r"^/h/config\.yaml: image_gen\.timeout: expected a number of seconds, "
        r"found a list \(\[1\]\)$",
    ):
        read_timeout(IMAGE_GEN, {"timeout": [1]}, source)
    with pytest.raises(ConfigError, match=r"image_gen\.timeout: expected 0 or more seconds"):
        read_timeout(IMAGE_GEN, {"timeout": -1}, source)


def test_the_memory_extras_are_lenient_and_capped() -> None:
    read = MemorySettings.from_config({"memory": {"prefetch_timeout": 10_000}})
    assert read.prefetch_timeout == MAX_PREFETCH_TIMEOUT
    assert read.warnings == (
        f"config: memory.prefetch_timeout: 10000 is more than the maximum "
        f"{MAX_PREFETCH_TIMEOUT:g}s; using {MAX_PREFETCH_TIMEOUT:g}s",
    )
    read = MemorySettings.from_config({"memory": {"builtin": False, "prefetch_timeout": "0.5"}})
    assert (read.builtin, read.prefetch_timeout, read.warnings) == (False, 0.5, ())


@pytest.mark.parametrize(
    ("security", "message"),
    [
        ("on", r"^config: security: expected a mapping \(allow_private_urls, "),
        ({"allow_private_urls": "yes"}, r"^config: security\.allow_private_urls: expected true "),
        ({"private_url_allowlist": "10.0.0.0/8"}, r"allowlist: expected a list of addresses"),
        ({"private_url_allowlist": ["::1", 7]}, r"allowlist\[1\]: expected a string, found an"),
        ({"private_url_allowlist": [" "]}, r"allowlist item 1 must be an address"),
    ],
)
def test_the_url_policy_names_the_wrong_field(security: object, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        UrlPolicy.from_config({"security": security})


def test_the_url_policy_reads_its_fields() -> None:
    policy = UrlPolicy.from_config(
        {"security": {"allow_private_urls": False, "private_url_allowlist": ["10.0.0.0/8", "db"]}}
    )
    assert (policy.allow_private, [str(n) for n in policy.networks], policy.hosts) == (
        False,
        ["10.0.0.0/8"],
        frozenset({"db"}),
    )


def test_a_web_providers_section_must_be_a_mapping(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("web:\n  backend: searxng\n  searxng: [x]\n", encoding="utf-8")
    with using_hermes_home(tmp_path):
        assert load_web_section() == {"backend": "searxng", "searxng": ["x"]}
        assert load_web_section("local") == {}
        with pytest.raises(
            ConfigError, match=rf"^{config}: web\.searxng: expected a mapping, found a list"
        ):
            load_web_section("searxng")
    config.write_text("web: [x]\n", encoding="utf-8")
    with using_hermes_home(tmp_path), pytest.raises(ConfigError, match=r": web: expected a"):
        load_web_section()


def test_a_wrong_context_length_is_ignored_with_a_warning_naming_it() -> None:
    from hermes_hooks.backends.context_engine.compressor import CompressionSettings

    read = CompressionSettings.from_config({"model": {"context_length": 100}})
    assert (read.context_length, read.warnings) == (
        None,
        (
            "config: model.context_length: expected a whole number, 256 or more, "
            "found an integer (100); ignored",
        ),
    )
    assert CompressionSettings.from_config({"model": {"context_length": 4096}}).context_length
