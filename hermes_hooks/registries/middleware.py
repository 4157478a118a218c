"""Middleware: plugin code that changes what happens, where hooks only observe it.

The middleware each plugin registered (``ctx.register_middleware``) is kept here by kind, in
order (:class:`MiddlewareRegistry`; a plugin's middleware goes when it unloads, like its
tools), and run here in Hermes' chains. Middleware is not a pluggy hook: its chains are not
the calling layer's, though its bound is (:mod:`hermes_hooks.calling.workers`).

Hermes has four kinds (``hermes_cli/middleware.py``): *request* middleware rewrites a payload
before it is used (``tool_request``: a tool call's arguments, before ``pre_tool_call``;
``llm_request``: the provider's request), *execution* middleware wraps the call itself
(``tool_execution`` around the tool's handler, ``llm_execution`` around the model call) and
receives ``next_call``. The semantics are Hermes':

- request middleware sees a copy and returns ``{"args": {...}}`` / ``{"request": {...}}`` to
  replace it (copy-on-change); each change adds a trace entry (``source``, ``reason``,
  ``name``, else ``{"source": "plugin"}``); anything else changes nothing;
- an execution middleware that fails before calling ``next_call`` is skipped (fail-open: the
  chain goes on without it); after a successful ``next_call``, its failure returns that result;
  ``next_call`` may be called once (a second call raises ``RuntimeError``); an error raised
  downstream reaches the caller untouched; :class:`LLMExecutionBlocked` always propagates.

Here, besides: each failure counts on the owning plugin's status, and a middleware's own time
is bounded like a hook's (``plugins.hook_callback_timeout``): request middleware over the
bound is skipped; execution middleware is bounded until it calls ``next_call`` (the
downstream call is not its time), and is skipped (fail-open) when it does not get there.
"""

from __future__ import annotations

import copy
import functools
import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

import attrs

from hermes_hooks.calling import contexts, workers

__all__ = [
    "ALIASES",
    "KINDS",
    "MIDDLEWARE_SCHEMA_VERSION",
    "OBSERVER_SCHEMA_VERSION",
    "LLMExecutionBlocked",
    "MiddlewareEntry",
    "MiddlewareRegistry",
    "RequestMiddlewareResult",
    "apply_request_middleware",
    "canonical_kind",
    "middleware_payload",
    "observer_payload",
    "run_execution_middleware",
    "trace_entry",
]

logger = logging.getLogger(__name__)

OBSERVER_SCHEMA_VERSION: Final = "hermes.observer.v1"
MIDDLEWARE_SCHEMA_VERSION: Final = "hermes.middleware.v1"
KINDS: Final = ("tool_request", "tool_execution", "llm_request", "llm_execution")
ALIASES: Final[Mapping[str, str]] = {
    "api_request": "llm_request",
    "api_execution": "llm_execution",
}

CountFailure = Callable[[str, str, str], None]
"""``count_failure(owner, where, message)``: count one failure on the owning plugin."""


def canonical_kind(kind: object) -> str:
    """Return Hermes' name for middleware kind ``kind`` (an alias becomes its kind).

    :raises ValueError: not one of the four kinds or their aliases.
    """
    if isinstance(kind, str):
        name = ALIASES.get(kind, kind)
        if name in KINDS:
            return name
    known = ", ".join([*KINDS, *ALIASES])
    raise ValueError(f"unknown middleware kind {kind!r}; expected one of {known}")


class LLMExecutionBlocked(Exception):
    """Raised by ``llm_execution`` middleware to stop the model call; always propagates.

    ``metadata["checked_by"]`` is filled with the raising middleware's name when unset.
    """

    def __init__(self, reason: str, *, metadata: dict[str, Any] | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.metadata: dict[str, Any] = metadata or {}


@attrs.define
class RequestMiddlewareResult:
    """What request middleware made of a payload: the payload to use, the original, and how."""

    payload: Any
    original_payload: Any
    changed: bool = False
    trace: list[dict[str, Any]] = attrs.Factory(list)


@attrs.frozen
class MiddlewareEntry:
    """One registered middleware callback and the plugin (or host) that owns it."""

    owner: str
    kind: str
    callback: Callable[..., Any]

    @property
    def name(self) -> str:
        """The callback's name, for traces, logs and ``checked_by``."""
        return str(getattr(self.callback, "__name__", repr(self.callback)))


def observer_payload(**kwargs: Any) -> dict[str, Any]:
    """Return ``kwargs`` with ``telemetry_schema_version`` set."""
    kwargs.setdefault("telemetry_schema_version", OBSERVER_SCHEMA_VERSION)
    return kwargs


def middleware_payload(**kwargs: Any) -> dict[str, Any]:
    """Return ``kwargs`` with the telemetry and middleware schema versions set."""
    kwargs.setdefault("telemetry_schema_version", OBSERVER_SCHEMA_VERSION)
    kwargs.setdefault("middleware_schema_version", MIDDLEWARE_SCHEMA_VERSION)
    return kwargs


def safe_copy(payload: Any) -> Any:
    """A deep copy; a shallow one when a member cannot be copied (a client, a callback)."""
    try:
        return copy.deepcopy(payload)
    except Exception:
        return dict(payload) if isinstance(payload, dict) else payload


def trace_entry(result: Mapping[str, Any]) -> dict[str, Any]:
    """Return the trace entry for one change: its ``source``, ``reason`` and ``name``."""
    entry = {
        key: value
        for key in ("source", "reason", "name")
        if isinstance(value := result.get(key), str) and value
    }
    return entry or {"source": "plugin"}


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _bounded(function: Callable[[], Any], seconds: float) -> Any:
    """Run ``function()`` here, or on a worker within ``seconds`` when that is above 0.

    :raises TimeoutError: it did not finish in time (it goes on in the background).
    """
    if seconds <= 0:
        return function()
    side = contexts.for_call()
    job = workers.submit(function, (), context=side.context)
    if not job.wait(seconds):
        if job.abandon():
            side.replace()
        raise TimeoutError(f"did not finish within {seconds:g} s (plugins.hook_callback_timeout)")
    return job.result()


def apply_request_middleware(
    entries: Sequence[MiddlewareEntry],
    payload_key: str,
    payload: dict[str, Any],
    context: Mapping[str, Any],
    *,
    count_failure: CountFailure,
    seconds: float = 0.0,
) -> RequestMiddlewareResult:
    """Run request middleware over ``payload`` (``args`` or ``request``), in order."""
    if not entries:
        return RequestMiddlewareResult(payload, payload)
    original = safe_copy(payload)
    current = safe_copy(original)
    trace: list[dict[str, Any]] = []
    for entry in entries:
        kwargs = middleware_payload(**context)
        kwargs[payload_key] = current
        kwargs[f"original_{payload_key}"] = original
        try:
            result = _bounded(functools.partial(entry.callback, **kwargs), seconds)
        except Exception as exc:
            message = _describe(exc)
            count_failure(entry.owner, f"middleware {entry.kind!r}", message)
            logger.warning("middleware %r of %r failed: %s", entry.kind, entry.owner, message)
            continue
        if not isinstance(result, dict):
            continue
        changed = result.get(payload_key)
        if isinstance(changed, dict):
            current = safe_copy(changed)
            trace.append(trace_entry(result))
    return RequestMiddlewareResult(current, original, bool(trace), trace)


class _Downstream(Exception):
    def __init__(self, original: BaseException) -> None:
        super().__init__(str(original))
        self.original = original


def run_execution_middleware(
    entries: Sequence[MiddlewareEntry],
    payload_key: str,
    payload: Any,
    terminal: Callable[[Any], Any],
    context: Mapping[str, Any],
    *,
    count_failure: CountFailure,
    seconds: float = 0.0,
) -> Any:
    """Run ``terminal(payload)`` through execution middleware (the first outermost)."""
    if not entries:
        return terminal(payload)
    original = context.get(f"original_{payload_key}", payload)
    base = {k: v for k, v in context.items() if k != f"original_{payload_key}"}

    def call_at(index: int, current: Any) -> Any:
        if index >= len(entries):
            return terminal(current)
        entry = entries[index]
        state: dict[str, Any] = {"called": False, "succeeded": False, "result": None}
        reached = threading.Event()

        def next_call(next_payload: Any = None) -> Any:
            if state["called"]:
                raise RuntimeError(
                    f"Middleware '{entry.kind}' callback {entry.name} called next_call() more "
                    "than once; downstream execution is single-use"
                )
            state["called"] = True
            reached.set()
            chosen = current if next_payload is None else next_payload
            try:
                state["result"] = call_at(index + 1, chosen)
            except Exception as exc:
                raise _Downstream(exc) from exc
            state["succeeded"] = True
            return state["result"]

        kwargs = _execution_kwargs(base, payload_key, current, original, next_call)
        try:
            return _until_next_call(lambda: entry.callback(**kwargs), reached, seconds)
        except LLMExecutionBlocked as exc:
            exc.metadata.setdefault("checked_by", entry.name)
            raise
        except _Downstream as exc:
            raise exc.original from None
        except Exception as exc:
            message = _describe(exc)
            count_failure(entry.owner, f"middleware {entry.kind!r}", message)
            logger.warning("middleware %r of %r failed: %s", entry.kind, entry.owner, message)
            if state["succeeded"]:
                return state["result"]
            if state["called"]:
                raise
            return call_at(index + 1, current)

    return call_at(0, payload)


def _execution_kwargs(
    base: Mapping[str, Any], key: str, current: Any, original: Any, next_call: Any
) -> dict[str, Any]:
    """What one execution middleware is called with: the context, the payload, ``next_call``."""
    kwargs = middleware_payload(**base)
    kwargs[key] = current
    kwargs[f"original_{key}"] = original
    kwargs["next_call"] = next_call
    return kwargs


def _until_next_call(function: Callable[[], Any], reached: threading.Event, seconds: float) -> Any:
    """Run an execution middleware, bounded until it calls ``next_call`` (see the module).

    :raises TimeoutError: it neither returned nor called ``next_call`` within ``seconds``.
    """
    if seconds <= 0:
        return function()
    side = contexts.for_call()
    job = workers.submit(function, (), context=side.context)
    if job.wait(seconds):
        return job.result()
    if not reached.is_set():
        if job.abandon():
            side.replace()
        raise TimeoutError(
            f"did not call next_call within {seconds:g} s (plugins.hook_callback_timeout)"
        )
    while not job.wait(3600.0):  # the downstream call runs its own course
        pass
    return job.result()


class MiddlewareRegistry:
    """Middleware callbacks by kind, in registration order."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[str, list[MiddlewareEntry]] = {kind: [] for kind in KINDS}

    def set_acting_plugins(self, lookup: Callable[[], frozenset[str]] | None) -> None:
        """Accepted for the manager's registries; a plugin registers only through its ctx."""

    def add(self, owner: str, kind: str, callback: Callable[..., Any]) -> MiddlewareEntry:
        """Register ``callback`` as ``owner``'s middleware of ``kind`` (an alias is accepted).

        :raises ValueError: an unknown kind, or a callback that is not callable.
        """
        name = canonical_kind(kind)
        if not callable(callback):
            raise ValueError(f"middleware for {name!r} must be callable, found {callback!r}")
        entry = MiddlewareEntry(owner, name, callback)
        with self._lock:
            self._entries[name] = [*self._entries[name], entry]
        return entry

    def entries(self, kind: str) -> list[MiddlewareEntry]:
        """Return the middleware of ``kind`` (or its alias), in order."""
        return list(self._entries[canonical_kind(kind)])

    def has(self, kind: str) -> bool:
        """Tell whether any middleware of ``kind`` is registered."""
        return bool(self._entries[canonical_kind(kind)])

    def names(self, *, owner: str | None = None) -> list[str]:
        """Return ``kind:callback`` for each middleware (of ``owner`` when given)."""
        return [
            f"{entry.kind}:{entry.name}"
            for kind in KINDS
            for entry in self._entries[kind]
            if owner is None or entry.owner == owner
        ]

    def remove_owner(self, owner: str) -> list[str]:
        """Remove ``owner``'s middleware; return what was removed."""
        gone = self.names(owner=owner)
        with self._lock:
            for kind in KINDS:
                self._entries[kind] = [e for e in self._entries[kind] if e.owner != owner]
        return gone
