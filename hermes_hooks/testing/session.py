"""A host ``Session`` on a scripted model, with each turn's hooks and model requests at hand."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from hermes_hooks.backends.models.scripted import ScriptedModel, ScriptedRequest, ScriptStep
from hermes_hooks.host.approval import Approver
from hermes_hooks.host.records import ToolCallRecord, TurnResult
from hermes_hooks.host.session import Session

if TYPE_CHECKING:
    from hermes_hooks.plugins.manager import PluginManager
    from hermes_hooks.testing.recorder import HookCalls, HookRecorder

__all__ = ["CommandCall", "ScriptedSession", "ScriptedTurn"]


@attrs.frozen
class ScriptedTurn:
    """What one scripted turn did.

    :param turn: the host's result (``text``, ``completed``, ``failed``, ``exit_reason``...).
    :param hooks: the hook calls of this turn, in order (``hooks.names()``,
        ``hooks.assert_called(...)``...).
    :param requests: what the model was sent, one entry per request.
    :param recorder: the recorder of the whole test.
    """

    turn: TurnResult
    hooks: HookCalls
    requests: tuple[ScriptedRequest, ...]
    recorder: HookRecorder

    @property
    def text(self) -> str:
        """The final answer, after ``transform_llm_output``."""
        return self.turn.text

    @property
    def tool_calls(self) -> tuple[ToolCallRecord, ...]:
        """Each tool call: ``tool_name``, ``args``, ``status``, ``result``, ``decided_by``..."""
        return self.turn.tool_calls

    @property
    def tool_results(self) -> list[str]:
        """What the model was given back for each tool call, in order."""
        return [call.result for call in self.turn.tool_calls]

    @property
    def hook_names(self) -> list[str]:
        """The hooks of this turn, in the order they fired."""
        return self.hooks.names()


@attrs.frozen
class CommandCall:
    """One slash command run through :meth:`ScriptedSession.command`.

    :param command: its name, without the ``/``.
    :param args: the raw text after the name.
    :param text: the reply (a plugin command's returned value as text).
    :param owner: the plugin whose command it is, or ``None`` for the host's own.
    """

    command: str
    args: str
    text: str
    owner: str | None

    def __str__(self) -> str:
        return self.text


class ScriptedSession:
    """A reference-host :class:`~hermes_hooks.host.Session` whose model follows a script.

    :param pm: the plugin manager (host tools installed).
    :param recorder: records every hook call.
    :param workdir: the folder the ``terminal`` and ``read_file`` tools work in.
    :param session_options: more keyword arguments for ``Session`` (``platform``...).
    """

    def __init__(
        self,
        pm: PluginManager,
        recorder: HookRecorder,
        *,
        workdir: Path,
        **session_options: Any,
    ) -> None:
        self.pm = pm
        self.recorder = recorder
        self.model = ScriptedModel()
        options: dict[str, Any] = {"cwd": workdir, "retry_backoff": 0.0}
        options.update(session_options)
        self.session = Session(pm, self.model, **options)
        #: Every :meth:`command` call, in order.
        self.commands: list[CommandCall] = []

    @property
    def session_id(self) -> str:
        """The host session's id."""
        return self.session.session_id

    @property
    def approver(self) -> Approver:
        """Answers approval requests; the host's default denies them all."""
        return self.session.approver

    @approver.setter
    def approver(self, approver: Approver) -> None:
        self.session.approver = approver

    def run(self, user_message: str, *, script: Iterable[ScriptStep] | ScriptStep) -> ScriptedTurn:
        """Run one turn on ``user_message``, the model answering with the ``script``'s steps.

        :raises ScriptMismatchError: steps were left over, or the model was asked more times
            than scripted; the message shows the script next to the requests.
        :raises BaseException: what a plugin's hook raised during the turn (strict mode),
            even when the host carried on, with a note naming the plugin and the hook.
        """
        __tracebackhide__ = True
        self.model.load(script)
        start = len(self.recorder)
        turn = self.session.run_turn(user_message)
        hooks = self.recorder.since(start)
        failure = next((call.error for call in hooks if call.error is not None), None)
        if failure is not None:
            failure.add_note(
                f"during hermes_session.run({user_message!r}); the host ended the turn with "
                f"{turn.exit_reason!r}"
            )
            raise failure
        self.model.check(ended=turn.exit_reason)
        return ScriptedTurn(turn, hooks, tuple(self.model.requests), self.recorder)

    def command(self, text: str) -> CommandCall:
        """Run a slash command as the chat does: ``hermes_session.command("/wc one two")``.

        A plugin's command runs its handler with the raw arguments; an exception it raises is
        raised here (the chat would answer "/wc failed: ..."), and an async handler is awaited.
        The host's own commands (``/help``, ``/skills``...) answer as in the chat. Every call
        is kept in :attr:`commands`.

        :raises ValueError: ``text`` does not start with ``/``.
        """
        __tracebackhide__ = True
        from hermes_hooks.calling import aio
        from hermes_hooks.host.slash import run_slash_command

        if not text.startswith("/"):
            raise ValueError(f"a slash command starts with '/', found {text!r}")
        name, _, raw_args = text[1:].strip().partition(" ")
        raw_args = raw_args.strip()
        entry = self.pm.commands.get_entry(name)
        if entry is not None:
            reply = aio.resolve(entry.value.handler(raw_args))
            text_reply = "" if reply is None else str(reply)
            call = CommandCall(entry.name, raw_args, text_reply, entry.owner)
        else:
            host_reply = run_slash_command(self.session, text)
            call = CommandCall(host_reply.command, raw_args, host_reply.text, None)
        self.commands.append(call)
        return call

    def skill(self, name: str, file_path: str | None = None) -> dict[str, Any]:
        """Load skill ``name`` (``plugin:skill``) as the model does with ``skill_view``.

        :returns: the tool's answer, parsed: ``content``, ``linked_files``... on success.
        :raises AssertionError: the skill (or its file) cannot be loaded; the message is the
            tool's error.
        """
        __tracebackhide__ = True
        from hermes_hooks.host.skills import view_skill

        answer: dict[str, Any] = json.loads(view_skill(self.pm, name, file_path))
        if not answer.get("success"):
            raise AssertionError(f"skill_view({name!r}) failed: {answer.get('error')}")
        return answer

    def close(self) -> None:
        """Close the host session (``on_session_finalize``); the fixture does it at tear-down."""
        self.session.close()
