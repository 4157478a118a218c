"""Shell hooks: commands in ``config.yaml``'s ``hooks:`` run as hook implementations.

Hermes' ``agent/shell_hooks.py`` contract, with Claude Code's answers understood too::

    hooks:
      pre_tool_call:
        - command: ~/.hermes/hooks/no-rm.py
          matcher: terminal        # a regex on the tool name (pre_tool_call, post_tool_call)
          timeout: 10              # seconds, 1 to 300 (default 60)
          fail_closed: true        # pre_tool_call only: a failure blocks the call

Each entry becomes a pluggy implementation of its hook, owned by ``shell:<command>``, so it
obeys the hook's contract (combine rule, error policy) like a plugin's and shows in ``hermes
hooks``. Its time limit is its own ``timeout``, not ``plugins.hook_callback_timeout`` as well
(Hermes: "shell hooks enforce their own subprocess timeout"), so a long ``timeout`` is
honoured. When it fires:

- the command runs as a subprocess, without a shell (the line is split as a shell would, and
  ``~`` expanded), in its own process group; at its timeout the whole group is killed, children
  included;
- its stdin is Hermes' JSON: ``{"hook_event_name", "tool_name", "tool_input", "session_id",
  "cwd", "profile", "extra"}`` (``extra``: the hook's other arguments);
- its stdout may answer with JSON: for ``pre_tool_call`` Hermes' ``{"action": "block",
  "message"}`` / ``{"action": "modify", "args"}``, or Claude Code's ``{"decision": "block",
  "reason"}`` / ``{"decision": "modify", "tool_input"}`` / ``{"hookSpecificOutput":
  {"permissionDecision": "deny" | "ask", "permissionDecisionReason", "updatedInput"}}``; for
  ``pre_verify`` ``{"action": "continue" | "decision": "block", "message" | "reason"}``; for
  the others ``{"context": str}`` (``pre_llm_call`` uses it);
- exit code 2 blocks a ``pre_tool_call`` with stderr as the message (Claude Code's rule); a
  spawn error, a timeout or unreadable output fail open, unless ``fail_closed``.

A command runs only once approved: the first time, on a terminal, the person is asked; the
approval is kept in ``$HERMES_HOME/shell-hooks-allowlist.json`` keyed to the event, the command
and the SHA-256 of the script's content, so an edited script is asked about again.
``--accept-hooks``, ``HERMES_ACCEPT_HOOKS=1`` or ``hooks_auto_accept: true`` approve without
asking; off a terminal an unapproved hook does not run, and says so. ``HERMES_SAFE_MODE`` runs
none.
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import json
import logging
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time
import weakref
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import attrs

from hermes_hooks.calling.bounds import SELF_BOUNDED_ATTR
from hermes_hooks.plugins.config import env_flag, is_truthy
from hermes_hooks.spec.hookspecs import VALID_HOOKS

if TYPE_CHECKING:
    from hermes_hooks.plugins.manager import PluginManager

__all__ = [
    "ALLOWLIST_FILENAME",
    "BLOCK_EXIT_CODE",
    "DEFAULT_TIMEOUT",
    "MAX_TIMEOUT",
    "ShellHookReport",
    "ShellHookSpec",
    "SpawnResult",
    "allowlist_path",
    "approval_state",
    "evaluate",
    "install_shell_hooks",
    "parse_hooks",
    "payload_for",
    "record_approval",
    "revoke",
    "run_once",
    "script_path",
    "spawn",
]

logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT: Final = 60
MAX_TIMEOUT: Final = 300
ALLOWLIST_FILENAME: Final = "shell-hooks-allowlist.json"
BLOCK_EXIT_CODE: Final = 2
"""The exit code that blocks a ``pre_tool_call`` whatever stdout says (Claude Code, Cursor)."""

DEFAULT_BLOCK_MESSAGE: Final = "Blocked by shell hook."
_BLOCKING_EVENTS: Final = frozenset({"pre_tool_call"})
_TOOL_EVENTS: Final = frozenset({"pre_tool_call", "post_tool_call"})
SHELL_UNSUPPORTED_HOOKS: Final = frozenset({"transform_api_error_classification"})
"""Hooks whose answer a shell hook has no way to give (as in Hermes): refused in ``hooks:``."""

_RESERVED_SECTIONS: Final = frozenset({"output_spill", "outbound"})
_TOP_LEVEL: Final = frozenset({"tool_name", "args", "session_id", "parent_session_id"})
_MESSAGE_LIMIT: Final = 400
_SCRIPT_EXTENSIONS: Final = (
    ".sh", ".bash", ".zsh", ".fish", ".py", ".rb", ".pl", ".lua", ".js", ".mjs", ".ts",
)  # fmt: skip


@attrs.define
class ShellHookSpec:
    """One valid entry of ``hooks:``."""

    event: str
    command: str
    matcher: str | None = None
    timeout: int = DEFAULT_TIMEOUT
    fail_closed: bool = False
    index: int = 0

    @property
    def owner(self) -> str:
        """The key it is registered under: ``shell:<command>``."""
        return f"shell:{self.command}"

    def matches_tool(self, tool_name: object) -> bool:
        """Whether the hook fires for ``tool_name`` (no matcher: every tool)."""
        if self.event not in _TOOL_EVENTS or not self.matcher:
            return True
        if not isinstance(tool_name, str):
            return False
        try:
            return re.fullmatch(self.matcher, tool_name) is not None
        except re.error:
            return tool_name == self.matcher


def parse_hooks(section: object) -> tuple[list[ShellHookSpec], list[str]]:
    """Read ``hooks:``; return the valid entries and, for each refused one, why.

    A bad entry is refused alone: the others still run.
    """
    if section is None:
        return [], []
    if not isinstance(section, Mapping):
        return [], [f"hooks: must be a mapping of hook names to lists, found {_kind(section)}"]
    specs: list[ShellHookSpec] = []
    problems: list[str] = []
    for event, entries in section.items():
        if event in _RESERVED_SECTIONS or entries is None:
            continue
        if event in SHELL_UNSUPPORTED_HOOKS:
            problems.append(
                f"hooks.{event}: a shell hook cannot answer this hook (Python plugins only); "
                "refused"
            )
            continue
        if event not in VALID_HOOKS:
            close = difflib.get_close_matches(str(event), sorted(VALID_HOOKS), n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            problems.append(f"hooks.{event}: not a hook{hint}")
            continue
        if not isinstance(entries, list):
            problems.append(f"hooks.{event}: expected a list of entries, found {_kind(entries)}")
            continue
        for index, raw in enumerate(entries):
            spec = _parse_entry(event, index, raw, problems)
            if spec is not None:
                specs.append(spec)
    return specs, problems


def _kind(value: object) -> str:
    return f"{type(value).__name__} {value!r}"[:80]


def _parse_entry(event: str, index: int, raw: object, problems: list[str]) -> ShellHookSpec | None:
    where = f"hooks.{event}[{index}]"
    if not isinstance(raw, Mapping):
        problems.append(f"{where}: expected a mapping with a 'command', found {_kind(raw)}")
        return None
    command = raw.get("command")
    if not isinstance(command, str) or not command.strip():
        problems.append(f"{where}: 'command' must be a non-empty string, found {_kind(command)}")
        return None
    try:
        shlex.split(command)
    except ValueError as exc:
        problems.append(f"{where}: command {command!r} cannot be split into words: {exc}")
        return None
    matcher = raw.get("matcher")
    if matcher is not None:
        if not isinstance(matcher, str):
            problems.append(f"{where}: 'matcher' must be a regex string, found {_kind(matcher)}")
            return None
        matcher = matcher.strip() or None
        if matcher is not None and event not in _TOOL_EVENTS:
            problems.append(f"{where}: 'matcher' applies to tool hooks only; ignored for {event}")
            matcher = None
        if matcher is not None:
            try:
                re.compile(matcher)
            except re.error as exc:
                problems.append(f"{where}: matcher {matcher!r} is not a valid regex: {exc}")
                return None
    timeout = raw.get("timeout", DEFAULT_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout < 1:
        problems.append(
            f"{where}: 'timeout' must be a number of seconds from 1 to {MAX_TIMEOUT}, found "
            f"{_kind(timeout)}; {DEFAULT_TIMEOUT} is used"
        )
        timeout = DEFAULT_TIMEOUT
    elif timeout > MAX_TIMEOUT:
        problems.append(
            f"{where}: 'timeout' {timeout} is over {MAX_TIMEOUT}; {MAX_TIMEOUT} is used"
        )
        timeout = MAX_TIMEOUT
    fail_closed = raw.get("fail_closed", raw.get("failClosed", False))
    if not isinstance(fail_closed, bool):
        problems.append(f"{where}: 'fail_closed' must be true or false, found {_kind(fail_closed)}")
        return None
    if fail_closed and event not in _BLOCKING_EVENTS:
        problems.append(f"{where}: 'fail_closed' applies to pre_tool_call only; ignored")
        fail_closed = False
    return ShellHookSpec(event, command.strip(), matcher, int(timeout), fail_closed, index)


# -- running one ---------------------------------------------------------------------------------


@attrs.frozen
class SpawnResult:
    """What one run of a command gave."""

    returncode: int | None = None
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    elapsed: float = 0.0
    error: str | None = None


def payload_for(event: str, kwargs: Mapping[str, Any], cwd: Path | None = None) -> str:
    """Return the JSON written to the command's stdin for a call of ``event``."""
    args = kwargs.get("args")
    payload = {
        "hook_event_name": event,
        "tool_name": kwargs.get("tool_name"),
        "tool_input": dict(args) if isinstance(args, Mapping) else None,
        "session_id": kwargs.get("session_id") or kwargs.get("parent_session_id") or "",
        "cwd": str(cwd or Path.cwd()),
        "profile": "default",
        "extra": {k: v for k, v in kwargs.items() if k not in _TOP_LEVEL},
    }
    return json.dumps(payload, ensure_ascii=False, default=str)


def _kill_group(proc: subprocess.Popen[str]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        proc.kill()


def spawn(spec: ShellHookSpec, stdin: str) -> SpawnResult:
    """Run ``spec.command`` once with ``stdin``; at its timeout kill its whole process group."""
    try:
        argv = shlex.split(os.path.expanduser(spec.command))
    except ValueError as exc:
        return SpawnResult(error=f"command {spec.command!r} cannot be split: {exc}")
    if not argv:
        return SpawnResult(error="empty command")
    argv[0] = os.path.expanduser(argv[0])
    started = time.monotonic()
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            errors="replace",
            process_group=0,
        )
    except FileNotFoundError:
        return SpawnResult(error=f"command not found: {argv[0]}")
    except PermissionError:
        return SpawnResult(error=f"command not executable: {argv[0]}")
    except OSError as exc:
        return SpawnResult(error=f"cannot run {argv[0]}: {exc}")
    try:
        stdout, stderr = proc.communicate(input=stdin, timeout=spec.timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.communicate(timeout=2)
        return SpawnResult(timed_out=True, elapsed=time.monotonic() - started)
    except BaseException:
        _kill_group(proc)  # in its own group, Ctrl-C never reaches it: only we can stop it
        raise
    return SpawnResult(
        proc.returncode, stdout or "", stderr or "", False, time.monotonic() - started
    )


def _message(primary: object, secondary: object) -> str:
    raw = primary or secondary
    return raw if isinstance(raw, str) and raw.strip() else DEFAULT_BLOCK_MESSAGE


def _pre_tool_call(data: Mapping[str, Any]) -> dict[str, Any] | None:
    specific = data.get("hookSpecificOutput")
    if isinstance(specific, Mapping):
        decision = specific.get("permissionDecision")
        reason = specific.get("permissionDecisionReason")
        if decision == "deny":
            return {"action": "block", "message": _message(reason, None)}
        if isinstance(specific.get("updatedInput"), Mapping):
            return {"action": "modify", "args": dict(specific["updatedInput"])}
        if decision == "ask":
            return {"action": "approve", "message": _message(reason, None)}
    for verb, primary, secondary in (
        ("action", "message", "reason"),
        ("decision", "reason", "message"),
    ):
        if data.get(verb) == "block":
            return {"action": "block", "message": _message(data.get(primary), data.get(secondary))}
    for verb, key in (("action", "args"), ("decision", "tool_input")):
        if data.get(verb) == "modify" and isinstance(data.get(key), Mapping):
            return {"action": "modify", "args": dict(data[key])}
    return None


def _pre_verify(data: Mapping[str, Any]) -> dict[str, Any] | None:
    action = str(data.get("action") or data.get("decision") or "").strip().lower()
    message = data.get("message") or data.get("reason")
    if action in {"continue", "block"} and isinstance(message, str) and message.strip():
        return {"action": "continue", "message": message.strip()}
    return None


def _context(data: Mapping[str, Any]) -> dict[str, Any] | None:
    context = data.get("context")
    return {"context": context} if isinstance(context, str) and context.strip() else None


_PARSERS: Final[dict[str, Callable[[Mapping[str, Any]], dict[str, Any] | None]]] = {
    "pre_tool_call": _pre_tool_call,
    "pre_verify": _pre_verify,
}


def _parse(event: str, stdout: str) -> tuple[dict[str, Any] | None, bool]:
    """Return the answer in stdout, and whether stdout was a JSON object (or empty)."""
    text = stdout.strip()
    if not text:
        return None, True
    try:
        data = json.loads(text)
    except ValueError:
        return None, False
    if not isinstance(data, Mapping):
        return None, False
    return _PARSERS.get(event, _context)(data), True


def evaluate(spec: ShellHookSpec, result: SpawnResult) -> dict[str, Any] | None:
    """Turn one run into the hook's answer (``None``: no answer), by Hermes' rules."""
    closed = spec.fail_closed and spec.event in _BLOCKING_EVENTS
    failure = result.error or (f"timed out after {spec.timeout} s" if result.timed_out else None)
    if failure is not None:
        logger.warning("shell hook %s (%s) failed: %s", spec.command, spec.event, failure)
        return _failed_closed(spec, failure) if closed else None
    stderr = result.stderr.strip()
    if result.returncode == BLOCK_EXIT_CODE and spec.event in _BLOCKING_EVENTS:
        parsed, _ = _parse(spec.event, result.stdout)
        if parsed is not None and parsed.get("action") == "block":
            return parsed
        return {"action": "block", "message": stderr[:_MESSAGE_LIMIT] or DEFAULT_BLOCK_MESSAGE}
    if result.returncode != 0:
        logger.warning(
            "shell hook %s (%s) exited %s: %s",
            spec.command,
            spec.event,
            result.returncode,
            stderr[:_MESSAGE_LIMIT],
        )
    parsed, readable = _parse(spec.event, result.stdout)
    if parsed is None and not readable:
        logger.warning("shell hook %s (%s): stdout is not a JSON object", spec.command, spec.event)
        if closed:
            return _failed_closed(spec, "its output is not a JSON object")
    return parsed


def _failed_closed(spec: ShellHookSpec, reason: str) -> dict[str, Any]:
    return {"action": "block", "message": f"shell hook {spec.command} failed closed: {reason}"}


def run_once(spec: ShellHookSpec, kwargs: Mapping[str, Any]) -> tuple[SpawnResult, Any]:
    """Run ``spec`` once on a made-up call (``hermes hooks test``, doctor): result and answer."""
    result = spawn(spec, payload_for(spec.event, kwargs))
    return result, evaluate(spec, result)


# -- consent -------------------------------------------------------------------------------------


def allowlist_path(home: Path) -> Path:
    """The approvals of ``home``: ``$HERMES_HOME/shell-hooks-allowlist.json``."""
    return home / ALLOWLIST_FILENAME


def script_path(command: str) -> Path | None:
    """The script a command runs: its first word with a script suffix, else its first word
    that is a path, else its first word resolved on ``PATH``; ``None`` when there is none."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if not words:
        return None
    chosen = next((w for w in words if w.lower().endswith(_SCRIPT_EXTENSIONS)), None)
    chosen = chosen or next((w for w in words if "/" in w or w.startswith("~")), None)
    if chosen is None:
        import shutil

        found = shutil.which(words[0])
        return Path(found) if found else None
    return Path(os.path.expanduser(chosen))


def script_digest(command: str) -> str | None:
    """The SHA-256 of the script's content, or ``None`` when it cannot be read."""
    path = script_path(command)
    if path is None:
        return None
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _load(home: Path) -> dict[str, Any]:
    try:
        data = json.loads(allowlist_path(home).read_text(encoding="utf-8-sig"))
    except (OSError, ValueError):
        data = None
    if not isinstance(data, dict) or not isinstance(data.get("approvals"), list):
        return {"approvals": []}
    return data


@contextlib.contextmanager
def _updating(home: Path) -> Iterator[dict[str, Any]]:
    """Read, change and write the approvals under a lock; the file is replaced atomically."""
    import fcntl

    path = allowlist_path(home)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_suffix(".json.lock"), "a+", encoding="utf-8") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        data = _load(home)
        yield data
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".allowlist-", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(data, out, indent=2, sort_keys=True)
                out.flush()
                os.fsync(out.fileno())
            os.chmod(temporary, 0o600)
            os.replace(temporary, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise


def approval_state(home: Path, spec: ShellHookSpec) -> str:
    """``"approved"``, ``"unapproved"``, or ``"changed"`` (its script changed since)."""
    entries = [
        e
        for e in _load(home)["approvals"]
        if isinstance(e, dict) and e.get("event") == spec.event and e.get("command") == spec.command
    ]
    if not entries:
        return "unapproved"
    digest = script_digest(spec.command)
    return "approved" if any(e.get("script_sha256") == digest for e in entries) else "changed"


def record_approval(home: Path, spec: ShellHookSpec) -> None:
    """Approve ``spec`` as its script is now."""
    entry = {
        "event": spec.event,
        "command": spec.command,
        "script_sha256": script_digest(spec.command),
        "approved_at": datetime.now(tz=UTC).isoformat(),
    }
    with _updating(home) as data:
        data["approvals"] = [
            e
            for e in data["approvals"]
            if not (
                isinstance(e, dict)
                and e.get("event") == spec.event
                and e.get("command") == spec.command
            )
        ] + [entry]


def revoke(home: Path, command: str) -> int:
    """Withdraw every approval of ``command``; return how many there were."""
    with _updating(home) as data:
        before = len(data["approvals"])
        data["approvals"] = [
            e
            for e in data["approvals"]
            if not (isinstance(e, dict) and e.get("command") == command)
        ]
        return before - len(data["approvals"])


def _ask_on_terminal(spec: ShellHookSpec, state: str) -> bool:
    changed = " (its script changed since it was approved)" if state == "changed" else ""
    sys.stderr.write(
        f"\nA shell hook wants to run a command on your behalf{changed}:\n"
        f"    event:   {spec.event}\n    command: {spec.command}\n"
        "It runs with your permissions. Approve only commands you trust.\n"
    )
    try:
        answer = input("Allow this hook to run? [y/N]: ")
    except (EOFError, KeyboardInterrupt):
        return False
    return answer.strip().lower() in {"y", "yes"}


# -- wiring --------------------------------------------------------------------------------------


@attrs.define
class ShellHookReport:
    """What :func:`install_shell_hooks` did."""

    installed: list[ShellHookSpec] = attrs.Factory(list)
    skipped: list[tuple[ShellHookSpec, str]] = attrs.Factory(list)
    problems: list[str] = attrs.Factory(list)


def accepts_all(config: Mapping[str, Any], accept: bool = False) -> bool:
    """Whether hooks are approved without asking: the argument, ``HERMES_ACCEPT_HOOKS`` or
    ``hooks_auto_accept: true``."""
    if accept or env_flag("HERMES_ACCEPT_HOOKS"):
        return True
    value = config.get("hooks_auto_accept", False)
    return value is True or (isinstance(value, str) and is_truthy(value))


def _callback(spec: ShellHookSpec, cwd: Callable[[], Path]) -> Callable[..., Any]:
    def shell_hook(**kwargs: Any) -> Any:
        if not spec.matches_tool(kwargs.get("tool_name")):
            return None
        return evaluate(spec, spawn(spec, payload_for(spec.event, kwargs, cwd())))

    shell_hook.__qualname__ = f"shell_hook[{spec.event}:{spec.command}]"
    return shell_hook


_INSTALLED: weakref.WeakSet[PluginManager] = weakref.WeakSet()
"""The managers that have their shell hooks: installing is done once per manager."""


def install_shell_hooks(
    pm: PluginManager,
    config: Mapping[str, Any] | None = None,
    *,
    accept: bool = False,
    ask: Callable[[ShellHookSpec, str], bool] | None = None,
    interactive: bool | None = None,
) -> ShellHookReport:
    """Register the approved commands of ``hooks:`` as implementations on ``pm``.

    :param config: the whole ``config.yaml`` (read from ``pm``'s home when omitted).
    :param accept: approve every command without asking (``--accept-hooks``).
    :param ask: asks the person about one command; on a terminal by default.
    :param interactive: whether a person can be asked (default: stdin is a terminal).
    """
    from hermes_hooks.plugins.configfile import load_config
    from hermes_hooks.plugins.loading import PluginHooks, make_hook_adapter

    report = ShellHookReport()
    if env_flag("HERMES_SAFE_MODE") or pm in _INSTALLED:
        return report
    _INSTALLED.add(pm)
    if config is None:
        try:
            config = load_config(pm.hermes_home)
        except Exception as exc:  # the manager reports a bad config.yaml already
            logger.debug("shell hooks: config.yaml not read: %s", exc)
            return report
    specs, report.problems = parse_hooks(config.get("hooks"))
    for problem in report.problems:
        logger.warning("config.yaml %s", problem)
    if not specs:
        return report
    home = pm.hermes_home
    auto = accepts_all(config, accept)
    can_ask = sys.stdin.isatty() if interactive is None else interactive
    asker = ask or _ask_on_terminal
    for spec in specs:
        state = approval_state(home, spec)
        if state != "approved":
            if auto or (can_ask and asker(spec, state)):
                record_approval(home, spec)
            else:
                why = (
                    f"shell hook {spec.command!r} for {spec.event} is not approved"
                    f"{' since its script changed' if state == 'changed' else ''}, so it does "
                    "not run: approve it on a terminal, or run with --accept-hooks "
                    "(HERMES_ACCEPT_HOOKS=1)"
                )
                logger.warning("%s", why)
                report.skipped.append((spec, why))
                continue
        argnames = pm.hook_argnames(spec.event)
        adapter = make_hook_adapter(
            spec.event, _callback(spec, lambda: Path.cwd()), argnames, owner=spec.owner
        )
        # Killed at its own timeout: plugins.hook_callback_timeout does not cut it short.
        setattr(adapter, SELF_BOUNDED_ATTR, True)
        key = spec.owner
        if pm.has_plugin(key):  # the same command on another hook, or twice
            key = f"{spec.owner} ({spec.event}#{spec.index})"
        pm.register(PluginHooks(key, None, {}, [(spec.event, adapter)]), name=key)
        report.installed.append(spec)
    return report
