"""config.yaml as a file people edit and attackers plant (issue 17, item 8).

Writes keep the person's comments, order and style (round-trip); reads refuse anything but a
regular file of bounded size, duplicate keys and alias bombs, yet load a large real config;
the lock works without ``fcntl``; ``hermes plugins list`` exits 1 on an invalid config.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_support import hermes

from hermes_hooks.errors import ConfigError
from hermes_hooks.plugins.config import (
    MAX_CONFIG_BYTES,
    config_path,
    load_config,
    set_plugin_enabled,
    update_config,
)

HAND_KEPT = """\
# My Hermes config, kept by hand.
model:
    default: "gpt-4o"   # the one I pay for
    fallbacks: [mini, 'local']
defaults: &defaults
    timeout: 30
tools:
    web: *defaults
plugins:
    # safety first
    enabled:
      - no-rm
    disabled: []
"""


def write(home: Path, text: str) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    path = config_path(home)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


# --- round-trip writes ---------------------------------------------------------------------------


def test_enabling_keeps_comments_anchors_quotes_flow_style_and_indent(tmp_path: Path) -> None:
    path = write(tmp_path, HAND_KEPT)
    set_plugin_enabled(tmp_path, "audit", True)
    expected = HAND_KEPT.replace("      - no-rm\n", "      - no-rm\n      - audit\n")
    assert path.read_text(encoding="utf-8") == expected
    assert load_config(tmp_path)["tools"]["web"] == {"timeout": 30}


def test_disabling_through_the_cli_keeps_the_comments(tmp_path: Path) -> None:
    path = write(tmp_path, "# keep me\nplugins:\n  enabled: [] # and me\n")
    result = hermes(tmp_path, "plugins", "disable", "tool-log")
    assert result.returncode == 0, result.stderr
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# keep me\nplugins:\n")
    assert "# and me" in text
    assert load_config(tmp_path)["plugins"]["disabled"] == ["tool-log"]


def test_a_change_that_changes_nothing_leaves_the_bytes_alone(tmp_path: Path) -> None:
    path = write(tmp_path, HAND_KEPT)
    os.utime(path, (1_000_000, 1_000_000))
    set_plugin_enabled(tmp_path, "no-rm", True)
    assert path.stat().st_mtime == 1_000_000
    assert path.read_text(encoding="utf-8") == HAND_KEPT


def test_a_large_real_config_loads_and_is_written_back(tmp_path: Path) -> None:
    """~120 KB and ~14,000 nodes: past the manifest bounds, well inside config's own."""
    lines = ["providers:"]
    for i in range(1400):
        lines += [
            f"  provider{i}:  # number {i}",
            f"    base_url: https://example.invalid/{i}",
            f"    models: [m{i}a, m{i}b, m{i}c]",
            "    retries: 3",
        ]
    text = "\n".join(lines) + "\n"
    assert 100_000 < len(text) < MAX_CONFIG_BYTES
    path = write(tmp_path, text)
    assert len(load_config(tmp_path)["providers"]) == 1400
    set_plugin_enabled(tmp_path, "audit", True)
    assert path.read_text(encoding="utf-8") == text + "plugins:\n  enabled:\n  - audit\n"


# --- bounded reads -------------------------------------------------------------------------------


def test_a_fifo_config_is_refused_at_once(tmp_path: Path) -> None:
    tmp_path.mkdir(exist_ok=True)
    os.mkfifo(config_path(tmp_path))
    result = hermes(tmp_path, "plugins", "list")  # a read would block on the FIFO forever
    assert result.returncode == 1
    assert "config.yaml: expected a regular file, found a FIFO; not read" in result.stderr


def test_a_config_linked_to_dev_zero_is_refused_not_read(tmp_path: Path) -> None:
    config_path(tmp_path).symlink_to("/dev/zero")
    result = hermes(tmp_path, "plugins", "list")  # a read would grow without end
    assert result.returncode == 1
    assert "config.yaml: expected a regular file, found a character device" in result.stderr


def test_a_config_folder_is_refused(tmp_path: Path) -> None:
    config_path(tmp_path).mkdir()
    with pytest.raises(ConfigError, match=r"config\.yaml: (expected a regular file|cannot read)"):
        load_config(tmp_path)


def test_an_oversized_config_is_refused_by_its_size(tmp_path: Path) -> None:
    with config_path(tmp_path).open("wb") as stream:
        stream.truncate(MAX_CONFIG_BYTES + 1)  # sparse: the size is the only thing checked
    message = f"expected at most {MAX_CONFIG_BYTES} bytes, found {MAX_CONFIG_BYTES + 1}"
    with pytest.raises(ConfigError, match=message):
        load_config(tmp_path)


def test_a_symlink_to_a_regular_config_is_followed(tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "hermes.yaml"
    real.parent.mkdir()
    real.write_text("plugins:\n  enabled: [a]  # mine\n", encoding="utf-8")
    home = tmp_path / "home"
    home.mkdir()
    config_path(home).symlink_to(real)
    set_plugin_enabled(home, "b", True)
    assert config_path(home).is_symlink()
    assert real.read_text(encoding="utf-8") == "plugins:\n  enabled: [a, b] # mine\n"


def test_an_alias_bomb_in_config_is_refused_by_configs_own_bound(tmp_path: Path) -> None:
    lines = ['a0: &a0 ["x", "x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 10)]
    write(tmp_path, "\n".join(lines) + "\n")
    with pytest.raises(ConfigError, match=r"500000 YAML nodes with aliases expanded"):
        load_config(tmp_path)


# --- duplicate keys ------------------------------------------------------------------------------


def test_a_key_twice_is_refused_naming_both_lines(tmp_path: Path) -> None:
    write(tmp_path, "plugins:\n  enabled: [a]\nmodel: x\nplugins:\n  disabled: [b]\n")
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path)
    assert str(caught.value) == (
        f"{config_path(tmp_path)}: invalid YAML at line 4, column 1: found the key 'plugins'"
        " twice in one mapping (first at line 1); YAML would keep only the last one:"
        " merge them into one"
    )


def test_a_nested_key_twice_is_refused_and_the_file_never_rewritten(tmp_path: Path) -> None:
    text = "plugins:\n  enabled: [a]\n  enabled: [b]\n"
    path = write(tmp_path, text)
    with pytest.raises(ConfigError, match=r"line 3, column 3: found the key 'enabled' twice"):
        set_plugin_enabled(tmp_path, "c", True)
    assert path.read_text(encoding="utf-8") == text


def test_the_same_key_in_two_mappings_is_fine(tmp_path: Path) -> None:
    write(tmp_path, "a:\n  name: x\nb:\n  name: x\nc: [{name: 1}, {name: 2}]\n")
    assert load_config(tmp_path)["b"] == {"name": "x"}


# --- the CLI and portability ---------------------------------------------------------------------


def test_plugins_list_exits_1_on_an_invalid_config_and_0_on_a_valid_one(tmp_path: Path) -> None:
    write(tmp_path, "plugins: [\n")
    result = hermes(tmp_path, "plugins", "list")
    assert result.returncode == 1
    assert "config.yaml: invalid YAML at line 2" in result.stderr
    write(tmp_path, "plugins: {}\n")
    assert hermes(tmp_path, "plugins", "list").returncode == 0


def test_updates_work_where_fcntl_cannot_be_imported(tmp_path: Path) -> None:
    """The lock is filelock's: without fcntl (as on Windows) the package imports and writes."""
    script = textwrap.dedent(
        f"""
        import sys, warnings
        sys.modules["fcntl"] = None  # import fcntl now raises ImportError
        warnings.simplefilter("ignore")
        from pathlib import Path
        from hermes_hooks.plugins.config import set_plugin_enabled, load_config
        home = Path({str(tmp_path)!r})
        set_plugin_enabled(home, "audit", True)
        print(load_config(home))
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "{'plugins': {'enabled': ['audit']}}"


def test_update_config_returns_what_it_wrote(tmp_path: Path) -> None:
    write(tmp_path, "plugins:\n  enabled: [a]\n")
    written = update_config(tmp_path, lambda config: config["plugins"]["enabled"].append("b"))
    assert written == {"plugins": {"enabled": ["a", "b"]}} == load_config(tmp_path)


# --- issue 26: large configs stay linear, symlinked configs share one lock ------------------------


def test_a_500_kb_config_write_round_trips_only_the_changed_section(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cost of a write follows what changed, not the file: ruamel.yaml (pure Python, and
    the part that made a 439 KB write take minutes) composes the ``plugins`` section alone,
    and every other byte of the file is kept as it was."""
    from ruamel.yaml.composer import Composer

    lines = ["# kept by hand", "providers:"]
    for i in range(4500):
        lines += [
            f"  provider{i}:  # number {i}",
            f"    base_url: 'https://example.invalid/{i}'",
            f"    models: [m{i}a, m{i}b, m{i}c]",
        ]
    lines += ["plugins:", "  enabled:", "  - no-rm  # safety", "tail: {a: 1}"]
    text = "\n".join(lines) + "\n"
    assert len(text) > 500_000
    path = write(tmp_path, text)
    composed: list[object] = []
    original = Composer.compose_node

    def counting(self: Composer, parent: Any, index: Any) -> Any:
        composed.append(index)
        return original(self, parent, index)

    monkeypatch.setattr(Composer, "compose_node", counting)
    set_plugin_enabled(tmp_path, "audit", True)
    assert path.read_text(encoding="utf-8") == text.replace(
        "  - no-rm  # safety\n", "  - no-rm  # safety\n  - audit\n"
    )
    assert 0 < len(composed) < 20  # the plugins section's nodes, not the file's ~50,000
    assert load_config(tmp_path)["plugins"]["enabled"] == ["no-rm", "audit"]


def test_removing_and_adding_sections_keeps_the_others_byte_for_byte(tmp_path: Path) -> None:
    text = "a: 1  # one\n\n# about b\nb:\n  c: [1, 2]\nd: 'x'\n"
    path = write(tmp_path, text)

    def change(config: dict[str, Any]) -> None:
        del config["b"]
        config["e"] = {"f": ["g"]}

    update_config(tmp_path, change)
    assert path.read_text(encoding="utf-8") == "a: 1  # one\n\n# about b\nd: 'x'\ne:\n  f:\n  - g\n"


def test_two_homes_sharing_one_symlinked_config_never_lose_an_update(tmp_path: Path) -> None:
    """Each home locks the file its config really is: a write from the second home waits for
    the first one's whole read-modify-write instead of being overwritten by it."""
    shared = write(tmp_path / "shared", "plugins:\n  enabled: []\n")
    first, second = tmp_path / "first", tmp_path / "second"
    for home in (first, second):
        home.mkdir()
        config_path(home).symlink_to(shared)

    def add(name: str) -> Callable[[dict[str, Any]], None]:
        return lambda config: config["plugins"]["enabled"].append(name)

    def add_with_a_second_writer(config: dict[str, Any]) -> None:
        other = threading.Thread(target=update_config, args=(second, add("from-second")))
        other.start()
        other.join(timeout=0.5)  # with one lock it waits for this write to finish
        waiting.append(other)
        config["plugins"]["enabled"].append("from-first")

    waiting: list[threading.Thread] = []
    update_config(first, add_with_a_second_writer)
    waiting[0].join(timeout=30)
    enabled = load_config(shared.parent)["plugins"]["enabled"]
    assert sorted(enabled) == ["from-first", "from-second"]
    assert shared.is_file()
    assert not shared.is_symlink()
    assert config_path(first).is_symlink()
    assert config_path(second).is_symlink()


@pytest.mark.parametrize("text", ["{}\n", "--- {}\n", "# only a comment\n", "", "---\n"])
def test_a_config_without_block_sections_is_written_whole(tmp_path: Path, text: str) -> None:
    write(tmp_path, text)
    set_plugin_enabled(tmp_path, "audit", True)
    assert load_config(tmp_path) == {"plugins": {"enabled": ["audit"]}}
