"""The methods of ``Hooks`` are generated from the hookspecs and their contracts, and kept so."""

from __future__ import annotations

import inspect
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from test_facade import SAMPLE_VALUES

from hermes_hooks import hookimpl
from hermes_hooks.calling.facade import RULES, Hooks
from hermes_hooks.calling.facadegen import FACADE, main, render, render_method
from hermes_hooks.plugins.manager import PluginManager
from hermes_hooks.spec import hookspecs
from hermes_hooks.spec.contract import Mode, contract, get_contract
from hermes_hooks.spec.hookspecs import HOOK_NAMES

REGENERATE = "run 'python -m hermes_hooks.calling.facadegen'"


def test_the_generated_methods_are_up_to_date() -> None:
    text = FACADE.read_text(encoding="utf-8")
    assert text == render(text), (
        f"the methods of Hooks in hermes_hooks/calling/facade.py are out of date: {REGENERATE}"
    )


def spec_arguments(name: str) -> list[str]:
    return list(inspect.signature(getattr(hookspecs, name)).parameters)


def defaults_of(name: str) -> Mapping[str, object]:
    return get_contract(getattr(hookspecs, name)).defaults


@pytest.mark.parametrize("name", HOOK_NAMES)
def test_each_method_takes_exactly_its_hookspecs_arguments(name: str) -> None:
    method, amethod = getattr(Hooks, name), getattr(Hooks, f"a{name}")
    params = dict(inspect.signature(method).parameters)
    del params["self"]
    assert all(p.kind is p.KEYWORD_ONLY for p in params.values())
    defaults = defaults_of(name)
    # In the hookspec's order, the required ones first.
    assert list(params) == sorted(spec_arguments(name), key=lambda a: a in defaults)
    assert inspect.signature(amethod).parameters == inspect.signature(method).parameters


@pytest.mark.parametrize("name", HOOK_NAMES)
def test_every_argument_is_required_or_has_its_contracts_default(name: str) -> None:
    defaults = defaults_of(name)
    assert set(defaults) <= set(spec_arguments(name))
    params = inspect.signature(getattr(Hooks, name)).parameters
    for argument in spec_arguments(name):
        default = params[argument].default
        if argument not in defaults:
            assert default is inspect.Parameter.empty, f"{name}({argument}=) is required"
        elif isinstance(defaults[argument], list | dict):
            assert default is None, f"{name}({argument}=) stands for a fresh empty one"
        else:
            expected = defaults[argument]
            assert (type(default), default) == (type(expected), expected), f"{name}({argument}=)"


FRESH = [
    (name, argument)
    for name in HOOK_NAMES
    for argument, value in defaults_of(name).items()
    if isinstance(value, list | dict)
]


@pytest.mark.parametrize(("name", "argument"), FRESH)
def test_an_empty_list_or_dict_default_is_a_fresh_one_per_call(
    tmp_path: Path, name: str, argument: str
) -> None:
    seen: list[object] = []
    # An implementation that takes just this argument: pluggy reads the names from the code.
    namespace: dict[str, Any] = {}
    exec(f"def impl(self, {argument}):\n    seen.append({argument})", {"seen": seen}, namespace)
    pm = PluginManager(tmp_path / "home")
    pm.register(type("Spy", (), {name: hookimpl(namespace["impl"])})(), "spy")
    required: dict[str, Any] = {}
    for param in inspect.signature(getattr(Hooks, name)).parameters.values():
        if param.name != "self" and param.default is inspect.Parameter.empty:
            required[param.name] = SAMPLE_VALUES.get(param.name, "x")
    hooks = Hooks(pm)
    getattr(hooks, name)(**required)
    getattr(hooks, name)(**required)
    empty = defaults_of(name)[argument]
    assert seen == [empty, empty]
    assert seen[0] is not seen[1]


# -- the generator -------------------------------------------------------------------------------


@contract(Mode.OBSERVE, defaults={"note": "", "tags": [], "count": 1})
def on_mystery(session_id: str, note: str, tags: list[str], count: int | None) -> None:
    """Fires when something mysterious happens."""


def test_an_observer_is_written_from_its_hookspec_and_contract_alone() -> None:
    assert render_method(on_mystery) == [
        '    def on_mystery(self, *, session_id: str, note: str = "", '
        "tags: list[str] | None = None,",
        "            count: int | None = 1) -> None:",
        '        return self._fire("on_mystery", locals())',
        "    aon_mystery = _async(on_mystery)",
    ]


def test_a_hook_with_an_answer_needs_an_entry_in_the_table() -> None:
    @contract(Mode.FIRST_RESULT, defaults={"session_id": ""})
    def pre_mystery(session_id: str) -> str | None:
        """Fires before something mysterious happens."""

    with pytest.raises(ValueError, match=r"hook pre_mystery: a 'first result' hook needs an entry"):
        render_method(pre_mystery)


def test_a_hook_with_an_answer_is_its_signature_and_one_line_naming_its_rule() -> None:
    lines = render_method(hookspecs.transform_terminal_output)
    assert lines[-5:] == [
        '        if not self._implemented("transform_terminal_output"):',
        "            return output",
        '        answer: str = self._run("transform_terminal_output", locals())',
        "        return answer",
        "    atransform_terminal_output = _async(transform_terminal_output)",
    ]
    assert RULES["transform_terminal_output"].returns == "str"


def test_every_hook_with_an_answer_is_in_the_table_and_no_observer_is() -> None:
    modes = {name: get_contract(getattr(hookspecs, name)).mode for name in HOOK_NAMES}
    assert set(RULES) == {name for name, mode in modes.items() if mode is not Mode.OBSERVE}


def test_render_needs_both_markers() -> None:
    with pytest.raises(ValueError, match=r"facade.py: expected the line .*found neither"):
        render("class Hooks:\n    pass\n")


def test_check_finds_a_stale_file_and_writing_brings_it_up_to_date(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    facade = tmp_path / "facade.py"
    text = FACADE.read_text(encoding="utf-8")
    stale = text.replace('child_role: str = "leaf"', 'child_role: str = "root"')
    assert stale != text
    facade.write_text(stale, encoding="utf-8")
    assert main(["--check"], path=facade) == 1
    assert REGENERATE in capsys.readouterr().err
    assert facade.read_text(encoding="utf-8") == stale
    assert main([], path=facade) == 0
    assert facade.read_text(encoding="utf-8") == text
    assert main(["--check"], path=facade) == 0


def test_the_module_runs_and_checks_the_committed_facade() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "hermes_hooks.calling.facadegen", "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, "")


# -- the defaults in the contract ----------------------------------------------------------------


def test_a_default_must_name_an_argument_of_the_hookspec() -> None:
    with pytest.raises(
        ValueError,
        match=r"hook on_mystery: the default for 'sesion_id' names no argument of the hookspec "
        r"\(its arguments: session_id, note, tags, count\); did you mean 'session_id'\?",
    ):
        contract(Mode.OBSERVE, defaults={"sesion_id": ""})(on_mystery)


@pytest.mark.parametrize("value", [["a"], {"k": "v"}, ("a",), object()])
def test_a_default_must_not_be_a_value_calls_would_share(value: object) -> None:
    with pytest.raises(
        ValueError,
        match=r"hook on_mystery: the default for 'tags' must be None, a bool, int, float or str, "
        r"or an empty \[\] or \{\} \(a fresh one per call\); got ",
    ):
        contract(Mode.OBSERVE, defaults={"tags": value})(on_mystery)


def test_the_defaults_are_read_only_and_the_contract_stays_hashable() -> None:
    found = get_contract(hookspecs.pre_tool_call)
    with pytest.raises(TypeError):
        found.defaults["task_id"] = "t1"  # type: ignore[index]
    assert hash(found) == hash(get_contract(hookspecs.pre_tool_call))
