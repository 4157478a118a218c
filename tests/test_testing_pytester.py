"""The plugin in someone else's test run: pytest's own ``pytester`` runs test files written as
a plugin author writes them, in a subprocess, and checks they pass and fail for the right
reasons, with the right messages.

Each run is a fresh pytest process (about a second), so the cases share a few runs.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from plugin_builders import plugin_author_project

pytest_plugins = ["pytester"]

DOCS = Path(__file__).resolve().parent.parent / "docs"
TUTORIAL = DOCS / "tutorial" / "first-plugin"
REFERENCE = DOCS / "reference" / "fixtures.md"
IGNORED = shutil.ignore_patterns("__pycache__")

AUTHOR_TESTS = '''
import pytest

from hermes_hooks.testing import tool_call

pytest_plugins = ["hermes_hooks.testing"]  # also loaded with -p: registered once all the same

BLOCKS = """
from hermes_hooks import hookimpl

@hookimpl
def pre_tool_call(tool_name, args):
    if tool_name == "terminal" and "rm -rf" in args.get("command", ""):
        return {"action": "block", "message": "rm -rf is not allowed here"}
    return None
"""

RAISES = """
def register(ctx):
    def check(args):
        return {"action": "block", "message": args["cmd"]}
    ctx.register_hook("pre_tool_call", check)
"""

MISSPELLED = """
from hermes_hooks import hookimpl

@hookimpl
def pre_tool_cal(tool_name, args):
    return {"action": "block", "message": "never asked"}
"""


def test_loaded_through_its_entry_point(request):
    manager = request.config.pluginmanager
    loaded = {plugin.__name__: d.project_name for plugin, d in manager.list_plugin_distinfo()}
    assert loaded["hermes_hooks.testing"] == "hermes-hooks"


def test_the_plugin_blocks_rm_rf(hermes_plugin_dir, hermes_session):
    hermes_plugin_dir("no-rm", BLOCKS)
    result = hermes_session.run(
        "clean", script=[tool_call("terminal", command="rm -rf /"), "I could not."]
    )
    assert result.tool_calls[0].status == "blocked"
    assert result.tool_calls[0].decided_by == "no-rm"
    result.hooks.assert_called("post_tool_call", status="blocked")
    result.hooks.assert_not_called("transform_tool_result")


@pytest.mark.hermes(bundled=True)
def test_bundled_plugins_on_request(hermes_home, hermes_pm):
    hermes_home.enable("command-guard")
    assert hermes_pm.get_plugin_info("command-guard").status == "enabled"


def test_expects_a_block_the_plugin_does_not_make(hermes_plugin_dir, hermes_session):
    hermes_plugin_dir("no-rm", BLOCKS)
    result = hermes_session.run(
        "clean", script=[tool_call("terminal", command="rm -r build"), "Done."]
    )
    result.hooks.assert_called("post_tool_call", tool_name="terminal", status="blocked")


def test_a_plugin_that_raises(hermes_plugin_dir, hermes_session):
    hermes_plugin_dir("boom", RAISES)
    hermes_session.run("clean", script=[tool_call("terminal", command="rm x"), "Done."])


@pytest.fixture
def misspelled(hermes_plugin_dir):
    return hermes_plugin_dir("typo", MISSPELLED)


def test_a_misspelled_hook(misspelled, hermes_pm):
    pass


def test_a_script_the_turn_does_not_follow(hermes_plugin_dir, hermes_session):
    hermes_plugin_dir("no-rm", BLOCKS)
    hermes_session.run(
        "clean",
        script=["Nothing to do.", tool_call("terminal", command="rm -rf /"), "Blocked."],
    )
'''


@pytest.fixture
def author(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """A plugin author's project: its own strict ini, and no pytest plugin but ours."""
    return plugin_author_project(pytester, monkeypatch)


def test_author_tests_pass_and_fail_for_the_right_reasons(author: pytest.Pytester) -> None:
    author.makepyfile(test_author=AUTHOR_TESTS)
    result = author.runpytest_subprocess("-q", timeout=60)
    result.assert_outcomes(passed=3, failed=3, errors=1)
    result.stdout.fnmatch_lines(
        [
            # a block the plugin does not make: the argument that differed
            "E*AssertionError: post_tool_call was called once, never with tool_name='terminal',"
            " status='blocked':",
            "E*#1: tool_name='terminal', status='ok' (expected 'blocked')",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            # a plugin that raises: its own line, its error, and who raised it
            # (fnmatch: [ opens a character class, so ? stands for the brackets)
            '*return {"action": "block", "message": args?"cmd"?}',
            "E       KeyError: 'cmd'",
            "E       raised by plugin 'boom' in hook 'pre_tool_call'",
            "E       during hermes_session.run('clean'); the host ended the turn with 'error'",
            "*/hermes-home/plugins/boom/__init__.py:4: KeyError",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            # a misspelled hook: an error at set-up, with the file, the line and the hook meant
            "*_ ERROR at setup of test_a_misspelled_hook _*",
            "plugin 'typo' implements 'pre_tool_cal' in pre_tool_cal (*/typo/__init__.py:4), which"
            " is not a hook; did you mean 'pre_tool_call', *?",
            "(hermes_pm fails on unknown hook names, *",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            # a script the turn does not follow: the script next to the requests
            "E*ScriptMismatchError: 2 of the 3 scripted steps were"
            " never reached: the model was asked 1 time (the turn ended: text_response(stop))",
            "E*  step 1: answer 'Nothing to do.'  → request 1, after the user message 'clean'",
            "E*- step 2: tool_call('terminal', command='rm -rf /')  → never reached",
            "E*- step 3: answer 'Blocked.'  → never reached",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "FAILED test_author.py::test_expects_a_block_the_plugin_does_not_make - *",
            "FAILED test_author.py::test_a_plugin_that_raises - KeyError: 'cmd'",
            "FAILED test_author.py::test_a_script_the_turn_does_not_follow - *",
            "ERROR test_author.py::test_a_misspelled_hook - Failed: plugin 'typo' *",
        ],
        consecutive=False,
    )


def test_the_tutorial_and_reference_examples_pass(author: pytest.Pytester) -> None:
    """The tutorial's test file as it is, and the reference's python blocks as one module."""
    shutil.copytree(TUTORIAL / "no_rm", author.path / "no_rm", ignore=IGNORED)
    shutil.copy2(TUTORIAL / "test_no_rm.py", author.path)
    page = REFERENCE.read_text(encoding="utf-8")
    blocks = re.findall(r"^```python\n(.*?)^```$", page, re.MULTILINE | re.DOTALL)
    author.makepyfile(test_reference="\n\n".join(blocks))
    expected = sum(
        len(re.findall(r"^def test_", text, re.MULTILINE))
        for text in ((TUTORIAL / "test_no_rm.py").read_text(), page)
    )
    result = author.runpytest_subprocess("-q", timeout=60)
    result.assert_outcomes(passed=expected)


def test_the_fixtures_are_documented_in_pytest_fixtures(author: pytest.Pytester) -> None:
    author.makepyfile(test_nothing="")
    result = author.runpytest_inprocess("--fixtures")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "*fixtures defined from hermes_hooks.testing*",
            "hermes_home -- *",
            "    A temporary ``HERMES_HOME`` with an empty ``config.yaml``, set for this test*",
            "hermes_plugin_dir -- *",
            "    Write a plugin folder into the test's home, enable it, and return its path.",
            "hermes_pm -- *",
            "    A strict ``PluginManager`` on the test's home: host tools, then its plugins*",
            "hermes_hook_recorder -- *",
            "    Records every hook call of ``hermes_pm``: arguments, each plugin's result*",
            "hermes_session -- *",
            "    A reference-host ``Session`` on ``hermes_pm`` whose model answers from a script.",
            "hermes_cli -- *",
            "    Run the ``hermes`` command in process on the test's home: *",
            "hermes_run -- *",
            "    Run ``hermes -z PROMPT`` (one agent turn) in process on the test's home.",
        ]
    )
