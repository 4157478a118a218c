"""Is a tool's ``parameters`` a JSON Schema a model API accepts? Checked with ``jsonschema``.

A schema with ``"type": "objekt"`` or ``"required": "n"`` registers fine and fails only later,
at the model's API. :func:`schema_problem` finds that first, with ``jsonschema``'s own
meta-schema check (``check_schema``); ``hermes plugins doctor`` runs it on every tool a plugin
registers, and strict mode (tests, ``HERMES_PLUGINS_STRICT=1``) refuses such a tool.
``jsonschema`` is imported on the first check, never at start-up.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["schema_problem"]


def schema_problem(schema: Mapping[str, Any]) -> str | None:
    """Return what is wrong with a tool schema's ``parameters``, or ``None`` when nothing is.

    :param schema: the tool schema as registered (``{"name", "description", "parameters"}``).
    """
    from jsonschema import SchemaError
    from jsonschema.validators import validator_for

    parameters = schema.get("parameters")
    if parameters is None:
        return None
    if not isinstance(parameters, Mapping):
        return f"parameters must be a JSON Schema object, found {type(parameters).__name__}"
    if parameters.get("type", "object") != "object":
        return f"parameters must be of type 'object', found type {parameters.get('type')!r}"
    try:
        validator_for(parameters).check_schema(dict(parameters))
    except SchemaError as exc:
        path = "/".join(str(part) for part in exc.path) or "(top)"
        return f"parameters at {path}: {exc.message}"
    return None
