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
    assert text == '# keep me\nA="new value with \\$ and \\"quotes\\""\nB=2\nC=plain\n'
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
