"""Hermes' ``tools.microsoft_graph_client``: a small async Microsoft Graph REST client.

Each request carries a token from a :class:`MicrosoftGraphTokenProvider`; a ``401`` drops the
cached token and retries with a new one, a ``429`` or ``5xx`` (or a network error) is retried
after ``Retry-After`` or an exponential pause (0.5 s doubling, at most 8 s), up to
``max_retries`` times. Pages are followed by ``@odata.nextLink``; downloads stream to a
``.part`` file renamed into place when complete.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, Final

import httpx

from hermes_hooks.compat.tools_microsoft_graph_auth import (
    GraphCredentials,
    MicrosoftGraphTokenProvider,
)

__all__ = [
    "DEFAULT_GRAPH_BASE_URL",
    "MicrosoftGraphAPIError",
    "MicrosoftGraphClient",
    "MicrosoftGraphClientError",
]

DEFAULT_GRAPH_BASE_URL: Final = "https://graph.microsoft.com/v1.0"


class MicrosoftGraphClientError(RuntimeError):
    """A Graph request could not be made, or its answer read."""


class MicrosoftGraphAPIError(MicrosoftGraphClientError):
    """Graph answered with an error status."""

    def __init__(
        self,
        status_code: int,
        method: str,
        url: str,
        message: str,
        *,
        retry_after_seconds: float | None = None,
        payload: Any = None,
    ) -> None:
        self.status_code = status_code
        self.method = method
        self.url = url
        self.retry_after_seconds = retry_after_seconds
        self.payload = payload
        super().__init__(f"Microsoft Graph API error {status_code} for {method} {url}: {message}")


def _retry_after(response: httpx.Response | None) -> float | None:
    value = response.headers.get("Retry-After") if response is not None else None
    try:
        return max(0.0, float(value)) if value else None
    except ValueError:
        return None


def _api_error(method: str, url: str, response: httpx.Response) -> MicrosoftGraphAPIError:
    message = response.text.strip() or "unknown error"
    try:
        payload: Any = response.json()
    except ValueError:
        payload = None
    error = payload.get("error") if isinstance(payload, dict) else None
    if isinstance(error, dict):
        code, inner = error.get("code"), error.get("message")
        if inner:
            message = f"{code}: {inner}" if code else str(inner)
    elif isinstance(error, str):
        message = error
    return MicrosoftGraphAPIError(
        response.status_code,
        method,
        url,
        message,
        retry_after_seconds=_retry_after(response),
        payload=payload,
    )


class MicrosoftGraphClient:
    """Async Graph calls with retries and pagination (see the module docstring)."""

    def __init__(
        self,
        token_provider: MicrosoftGraphTokenProvider,
        *,
        base_url: str = DEFAULT_GRAPH_BASE_URL,
        timeout: float = 60.0,
        max_retries: int = 3,
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: Callable[[float], Awaitable[None]] | None = None,
        user_agent: str = "Hermes-Agent/graph-client",
    ) -> None:
        self.token_provider = token_provider
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.max_retries = max(0, int(max_retries))
        self._transport = transport
        self._sleep = sleep or asyncio.sleep
        self.user_agent = user_agent

    @classmethod
    def from_env(cls, **kwargs: Any) -> MicrosoftGraphClient:
        """Build one on the ``MSGRAPH_*`` credentials of the environment."""
        credentials = GraphCredentials.from_env()
        assert credentials is not None  # required=True raises instead
        return cls(MicrosoftGraphTokenProvider(credentials), **kwargs)

    def _resolve_url(self, path_or_url: str) -> str:
        if path_or_url.startswith(("http://", "https://")):
            return path_or_url
        return f"{self.base_url}/{path_or_url.lstrip('/')}"

    @staticmethod
    def _decode_json(response: httpx.Response) -> Any:
        try:
            return response.json()
        except ValueError as exc:
            raise MicrosoftGraphClientError(
                "Microsoft Graph response was not valid JSON for "
                f"{response.request.method} {response.request.url}"
            ) from exc

    @staticmethod
    def _retry_delay(response: httpx.Response | None, attempt: int) -> float:
        after = _retry_after(response)
        return after if after is not None else min(8.0, 0.5 * (2**attempt))

    async def _headers(
        self, attempt: int, refresh: bool, extra: dict[str, str] | None
    ) -> dict[str, str]:
        token = await self.token_provider.get_access_token(force_refresh=attempt > 0 and refresh)
        headers = {
            "Authorization": f"Bearer {token}",
            "Accept": "application/json",
            "User-Agent": self.user_agent,
        }
        headers.update(extra or {})
        return headers

    def _client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(timeout=httpx.Timeout(self.timeout), transport=self._transport)

    async def _again(self, response: httpx.Response | None, attempt: int) -> None:
        await self._sleep(self._retry_delay(response, attempt))

    async def _request(
        self,
        method: str,
        path_or_url: str,
        *,
        params: dict[str, Any] | None = None,
        json_body: Any | None = None,
        headers: dict[str, str] | None = None,
    ) -> httpx.Response:
        url = self._resolve_url(path_or_url)
        refresh = False
        for attempt in range(self.max_retries + 1):
            sent = await self._headers(attempt, refresh, headers)
            if json_body is not None:
                sent.setdefault("Content-Type", "application/json")
            try:
                async with self._client() as client:
                    response = await client.request(
                        method, url, params=params, json=json_body, headers=sent
                    )
            except httpx.HTTPError as exc:
                if attempt >= self.max_retries:
                    raise MicrosoftGraphClientError(
                        f"Microsoft Graph request failed for {method} {url}: {exc}"
                    ) from exc
                refresh = False
                await self._again(None, attempt)
                continue
            if response.status_code < 400:
                return response
            error = _api_error(method, url, response)
            retryable = response.status_code in (401, 429) or response.status_code >= 500
            if not retryable or attempt >= self.max_retries:
                raise error
            refresh = response.status_code == 401
            if refresh:
                self.token_provider.clear_cache()
            await self._again(response, attempt)
        raise MicrosoftGraphClientError(
            f"Microsoft Graph request exhausted retries for {method} {url}."
        )

    async def get_json(
        self,
        path: str,
        *,
        params: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> Any:
        """GET ``path`` (relative to ``base_url``, or a full URL) and return its JSON."""
        return self._decode_json(await self._request("GET", path, params=params, headers=headers))

    async def post_json(
        self, path: str, *, json_body: Any | None = None, headers: dict[str, str] | None = None
    ) -> Any:
        """POST ``json_body`` and return the JSON answer."""
        response = await self._request("POST", path, json_body=json_body, headers=headers)
        return self._decode_json(response)

    async def patch_json(
        self, path: str, *, json_body: Any | None = None, headers: dict[str, str] | None = None
    ) -> Any:
        """PATCH ``json_body``; return the JSON answer, ``{}`` for an empty one."""
        response = await self._request("PATCH", path, json_body=json_body, headers=headers)
        if response.status_code == 204 or not response.content:
            return {}
        return self._decode_json(response)

    async def delete(self, path: str, *, headers: dict[str, str] | None = None) -> dict[str, Any]:
        """DELETE ``path``; an empty answer gives ``{"deleted": True, "status_code": ...}``."""
        response = await self._request("DELETE", path, headers=headers)
        if response.status_code == 204 or not response.content:
            return {"deleted": True, "status_code": response.status_code}
        decoded: dict[str, Any] = self._decode_json(response)
        return decoded

    async def iterate_pages(
        self,
        path: str,
        *,
        params: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> AsyncIterator[dict[str, Any]]:
        """Yield each page of a collection, following ``@odata.nextLink``."""
        next_url: str | None = self._resolve_url(path)
        next_params: dict[str, Any] | None = dict(params or {}) or None
        while next_url:
            response = await self._request("GET", next_url, params=next_params, headers=headers)
            page = self._decode_json(response)
            if not isinstance(page, dict):
                raise MicrosoftGraphClientError(
                    f"Expected paginated Graph response dict, got {type(page).__name__}."
                )
            yield page
            link = page.get("@odata.nextLink")
            next_url = link if isinstance(link, str) and link else None
            next_params = None  # the link carries them

    async def collect_paginated(
        self,
        path: str,
        *,
        params: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> list[Any]:
        """Return the ``value`` items of every page."""
        items: list[Any] = []
        async for page in self.iterate_pages(path, params=params, headers=headers):
            value = page.get("value")
            if isinstance(value, list):
                items.extend(value)
        return items

    async def download_to_file(
        self,
        path: str,
        destination: str | Path,
        *,
        headers: dict[str, str] | None = None,
        chunk_size: int = 65536,
    ) -> dict[str, Any]:
        """Stream ``path`` to ``destination``; return ``{"path", "size_bytes", "content_type"}``.

        :raises MicrosoftGraphAPIError: an error status that retrying did not mend.
        :raises MicrosoftGraphClientError: the download failed or ran out of retries.
        """
        url = self._resolve_url(path)
        target = Path(destination)
        target.parent.mkdir(parents=True, exist_ok=True)
        part = target.with_suffix(target.suffix + ".part")
        refresh = False
        for attempt in range(self.max_retries + 1):
            sent = await self._headers(attempt, refresh, headers)
            try:
                async with (
                    self._client() as client,
                    client.stream("GET", url, headers=sent) as response,
                ):
                    if response.status_code >= 400:
                        await response.aread()
                        error = _api_error("GET", url, response)
                        status = response.status_code
                        if (status in (401, 429) or status >= 500) and attempt < self.max_retries:
                            refresh = status == 401
                            if refresh:
                                self.token_provider.clear_cache()
                            await self._again(response, attempt)
                            continue
                        raise error
                    content_type = response.headers.get("content-type")
                    with part.open("wb") as handle:
                        async for chunk in response.aiter_bytes(chunk_size=chunk_size):
                            handle.write(chunk)
            except httpx.HTTPError as exc:
                part.unlink(missing_ok=True)
                if attempt >= self.max_retries:
                    raise MicrosoftGraphClientError(
                        f"Microsoft Graph download failed for GET {url}: {exc}"
                    ) from exc
                refresh = False
                await self._again(None, attempt)
                continue
            os.replace(part, target)
            return {
                "path": str(target),
                "size_bytes": target.stat().st_size,
                "content_type": content_type,
            }
        part.unlink(missing_ok=True)
        raise MicrosoftGraphClientError(
            f"Microsoft Graph download exhausted retries for GET {url}."
        )
