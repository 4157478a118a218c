"""A plugin's failure shows the plugin's frames: in a plugin author's pytest report, in the
framework's logs, with the author's own file named when the test ran a copy of it.

The calling machinery (facade, pluggy's loop, the guard, the bounded call's worker)
is cut, not the host's frames nor the plugin's; a bug of the framework itself keeps every frame.
"""

from __future__ import annotations

import logging
import sys
import textwrap
import types
from pathlib import Path

import pytest

from hermes_hooks.calling import tracebacks
from hermes_hooks.calling.facade import Hooks
from hermes_hooks.plugins.manager import PluginManager
from hermes_hooks.spec.hookspecs import TELEMETRY_SCHEMA_VERSION
from hermes_hooks.testing.home import HermesHome

pytest_plugins = ["pytester"]

MACHINERY = ("calling/handoff.py", "calling/workers.py", "calling/guards.py", "pluggy/_")

PLUGIN_INIT = """\
from hermes_hooks import hookimpl


def register(ctx):
    def check(tool_name, args, **kwargs):
        raise RuntimeError("boom in the registered hook")

    ctx.register_hook("pre_tool_call", check)


@hookimpl
def post_tool_call(tool_name, args, result):
    raise ValueError("boom in the hookimpl")
"""

AUTHOR_TESTS = """\
from pathlib import Path

from hermes_hooks.testing import tool_call

SOURCE = Path(__file__).parent / "src" / "tbplug"


def test_through_a_turn(hermes_plugin_dir, hermes_session):
    hermes_plugin_dir(SOURCE)
    hermes_session.run("go", script=[tool_call("terminal", command="ls"), "done"])


def test_through_the_hook_itself(hermes_plugin_dir, hermes_pm):
    hermes_plugin_dir(SOURCE)
    hermes_pm.hook.post_tool_call(tool_name="t", args={}, result="r")
"""


@pytest.fixture
def author(pytester: pytest.Pytester) -> pytest.Pytester:
    """A plugin author's project: the plugin under ``src/tbplug``, its tests beside."""
    source = pytester.path / "src" / "tbplug"
    source.mkdir(parents=True)
    (source / "plugin.yaml").write_text("name: tbplug\nversion: 0.1.0\n")
    (source / "__init__.py").write_text(PLUGIN_INIT)
    pytester.makepyfile(test_author=AUTHOR_TESTS)
    return pytester


def _failure_section(output: str, test_name: str) -> str:
    start = output.index(f"_ {test_name} _")
    end = output.find("\n____", start + 1)
    return output[start : end if end != -1 else None]


def test_a_failing_hook_reports_the_plugins_frames_not_the_machinerys(
    author: pytest.Pytester,
) -> None:
    result = author.runpytest_subprocess("-q", "-p", "no:cacheprovider", timeout=120)
    result.assert_outcomes(failed=2)
    output = result.stdout.str()
    source = author.path / "src" / "tbplug" / "__init__.py"
    for test_name, line, message in (
        ("test_through_a_turn", 6, "boom in the registered hook"),
        ("test_through_the_hook_itself", 13, "boom in the hookimpl"),
    ):
        section = _failure_section(output, test_name)
        assert message in section
        # Every frame of the machinery is gone, from the report and from the captured log.
        assert not [m for m in MACHINERY if m in section], section
        assert "register_hook adapter" not in section
        # The frame that raised is shown, and the author's file is named with its line.
        assert "raise " in section
        assert f"{source}:{line}, in " in section
        assert "in your plugin's source (the test ran a copy in its hermes home):" in section
        assert len(section.splitlines()) < 70, section


def test_full_trace_keeps_every_frame(author: pytest.Pytester) -> None:
    result = author.runpytest_subprocess(
        "-q", "-p", "no:cacheprovider", "--full-trace", "-k", "hook_itself", timeout=120
    )
    result.assert_outcomes(failed=1, deselected=1)
    section = _failure_section(result.stdout.str(), "test_through_the_hook_itself")
    assert "pluggy/_" in section
    assert "calling/guards.py" in section


# -- trimming, frame by frame -------------------------------------------------------------------


def _module(tmp_path: Path, name: str, source: str, *, internal: bool) -> types.ModuleType:
    """A module from a real file (so its frames have a path), marked as machinery or not."""
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    module = types.ModuleType(name)
    module.__file__ = str(path)
    if internal:
        module.__dict__["__tracebackhide__"] = tracebacks.hide_in_pytest
    exec(compile(path.read_text(), str(path), "exec"), module.__dict__)
    return module


def _frames(exc: BaseException) -> list[str]:
    names = []
    tb = exc.__traceback__
    while tb is not None:
        names.append(tb.tb_frame.f_code.co_name)
        tb = tb.tb_next
    return names


@pytest.fixture
def stack(tmp_path: Path) -> tuple[types.ModuleType, types.ModuleType]:
    plugin = _module(
        tmp_path,
        "tb_plugin",
        """
        def fails():
            raise KeyError("plugin")

        def calls_back(machinery):
            return machinery.raises_itself()
        """,
        internal=False,
    )
    machinery = _module(
        tmp_path,
        "tb_machinery",
        """
        def dispatch(function, *args):
            return step(function, *args)

        def step(function, *args):
            return function(*args)

        def raises_itself():
            raise LookupError("framework")
        """,
        internal=True,
    )
    return plugin, machinery


def test_trimming_cuts_the_machinery_before_the_plugins_frame(
    stack: tuple[types.ModuleType, types.ModuleType], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(tracebacks.FULL_TRACEBACKS_ENV, raising=False)
    plugin, machinery = stack
    with pytest.raises(KeyError) as info:
        machinery.dispatch(plugin.fails)
    assert _frames(info.value)[-3:] == ["dispatch", "step", "fails"]
    assert _frames(tracebacks.trimmed(info.value)) == [
        "test_trimming_cuts_the_machinery_before_the_plugins_frame",
        "fails",
    ]


def test_a_framework_error_keeps_every_frame(
    stack: tuple[types.ModuleType, types.ModuleType], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Raised in the machinery with no plugin frame deeper: nothing is cut; called back from a
    plugin, the machinery's frames after the plugin's stay (they explain the error)."""
    monkeypatch.delenv(tracebacks.FULL_TRACEBACKS_ENV, raising=False)
    plugin, machinery = stack
    with pytest.raises(LookupError) as info:
        machinery.dispatch(machinery.raises_itself)
    before = _frames(info.value)
    assert _frames(tracebacks.trimmed(info.value)) == before
    with pytest.raises(LookupError) as info:
        machinery.dispatch(plugin.calls_back, machinery)
    assert _frames(tracebacks.trimmed(info.value))[1:] == ["calls_back", "raises_itself"]


def test_the_chain_is_trimmed_too(
    stack: tuple[types.ModuleType, types.ModuleType], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(tracebacks.FULL_TRACEBACKS_ENV, raising=False)
    plugin, machinery = stack

    def chained() -> None:
        try:
            machinery.dispatch(plugin.fails)
        except KeyError as inner:
            raise RuntimeError("outer") from inner

    with pytest.raises(RuntimeError) as info:
        chained()
    cause = tracebacks.trimmed(info.value).__cause__
    assert cause is not None
    assert "step" not in _frames(cause)
    assert _frames(cause)[-1] == "fails"


def test_the_environment_keeps_every_frame(
    stack: tuple[types.ModuleType, types.ModuleType], monkeypatch: pytest.MonkeyPatch
) -> None:
    plugin, machinery = stack
    monkeypatch.setenv(tracebacks.FULL_TRACEBACKS_ENV, "1")
    with pytest.raises(KeyError) as info:
        machinery.dispatch(plugin.fails)
    before = _frames(info.value)
    assert _frames(tracebacks.trimmed(info.value)) == before
    assert "step" in before


# -- logs ---------------------------------------------------------------------------------------


def test_the_log_of_a_failing_hook_carries_the_plugins_frames(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not strict: the hook's failure is logged (with its traceback at DEBUG), the host goes on."""
    monkeypatch.delenv(tracebacks.FULL_TRACEBACKS_ENV, raising=False)
    home = HermesHome(tmp_path / "home", workdir=tmp_path / "work")
    folder = home.add_plugin("logged", PLUGIN_INIT)
    monkeypatch.setenv("HERMES_HOME", str(home.path))
    monkeypatch.setenv("HERMES_BUNDLED_PLUGINS", str(tmp_path / "no-bundled"))
    monkeypatch.setenv("HERMES_PLUGINS_NO_ENTRY_POINTS", "1")
    pm = PluginManager(home.path)
    pm.discover_and_load()
    caplog.set_level(logging.DEBUG, logger="hermes_hooks")
    Hooks(pm).post_tool_call(
        telemetry_schema_version=TELEMETRY_SCHEMA_VERSION, tool_name="t", args={}, result="r"
    )
    records = [r for r in caplog.records if r.exc_info and "boom in the hookimpl" in r.getMessage()]
    assert records, caplog.text
    assert records[0].exc_info is not None
    exc = records[0].exc_info[1]
    assert exc is not None
    tb = exc.__traceback__
    files = []
    while tb is not None:
        files.append(tb.tb_frame.f_code.co_filename)
        tb = tb.tb_next
    assert files == [str(folder / "__init__.py")], files


# -- naming the source --------------------------------------------------------------------------


def test_only_an_unchanged_copy_names_its_source(tmp_path: Path) -> None:
    source = tmp_path / "src" / "named"
    source.mkdir(parents=True)
    (source / "__init__.py").write_text("x = 1\n")
    (source / "rules.py").write_text("y = 1\n")
    home = HermesHome(tmp_path / "home", workdir=tmp_path / "work")
    copy = home.add_plugin(source, files={"rules.py": "y = 2\n"})
    assert home.source_of(copy / "__init__.py") == (source / "__init__.py").resolve()
    assert home.source_of(copy / "rules.py") is None  # the test changed it
    assert home.source_of(copy / "plugin.yaml") is None  # written by the fixture
    assert home.source_of(tmp_path / "elsewhere.py") is None
    assert home.source_of(sys.executable) is None
