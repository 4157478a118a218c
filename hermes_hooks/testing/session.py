"""A host ``Session`` on a scripted model, with each turn's hooks and model requests at hand."""

from __future__ import annotations

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

__all__ = ["ScriptedSession", "ScriptedTurn"]


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

    def close(self) -> None:
        """Close the host session (``on_session_finalize``); the fixture does it at tear-down."""
        self.session.close()
