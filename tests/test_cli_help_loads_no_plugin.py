"""``hermes --help``, ``--version`` and ``hermes <built-in command> --help`` import no plugin.

Asking for help or the version must be instant and harmless whatever is installed: a plugin whose
import writes a marker file is enabled, and the marker must not appear.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_support import GOOD, home, invoke
from plugin_builders import user_plugin, write_config

__all__ = ["home"]  # the fixture, imported for pytest

HELP_ASKED = [
    ("--help",),
    ("-h",),
    ("--version",),
    ("plugins", "--help"),
    ("plugins", "list", "--help"),
    ("hooks", "--help"),
    ("doctor", "--help"),
    ("chat", "--help"),
]


@pytest.mark.parametrize("args", HELP_ASKED, ids=" ".join)
def test_help_and_version_import_no_plugin(home: Path, args: tuple[str, ...]) -> None:
    marker = home / "imported"
    user_plugin(home, "spy", f"    open({str(marker)!r}, 'w').close()\n{GOOD}")
    write_config(home, ["spy"])
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    assert not marker.exists(), f"hermes {' '.join(args)} imported a plugin"
    # The spy does load when a command needs plugins: the marker is a real witness.
    invoke("plugins", "list")
    assert marker.exists()
