"""What every ``hermes`` command shares: the home, the manager, prompts, JSON and fitting text."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import sys
import textwrap
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final

import click

from hermes_hooks.plugins.config import get_hermes_home

if TYPE_CHECKING:
    from hermes_hooks.plugins.manager import PluginManager

__all__ = [
    "build_manager",
    "confirm",
    "connect_mcp",
    "echo_json",
    "fit_rows",
    "fit_table",
    "get_home",
    "is_terminal",
    "progress",
    "styled",
    "use_color",
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

    watch_config_messages(ctx, home)
    pm = create_manager(home, load=False)
    report_config(ctx, home)
    watch(pm)  # before plugins load: what they leave running is named at the end
    if load:
        pm.discover_and_load()
        from hermes_hooks.host.runtime import apply_secrets
        from hermes_hooks.host.shell_hooks import install_shell_hooks

        install_shell_hooks(pm)  # the hooks: of config.yaml, once approved
        apply_secrets(pm)  # the enabled secret sources, after .env
    ctx.find_root().meta["hermes.manager"] = pm
    return pm


def connect_mcp(pm: PluginManager) -> None:
    """Connect to the servers of ``mcp_servers:`` and register their tools (when any is set).

    The sessions end (stdio servers are stopped) when the command's context closes.
    """
    if "mcp_servers" not in pm.config:
        _offer_reload_mcp(pm)  # /reload-mcp still picks up servers added later
        return  # the common case: nothing to import
    from hermes_hooks.bridges.mcp_client import install_mcp

    client = install_mcp(pm)
    ctx = click.get_current_context(silent=True)
    if client is not None and ctx is not None:
        ctx.find_root().call_on_close(client.close)


def _offer_reload_mcp(pm: PluginManager) -> None:
    from hermes_hooks.registries.base import HOST

    if pm.commands.get("reload-mcp") is not None:
        return

    def reload_command(raw_args: str = "") -> str:
        from hermes_hooks.bridges.mcp_client import reload_mcp

        return reload_mcp(pm)

    pm.commands.register_command(
        "reload-mcp",
        reload_command,
        description="read mcp_servers again and reconnect the MCP servers",
        owner=HOST,
    )


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


def fit_rows(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    width: int | None,
    styles: Mapping[int, Callable[[str], str]] | None = None,
) -> tuple[list[str], list[list[str]]]:
    """Lay out a table to *width*: the header's lines, and the lines of each row.

    Every column but the last keeps its width, so keys stay whole and copyable; the last
    column wraps at whole words into the room left (continued under itself), or, when less
    than a third of the width is left, goes on its own lines under the row. Nothing is clipped
    and no column is dropped. With no width (not a terminal), each row is one line.

    :param styles: by column index, a function styling a cell (colour) after it is padded.
    """
    table = [list(headers), *(list(row) for row in rows)]
    widths = [max(len(row[i]) for row in table) for i in range(len(headers) - 1)]
    fixed = sum(widths) + 2 * len(widths)
    room = None if width is None else width - fixed
    below = room is not None and width is not None and room < max(width // 3, 12)
    laid: list[list[str]] = []
    for number, row in enumerate(table):
        cells = [cell.ljust(widths[i]) for i, cell in enumerate(row[:-1])]
        if styles and number > 0:
            cells = [styles[i](c) if i in styles else c for i, c in enumerate(cells)]
        head = "  ".join(cells)
        last = row[-1]
        if room is None or width is None or len(last) <= (room if not below else -1):
            laid.append([f"{head}  {last}".rstrip()])
        elif below:  # the last column under the row (its title under the titles)
            laid.append([head.rstrip(), *wrap(last, width, "    ")])
        else:
            parts = wrap(last, room)
            pad = " " * (fixed)
            laid.append([f"{head}  {parts[0]}".rstrip(), *(pad + part for part in parts[1:])])
    return laid[0], laid[1:]


def fit_table(
    headers: Sequence[str], rows: Sequence[Sequence[str]], width: int | None
) -> list[str]:
    """Lay out a table to *width* (see :func:`fit_rows`), as a list of lines."""
    header, laid = fit_rows(headers, rows, width)
    return [*header, *(line for lines in laid for line in lines)]


def use_color(ctx: click.Context | None = None, stream: IO[str] | None = None) -> bool:
    """Tell whether to colour: ``--color always|never``, else ``NO_COLOR`` (any value) turns
    it off, ``FORCE_COLOR`` on, and otherwise only a terminal gets colour."""
    ctx = ctx or click.get_current_context(silent=True)
    choice = ctx.find_root().meta.get("hermes.color", "auto") if ctx is not None else "auto"
    if choice != "auto":
        return bool(choice == "always")
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    target = stream if stream is not None else sys.stdout
    return target.isatty() and os.environ.get("TERM") != "dumb"


def styled(text: str, **style: Any) -> str:
    """*text* in a style (``fg="red"``); click strips it again where colour is off."""
    return click.style(text, **style)


@contextlib.contextmanager
def progress(label: str) -> Iterator[None]:
    """Show *label* with a spinner on stderr while the block runs, on a terminal only (a clone,
    pip, a slow doctor); nothing is written into a pipe or a file."""
    if not sys.stderr.isatty():
        yield
        return
    from hermes_hooks.cli.chatdisplay import ChatDisplay

    display = ChatDisplay(sys.stderr, terminal=True, color=False)
    display.working(label)
    try:
        yield
    finally:
        display.quiet()


def warn(message: str) -> None:
    """Print a one-line warning on stderr (a message already shown in this run is not)."""
    ctx = click.get_current_context(silent=True)
    if ctx is not None:
        shown: set[str] = ctx.find_root().meta.setdefault("hermes.reported", set())
        if message in shown:
            return
        shown.add(message)
    click.echo(f"{styled('Warning', fg='yellow')}: {message}", err=True)


def report_once(ctx: click.Context, level: str, message: str) -> None:
    """Print a config problem once per run; an error makes the command exit 1 at its end."""
    root = ctx.find_root()
    shown: set[str] = root.meta.setdefault("hermes.reported", set())
    bare = message.removeprefix("Warning: ")
    if bare in shown:
        return
    shown.add(bare)
    if level == "error":
        root.meta["hermes.config_error"] = bare
    if root.meta.get("hermes.config_in_report"):
        return  # the command's own report (hermes doctor) lists it
    label = styled("Error", fg="red") if level == "error" else styled("Warning", fg="yellow")
    click.echo(f"{label}: {bare}", err=True)


class _ConfigMessages(logging.Filter):
    """Routes the library's log records about config.yaml through :func:`report_once`."""

    def __init__(self, ctx: click.Context, path: str) -> None:
        super().__init__()
        self.ctx = ctx
        self.path = path

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if not message.startswith(self.path):
            return True
        report_once(self.ctx, "error" if record.levelno >= logging.ERROR else "warning", message)
        return False


def watch_config_messages(ctx: click.Context, home: Path) -> None:
    """Have the library's messages about *home*'s config.yaml shown once, as ``Error:``."""
    from hermes_hooks.plugins.configfile import config_path

    root = ctx.find_root()
    if root.meta.get("hermes.config_filter") is not None:
        return
    path = str(config_path(home))
    logger = logging.getLogger("hermes_hooks")
    installed = _ConfigMessages(root, path)
    logger.addFilter(installed)
    root.meta["hermes.config_filter"] = installed
    root.call_on_close(lambda: logger.removeFilter(installed))


def report_config(ctx: click.Context, home: Path) -> None:
    """Report *home*'s config problems once: its typos and wrong values (``hermes config
    check``) as warnings, a file that cannot be read as an error (the command exits 1)."""
    from hermes_hooks.errors import ConfigError
    from hermes_hooks.plugins.configfile import config_path, load_config
    from hermes_hooks.plugins.settings import check_config

    try:
        config = load_config(home)
    except ConfigError as exc:
        report_once(ctx, "error", str(exc))
        return
    for problem in check_config(config, source=config_path(home)):
        report_once(ctx, problem.level, problem.message)


__all__ += ["report_config", "report_once", "warn", "watch_config_messages"]
