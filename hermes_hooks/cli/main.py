"""The root ``hermes`` group, its error handling and its entry point."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from hermes_hooks import __version__
from hermes_hooks.config import DEBUG_ENV, is_truthy

__all__ = ["cli", "main"]


class HermesGroup(click.Group):
    """Shows ``HermesHooksError`` as one line, with the traceback only under ``--debug``."""

    def invoke(self, ctx: click.Context) -> Any:
        from hermes_hooks.errors import HermesHooksError

        try:
            return super().invoke(ctx)
        except HermesHooksError as exc:
            if ctx.meta.get("hermes.debug"):
                raise
            click.echo(f"Error: {exc}", err=True)
            ctx.exit(1)


@click.group(cls=HermesGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", "-V", prog_name="hermes")
@click.option(
    "--home",
    type=click.Path(file_okay=False, path_type=Path),
    envvar="HERMES_HOME",
    help="The Hermes home folder (default: $HERMES_HOME or ~/.hermes).",
)
@click.option("--debug", is_flag=True, help="Show tracebacks and plugin loading decisions.")
@click.pass_context
def cli(ctx: click.Context, home: Path | None, debug: bool) -> None:
    """Manage Hermes plugins and their hooks.

    \b
    Examples:
      hermes plugins list --all
      hermes plugins list --json
    """
    debug = debug or is_truthy(os.environ.get(DEBUG_ENV))
    ctx.meta["hermes.debug"] = debug
    ctx.meta["hermes.home"] = home
    if debug:
        os.environ[DEBUG_ENV] = "1"


def _register_commands() -> None:
    from hermes_hooks.cli.plugins import plugins

    cli.add_command(plugins)


_register_commands()


def main(argv: Sequence[str] | None = None) -> None:
    """Run the ``hermes`` command (the console script's entry point)."""
    cli.main(args=list(argv) if argv is not None else sys.argv[1:], prog_name="hermes")
