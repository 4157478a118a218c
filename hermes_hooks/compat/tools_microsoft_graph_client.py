"""Hermes' ``tools.microsoft_graph_client``: a small async Microsoft Graph client.

Every request carries a token of ``tools.microsoft_graph_auth``; a 401 drops the cached token
and retries with a fresh one, a 429 or 5xx (or a connection error) retries after
``Retry-After`` or ``min(8, 0.5 * 2**attempt)`` seconds, at most ``max_retries`` times.
``@odata.nextLink`` pages are followed; downloads stream to a ``.part`` file renamed at the end.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

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

DEFAULT_GRAPH_BASE_URL = "https://graph.microsoft.com/v1.0"


class MicrosoftGraphClientError(RuntimeError):
    """A Graph client failure."""


class MicrosoftGraphAPIError(MicrosoftGraphClientError):
    """A Graph request answered with an error status."""

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


def _api_error(method: str, url: str, response: httpx.Response) -> MicrosoftGraphAPIError:
    message = response.text.strip() or "unknown error"
    try:
        payload: Any = response.json()
    except ValueError:
        payload = None
    if isinstance(payload, dict):
        error = payload.get("error")
        if isinstance(error, dict) and error.get("message"):
            code = error.get("code")
            message = f"{code}: {error['message']}" if code else str(error["message"])
        elif isinstance(error, str):
            message = error
    retry_after: float | None
    try:
        retry_after = float(response.headers.get("Retry-After", ""))
    except ValueError:
        retry_after = None
    return MicrosoftGraphAPIError(
        response.status_code,
        method,
        url,
        message,
        retry_after_seconds=retry_after,
        payload=payload,
    )


class MicrosoftGraphClient:
    """Graph requests with retries, token refresh and pagination."""

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
        """A client on the ``MSGRAPH_*`` credentials.

        :raises MicrosoftGraphConfigError: a variable is missing.
        """
        credentials = GraphCredentials.from_env()
        assert credentials is not None
        return cls(MicrosoftGraphTokenProvider(credentials), **kwargs)

    async def get_json(
        self,
        path: str,
        *,
        params: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> Any:
        """GET ``path`` (relative to ``base_url``, or a full URL); the decoded JSON."""
        return self._decode(await self._request("GET", path, params=params, headers=headers))

    async def post_json(
        self, path: str, *, json_body: Any | None = None, headers: dict[str, str] | None = None
    ) -> Any:
        """POST ``json_body``; the decoded JSON answer."""
        response = await self._request("POST", path, json_body=json_body, headers=headers)
        return self._decode(response)

    async def patch_json(
        self, path: str, *, json_body: Any | None = None, headers: dict[str, str] | None = None
    ) -> Any:
        """PATCH ``json_body``; the decoded answer, ``{}`` for an empty one."""
        response = await self._request("PATCH", path, json_body=json_body, headers=headers)
        if response.status_code == 204 or not response.content:
            return {}
        return self._decode(response)

    async def delete(self, path: str, *, headers: dict[str, str] | None = None) -> Any:
        """DELETE; ``{"deleted": True, "status_code": ...}`` for an empty answer."""
        response = await self._request("DELETE", path, headers=headers)
        if response.status_code == 204 or not response.content:
            return {"deleted": True, "status_code": response.status_code}
        return self._decode(response)

    async def iterate_pages(
        self,
        path: str,
        *,
        params: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> AsyncIterator[dict[str, Any]]:
        """Each page of a paginated answer, following ``@odata.nextLink``.

        :raises MicrosoftGraphClientError: a page is not a JSON object.
        """
        next_url: str | None = self._resolve_url(path)
        next_params = dict(params or {})
        while next_url:
            page = self._decode(
                await self._request("GET", next_url, params=next_params or None, headers=headers)
            )
            if not isinstance(page, dict):
                raise MicrosoftGraphClientError(
                    f"Expected paginated Graph response dict, got {type(page).__name__}."
                )
            yield page
            next_url = page.get("@odata.nextLink")
            next_params = {}

    async def collect_paginated(
        self,
        path: str,
        *,
        params: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> list[Any]:
        """Every page's ``value`` items, in order."""
        items: list[Any] = []
        async for page in self.iterate_pages(path, params=params, headers=headers):
            if isinstance(page.get("value"), list):
                items.extend(page["value"])
        return items

    async def download_to_file(
        self,
        path: str,
        destination: str | Path,
        *,
        headers: dict[str, str] | None = None,
        chunk_size: int = 65536,
    ) -> dict[str, Any]:
        """Stream a resource to ``destination``; its ``path``, ``size_bytes`` and
        ``content_type``.

        :raises MicrosoftGraphAPIError: the resource answered an error status.
        :raises MicrosoftGraphClientError: the connection failed every time.
        """
        url = self._resolve_url(path)
        target = Path(destination)
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(target.suffix + ".part")
        last_error: Exception | None = None
        for attempt in range(self.max_retries + 1):
            request_headers = await self._headers(attempt, last_error, None, headers)
            try:
                async with (
                    self._client() as client,
                    client.stream("GET", url, headers=request_headers) as response,
                ):
                    if response.status_code >= 400:
                        await response.aread()
                        last_error = _api_error("GET", url, response)
                        if await self._retry_status(response, attempt):
                            continue
                        raise last_error
                    content_type = response.headers.get("content-type")
                    with partial.open("wb") as handle:
                        async for chunk in response.aiter_bytes(chunk_size=chunk_size):
                            handle.write(chunk)
            except httpx.HTTPError as exc:
                last_error = exc
                partial.unlink(missing_ok=True)
                if attempt >= self.max_retries:
                    raise MicrosoftGraphClientError(
                        f"Microsoft Graph download failed for GET {url}: {exc}"
                    ) from exc
                await self._sleep(self._retry_delay(None, attempt))
                continue
            os.replace(partial, target)
            return {
                "path": str(target),
                "size_bytes": target.stat().st_size,
                "content_type": content_type,
            }
        partial.unlink(missing_ok=True)
        raise MicrosoftGraphClientError(
            f"Microsoft Graph download exhausted retries for GET {url}."
        )

    def _client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(timeout=httpx.Timeout(self.timeout), transport=self._transport)

    async def _headers(
        self,
        attempt: int,
        last_error: Exception | None,
        json_body: Any | None,
        extra: dict[str, str] | None,
    ) -> dict[str, str]:
        refresh = attempt > 0 and self._should_refresh_token(last_error)
        token = await self.token_provider.get_access_token(force_refresh=refresh)
        headers = {
            "Authorization": f"Bearer {token}",
            "Accept": "application/json",
            "User-Agent": self.user_agent,
        }
        if json_body is not None:
            headers["Content-Type"] = "application/json"
        headers.update(extra or {})
        return headers

    async def _retry_status(self, response: httpx.Response, attempt: int) -> bool:
        """Sleep and say ``True`` when an error status is worth another attempt."""
        if attempt >= self.max_retries:
            return False
        if response.status_code == 401:
            self.token_provider.clear_cache()
        elif not self._should_retry(response):
            return False
        await self._sleep(self._retry_delay(response, attempt))
        return True

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
        last_error: Exception | None = None
        for attempt in range(self.max_retries + 1):
            request_headers = await self._headers(attempt, last_error, json_body, headers)
            try:
                async with self._client() as client:
                    response = await client.request(
                        method, url, params=params, json=json_body, headers=request_headers
                    )
            except httpx.HTTPError as exc:
                last_error = exc
                if attempt >= self.max_retries:
                    raise MicrosoftGraphClientError(
                        f"Microsoft Graph request failed for {method} {url}: {exc}"
                    ) from exc
                await self._sleep(self._retry_delay(None, attempt))
                continue
            if response.status_code < 400:
                return response
            last_error = _api_error(method, url, response)
            if not await self._retry_status(response, attempt):
                raise last_error
        raise MicrosoftGraphClientError(
            f"Microsoft Graph request exhausted retries for {method} {url}."
        )

    def _resolve_url(self, path_or_url: str) -> str:
        if path_or_url.startswith(("http://", "https://")):
            return path_or_url
        return f"{self.base_url}/{path_or_url.lstrip('/')}"

    @staticmethod
    def _decode(response: httpx.Response) -> Any:
        try:
            return response.json()
        except ValueError as exc:
            raise MicrosoftGraphClientError(
                f"Microsoft Graph response was not valid JSON for "
                f"{response.request.method} {response.request.url}"
            ) from exc

    @staticmethod
    def _should_retry(response: httpx.Response | None) -> bool:
        return response is None or response.status_code == 429 or 500 <= response.status_code < 600

    @staticmethod
    def _should_refresh_token(error: Exception | None) -> bool:
        return isinstance(error, MicrosoftGraphAPIError) and error.status_code == 401

    @staticmethod
    def _retry_delay(response: httpx.Response | None, attempt: int) -> float:
        if response is not None and response.headers.get("Retry-After"):
            try:
                return max(0.0, float(response.headers["Retry-After"]))
            except ValueError:
                pass
        return float(min(8.0, 0.5 * (2**attempt)))
