"""asyncio is imported only when an awaitable or a bound needs it, not at start-up."""

from __future__ import annotations

import subprocess
import sys

_CHECK = """
import sys
import hermes_hooks.plugins.manager
from hermes_hooks.calling import aio as _aio
from hermes_hooks.plugins.manager import PluginManager

pm = PluginManager("/nonexistent/hermes-home")
assert "asyncio" not in sys.modules, "importing the manager imported asyncio"
assert _aio.pass_through() == (KeyboardInterrupt,)
import asyncio
assert _aio.pass_through() == (KeyboardInterrupt, asyncio.CancelledError)
"""


def test_the_manager_imports_without_asyncio() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _CHECK], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
