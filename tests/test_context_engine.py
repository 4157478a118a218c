"""Context engines end to end: a long scripted conversation kept under the budget by the bundled
``compressor``, the summary message where the docs say, ``on_pre_compress`` first, and a
plugin engine shaped like Hermes's chosen by ``context.engine``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from host_helpers import ScriptedModel, plugin_module, text
from plugin_builders import (
    forget_plugin_modules,  # noqa: F401  (the fixture)
    isolated_home,
    user_plugin,
    write_config,
)

from hermes_hooks.backends.context_engine import (
    SUMMARY_END_MARKER,
    SUMMARY_PREFIX,
    ContextCompressor,
    estimate_messages_tokens_rough,
    is_compaction_summary_message,
)
from hermes_hooks.backends.context_engine.compressor import summary_text
from hermes_hooks.backends.context_engine.summary import NOTES_HEADING, is_summary_request
from hermes_hooks.backends.models import ModelResponse
from hermes_hooks.host import Session, create_manager
from hermes_hooks.plugins.manager import PluginManager

pytestmark = pytest.mark.usefixtures("forget_plugin_modules")

pytest_plugins = ["pytester"]

NOTES = """\
    from agent.memory_provider import MemoryProvider

    CALLS = []


    class Notes(MemoryProvider):
        @property
        def name(self):
            return "notes"

        def is_available(self):
            return True

        def initialize(self, session_id, **kwargs):
            pass

        def get_tool_schemas(self):
            return []

        def on_pre_compress(self, messages):
            CALLS.append(("on_pre_compress", len(messages)))
            return "The user prefers tabs over spaces."


    def register(ctx):
        ctx.register_memory_provider(Notes())
    """

BUDGET = 2_000
"""model.context_length of these tests, in tokens."""
PROTECT_FIRST_N = 2
PROTECT_LAST_N = 4


@pytest.fixture
def notes_home(clean_home: Path) -> Path:
    user_plugin(clean_home, "memory/notes", NOTES)
    write_config(
        clean_home,
        memory={"provider": "notes", "builtin": False},
        model={"context_length": BUDGET},
        compression={
            "threshold": 0.5,
            "target_ratio": 0.2,
            "protect_first_n": PROTECT_FIRST_N,
            "protect_last_n": PROTECT_LAST_N,
        },
    )
    return clean_home


def last_user(messages: list[dict[str, Any]]) -> str:
    return next(str(m["content"]) for m in reversed(messages) if m["role"] == "user")


def scripted(pm: PluginManager, turns: int) -> ScriptedModel:
    """A model that answers each turn at length and writes summaries when asked, logging both
    in the notes plugin's ``CALLS``, so that their order with ``on_pre_compress`` shows."""
    calls = plugin_module(pm, "memory/notes").CALLS

    def answer(messages: list[dict[str, Any]]) -> ModelResponse:
        request = last_user(messages)
        if is_summary_request(request):
            calls.append(("summary", request))
            return text("Summary: the user asked about topics and got long answers.")
        calls.append(("request", estimate_messages_tokens_rough(messages)))
        return text("An answer that goes on for a while. " * 10)

    return ScriptedModel(*[answer] * (turns * 3))


def test_a_long_conversation_stays_under_the_budget_with_the_summary_after_the_head(
    notes_home: Path,
) -> None:
    pm = create_manager(notes_home)
    model = scripted(pm, 30)
    session = Session(pm, model)
    first = [f"Turn {n}: tell me about topic {n}. " + "Some detail. " * 25 for n in range(30)]
    for message in first:
        assert session.run_turn(message).completed
    calls = plugin_module(pm, "memory/notes").CALLS
    session.close()

    requests = [tokens for kind, tokens in calls if kind == "request"]
    assert len(requests) == 30
    assert max(requests) < BUDGET  # every request the model got fit the window
    summaries = [i for i, (kind, _) in enumerate(calls) if kind == "summary"]
    assert len(summaries) >= 3
    for index in summaries:  # the memory providers were asked first, every time
        assert calls[index - 1][0] == "on_pre_compress"
        assert NOTES_HEADING + "\nThe user prefers tabs over spaces." in calls[index][1]

    # The system prompt and the protected head are untouched; the summary comes right after.
    messages = session.messages
    assert [m["content"] for m in messages[:PROTECT_FIRST_N]] == [
        first[0],
        "An answer that goes on for a while. " * 10,
    ]
    summary = str(messages[PROTECT_FIRST_N]["content"])
    assert summary.startswith(SUMMARY_PREFIX)
    assert "Summary: the user asked about topics" in summary
    assert SUMMARY_END_MARKER in summary
    assert sum(SUMMARY_PREFIX in str(m["content"]) for m in messages) == 1
    # The last turns are kept verbatim.
    assert messages[-2]["content"] == first[-1]
    assert len(messages) - PROTECT_FIRST_N - 1 >= PROTECT_LAST_N
    sent = model.requests[-1]["messages"]
    assert sent[0]["role"] == "system"
    assert sent[0]["content"] == session.full_system_prompt()


def test_the_offline_model_writes_an_extractive_summary(notes_home: Path) -> None:
    pm = create_manager(notes_home)  # no model given: the offline model of config.yaml's default
    session = Session(pm)
    for n in range(20):
        session.run_turn(f"Question {n} about the build. " + "More words here. " * 30)
    session.close()
    summaries = [m for m in session.messages if SUMMARY_PREFIX in str(m["content"])]
    assert len(summaries) == 1
    body = str(summaries[0]["content"])
    assert "Notes from memory:\n  The user prefers tabs over spaces." in body
    assert "\nEarlier turns:\n- " in body
    assert "- user: Question 17 about the build." in body  # the first sentence of a turn
    assert estimate_messages_tokens_rough(session.messages) < BUDGET


def test_reported_usage_decides_before_the_estimate(notes_home: Path) -> None:
    write_config(
        notes_home,
        memory={"builtin": False},
        model={"context_length": BUDGET},
        compression={"protect_first_n": 1, "protect_last_n": 1},
    )
    pm = create_manager(notes_home)
    big = ModelResponse(text="short", usage={"prompt_tokens": 1_900, "completion_tokens": 5})
    model = ScriptedModel(text("one"), text("two"), big, text("four"))
    session = Session(pm, model, record_events=True)
    for message in ("first", "second", "third", "fourth"):
        session.run_turn(message)
    session.close()
    (compressed,) = [e for e in session.events if e["type"] == "context_compressed"]
    assert compressed["tokens_before"] >= 1_900  # the tiny messages alone estimate far less
    assert compressed["engine"] == "compressor"
    assert compressed["memory_notes"] is False


def test_compression_enabled_false_never_compacts(notes_home: Path) -> None:
    write_config(
        notes_home, model={"context_length": BUDGET}, compression={"enabled": False}, memory={}
    )
    pm = create_manager(notes_home)
    session = Session(pm, ScriptedModel(*[text("An answer. " * 40)] * 12), record_events=True)
    for n in range(12):
        session.run_turn(f"Message {n} " + "words " * 80)
    session.close()
    assert not [e for e in session.events if e["type"] == "context_compressed"]
    assert len(session.messages) == 24


LEAN = """\
    from agent.context_engine import ContextEngine

    CALLS = []


    class Lean(ContextEngine):
        @property
        def name(self):
            return "lean"

        def update_from_response(self, usage):
            CALLS.append(("update_from_response", sorted(usage)))

        def should_compress(self, prompt_tokens=None):
            return self.messages_seen > 4

        messages_seen = 0

        def on_session_start(self, session_id, **kwargs):
            CALLS.append(("on_session_start", sorted(kwargs)))

        def compress(self, messages, current_tokens=None, focus_topic=None, force=False,
                     memory_context=""):
            CALLS.append(("compress", len(messages), memory_context))
            return [messages[0], *messages[-1:]]

        def on_session_end(self, session_id, messages):
            CALLS.append(("on_session_end", len(messages)))


    class Counting(Lean):
        def update_from_response(self, usage):
            super().update_from_response(usage)
            self.messages_seen += 2


    def register(ctx):
        ctx.register_context_engine(Counting())
    """


def test_a_plugin_engine_in_context_engine_is_chosen_by_context_engine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = isolated_home(tmp_path, monkeypatch)
    user_plugin(path, "context_engine/lean", LEAN)
    write_config(path, context={"engine": "lean"}, memory={"builtin": False})
    pm = create_manager(path)
    info = pm.get_plugin_info("context_engine/lean")
    assert info is not None
    assert (info.kind, info.status) == ("context-engine", "enabled")
    session = Session(pm, ScriptedModel(*[text("ok")] * 5))
    for n in range(5):
        session.run_turn(f"message {n}")
    session.close()
    calls = plugin_module(pm, "context_engine/lean").CALLS
    assert calls[0] == ("on_session_start", ["hermes_home", "model", "platform"])
    assert calls[1] == (
        "update_from_response",
        ["completion_tokens", "prompt_tokens", "total_tokens"],
    )
    compressions = [c for c in calls if c[0] == "compress"]
    assert compressions
    assert compressions[0][1:] == (8, "")  # the system prompt, three turns and this message
    assert calls[-1][0] == "on_session_end"
    assert session.messages[-2:][0]["content"] == "message 4"


def test_a_second_compaction_carries_the_first_summary_forward() -> None:
    engine = ContextCompressor(threshold_percent=0.5, protect_first_n=1, protect_last_n=2)
    engine.update_model("any", 2_000)

    def turns(start: int, stop: int) -> list[dict[str, Any]]:
        return [
            {"role": role, "content": f"{role} {n} says this. " + "filler " * 60}
            for n in range(start, stop)
            for role in ("user", "assistant")
        ]

    once = engine.compress([{"role": "system", "content": "sys"}, *turns(0, 4)])
    twice = engine.compress([*once, *turns(4, 8)])
    (summary,) = [m for m in twice if is_compaction_summary_message(m)]
    assert twice.index(summary) == 2  # after the system prompt and the one protected message
    body = summary_text(summary)
    assert "- user: user 1 says this." in body  # from the first compaction
    assert "- user: user 5 says this." in body  # from the second
    assert body.count("Earlier turns:") == 1
    assert engine.compression_count == 2


# -- the how-to's engine, from docs/how-to/context-engine.md ------------------------------------

HOW_TO = Path(__file__).resolve().parents[1] / "docs" / "how-to" / "context-engine.md"
_BLOCK = re.compile(r"^```(\w+)\n# file: (\S+)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def test_the_how_to_test_passes(pytester: pytest.Pytester) -> None:
    """The how-to's engine and its test file, in a pytest run of their own."""
    files = {p: b for _, p, b in _BLOCK.findall(HOW_TO.read_text(encoding="utf-8"))}
    plugin = pytester.path / "trim"
    plugin.mkdir()
    for path, body in files.items():
        if path.startswith("trim/"):
            (plugin / path.removeprefix("trim/")).write_text(body, encoding="utf-8")
    assert set(files) == {"trim/plugin.yaml", "trim/__init__.py", "test_trim.py"}
    pytester.makepyfile(test_trim=files["test_trim.py"])
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider", timeout=120)
    result.assert_outcomes(passed=1)
