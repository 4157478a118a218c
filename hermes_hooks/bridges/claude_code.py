"""``hermes claude-hook``: Claude Code's hook events answered by the enabled plugins' hooks.

Claude Code runs the command for each hook event with the event's JSON on stdin and reads the
answer, JSON on stdout. One table (:data:`TOOLS`) maps Claude Code's tools to Hermes's, their
arguments both ways; the events map to Hermes hooks so (:data:`EVENTS`):

============================  ==============================================================
Claude Code event             Hermes hooks, and the answer
============================  ==============================================================
``PreToolUse``                ``pre_tool_call``: a block is ``permissionDecision: "deny"`` with
                              the plugin's message; ``approve`` is ``"ask"``; a ``modify`` is
                              ``"ask"`` with ``updatedInput`` (the changed call is shown to the
                              user, never run unasked); nothing said is ``{}``
``PostToolUse``               ``post_tool_call`` and ``transform_tool_result``: a rewritten
                              result is ``updatedMCPToolOutput`` for an MCP tool, else
                              ``additionalContext``
``UserPromptSubmit``          ``pre_llm_call``: the context plugins return is
                              ``additionalContext``
``Stop``                      ``post_llm_call`` (when Claude Code sends the
                              ``last_assistant_message``) and ``on_session_end`` (a turn ended)
``SubagentStop``              ``subagent_stop``
``SessionStart``              ``on_session_start``
``SessionEnd``                ``on_session_finalize``
============================  ==============================================================

Every hook gets Claude Code's ``session_id`` (and ``tool_use_id`` as ``tool_call_id``),
platform ``claude-code``. A plugin that keeps state across hook calls keeps it across these
short-lived processes in :func:`session_state`, one JSON file per Claude Code session under
``$HERMES_HOME/claude-code/sessions`` (written atomically, under a lock, removed at
``SessionEnd``).

Only what answering needs is imported: the manager and the facade, no provider family is used,
no MCP, no model.
"""

from __future__ import annotations

import contextlib
import json
import re
import sys
from collections.abc import Callable, Mapping, MutableMapping
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from hermes_hooks.calling.facade import Hooks

__all__ = [
    "EVENTS",
    "PLATFORM",
    "TOOLS",
    "HookInputError",
    "answer",
    "from_hermes_args",
    "hermes_tool",
    "run",
    "session_state",
    "to_hermes_args",
]

PLATFORM: Final = "claude-code"

TOOLS: Final[dict[str, tuple[str, dict[str, str], dict[str, Any]]]] = {
    # Claude Code tool: (Hermes tool, {Claude Code argument: Hermes argument}, fixed arguments)
    "Bash": ("terminal", {"command": "command", "timeout": "timeout"}, {}),
    "Read": ("read_file", {"file_path": "path", "offset": "offset", "limit": "limit"}, {}),
    "Write": ("write_file", {"file_path": "path", "content": "content"}, {}),
    "Edit": (
        "patch",
        {
            "file_path": "path",
            "old_string": "old_string",
            "new_string": "new_string",
            "replace_all": "replace_all",
        },
        {"mode": "replace"},
    ),
    "MultiEdit": ("patch", {"file_path": "path", "edits": "edits"}, {"mode": "replace"}),
    "Grep": (
        "search_files",
        {"pattern": "pattern", "path": "path", "glob": "file_glob"},
        {"target": "content"},
    ),
    "Glob": ("search_files", {"pattern": "pattern", "path": "path"}, {"target": "files"}),
    "WebFetch": ("web_extract", {"url": "urls", "prompt": "prompt"}, {}),
    "WebSearch": ("web_search", {"query": "query"}, {}),
    "Task": ("delegate_task", {"prompt": "goal", "description": "context"}, {}),
}
"""Claude Code's tools as Hermes's; any other tool keeps its name and arguments, and
``mcp__<server>__<tool>`` becomes Hermes's ``mcp_<server>_<tool>``. ``Bash``'s ``timeout`` is
in milliseconds there, seconds here; ``WebFetch``'s ``url`` is one of ``urls``."""

EVENTS: Final[dict[str, str]] = {
    "PreToolUse": "pre_tool_call",
    "PostToolUse": "post_tool_call, transform_tool_result",
    "UserPromptSubmit": "pre_llm_call",
    "Stop": "post_llm_call, on_session_end",
    "SubagentStop": "subagent_stop",
    "SessionStart": "on_session_start",
    "SessionEnd": "on_session_finalize",
}
"""Each Claude Code event and the Hermes hooks it fires."""

_MCP_NAME: Final = re.compile(r"^mcp__(?P<server>.+?)__(?P<tool>.+)$")
_UNSAFE: Final = re.compile(r"[^A-Za-z0-9_]")


class HookInputError(ValueError):
    """stdin is not one of Claude Code's hook events."""


def hermes_tool(claude_tool: str) -> str:
    """Return the Hermes name of a Claude Code tool."""
    entry = TOOLS.get(claude_tool)
    if entry is not None:
        return entry[0]
    match = _MCP_NAME.match(claude_tool)
    if match:
        server, tool = (_UNSAFE.sub("_", part) for part in match.group("server", "tool"))
        return f"mcp_{server}_{tool}"
    return claude_tool


def to_hermes_args(claude_tool: str, tool_input: Mapping[str, Any]) -> dict[str, Any]:
    """Return a Claude Code tool's input as the Hermes tool's arguments."""
    entry = TOOLS.get(claude_tool)
    if entry is None:
        return dict(tool_input)
    _, names, fixed = entry
    args: dict[str, Any] = dict(fixed)
    for key, value in tool_input.items():
        target = names.get(key, key)
        if claude_tool == "Bash" and key == "timeout" and isinstance(value, int | float):
            value = max(1, round(value / 1000))  # ms there, seconds here
        elif claude_tool == "WebFetch" and key == "url":
            value = [value]
        args[target] = value
    return args


def from_hermes_args(
    claude_tool: str, args: Mapping[str, Any], original: Mapping[str, Any]
) -> dict[str, Any]:
    """Return Hermes arguments (changed by a plugin) as the Claude Code tool's whole input."""
    entry = TOOLS.get(claude_tool)
    if entry is None:
        return dict(args)
    _, names, fixed = entry
    back = {hermes: claude for claude, hermes in names.items()}
    updated = dict(original)
    for key, value in args.items():
        if key in fixed and fixed[key] == value:
            continue
        target = back.get(key, key)
        if claude_tool == "Bash" and target == "timeout" and isinstance(value, int | float):
            value = int(value * 1000)
        elif claude_tool == "WebFetch" and target == "url" and isinstance(value, list):
            value = value[0] if value else ""
        updated[target] = value
    return updated


# -- the per-session store ------------------------------------------------------------------------

_state: dict[str, Any] | None = None
_state_path: Path | None = None
_state_loaded: str = ""


def session_state() -> MutableMapping[str, Any]:
    """The state of the Claude Code session being answered, kept across hook processes.

    A plain dict of JSON values, read when first asked for and written back (atomically, under
    a lock) when the hook has answered, if it changed. Outside ``hermes claude-hook`` it is a
    dict for this process. Plugins share it: use keys of your own (your plugin's name).
    """
    global _state, _state_loaded
    if _state is None:
        _state = {}
        if _state_path is not None and _state_path.is_file():
            try:
                text = _state_path.read_text(encoding="utf-8")
                loaded = json.loads(text)
            except (OSError, ValueError):
                loaded = None
            if isinstance(loaded, dict):
                _state = loaded
                _state_loaded = text
    return _state


def _session_file(home: Path, session_id: str) -> Path | None:
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", session_id)[:128]
    return home / "claude-code" / "sessions" / f"{safe}.json" if safe.strip("._") else None


def _save_state() -> None:
    if _state is None or _state_path is None:
        return
    text = json.dumps(_state, indent=2, ensure_ascii=False, default=str)
    if text == _state_loaded:
        return
    from filelock import FileLock

    from hermes_hooks.compat.utils import atomic_json_write

    _state_path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(_state_path) + ".lock", timeout=10):
        atomic_json_write(_state_path, _state, default=str)


def _use_session(home: Path, session_id: str) -> None:
    global _state, _state_path, _state_loaded
    _state, _state_loaded = None, ""
    _state_path = _session_file(home, session_id) if session_id else None


def _forget_session() -> None:
    global _state, _state_path
    if _state_path is not None:
        for path in (_state_path, Path(str(_state_path) + ".lock")):
            with contextlib.suppress(OSError):
                path.unlink()
    _state, _state_path = None, None


# -- answering ------------------------------------------------------------------------------------


def _text(value: object) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def _failed(response: object) -> str | None:
    if isinstance(response, Mapping):
        error = response.get("error")
        if error:
            return _text(error)
        if response.get("is_error") or response.get("isError") or response.get("success") is False:
            return _text(response.get("message") or response.get("stderr") or "the tool failed")
    return None


def _specific(event: str, **fields: Any) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": event, **fields}}


def _pre_tool_use(hooks: Hooks, event: Mapping[str, Any], ids: dict[str, str]) -> dict[str, Any]:
    claude_tool = str(event.get("tool_name") or "")
    tool_input = event.get("tool_input")
    if not isinstance(tool_input, Mapping):
        tool_input = {}
    args = to_hermes_args(claude_tool, tool_input)
    decision = hooks.pre_tool_call(
        tool_name=hermes_tool(claude_tool),
        args=args,
        session_id=ids["session_id"],
        task_id=ids["task_id"],
        turn_id=ids["turn_id"],
        tool_call_id=ids["tool_call_id"],
    )
    if decision.action == "block":
        return _specific(
            "PreToolUse",
            permissionDecision="deny",
            permissionDecisionReason=decision.message or f"blocked by {decision.plugin}",
        )
    changed = decision.args != args
    answer: dict[str, Any] = {}
    if decision.action == "approve" or changed:
        reason = decision.message or (
            f"Hermes plugin {decision.plugin!r} changed the call" if changed else "approval asked"
        )
        answer = _specific("PreToolUse", permissionDecision="ask", permissionDecisionReason=reason)
        if changed:
            answer["hookSpecificOutput"]["updatedInput"] = from_hermes_args(
                claude_tool, decision.args, tool_input
            )
    return answer


def _post_tool_use(hooks: Hooks, event: Mapping[str, Any], ids: dict[str, str]) -> dict[str, Any]:
    claude_tool = str(event.get("tool_name") or "")
    tool_input = event.get("tool_input")
    args = to_hermes_args(claude_tool, tool_input if isinstance(tool_input, Mapping) else {})
    response = event.get("tool_response")
    result = _text(response if response is not None else "")
    error = _failed(response)
    status = "error" if error is not None else "ok"
    common: dict[str, Any] = {
        "tool_name": hermes_tool(claude_tool),
        "args": args,
        "result": result,
        "duration_ms": 0,
        "status": status,
        "error_type": "tool_error" if error is not None else None,
        "error_message": error,
        **ids,
    }
    hooks.post_tool_call(**common)
    final = hooks.transform_tool_result(**common)
    if not isinstance(final, str) or final == result:
        return {}
    if claude_tool.startswith("mcp__"):
        return _specific("PostToolUse", updatedMCPToolOutput=final)
    return _specific(
        "PostToolUse",
        additionalContext=f"Hermes plugins rewrote the result of {claude_tool}:\n{final}",
    )


def _user_prompt(hooks: Hooks, event: Mapping[str, Any], ids: dict[str, str]) -> dict[str, Any]:
    state = session_state()
    first = not state.get("_hermes_prompted")
    state["_hermes_prompted"] = True
    prompt = str(event.get("prompt") or "")
    state["_hermes_prompt"] = prompt  # for post_llm_call at Stop
    context = hooks.pre_llm_call(
        session_id=ids["session_id"],
        task_id=ids["task_id"],
        turn_id=ids["turn_id"],
        user_message=prompt,
        conversation_history=[{"role": "user", "content": prompt}],
        is_first_turn=first,
        platform=PLATFORM,
    )
    if not context:
        return {}
    return _specific("UserPromptSubmit", additionalContext=str(context))


def _stop(hooks: Hooks, event: Mapping[str, Any], ids: dict[str, str]) -> dict[str, Any]:
    answer = event.get("last_assistant_message")
    if isinstance(answer, str) and answer:
        prompt = str(session_state().get("_hermes_prompt") or "")
        hooks.post_llm_call(
            session_id=ids["session_id"],
            task_id=ids["task_id"],
            turn_id=ids["turn_id"],
            user_message=prompt,
            assistant_response=answer,
            conversation_history=[
                {"role": "user", "content": prompt},
                {"role": "assistant", "content": answer},
            ],
            platform=PLATFORM,
        )
    hooks.on_session_end(
        session_id=ids["session_id"],
        task_id=ids["task_id"],
        turn_id=ids["turn_id"],
        completed=True,
        failed=False,
        interrupted=False,
        turn_exit_reason="stop",
        platform=PLATFORM,
    )
    return {}


def _subagent_stop(hooks: Hooks, event: Mapping[str, Any], ids: dict[str, str]) -> dict[str, Any]:
    summary = event.get("last_assistant_message")
    hooks.subagent_stop(
        parent_session_id=ids["session_id"],
        parent_turn_id=ids["turn_id"],
        child_session_id=str(event.get("agent_id") or "") or None,
        child_role=str(event.get("agent_type") or "leaf"),
        child_summary=str(summary) if summary else None,
        child_status="completed",
        tool_call_history=[],
        duration_ms=0,
    )
    return {}


def _session_start(hooks: Hooks, event: Mapping[str, Any], ids: dict[str, str]) -> dict[str, Any]:
    hooks.on_session_start(
        session_id=ids["session_id"], model=str(event.get("model") or ""), platform=PLATFORM
    )
    return {}


def _session_end(hooks: Hooks, event: Mapping[str, Any], ids: dict[str, str]) -> dict[str, Any]:
    hooks.on_session_finalize(
        session_id=ids["session_id"],
        platform=PLATFORM,
        reason=str(event.get("reason") or "") or None,
    )
    _forget_session()
    return {}


_ANSWER: Final[dict[str, Callable[[Hooks, Mapping[str, Any], dict[str, str]], dict[str, Any]]]] = {
    "PreToolUse": _pre_tool_use,
    "PostToolUse": _post_tool_use,
    "UserPromptSubmit": _user_prompt,
    "Stop": _stop,
    "SubagentStop": _subagent_stop,
    "SessionStart": _session_start,
    "SessionEnd": _session_end,
}


def read_event(text: str) -> dict[str, Any]:
    """Return the event Claude Code sent.

    :raises HookInputError: the text is not a JSON object with a ``hook_event_name``.
    """
    try:
        event = json.loads(text)
    except ValueError as exc:
        raise HookInputError(f"stdin is not JSON: {exc}") from exc
    if not isinstance(event, dict):
        raise HookInputError(f"stdin must be a JSON object, found {type(event).__name__}")
    name = event.get("hook_event_name")
    if not isinstance(name, str) or not name:
        raise HookInputError("the event has no 'hook_event_name' (is this Claude Code's input?)")
    return event


def answer(hooks: Hooks, event: Mapping[str, Any]) -> dict[str, Any]:
    """Fire the Hermes hooks of one Claude Code event and return Claude Code's answer."""
    name = str(event.get("hook_event_name"))
    handler = _ANSWER.get(name)
    if handler is None:
        return {}  # an event with no Hermes hook (Notification, PreCompact...): nothing to say
    session_id = str(event.get("session_id") or "")
    ids = {
        "session_id": session_id,
        "task_id": session_id,
        "turn_id": session_id,
        "tool_call_id": str(event.get("tool_use_id") or ""),
    }
    if name not in ("PreToolUse", "PostToolUse"):
        ids.pop("tool_call_id")
    return handler(hooks, event, ids)


def run(
    stdin: IO[str] | None = None,
    stdout: IO[str] | None = None,
    *,
    hermes_home: Path | None = None,
) -> int:
    """Answer the event on ``stdin`` on ``stdout``; return the exit code Claude Code reads.

    0 with the JSON answer; 2 (Claude Code's "blocking error", the message on stderr) when
    stdin is not a hook event, so that a broken call fails closed.
    """
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    try:
        event = read_event(stdin.read())
    except HookInputError as exc:
        print(f"hermes claude-hook: {exc}", file=sys.stderr)
        return 2
    import contextlib

    from hermes_hooks.calling.facade import Hooks
    from hermes_hooks.plugins.config import get_hermes_home
    from hermes_hooks.plugins.manager import PluginManager

    home = hermes_home or get_hermes_home()
    cwd = event.get("cwd")
    # What plugins print goes to stderr: stdout is Claude Code's, and holds the answer only.
    with contextlib.redirect_stdout(sys.stderr):
        pm = PluginManager(home, cwd=Path(cwd) if isinstance(cwd, str) and cwd else None)
        _use_session(pm.hermes_home, str(event.get("session_id") or ""))
        pm.discover_and_load()
        result = answer(Hooks(pm), event)
    stdout.write(json.dumps(result, ensure_ascii=False) + "\n")
    stdout.flush()
    _save_state()
    return 0
