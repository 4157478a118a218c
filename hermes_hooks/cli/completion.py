"""``hermes completion SHELL``, ``hermes version`` and the shell completion of names.

Completion is click's: the script ``hermes completion bash`` prints asks ``hermes`` itself
(``_HERMES_COMPLETE=bash_complete``) for the candidates, so plugin keys come from the home's
manifests (no plugin code runs) and hook names from the hookspecs.
"""

from __future__ import annotations

import click
from click.shell_completion import CompletionItem

__all__ = ["complete_hooks", "complete_plugins", "completion", "version"]

SHELLS = ("bash", "zsh", "fish")


def complete_plugins(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    """The keys of the plugins the home has (read from their manifests, no code runs)."""
    from hermes_hooks.cli.common import get_home
    from hermes_hooks.plugins.discovery import discover_candidates

    try:
        candidates = discover_candidates(hermes_home=get_home(ctx))
    except Exception:  # completion never prints a traceback into the shell
        return []
    keys = sorted({c.key for c in candidates})
    return [CompletionItem(key) for key in keys if key.startswith(incomplete)]


def complete_hooks(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    """The names of the hooks of the Hermes contract."""
    from hermes_hooks.spec.hookspecs import HOOK_NAMES

    return [CompletionItem(name) for name in sorted(HOOK_NAMES) if name.startswith(incomplete)]


@click.command("completion")
@click.argument("shell", type=click.Choice(SHELLS))
def completion(shell: str) -> None:
    """Print the shell completion script for SHELL (commands, options, plugin and hook names).

    \b
    Examples:
      eval "$(hermes completion bash)"          # in ~/.bashrc
      eval "$(hermes completion zsh)"           # in ~/.zshrc
      hermes completion fish > ~/.config/fish/completions/hermes.fish
    """
    from click.shell_completion import get_completion_class

    from hermes_hooks.cli.main import cli

    cls = get_completion_class(shell)
    assert cls is not None  # one of SHELLS, which click ships
    click.echo(cls(cli, {}, "hermes", "_HERMES_COMPLETE").source())


@click.command("version")
@click.option("--json", "as_json", is_flag=True, help="Print the versions as JSON.")
def version(as_json: bool) -> None:
    """Show the version of hermes-hooks and of the Hermes plugin contract it follows.

    \b
    Examples:
      hermes version
      hermes version --json
    """
    import platform

    from hermes_hooks import __version__
    from hermes_hooks.cli.common import echo_json
    from hermes_hooks.spec.contract import HERMES_CONTRACT_VERSION

    python = platform.python_version()
    if as_json:
        echo_json(
            {
                "hermes_hooks": __version__,
                "plugin_contract": HERMES_CONTRACT_VERSION,
                "python": python,
            }
        )
        return
    click.echo(f"hermes-hooks {__version__}")
    click.echo(f"Hermes plugin contract {HERMES_CONTRACT_VERSION}")
    click.echo(f"Python {python}")
