"""Tests for hermes_hooks.plugins.config: home, switches, config.yaml read/write/update."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from homes import absent_home as home  # noqa: F401  (the fixture)

from hermes_hooks.errors import ConfigError
from hermes_hooks.plugins.config import (
    CONFIG_FILENAME,
    DEFAULT_HOOK_CALLBACK_TIMEOUT,
    DEFAULT_LOAD_TIMEOUT,
    HERMES_HOME_ENV,
    MAX_HOOK_CALLBACK_TIMEOUT,
    MAX_LOAD_TIMEOUT,
    SAFE_MODE_ENV,
    PluginsConfig,
    config_path,
    env_flag,
    get_hermes_home,
    is_truthy,
    load_config,
    set_plugin_enabled,
    update_config,
    write_config,
)

REPO_ROOT = Path(__file__).resolve().parents[1]


def write_yaml(home: Path, text: str) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    path = config_path(home)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def plugins(section: Mapping[str, Any], source: Path | None = None) -> PluginsConfig:
    return PluginsConfig.from_config({"plugins": section}, source=source)


# --- home and switches -------------------------------------------------------------------------


def test_home_from_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(HERMES_HOME_ENV, str(tmp_path / "custom"))
    assert get_hermes_home() == tmp_path / "custom"


def test_home_expands_user(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv(HERMES_HOME_ENV, "~/profiles/work")
    assert get_hermes_home() == tmp_path / "profiles" / "work"


@pytest.mark.parametrize("value", [None, "", "   "])
def test_home_defaults_to_dot_hermes(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, value: str | None
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    if value is None:
        monkeypatch.delenv(HERMES_HOME_ENV, raising=False)
    else:
        monkeypatch.setenv(HERMES_HOME_ENV, value)
    assert get_hermes_home() == tmp_path / ".hermes"


def test_home_from_explicit_mapping_ignores_os_environ(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(HERMES_HOME_ENV, str(tmp_path / "from-os"))
    assert get_hermes_home({HERMES_HOME_ENV: str(tmp_path / "given")}) == tmp_path / "given"


def test_home_is_not_created(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(HERMES_HOME_ENV, str(tmp_path / "absent"))
    get_hermes_home()
    assert not (tmp_path / "absent").exists()


def test_config_path(tmp_path: Path) -> None:
    assert config_path(tmp_path) == tmp_path / CONFIG_FILENAME == tmp_path / "config.yaml"


@pytest.mark.parametrize("value", ["1", "true", "TRUE", "True", "yes", "Yes", "on", "ON", " on\n"])
def test_truthy_values(value: str) -> None:
    assert is_truthy(value)


@pytest.mark.parametrize("value", [None, "", "0", "false", "no", "off", "2", "y", "enabled", "t"])
def test_not_truthy_values(value: str | None) -> None:
    assert not is_truthy(value)


def test_env_flag_reads_os_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SAFE_MODE_ENV, "Yes")
    assert env_flag(SAFE_MODE_ENV)
    monkeypatch.setenv(SAFE_MODE_ENV, "0")
    assert not env_flag(SAFE_MODE_ENV)
    monkeypatch.delenv(SAFE_MODE_ENV)
    assert not env_flag(SAFE_MODE_ENV)


def test_env_flag_reads_given_mapping(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SAFE_MODE_ENV, "1")
    assert not env_flag(SAFE_MODE_ENV, {})
    assert env_flag(SAFE_MODE_ENV, {SAFE_MODE_ENV: "on"})


# --- load_config -------------------------------------------------------------------------------


def test_missing_home_gives_empty_config_and_creates_nothing(home: Path) -> None:
    assert load_config(home) == {}
    assert not home.exists()


def test_missing_file_gives_empty_config(home: Path) -> None:
    home.mkdir()
    assert load_config(home) == {}
    assert list(home.iterdir()) == []


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n", "---\n", "~\n"])
def test_empty_file_gives_empty_config(home: Path, text: str) -> None:
    write_yaml(home, text)
    assert load_config(home) == {}


def test_load_config_reads_mapping(home: Path) -> None:
    write_yaml(
        home,
        """\
        model: local
        plugins:
          enabled: [a, b]
        """,
    )
    assert load_config(home) == {"model": "local", "plugins": {"enabled": ["a", "b"]}}


def test_invalid_yaml_names_file_line_and_column(home: Path) -> None:
    path = write_yaml(home, "model: local\nplugins: [a, b\nother: 1\n")
    with pytest.raises(ConfigError, match=r"invalid YAML at line 3, column \d+") as info:
        load_config(home)
    assert str(info.value).startswith(f"{path}: ")


def test_bad_indentation_is_invalid_yaml(home: Path) -> None:
    write_yaml(home, "plugins:\n  enabled:\n    - a\n   bad: 1\n")
    with pytest.raises(ConfigError, match=r"config\.yaml: invalid YAML at line 4, column 4"):
        load_config(home)


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("- a\n- b\n", r"a list \(\['a', 'b'\]\)"),
        ("just text\n", r"a string \('just text'\)"),
        ("42\n", r"an integer \(42\)"),
    ],
)
def test_top_level_must_be_a_mapping(home: Path, text: str, found: str) -> None:
    write_yaml(home, text)
    with pytest.raises(
        ConfigError,
        match=rf"config\.yaml: expected a mapping of settings at the top level, found {found}",
    ):
        load_config(home)


def test_load_config_refuses_python_tags(home: Path) -> None:
    write_yaml(home, "x: !!python/object/apply:os.getcwd []\n")
    with pytest.raises(
        ConfigError, match=r"invalid YAML at line 1, column 4: .*constructor .*python/object/apply"
    ):
        load_config(home)


def test_undecodable_file_is_a_config_error(home: Path) -> None:
    home.mkdir()
    config_path(home).write_bytes(b"model: \xff\xfe\n")
    with pytest.raises(ConfigError, match=r"config\.yaml: invalid YAML at line 1.*found byte 0xff"):
        load_config(home)


# --- write_config ------------------------------------------------------------------------------


def test_write_creates_home_and_round_trips(home: Path) -> None:
    data = {"zeta": 1, "alpha": {"nested": ["x", "y"], "b": True}, "text": "héllo ✓"}
    write_config(home, data)
    assert load_config(home) == data
    text = config_path(home).read_text(encoding="utf-8")
    assert text.index("zeta") < text.index("alpha"), "key order must be kept, not sorted"
    assert "héllo ✓" in text, "unicode must be written as is, not escaped"


def test_new_config_file_is_private(home: Path) -> None:
    write_config(home, {"a": 1})
    assert stat.S_IMODE(config_path(home).stat().st_mode) == 0o600


def test_write_keeps_permission_bits(home: Path) -> None:
    path = write_yaml(home, "a: 1\n")
    path.chmod(0o640)
    write_config(home, {"a": 2})
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert load_config(home) == {"a": 2}


def test_write_leaves_no_temp_file(home: Path) -> None:
    write_config(home, {"a": 1})
    write_config(home, {"a": 2})
    assert sorted(p.name for p in home.iterdir()) == ["config.yaml"]


def test_write_follows_a_symlinked_config(home: Path, tmp_path: Path) -> None:
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    real = dotfiles / "hermes.yaml"
    real.write_text("a: 1\n", encoding="utf-8")
    home.mkdir()
    config_path(home).symlink_to(real)
    write_config(home, {"a": 2})
    assert config_path(home).is_symlink()
    assert load_config(home) == {"a": 2}
    assert sorted(p.name for p in dotfiles.iterdir()) == ["hermes.yaml"]


def test_unserialisable_value_leaves_old_file_intact(home: Path) -> None:
    path = write_yaml(home, "keep: me\n")
    before = path.read_bytes()
    with pytest.raises(
        ConfigError,
        match=r"config\.yaml: cannot write plugins\.entries\[1\]: expected a mapping, list, "
        r"string, number, boolean or null, found object",
    ):
        write_config(home, {"keep": "me", "plugins": {"entries": ["ok", object()]}})
    assert path.read_bytes() == before
    assert sorted(p.name for p in home.iterdir()) == ["config.yaml"]


def test_failed_replace_leaves_old_file_intact(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_yaml(home, "keep: me\n")
    before = path.read_bytes()

    def disk_full(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", disk_full)
    with pytest.raises(
        ConfigError, match=r"config\.yaml: cannot write the config file: .*No space"
    ):
        write_config(home, {"keep": "changed"})
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert sorted(p.name for p in home.iterdir()) == ["config.yaml"]


# --- update_config -----------------------------------------------------------------------------


def test_update_keeps_untouched_keys_and_order(home: Path) -> None:
    write_yaml(
        home,
        """\
        zeta: 1
        model: {name: local, temperature: 0.2}
        plugins:
          enabled: [a]
          entries:
            a: {allow_tool_override: true}
        alpha: [x, y]
        """,
    )

    def add_b(config: dict[str, Any]) -> None:
        config["plugins"]["enabled"].append("b")

    result = update_config(home, add_b)
    expected = {
        "zeta": 1,
        "model": {"name": "local", "temperature": 0.2},
        "plugins": {"enabled": ["a", "b"], "entries": {"a": {"allow_tool_override": True}}},
        "alpha": ["x", "y"],
    }
    assert result == expected
    loaded = load_config(home)
    assert loaded == expected
    assert list(loaded) == ["zeta", "model", "plugins", "alpha"]


def test_update_creates_home_and_file(home: Path) -> None:
    update_config(home, lambda config: config.setdefault("plugins", {"enabled": ["a"]}))
    assert load_config(home) == {"plugins": {"enabled": ["a"]}}


def test_update_without_change_does_not_write(home: Path) -> None:
    path = write_yaml(home, "a: 1   # a comment that a rewrite would drop\n")
    before = path.read_bytes()
    inode = path.stat().st_ino
    assert update_config(home, lambda config: None) == {"a": 1}
    assert path.read_bytes() == before
    assert path.stat().st_ino == inode


def test_update_of_missing_file_without_change_creates_no_config(home: Path) -> None:
    update_config(home, lambda config: None)
    assert not config_path(home).exists()


@pytest.mark.parametrize("text", ["plugins: [a, b\n", "- a\n- b\n"])
def test_update_never_overwrites_a_bad_config(home: Path, text: str) -> None:
    path = write_yaml(home, text)
    before = path.read_bytes()
    called: list[dict[str, Any]] = []
    with pytest.raises(ConfigError, match=r"config\.yaml: (invalid YAML|expected a mapping)"):
        update_config(home, called.append)
    assert called == []
    assert path.read_bytes() == before


def test_update_writes_nothing_when_mutate_raises(home: Path) -> None:
    path = write_yaml(home, "a: 1\n")
    before = path.read_bytes()

    def half_done(config: dict[str, Any]) -> None:
        config["a"] = 2
        raise RuntimeError("changed my mind")

    with pytest.raises(RuntimeError, match="changed my mind"):
        update_config(home, half_done)
    assert path.read_bytes() == before


def test_update_uses_a_sibling_lock_file(home: Path) -> None:
    update_config(home, lambda config: config.update(a=1))
    assert sorted(p.name for p in home.iterdir()) == [".config.yaml.lock", "config.yaml"]


WORKER = """
import sys, time
from pathlib import Path
from hermes_hooks.plugins.config import set_plugin_enabled

home, worker, rounds = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
deadline = time.monotonic() + 30
while not (home / "go").exists():  # start together, so the updates really overlap
    if time.monotonic() > deadline:
        sys.exit("never told to go")
    time.sleep(0.001)
for n in range(rounds):
    set_plugin_enabled(home, f"plugin-{worker}-{n}", True)
"""


def test_concurrent_updates_from_processes_lose_nothing(home: Path) -> None:
    write_yaml(home, "model: local\nplugins:\n  enabled: [existing]\n")
    workers, rounds = 8, 5
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(home), str(worker), str(rounds)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for worker in range(workers)
    ]
    (home / "go").touch()
    failures = []
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        if proc.returncode != 0:
            failures.append(err.decode())
    assert failures == []
    config = load_config(home)
    expected = {"existing"} | {f"plugin-{w}-{n}" for w in range(workers) for n in range(rounds)}
    assert config["model"] == "local"
    assert set(config["plugins"]["enabled"]) == expected
    assert len(config["plugins"]["enabled"]) == len(expected)
    assert sorted(p.name for p in home.iterdir()) == [".config.yaml.lock", "config.yaml", "go"]


# --- PluginsConfig -----------------------------------------------------------------------------


def test_plugins_config_defaults() -> None:
    for cfg in (PluginsConfig(), PluginsConfig.from_config({}), plugins({})):
        assert cfg.enabled == frozenset()
        assert cfg.disabled == frozenset()
        assert dict(cfg.entries) == {}
        assert cfg.hook_callback_timeout == DEFAULT_HOOK_CALLBACK_TIMEOUT == 30.0
        assert cfg.warnings == ()
    assert PluginsConfig.from_config({"plugins": None}) == PluginsConfig()


def test_plugins_config_parses_the_section() -> None:
    cfg = plugins(
        {
            "enabled": ["a", "observability/langfuse", "a"],
            "disabled": ["b"],
            "entries": {"a": {"allow_tool_override": True, "level": 3}, "c": None},
            "hook_callback_timeout": 12.5,
        }
    )
    assert cfg.enabled == {"a", "observability/langfuse"}
    assert cfg.disabled == {"b"}
    assert cfg.is_enabled("a")
    assert cfg.is_enabled("observability/langfuse")
    assert not cfg.is_enabled("b")
    assert cfg.is_disabled("b")
    assert not cfg.is_disabled("a")
    assert cfg.entry("a") == {"allow_tool_override": True, "level": 3}
    assert cfg.entry("c") == {}
    assert cfg.entry("absent") == {}
    assert cfg.hook_callback_timeout == 12.5
    assert cfg.warnings == ()


def test_null_lists_are_empty() -> None:
    cfg = plugins({"enabled": None, "disabled": None, "entries": None})
    assert cfg == PluginsConfig()


def test_plugins_config_is_immutable() -> None:
    cfg = plugins({"entries": {"a": {"x": 1}}})
    with pytest.raises(TypeError):
        cfg.entries["b"] = {}  # type: ignore[index]
    with pytest.raises(TypeError):
        cfg.entry("a")["x"] = 2  # type: ignore[index]
    hash(cfg)


@pytest.mark.parametrize(
    ("plugin_id", "entry", "allowed"),
    [
        ("a", {"allow_tool_override": True}, True),
        ("a", {"allow_tool_override": False}, False),
        ("a", {"allow_tool_override": "true"}, False),
        ("a", {"allow_tool_override": 1}, False),
        ("a", {}, False),
        ("other", {"allow_tool_override": True}, False),
    ],
)
def test_allow_tool_override_needs_literal_true(
    plugin_id: str, entry: dict[str, Any], allowed: bool
) -> None:
    assert plugins({"entries": {"a": entry}}).allow_tool_override(plugin_id) is allowed


@pytest.mark.parametrize("field", ["enabled", "disabled"])
@pytest.mark.parametrize(
    ("value", "found"),
    [("foo", r"a string \('foo'\)"), (3, r"an integer \(3\)"), ({"a": 1}, r"a mapping")],
)
def test_wrong_type_for_lists(field: str, value: object, found: str, tmp_path: Path) -> None:
    source = tmp_path / "config.yaml"
    with pytest.raises(
        ConfigError,
        match=rf"^{re.escape(str(source))}: plugins\.{field}: "
        rf"expected a list of plugin keys, found {found}",
    ):
        plugins({field: value}, source=source)


def test_wrong_type_for_a_list_item() -> None:
    with pytest.raises(
        ConfigError,
        match=r"^config: plugins\.enabled\[1\]: expected a plugin key \(a string\), "
        r"found an integer \(7\)",
    ):
        plugins({"enabled": ["a", 7]})


def test_wrong_type_for_the_section() -> None:
    with pytest.raises(
        ConfigError, match=r"^config: plugins: expected a mapping of plugin settings, found a list"
    ):
        PluginsConfig.from_config({"plugins": ["a"]})


def test_wrong_type_for_entries(tmp_path: Path) -> None:
    source = tmp_path / "config.yaml"
    with pytest.raises(
        ConfigError,
        match=rf"^{re.escape(str(source))}: plugins\.entries: "
        r"expected a mapping of plugin id to settings, found a list",
    ):
        plugins({"entries": ["a"]}, source=source)


def test_wrong_type_for_one_entry() -> None:
    with pytest.raises(
        ConfigError,
        match=r"^config: plugins\.entries\.a: expected a mapping of settings, found a string",
    ):
        plugins({"entries": {"a": "yes"}})


def test_from_home_names_the_file(home: Path) -> None:
    path = write_yaml(home, "plugins:\n  enabled: my-plugin\n")
    with pytest.raises(
        ConfigError, match=rf"^{re.escape(str(path))}: plugins\.enabled: expected a list"
    ):
        PluginsConfig.from_home(home)
    write_yaml(home, "plugins:\n  enabled: [my-plugin]\n")
    cfg = PluginsConfig.from_home(home)
    assert cfg.enabled == {"my-plugin"}
    assert cfg.source == path


@pytest.mark.parametrize(
    ("value", "seconds"),
    [(45, 45.0), (7.5, 7.5), ("45", 45.0), (0, 0.0), (0.0, 0.0), (600, 600.0)],
)
def test_hook_callback_timeout_values(value: object, seconds: float) -> None:
    cfg = plugins({"hook_callback_timeout": value})
    assert cfg.hook_callback_timeout == seconds
    assert cfg.warnings == ()


@pytest.mark.parametrize("value", [601, 10_000, float("inf")])
def test_hook_callback_timeout_is_capped(value: float) -> None:
    cfg = plugins({"hook_callback_timeout": value})
    assert cfg.hook_callback_timeout == MAX_HOOK_CALLBACK_TIMEOUT == 600.0
    assert len(cfg.warnings) == 1
    assert "plugins.hook_callback_timeout" in cfg.warnings[0]
    assert "more than the maximum 600s; using 600s" in cfg.warnings[0]


@pytest.mark.parametrize(
    ("value", "found"),
    [
        ("soon", "a string ('soon')"),
        (True, "a boolean (True)"),
        ([30], "a list ([30])"),
        (float("nan"), "a number (nan)"),
    ],
)
def test_hook_callback_timeout_wrong_type_falls_back(
    value: object, found: str, tmp_path: Path
) -> None:
    source = tmp_path / "config.yaml"
    cfg = plugins({"hook_callback_timeout": value}, source=source)
    assert cfg.hook_callback_timeout == DEFAULT_HOOK_CALLBACK_TIMEOUT
    assert cfg.warnings == (
        f"{source}: plugins.hook_callback_timeout: expected a number of seconds, found {found};"
        " using the default 30s",
    )


def test_hook_callback_timeout_negative_falls_back() -> None:
    cfg = plugins({"hook_callback_timeout": -5})
    assert cfg.hook_callback_timeout == DEFAULT_HOOK_CALLBACK_TIMEOUT
    assert cfg.warnings == (
        "config: plugins.hook_callback_timeout: expected 0 or more seconds, found -5;"
        " using the default 30s",
    )


def test_hook_callback_timeout_from_yaml(home: Path) -> None:
    write_yaml(home, "plugins:\n  hook_callback_timeout: .nan\n")
    cfg = PluginsConfig.from_home(home)
    assert cfg.hook_callback_timeout == DEFAULT_HOOK_CALLBACK_TIMEOUT
    assert len(cfg.warnings) == 1


# --- set_plugin_enabled ------------------------------------------------------------------------


def test_set_plugin_enabled_round_trip(home: Path) -> None:
    write_yaml(home, "model: local\n")
    set_plugin_enabled(home, "a", True)
    set_plugin_enabled(home, "b", True)
    set_plugin_enabled(home, "a", True)
    assert load_config(home) == {"model": "local", "plugins": {"enabled": ["a", "b"]}}

    set_plugin_enabled(home, "a", False)
    assert load_config(home)["plugins"] == {"enabled": ["b"], "disabled": ["a"]}
    set_plugin_enabled(home, "a", False)
    assert load_config(home)["plugins"] == {"enabled": ["b"], "disabled": ["a"]}

    set_plugin_enabled(home, "a", True)
    assert load_config(home) == {
        "model": "local",
        "plugins": {"enabled": ["b", "a"], "disabled": []},
    }
    cfg = PluginsConfig.from_home(home)
    assert cfg.is_enabled("a")
    assert not cfg.is_disabled("a")


def test_set_plugin_enabled_drops_aliases_from_the_other_list(home: Path) -> None:
    write_yaml(home, "plugins:\n  disabled: [no-rm, other]\n")
    set_plugin_enabled(home, "cat/no-rm-folder", True, aliases=["no-rm"])
    assert load_config(home)["plugins"] == {"disabled": ["other"], "enabled": ["cat/no-rm-folder"]}


def test_set_plugin_enabled_on_a_fresh_home(home: Path) -> None:
    set_plugin_enabled(home, "a", False)
    assert load_config(home) == {"plugins": {"disabled": ["a"]}}


def test_set_plugin_enabled_keeps_other_plugin_settings(home: Path) -> None:
    write_yaml(
        home,
        """\
        plugins:
          hook_callback_timeout: 12
          entries:
            a: {allow_tool_override: true}
          enabled: [x]
        tail: 1
        """,
    )
    set_plugin_enabled(home, "a", True)
    config = load_config(home)
    assert config == {
        "plugins": {
            "hook_callback_timeout": 12,
            "entries": {"a": {"allow_tool_override": True}},
            "enabled": ["x", "a"],
        },
        "tail": 1,
    }
    assert list(config["plugins"]) == ["hook_callback_timeout", "entries", "enabled"]


def test_set_plugin_enabled_drops_a_stale_bare_leaf(home: Path) -> None:
    write_yaml(home, "plugins:\n  disabled: [langfuse, other]\n")
    set_plugin_enabled(home, "observability/langfuse", True)
    assert load_config(home)["plugins"] == {
        "disabled": ["other"],
        "enabled": ["observability/langfuse"],
    }
    set_plugin_enabled(home, "observability/langfuse", False)
    assert load_config(home)["plugins"] == {
        "disabled": ["other", "observability/langfuse"],
        "enabled": [],
    }


def test_set_plugin_enabled_refuses_a_wrong_type_and_keeps_the_file(home: Path) -> None:
    path = write_yaml(home, "plugins:\n  disabled: a\n")
    before = path.read_bytes()
    with pytest.raises(
        ConfigError, match=rf"^{re.escape(str(path))}: plugins\.disabled: expected a list"
    ):
        set_plugin_enabled(home, "a", True)
    assert path.read_bytes() == before


def test_set_plugin_enabled_refuses_an_empty_key(home: Path) -> None:
    with pytest.raises(ValueError, match="must not be empty"):
        set_plugin_enabled(home, " ", True)
    assert not home.exists()


def test_an_alias_bomb_in_config_is_refused_not_expanded(tmp_path: Path) -> None:
    lines = ['a0: &a0 ["x", "x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 10)]
    (tmp_path / "config.yaml").write_text("\n".join(lines) + "\n")
    with pytest.raises(ConfigError, match=r"config\.yaml: invalid YAML at line \d+.*expand"):
        load_config(tmp_path)


def test_load_timeout_defaults_to_10_seconds_and_reads_like_the_callback_timeout(
    tmp_path: Path,
) -> None:
    assert plugins({}).load_timeout == DEFAULT_LOAD_TIMEOUT == 10.0
    assert plugins({"load_timeout": "2.5"}).load_timeout == 2.5
    assert plugins({"load_timeout": 0}).load_timeout == 0.0
    capped = plugins({"load_timeout": 10_000})
    assert capped.load_timeout == MAX_LOAD_TIMEOUT == 600.0
    assert "plugins.load_timeout: 10000 is more than the maximum 600s" in capped.warnings[0]
    source = tmp_path / "config.yaml"
    wrong = plugins({"load_timeout": "later", "hook_callback_timeout": -1}, source=source)
    assert (wrong.load_timeout, wrong.hook_callback_timeout) == (10.0, 30.0)
    assert wrong.warnings == (
        f"{source}: plugins.hook_callback_timeout: expected 0 or more seconds, found -1;"
        " using the default 30s",
        f"{source}: plugins.load_timeout: expected a number of seconds, found a string "
        "('later'); using the default 10s",
    )
