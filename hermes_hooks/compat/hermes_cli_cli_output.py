"""Hermes' ``hermes_cli.cli_output``: the messages and prompts every ``setup_fn`` uses.

The same text, prefixes and colours as Hermes' (colour only where ``hermes_cli.colors`` says
the terminal takes it). ``prompt()`` returns the stripped answer, the default on an empty one,
and ``""`` on Ctrl-C or end of input; ``password=True`` reads without echo on a terminal.
"""

from __future__ import annotations

import sys

from hermes_hooks.compat.hermes_cli_colors import Colors, color
from hermes_hooks.compat.hermes_cli_secret_prompt import masked_secret_prompt

__all__ = [
    "line_input",
    "print_error",
    "print_header",
    "print_info",
    "print_success",
    "print_warning",
    "prompt",
    "prompt_yes_no",
]


def print_info(text: str) -> None:
    """Print a dim informational line, indented."""
    print(color(f"  {text}", Colors.DIM))


def print_success(text: str) -> None:
    """Print a green line with a ``✓``."""
    print(color(f"✓ {text}", Colors.GREEN))


def print_warning(text: str) -> None:
    """Print a yellow line with a ``⚠``."""
    print(color(f"⚠ {text}", Colors.YELLOW))


def print_error(text: str) -> None:
    """Print a red line with a ``✗``."""
    print(color(f"✗ {text}", Colors.RED))


def print_header(text: str) -> None:
    """Print a yellow header after a blank line."""
    print(color(f"\n  {text}", Colors.YELLOW))


def line_input(prompt_text: str) -> str:
    """Read a line of plain text: with prompt_toolkit's line editing on a terminal, else
    ``input()`` (a pipe, a test). A terminal prompt_toolkit cannot drive falls back to
    ``input()`` too; Ctrl-C and end of input are raised as ``input()`` raises them."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        return input(prompt_text)
    try:
        from prompt_toolkit import prompt as toolkit_prompt
        from prompt_toolkit.formatted_text import ANSI
    except ImportError:
        return input(prompt_text)
    try:
        return toolkit_prompt(ANSI(prompt_text))
    except (KeyboardInterrupt, EOFError):
        raise
    except Exception:  # a terminal that reports a TTY yet rejects prompt_toolkit's loop
        return input(prompt_text)


def prompt(question: str, default: str | None = None, password: bool = False) -> str:
    """Ask ``question`` (showing ``[default]``) and return the stripped answer.

    An empty answer gives ``default`` (or ``""``); Ctrl-C or end of input gives ``""``.
    """
    suffix = f" [{default}]" if default else ""
    display = color(f"  {question}{suffix}: ", Colors.YELLOW)
    try:
        value = masked_secret_prompt(display) if password else line_input(display)
    except (KeyboardInterrupt, EOFError):
        print()
        return ""
    value = value.strip()
    return value if value else (default or "")


def prompt_yes_no(question: str, default: bool = True) -> bool:
    """Ask a yes/no ``question``: an answer starting with ``y`` is yes, an empty one ``default``."""
    answer = prompt(f"{question} ({'Y/n' if default else 'y/N'})")
    if not answer:
        return default
    return answer.lower().startswith("y")
