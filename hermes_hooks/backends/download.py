"""Keeping a provider's short-lived result URL: the one download both media families use.

Image and video providers whose API answers with a delivery URL that expires keep the bytes
under the home's cache (``save_url_image``, ``save_url_video``); this is how they fetch them:
only ``http(s)``, a ``Content-Type`` that is plainly not the medium refused (an HTML error
page, JSON), at most ``max_bytes`` once decoded (read through
:func:`hermes_hooks.backends.http.iter_body`, so a gzip bomb is not inflated), an empty body
refused, and no file left behind when any
of that fails.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

__all__ = ["NOT_MEDIA_TYPES", "save_url"]

NOT_MEDIA_TYPES = ("text/", "application/json", "application/xml", "application/javascript")
"""Content types a media URL answers with when it did not deliver the medium."""


def save_url(
    url: str,
    *,
    what: str,
    a_what: str,
    extension_of: Callable[[str, str], str],
    target: Callable[[str], Path],
    timeout: float,
    max_bytes: int,
    chunk_bytes: int = 64 * 1024,
) -> Path:
    """Download ``url`` to the file ``target(extension)`` names and return its absolute path.

    :param what: the medium, in messages (``image``); ``a_what`` with its article (``an image``).
    :param extension_of: ``(url, content_type) -> extension``.
    :param target: the new file's path for an extension (opened exclusively: never replaced).
    :raises ValueError: not an ``http(s)`` URL, a ``Content-Type`` in :data:`NOT_MEDIA_TYPES`,
        more than ``max_bytes``, or an empty body; no file is left behind.
    :raises httpx.HTTPError: the request failed or the server answered with an error status.
    """
    if not isinstance(url, str) or not url.lower().startswith(("http://", "https://")):
        raise ValueError(f"expected an http(s) {what} URL, found {url!r}")
    import httpx  # here: only a provider keeping a URL needs it

    from hermes_hooks.backends.http import Bounds, ResponseTooLarge, iter_body, open_stream

    with (
        httpx.Client(timeout=timeout, follow_redirects=True) as client,
        open_stream(client, "GET", url, bounds=Bounds(max_bytes=max_bytes)) as (response, started),
    ):
        response.raise_for_status()
        content_type = response.headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if content_type.startswith(NOT_MEDIA_TYPES):
            raise ValueError(
                f"{what} URL {url} answered with Content-Type {content_type!r}, not {a_what}; "
                f"refusing to cache it"
            )
        path = target(extension_of(url, content_type))
        written = 0
        try:
            with path.open("xb") as fh:
                try:
                    for chunk in iter_body(
                        response, url, max_bytes=max_bytes, started=started, deadline=None
                    ):
                        written += len(chunk)
                        fh.write(chunk)
                except ResponseTooLarge:
                    raise ValueError(
                        f"{what} at {url} is larger than {max_bytes} bytes; refusing to cache it"
                    ) from None
            if written == 0:
                raise ValueError(f"{what} at {url} returned 0 bytes; refusing to cache it")
        except BaseException:
            path.unlink(missing_ok=True)
            raise
    return path.resolve()
