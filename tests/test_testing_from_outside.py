"""The pytest plugin as a demanding plugin author meets it, from outside: pytester runs test
modules written against real Hermes-style plugin folders (plugin.yaml + ``register(ctx)``,
``@hookimpl`` hooks with defaults, async hooks, ``tools.registry`` tools) in subprocesses, and
checks what ``tests/test_testing*.py`` does not: the recorder's ``since``/``names``/``last``
over sync and async calls, a tool called on the scripted model, load-failure messages, state
not leaking between tests, and runs under xdist and with bytecode writing on.
"""

from __future__ import annotations

import os

import pytest
from plugin_builders import plugin_author_project

pytest_plugins = ["pytester"]

PLUGIN_FOLDER = '''
import pytest

from hermes_hooks import Hooks
from hermes_hooks.testing import tool_call

WEATHER = {
    "plugin.yaml": "name: weather\\nversion: 1.2.0\\ndescription: Weather tools\\n",
    "__init__.py": """
from . import helpers


def _now(args, **kwargs):
    return helpers.forecast(args.get("city", "Paris"))


def _audit(tool_name, args, **kwargs):
    helpers.SEEN.append(tool_name)


def register(ctx):
    ctx.register_tool(
        "weather_now",
        "weather",
        {"description": "Weather now.", "parameters": {"type": "object", "properties": {
            "city": {"type": "string"}}}},
        _now,
    )
    ctx.register_hook("post_tool_call", _audit)
    ctx.register_command("weather", lambda raw: _now({"city": raw or "Paris"}))
""",
    "helpers.py": "SEEN = []\\n\\ndef forecast(city):\\n    return f'sunny in {city}'\\n",
}


def test_a_folder_plugin_tool_command_and_hook(hermes_plugin_dir, hermes_pm, hermes_session):
    hermes_plugin_dir("weather", WEATHER)
    info = hermes_pm.get_plugin_info("weather")
    assert info.status == "enabled"
    assert info.tools == ("weather_now",)
    assert hermes_session.command("/weather Rome").text == "sunny in Rome"
    result = hermes_session.run(
        "weather?", script=[tool_call("weather_now", city="Oslo"), "It is sunny."]
    )
    assert result.text == "It is sunny."
    assert result.tool_calls[0].status == "ok"
    assert result.tool_results == ["sunny in Oslo"]
    names = result.hook_names
    assert names.index("pre_tool_call") < names.index("post_tool_call")
    result.hooks.assert_called("pre_tool_call", tool_name="weather_now", args={"city": "Oslo"})
    post = result.hooks.last("post_tool_call")
    assert post["tool_name"] == "weather_now"
    assert "weather" in post.plugins
    assert "weather_now" in result.requests[0].tools


def test_the_next_test_gets_a_fresh_plugin_module(hermes_plugin_dir, hermes_pm, hermes_session):
    hermes_plugin_dir("weather", WEATHER)
    hermes_session.run("w", script=[tool_call("weather_now"), "ok"])
    import sys
    helpers = [m for n, m in sys.modules.items() if n.endswith("weather.helpers")]
    assert len(helpers) == 1
    assert helpers[0].SEEN == ["weather_now"]
'''

HOOKIMPLS = '''
import asyncio
import os
import sys
from pathlib import Path

import pytest

from hermes_hooks import Hooks

DEFAULTS = """
from hermes_hooks import hookimpl

@hookimpl
def transform_llm_output(response_text, model="unknown", platform=None):
    return response_text.upper()

@hookimpl
async def pre_llm_call(session_id, user_message="", **kwargs):
    return {"context": "async-ctx"}
"""


def test_hookimpl_with_defaults_and_async(hermes_plugin_dir, hermes_pm, hermes_hook_recorder):
    hermes_plugin_dir("shout", DEFAULTS)
    hooks = Hooks(hermes_pm)
    start = len(hermes_hook_recorder)
    assert hooks.transform_llm_output(response_text="hi") == "HI"
    mid = len(hermes_hook_recorder)
    asyncio.run(hooks.apre_llm_call(session_id="s1", user_message="q", conversation_history=[]))
    assert [c.name for c in hermes_hook_recorder.since(start)] == [
        "transform_llm_output", "pre_llm_call"]
    assert [c.name for c in hermes_hook_recorder.since(mid)] == ["pre_llm_call"]
    assert hermes_hook_recorder.names()[-2:] == ["transform_llm_output", "pre_llm_call"]
    call = hermes_hook_recorder.assert_called("pre_llm_call", session_id="s1")
    assert call.result_of("shout") == {"context": "async-ctx"}
    assert hermes_hook_recorder.last("transform_llm_output").result_of("shout") == "HI"
    assert len(hermes_hook_recorder.calls("pre_llm_call")) == 1
    assert hermes_hook_recorder[start].name == "transform_llm_output"
    assert [c.name for c in hermes_hook_recorder][start:] == [
        "transform_llm_output", "pre_llm_call"]
    hermes_hook_recorder.clear()
    assert len(hermes_hook_recorder) == 0
    hermes_hook_recorder.assert_not_called("pre_llm_call")


def test_recorder_rejects_a_misspelled_hook(hermes_pm, hermes_hook_recorder):
    with pytest.raises(BaseException, match="pre_tool_call"):
        hermes_hook_recorder.calls("pre_tool_cal")
    with pytest.raises(BaseException, match="tool_name"):
        hermes_hook_recorder.assert_called("pre_tool_call", tool_nam="x")


def test_last_fails_naming_the_hooks_called(hermes_plugin_dir, hermes_pm, hermes_hook_recorder):
    hermes_plugin_dir("shout", DEFAULTS)
    Hooks(hermes_pm).transform_llm_output(response_text="hi")
    with pytest.raises(AssertionError, match="transform_llm_output"):
        hermes_hook_recorder.last("post_tool_call")


def test_home_is_not_the_real_one(hermes_home):
    real = Path("~/.hermes").expanduser()
    assert Path(os.environ["HERMES_HOME"]) == hermes_home.path
    assert real not in hermes_home.path.parents and hermes_home.path != real
    assert os.environ.get("HERMES_SAFE_MODE") is None
    os.environ["HERMES_LEAK_PROBE"] = "1"


def test_env_set_by_a_test_does_not_reach_the_next(hermes_home):
    assert "HERMES_LEAK_PROBE" not in os.environ


def test_a_plugin_written_in_one_test_is_gone_in_the_next(hermes_plugin_dir, hermes_pm):
    hermes_plugin_dir("shout", DEFAULTS)
    assert [i.key for i in hermes_pm.list_plugins()] == ["shout"]


def test_and_here(hermes_pm):
    assert [i.key for i in hermes_pm.list_plugins()] == []
    assert not [n for n in sys.modules if n.startswith("hermes_plugins.shout")]
'''

FAILURES = """
import pytest

from hermes_hooks import Hooks


def test_import_error(hermes_plugin_dir, hermes_pm):
    hermes_plugin_dir("needs-lib", "import not_a_real_module_xyz\\n")


def test_register_raises(hermes_plugin_dir, hermes_pm):
    hermes_plugin_dir(
        "bad-reg", "def register(ctx):\\n    raise RuntimeError('no key configured')\\n"
    )


@pytest.mark.hermes(strict=False)
def test_not_strict_keeps_going(hermes_plugin_dir, hermes_pm):
    hermes_plugin_dir(
        "bad-reg", "def register(ctx):\\n    raise RuntimeError('no key configured')\\n"
    )
    assert hermes_pm.get_plugin_info("bad-reg").status == "error"


@pytest.mark.hermes(strict=False)
def test_not_strict_hook_error_isolated(hermes_plugin_dir, hermes_pm, hermes_hook_recorder):
    hermes_plugin_dir(
        "boom",
        "def register(ctx):\\n"
        "    ctx.register_hook('transform_llm_output', lambda: 1 / 0)\\n",
    )
    assert Hooks(hermes_pm).transform_llm_output(response_text="hi") in (None, "hi")
    call = hermes_hook_recorder.last("transform_llm_output")
    assert call.plugins == ["boom"]
    assert call.error is None  # isolated, as a host does: the call itself did not raise
"""

REGISTRY = '''
from hermes_hooks.testing import tool_call

TOOLS = """
from tools.registry import registry, tool_result


def _echo(args, **kwargs):
    return tool_result(echo=args.get("text", ""))


registry.register(
    name="echo_it",
    toolset="echo",
    schema={"name": "echo_it", "description": "Echo.",
            "parameters": {"type": "object", "properties": {"text": {"type": "string"}}}},
    handler=_echo,
)


def register(ctx):
    pass
"""


def test_a_tool_through_tools_registry(hermes_plugin_dir, hermes_pm, hermes_session):
    hermes_plugin_dir("echoer", TOOLS)
    assert "echo_it" in hermes_pm.get_plugin_info("echoer").tools
    result = hermes_session.run("echo", script=[tool_call("echo_it", text="hey"), "done"])
    assert result.tool_calls[0].status == "ok"
    assert result.tool_results[0] == '{"echo": "hey"}'
    result.hooks.assert_called("post_tool_call", tool_name="echo_it")


def test_and_again_in_a_second_test(hermes_plugin_dir, hermes_pm):
    hermes_plugin_dir("echoer", TOOLS)
    assert "echo_it" in hermes_pm.get_plugin_info("echoer").tools
'''


COPY = """
from pathlib import Path

import src_plugin_probe  # the author's own folder, imported: bytecode written beside it

from hermes_hooks import Hooks

SOURCE = Path(__file__).parent / "src" / "polite"


def test_the_copy_has_no_pycache_nor_dot_files(hermes_plugin_dir, hermes_pm):
    assert (SOURCE / "__pycache__" / "marker.txt").is_file()
    copied = hermes_plugin_dir(SOURCE)
    assert copied.name == "polite-plugin"
    assert not (copied / "__pycache__" / "marker.txt").exists()
    assert not (copied / ".secret").exists()
    assert hermes_pm.get_plugin_info("polite-plugin").status == "enabled"
    assert Hooks(hermes_pm).transform_llm_output(response_text="hi") == "hi, please"


def test_copied_again_in_a_second_test(hermes_plugin_dir, hermes_pm):
    hermes_plugin_dir(SOURCE)
    assert Hooks(hermes_pm).transform_llm_output(response_text="go") == "go, please"
"""


STUMBLES = r'''
import asyncio
import pytest
from hermes_hooks import Hooks
from hermes_hooks.testing import tool_call

def test_default_arg_receives_host_value(hermes_plugin_dir, hermes_pm):
    hermes_plugin_dir("m", """
from hermes_hooks import hookimpl
@hookimpl
def transform_llm_output(response_text, model="unknown", **kwargs):
    return f"{response_text}/{model}"
""")
    assert Hooks(hermes_pm).transform_llm_output(response_text="hi", model="gpt-x") == "hi/gpt-x"

def test_register_hook_typo_fails(hermes_plugin_dir, hermes_pm):
    with pytest.raises(BaseException, match="pre_tool_call"):
        hermes_plugin_dir(
            "t", "def register(ctx):\n    ctx.register_hook('pre_tool_cal', lambda **kw: None)\n"
        )

def test_async_hook_raises_note(hermes_plugin_dir, hermes_pm):
    hermes_plugin_dir("ab", """
from hermes_hooks import hookimpl
@hookimpl
async def post_llm_call(**kwargs):
    raise KeyError('x')
""")
    hooks = Hooks(hermes_pm)
    with pytest.raises(KeyError) as r:
        asyncio.run(
            hooks.apost_llm_call(
                session_id="s", user_message="u", assistant_response="a", conversation_history=[]
            )
        )
    assert r.value.__notes__ == ["raised by plugin 'ab' in hook 'post_llm_call'"]

def test_async_hook_sync_call(hermes_plugin_dir, hermes_pm, hermes_hook_recorder):
    hermes_plugin_dir("as", """
from hermes_hooks import hookimpl
@hookimpl
async def transform_llm_output(response_text, **kwargs):
    return response_text + "!"
""")
    assert Hooks(hermes_pm).transform_llm_output(response_text="hi") == "hi!"
    assert hermes_hook_recorder.last("transform_llm_output").result_of("as") == "hi!"

def test_kwargs_copied(hermes_pm, hermes_hook_recorder, hermes_plugin_dir):
    hermes_plugin_dir(
        "o", "def register(ctx):\n    ctx.register_hook('post_tool_call', lambda **kw: None)\n"
    )
    args = {"command": "ls"}
    Hooks(hermes_pm).post_tool_call(tool_name="terminal", args=args, result="x")
    args["command"] = "rm"
    assert hermes_hook_recorder.last("post_tool_call")["args"] == {"command": "ls"}

def test_async_concurrent_since(hermes_plugin_dir, hermes_pm, hermes_hook_recorder):
    hermes_plugin_dir("c", """
import asyncio
from hermes_hooks import hookimpl
@hookimpl
async def post_tool_call(tool_name, **kwargs):
    await asyncio.sleep(0)
    return None
""")
    n = len(hermes_hook_recorder)
    async def main():
        h = Hooks(hermes_pm)
        await asyncio.gather(
            *(h.apost_tool_call(tool_name=f"t{i}", args={}, result="") for i in range(3))
        )
    asyncio.run(main())
    calls = hermes_hook_recorder.since(n)
    assert sorted(c["tool_name"] for c in calls) == ["t0", "t1", "t2"]
    assert all(c.plugins == ["c"] for c in calls)

def test_session_tool_async(hermes_plugin_dir, hermes_session):
    hermes_plugin_dir("d", """
import asyncio
async def roll(args, **kwargs):
    await asyncio.sleep(0)
    return "4"
def register(ctx):
    schema = {"description": "d", "parameters": {"type": "object", "properties": {}}}
    ctx.register_tool("dice", "games", schema, roll)
""")
    r = hermes_session.run("roll", script=[tool_call("dice"), lambda req: req.last_text])
    assert r.text == "4"
    assert r.turn.completed
    assert r.recorder.last("post_tool_call")["tool_name"] == "dice"

def test_session_post_tool_call_args(hermes_plugin_dir, hermes_session):
    r = hermes_session.run("ls", script=[tool_call("terminal", command="echo hi"), "ok"])
    c = r.hooks.assert_called("post_tool_call", tool_name="terminal")
    assert "hi" in c["result"]
    assert r.tool_calls[0].status == "ok"
    assert r.hook_names == [c.name for c in r.hooks]



LLM = """
def register(ctx):
    def cmd(raw):
        return ctx.llm.complete([{"role": "user", "content": raw}]).text
    ctx.register_command("sum", cmd)
    def shorten(response_text, **kwargs):
        return ctx.llm.complete([{"role": "user", "content": "shorten " + response_text}]).text
    ctx.register_hook("transform_llm_output", shorten)
"""

def test_ctx_llm_in_command(hermes_plugin_dir, hermes_session):
    hermes_plugin_dir("summ", LLM)
    hermes_session.model.load(["short"])
    assert hermes_session.command("/sum hello").text == "short"

def test_ctx_llm_in_turn(hermes_plugin_dir, hermes_session):
    hermes_plugin_dir("summ", LLM)
    r = hermes_session.run("hi", script=["a long answer", "short"])
    assert r.text == "short"
    assert len(r.requests) == 2
    assert r.requests[1].last_text == "shorten a long answer"

def test_hookimpl_wrong_arg_strict(hermes_plugin_dir, hermes_pm):
    import pytest
    with pytest.raises(BaseException, match="not_an_arg"):
        hermes_plugin_dir("w", """
from hermes_hooks import hookimpl
@hookimpl
def pre_tool_call(tool_name, not_an_arg):
    return None
""")
'''

HOME_AND_TURNS = r'''
import os
from pathlib import Path
import pytest
from hermes_hooks.testing import tool_call

def test_bundled_env(hermes_home):
    b = Path(os.environ["HERMES_BUNDLED_PLUGINS"])
    assert b.is_dir() and not list(b.iterdir())

def test_twice(hermes_plugin_dir):
    hermes_plugin_dir("a", "def register(ctx):\n    pass\n")
    with pytest.raises(FileExistsError):
        hermes_plugin_dir("a", "def register(ctx):\n    pass\n")

def test_modify(hermes_plugin_dir, hermes_session):
    hermes_plugin_dir("mod", """
def register(ctx):
    def change(tool_name, args, **kw):
        if tool_name == "terminal":
            return {"action": "modify", "args": {"command": "echo changed"}}
        return None
    ctx.register_hook("pre_tool_call", change)
""")
    script = [tool_call("terminal", command="echo orig"), "done"]
    r = hermes_session.run("go", script=script)
    assert r.tool_calls[0].args == {"command": "echo changed"}
    assert "changed" in r.tool_results[0]
    assert r.tool_calls[0].decided_by is None  # only a block or an approve decides

def test_since_on_turn(hermes_session):
    r1 = hermes_session.run("a", script="x")
    n = len(hermes_session.recorder) if hasattr(hermes_session, "recorder") else len(r1.recorder)
    r2 = hermes_session.run("b", script="y")
    assert [c.name for c in r2.recorder.since(n)] == r2.hook_names

def test_skill_linked_file(hermes_plugin_dir, hermes_session):
    init = "def register(ctx):\n    ctx.register_skill('wf', 'skills/wf/SKILL.md')\n"
    hermes_plugin_dir(
        "kit",
        {
            "__init__.py": init,
            "skills/wf/SKILL.md": "Do it.\n",
            "skills/wf/references/api.md": "API\n",
        },
    )
    assert "API" in str(hermes_session.skill("kit:wf", "references/api.md"))


def test_home_dunder(hermes_home):
    assert os.fspath(hermes_home) == str(hermes_home.path)
    assert hermes_home / "x" == hermes_home.path / "x"
    assert hermes_home.workdir == hermes_home.path.parent / "hermes-work"
'''


def make_source_plugin(author: pytest.Pytester) -> None:
    """The author's plugin folder in their project, with a dot file and (once imported) bytecode."""
    source = author.path / "src" / "polite"
    source.mkdir(parents=True)
    (source / "plugin.yaml").write_text("name: polite-plugin\nversion: 0.3.0\n")
    (source / "__init__.py").write_text(
        "from .words import suffix\n\n"
        "def register(ctx):\n"
        "    ctx.register_hook('transform_llm_output', lambda response_text, **kw:"
        " response_text + suffix())\n"
    )
    (source / "words.py").write_text("def suffix():\n    return ', please'\n")
    (source / ".secret").write_text("TOKEN=x\n")
    (source / "__pycache__").mkdir()
    (source / "__pycache__" / "marker.txt").write_text("stale\n")
    author.makepyfile(
        src_plugin_probe=(
            "import importlib.util, pathlib\n"
            "path = pathlib.Path(__file__).parent / 'src' / 'polite' / 'words.py'\n"
            "import sys\n"
            "sys.path.insert(0, str(path.parent))\n"
            "import words  # noqa: F401\n"
            "sys.path.pop(0)\n"
        )
    )


@pytest.fixture
def author(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """A plugin author's project with a strict ini and only our pytest plugin (and xdist)."""
    monkeypatch.setenv("HERMES_SAFE_MODE", "1")  # a developer's shell: must not reach a test
    return plugin_author_project(pytester, monkeypatch)


def test_a_folder_plugin_with_tool_command_and_hook_on_a_turn(author: pytest.Pytester) -> None:
    author.makepyfile(test_folder=PLUGIN_FOLDER)
    result = author.runpytest_subprocess("-q", timeout=120)
    result.assert_outcomes(passed=2)


def test_hookimpls_with_defaults_async_recorder_and_isolation(author: pytest.Pytester) -> None:
    author.makepyfile(test_hookimpls=HOOKIMPLS)
    result = author.runpytest_subprocess("-q", timeout=120)
    result.assert_outcomes(passed=7)


def test_a_plugin_that_fails_to_load_is_named_with_file_and_cause(
    author: pytest.Pytester,
) -> None:
    author.makepyfile(test_failures=FAILURES)
    result = author.runpytest_subprocess("-q", "-rfE", timeout=120)
    result.assert_outcomes(passed=2, failed=2)
    out = result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "*PluginLoadError: plugin 'needs-lib': ModuleNotFoundError: No module named"
            " 'not_a_real_module_xyz' (*/hermes-home/plugins/needs-lib/__init__.py:1)",
            "*PluginLoadError: plugin 'bad-reg': RuntimeError: no key configured"
            " (*/hermes-home/plugins/bad-reg/__init__.py:2)",
        ]
    )
    assert "not_a_real_module_xyz" in out
    assert "no key configured" in out
    assert "plugins/needs-lib/__init__.py" in out
    assert "plugins/bad-reg/__init__.py" in out


def test_tools_registry_tools_in_two_tests(author: pytest.Pytester) -> None:
    author.makepyfile(test_registry=REGISTRY)
    result = author.runpytest_subprocess("-q", timeout=120)
    result.assert_outcomes(passed=2)


def test_under_xdist_with_bytecode_writing(author: pytest.Pytester) -> None:
    pytest.importorskip("xdist")
    make_source_plugin(author)
    author.makepyfile(
        test_hookimpls=HOOKIMPLS, test_folder=PLUGIN_FOLDER, test_registry=REGISTRY, test_copy=COPY
    )
    env_before = os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    try:
        result = author.runpytest_subprocess("-q", "-p", "xdist", "-n", "2", timeout=180)
    finally:
        if env_before is not None:
            os.environ["PYTHONDONTWRITEBYTECODE"] = env_before
    result.assert_outcomes(passed=13)


def test_a_copied_folder_leaves_pycache_and_dot_files_behind(author: pytest.Pytester) -> None:
    make_source_plugin(author)
    author.makepyfile(test_copy=COPY)
    result = author.runpytest_subprocess("-q", timeout=120)
    result.assert_outcomes(passed=2)


def test_what_plugin_authors_stumble_on(author: pytest.Pytester) -> None:
    """Arguments with defaults get the host's value, async hooks called from sync code and
    concurrently, a misspelled register_hook name and a hookimpl argument the hook lacks fail
    in strict mode, async hooks' errors carry the plugin note, recorded arguments are copies,
    and ctx.llm takes the script's steps, in a command and inside a turn."""
    author.makepyfile(test_stumbles=STUMBLES)
    result = author.runpytest_subprocess("-q", timeout=120)
    result.assert_outcomes(passed=11)


def test_the_plugin_can_be_turned_off(pytester: pytest.Pytester) -> None:
    """Autoloaded through its entry point, ``-p no:hermes_hooks.testing`` turns it off."""
    pytester.makepyfile(test_off="def test_x(hermes_pm):\n    pass\n")
    result = pytester.runpytest_subprocess(
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:xdist",
        "-p",
        "no:hermes_hooks.testing",
        timeout=120,
    )
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*fixture 'hermes_pm' not found*"])


def test_home_helpers_modify_since_and_linked_skill_files(author: pytest.Pytester) -> None:
    """HERMES_BUNDLED_PLUGINS empty, a key written twice, a modify on a turn, the recorder's
    since() across two turns, a skill's linked file, and HermesHome's os.fspath and /."""
    author.makepyfile(test_home=HOME_AND_TURNS)
    result = author.runpytest_subprocess("-q", timeout=120)
    result.assert_outcomes(passed=6)
