"""Tool schemas are checked with jsonschema: by ``plugins doctor``, and in strict mode."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from plugin_builders import PluginHome, home, info

from hermes_hooks.admin.doctor import candidate_from_path, check_plugin
from hermes_hooks.registries.schemas import schema_problem

__all__ = ["home"]


def tool_plugin(parameters: object, handler: str = "lambda args, **kw: 'ok'") -> str:
    return (
        "def register(ctx):\n"
        f"    ctx.register_tool('t', 'demo', {{'name': 't', 'parameters': {parameters!r}}}, "
        f"{handler})\n"
    )


@pytest.mark.parametrize(
    ("parameters", "problem"),
    [
        ({"type": "object", "properties": {"n": {"type": "integr"}}}, "parameters at properties/n"),
        ({"type": "object", "required": "n"}, "parameters at required: 'n' is not of type"),
        ({"type": "objekt"}, "must be of type 'object', found type 'objekt'"),
        ("object", "must be a JSON Schema object, found str"),
    ],
)
def test_a_schema_a_model_api_would_refuse_is_found(parameters: Any, problem: str) -> None:
    found = schema_problem({"name": "t", "parameters": parameters})
    assert found is not None
    assert problem in found


def test_a_fine_schema_has_no_problem() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    assert schema_problem({"name": "t", "parameters": schema}) is None
    assert schema_problem({"name": "t"}) is None


def test_the_doctor_reports_bad_schemas_and_handlers_without_kwargs(home: PluginHome) -> None:
    folder = home.add_plugin(
        "sloppy",
        "def register(ctx):\n"
        "    ctx.register_tool('typo', 'demo', {'name': 'typo', 'parameters': "
        "{'type': 'object', 'properties': {'n': {'type': 'integr'}}}}, lambda args, **kw: 'x')\n"
        "    ctx.register_tool('narrow', 'demo', {'name': 'narrow'}, lambda args: 'x')\n",
    )
    report = check_plugin(candidate_from_path(Path(folder)))
    messages = {f.check: f.message for f in report.findings if f.level == "error"}
    assert (
        "tool 'typo': its schema is not a valid JSON Schema: parameters at properties/n"
        in (messages["tool-schema"])
    )
    assert "tool 'narrow': its handler" in messages["tool-handler"]
    assert "takes no **kwargs" in messages["tool-handler"]


def test_strict_mode_refuses_a_bad_schema_and_isolation_keeps_it(home: PluginHome) -> None:
    home.add_plugin("sloppy", tool_plugin({"type": "object", "required": "n"}))
    lenient = home.load()
    assert info(lenient, "sloppy").status == "enabled"
    strict = home.manager()
    strict.strict = True
    with pytest.raises(Exception, match=r"not a valid JSON Schema \(strict mode refuses it\)"):
        strict.discover_and_load()
