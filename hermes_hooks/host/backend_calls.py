"""Calling a plugin's memory provider or context engine the way hooks are called: bounded and
isolated.

A call of a plugin's provider runs on a worker within its bound (the calling layer's
:func:`~hermes_hooks.calling.handoff.call_within`, as loading does), in the caller's plugin
side context, so the current manager and the plugin's context variables are there. One that
raises or does not finish in time is logged, counted on its plugin's status
(``pm.count_failure``) and treated as no answer: the turn goes on. A provider still busy with
a call that overran is skipped until that call returns, instead of piling up threads. The
host's own providers (the builtin memory, the ``compressor``) run inline.
"""

from __future__ import annotations

import functools
import inspect
import logging
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import attrs

from hermes_hooks.calling import handoff, workers
from hermes_hooks.registries.base import HOST

if TYPE_CHECKING:
    from hermes_hooks.plugins.manager import PluginManager

__all__ = ["BackendCaller", "CallOutcome", "accepted_kwargs"]

logger = logging.getLogger(__name__)


@attrs.frozen
class CallOutcome:
    """How one call went: ``ok`` with its ``value``, or why not (``error``)."""

    ok: bool
    value: Any = None
    error: str | None = None


@functools.lru_cache(maxsize=512)
def _parameters(function: Callable[..., Any]) -> tuple[frozenset[str], bool] | None:
    try:
        parameters = inspect.signature(function).parameters
    except (TypeError, ValueError):
        return None
    names = frozenset(parameters)
    return names, any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())


def accepted_kwargs(function: Callable[..., Any], kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """Return the ``kwargs`` that ``function`` can take: all when it takes ``**kwargs`` (or its
    signature cannot be read), else those it names, as Hermes passes optional arguments."""
    try:
        found = _parameters(getattr(function, "__func__", function))
    except TypeError:  # not hashable
        found = None
    if found is None or found[1]:
        return dict(kwargs)
    names = found[0]
    return {key: value for key, value in kwargs.items() if key in names}


class BackendCaller:
    """Calls the providers of one family for one host, bounded and isolated.

    :param pm: the manager whose plugins' failures are counted.
    :param what: how a provider is named in messages (``memory provider``).
    """

    def __init__(self, pm: PluginManager, what: str) -> None:
        self.pm = pm
        self.what = what
        self._busy: set[int] = set()
        self._lock = threading.Lock()

    def call(
        self,
        owner: str,
        name: str,
        method: str,
        function: Callable[..., Any],
        *args: Any,
        seconds: float,
        bound_name: str = "plugins.hook_callback_timeout",
        **kwargs: Any,
    ) -> CallOutcome:
        """Call ``function(*args, **kwargs)`` of provider ``name`` (of plugin ``owner``).

        :param seconds: its bound; ``0``, and any call of the host's own provider, runs inline.
        :param bound_name: the setting the bound comes from, for messages.
        """
        if owner == HOST or seconds <= 0:
            try:
                return CallOutcome(True, function(*args, **kwargs))
            except Exception as exc:
                return self._failed(owner, name, method, f"{type(exc).__name__}: {exc}", exc)
        key = id(function.__self__) if hasattr(function, "__self__") else id(function)
        with self._lock:
            if key in self._busy:
                logger.debug(
                    "%s %r: %s skipped, a call that overran is still running",
                    self.what,
                    name,
                    method,
                )
                return CallOutcome(False, error="skipped: an earlier call is still running")
            self._busy.add(key)

        def run() -> Any:
            try:
                return function(*args, **kwargs)
            finally:
                with self._lock:
                    self._busy.discard(key)

        try:
            value = handoff.call_within(run, (), seconds)
        except TimeoutError:
            message = f"did not finish within {seconds:g} s ({bound_name})"
            return self._failed(owner, name, method, message, None)
        except workers.WorkerUnavailableError as exc:
            with self._lock:
                self._busy.discard(key)
            return self._failed(owner, name, method, f"could not be called: {exc}", None)
        except Exception as exc:
            return self._failed(owner, name, method, f"{type(exc).__name__}: {exc}", exc)
        return CallOutcome(True, value)

    def _failed(
        self, owner: str, name: str, method: str, message: str, exc: BaseException | None
    ) -> CallOutcome:
        where = f"{self.what} '{name}' {method}()"
        if owner != HOST:
            self.pm.count_failure(owner, where, message)
            logger.warning("plugin %r: %s failed: %s", owner, where, message)
        else:
            logger.warning("%s failed: %s", where, message)
        if exc is not None and self.pm.strict:
            raise exc
        return CallOutcome(False, error=message)
