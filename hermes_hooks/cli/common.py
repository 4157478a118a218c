"""What every ``hermes`` command shares: the home, the manager, prompts, JSON and fitting text."""

from __future__ import annotations

import json
import os
import shutil
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import click

from hermes_hooks.plugins.config import get_hermes_home

if TYPE_CHECKING:
    from hermes_hooks.plugins.manager import PluginManager

__all__ = [
    "build_manager",
    "confirm",
    "echo_json",
    "fit_table",
    "get_home",
    "is_terminal",
    "terminal_width",
    "wrap",
]



def get_home(ctx: click.Context) -> Path:
    """Return the Hermes home chosen by ``--home``, ``$HERMES_HOME`` or the default."""
    root = ctx.find_root()
    home = root.meta.get("hermes.home") or root.params.get("home")
    return Path(home).expanduser() if home else get_hermes_home()


def build_manager(ctx: click.Context, *, load: bool = True) -> PluginManager:
    """Return a manager on the command's home, with ``$HERMES_HOME/.env`` applied.

    :param load: discover and load the plugins (else the manager has only read its config).
    """
    from hermes_hooks.admin.envfile import apply_env_file
    from hermes_hooks.host.runtime import create_manager

    cached: PluginManager | None = ctx.find_root().meta.get("hermes.manager")
    if cached is not None:
        if load:
            cached.discover_and_load()
            from hermes_hooks.host.shell_hooks import install_shell_hooks

            install_shell_hooks(cached)
        return cached
    home = get_home(ctx)
    apply_env_file(home)
    # A plugin install killed half-way (--force without an atomic swap) is put right first.
    from hermes_hooks.admin.install import recover_interrupted_installs

    for name in recover_interrupted_installs(home / "plugins"):
        warn(f"plugin {name!r} was restored from an install that did not finish")
    # The same manager the agent host builds: its tools are host tools before any plugin
    # loads, so a plugin's status here is the status it has in `hermes -z`.
    from hermes_hooks.cli.lifetime import watch

    pm = create_manager(home, load=False)
    watch(pm)  # before plugins load: what they leave running is named at the end
    if load:
        pm.discover_and_load()
        from hermes_hooks.host.shell_hooks import install_shell_hooks

        install_shell_hooks(pm)  # the hooks: of config.yaml, once approved
    ctx.find_root().meta["hermes.manager"] = pm
    return pm


def is_terminal() -> bool:
    """Tell whether a person can answer a question: stdin and stdout are terminals."""
    return sys.stdin.isatty() and sys.stdout.isatty()


def confirm(question: str, answer: bool | None = None) -> bool:
    """Return *answer* when given, else ask on a terminal (default no); no terminal means no."""
    if answer is not None:
        return answer
    if not is_terminal():
        return False
    return click.confirm(question, default=False)


def echo_json(data: Any) -> None:
    """Print *data* as indented JSON with a trailing newline (the stable ``--json`` format)."""
    click.echo(json.dumps(data, indent=2, ensure_ascii=False))


MIN_WIDTH: Final = 20


def terminal_width() -> int | None:
    """Return the width to fit: ``COLUMNS``, else the terminal's; ``None`` when not a terminal.

    Output that goes to a file or a pipe is never clipped or wrapped (as ``pip list`` does):
    ``hermes plugins list | grep ...`` sees whole descriptions and errors.
    """
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return max(int(columns), MIN_WIDTH)
    if not sys.stdout.isatty():
        return None
    return max(shutil.get_terminal_size().columns, MIN_WIDTH)


def wrap(
    text: str, width: int | None, indent: str = "", subsequent: str | None = None
) -> list[str]:
    """Wrap *text* to *width* without breaking words or paths (a longer word overflows).

    With no width (the output is not a terminal), the text stays one line.
    """
    if width is None:
        return [(indent + " ".join(text.split())).rstrip()]
    return textwrap.wrap(
        text,
        width=width,
        initial_indent=indent,
        subsequent_indent=indent if subsequent is None else subsequent,
        break_long_words=False,
        break_on_hyphens=False,
    ) or [indent.rstrip()]


def _clip(cell: str, width: int) -> str:
    return cell if len(cell) <= width else cell[: max(width - 1, 0)] + "…"


def fit_table(
    headers: Sequence[str], rows: Sequence[Sequence[str]], width: int | None
) -> list[str]:
    """Lay out a table whose last column shrinks (and is clipped with ``…``) to fit *width*.

    The other columns keep their widths, so keys stay whole and copyable; when even they do
    not fit, the last column is dropped. With no width (not a terminal), nothing is clipped.
    """
    table = [list(headers), *(list(row) for row in rows)]
    widths = [max(len(row[i]) for row in table) for i in range(len(headers) - 1)]
    fixed = sum(widths) + 2 * (len(widths))
    room = width - fixed if width is not None else max(len(row[-1]) for row in table)
    lines = []
    for row in table:
        cells = [cell.ljust(widths[i]) for i, cell in enumerate(row[:-1])]
        last = _clip(row[-1], room) if room >= 8 else ""
        lines.append("  ".join([*cells, last]).rstrip())
    return lines


def warn(message: str) -> None:
    """Print a one-line warning on stderr."""
    click.echo(f"Warning: {message}", err=True)


__all__ += ["warn"]
