"""Hermes' ``hermes_cli.middleware``: the middleware vocabulary and the four chains.

Each function runs the middleware (``ctx.register_middleware``) of the manager
``hermes_cli.plugins.get_plugin_manager()`` names, with Hermes' semantics (see
:mod:`hermes_hooks.registries.middleware`); with no middleware of a kind the payload passes
through unchanged, the very object.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from hermes_hooks.registries.middleware import (
    MIDDLEWARE_SCHEMA_VERSION,
    OBSERVER_SCHEMA_VERSION,
    LLMExecutionBlocked,
    MiddlewareEntry,
    MiddlewareRegistry,
    RequestMiddlewareResult,
    apply_request_middleware,
    middleware_payload,
    observer_payload,
    run_execution_middleware,
)

__all__ = [
    "API_EXECUTION_MIDDLEWARE",
    "API_REQUEST_MIDDLEWARE",
    "LLM_EXECUTION_MIDDLEWARE",
    "LLM_REQUEST_MIDDLEWARE",
    "MIDDLEWARE_SCHEMA_VERSION",
    "OBSERVER_SCHEMA_VERSION",
    "TOOL_EXECUTION_MIDDLEWARE",
    "TOOL_REQUEST_MIDDLEWARE",
    "VALID_MIDDLEWARE",
    "LLMExecutionBlocked",
    "RequestMiddlewareResult",
    "apply_api_request_middleware",
    "apply_llm_request_middleware",
    "apply_tool_request_middleware",
    "middleware_payload",
    "observer_payload",
    "run_api_execution_middleware",
    "run_llm_execution_middleware",
    "run_tool_execution_middleware",
]

TOOL_REQUEST_MIDDLEWARE: Final = "tool_request"
TOOL_EXECUTION_MIDDLEWARE: Final = "tool_execution"
LLM_REQUEST_MIDDLEWARE: Final = "llm_request"
LLM_EXECUTION_MIDDLEWARE: Final = "llm_execution"
API_REQUEST_MIDDLEWARE: Final = LLM_REQUEST_MIDDLEWARE
API_EXECUTION_MIDDLEWARE: Final = LLM_EXECUTION_MIDDLEWARE
VALID_MIDDLEWARE: set[str] = {
    TOOL_REQUEST_MIDDLEWARE,
    TOOL_EXECUTION_MIDDLEWARE,
    LLM_REQUEST_MIDDLEWARE,
    LLM_EXECUTION_MIDDLEWARE,
}


def _manager() -> Any:
    """The manager ``hermes_cli.plugins.get_plugin_manager()`` names, looked up at each call as
    Hermes looks it up (so a stand-in a test puts there is the one used)."""
    from hermes_hooks.compat import hermes_cli_plugins

    return hermes_cli_plugins.get_plugin_manager()


def _foreign_entries(manager: Any, kind: str) -> list[MiddlewareEntry] | None:
    """For a manager that is not this project's (a test's stand-in with Hermes' ``_middleware``
    mapping of callbacks), its middleware of ``kind`` as entries; ``None`` for ours."""
    if isinstance(getattr(manager, "middleware", None), MiddlewareRegistry):
        return None
    found = (getattr(manager, "_middleware", None) or {}).get(kind) or []
    return [MiddlewareEntry("", kind, callback) for callback in found]


def _not_counted(owner: str, what: str, message: str) -> None:
    """A stand-in manager has no plugin status to count a middleware's failure on."""


def _request(kind: str, key: str, payload: dict[str, Any], **context: Any) -> Any:
    manager = _manager()
    foreign = _foreign_entries(manager, kind)
    if foreign is not None:
        return apply_request_middleware(foreign, key, payload, context, count_failure=_not_counted)
    if not manager.middleware.has(kind):
        return RequestMiddlewareResult(payload, payload)
    return manager.apply_middleware(kind, key, payload, **context)


def _execution(
    kind: str, key: str, payload: Any, next_call: Callable[[Any], Any], **context: Any
) -> Any:
    manager = _manager()
    foreign = _foreign_entries(manager, kind)
    if foreign is not None:
        if not foreign:
            return next_call(payload)
        return run_execution_middleware(
            foreign, key, payload, next_call, context, count_failure=_not_counted
        )
    if not manager.middleware.has(kind):
        return next_call(payload)
    return manager.run_middleware(kind, key, payload, next_call, **context)


def apply_llm_request_middleware(
    request: dict[str, Any], **context: Any
) -> RequestMiddlewareResult:
    """Apply ``llm_request`` middleware: one may return ``{"request": {...}}`` to replace it."""
    result: RequestMiddlewareResult = _request(LLM_REQUEST_MIDDLEWARE, "request", request,
                                               **context)  # fmt: skip
    return result


def apply_tool_request_middleware(
    tool_name: str, args: dict[str, Any], **context: Any
) -> RequestMiddlewareResult:
    """Apply ``tool_request`` middleware: one may return ``{"args": {...}}`` to replace them."""
    context.pop("skip_relay", None)
    result: RequestMiddlewareResult = _request(
        TOOL_REQUEST_MIDDLEWARE, "args", args, tool_name=tool_name, **context
    )
    return result


def apply_api_request_middleware(
    request: dict[str, Any], **context: Any
) -> RequestMiddlewareResult:
    """The older name of :func:`apply_llm_request_middleware`."""
    return apply_llm_request_middleware(request, **context)


def run_llm_execution_middleware(
    request: dict[str, Any], next_call: Callable[[dict[str, Any]], Any], **context: Any
) -> Any:
    """Run the model call ``next_call(request)`` through ``llm_execution`` middleware."""
    return _execution(LLM_EXECUTION_MIDDLEWARE, "request", request, next_call, **context)


def run_tool_execution_middleware(
    tool_name: str,
    args: dict[str, Any],
    next_call: Callable[[dict[str, Any]], Any],
    **context: Any,
) -> Any:
    """Run the tool call ``next_call(args)`` through ``tool_execution`` middleware."""
    return _execution(TOOL_EXECUTION_MIDDLEWARE, "args", args, next_call, tool_name=tool_name,
                      **context)  # fmt: skip


def run_api_execution_middleware(
    request: dict[str, Any], next_call: Callable[[dict[str, Any]], Any], **context: Any
) -> Any:
    """The older name of :func:`run_llm_execution_middleware`."""
    return run_llm_execution_middleware(request, next_call, **context)
