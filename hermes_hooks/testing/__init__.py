"""The pytest plugin for Hermes plugin authors: a throw-away home, your plugins, a scripted turn.

Installed with hermes-hooks and loaded by pytest through the ``pytest11`` entry point, so the
fixtures are there in every test run; ``pytest_plugins = ["hermes_hooks.testing"]`` in a test
module does the same (loading it twice is harmless). Loading it imports nothing but this
module: each fixture imports what it needs when a test asks for it. At pytest's start it makes
Hermes' module names importable (``hermes_cli.plugins``, ``tools.registry``, ``agent.*``,
``plugins.<name>``; see :func:`install_hermes_names`), so a Hermes plugin's own tests run as
they are; ``--hermes-home-per-test`` gives each test its own ``HERMES_HOME``, as Hermes' own
``tests/conftest.py`` does.

========================  =================================================================
``hermes_home``           a temporary ``HERMES_HOME`` (empty config, no ``HERMES_*`` leaking)
``hermes_plugin_dir``     writes (or copies) a plugin folder into it, enabled
``hermes_pm``             a strict ``PluginManager`` on it, host tools registered, loaded
``hermes_hook_recorder``  every hook call: arguments, each plugin's result, the combined one
``hermes_session``        a host ``Session`` whose model follows a script
``hermes_cli``            ``hermes ARGS`` run in process on the home
``hermes_run``            ``hermes -z PROMPT`` run in process on the home
========================  =================================================================

``@pytest.mark.hermes(bundled=True, entry_points=True, strict=False,
allow_unknown_hooks=True)`` changes how the home and the manager are built; see
docs/reference/fixtures.md.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import os
import sys
import types
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final

import pytest

from hermes_hooks.spec.exports import lazy_module

if TYPE_CHECKING:
    # The public names but MARKER, each once: `__all__` and the lazy imports are read from
    # these lines (hermes_hooks.spec.exports).
    from hermes_hooks.backends.models.scripted import (
        ScriptedModel as ScriptedModel,
        ScriptedRequest as ScriptedRequest,
        ScriptedToolCall as ScriptedToolCall,
        ScriptMismatchError as ScriptMismatchError,
        tool_call as tool_call,
    )
    from hermes_hooks.testing.cli import CliOutcome as CliOutcome
    from hermes_hooks.testing.home import HermesHome as HermesHome
    from hermes_hooks.testing.recorder import (
        HookCall as HookCall,
        HookCalls as HookCalls,
        HookRecorder as HookRecorder,
        ImplResult as ImplResult,
    )
    from hermes_hooks.testing.session import (
        CommandCall as CommandCall,
        ScriptedSession as ScriptedSession,
        ScriptedTurn as ScriptedTurn,
    )

if TYPE_CHECKING:
    from hermes_hooks.plugins.manager import PluginManager

MARKER: Final = "hermes"
"""``@pytest.mark.hermes(...)``: options of the fixtures for one test."""

_DEFAULTS: Final[dict[str, bool]] = {
    "bundled": False,
    "entry_points": False,
    "strict": True,
    "allow_unknown_hooks": False,
}

# No __dir__: pytest looks at every name dir() lists when it collects fixtures, and that must
# not import the heavy modules behind these names.
__getattr__ = lazy_module(globals(), eager=["MARKER"])[0]


def pytest_configure(config: pytest.Config) -> None:
    """Declare the ``hermes`` marker (so ``--strict-markers`` accepts it); make Hermes' module
    names importable (``hermes_cli.plugins``, ``tools.registry``, ``agent.*``, ``plugins.*``),
    so that a Hermes plugin's own tests collect without a conftest of their own; with
    ``--full-trace``, keep the framework's frames in the tracebacks it logs too."""
    install_hermes_names()
    if config.getoption(HOME_PER_TEST_OPTION, False) or config.getini(HOME_PER_TEST_OPTION):
        config.pluginmanager.register(_HomePerTest(), "hermes-home-per-test")
    config.addinivalue_line(
        "markers",
        f"{MARKER}(bundled=False, entry_points=False, strict=True, allow_unknown_hooks=False): "
        "how the hermes_* fixtures build the home and the plugin manager of this test",
    )
    if config.getoption("fulltrace", False):
        from hermes_hooks.calling import tracebacks

        tracebacks.set_full(True)
        config.add_cleanup(lambda: tracebacks.set_full(None))


HOME_PER_TEST_OPTION: Final = "hermes_home_per_test"
"""``--hermes-home-per-test`` (or ``hermes_home_per_test = true`` in the ini file): every test
gets ``HERMES_HOME=<tmp_path>/hermes_test``, as Hermes' own ``tests/conftest.py`` gives it."""


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--hermes-home-per-test``: run a Hermes test suite without its own ``conftest.py``."""
    help_text = (
        "give every test HERMES_HOME=<tmp_path>/hermes_test (with sessions/, cron/, memories/ "
        "and skills/), as Hermes' own tests/conftest.py does"
    )
    parser.addoption(
        "--hermes-home-per-test", action="store_true", dest=HOME_PER_TEST_OPTION, help=help_text
    )
    parser.addini(HOME_PER_TEST_OPTION, help_text, type="bool", default=False)


class _HomePerTest:
    """The autouse fixture ``--hermes-home-per-test`` adds (registered as a plugin)."""

    @pytest.fixture(autouse=True)
    def _hermes_home_per_test(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
        home = tmp_path / "hermes_test"
        for sub in ("sessions", "cron", "memories", "skills"):
            (home / sub).mkdir(parents=True, exist_ok=True)
        monkeypatch.setenv("HERMES_HOME", str(home))
        return home


class _HermesNamesTrigger(importlib.abc.MetaPathFinder):
    """First on ``sys.meta_path``: on the first import of a Hermes top-level name (``agent``,
    ``tools``, ``hermes_cli``, ``plugins``...), installs the compatibility layer's finder and
    hands it the import; until then a pytest run pays one set look-up per import, nothing
    more."""

    def __init__(self, tops: frozenset[str]) -> None:
        self._tops = tops
        self._done = False

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: types.ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if self._done or fullname.partition(".")[0] not in self._tops:
            return None
        self._done = True
        from hermes_hooks.compat import finder
        from hermes_hooks.plugins import extensions

        # The package's root, imported with this module, named the finder at the extension point.
        extensions.install_import_finder()
        installed = finder.installed_finder()
        return installed.find_spec(fullname, path, target) if installed is not None else None


_trigger: _HermesNamesTrigger | None = None


def install_hermes_names() -> bool:
    """Make Hermes' module names importable in this process; return whether they are.

    Called at pytest's start, so that a Hermes plugin's own tests (``from hermes_cli.plugins
    import PluginManager``, ``import tools.registry``, ``import plugins.<name>``) collect with
    no conftest of their own. The compatibility layer's finder is installed on the first such
    import; a real package of a Hermes name (a Hermes checkout on ``sys.path``) still wins.
    ``HERMES_HOOKS_NO_COMPAT_NAMES=1`` leaves them out, for a suite that must see only real
    modules.
    """
    global _trigger
    if os.environ.get("HERMES_HOOKS_NO_COMPAT_NAMES", "").strip().lower() in ("1", "true", "yes"):
        return False
    if _trigger is None:
        from hermes_hooks.compat import surface

        _trigger = _HermesNamesTrigger(surface.top_names())
    if _trigger not in sys.meta_path:
        sys.meta_path.insert(0, _trigger)
    return True


_HOME: Final = pytest.StashKey["HermesHome"]()
"""The test's ``hermes_home``, on its item: to name the sources of a failure's copied files."""


def _name_sources(item: pytest.Item, exc: BaseException) -> None:
    """In a test of the fixtures: cut the calling machinery's frames from ``exc``'s traceback
    (pluggy's too, which pytest would show) and name the sources of copied plugin files."""
    home = item.stash.get(_HOME, None)
    if home is None:
        return
    from hermes_hooks.calling.tracebacks import trimmed

    trimmed(exc)
    home.name_sources(exc)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    """A fixture's failure (a plugin that cannot load) names the plugin's own files too."""
    try:
        return (yield)
    except Exception as exc:  # not pytest's outcomes (skip, xfail) nor KeyboardInterrupt
        _name_sources(item, exc)
        raise


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """A failing test whose traceback runs through a copied plugin names the author's files."""
    try:
        return (yield)
    except Exception as exc:  # not pytest's outcomes (skip, xfail) nor KeyboardInterrupt
        _name_sources(item, exc)
        raise


def _options(request: pytest.FixtureRequest) -> dict[str, bool]:
    """Return the fixture options of this test: the defaults, then its ``hermes`` markers."""
    __tracebackhide__ = True
    options = dict(_DEFAULTS)
    # Closest last: a marker on the function beats one on its class or module.
    for marker in reversed(list(request.node.iter_markers(MARKER))):
        if marker.args:
            raise pytest.UsageError(
                f"@pytest.mark.{MARKER} takes keyword arguments only "
                f"({', '.join(_DEFAULTS)}), found {marker.args!r}"
            )
        for key, value in marker.kwargs.items():
            if key not in _DEFAULTS:
                import difflib

                close = difflib.get_close_matches(key, list(_DEFAULTS), n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                raise pytest.UsageError(
                    f"@pytest.mark.{MARKER} has no option {key!r}{hint} "
                    f"(options: {', '.join(_DEFAULTS)})"
                )
            options[key] = bool(value)
    return options


@pytest.fixture
def hermes_home(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> HermesHome:
    """A temporary ``HERMES_HOME`` with an empty ``config.yaml``, set for this test only.

    Every ``HERMES_*`` variable of the outer environment is removed, and the bundled plugins
    are hidden unless the test is marked ``@pytest.mark.hermes(bundled=True)``. Returns a
    ``HermesHome``: ``.path``, ``.plugins_dir``, ``.workdir`` (where sessions and commands
    run), ``.config``, ``.enable(*keys)``, ``.disable(*keys)``,
    ``.configure_plugin(key, settings=...)``, ``.write_config(mapping)``, ``.add_plugin(...)``,
    ``.source_of(path)``.
    """
    from hermes_hooks.testing.home import HermesHome

    options = _options(request)
    for name in [n for n in os.environ if n.startswith("HERMES_")]:
        monkeypatch.delenv(name)
    path = tmp_path / "hermes-home"
    monkeypatch.setenv("HERMES_HOME", str(path))
    if not options["bundled"]:
        hidden = tmp_path / "hermes-no-bundled-plugins"
        hidden.mkdir()
        monkeypatch.setenv("HERMES_BUNDLED_PLUGINS", str(hidden))
    home = HermesHome(
        path,
        workdir=tmp_path / "hermes-work",
        bundled=options["bundled"],
        entry_points=options["entry_points"],
    )
    request.node.stash[_HOME] = home
    return home


@pytest.fixture
def hermes_plugin_dir(hermes_home: HermesHome) -> Callable[..., Path]:
    """Write a plugin folder into the test's home, enable it, and return its path.

    ``hermes_plugin_dir("no-rm", CODE)`` writes ``__init__.py`` (dedented) and a
    ``plugin.yaml``; ``hermes_plugin_dir("no-rm", {"plugin.yaml": ..., "__init__.py": ...})``
    writes those files; ``hermes_plugin_dir(Path("no_rm"))`` copies your plugin's folder (keyed
    by its manifest's name). Keywords: ``key=``, ``manifest=`` (text, or fields to add),
    ``files=``, ``enabled=False``. A manager ``hermes_pm`` built already is reloaded.
    """
    return hermes_home.add_plugin


@pytest.fixture
def hermes_pm(request: pytest.FixtureRequest, hermes_home: HermesHome) -> Iterator[PluginManager]:
    """A strict ``PluginManager`` on the test's home: host tools, then its plugins, loaded.

    Strict: a plugin that fails to load, or whose hook raises, raises (with the plugin's
    key); a plugin implementing a hook name that does not exist fails the test, with the
    closest names. Only the plugins of the home load: bundled ones with
    ``@pytest.mark.hermes(bundled=True)``, pip-installed ones with ``entry_points=True``;
    ``strict=False`` isolates failures as a host does. Changes made through ``hermes_home``
    or ``hermes_plugin_dir`` afterwards reload it. Unloaded at tear-down.
    """
    from hermes_hooks.testing._harness import build_manager, reload_manager

    options = _options(request)
    pm = build_manager(hermes_home.path, options)
    stop = hermes_home.on_change(lambda: reload_manager(pm, options))
    try:
        yield pm
    finally:
        stop()
        pm.unload_all()


@pytest.fixture
def hermes_hook_recorder(hermes_pm: PluginManager) -> Iterator[HookRecorder]:
    """Records every hook call of ``hermes_pm``: arguments, each plugin's result, the outcome.

    ``calls(name)``, ``last(name)``, ``assert_called(name, **subset)``,
    ``assert_not_called(name)``, ``names()`` (every hook fired, in order, implemented or
    not), ``since(n)``, ``clear()``. Each ``HookCall`` has ``name``, ``kwargs`` (also
    ``call["tool_name"]``), ``impl_results`` (plugin, value), ``result`` (what pluggy
    returned) and ``error``.
    """
    from hermes_hooks.testing.recorder import HookRecorder

    recorder = HookRecorder(hermes_pm)
    try:
        yield recorder
    finally:
        recorder.close()


@pytest.fixture
def hermes_session(
    hermes_pm: PluginManager, hermes_hook_recorder: HookRecorder, hermes_home: HermesHome
) -> Iterator[ScriptedSession]:
    """A reference-host ``Session`` on ``hermes_pm`` whose model answers from a script.

    ``hermes_session.run("text", script=[tool_call("terminal", command="ls"), "answer"])``
    runs one turn and returns ``.text``, ``.tool_calls``, ``.tool_results``, ``.hooks`` (this
    turn's calls), ``.hook_names``, ``.requests`` and ``.recorder``. Steps the model never
    reaches, or a request past the end of the script, fail with the script shown next to the
    requests; a hook that raised during the turn is raised again. Tools run in
    ``hermes_home.workdir``; approvals are denied unless ``hermes_session.approver`` is set.
    """
    from hermes_hooks.testing.session import ScriptedSession

    session = ScriptedSession(hermes_pm, hermes_hook_recorder, workdir=hermes_home.workdir)
    try:
        yield session
    finally:
        session.close()


@pytest.fixture
def hermes_cli(hermes_home: HermesHome) -> Callable[..., CliOutcome]:
    """Run the ``hermes`` command in process on the test's home: ``hermes_cli("plugins", "list")``.

    Returns ``exit_code``, ``stdout``, ``stderr``, ``output`` and ``json``; ``str(outcome)``
    shows all of it, for assertion messages. Runs in ``hermes_home.workdir``; the environment
    and plugin modules are restored afterwards. ``input=`` feeds standard input.
    """

    def hermes(*args: str, input: str | None = None) -> CliOutcome:
        from hermes_hooks.testing.cli import run_hermes

        return run_hermes(
            args,
            home=hermes_home.path,
            cwd=hermes_home.workdir,
            input=input,
            entry_points=hermes_home.entry_points,
        )

    return hermes


@pytest.fixture
def hermes_run(hermes_cli: Callable[..., CliOutcome]) -> Callable[..., CliOutcome]:
    """Run ``hermes -z PROMPT`` (one agent turn) in process on the test's home.

    ``hermes_run("run `rm -rf build`")``; more arguments follow, e.g. ``"--json"``. The model
    is the one ``config.yaml`` names: ``offline`` (deterministic, no network) by default.
    """

    def run(prompt: str, *args: str, input: str | None = None) -> CliOutcome:
        return hermes_cli("-z", prompt, *args, input=input)

    return run
