"""Generate ``docs/reference/cli.md`` from the click tree: ``python -m hermes_hooks.cli.docgen``.

Every built-in command gets its ``--help`` text as click prints it at 80 columns, and the
commands with ``--json`` get the shape of their output. Plugin commands are left out: they
depend on what is installed. ``tests/test_cli_docs.py`` fails when the file is out of date.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Final

import click

__all__ = ["JSON_OUTPUT", "iter_commands", "render"]

WIDTH: Final = 80

JSON_OUTPUT: Final[dict[str, str]] = {
    "hermes plugins list": """\
A list of objects, one per plugin, sorted by key, with the fields of `PluginInfo`:
`key`, `name`, `version`, `kind`, `description`, `path` (or `null`), `source` (`bundled`,
`user`, `project`, `entrypoint`), `status` (`enabled`, `disabled`, `not enabled`, `error`),
`error` and `reason` (strings or `null`), `tools`, `hooks`, `commands`, `cli_commands`,
`skills`, `providers`, `platforms`, `aliases` and `warnings` (lists of strings),
`hook_errors` and `hook_timeouts` (numbers), `last_hook_error` (string or `null`), `load_ms`
(milliseconds or `null`), `kind_inferred` (whether the kind was read off the plugin's source),
`served_by` (the config key that selects a family-served plugin, e.g. `memory.provider`,
or `null`) and `replacement` (what another plugin of its key is to it: the one it replaces,
or an untrusted project plugin refused in its favour; also printed as `note:` without
`--json`; or `null`).""",
    "hermes plugins info": """\
One object: the fields of `hermes plugins list --json`, plus `hook_order` (hook name →
`{"positions": [n, ...], "of": total}`, 1 running first), `providers` (list of
`registry:name`) and `manifest` (every manifest field, or `null` for an entry point without
one).""",
    "hermes plugins doctor": """\
`{"ok": bool, "errors": n, "warnings": n, "plugins": [...]}`; each plugin is
`{"key", "path", "source", "status", "ok", "errors", "warnings", "findings"}` and each finding
`{"level": "error" | "warning" | "info", "check", "message", "file", "line"}` (`file` and
`line` may be `null`; `info` findings count as neither). `check` is one of `manifest`,
`requires-env`, `pip-dependencies`, `load`, `unknown-hook`, `hookimpl-args`,
`register-hook-kwargs`, `tool-schema`, `tool-handler`, `declared`, `tool-override`,
`compat`.""",
    "hermes hooks": """\
A list of hooks sorted by name, each
`{"hook", "known", "firstresult", "mode", "policy", "impls": [...]}`; `impls` are in call
order, each `{"position", "plugin", "wrapper", "hookwrapper", "tryfirst", "trylast",
"function" ("module:qualname"), "file", "line", "via_register_hook"}`.""",
    "hermes tools": """\
A list of tools sorted by name, each
`{"name", "toolset", "owner" (a plugin key or "host"), "available", "reason", "description"}`;
`reason` says why a tool is not available, else it is `null`.""",
    "hermes tools image-gen": """\
Without `--provider`/`--model`: `{"provider", "model"}` (the configured `image_gen` values or
`null`), `"active"` (the provider serving `image_generate`, or `null`), `"error"` (why none can,
or `null`) and `"providers"`, each `{"name", "display_name", "plugin", "available", "active",
"default_model", "models", "capabilities", "badge", "tag", "env_vars"}`, `env_vars` items being
the provider's setup entries plus `"set"`. With them: `{"provider", "model", "available"}` as
written.""",
    "hermes memory status": """\
`{"provider", "prefetch_timeout", "error", "warnings", "builtin", "external"}`: `provider` is
`memory.provider` (or `null`); `builtin` is `{"enabled", "path", "exists", "facts", "search"
("fts5" or "like"), "check"}` (`check` is SQLite's `quick_check`, present when the database
exists); `external` is `null` without `memory.provider`, else `{"name", "plugin", "available",
"error", "version", "warnings"}` (`error` says why it does not run).""",
    "hermes memory search": """\
A list of facts, the best match first, each
`{"id", "content", "target" ("memory" or "user"), "created_at", "session_id"}`.""",
    "hermes memory forget": """\
The fact removed: `{"id", "content", "target", "created_at", "session_id"}`.""",
    "hermes doctor": """\
`{"facts": {label: value}, "ok": bool, "findings": [...]}`, findings as in
`hermes plugins doctor --json`, with `check` one of `config`, `plugin`, `project`.""",
}


def _context(command: click.Command, name: str, parent: click.Context | None) -> click.Context:
    settings = dict(command.context_settings)
    settings.update(terminal_width=WIDTH, max_content_width=WIDTH)
    ctx = click.Context(command, info_name=name, parent=parent, **settings)
    if parent is None:
        ctx.meta["hermes.plugin_commands"] = {}  # document the built-ins only
    return ctx


def iter_commands() -> Iterator[tuple[str, click.Command, click.Context]]:
    """Yield ``(path, command, context)`` for the root and every built-in command, depth first."""
    from hermes_hooks.cli.main import cli

    root = _context(cli, "hermes", None)
    yield "hermes", cli, root

    def walk(
        group: click.Group, ctx: click.Context, path: str
    ) -> Iterator[tuple[str, click.Command, click.Context]]:
        for name in group.list_commands(ctx):
            command = group.get_command(ctx, name)
            if command is None or command.hidden:
                continue
            sub = _context(command, name, ctx)
            yield f"{path} {name}", command, sub
            if isinstance(command, click.Group):
                yield from walk(command, sub, f"{path} {name}")

    for name in cli.builtin_names():
        command = cli.get_builtin(name)
        if command is None or command.hidden:
            continue
        sub = _context(command, name, root)
        yield f"hermes {name}", command, sub
        if isinstance(command, click.Group):
            yield from walk(command, sub, f"hermes {name}")


def render() -> str:
    """Return the Markdown reference of the ``hermes`` command."""
    out = [
        "# `hermes` command reference",
        "",
        "<!-- Generated by `python -m hermes_hooks.cli.docgen > docs/reference/cli.md`;",
        "     do not edit by hand: tests/test_cli_docs.py fails when this file is stale. -->",
        "",
        "Exit codes: `0` success, `1` a user error or a failed check, `2` a usage error.",
        "Errors are one line on stderr; `--debug` (or `HERMES_PLUGINS_DEBUG=1`) shows the",
        "traceback. Output fits the terminal's width (`COLUMNS` when set); when it goes to a",
        "file or a pipe it is never clipped or wrapped. `--json` output has the shapes below",
        "and is stable. Commands that plugins register with `ctx.register_cli_command` run as",
        "`hermes NAME`; `hermes plugins list` shows them (`hermes --help`, `--version` and a",
        "built-in command's `--help` load no plugin). When a command is done, a thread a plugin",
        "left running has 2 seconds to end; then the command names it (and the plugin that",
        "started it) on stderr and exits anyway, with its own exit code.",
        "",
    ]
    for path, command, ctx in iter_commands():
        out.append(f"## `{path}`")
        out.append("")
        out.append("```text")
        out.append(command.get_help(ctx).rstrip())
        out.append("```")
        out.append("")
        if path in JSON_OUTPUT:
            out.extend(["JSON output (`--json`):", "", JSON_OUTPUT[path], ""])
    return "\n".join(out).rstrip() + "\n"


if __name__ == "__main__":
    sys.stdout.write(render())
