"""Retrying a model request: which failures, how long to wait, ``Retry-After`` honoured.

A failure is tried again when it is :attr:`~hermes_hooks.backends.models.ModelError.retryable`
(a timeout, a connection error, HTTP 408, 409, 425, 429 or 5xx), up to ``model.max_retries``
times. Before retry ``n`` (from 0) the wait is ``model.retry_backoff * 2**n`` seconds, capped at
:data:`MAX_BACKOFF` and scaled by a random factor between 0.5 and 1.5 (so that many clients
rate-limited together do not come back together); when the server said how long with
``Retry-After`` (seconds, or an HTTP date), the wait is at least that. A ``Retry-After`` longer
than :data:`MAX_RETRY_AFTER` is not waited for: the failure is final.

The host's turn loop (``hermes_hooks.host.requests``, which fires the API hooks from its
``on_retry``) and ``ctx.llm`` both retry with :func:`call_with_retries`, which runs on tenacity
(the waits are :func:`retry_delay`'s).
"""

from __future__ import annotations

import email.utils
import logging
import random
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Final, TypeVar

from hermes_hooks.backends.models.base import ModelError

__all__ = [
    "MAX_BACKOFF",
    "MAX_RETRY_AFTER",
    "call_with_retries",
    "parse_retry_after",
    "retry_delay",
]

logger = logging.getLogger(__name__)

MAX_BACKOFF: Final = 30.0
"""The longest backoff between two attempts, in seconds, before jitter."""

MAX_RETRY_AFTER: Final = 120.0
"""The longest ``Retry-After`` waited for, in seconds; a longer one ends the retries."""

T = TypeVar("T")


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Return the seconds a ``Retry-After`` header asks to wait, or ``None`` when it says none.

    :param value: the header: a number of seconds (``"2"``, ``"1.5"``) or an HTTP date.
    :param now: the current time (``time.time()``), for a date.
    """
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        current = datetime.fromtimestamp(time.time() if now is None else now, tz=UTC)
        seconds = (when - current).total_seconds()
    if seconds != seconds:  # NaN
        return None
    return max(seconds, 0.0)


def retry_delay(retry: int, error: ModelError, *, backoff: float) -> float | None:
    """Return the seconds to wait before retry ``retry`` (from 0), or ``None`` not to retry.

    ``None`` when ``error`` is not retryable, or its ``Retry-After`` is longer than
    :data:`MAX_RETRY_AFTER`; the number of retries allowed is the caller's to count.
    """
    if not error.retryable:
        return None
    nominal = min(max(backoff, 0.0) * (2**retry), MAX_BACKOFF)
    delay = nominal * random.uniform(0.5, 1.5) if nominal > 0 else 0.0
    asked = error.retry_after
    if asked is not None:
        if asked > MAX_RETRY_AFTER:
            logger.info(
                "the server asks to retry after %.0f s, more than the %.0f s waited for: "
                "not retrying",
                asked,
                MAX_RETRY_AFTER,
            )
            return None
        delay = max(delay, asked)
    return delay


def call_with_retries(
    call: Callable[[], T],
    *,
    max_retries: int,
    backoff: float,
    sleep: Callable[[float], object] = time.sleep,
    on_retry: Callable[[int, ModelError, float], object] | None = None,
) -> T:
    """Return ``call()``, trying again after each retryable :class:`ModelError`.

    :param max_retries: how many times to try again.
    :param backoff: ``model.retry_backoff``, seconds before the first retry.
    :param sleep: how to wait (``time.sleep``).
    :param on_retry: told ``(retry, error, delay)`` before each wait.
    :raises ModelError: the last failure, when no retry is left or allowed.
    """
    import tenacity  # here: only a retried call needs it

    def wait(state: tenacity.RetryCallState) -> float:
        error = state.outcome.exception() if state.outcome is not None else None
        assert isinstance(error, ModelError)
        delay = retry_delay(state.attempt_number - 1, error, backoff=backoff)
        return delay if delay is not None else 0.0

    def retryable(state: tenacity.RetryCallState) -> bool:
        error = state.outcome.exception() if state.outcome is not None else None
        return (
            isinstance(error, ModelError)
            and state.attempt_number <= max_retries
            and retry_delay(state.attempt_number - 1, error, backoff=backoff) is not None
        )

    def before_sleep(state: tenacity.RetryCallState) -> None:
        error = state.outcome.exception() if state.outcome is not None else None
        assert isinstance(error, ModelError)
        delay = state.upcoming_sleep
        retry = state.attempt_number - 1
        logger.debug("model request failed (%s); retry %d in %.2f s", error, retry + 1, delay)
        if on_retry is not None:
            on_retry(retry, error, delay)

    def pause(seconds: float) -> None:
        sleep(seconds)

    retrying = tenacity.Retrying(
        retry=retryable,
        wait=wait,
        sleep=pause,
        before_sleep=before_sleep,
        reraise=True,
    )
    return retrying(call)
