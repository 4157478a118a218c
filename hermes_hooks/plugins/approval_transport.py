"""Approval transports: the contract between the host's approval gate and a plugin that puts
approvals to a person elsewhere (a phone, a chat, a web page). Hermes'
``hermes_cli/approval_transport.py``, served as ``hermes_cli.approval_transport``.

A plugin registers ``ctx.register_approval_transport(name, present_fn)``; it is inactive until
``security.approval.transport: <name>`` selects it. When a tool call needs approval the host
builds an :class:`ApprovalRequest` (immutable, the command and description redacted, a digest
over its fields), calls ``present_fn(request)`` on a bounded worker (sync or async; at most
:data:`MAX_ACTIVE_WORKERS` at once) and waits ``approvals.timeout`` seconds (300 by default).
The transport answers ``request.respond(choice)``; anything else (a timeout, a raise, a
decision for another request, a choice not offered) is a denial, as
:func:`invoke_approval_transport` says.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import hashlib
import inspect
import json
import logging
import queue
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any, Final, Literal

import attrs

__all__ = [
    "MAX_ACTIVE_WORKERS",
    "ApprovalDecision",
    "ApprovalRequest",
    "ApprovalTransportResult",
    "invoke_approval_transport",
]

logger = logging.getLogger(__name__)

MAX_ACTIVE_WORKERS: Final = 8
"""Transport calls running at once, across the process; one more is denied as ``busy``."""

_SLOTS: Final = threading.BoundedSemaphore(MAX_ACTIVE_WORKERS)

ApprovalChoice = Literal["once", "session", "always", "deny"]


@attrs.frozen
class ApprovalDecision:
    """A transport's answer, bound to one request by its id and digest."""

    request_id: str
    request_digest: str
    choice: str


@attrs.frozen
class ApprovalRequest:
    """What a transport is shown: display-only, redacted, immutable."""

    schema_version: int
    request_id: str
    digest: str
    command: str
    description: str
    pattern_key: str
    pattern_keys: tuple[str, ...]
    surface: str
    timeout_seconds: float
    allowed_choices: tuple[str, ...]

    @classmethod
    def create(
        cls,
        *,
        command: str,
        description: str,
        pattern_key: str,
        pattern_keys: tuple[str, ...],
        session_key: str,
        surface: str,
        allow_session: bool,
        allow_permanent: bool,
        timeout_seconds: float = 300,
    ) -> ApprovalRequest:
        """Build a request with a fresh id and the digest over its fields and session."""
        choices = ["once", *(["session"] if allow_session else [])]
        choices += [*(["always"] if allow_permanent else []), "deny"]
        fields: dict[str, Any] = {
            "schema_version": 1,
            "request_id": uuid.uuid4().hex,
            "command": command,
            "description": description,
            "pattern_key": pattern_key,
            "pattern_keys": list(pattern_keys),
            "surface": surface,
            "timeout_seconds": timeout_seconds,
            "allowed_choices": choices,
        }
        canonical = json.dumps(
            {**fields, "session_key": session_key}, sort_keys=True, separators=(",", ":")
        )
        digest = hashlib.sha256(canonical.encode("utf-8")).hexdigest()
        return cls(
            **{**fields, "pattern_keys": tuple(pattern_keys), "allowed_choices": tuple(choices)},
            digest=digest,
        )

    def respond(self, choice: str) -> ApprovalDecision:
        """The correlated answer a transport returns."""
        return ApprovalDecision(self.request_id, self.digest, choice)


@attrs.frozen
class ApprovalTransportResult:
    """The host's reading of a transport call: a choice, and the failure that made it deny."""

    choice: str
    failure: str | None = None


def _deny(failure: str) -> ApprovalTransportResult:
    return ApprovalTransportResult("deny", failure)


def invoke_approval_transport(
    present: Callable[[ApprovalRequest], Any],
    request: ApprovalRequest,
    *,
    timeout_seconds: float,
    poll_interval: float = 0.5,
    is_interrupted: Callable[[], bool] | None = None,
) -> ApprovalTransportResult:
    """Run ``present(request)`` on a daemon worker within ``timeout_seconds``; every failure
    is a denial naming it: ``busy``, ``error`` (it raised), ``timeout``, ``interrupted``,
    ``invalid`` (not an :class:`ApprovalDecision`, or a choice not offered), ``stale`` (the
    decision of another request). A late answer is dropped."""
    if not _SLOTS.acquire(blocking=False):
        logger.warning("approval transport: %d calls are running already", MAX_ACTIVE_WORKERS)
        return _deny("busy")
    results: queue.Queue[tuple[str, object, float]] = queue.Queue(maxsize=1)
    deadline = time.monotonic() + max(float(timeout_seconds), 0.0)

    def run() -> None:
        try:
            value = present(request)
            if inspect.isawaitable(value):
                awaitable = value

                async def wait() -> object:
                    return await awaitable

                value = asyncio.run(wait())
            results.put_nowait(("result", value, time.monotonic()))
        except BaseException as exc:  # fail closed on any exit
            with contextlib.suppress(queue.Full):
                results.put_nowait(("error", exc, time.monotonic()))
        finally:
            _SLOTS.release()

    worker = threading.Thread(
        target=contextvars.copy_context().run,
        args=(run,),
        name=f"approval-transport-{request.request_id[:8]}",
        daemon=True,
    )
    try:
        worker.start()
    except BaseException:
        _SLOTS.release()
        return _deny("error")
    while True:
        if is_interrupted is not None and is_interrupted():
            return _deny("interrupted")
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            logger.warning("approval transport timed out for request %s", request.request_id)
            return _deny("timeout")
        try:
            kind, value, done_at = results.get(timeout=min(max(poll_interval, 0.001), remaining))
            break
        except queue.Empty:
            continue
    if done_at > deadline:
        return _deny("timeout")
    if kind == "error":
        logger.warning("approval transport failed for request %s: %r", request.request_id, value)
        return _deny("error")
    if not isinstance(value, ApprovalDecision):
        logger.warning("approval transport answered %s, not a decision", type(value).__name__)
        return _deny("invalid")
    if value.request_id != request.request_id or value.request_digest != request.digest:
        logger.warning("approval transport answered another request")
        return _deny("stale")
    if value.choice not in request.allowed_choices:
        logger.warning("approval transport chose %r, which was not offered", value.choice)
        return _deny("invalid")
    return ApprovalTransportResult(value.choice)
