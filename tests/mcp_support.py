"""Shared pieces of the MCP tests: the demo server's config entry and a blocking plugin.

The demo server is ``tests/mcp_demo_server.py``, written on the official ``mcp`` SDK; the tests
that start it skip when the ``mcp`` extra is not installed.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Final

import pytest

DEMO_SERVER: Final = Path(__file__).with_name("mcp_demo_server.py")

requires_mcp = pytest.mark.skipif(
    __import__("importlib.util").util.find_spec("mcp") is None,
    reason="the 'mcp' extra is not installed (pip install '.[test]' installs it)",
)

NO_WIPE: Final = """\
    from hermes_hooks import hookimpl

    @hookimpl
    def pre_tool_call(tool_name, args):
        if tool_name.endswith("wipe_disk"):
            return {"action": "block", "message": "no-wipe: wiping disks is not allowed"}
        return None
    """
"""A ``pre_tool_call`` plugin that blocks the demo server's ``wipe-disk`` tool."""


def demo_entry(**extra: Any) -> dict[str, Any]:
    """Return an ``mcp_servers`` entry that starts the demo server over stdio."""
    return {"command": sys.executable, "args": [str(DEMO_SERVER)], **extra}


README: Final = Path(__file__).resolve().parent.parent / "README.md"


def readme_block(marker: str, language: str) -> str:
    """Return the first fenced ``language`` block of the README after the line with ``marker``."""
    import re

    text = README.read_text(encoding="utf-8")
    match = re.compile(rf"```{language}\n(.*?)```", re.S).search(text, text.index(marker))
    assert match is not None, f"no {language} block after {marker!r}"
    return match.group(1)


def add_readme_no_rm(home: Path) -> None:
    """Write the README's ``no-rm`` plugin into ``home`` (enabling it is the caller's)."""
    from plugin_builders import user_plugin

    manifest = readme_block("no-rm/plugin.yaml`:", "yaml")
    user_plugin(home, "no-rm", readme_block("no-rm/__init__.py`:", "python"), manifest=manifest)
