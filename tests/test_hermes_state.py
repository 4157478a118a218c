"""``hermes_state``: the session store in the home's ``state.db``, written by the host's sessions
and read by plugins through Hermes' ``SessionDB``."""

from __future__ import annotations

import logging
import sqlite3
import stat
from pathlib import Path
from typing import Any

import pytest
from cli_support import hermes
from host_helpers import ChatServer
from plugin_builders import isolated_home

from hermes_hooks.backends.models.openai_compat import OpenAICompatibleModel
from hermes_hooks.backends.sessions import SessionStore, apply_wal_with_fallback
from hermes_hooks.host import transcript
from hermes_hooks.host.runtime import create_manager
from hermes_hooks.host.session import Session


def test_a_hermes_z_turn_is_kept_in_state_db_and_read_through_session_db(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = isolated_home(tmp_path, monkeypatch)
    ran = hermes(home, "-z", "run `echo kept in the store`", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert stat.S_IMODE((home / "state.db").stat().st_mode) == 0o600
    pm = create_manager(home)
    with pm.activate():
        from hermes_state import SessionDB

        with SessionDB() as db:
            assert db.db_path == home / "state.db"
            [listed] = db.list_sessions_rich(limit=-1, include_children=True)
            assert listed["source"] == "cli"
            assert listed["model"] == "offline-rules-1"
            assert listed["preview"] == "run `echo kept in the store`"
            assert (listed["message_count"], listed["tool_call_count"]) == (4, 1)
            assert listed["ended_at"] is not None
            assert listed["last_active"] >= listed["started_at"]
            messages = db.get_messages(listed["id"])
            assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
            call = messages[1]["tool_calls"][0]
            assert call["function"]["name"] == "terminal"
            assert messages[2]["tool_name"] == "terminal"
            assert messages[2]["tool_call_id"] == call["id"]
            assert "kept in the store" in messages[3]["content"]
            [hit] = db.search_messages("store", role_filter=["tool"])
            assert (hit["session_id"], hit["source"]) == (listed["id"], "cli")
            assert [c["role"] for c in hit["context"]] == ["assistant", "assistant"]


def test_session_db_keeps_hermes_semantics(tmp_path: Path) -> None:
    db = SessionStore(tmp_path / "state.db")
    db.create_session("s1", "cli", model="m-1", model_config={"temperature": 0})
    db.create_session("s1", "telegram")  # exists: left as it is
    db.create_session("child", "subagent", parent_session_id="s1")
    db.append_message("s1", "user", [{"type": "text", "text": "look"}, {"type": "image_url"}])
    db.append_message(
        "s1",
        "assistant",
        "",
        tool_calls=[{"id": "c1", "function": {"name": "read_file", "arguments": "{}"}}],
    )
    db.append_message("s1", "tool", "contents", tool_name="read_file", tool_call_id="c1")
    session = db.get_session("s1")
    assert session is not None
    assert (session["source"], session["message_count"], session["tool_call_count"]) == (
        "cli",
        3,
        1,
    )
    assert db.get_messages("s1")[0]["content"][0] == {"type": "text", "text": "look"}
    assert db.get_messages_as_conversation("s1")[2] == {
        "role": "tool",
        "content": "contents",
        "tool_call_id": "c1",
        "name": "read_file",
    }
    ids = db.append_messages("child", [{"role": "user", "content": "a"}, {"role": "assistant"}])
    assert len(ids) == 2
    assert ids[0] < ids[1]
    assert db.get_session("child")["message_count"] == 2  # type: ignore[index]
    assert [s["id"] for s in db.list_sessions_rich()] == ["s1"]  # children left out
    assert {s["id"] for s in db.list_sessions_rich(include_children=True)} == {"s1", "child"}
    assert db.session_count() == 2
    assert db.session_count(exclude_children=True) == 1
    assert db.message_count("s1") == 3
    assert db.message_count() == 5
    db.end_session("s1", "compression")
    db.end_session("s1", "user_exit")  # the first reason stays
    assert db.get_session("s1")["end_reason"] == "compression"  # type: ignore[index]
    assert db.set_session_title("s1", "  Fix   the build ")
    assert db.get_session_title("s1") == "Fix the build"
    with pytest.raises(ValueError, match="already in use"):
        db.set_session_title("child", "Fix the build")
    exported = db.export_session("s1")
    assert exported is not None
    assert len(exported["messages"]) == 3
    assert db.delete_session("s1")
    assert db.get_session("s1") is None
    assert db.get_session("child") is not None
    db.close()
    reader = SessionStore(tmp_path / "state.db", read_only=True)
    with pytest.raises(sqlite3.OperationalError, match="read-only"):
        reader.create_session("s2", "cli")
    reader.close()


def test_a_file_hermes_wrote_opens_and_gains_the_missing_columns(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    old = sqlite3.connect(path)
    old.executescript(
        """
        CREATE TABLE schema_version (version INTEGER NOT NULL);
        INSERT INTO schema_version VALUES (6);
        CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT NOT NULL, model TEXT,
            started_at REAL NOT NULL, message_count INTEGER DEFAULT 0,
            tool_call_count INTEGER DEFAULT 0, title TEXT, handoff_state TEXT);
        CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL,
            role TEXT NOT NULL, content TEXT, tool_calls TEXT, tool_name TEXT,
            timestamp REAL NOT NULL);
        INSERT INTO sessions VALUES ('old', 'telegram', 'gpt-x', 1700000000, 1, 0, NULL, NULL);
        INSERT INTO messages (session_id, role, content, timestamp)
            VALUES ('old', 'user', 'from an older Hermes', 1700000001);
        """
    )
    old.commit()
    old.close()
    db = SessionStore(path)
    [session] = db.list_sessions_rich(source="telegram")
    assert (session["id"], session["preview"], session["archived"]) == (
        "old",
        "from an older Hermes",
        0,
    )
    db.append_message("old", "assistant", "answered here")
    assert [m["content"] for m in db.get_messages("old")] == [
        "from an older Hermes",
        "answered here",
    ]
    db.close()


def test_subagents_are_children_and_new_starts_another_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = isolated_home(tmp_path, monkeypatch)
    pm = create_manager(home)
    with Session(pm, cwd=tmp_path) as session:
        result = session.run_turn("delegate: say hello")
        assert result.completed, result.error
        first = session.session_id
        session.reset()
        session.run_turn("hello again")
        second = session.session_id
    with SessionStore(home / "state.db") as db:
        rows = {row["id"]: row for row in db.list_sessions_rich(include_children=True)}
        assert rows[first]["end_reason"] == "/new"
        assert rows[second]["end_reason"] == "exit"
        [child] = [row for row in rows.values() if row["parent_session_id"] == first]
        assert child["source"] == "subagent"
        assert [r["id"] for r in db.list_sessions_rich()] == [second, first]


def test_a_store_that_cannot_be_written_never_fails_a_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    home = isolated_home(tmp_path, monkeypatch)
    (home / "state.db").mkdir()  # not a database
    pm = create_manager(home)
    with caplog.at_level(logging.WARNING), Session(pm, cwd=tmp_path) as session:
        assert session.run_turn("hello").completed
        assert session.run_turn("hello twice").completed
    warned = [r for r in caplog.records if "transcript is not kept" in r.getMessage()]
    assert len(warned) == 1  # once per session, not per turn
    assert str(home / "state.db") in warned[0].getMessage()


def test_apply_wal_with_fallback_sets_wal(tmp_path: Path) -> None:
    connection = sqlite3.connect(tmp_path / "memory_store.db")
    assert apply_wal_with_fallback(connection, db_label="memory_store.db") == "wal"
    assert apply_wal_with_fallback(connection) == "wal"  # already set: left as it is
    connection.close()


def test_a_session_keeps_writing_when_other_homes_closed_its_shared_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = isolated_home(tmp_path, monkeypatch)
    pm = create_manager(home)
    with Session(pm, cwd=tmp_path) as session:
        session.run_turn("first")
        for n in range(transcript.OPEN_STORES + 1):  # each opens a store; home's is closed
            other = tmp_path / f"other-{n}"
            with Session(create_manager(other), cwd=tmp_path) as elsewhere:
                elsewhere.run_turn("elsewhere")
            assert (other / "state.db").is_file()
        session.run_turn("second")
        session_id = session.session_id
    with SessionStore(home / "state.db") as db:
        contents = [m["content"] for m in db.get_messages(session_id) if m["role"] == "user"]
        assert contents == ["first", "second"]
        assert db.get_session(session_id)["end_reason"] == "exit"  # type: ignore[index]
    transcript.close_stores()
    closed = SessionStore(tmp_path / "closed.db")
    closed.close()
    with pytest.raises(sqlite3.ProgrammingError):
        closed.get_session("x")


def test_a_turn_s_model_calls_and_tokens_are_added_to_its_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = isolated_home(tmp_path, monkeypatch)
    pm = create_manager(home)
    with ChatServer() as server:
        server.reply_tool_call("read_file", {"path": "nothing.txt"})
        server.reply_text("done")  # each completion reports 10 prompt and 5 completion tokens
        with Session(pm, OpenAICompatibleModel(server.base_url, "m"), cwd=tmp_path) as session:
            assert session.run_turn("read it").completed
    with SessionStore(home / "state.db") as db:
        row = db.get_session(session.session_id)
        assert row is not None
        assert (row["api_call_count"], row["input_tokens"], row["output_tokens"]) == (2, 20, 10)
        assert row["model"] == "m"
        assert row["tool_call_count"] == 1


def test_a_compressed_conversation_repeats_and_skips_no_message(tmp_path: Path) -> None:
    kept = transcript.Transcript(tmp_path)

    def write(messages: list[dict[str, Any]]) -> None:
        kept.write(
            "s",
            messages,
            source="cli",
            model="m",
            system_prompt="",
            parent_session_id=None,
            user_id="",
            cwd="",
        )

    first, second = {"role": "user", "content": "one"}, {"role": "assistant", "content": "two"}
    messages = [first, second]
    write(messages)
    summary, third = {"role": "user", "content": "summary of one"}, {"role": "user", "content": "3"}
    messages[:] = [summary, second, third]  # what a context engine's compression does
    write(messages)
    kept.end("s", "exit")
    with SessionStore(tmp_path / "state.db") as db:
        assert [m["content"] for m in db.get_messages("s")] == ["one", "two", "summary of one", "3"]


def test_session_db_opens_the_current_home_or_a_re_pointed_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = isolated_home(tmp_path, monkeypatch)
    pm = create_manager(home)
    with pm.activate():
        import hermes_state

        with hermes_state.SessionDB() as db:
            assert db.db_path == home / "state.db"
        other = tmp_path / "other.db"
        monkeypatch.setattr(hermes_state, "DEFAULT_DB_PATH", other)  # as Hermes' tests do
        with hermes_state.SessionDB() as db, hermes_state.SessionDB(other, True) as reader:
            assert db.db_path == other
            assert reader.read_only


def test_a_message_that_cannot_be_stored_stops_the_transcript_not_the_turn(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    kept = transcript.Transcript(tmp_path)
    odd = {"role": "assistant", "content": "", "tool_calls": [{"id": "c", "arguments": object()}]}
    with caplog.at_level(logging.WARNING):
        kept.write(
            "s",
            [odd],
            source="cli",
            model="m",
            system_prompt="",
            parent_session_id=None,
            user_id="",
            cwd="",
        )
    assert "transcript is not kept" in caplog.text
