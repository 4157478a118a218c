"""``docs/reference/hooks.md`` is generated from the hookspecs and must be regenerated on change."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_hooks.spec import hookspecs
from hermes_hooks.spec.hookdoc import hook_docs, parse_docstring, render, render_annotation

REFERENCE = Path(__file__).resolve().parent.parent / "docs" / "reference" / "hooks.md"


def test_hook_reference_is_up_to_date() -> None:
    assert REFERENCE.read_text(encoding="utf-8") == render(), (
        "docs/reference/hooks.md is out of date: run "
        "'python -m hermes_hooks.spec.hookdoc > docs/reference/hooks.md'"
    )


def test_every_hook_has_a_section_with_every_argument_in_signature_order() -> None:
    docs = {doc.name: doc for doc in hook_docs()}
    assert set(docs) == set(hookspecs.VALID_HOOKS)
    for name, doc in docs.items():
        spec = getattr(hookspecs, name)
        expected = list(spec.__code__.co_varnames[: spec.__code__.co_argcount])
        assert [param for param, _type, _text in doc.params] == expected, name
        assert doc.returns, name
        assert doc.policy, name
        assert doc.opening, name


def test_a_docstring_becomes_opening_table_returns_policy_and_the_rest() -> None:
    doc = parse_docstring(
        "h",
        "Fires when it fires.\n\n"
        ":param a: the first,\n    on two lines.\n"
        ":param b: the second.\n:type b: `Any` (the host's event)\n"
        ":returns: `None`, or:\n\n    - a list item.\n\n"
        "Error policy: Open.\n\n```python\nx = 1\n```",
        {"a": "str", "b": "Any"},
    )
    assert doc.opening == "Fires when it fires."
    assert doc.params == (
        ("a", "`str`", "the first,\non two lines."),
        ("b", "`Any` (the host's event)", "the second."),
    )
    assert doc.returns == "`None`, or:\n\n- a list item."
    assert doc.policy == "Open."
    assert doc.rest == "```python\nx = 1\n```"


@pytest.mark.parametrize(
    ("annotation", "shown"),
    [
        ("str", "`str`"),
        ('Literal["ok", "error"]', '`"ok" | "error"`'),
        ("dict[str, Any] | None", "`dict[str, Any] | None`"),
    ],
)
def test_annotations_are_shown_as_a_reader_writes_them(annotation: str, shown: str) -> None:
    assert render_annotation(annotation) == shown
