"""Hermes' ``hermes_cli._subprocess_compat`` (the part platform plugins use): spawning
helpers that behave on Windows and POSIX alike.

On POSIX the Windows flags are 0 and detaching is ``start_new_session=True``; Node commands
(``npm``, ``npx``) are resolved to their full path, which on Windows routes a ``.cmd`` shim.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "IS_WINDOWS",
    "resolve_node_command",
    "restore_ambient_pythonpath",
    "split_command_line",
    "suppress_platform_ver_console",
    "windows_detach_flags",
    "windows_detach_flags_without_breakaway",
    "windows_detach_popen_kwargs",
    "windows_hide_flags",
]

IS_WINDOWS = sys.platform == "win32"

_CREATE_NEW_PROCESS_GROUP = 0x00000200
_CREATE_NO_WINDOW = 0x08000000
_CREATE_BREAKAWAY_FROM_JOB = 0x01000000


def split_command_line(line: str) -> list[str]:
    """Split a command line into tokens; on Windows, without treating ``\\`` as an escape.

    :raises ValueError: unbalanced quotes.
    """
    if not IS_WINDOWS:
        return shlex.split(line)
    tokens: list[str] = []
    for token in shlex.split(line, posix=False):
        if len(token) >= 2 and token[0] == token[-1] and token[0] in ("'", '"'):
            token = token[1:-1]
        tokens.append(token)
    return tokens


def restore_ambient_pythonpath(env: Mapping[str, str]) -> dict[str, str]:
    """Return ``env`` with this process's ``PYTHONPATH`` put back in front."""
    merged = dict(env)
    ambient = os.environ.get("PYTHONPATH")
    if ambient:
        existing = merged.get("PYTHONPATH", "")
        merged["PYTHONPATH"] = ambient + os.pathsep + existing if existing else ambient
    return merged


def resolve_node_command(name: str, argv: Sequence[str]) -> list[str]:
    """Return ``[full path of name, *argv]`` (the bare name when it is not on ``PATH``)."""
    return [shutil.which(name) or name, *argv]


def windows_detach_flags() -> int:
    """The creation flags that detach a child on Windows; 0 elsewhere."""
    if not IS_WINDOWS:
        return 0
    return _CREATE_NEW_PROCESS_GROUP | _CREATE_NO_WINDOW | _CREATE_BREAKAWAY_FROM_JOB


def windows_detach_flags_without_breakaway() -> int:
    """:func:`windows_detach_flags` without leaving the job object; 0 elsewhere."""
    return _CREATE_NEW_PROCESS_GROUP | _CREATE_NO_WINDOW if IS_WINDOWS else 0


def windows_hide_flags() -> int:
    """The creation flag that hides a child's console on Windows; 0 elsewhere."""
    return _CREATE_NO_WINDOW if IS_WINDOWS else 0


def suppress_platform_ver_console() -> None:
    """Keep ``platform`` from flashing a console on Windows; nothing elsewhere."""
    if not IS_WINDOWS:
        return
    import platform

    if hasattr(platform, "_syscmd_ver"):

        def quiet(
            system: str = "",
            release: str = "",
            version: str = "",
            supported_platforms: Any = ("win32", "win16", "dos"),
        ) -> tuple[str, str, str]:
            return system, release, version

        platform._syscmd_ver = quiet


def windows_detach_popen_kwargs() -> dict[str, Any]:
    """``Popen`` keyword arguments that detach a child: creation flags on Windows,
    ``start_new_session=True`` elsewhere."""
    if IS_WINDOWS:
        return {"creationflags": windows_detach_flags()}
    return {"start_new_session": True}
