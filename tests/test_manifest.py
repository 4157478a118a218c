"""Tests for hermes_hooks.plugins.manifest: the safe YAML parse and the checked ``plugin.yaml``."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import attrs
import pytest
import yaml

from hermes_hooks.errors import ManifestError
from hermes_hooks.plugins import safe_yaml
from hermes_hooks.plugins.manifest import (
    KNOWN_FIELDS,
    MANIFEST_FILENAMES,
    MAX_MANIFEST_BYTES,
    NAME_PATTERN,
    VALID_KINDS,
    EnvRequirement,
    PluginManifest,
    PluginRequirement,
    YAMLLoadError,
    find_manifest,
    is_valid_plugin_name,
    safe_load_yaml,
)

LOGGER = "hermes_hooks.plugins.manifest"

FULL = """\
name: weather
version: 1.2.0
description: "Weather tools"
author: {name: Ada, email: ada@example.org}
kind: backend
label: Weather
license: MIT
homepage: https://example.org/weather
requires_env:
  - WEATHER_API_KEY
  - name: WEATHER_SECRET
    description: "Signing secret"
    url: https://example.org/keys
    secret: true
optional_env:
  - name: WEATHER_REGION
    prompt: "Region"
    password: false
provides_tools: [weather_now, weather_week]
provides_hooks: [post_tool_call]
hooks: [on_session_end]
pip_dependencies: ["requests>=2,<3"]
python_dependencies: ["httpx>=0.27"]
platforms: [telegram]
tags: [weather, demo]
capabilities: [tools.override]
emits: [forecast_ready]
listens: ["calendar:event_added"]
provides_browser_providers: [weather-browser]
provides_web_providers: [weather-web]
provides_locales: [pl, {id: uk, endonym: Українська, rtl: false}]
requires_hermes: ">=0.19"
manifest_version: 2
api_version: 1
requires_plugins:
  - calendar
  - id: image_gen/openai
    version_range: ">=1.0,<2"
config_schema:
  units: {type: str, default: metric, description: "metric or imperial"}
external_dependencies:
  - name: curl
    check: "curl --version"
"""


def write(
    tmp_path: Path, text: str | bytes, *, folder: str = "weather", filename: str = "plugin.yaml"
) -> Path:
    """Write a manifest in ``tmp_path/<folder>/<filename>`` and return its path."""
    directory = tmp_path / folder
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / filename
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def parse(tmp_path: Path, text: str | bytes, **kwargs: str) -> PluginManifest:
    return PluginManifest.from_path(write(tmp_path, text, **kwargs))


def raises_at(path: Path, *parts: str) -> pytest.RaisesExc[ManifestError]:
    """Expect a ManifestError whose message holds the file and each part, in order."""
    pattern = ".*".join(re.escape(part) for part in (str(path), *parts))
    return pytest.raises(ManifestError, match=f"(?s){pattern}")


@pytest.fixture(params=["libyaml", "pure-python"])
def loader(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run a test with the C safe loader and again with the pure-Python one."""
    if request.param == "pure-python":
        monkeypatch.setattr(safe_yaml, "_SafeLoader", yaml.SafeLoader)
    elif not yaml.__with_libyaml__:  # pragma: no cover
        pytest.skip("PyYAML without libyaml")
    return str(request.param)


# ── good manifests ───────────────────────────────────────────────────────────────────────────


def test_minimal_manifest_takes_every_default(tmp_path: Path) -> None:
    m = parse(tmp_path, "name: hello\n")
    assert m.name == "hello"
    assert m.version == ""
    assert m.description == ""
    assert m.author == ""
    assert m.kind == "standalone"
    assert m.requires_env == ()
    assert m.required_env_names == ()
    assert m.provides_tools == m.provides_hooks == m.hooks == m.pip_dependencies == ()
    assert m.manifest_version == 1
    assert m.api_version is None
    assert dict(m.extra) == {}
    assert m.declared_fields == {"name"}
    assert m.path == tmp_path / "weather" / "plugin.yaml"


def test_full_manifest(tmp_path: Path, loader: str) -> None:
    m = parse(tmp_path, FULL)
    assert m.name == "weather"
    assert m.version == "1.2.0"
    assert m.description == "Weather tools"
    assert m.author == {"name": "Ada", "email": "ada@example.org"}
    assert m.author_display == "Ada, ada@example.org"
    assert m.kind == "backend"
    assert (m.label, m.license, m.homepage) == ("Weather", "MIT", "https://example.org/weather")
    assert m.requires_env == (
        EnvRequirement(name="WEATHER_API_KEY"),
        EnvRequirement(
            name="WEATHER_SECRET",
            description="Signing secret",
            url="https://example.org/keys",
            secret=True,
        ),
    )
    assert m.required_env_names == ("WEATHER_API_KEY", "WEATHER_SECRET")
    assert m.optional_env == (EnvRequirement(name="WEATHER_REGION", prompt="Region"),)
    assert m.provides_tools == ("weather_now", "weather_week")
    assert m.provides_hooks == ("post_tool_call",)
    assert m.hooks == ("on_session_end",)
    assert m.pip_dependencies == ("requests>=2,<3",)
    assert m.python_dependencies == ("httpx>=0.27",)
    assert m.platforms == ("telegram",)
    assert m.tags == ("weather", "demo")
    assert m.capabilities == ("tools.override",)
    assert (m.emits, m.listens) == (("forecast_ready",), ("calendar:event_added",))
    assert m.provides_browser_providers == ("weather-browser",)
    assert m.provides_web_providers == ("weather-web",)
    assert m.provides_locales[0] == "pl"
    ukrainian = m.provides_locales[1]
    assert not isinstance(ukrainian, str)
    assert dict(ukrainian) == {"id": "uk", "endonym": "Українська", "rtl": False}
    assert m.requires_hermes == ">=0.19"
    assert (m.manifest_version, m.api_version) == (2, 1)
    assert m.requires_plugins == (
        PluginRequirement(id="calendar"),
        PluginRequirement(id="image_gen/openai", version_range=">=1.0,<2"),
    )
    assert dict(m.config_schema["units"]) == {
        "type": "str",
        "default": "metric",
        "description": "metric or imperial",
    }
    assert dict(m.external_dependencies[0]) == {"name": "curl", "check": "curl --version"}
    assert dict(m.extra) == {}
    assert "kind" in m.declared_fields


@pytest.mark.parametrize("filename", MANIFEST_FILENAMES)
def test_both_file_names_are_found_and_read(tmp_path: Path, filename: str) -> None:
    path = write(tmp_path, "name: hello\n", filename=filename)
    assert find_manifest(path.parent) == path
    assert PluginManifest.from_path(path).name == "hello"


def test_plugin_yaml_wins_over_plugin_yml(tmp_path: Path) -> None:
    write(tmp_path, "name: from-yml\n", filename="plugin.yml")
    path = write(tmp_path, "name: from-yaml\n", filename="plugin.yaml")
    assert find_manifest(path.parent) == path


def test_find_manifest_none_and_ignores_directories(tmp_path: Path) -> None:
    assert find_manifest(tmp_path) is None
    (tmp_path / "plugin.yaml").mkdir()
    assert find_manifest(tmp_path) is None


def test_author_as_string_or_mapping(tmp_path: Path) -> None:
    assert parse(tmp_path, "name: a\nauthor: '@ada'\n").author_display == "@ada"
    m = parse(tmp_path, "name: b\nauthor: {name: Ada, url: https://ada.dev}\n", folder="b")
    assert m.author == {"name": "Ada", "url": "https://ada.dev"}
    assert m.author_display == "Ada, https://ada.dev"


def test_requires_env_both_forms(tmp_path: Path) -> None:
    m = parse(
        tmp_path,
        "name: a\nrequires_env:\n  - SIMPLE\n"
        "  - name: RICH\n    description: d\n    password: true\n"
        "  - name: PROFILE\n    password: false\n    category: setting\n",
    )
    assert m.requires_env == (
        EnvRequirement(name="SIMPLE"),
        EnvRequirement(name="RICH", description="d", secret=True),
        EnvRequirement(name="PROFILE", category="setting"),
    )
    assert m.required_env_names == ("SIMPLE", "RICH", "PROFILE")


@pytest.mark.parametrize(
    ("written", "expected"),
    [("1.0", "1.0"), ("1.10", "1.10"), ("2", "2"), ("1.0.0", "1.0.0"), ('"3.1"', "3.1")],
)
def test_version_as_a_number_keeps_its_text(tmp_path: Path, written: str, expected: str) -> None:
    assert parse(tmp_path, f"name: a\nversion: {written}\n").version == expected


def test_version_number_from_mapping() -> None:
    assert PluginManifest.from_mapping({"name": "a", "version": 1.0}).version == "1.0"
    assert PluginManifest.from_mapping({"name": "a", "version": 3}).version == "3"


def test_name_defaults_to_the_folder(tmp_path: Path) -> None:
    assert parse(tmp_path, "version: 1.0\n", folder="disk-cleanup").name == "disk-cleanup"
    path = write(tmp_path, "version: 1.0\n", folder="other")
    assert PluginManifest.from_path(path, default_name="given").name == "given"


def test_empty_file_and_null_fields_take_defaults(tmp_path: Path) -> None:
    assert parse(tmp_path, "", folder="empty").name == "empty"
    m = parse(tmp_path, "name: a\nprovides_tools:\nrequires_env: ~\nkind: null\n")
    assert (m.provides_tools, m.requires_env, m.kind) == ((), (), "standalone")
    assert m.declared_fields == {"name"}


def test_utf8_bom_is_accepted(tmp_path: Path) -> None:
    assert parse(tmp_path, b"\xef\xbb\xbfname: bom\n").name == "bom"


@pytest.mark.parametrize("written", ["Backend", " platform ", "MODEL-PROVIDER"])
def test_kind_is_read_like_hermes_does(tmp_path: Path, written: str) -> None:
    assert parse(tmp_path, f"name: a\nkind: '{written}'\n").kind == written.strip().lower()


def test_manifest_is_frozen_hashable_and_read_only(tmp_path: Path) -> None:
    m = parse(tmp_path, "name: a\nauthor: {name: Ada}\nsomething: [1]\n")
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        m.name = "b"  # type: ignore[misc]
    with pytest.raises(TypeError):
        m.extra["other"] = 1  # type: ignore[index]
    with pytest.raises(TypeError):
        m.author["name"] = "Eve"  # type: ignore[index]
    assert hash(m) == hash(parse(tmp_path, "name: a\nauthor: {name: Ada}\nsomething: [1]\n"))


def test_from_mapping_copies_what_it_keeps() -> None:
    author = {"name": "Ada"}
    m = PluginManifest.from_mapping({"name": "a", "author": author})
    author["name"] = "Eve"
    assert m.author == {"name": "Ada"}
    assert m.path is None


def test_requires_plugins_version_range_number_becomes_text() -> None:
    m = PluginManifest.from_mapping(
        {"name": "a", "requires_plugins": [{"id": "b", "version_range": 2}]}
    )
    assert m.requires_plugins == (PluginRequirement(id="b", version_range="2"),)


def test_manifest_version_newer_than_supported_loads_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger=LOGGER)
    m = parse(tmp_path, "name: a\nmanifest_version: 9\n")
    assert m.manifest_version == 9
    assert "manifest_version 9 is newer" in caplog.text


def test_manifest_version_as_digit_string_like_hermes() -> None:
    assert PluginManifest.from_mapping({"name": "a", "manifest_version": "2"}).manifest_version == 2


# ── unknown fields ───────────────────────────────────────────────────────────────────────────


def test_unknown_field_is_kept_and_warned_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger=LOGGER)
    path = write(tmp_path, "name: honcho\nprofile_clone: true\nprovide_tools: [x]\n")
    m = PluginManifest.from_path(path)
    assert dict(m.extra) == {"profile_clone": True, "provide_tools": ["x"]}
    records = [r for r in caplog.records if r.name == LOGGER]
    assert len(records) == 2
    assert all(r.levelno == logging.WARNING for r in records)
    assert str(path) in records[0].getMessage()
    assert "'profile_clone'" in caplog.text
    assert "did you mean 'provides_tools'?" in caplog.text
    caplog.clear()
    assert PluginManifest.from_path(path).extra == m.extra
    assert [r for r in caplog.records if r.name == LOGGER] == []


def test_unknown_key_in_an_env_mapping_is_warned(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger=LOGGER)
    m = parse(tmp_path, "name: a\nrequires_env:\n  - name: KEY\n    colour: red\n")
    assert m.requires_env == (EnvRequirement(name="KEY"),)
    assert "'requires_env[1].colour' ignored" in caplog.text


def test_reserved_fields_are_kept_without_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger=LOGGER)
    m = parse(tmp_path, "name: a\nhermes: {min: 1}\ndepends: [b]\n")
    assert dict(m.extra) == {"hermes": {"min": 1}, "depends": ["b"]}
    assert caplog.records == []


def test_unknown_field_without_a_file_is_warned_every_time(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger=LOGGER)
    for _ in range(2):
        PluginManifest.from_mapping({"name": "a", "zzz_new": 1})
    assert caplog.text.count("unknown manifest field 'zzz_new'") == 2


def test_known_fields_cover_what_hermes_knows() -> None:
    hermes_known = {
        "name", "version", "description", "author", "requires_env", "provides_tools",
        "provides_hooks", "kind", "hooks", "label", "optional_env", "platforms",
        "external_dependencies", "pip_dependencies", "provides_browser_providers",
        "provides_web_providers", "manifest_version", "api_version", "requires_plugins",
        "python_dependencies", "config_schema", "license", "homepage", "tags", "capabilities",
        "emits", "listens", "hermes", "depends", "requires_hermes", "python_runtime",
        "provides_locales", "provides_image_gen_providers", "provides_video_gen_providers",
        "provides_memory_providers",
    }  # fmt: skip
    assert hermes_known == KNOWN_FIELDS
    assert {"standalone", "backend", "exclusive", "platform", "model-provider"} == VALID_KINDS


# ── bad files ────────────────────────────────────────────────────────────────────────────────


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nowhere" / "plugin.yaml"
    with raises_at(path, "cannot read the manifest", "No such file"):
        PluginManifest.from_path(path)


def test_not_a_regular_file(tmp_path: Path) -> None:
    path = tmp_path / "plugin.yaml"
    path.mkdir()
    with raises_at(path, "expected a regular file"):
        PluginManifest.from_path(path)


def test_read_failure_after_stat(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path, "name: a\n")

    def refuse(self: Path, *args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "open", refuse)
    with raises_at(path, "cannot read the manifest: Permission denied"):
        PluginManifest.from_path(path)


def test_not_utf8(tmp_path: Path) -> None:
    path = write(tmp_path, b"name: a\ndescription: caf\xe9\n")
    with raises_at(path, "line 2, column 17", "expected UTF-8 text, found byte 0xe9"):
        PluginManifest.from_path(path)


def test_oversized_file_is_refused_by_its_size(tmp_path: Path) -> None:
    path = write(tmp_path, b"")
    with path.open("wb") as stream:  # sparse: 1 GiB of NULs that must never be read
        stream.truncate(1024 * 1024 * 1024)
    with raises_at(path, f"expected at most {MAX_MANIFEST_BYTES} bytes, found 1073741824 bytes"):
        PluginManifest.from_path(path)


def test_file_just_over_the_limit(tmp_path: Path) -> None:
    path = write(tmp_path, "name: a\n" + "#" * MAX_MANIFEST_BYTES + "\n")
    with raises_at(path, f"expected at most {MAX_MANIFEST_BYTES} bytes"):
        PluginManifest.from_path(path)


def test_yaml_syntax_error_has_line_and_column(tmp_path: Path, loader: str) -> None:
    path = write(tmp_path, "name: a\nprovides_tools: [x, y\nkind: backend\n")
    with raises_at(path, "line 3, column 5", "invalid YAML"):
        PluginManifest.from_path(path)


def test_alias_bomb_is_refused(tmp_path: Path, loader: str) -> None:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for level in range(1, 10):  # 9**10 strings once expanded
        refs = ", ".join([f"*a{level - 1}"] * 9)
        lines.append(f"a{level}: &a{level} [{refs}]")
    path = write(tmp_path, "name: bomb\n" + "\n".join(lines) + "\n")
    with raises_at(path, "expected at most 10000 YAML nodes with aliases expanded", "alias bomb"):
        PluginManifest.from_path(path)


def test_small_aliases_are_fine(tmp_path: Path, loader: str) -> None:
    m = parse(
        tmp_path, "name: a\nprovides_tools: &t [x, y]\nprovides_hooks: [post_tool_call]\nx: *t\n"
    )
    assert m.extra["x"] == ["x", "y"]


def test_recursive_alias_is_refused(tmp_path: Path, loader: str) -> None:
    path = write(tmp_path, "name: a\nloop: &l [*l]\n")
    with raises_at(path, "line 2, column 11", "alias 'l' inside its own anchor"):
        PluginManifest.from_path(path)


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000, "- " * 50_000 + "x"])
def test_deep_nesting_is_refused_without_crashing(tmp_path: Path, loader: str, text: str) -> None:
    path = write(tmp_path, text)
    # Our reader stops at 64 levels; newer libyaml (PyYAML >= 6.0.4) may stop the flow first.
    pattern = re.escape(str(path)) + ".*(levels of nesting|maximum nesting depth)"
    with pytest.raises(ManifestError, match=pattern):
        PluginManifest.from_path(path)


def test_second_document_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "name: a\n---\nname: b\n")
    with raises_at(path, "line 2, column 1", "expected a single YAML document"):
        PluginManifest.from_path(path)


def test_python_tags_are_refused(tmp_path: Path, loader: str) -> None:
    path = write(tmp_path, "name: !!python/object/apply:os.system [echo hi]\n")
    with raises_at(path, "line 1, column 7", "could not determine a constructor"):
        PluginManifest.from_path(path)


@pytest.mark.parametrize(
    ("text", "found"), [("- a\n- b\n", "list ['a', 'b']"), ("just text\n", "str 'just text'")]
)
def test_document_must_be_a_mapping(tmp_path: Path, text: str, found: str) -> None:
    path = write(tmp_path, text)
    with raises_at(path, "expected a mapping of fields at the top level", f"found {found}"):
        PluginManifest.from_path(path)


def test_field_names_must_be_strings(tmp_path: Path) -> None:
    path = write(tmp_path, "name: a\n1: one\n")
    with raises_at(path, "expected field names to be strings, found int 1"):
        PluginManifest.from_path(path)


# ── wrong types ──────────────────────────────────────────────────────────────────────────────


def test_list_field_with_a_number_names_file_field_expected_found(tmp_path: Path) -> None:
    path = write(tmp_path, "name: a\nprovides_tools: 3\n")
    with pytest.raises(ManifestError) as caught:
        PluginManifest.from_path(path)
    assert str(caught.value) == (
        f"{path}: field 'provides_tools': expected a list of strings, found int 3"
    )
    assert caught.value.path == path
    assert caught.value.field == "provides_tools"


def test_list_field_as_a_lone_string_is_refused(tmp_path: Path) -> None:
    # Hermes would iterate the string character by character; refusing it is the honest choice.
    path = write(tmp_path, "name: a\nprovides_tools: my_tool\n")
    with raises_at(
        path, "field 'provides_tools'", "expected a list of strings, found str 'my_tool'",
        "write a one-item list: [my_tool]",
    ):  # fmt: skip
        PluginManifest.from_path(path)


WRONG_TYPES = [
    # (line in plugin.yaml, field, what the message says after "field '<field>': ")
    ("provides_hooks: [post_tool_call, 3]", "provides_hooks",
     "item 2: expected a non-empty string, found int 3"),
    ("pip_dependencies: ['']", "pip_dependencies",
     "item 1: expected a non-empty string, found str ''"),
    ("description: 42", "description", "expected a string, found int 42"),
    ("version: true", "version", 'expected a string such as "1.0.0", found bool true'),
    ("version: 2024-01-02", "version",
     'expected a string such as "1.0.0", found date datetime.date(2024, 1, 2)'),
    ("author: [Ada]", "author",
     "expected a string or a mapping such as {name: ..., email: ...}, found list ['Ada']"),
    ("author: {name: 3}", "author", "key 'name': expected string keys and values, found int 3"),
    ("kind: 1", "kind", "expected one of 'backend', 'exclusive', 'model-provider', "
     "'platform', 'standalone', found int 1"),
    ("requires_env: [1BAD]", "requires_env",
     "item 1: expected an environment variable name ([A-Za-z_][A-Za-z0-9_]*), found str '1BAD'"),
    ("requires_env: [{description: no name}]", "requires_env",
     "item 1: expected an environment variable name"),
    ("requires_env: [[A]]", "requires_env",
     "item 1: expected a variable name or a mapping with 'name', found list ['A']"),
    ("requires_env: [{name: A, secret: 'yes'}]", "requires_env",
     "item 1, key 'secret': expected true or false, found str 'yes'"),
    ("requires_env: {name: A}", "requires_env",
     "expected a list of variable names or mappings, found mapping {'name': 'A'}"),
    ("optional_env: [{name: A, url: 5}]", "optional_env",
     "item 1, key 'url': expected a string, found int 5"),
    ("manifest_version: 0", "manifest_version", "expected an integer of at least 1, found int 0"),
    ("api_version: yes", "api_version", "expected an integer of at least 0, found bool true"),
    ("requires_plugins: [{id: ../up}]", "requires_plugins",
     "item 1: expected a plugin id or a mapping {id, version_range}, found str '../up'"),
    ("requires_plugins: [{id: b, version_range: [1]}]", "requires_plugins",
     "item 1, key 'version_range': expected a version range string"),
    ("config_schema: [a]", "config_schema",
     "expected a mapping of setting name to {type, default, ...}, found list ['a']"),
    ("config_schema: {units: str}", "config_schema",
     "key 'units': expected a mapping such as {type: str}, found str 'str'"),
    ("config_schema: {units: {type: 1}}", "config_schema",
     "key 'units', 'type': expected a type name string, found int 1"),
    ("external_dependencies: [curl]", "external_dependencies",
     "item 1: expected a mapping with a string 'name', found str 'curl'"),
    ("provides_locales: [{endonym: Polski}]", "provides_locales",
     "item 1: expected a locale id or a mapping {id, endonym, rtl}"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "field", "message"), WRONG_TYPES)
def test_wrong_types(tmp_path: Path, text: str, field: str, message: str) -> None:
    path = write(tmp_path, f"name: a\n{text}\n")
    with raises_at(path, f"field {field!r}: {message}") as caught:
        PluginManifest.from_path(path)
    assert caught.value.field == field


def test_unknown_kind_suggests_the_closest(tmp_path: Path) -> None:
    path = write(tmp_path, "name: a\nkind: backnd\n")
    with raises_at(
        path, "field 'kind'", "expected one of 'backend', 'exclusive', 'model-provider', "
        "'platform', 'standalone'", "found str 'backnd'", "did you mean 'backend'?",
    ):  # fmt: skip
        PluginManifest.from_path(path)


def test_unknown_kind_far_from_any_has_no_suggestion(tmp_path: Path) -> None:
    path = write(tmp_path, "name: a\nkind: zzz\n")
    with pytest.raises(ManifestError) as caught:
        PluginManifest.from_path(path)
    assert "did you mean" not in str(caught.value)


# ── names ────────────────────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("written", "found"),
    [
        ('".."', "str '..'"),
        ('"a..b"', "str 'a..b'; '..' is not allowed"),
        ('"a/b"', "str 'a/b'"),
        ('"../etc"', "str '../etc'"),
        ("A", "str 'A'; did you mean 'a'?"),
        ('"a\\0b"', "str 'a\\x00b'"),
        ("\u0430bc", "str '\u0430bc'; it holds the non-ASCII character '\u0430' (U+0430)"),
        ('""', "str ''"),
        ("-abc", "str '-abc'"),
        (".hidden", "str '.hidden'"),
        ('"my plugin"', "str 'my plugin'"),
        ('"a\\n"', "str 'a\\n'"),
        ("a" * 65, f"str '{'a' * 56}...; it has 65 characters"),
    ],
)
def test_bad_names(tmp_path: Path, written: str, found: str) -> None:
    path = write(tmp_path, f"name: {written}\n")
    with raises_at(
        path, "field 'name'", "expected a name of lowercase ASCII letters", f"found {found}"
    ):
        PluginManifest.from_path(path)


def test_name_of_the_wrong_type(tmp_path: Path) -> None:
    path = write(tmp_path, "name: 7\n")
    with raises_at(path, "field 'name': expected a string (quote it), found int 7"):
        PluginManifest.from_path(path)


def test_bad_folder_name_used_as_the_name(tmp_path: Path) -> None:
    path = write(tmp_path, "version: '1'\n", folder="My Plugin")
    with raises_at(path, "field 'name'", "found str 'My Plugin' (taken from the folder name)"):
        PluginManifest.from_path(path)


def test_no_name_and_no_default() -> None:
    with pytest.raises(
        ManifestError, match=r"plugin manifest: field 'name': expected a plugin name, found none"
    ):
        PluginManifest.from_mapping({"version": "1.0"})


def test_from_mapping_requires_a_mapping() -> None:
    with pytest.raises(
        ManifestError, match=r"expected a mapping of fields at the top level, found null"
    ):
        PluginManifest.from_mapping(None)


@pytest.mark.parametrize("name", ["a", "0", "image_gen", "disk-cleanup", "web.tavily", "a" * 64])
def test_good_names(name: str) -> None:
    assert is_valid_plugin_name(name)
    assert NAME_PATTERN.match(name)
    assert PluginManifest.from_mapping({"name": name}).name == name


def test_name_pattern_is_anchored_at_both_ends() -> None:
    assert NAME_PATTERN.match("abc\n") is None
    assert NAME_PATTERN.search("A abc") is None


# ── safe_load_yaml on its own ────────────────────────────────────────────────────────────────


def test_safe_load_yaml_reads_text_and_bytes(loader: str) -> None:
    assert safe_load_yaml("a: [1, 2]\n", source="s") == {"a": [1, 2]}
    assert safe_load_yaml(b"a: {b: c}\n", source="s") == {"a": {"b": "c"}}
    assert safe_load_yaml("", source="s") is None
    assert safe_load_yaml("base: &b {x: 1}\nd: {<<: *b, y: 2}\n", source="s") == {
        "base": {"x": 1},
        "d": {"x": 1, "y": 2},
    }


def test_safe_load_yaml_errors_are_yaml_and_value_errors(loader: str) -> None:
    with pytest.raises(YAMLLoadError) as caught:
        safe_load_yaml("a: [1,\n", source="config.yaml")
    error = caught.value
    assert isinstance(error, ValueError)
    assert isinstance(error, yaml.YAMLError)
    assert (error.source, error.line, error.column) == ("config.yaml", 2, 1)
    assert str(error).startswith("config.yaml: line 2, column 1: invalid YAML")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("a: 1\n" * 10, "expected at most 20 bytes, found 50 bytes"),
        (b"a: 1\n" * 10, "expected at most 20 bytes, found 50 bytes"),
        ("é" * 11, "expected at most 20 bytes, found 22 bytes"),
    ],
)
def test_safe_load_yaml_size_limit(data: str | bytes, message: str) -> None:
    with pytest.raises(YAMLLoadError, match=re.escape(message)):
        safe_load_yaml(data, source="s", max_bytes=20)


def test_safe_load_yaml_custom_bounds() -> None:
    assert safe_load_yaml("[[1]]", source="s", max_depth=2) == [[1]]
    with pytest.raises(YAMLLoadError, match="at most 1 levels of nesting"):
        safe_load_yaml("[[1]]", source="s", max_depth=1)
    with pytest.raises(YAMLLoadError, match="at most 3 YAML nodes"):
        safe_load_yaml("[1, 2, 3]", source="s", max_nodes=3)


def test_safe_load_yaml_refuses_control_characters(loader: str) -> None:
    with pytest.raises(YAMLLoadError, match=r"line 2, column 4: invalid YAML"):
        safe_load_yaml("a: 1\nb: \x00\n", source="s")


def test_safe_load_yaml_refuses_undefined_and_duplicate_anchors(loader: str) -> None:
    with pytest.raises(YAMLLoadError, match="undefined alias 'x'"):
        safe_load_yaml("a: *x\n", source="s")
    with pytest.raises(YAMLLoadError, match="duplicate anchor 'x'"):
        safe_load_yaml("a: &x 1\nb: &x 2\n", source="s")


def test_safe_load_yaml_refuses_lone_surrogates(loader: str) -> None:
    with pytest.raises(YAMLLoadError, match=r"line 2, column 4: .*(surrogate|special characters)"):
        safe_load_yaml("a: 1\nb: \ud800\n", source="s")


@pytest.mark.parametrize("text", ["[1, [2]]", "{a: 1}", "[&x [1], *x]"])
def test_safe_load_yaml_counts_collections_and_aliases(loader: str, text: str) -> None:
    with pytest.raises(YAMLLoadError, match="at most 2 YAML nodes"):
        safe_load_yaml(text, source="s", max_nodes=2)


def test_the_reference_example_is_a_valid_manifest(tmp_path: Path) -> None:
    reference = Path(__file__).parent.parent / "docs" / "reference" / "manifest.md"
    example = reference.read_text(encoding="utf-8").split("```yaml\n", 1)[1].split("```", 1)[0]
    m = parse(tmp_path, example)
    assert (m.name, m.version, m.kind) == ("weather", "1.2.0", "standalone")
    assert m.required_env_names == ("WEATHER_API_KEY", "WEATHER_SECRET")
    assert dict(m.extra) == {}


# --- requires_hermes and version, checked with packaging ------------------------------------


@pytest.mark.parametrize(
    ("requirement", "fits"),
    [
        ("0.19", True),  # a bare version means >=
        (">=0.19", True),
        (">=0.19,<1", True),
        ("~=0.21.0", True),
        (">=99", False),
        ("99", False),
        ("<0.1", False),
    ],
)
def test_requires_hermes_is_checked_against_the_hermes_contract_version(
    requirement: str, fits: bool
) -> None:
    from hermes_hooks.spec.contract import HERMES_CONTRACT_VERSION

    manifest = PluginManifest.from_mapping({"name": "p", "requires_hermes": requirement})
    mismatch = manifest.hermes_mismatch(HERMES_CONTRACT_VERSION)
    assert (mismatch is None) is fits
    if not fits:
        assert mismatch == (
            f"requires Hermes {requirement} (requires_hermes), and this host implements the "
            f"plugin contract of Hermes {HERMES_CONTRACT_VERSION}"
        )


def test_a_requires_hermes_that_is_no_requirement_is_refused() -> None:
    with pytest.raises(ManifestError, match=r"requires_hermes.*a version \(meaning '>='\)"):
        PluginManifest.from_mapping({"name": "p", "requires_hermes": "soon!"})


@pytest.mark.parametrize(
    ("version", "ok"), [("1.0.0", True), ("2", True), ("not-a-version!!", False)]
)
def test_an_invalid_version_is_a_problem_to_warn_about(version: str, ok: bool) -> None:
    manifest = PluginManifest.from_mapping({"name": "p", "version": version})
    assert (manifest.version_problem is None) is ok


@pytest.mark.parametrize(
    ("text", "key", "lines"),
    [
        ("name: good\nversion: 1\nname: evil\n", "name", (1, 3)),
        ("name: x\nrequires_env:\n  - A\nhooks: [a]\nhooks: [b]\n", "hooks", (4, 5)),
        ("name: x\nauthor:\n  name: a\n  name: b\n", "name", (3, 4)),
    ],
)
def test_a_key_written_twice_in_a_manifest_is_refused_naming_both_lines(
    tmp_path: Path, text: str, key: str, lines: tuple[int, int]
) -> None:
    """As config.yaml: YAML would keep the later value silently (issue 26, item 18)."""
    with pytest.raises(ManifestError) as caught:
        parse(tmp_path, text)
    message = str(caught.value)
    assert f"found the key {key!r} twice in one mapping (first at line {lines[0]})" in message
    assert f"line {lines[1]}" in message
    assert "plugin.yaml" in message
