"""``docs/reference/cli.md`` is generated from the click tree and must be regenerated on change."""

from __future__ import annotations

from pathlib import Path

from hermes_hooks.cli.docgen import JSON_OUTPUT, iter_commands, render

REFERENCE = Path(__file__).resolve().parent.parent / "docs" / "reference" / "cli.md"


def test_cli_reference_is_up_to_date() -> None:
    assert REFERENCE.read_text(encoding="utf-8") == render(), (
        "docs/reference/cli.md is out of date: run "
        "'python -m hermes_hooks.cli.docgen > docs/reference/cli.md'"
    )


def test_every_documented_json_output_belongs_to_a_command_with_json() -> None:
    with_json = {
        path
        for path, command, _ctx in iter_commands()
        if any("--json" in getattr(p, "opts", ()) for p in command.params)
    }
    assert set(JSON_OUTPUT) <= with_json
