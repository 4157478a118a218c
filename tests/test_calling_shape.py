"""The calling layer stays plain: no function in ``hermes_hooks/calling/`` over 60 lines, and
the facade's generated methods stay marked as generated."""

from __future__ import annotations

import ast
from pathlib import Path

import hermes_hooks.calling
from hermes_hooks.calling.facadegen import BEGIN, END, FACADE

CALLING = Path(hermes_hooks.calling.__file__).parent
MAX_LINES = 60


def test_no_function_of_the_calling_layer_is_over_60_lines() -> None:
    long = []
    for path in sorted(CALLING.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > MAX_LINES:
                    long.append(f"{path.name}:{node.lineno} {node.name} ({lines} lines)")
    assert long == [], f"split these into functions of at most {MAX_LINES} lines: {long}"


def test_the_generated_methods_of_the_facade_are_marked_generated() -> None:
    text = FACADE.read_text(encoding="utf-8")
    assert text.count(BEGIN + "\n") == 1
    assert text.count(END + "\n") == 1
    assert "generated" in BEGIN
    assert "do not edit" in BEGIN
