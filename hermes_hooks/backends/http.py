"""Reading an HTTP response within bounds: one deadline for the whole request, a decoded size.

Every response the project reads from a server it does not control goes through
:func:`read_response` (or :func:`iter_body` when it writes the body somewhere): the model
clients' answers, a provider's model catalogue, the media families' downloads. It bounds two
things a hostile or broken server would otherwise decide:

- **time**: ``deadline`` seconds for the whole request. Connecting and waiting for the headers
  each wait at most the time left (httpx's connect and read timeouts are clipped to it), and
  once the headers are in, a watchdog shuts the connection's socket down when the deadline
  passes, so a server that sends one byte a second (each read well inside the read timeout)
  is cut off at the deadline, not when it is done.
- **size**: ``max_bytes`` of *decoded* body. ``gzip`` and ``deflate`` are inflated here with
  a bounded output (``zlib``'s ``max_length``), so a 1 MB body that would inflate to 1 GB
  costs no more than the bound before it is refused; a plain body is counted as it arrives.

The bounds are the caller's settings: for the models ``model.timeout`` and
``model.max_response_bytes`` (see :class:`~hermes_hooks.backends.models.ModelSettings`),
:data:`DEFAULT_MAX_RESPONSE_BYTES` where nothing else is said. Importing this module imports
no HTTP client: httpx is passed in by the caller.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
import zlib
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, Final

import attrs

if TYPE_CHECKING:
    import httpx

from hermes_hooks.plugins.settings import DEFAULT_MAX_RESPONSE_BYTES  # the table's default

__all__ = [
    "DEFAULT_MAX_RESPONSE_BYTES",
    "ACCEPT_ENCODING",
    "Bounds",
    "DeadlineExceeded",
    "Fetched",
    "ResponseTooLarge",
    "iter_body",
    "read_response",
]

ACCEPT_ENCODING: Final = "gzip, deflate"
"""What is asked for: the encodings inflated here within the bound."""

_CHUNK: Final = 64 * 1024


class DeadlineExceeded(Exception):
    """The whole request took longer than its deadline."""

    def __init__(self, url: str, deadline: float) -> None:
        super().__init__(f"{url}: the whole request took more than {deadline:g} s")
        self.url = url
        self.deadline = deadline


class ResponseTooLarge(ValueError):
    """The response's decoded body is larger than the bound."""

    def __init__(self, url: str, max_bytes: int) -> None:
        super().__init__(f"{url}: the response is larger than {max_bytes} bytes once decoded")
        self.url = url
        self.max_bytes = max_bytes


@attrs.frozen
class Bounds:
    """The bounds of one request.

    :param deadline: seconds for the whole request (connect, headers and body); ``None`` for
        no deadline beyond httpx's own timeouts.
    :param max_bytes: the most decoded body bytes read.
    """

    deadline: float | None = None
    max_bytes: int = DEFAULT_MAX_RESPONSE_BYTES


@attrs.frozen
class Fetched:
    """A response read whole within its bounds."""

    status_code: int
    headers: Mapping[str, str]
    content: bytes
    url: str

    @property
    def text(self) -> str:
        """The body as text (UTF-8, undecodable bytes replaced)."""
        return self.content.decode("utf-8", errors="replace")

    def json(self) -> Any:
        """The body parsed as JSON.

        :raises ValueError: it is not JSON.
        """
        return json.loads(self.content)


def _clipped(timeout: httpx.Timeout, left: float | None) -> httpx.Timeout:
    import httpx

    if left is None:
        return timeout

    def clip(value: float | None) -> float:
        return max(min(value, left) if value is not None else left, 0.001)

    return httpx.Timeout(
        connect=clip(timeout.connect),
        read=clip(timeout.read),
        write=clip(timeout.write),
        pool=clip(timeout.pool),
    )


class _Watchdog:
    """Shuts a response's socket down when the deadline passes (a read blocked on it wakes)."""

    def __init__(self, response: httpx.Response, seconds: float) -> None:
        self.fired = False
        self._response = response
        self._timer = threading.Timer(max(seconds, 0.0), self._fire)
        self._timer.daemon = True
        self._timer.start()

    def _fire(self) -> None:
        self.fired = True
        stream = self._response.extensions.get("network_stream")
        sock = stream.get_extra_info("socket") if stream is not None else None
        if isinstance(sock, socket.socket):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def cancel(self) -> None:
        self._timer.cancel()


def _decoder(encoding: str) -> Any:
    """A ``zlib`` decompressor for a ``Content-Encoding``, or ``None`` for the identity."""
    if encoding in ("", "identity"):
        return None
    if encoding in ("gzip", "x-gzip"):
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if encoding == "deflate":
        return zlib.decompressobj()
    return False  # an encoding httpx decodes (br, zstd when installed)


def iter_body(
    response: httpx.Response, url: str, *, max_bytes: int, started: float, deadline: float | None
) -> Iterator[bytes]:
    """Yield the decoded body of an open streaming ``response``, within the bounds.

    :param started: ``time.monotonic()`` when the request started.
    :raises ResponseTooLarge: the decoded body passed ``max_bytes``.
    :raises DeadlineExceeded: the deadline passed while the body was read.
    """
    import httpx

    watchdog = None
    if deadline is not None:
        left = deadline - (time.monotonic() - started)
        if left <= 0:
            raise DeadlineExceeded(url, deadline)
        watchdog = _Watchdog(response, left)
    encoding = response.headers.get("content-encoding", "").strip().lower()
    decoder = _decoder(encoding)
    total = 0
    try:
        raw = response.iter_bytes(_CHUNK) if decoder is False else response.iter_raw(_CHUNK)
        for chunk in raw:
            pending = chunk
            while pending:
                if decoder:
                    out = decoder.decompress(pending, max_bytes - total + 1)
                    pending = decoder.unconsumed_tail
                else:
                    out, pending = pending, b""
                total += len(out)
                if total > max_bytes:
                    raise ResponseTooLarge(url, max_bytes)
                if out:
                    yield out
        if decoder:
            out = decoder.flush()
            total += len(out)
            if total > max_bytes:
                raise ResponseTooLarge(url, max_bytes)
            if out:
                yield out
    except (httpx.HTTPError, zlib.error) as exc:
        if watchdog is not None and watchdog.fired:
            raise DeadlineExceeded(url, deadline or 0.0) from exc
        if isinstance(exc, zlib.error):
            raise ValueError(f"{url}: the {encoding} body cannot be decoded: {exc}") from exc
        raise
    finally:
        if watchdog is not None:
            watchdog.cancel()
    if watchdog is not None and watchdog.fired:
        raise DeadlineExceeded(url, deadline or 0.0)


@contextlib.contextmanager
def open_stream(
    client: httpx.Client,
    method: str,
    url: str,
    *,
    bounds: Bounds,
    timeout: httpx.Timeout | None = None,
    headers: Mapping[str, str] | None = None,
    **kwargs: Any,
) -> Iterator[tuple[httpx.Response, float]]:
    """Send the request and yield ``(response, started)`` once its headers are in.

    The connect and read timeouts are clipped to the deadline; ``Accept-Encoding`` is
    :data:`ACCEPT_ENCODING` unless ``headers`` say otherwise.

    :raises DeadlineExceeded: the deadline passed before the headers came.
    """
    import httpx

    started = time.monotonic()
    sent = {"Accept-Encoding": ACCEPT_ENCODING, **(headers or {})}
    base = timeout if timeout is not None else client.timeout
    try:
        with client.stream(
            method, url, headers=sent, timeout=_clipped(base, bounds.deadline), **kwargs
        ) as response:
            yield response, started
    except httpx.TimeoutException as exc:
        if bounds.deadline is not None and time.monotonic() - started >= bounds.deadline * 0.99:
            raise DeadlineExceeded(url, bounds.deadline) from exc
        raise


def read_response(
    client: httpx.Client,
    method: str,
    url: str,
    *,
    bounds: Bounds,
    timeout: httpx.Timeout | None = None,
    headers: Mapping[str, str] | None = None,
    **kwargs: Any,
) -> Fetched:
    """Send one request and read its whole body within ``bounds``.

    ``kwargs`` go to ``client.stream`` (``json=``, ``content=``, ``params=``...).

    :raises DeadlineExceeded: the whole request took longer than ``bounds.deadline``.
    :raises ResponseTooLarge: the decoded body is larger than ``bounds.max_bytes``.
    :raises ValueError: the body's encoding cannot be decoded.
    :raises httpx.HTTPError: the request failed (connect or read timeout, connection error).
    """
    with open_stream(
        client, method, url, bounds=bounds, timeout=timeout, headers=headers, **kwargs
    ) as (response, started):
        body = b"".join(
            iter_body(
                response,
                url,
                max_bytes=bounds.max_bytes,
                started=started,
                deadline=bounds.deadline,
            )
        )
        return Fetched(response.status_code, response.headers, body, str(response.url))
