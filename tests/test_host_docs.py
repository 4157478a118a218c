"""The host documentation's code runs: every python block of the how-to, in page order."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from plugin_builders import isolated_home

DOCS = Path(__file__).resolve().parent.parent / "docs"
_BLOCK = re.compile(r"^```python\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def python_blocks(page: Path) -> list[str]:
    return _BLOCK.findall(page.read_text(encoding="utf-8"))


def test_writing_a_host_examples_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolated_home(tmp_path, monkeypatch)
    monkeypatch.chdir(tmp_path)
    page = DOCS / "how-to" / "writing-a-host.md"
    blocks = python_blocks(page)
    assert len(blocks) >= 6
    namespace: dict[str, object] = {}
    for number, block in enumerate(blocks, 1):
        exec(compile(block, f"{page.name}, python block {number}", "exec"), namespace)


def test_facade_reference_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hermes_hooks.host import create_manager

    isolated_home(tmp_path, monkeypatch)
    page = DOCS / "reference" / "facade.md"
    namespace: dict[str, object] = {"pm": create_manager()}
    for number, block in enumerate(python_blocks(page), 1):
        exec(compile(block, f"{page.name}, python block {number}", "exec"), namespace)
    decision = namespace["decision"]
    assert getattr(decision, "action", None) == "allow"


def test_the_turn_diagram_lists_the_hooks_in_the_order_the_host_fires_them() -> None:
    from host_helpers import ONE_TOOL_TURN

    text = (DOCS / "explanation" / "turn.md").read_text(encoding="utf-8")
    diagram = text[text.index("```mermaid") : text.index("```", text.index("```mermaid") + 3)]
    # Each hook of the pinned order appears after the previous one (the loop is drawn once).
    position = 0
    for name in dict.fromkeys(ONE_TOOL_TURN):
        position = diagram.index(name, position)
