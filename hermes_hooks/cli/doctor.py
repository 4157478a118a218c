"""``hermes plugins doctor`` (check plugins) and ``hermes doctor`` (check the environment)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from hermes_hooks.cli.common import (
    build_manager,
    echo_json,
    get_home,
    progress,
    terminal_width,
    wrap,
)
from hermes_hooks.cli.completion import complete_plugins

if TYPE_CHECKING:
    from hermes_hooks.admin.doctor import Finding
    from hermes_hooks.plugins.discovery import Candidate

__all__ = ["doctor", "plugin_doctor"]


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _finding_lines(finding: Finding, width: int | None) -> list[str]:
    lines = wrap(f"{finding.level}: {finding.message}", width, "  ", "    ")
    if finding.where:
        lines.append(f"    at {finding.where}")
    return lines


def _candidates(ctx: click.Context, target: str | None) -> list[Candidate]:
    from hermes_hooks.admin.actions import resolve_plugin
    from hermes_hooks.admin.doctor import candidate_from_path
    from hermes_hooks.plugins.manifest import find_manifest

    if target is not None:
        path = Path(target).expanduser()
        if path.exists() and (
            path.is_file() or find_manifest(path) or (path / "__init__.py").is_file()
        ):
            return [candidate_from_path(path)]
        return [resolve_plugin(build_manager(ctx, load=False).discover(), target)]
    if find_manifest(Path.cwd()) is not None:
        return [candidate_from_path(Path.cwd())]
    return [c for c in build_manager(ctx, load=False).discover() if c.source != "bundled"]


def _untrusted(ctx: click.Context, candidate: Candidate) -> str | None:
    """Why a project plugin may not be imported by the doctor (``None`` when it is trusted)."""
    if candidate.source != "project" or candidate.path is None:
        return None
    from hermes_hooks.errors import PluginTrustError
    from hermes_hooks.plugins.trust import verify_trusted

    entry = build_manager(ctx, load=False).reload_config().entry(candidate.key)
    try:
        verify_trusted(candidate.path, candidate.key, entry)
    except PluginTrustError as exc:
        return str(exc)
    return None


@click.command("doctor")
@click.argument(
    "path_or_name", required=False, metavar="[PATH_OR_NAME]", shell_complete=complete_plugins
)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON report.")
@click.pass_context
def plugin_doctor(ctx: click.Context, path_or_name: str | None, as_json: bool) -> None:
    """Check a plugin by loading it alone in a throwaway HERMES_HOME.

    PATH_OR_NAME is a plugin folder or the name of an installed plugin; without it, the
    folder you are in (when it holds a plugin.yaml) or every plugin that is not bundled.
    Reports manifest problems, import and register() failures, unknown hooks, hookimpl
    arguments the hook does not pass, register_hook callbacks without **kwargs,
    provides_tools/provides_hooks (or hooks) that do not match what is registered, unset
    requires_env, missing pip_dependencies, and which Hermes modules the plugin imports
    (served here, or not), with file and line where known. A plugin that does not finish
    loading within plugins.load_timeout is reported with the line it is stuck on, never
    waited for. Exits 1 on any error.

    \b
    Examples:
      hermes plugins doctor ./my-plugin
      hermes plugins doctor no-rm --json
    """
    from hermes_hooks.admin.doctor import check_plugin
    from hermes_hooks.admin.envfile import apply_env_file
    from hermes_hooks.admin.trial import captured_logs

    apply_env_file(get_home(ctx))  # requires_env set in $HERMES_HOME/.env counts as set
    with captured_logs():  # what discovery logs about a manifest is a finding below
        candidates = _candidates(ctx, path_or_name)
        # A plugin that hangs while loading is reported after the operator's bound.
        load_timeout = build_manager(ctx, load=False).reload_config().load_timeout
    reports = [
        check_plugin(c, load_timeout=load_timeout, untrusted=_untrusted(ctx, c)) for c in candidates
    ]
    errors = sum(r.errors for r in reports)
    if as_json:
        echo_json(
            {
                "ok": errors == 0,
                "errors": errors,
                "warnings": sum(r.warnings for r in reports),
                "plugins": [r.to_dict() for r in reports],
            }
        )
    elif not reports:
        click.echo("No plugins to check: pass a plugin folder or name.")
    else:
        width = terminal_width()
        for report in reports:
            verdict = (
                "ok"
                if not report.errors and not report.warnings
                else (f"{_plural(report.errors, 'error')}, {_plural(report.warnings, 'warning')}")
            )
            click.echo(f"{report.key}: {verdict}")
            for finding in report.findings:
                for line in _finding_lines(finding, width):
                    click.echo(line)
        warnings = sum(r.warnings for r in reports)
        click.echo(
            f"Checked {_plural(len(reports), 'plugin')}: {_plural(errors, 'error')}, "
            f"{_plural(warnings, 'warning')}."
        )
    if errors:
        ctx.exit(1)


def _fact_lines(facts: Sequence[tuple[str, str]], width: int | None) -> list[str]:
    label_width = max(len(label) for label, _ in facts) + 2
    lines = []
    for label, value in facts:
        lines.extend(wrap(value, width, f"{label + ':':<{label_width}}", " " * label_width))
    return lines


@click.command("doctor")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON report.")
@click.pass_context
def doctor(ctx: click.Context, as_json: bool) -> None:
    """Summarise the environment and report what is wrong with it.

    Shows versions, HERMES_HOME and the config file, then config problems, plugins that
    failed to load (one that hangs is given up on after plugins.load_timeout), and project
    plugins that are present but not opted in. Exits 1 when there is an error.

    \b
    Examples:
      hermes doctor
      hermes --home /tmp/hermes doctor --json
    """
    from hermes_hooks.admin.health import check_environment

    ctx.find_root().meta["hermes.config_in_report"] = True  # its findings say them, once
    with progress("checking the environment and loading the plugins…"):
        report = check_environment(build_manager(ctx))
    if as_json:
        echo_json(report.to_dict())
    else:
        width = terminal_width()
        for line in _fact_lines(report.facts, width):
            click.echo(line)
        click.echo("")
        for finding in report.findings:
            for line in _finding_lines(finding, width):
                click.echo(line)
        errors = report.errors
        warnings = len(report.findings) - errors
        click.echo(f"{_plural(errors, 'error')}, {_plural(warnings, 'warning')}.")
    if report.errors:
        ctx.exit(1)
