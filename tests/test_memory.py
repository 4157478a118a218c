"""Memory providers end to end: plugins shaped like Hermes's own memory plugins, called by
``hermes -z`` (a real subprocess) where Hermes calls them, and the builtin provider keeping
facts across runs in a real SQLite file.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from cli_support import hermes
from host_helpers import ScriptedModel, plugin_module, text, tool_call
from plugin_builders import (
    forget_plugin_modules,  # noqa: F401  (the fixture)
    isolated_home,
    user_plugin,
    write_config,
)

from hermes_hooks.backends.memory import get_memory
from hermes_hooks.host import Session, create_manager

pytestmark = pytest.mark.usefixtures("forget_plugin_modules")

pytest_plugins = ["pytester"]

# A plugin of the shape of Hermes' plugins/memory/<name>/: the Hermes import, a register(ctx)
# calling ctx.register_memory_provider, selected by memory.provider, never in plugins.enabled.
JOURNAL = """\
    import json
    import os

    from agent.memory_provider import MemoryProvider

    CALLS = []


    def note(method, *args, **kwargs):
        CALLS.append((method, args, kwargs))
        log = os.environ.get("JOURNAL_LOG")
        if log:
            with open(log, "a", encoding="utf-8") as out:
                out.write(json.dumps([method, list(args), kwargs], default=str) + "\\n")


    class Journal(MemoryProvider):
        @property
        def name(self):
            return "journal"

        def is_available(self):
            return os.environ.get("JOURNAL_OFF") != "1"

        def unavailable_reason(self):
            return "unset JOURNAL_OFF"

        def initialize(self, session_id, **kwargs):
            note("initialize", session_id, **kwargs)

        def system_prompt_block(self):
            return "# Journal\\nThe journal keeps what the user says."

        def on_turn_start(self, turn_number, message, **kwargs):
            note("on_turn_start", turn_number, message, **kwargs)

        def prefetch(self, query, *, session_id=""):
            note("prefetch", query, session_id=session_id)
            mode = os.environ.get("JOURNAL_PREFETCH", "")
            if mode == "raise":
                raise RuntimeError("journal is down")
            if mode == "hang":
                import time
                time.sleep(5)
            return "- the user drinks green tea"

        def queue_prefetch(self, query, *, session_id=""):
            note("queue_prefetch", query, session_id=session_id)

        def sync_turn(self, user_content, assistant_content, *, session_id="", messages=None):
            note("sync_turn", user_content, assistant_content, session_id=session_id,
                 messages=messages)

        def get_tool_schemas(self):
            return [{"name": "journal_search", "description": "Search the journal.",
                     "parameters": {"type": "object", "properties": {
                         "query": {"type": "string"}}}}]

        def handle_tool_call(self, tool_name, args, **kwargs):
            note("handle_tool_call", tool_name, args)
            return json.dumps({"found": ["green tea"]})

        def on_memory_write(self, action, target, content, metadata=None):
            note("on_memory_write", action, target, content, metadata=metadata)

        def on_delegation(self, task, result, *, child_session_id="", **kwargs):
            note("on_delegation", task, result, child_session_id=child_session_id)

        def on_session_end(self, messages):
            note("on_session_end", messages)

        def on_session_switch(self, new_session_id, *, parent_session_id="", reset=False,
                              **kwargs):
            note("on_session_switch", new_session_id, parent_session_id=parent_session_id,
                 reset=reset)

        def shutdown(self):
            note("shutdown")


    def register(ctx):
        ctx.register_memory_provider(Journal())
    """


@pytest.fixture
def journal_home(clean_home: Path) -> Path:
    """A home with the journal plugin under memory/, selected by memory.provider only."""
    user_plugin(clean_home, "memory/journal", JOURNAL)
    write_config(clean_home, memory={"provider": "journal"})
    return clean_home


def logged(log: Path) -> list[tuple[str, list[Any], dict[str, Any]]]:
    lines = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
    return [(m, a, k) for m, a, k in map(json.loads, lines)]


def test_hermes_z_calls_a_hermes_shaped_provider_in_order_with_the_documented_arguments(
    journal_home: Path, tmp_path: Path
) -> None:
    log = tmp_path / "journal.log"
    result = hermes(journal_home, "-z", "What should I drink this afternoon?", JOURNAL_LOG=str(log))
    assert result.returncode == 0, result.stderr
    # What prefetch returned reached the model, as recalled context (the offline model quotes it).
    assert "- the user drinks green tea" in result.stdout
    calls = logged(log)
    assert [m for m, _, _ in calls] == [
        "initialize",
        "on_turn_start",
        "prefetch",
        "sync_turn",
        "queue_prefetch",
        "on_session_end",
        "shutdown",
    ]
    (_, (session_id,), init), (_, turn_args, turn_kwargs), (_, prefetch, prefetch_kw) = calls[:3]
    assert init["hermes_home"] == str(journal_home)
    assert init["platform"] == "cli"
    assert turn_args == [1, "What should I drink this afternoon?"]
    assert turn_kwargs["platform"] == "cli"
    assert (prefetch, prefetch_kw) == (
        ["What should I drink this afternoon?"],
        {"session_id": session_id},
    )
    _, (user, assistant), sync = calls[3]
    assert user == "What should I drink this afternoon?"
    assert assistant == result.stdout.strip()
    assert sync["session_id"] == session_id
    assert [m["role"] for m in sync["messages"]] == ["user", "assistant"]
    _, (messages,), _ = calls[5]
    assert [m["content"] for m in messages] == [user, assistant]


def test_a_trivial_prompt_starts_a_turn_but_recalls_nothing(
    journal_home: Path, tmp_path: Path
) -> None:
    log = tmp_path / "journal.log"
    result = hermes(journal_home, "-z", "thanks!", JOURNAL_LOG=str(log))
    assert result.returncode == 0, result.stderr
    assert "green tea" not in result.stdout
    assert [m for m, _, _ in logged(log)][:3] == ["initialize", "on_turn_start", "sync_turn"]


def test_the_parent_provider_observes_a_finished_subagent(
    journal_home: Path, tmp_path: Path
) -> None:
    log = tmp_path / "journal.log"
    result = hermes(journal_home, "-z", "delegate: list the files", JOURNAL_LOG=str(log))
    assert result.returncode == 0, result.stderr
    calls = logged(log)
    delegations = [(a, k) for m, a, k in calls if m == "on_delegation"]
    assert len(delegations) == 1
    (task, summary), kwargs = delegations[0]
    assert task == "list the files"
    assert summary  # the subagent's final answer
    assert kwargs["child_session_id"].startswith("session-")
    # Only the parent has memory, as in Hermes: one initialize, one session end.
    assert [m for m, _, _ in calls].count("initialize") == 1
    assert [m for m, _, _ in calls].count("on_session_end") == 1


def test_an_unavailable_provider_never_initializes_and_the_turn_goes_on(
    journal_home: Path, tmp_path: Path
) -> None:
    log = tmp_path / "journal.log"
    result = hermes(journal_home, "-z", "What do I drink?", JOURNAL_LOG=str(log), JOURNAL_OFF="1")
    assert result.returncode == 0, result.stderr
    assert logged(log) == []
    said = "memory provider 'journal' of plugin 'memory/journal' is not available: unset "
    assert said + "JOURNAL_OFF; the builtin provider runs alone" in result.stderr


@pytest.mark.parametrize("mode", ["raise", "hang"])
def test_a_failing_prefetch_is_isolated_and_counted_on_its_plugin(
    journal_home: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    write_config(journal_home, memory={"provider": "journal", "prefetch_timeout": 0.2})
    monkeypatch.setenv("JOURNAL_PREFETCH", mode)
    pm = create_manager(journal_home)
    session = Session(pm, ScriptedModel(text("fine")))
    result = session.run_turn("What do I drink in the afternoon?")
    session.close()
    assert result.completed
    assert result.text == "fine"
    assert result.recalled is None
    info = pm.get_plugin_info("memory/journal")
    assert info is not None
    assert info.hook_errors == 1
    expected = "memory.prefetch_timeout" if mode == "hang" else "RuntimeError: journal is down"
    assert expected in str(info.last_hook_error)


def test_provider_tools_are_offered_and_dispatched_and_builtin_writes_mirrored(
    journal_home: Path,
) -> None:
    model = ScriptedModel(
        tool_call("journal_search", {"query": "tea"}),
        tool_call("memory", {"action": "add", "content": "The user drinks green tea"}, "c2"),
        text("noted"),
    )
    pm = create_manager(journal_home)
    session = Session(pm, model)
    result = session.run_turn("Look up what I drink and keep it")
    session.close()
    assert result.completed
    offered = {t["function"]["name"] for t in model.requests[0]["tools"]}
    assert {"journal_search", "memory"} <= offered
    system = model.requests[0]["messages"][0]["content"]
    assert system.index("# Memory") < system.index("# Journal")  # the builtin's block first
    calls = plugin_module(pm, "memory/journal").CALLS
    assert ("handle_tool_call", ("journal_search", {"query": "tea"}), {}) in calls
    (write,) = [c for c in calls if c[0] == "on_memory_write"]
    assert write[1] == ("add", "memory", "The user drinks green tea")
    assert write[2]["metadata"]["write_origin"] == "memory_tool"
    tool_results = [m for m in model.requests[1]["messages"] if m["role"] == "tool"]
    assert json.loads(tool_results[-1]["content"]) == {"found": ["green tea"]}


def test_new_ends_the_session_for_the_providers_and_switches_them_to_the_new_id(
    journal_home: Path,
) -> None:
    pm = create_manager(journal_home)
    session = Session(pm, ScriptedModel(text("one"), text("two")))
    session.run_turn("What do I drink in the morning?")
    old = session.session_id
    new = session.reset("/new")
    session.run_turn("And in the evening?")
    session.close()
    calls = plugin_module(pm, "memory/journal").CALLS
    methods = [c[0] for c in calls]
    assert methods.count("initialize") == 1  # one provider session across /new, as in Hermes
    first_end = methods.index("on_session_end")
    assert calls[first_end + 1] == (
        "on_session_switch",
        (new,),
        {"parent_session_id": old, "reset": True},
    )
    assert methods[first_end + 2 : first_end + 4] == ["on_turn_start", "prefetch"]
    (_, (messages,), _) = calls[first_end]
    assert [m["content"] for m in messages] == ["What do I drink in the morning?", "one"]
    prefetches = [c for c in calls if c[0] == "prefetch"]
    assert [c[2]["session_id"] for c in prefetches] == [old, new]
    assert methods[-2:] == ["on_session_end", "shutdown"]


def test_memory_provider_naming_the_manifest_name_warns_when_the_provider_is_named_otherwise(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A flat plugin whose __init__.py registers a memory provider is exclusive too (text scan).
    path = isolated_home(tmp_path, monkeypatch)
    user_plugin(path, "diary", JOURNAL, manifest={"name": "diary"})
    write_config(path, memory={"provider": "diary"})
    pm = create_manager(path)
    info = pm.get_plugin_info("diary")
    assert info is not None
    assert (info.kind, info.status) == ("exclusive", "enabled")
    assert any("registered is named 'journal'" in w for w in info.warnings)
    external = get_memory(pm).external()
    assert external is not None
    assert (external.name, external.owner) == ("journal", "diary")


def test_a_memory_plugin_not_named_by_memory_provider_does_not_load(
    journal_home: Path, tmp_path: Path
) -> None:
    write_config(journal_home, memory={})
    log = tmp_path / "journal.log"
    result = hermes(journal_home, "-z", "What do I drink?", JOURNAL_LOG=str(log))
    assert result.returncode == 0, result.stderr
    assert logged(log) == []
    listed = {
        p["key"]: p for p in json.loads(hermes(journal_home, "plugins", "list", "--json").stdout)
    }
    assert (listed["memory/journal"]["kind"], listed["memory/journal"]["status"]) == (
        "exclusive",
        "not enabled",
    )


# -- the builtin provider ---------------------------------------------------------------------


@pytest.fixture
def bare(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home with no plugins: the builtin provider alone."""
    return isolated_home(tmp_path, monkeypatch)


def test_facts_added_in_one_run_are_recalled_in_the_next(bare: Path) -> None:
    first = hermes(bare, "-z", "remember: my editor is Helix")
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() == "Saved to memory as #1: my editor is Helix"
    assert (bare / "memory" / "facts.db").is_file()
    second = hermes(bare, "-z", "Which editor do I use?")
    assert second.returncode == 0, second.stderr
    assert "- [#1] my editor is Helix" in second.stdout
    found = hermes(bare, "-z", "what do you remember about editor")
    assert "From memory:\n- [#1] my editor is Helix" in found.stdout
    unrelated = hermes(bare, "-z", "How is the weather in Lisbon?")
    assert "Helix" not in unrelated.stdout


def test_hermes_memory_status_search_and_forget(bare: Path) -> None:
    empty = hermes(bare, "memory")
    assert empty.returncode == 0, empty.stderr
    assert "builtin: on\n  no facts yet" in empty.stdout
    assert "external: none (memory.provider is not set)" in empty.stdout
    assert not (bare / "memory" / "facts.db").exists()  # looking creates nothing
    for fact in ("my editor is Helix", "the project deploys with kamal"):
        assert hermes(bare, "-z", f"remember: {fact}").returncode == 0
    status = json.loads(hermes(bare, "memory", "status", "--json").stdout)
    assert (status["builtin"]["facts"], status["builtin"]["check"]) == (2, "ok")
    assert status["external"] is None
    search = hermes(bare, "memory", "search", "deploys", "--json")
    assert [f["content"] for f in json.loads(search.stdout)] == ["the project deploys with kamal"]
    listed = hermes(bare, "memory", "search", "editor")
    assert listed.stdout.startswith("#1  my editor is Helix  (memory, ")
    forgot = hermes(bare, "memory", "forget", "1")
    assert forgot.stdout == "Forgot #1: my editor is Helix\n"
    missing = hermes(bare, "memory", "forget", "1")
    assert missing.returncode == 1
    assert "there is no fact #1" in missing.stderr
    assert "No fact matches 'editor'." in hermes(bare, "memory", "search", "editor").stdout


def test_memory_builtin_false_turns_the_builtin_off(bare: Path) -> None:
    write_config(bare, memory={"builtin": False})
    result = hermes(bare, "-z", "remember: my editor is Helix")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("That needs the memory tool, which is not available here")
    assert not (bare / "memory" / "facts.db").exists()
    assert "builtin: off (memory.builtin: false)" in hermes(bare, "memory").stdout


def test_hermes_memory_and_tools_memory_show_the_external_provider(journal_home: Path) -> None:
    status = hermes(journal_home, "memory")
    assert "external: journal (plugin memory/journal, available)" in status.stdout
    tools = hermes(journal_home, "tools", "memory", "--json")
    info = json.loads(tools.stdout)
    assert info["provider"] == "journal"
    assert {p["name"] for p in info["providers"]} == {"builtin", "journal"}
    write_config(journal_home, memory={})
    waiting = hermes(journal_home, "tools", "memory")
    assert "journal  (plugin memory/journal, not enabled)" in waiting.stdout
    chosen = hermes(journal_home, "tools", "memory", "--provider", "journal")
    assert chosen.returncode == 0, chosen.stderr
    assert "external: journal" in hermes(journal_home, "memory").stdout


# -- the how-to's provider, from docs/how-to/memory-provider.md ---------------------------------

HOW_TO = Path(__file__).resolve().parents[1] / "docs" / "how-to" / "memory-provider.md"
_BLOCK = re.compile(r"^```(\w+)\n# file: (\S+)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def how_to_files() -> dict[str, str]:
    """Return the files of the how-to's ``# file: PATH`` blocks, by path."""
    return {path: body for _, path, body in _BLOCK.findall(HOW_TO.read_text(encoding="utf-8"))}


def test_the_how_to_provider_runs_under_hermes_z(bare: Path) -> None:
    folder = bare / "plugins" / "memory" / "notebook"
    folder.mkdir(parents=True)
    for path, body in how_to_files().items():
        if path.startswith("notebook/"):
            (folder / path.removeprefix("notebook/")).write_text(body, encoding="utf-8")
    chosen = hermes(bare, "tools", "memory", "--provider", "notebook")
    assert chosen.returncode == 0, chosen.stderr
    status = hermes(bare, "memory")
    assert "external: notebook (plugin memory/notebook, available)" in status.stdout
    (bare / "notebook.jsonl").write_text('{"text": "The cat is called Miso"}\n', "utf-8")
    answer = hermes(bare, "-z", "What is the cat called?")
    assert answer.returncode == 0, answer.stderr
    assert "- The cat is called Miso" in answer.stdout


def test_the_how_to_test_passes(pytester: pytest.Pytester) -> None:
    """The how-to's test file, next to the plugin as an author has it, in its own pytest run."""
    files = how_to_files()
    plugin = pytester.path / "notebook"
    plugin.mkdir()
    for path, body in files.items():
        if path.startswith("notebook/"):
            (plugin / path.removeprefix("notebook/")).write_text(body, encoding="utf-8")
    pytester.makepyfile(test_notebook=files["test_notebook.py"])
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider", timeout=120)
    result.assert_outcomes(passed=2)


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (
            {"memory": ["notes"]},
            r"yaml: memory: expected a mapping \(provider, \.\.\.\), found a list",
        ),
        (
            {"memory": {"provider": 3}},
            r"yaml: memory\.provider: expected a string, found an integer \(3\)",
        ),
        (
            {"context": "lean"},
            r"yaml: context: expected a mapping \(engine, \.\.\.\), found a string",
        ),
        ({"context": {"engine": ["x"]}}, r"yaml: context\.engine: expected a string, found a list"),
    ],
)
def test_a_wrong_memory_or_context_section_names_the_key(
    tmp_path: Path, config: dict[str, Any], message: str
) -> None:
    from hermes_hooks.backends.context_engine.registry import ContextSettings
    from hermes_hooks.backends.memory.registry import MemorySettings
    from hermes_hooks.errors import ConfigError

    source = tmp_path / "config.yaml"
    settings = MemorySettings if "memory" in config else ContextSettings
    with pytest.raises(ConfigError, match=message):
        settings.from_config(config, source)


def test_memory_settings_read_the_provider_and_replace_wrong_extras_by_defaults() -> None:
    from hermes_hooks.backends.memory.registry import MemorySettings

    read = MemorySettings.from_config(
        {"memory": {"provider": "  notes ", "builtin": "no", "prefetch_timeout": 0.5}}
    )
    assert (read.provider, read.builtin, read.prefetch_timeout) == ("notes", True, 0.5)
    assert read.warnings == (
        "config: memory.builtin: expected true or false, found a string ('no'); "
        "using the default true",
    )
