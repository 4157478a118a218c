"""The ``scripted`` provider: a model that answers from a script, for tests.

Each model request takes the next step of the script:

- a ``str`` is a final answer;
- :func:`tool_call` (or a list of them, for parallel calls) asks for tool calls;
- a :class:`~hermes_hooks.backends.models.ModelResponse` is returned as it is;
- a :class:`~hermes_hooks.backends.models.ModelError` is raised (a retryable one makes the host
  retry, with the next step);
- a callable gets the :class:`ScriptedRequest` and returns one of the above.

Unlike a fake model that answers ``""`` once its outputs run out, it keeps count both ways: a
request past the end of the script fails the request (``ModelError`` with reason
``script_exhausted``), and :meth:`ScriptedModel.check` raises :class:`ScriptMismatchError`,
showing the script next to the requests, when steps were left over or requests were not
scripted.
"""

from __future__ import annotations

import collections
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final, TypeAlias

import attrs

from hermes_hooks.backends.models.base import (
    ModelError,
    ModelProvider,
    ModelResponse,
    ToolCall,
    dumps,
    message_text,
)

__all__ = [
    "ScriptMismatchError",
    "ScriptStep",
    "ScriptedModel",
    "ScriptedRequest",
    "ScriptedToolCall",
    "tool_call",
]

_EXCERPT: Final = 120


@attrs.frozen
class ScriptedToolCall:
    """One tool call the script makes the model ask for.

    :param name: the tool's name.
    :param args: its arguments (sent to the host as JSON text).
    """

    name: str
    args: Mapping[str, Any] = attrs.field(factory=dict, converter=dict)

    def __repr__(self) -> str:
        shown = [repr(self.name)]
        if all(key.isidentifier() for key in self.args):
            shown += [f"{key}={value!r}" for key, value in self.args.items()]
        else:
            shown.append(repr(dict(self.args)))
        return f"tool_call({', '.join(shown)})"


def tool_call(
    name: str, args: Mapping[str, Any] | None = None, /, **kwargs: Any
) -> ScriptedToolCall:
    """Return a script step that asks for the tool ``name``.

    ``tool_call("terminal", command="ls")``; arguments whose names are not identifiers go in a
    mapping: ``tool_call("http", {"content-type": "text/plain"})``.
    """
    return ScriptedToolCall(name, {**(args or {}), **kwargs})


@attrs.frozen
class ScriptedRequest:
    """One request the host sent to the scripted model.

    :param number: 1 for the first request of the script, then 2, ...
    :param messages: the messages as sent (a JSON copy).
    :param tools: the names of the tools offered.
    :param options: the other arguments of ``complete`` that were given (``json_schema``...).
    """

    number: int
    messages: list[dict[str, Any]]
    tools: tuple[str, ...]
    options: Mapping[str, Any] = attrs.field(factory=dict)

    @property
    def last_message(self) -> dict[str, Any]:
        """The last message sent (the user's, or the last tool result)."""
        return self.messages[-1] if self.messages else {}

    @property
    def last_text(self) -> str:
        """The text of the last message."""
        return message_text(self.last_message)

    def describe(self) -> str:
        """Say what the request was about, in one line: its last message, shortened."""
        last = self.last_message
        role = last.get("role", "?")
        text = " ".join(self.last_text.split())
        if len(text) > _EXCERPT:
            text = text[: _EXCERPT - 1] + "…"
        extra = " (asking for JSON)" if self.options.get("json_schema") else ""
        return f"after the {role} message {text!r}{extra}"


ScriptStep: TypeAlias = (
    str
    | ScriptedToolCall
    | Sequence[ScriptedToolCall]
    | ModelResponse
    | ModelError
    | Callable[[ScriptedRequest], Any]
)
"""One answer of the script (see the module docstring)."""


class ScriptMismatchError(AssertionError):
    """The requests of a turn did not match its script: steps left over, or too many requests.

    :param report: the script next to the requests, one line per step.
    """

    def __init__(self, message: str, report: str) -> None:
        super().__init__(f"{message}\n{report}")
        self.report = report


def _describe_step(step: object) -> str:
    if isinstance(step, str):
        return f"answer {step!r}"
    if isinstance(step, ScriptedToolCall):
        return repr(step)
    if isinstance(step, ModelResponse):
        calls = ", ".join(call.name for call in step.tool_calls)
        return f"ModelResponse(text={step.text!r}, tool_calls=[{calls}])"
    if isinstance(step, ModelError):
        return f"raise ModelError({str(step)!r}, reason={step.reason!r})"
    if isinstance(step, Sequence):
        return "[" + ", ".join(_describe_step(s) for s in step) + "]"
    return f"call {getattr(step, '__qualname__', repr(step))}"


class ScriptedModel(ModelProvider):
    """A model that answers each request with the next step of its script.

    :param script: the steps; more can be added with :meth:`extend`, or a fresh script set
        with :meth:`load`.
    :param model: the model name the host reports to the hooks.
    """

    provider = "scripted"

    def __init__(self, script: Iterable[ScriptStep] = (), *, model: str = "scripted-1") -> None:
        self.model = model
        self.steps: list[ScriptStep] = []
        self.requests: list[ScriptedRequest] = []
        self._queue: collections.deque[ScriptStep] = collections.deque()
        self._answered: list[tuple[ScriptStep, ScriptedRequest]] = []
        self._unscripted: list[ScriptedRequest] = []
        self._calls = 0
        self.load(script)

    def load(self, script: Iterable[ScriptStep] | ScriptStep) -> None:
        """Start a fresh script: forget the steps and requests of the previous one.

        A single step (a ``str``, a :func:`tool_call`, a response, an error) is a script of one.
        """
        steps: list[ScriptStep] = (
            list(script)
            if isinstance(script, Iterable) and not isinstance(script, str | ScriptedToolCall)
            else [script]
        )
        self.steps = steps
        self.requests = []
        self._queue = collections.deque(steps)
        self._answered = []
        self._unscripted = []

    def extend(self, script: Iterable[ScriptStep]) -> None:
        """Add steps at the end of the current script."""
        steps = list(script)
        self.steps.extend(steps)
        self._queue.extend(steps)

    @property
    def remaining(self) -> list[ScriptStep]:
        """The steps no request has reached yet."""
        return list(self._queue)

    def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] = (),
        *,
        model: str | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        json_schema: Mapping[str, Any] | None = None,
    ) -> ModelResponse:
        """Answer with the next step; a request past the end of the script is a ``ModelError``."""
        given = {
            "model": model,
            "temperature": temperature,
            "max_tokens": max_tokens,
            "json_schema": json_schema,
        }
        request = ScriptedRequest(
            number=len(self.requests) + 1,
            messages=json.loads(dumps(list(messages))),
            tools=tuple(str(t.get("function", {}).get("name", "")) for t in tools),
            options={k: v for k, v in given.items() if v is not None},
        )
        self.requests.append(request)
        if not self._queue:
            self._unscripted.append(request)
            raise ModelError(
                f"the script has no step {request.number}: it has {len(self.steps)} "
                f"step{'s' if len(self.steps) != 1 else ''}",
                reason="script_exhausted",
            )
        step = self._queue.popleft()
        self._answered.append((step, request))
        return self._respond(step, request)

    def _respond(self, step: object, request: ScriptedRequest) -> ModelResponse:
        if callable(step) and not isinstance(step, ModelResponse | ModelError):
            step = step(request)
        if isinstance(step, ModelError):
            raise step
        if isinstance(step, ModelResponse):
            return step
        if isinstance(step, str):
            return ModelResponse(text=step, finish_reason="stop", model=self.model)
        if isinstance(step, ScriptedToolCall):
            step = [step]
        if isinstance(step, Sequence) and all(isinstance(s, ScriptedToolCall) for s in step):
            calls = []
            for call in step:
                self._calls += 1
                calls.append(ToolCall(f"call_{self._calls}", call.name, dumps(dict(call.args))))
            return ModelResponse(
                tool_calls=tuple(calls), finish_reason="tool_calls", model=self.model
            )
        raise TypeError(
            f"script step {request.number} is {type(step).__name__} {step!r:.80}: expected a "
            "str (an answer), tool_call(...), a list of tool_call(...), a ModelResponse, a "
            "ModelError, or a callable returning one of these"
        )

    def report(self) -> str:
        """Return the script next to the requests: one line per step and per extra request.

        ``  `` a step that answered a request, ``- `` a step never reached, ``+ `` a request
        the script had no step for.
        """
        lines = []
        for index, (step, request) in enumerate(self._answered, 1):
            lines.append(
                f"  step {index}: {_describe_step(step)}  → request {request.number}, "
                f"{request.describe()}"
            )
        for index, step in enumerate(self._queue, len(self._answered) + 1):
            lines.append(f"- step {index}: {_describe_step(step)}  → never reached")
        for request in self._unscripted:
            lines.append(f"+ request {request.number}, {request.describe()}  → not scripted")
        return "\n".join(lines) if lines else "  (an empty script, and no request)"

    def check(self, *, ended: str = "") -> None:
        """Raise :class:`ScriptMismatchError` unless every step answered exactly one request.

        :param ended: how the turn ended, for the message (e.g. ``text_response(stop)``).
        """
        __tracebackhide__ = True
        if not self._queue and not self._unscripted:
            return
        steps, asked = len(self.steps), len(self.requests)
        how = f" (the turn ended: {ended})" if ended else ""
        if self._unscripted:
            message = (
                f"the model was asked {asked} time{'s' if asked != 1 else ''}, but the script "
                f"has {steps} step{'s' if steps != 1 else ''}{how}"
            )
        else:
            left = len(self._queue)
            message = (
                f"{left} of the {steps} scripted steps {'was' if left == 1 else 'were'} never "
                f"reached: the model was asked {asked} time{'s' if asked != 1 else ''}{how}"
            )
        raise ScriptMismatchError(message, self.report())
