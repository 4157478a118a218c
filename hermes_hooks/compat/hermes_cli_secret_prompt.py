"""Hermes' ``hermes_cli.secret_prompt``: reading a secret at a prompt.

On a terminal the secret is read without echo (``getpass``); Hermes also echoes a ``*`` per
character typed, which is not done here. Without a terminal (a pipe, a test) the line is read
from standard input, as Hermes' ``getpass`` fallback does, without opening ``/dev/tty``.
"""

from __future__ import annotations

import getpass
import sys

__all__ = ["masked_secret_prompt"]


def _is_tty(stream: object) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty()) if callable(isatty) else False
    except (OSError, ValueError):
        return False


def masked_secret_prompt(prompt: str, *, mask: str = "*") -> str:
    """Show ``prompt`` and return the secret typed (without its newline).

    :param mask: accepted as Hermes takes it (no mask is echoed here).
    :raises EOFError: standard input ended before a line.
    """
    if _is_tty(sys.stdin) and _is_tty(sys.stdout):
        return getpass.getpass(prompt)
    sys.stdout.write(prompt)
    sys.stdout.flush()
    line = sys.stdin.readline()
    if not line:
        raise EOFError("end of input at the secret prompt")
    return line.rstrip("\r\n")
