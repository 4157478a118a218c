"""Heavy libraries are imported when something needs them, not at start-up: asyncio when an
awaitable or a bound needs it; TLS, HTTP, HTML, images and the config writer not for a listing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

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


#: Libraries that cost start-up time and that listing plugins never needs: HTTP and TLS (web,
#: models), HTML parsing (web_extract), images, the round-trip YAML writer and the file lock
#: (config writes), JSON Schema (the doctor), prompt_toolkit (the chat), python-dotenv (read
#: only when a .env exists).
_HEAVY = ("ssl", "httpx", "bs4", "markdownify", "PIL", "ruamel", "filelock", "jsonschema",
          "prompt_toolkit", "asyncio", "sqlite3", "fastapi", "starlette", "uvicorn",
          "jwt", "dotenv")  # fmt: skip

_LIST = """
import sys
from hermes_hooks.cli.main import main

try:
    main(["plugins", "list", "--all"])
except SystemExit as exc:
    assert exc.code in (0, None), exc.code
heavy = sorted(name for name in sys.argv[1:] if name in sys.modules)
assert not heavy, f"'hermes plugins list' imported {heavy}"
"""


def test_listing_plugins_imports_no_heavy_library(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
    env["HERMES_HOME"] = str(tmp_path / "home")
    done = subprocess.run(
        [sys.executable, "-c", _LIST, *_HEAVY],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
