"""The host's own tools: ``read_file``, ``write_file``, ``patch``, ``search_files``
(:mod:`hermes_hooks.host.filetools`), ``terminal``, ``delegate_task`` and ``skill_view``.

They are registered in ``pm.tools`` with the host as owner, before plugins load, so a plugin
can replace one only with the operator's grant (docs/reference/context.md). While a session
runs a turn, the
tools find it through :data:`current_session` (its folder, its hooks, its subagents).
"""

from __future__ import annotations

import contextvars
import difflib
import logging
import os
import signal
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from hermes_hooks.backends.models.base import dumps
from hermes_hooks.calling.facade import Hooks
from hermes_hooks.errors import RegistrationError
from hermes_hooks.plugins.newer_ctx import redact_everywhere
from hermes_hooks.registries.base import HOST
from hermes_hooks.spec.hookspecs import TELEMETRY_SCHEMA_VERSION

if TYPE_CHECKING:
    from hermes_hooks.host.session import Session
    from hermes_hooks.plugins.manager import PluginManager

__all__ = [
    "BUILTIN_TOOLS",
    "current_session",
    "install_builtin_tools",
    "record_changed_path",
]

logger = logging.getLogger(__name__)

current_session: contextvars.ContextVar[Session | None] = contextvars.ContextVar(
    "hermes_current_session", default=None
)
"""The session whose turn is running in this context, or ``None``."""

DEFAULT_TIMEOUT: Final = 60
MAX_TIMEOUT: Final = 600
OUTPUT_LIMIT: Final = 50_000
"""Characters of terminal output the model sees; the middle of longer output is cut."""
READ_LIMIT_BYTES: Final = 2_000_000
DEFAULT_READ_LINES: Final = 500

BUILTIN_TOOLS: Final = (
    "read_file",
    "write_file",
    "patch",
    "search_files",
    "terminal",
    "delegate_task",
    "skill_view",
)


def record_changed_path(path: str | os.PathLike[str]) -> None:
    """Tell the running turn that a tool changed ``path`` (so ``pre_verify`` fires at its end).

    A tool that edits files calls this from its handler; outside a turn it does nothing.
    """
    session = current_session.get()
    if session is not None:
        session.note_changed_path(os.fspath(path))


def _error(message: str) -> str:
    return dumps({"error": message})


def _cwd() -> Path:
    session = current_session.get()
    return session.cwd if session is not None else Path.cwd()


def _limit(text: str, limit: int = OUTPUT_LIMIT) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    cut = len(text) - 2 * half
    return f"{text[:half]}\n… [{cut} characters cut] …\n{text[-half:]}"


def _int_arg(args: Mapping[str, Any], name: str, default: int, low: int, high: int) -> int:
    value = args.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError(f"{name} must be a number, found {type(value).__name__}")
    try:
        number = int(value)
    except ValueError as exc:
        raise ValueError(f"{name} must be a number, found {value!r}") from exc
    return max(low, min(high, number))


def read_file(args: Mapping[str, Any], **kwargs: Any) -> str:
    """Return a text file's lines as JSON ``{"path", "content", "total_lines", ...}``."""
    path = args.get("path")
    if not isinstance(path, str) or not path.strip():
        return _error("read_file needs a 'path' (a file name, relative to the working folder)")
    try:
        offset = _int_arg(args, "offset", 1, 1, 10**9)
        limit = _int_arg(args, "limit", DEFAULT_READ_LINES, 1, 100_000)
    except ValueError as exc:
        return _error(f"read_file: {exc}")
    target = Path(path).expanduser()
    if not target.is_absolute():
        target = _cwd() / target
    if not target.is_file():
        hint = ""
        if target.parent.is_dir():
            close = difflib.get_close_matches(target.name, os.listdir(target.parent), n=3)
            hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
        what = "a folder, not a file" if target.is_dir() else "not found"
        return _error(f"read_file: {path!r} is {what}{hint}")
    try:
        with target.open("rb") as handle:
            data = handle.read(READ_LIMIT_BYTES + 1)
    except OSError as exc:
        return _error(f"read_file: cannot read {path!r}: {exc.strerror or exc}")
    if b"\x00" in data[:8192]:
        return _error(f"read_file: {path!r} is a binary file")
    lines = data[:READ_LIMIT_BYTES].decode("utf-8", errors="replace").splitlines()
    chosen = lines[offset - 1 : offset - 1 + limit]
    return dumps(
        {
            "path": path,
            "content": "\n".join(chosen),
            "total_lines": len(lines),
            "offset": offset,
            "truncated": len(data) > READ_LIMIT_BYTES or offset - 1 + limit < len(lines),
        }
    )


def _kill(process: subprocess.Popen[str]) -> None:
    try:
        if hasattr(os, "killpg"):
            os.killpg(process.pid, signal.SIGKILL)
        else:  # pragma: no cover - not POSIX
            process.kill()
    except (ProcessLookupError, PermissionError):
        pass


def _backend(pm: PluginManager) -> str:
    """The terminal backend chosen now (``local`` without a terminal environment family)."""
    from hermes_hooks.plugins import extensions

    if extensions.get_family("terminal_env") is None:
        return "local"
    from hermes_hooks.backends.terminal_env import backend_name

    return backend_name(pm)


def _command_env(pm: PluginManager) -> dict[str, str] | None:
    """The environment of a command: this one without the terminal environment providers'
    ``strip_env_keys`` (their vendors' credentials); ``None`` (inherit it) when there are none."""
    from hermes_hooks.plugins import extensions

    if extensions.get_family("terminal_env") is None:
        return None
    from hermes_hooks.backends.terminal_env import strip_env_keys

    keys = strip_env_keys(pm)
    if not keys:
        return None
    return {name: value for name, value in os.environ.items() if name not in keys}


def make_terminal(pm: PluginManager) -> Callable[..., str]:
    """Return the ``terminal`` handler; its output goes through ``transform_terminal_output``."""
    fallback = Hooks(pm)

    def terminal(args: Mapping[str, Any], task_id: str = "", **kwargs: Any) -> str:
        command = args.get("command")
        if not isinstance(command, str) or not command.strip():
            return _error("terminal needs a 'command' (a shell command line)")
        try:
            timeout = _int_arg(args, "timeout", DEFAULT_TIMEOUT, 1, MAX_TIMEOUT)
        except ValueError as exc:
            return _error(f"terminal: {exc}")
        session = current_session.get()
        try:
            backend = _backend(pm)
        except Exception as exc:  # a malformed terminal section: said, not raised
            return _error(f"terminal: {exc}")
        if backend != "local":
            from hermes_hooks.backends.terminal_env import run_command

            ran = run_command(
                pm, backend, command, cwd=str(_cwd()), timeout=timeout, task_id=task_id
            )
            hooks = session.hooks if session is not None else fallback
            ran["output"] = _limit(
                redact_everywhere(
                    hooks.transform_terminal_output(
                        telemetry_schema_version=TELEMETRY_SCHEMA_VERSION,
                        command=command,
                        output=ran["output"],
                        returncode=ran["exit_code"],
                        task_id=task_id,
                        env_type=backend,
                    )
                )
            )
            return dumps(ran)
        try:
            process = subprocess.Popen(
                command,
                shell=True,
                cwd=_cwd(),
                env=_command_env(pm),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                errors="replace",
                start_new_session=True,
            )
        except OSError as exc:
            return _error(f"terminal: cannot start {command!r}: {exc}")
        timed_out = False
        try:
            output, _ = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill(process)
            output, _ = process.communicate()
        hooks = session.hooks if session is not None else fallback
        output = hooks.transform_terminal_output(
            telemetry_schema_version=TELEMETRY_SCHEMA_VERSION,
            command=command,
            output=output or "",
            returncode=process.returncode,
            task_id=task_id,
            env_type="local",
        )
        # The plugins' redaction patterns, after the hook, as Hermes redacts the output.
        output = redact_everywhere(output)
        result: dict[str, Any] = {"output": _limit(output), "exit_code": process.returncode}
        if timed_out:
            result["error"] = f"command timed out after {timeout} s and was killed"
        return dumps(result)

    return terminal


def delegate_task(args: Mapping[str, Any], **kwargs: Any) -> str:
    """Run a subagent on ``goal`` and return ``{"status", "summary", "child_session_id"}``."""
    goal = args.get("goal")
    if not isinstance(goal, str) or not goal.strip():
        return _error("delegate_task needs a 'goal' (what the subagent should do)")
    session = current_session.get()
    if session is None:
        return _error("delegate_task runs only inside a session's turn")
    context = args.get("context")
    role = args.get("role")
    outcome = session.delegate(
        goal,
        context=context if isinstance(context, str) else "",
        role=role if role in ("leaf", "orchestrator") else "leaf",
    )
    return dumps(
        {
            "status": outcome.status,
            "summary": outcome.summary,
            "child_session_id": outcome.child_session_id,
        }
    )


def _can_delegate() -> bool:
    """Offered inside a session's turn, to sessions that may delegate (the top-level one and
    orchestrators below the depth limit): outside a turn nobody can delegate.
    """
    session = current_session.get()
    return session is not None and session.can_delegate


_SCHEMAS: Final[dict[str, dict[str, Any]]] = {
    "read_file": {
        "description": "Read a text file and return its lines (500 by default).",
        "parameters": {
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "The file, relative or absolute."},
                "offset": {"type": "integer", "description": "First line to return, from 1."},
                "limit": {"type": "integer", "description": "How many lines to return."},
            },
            "required": ["path"],
        },
    },
    "terminal": {
        "description": "Run a shell command in the working folder and return its output.",
        "parameters": {
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "The command line to run."},
                "timeout": {"type": "integer", "description": "Seconds before it is killed."},
            },
            "required": ["command"],
        },
    },
    "delegate_task": {
        "description": "Hand a goal to a subagent with its own conversation; returns its summary.",
        "parameters": {
            "type": "object",
            "properties": {
                "goal": {"type": "string", "description": "What the subagent should achieve."},
                "context": {"type": "string", "description": "What it needs to know."},
                "role": {"type": "string", "enum": ["leaf", "orchestrator"]},
            },
            "required": ["goal"],
        },
    },
}


def install_builtin_tools(pm: PluginManager) -> list[str]:
    """Register the host tools in ``pm.tools`` (call it before loading plugins).

    :returns: the names registered now; a name the host holds already is kept as it is, and
        one a plugin holds is left to the plugin (with a warning).
    """
    from hermes_hooks.host.filetools import FILE_TOOL_SCHEMAS, patch, search_files, write_file

    schemas = {**_SCHEMAS, **FILE_TOOL_SCHEMAS}
    handlers: dict[str, tuple[str, Callable[..., str], Callable[[], bool] | None]] = {
        "read_file": ("file", read_file, None),
        "write_file": ("file", write_file, None),
        "patch": ("file", patch, None),
        "search_files": ("file", search_files, None),
        "terminal": ("terminal", make_terminal(pm), None),
        "delegate_task": ("delegation", delegate_task, _can_delegate),
    }
    installed = []
    for name, (toolset, handler, check) in handlers.items():
        owner = pm.tools.owner_of(name)
        if owner == HOST:
            continue
        try:
            pm.tools.register_tool(
                name, toolset, schemas[name], handler, check_fn=check, owner=HOST
            )
        except RegistrationError as exc:
            logger.warning("host tool %r not installed: %s", name, exc)
            continue
        installed.append(name)
    if pm.tools.owner_of("skill_view") is None:
        from hermes_hooks.host.skills import install_skill_view

        install_skill_view(pm)
        installed.append("skill_view")
    return installed
