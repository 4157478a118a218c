"""``$HERMES_HOME/.env``: read, set atomically, and applied without overriding the environment."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from hermes_hooks.admin.envfile import apply_env_file, read_env_file, set_env_value


def test_read_skips_comments_and_unquotes(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text(
        "# a comment\n"
        "export PLAIN=value  # trailing\n"
        'DOUBLE="a \\"quoted\\" value"\n'
        "SINGLE='kept $AS is'\n"
        "not a line\n"
        "EMPTY=\n"
    )
    assert read_env_file(tmp_path) == {
        "PLAIN": "value",
        "DOUBLE": 'a "quoted" value',
        "SINGLE": "kept $AS is",
        "EMPTY": "",
    }
    assert read_env_file(tmp_path / "missing") == {}


def test_set_replaces_one_line_keeps_the_others_and_is_private(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("# keep me\nA=1\nB=2\n")
    set_env_value(tmp_path, "A", 'new value with $ and "quotes"')
    set_env_value(tmp_path, "C", "plain")
    text = (tmp_path / ".env").read_text()
    # python-dotenv's double quotes: the quote and backslash escaped, a dollar sign kept as is
    assert text == '# keep me\nA="new value with $ and \\"quotes\\""\nB=2\nC=plain\n'
    assert read_env_file(tmp_path)["A"] == 'new value with $ and "quotes"'
    assert stat.S_IMODE((tmp_path / ".env").stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == [".env"]
    with pytest.raises(ValueError, match="invalid environment variable name"):
        set_env_value(tmp_path, "1BAD", "x")


def test_apply_sets_only_what_the_environment_lacks(tmp_path: Path) -> None:
    set_env_value(tmp_path, "SET_ALREADY", "from file")
    set_env_value(tmp_path, "NEW_ONE", "from file")
    environ = {"SET_ALREADY": "from shell"}
    assert apply_env_file(tmp_path, environ) == ["NEW_ONE"]
    assert environ == {"SET_ALREADY": "from shell", "NEW_ONE": "from file"}


def test_remove_drops_every_definition_and_keeps_comments(tmp_path: Path) -> None:
    from hermes_hooks.plugins.envfile import remove_env_value

    (tmp_path / ".env").write_text("# GONE=kept, a comment\nGONE=1\nB=2\nexport GONE=3\n")
    assert remove_env_value(tmp_path, "GONE") is True
    assert (tmp_path / ".env").read_text() == "# GONE=kept, a comment\nB=2\n"
    assert stat.S_IMODE((tmp_path / ".env").stat().st_mode) == 0o600
    assert remove_env_value(tmp_path, "GONE") is False
    assert remove_env_value(tmp_path / "missing", "GONE") is False
    assert not (tmp_path / "missing").exists()
    with pytest.raises(ValueError, match="invalid environment variable name"):
        remove_env_value(tmp_path, "NO-DASH")


# Every character str.splitlines() breaks a line at, and other C0 controls: python-dotenv's
# double quotes escape the first five, the others are refused.
ESCAPED = ["\n", "\r", "\r\n", "\x0b", "\x0c"]
REFUSED = ["\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029", "\x00", "\x1b"]


def smuggling(breaker: str) -> str:
    return f"tok{breaker}HERMES_ENABLE_PROJECT_PLUGINS=1{breaker}PATH=/evil"


@pytest.mark.parametrize("breaker", ESCAPED)
def test_a_line_break_in_a_value_is_escaped_and_reads_back_whole(
    tmp_path: Path, breaker: str
) -> None:
    """Writer and reader share python-dotenv's grammar (issue 26, item 9)."""
    set_env_value(tmp_path, "MY_TOKEN", smuggling(breaker))
    assert read_env_file(tmp_path) == {"MY_TOKEN": smuggling(breaker)}
    assert (tmp_path / ".env").read_text(encoding="utf-8").splitlines()[0].startswith("MY_TOKEN=")
    assert len((tmp_path / ".env").read_text(encoding="utf-8").splitlines()) == 1


@pytest.mark.parametrize("breaker", REFUSED)
def test_a_value_holding_an_unescapable_line_break_is_refused(tmp_path: Path, breaker: str) -> None:
    (tmp_path / ".env").write_text("KEPT=1\n", encoding="utf-8")
    with pytest.raises(ValueError, match=f"MY_TOKEN.*U\\+{ord(breaker):04X}"):
        set_env_value(tmp_path, "MY_TOKEN", smuggling(breaker))
    assert (tmp_path / ".env").read_text(encoding="utf-8") == "KEPT=1\n"


def test_values_read_back_exactly_as_written(tmp_path: Path) -> None:
    for value in ["plain", "with space", "quote ' and \" both", "$HOME ${X} `cmd`", "a#b c #d",
                  "back\\slash", "", "  padded  ", "tab\there", "multi\nline"]:  # fmt: skip
        set_env_value(tmp_path, "VALUE", value)
        assert read_env_file(tmp_path) == {"VALUE": value}, value


def test_the_plugin_facing_writer_refuses_a_smuggled_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hermes_hooks.compat import hermes_cli_config

    monkeypatch.setenv("HERMES_HOME", str(tmp_path))
    monkeypatch.delenv("HERMES_ENABLE_PROJECT_PLUGINS", raising=False)
    monkeypatch.delenv("MY_TOKEN", raising=False)
    with pytest.raises(ValueError, match="MY_TOKEN"):
        hermes_cli_config.save_env_value("MY_TOKEN", "t\u2028HERMES_ENABLE_PROJECT_PLUGINS=1")
    assert "HERMES_ENABLE_PROJECT_PLUGINS" not in read_env_file(tmp_path)
