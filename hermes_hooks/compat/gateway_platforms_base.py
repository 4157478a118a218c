"""Hermes' ``gateway.platforms.base``: the adapter base class and the message types.

An adapter subclasses :class:`BasePlatformAdapter`, implements ``connect``, ``disconnect``,
``send`` and ``get_chat_info``, and hands each inbound message to :meth:`handle_message` as a
:class:`MessageEvent`. The base runs the gateway's handler off the adapter's receive loop (one
task per chat, messages of a chat in order), then delivers the reply as Hermes does: the text
through ``send``, ``MEDIA:<path>`` tags, markdown images and bare local image paths as native
attachments through ``send_image_file``, ``send_image``, ``send_voice``, ``send_video`` or
``send_document`` (each falls back to text when the adapter does not override it).

Where this differs from Hermes: a message that arrives while its chat's turn runs is queued
and answered after it, in order (Hermes' ``busy_text_mode: queue``), instead of interrupting;
the media caches live under the current Hermes home instead of ``~/.hermes``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import time
import uuid
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes_hooks.compat.gateway_config import Platform, PlatformConfig
from hermes_hooks.compat.gateway_platforms_event import MessageEvent, MessageType, ProcessingOutcome
from hermes_hooks.compat.gateway_platforms_extra import (
    _TEXT_INJECT_EXTENSIONS as _TEXT_INJECT_EXTENSIONS,
    DEFAULT_INBOUND_MEDIA_MAX_BYTES,
    SEND_ERROR_KINDS,
    SUPPORTED_IMAGE_DOCUMENT_TYPES,
    SUPPORTED_VIDEO_TYPES,
    CachedMedia,
    _prefix_within_utf16_limit as _prefix_within_utf16_limit,
    _ssrf_redirect_guard as _ssrf_redirect_guard,
    cache_media_bytes,
    cache_video_from_bytes,
    classify_send_error,
    get_inbound_media_max_bytes,
    get_video_cache_dir,
    is_chat_level_not_found,
    is_host_excluded_by_no_proxy,
    merge_pending_message_event,
    normalize_proxy_url,
    proxy_kwargs_for_aiohttp,
    proxy_kwargs_for_bot,
    resolve_channel_prompt,
    resolve_channel_skills,
    resolve_proxy_url,
    safe_url_for_log,
    should_bypass_proxy,
    utf16_len,
    validate_inbound_media_size,
)
from hermes_hooks.compat.gateway_session import SessionSource, build_session_key
from hermes_hooks.compat.hermes_constants import get_hermes_home

__all__ = [
    "DEFAULT_INBOUND_MEDIA_MAX_BYTES",
    "SEND_ERROR_KINDS",
    "SUPPORTED_DOCUMENT_TYPES",
    "SUPPORTED_IMAGE_DOCUMENT_TYPES",
    "SUPPORTED_VIDEO_TYPES",
    "CachedMedia",
    "cache_media_bytes",
    "cache_video_from_bytes",
    "classify_send_error",
    "get_inbound_media_max_bytes",
    "get_video_cache_dir",
    "is_chat_level_not_found",
    "is_host_excluded_by_no_proxy",
    "merge_pending_message_event",
    "normalize_proxy_url",
    "proxy_kwargs_for_aiohttp",
    "proxy_kwargs_for_bot",
    "resolve_channel_prompt",
    "resolve_channel_skills",
    "resolve_proxy_url",
    "safe_url_for_log",
    "should_bypass_proxy",
    "utf16_len",
    "validate_inbound_media_size",
    "BasePlatformAdapter",
    "MessageEvent",
    "MessageHandler",
    "MessageType",
    "ProcessingOutcome",
    "SendResult",
    "build_session_key",
    "cache_audio_from_bytes",
    "cache_audio_from_url",
    "cache_document_from_bytes",
    "cache_image_from_bytes",
    "cache_image_from_url",
    "get_audio_cache_dir",
    "get_document_cache_dir",
    "get_image_cache_dir",
]

logger = logging.getLogger(__name__)

SUPPORTED_DOCUMENT_TYPES = {
    ".pdf": "application/pdf",
    ".md": "text/markdown",
    ".txt": "text/plain",
    ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    ".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
}


def _cache_dir(name: str) -> Path:
    folder = get_hermes_home() / name
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def get_image_cache_dir() -> Path:
    """Return ``<home>/image_cache``, created."""
    return _cache_dir("image_cache")


def get_audio_cache_dir() -> Path:
    """Return ``<home>/audio_cache``, created."""
    return _cache_dir("audio_cache")


def get_document_cache_dir() -> Path:
    """Return ``<home>/document_cache``, created."""
    return _cache_dir("document_cache")


def cache_image_from_bytes(data: bytes, ext: str = ".jpg") -> str:
    """Save image bytes in the image cache; return the file's absolute path."""
    path = get_image_cache_dir() / f"img_{uuid.uuid4().hex[:12]}{ext}"
    path.write_bytes(data)
    return str(path)


def cache_audio_from_bytes(data: bytes, ext: str = ".ogg") -> str:
    """Save audio bytes in the audio cache; return the file's absolute path."""
    path = get_audio_cache_dir() / f"audio_{uuid.uuid4().hex[:12]}{ext}"
    path.write_bytes(data)
    return str(path)


def cache_document_from_bytes(data: bytes, filename: str) -> str:
    """Save a document under ``doc_<id>_<name>`` in the document cache; return its path.

    :raises ValueError: the name would leave the cache folder.
    """
    folder = get_document_cache_dir()
    safe = Path(filename).name.replace("\x00", "").strip() if filename else "document"
    if not safe or safe in (".", ".."):
        safe = "document"
    path = folder / f"doc_{uuid.uuid4().hex[:12]}_{safe}"
    if not path.resolve().is_relative_to(folder.resolve()):
        raise ValueError(f"Path traversal rejected: {filename!r}")
    path.write_bytes(data)
    return str(path)


async def _download(url: str, accept: str) -> bytes:
    import httpx

    async with httpx.AsyncClient(timeout=30.0, follow_redirects=True) as client:
        response = await client.get(
            url, headers={"User-Agent": "HermesAgent/1.0 (hermes-hooks)", "Accept": accept}
        )
        response.raise_for_status()
        return response.content


async def cache_image_from_url(url: str, ext: str = ".jpg") -> str:
    """Download an image into the image cache; return its path (needs httpx)."""
    return cache_image_from_bytes(await _download(url, "image/*,*/*;q=0.8"), ext)


async def cache_audio_from_url(url: str, ext: str = ".ogg") -> str:
    """Download audio into the audio cache; return its path (needs httpx)."""
    return cache_audio_from_bytes(await _download(url, "audio/*,*/*;q=0.8"), ext)


@dataclass
class SendResult:
    """What sending one message gave."""

    success: bool
    message_id: str | None = None
    error: str | None = None
    raw_response: Any = None
    retryable: bool = False


MessageHandler = Callable[[MessageEvent], Awaitable[str | None]]
"""The gateway's handler: an event in, the reply text (or ``None``) out."""

_AUDIO_EXTS = {".ogg", ".opus", ".mp3", ".wav", ".m4a"}
_VIDEO_EXTS = {".mp4", ".mov", ".avi", ".mkv", ".webm", ".3gp"}
_IMAGE_EXTS = {".jpg", ".jpeg", ".png", ".webp", ".gif"}
_MEDIA_PATTERN = re.compile(
    r"""[`"']?MEDIA:\s*(?P<path>`[^`\n]+`|"[^"\n]+"|'[^'\n]+'|(?:~/|/)\S+(?:[^\S\n]+\S+)*?"""
    r"""\.(?:png|jpe?g|gif|webp|mp4|mov|avi|mkv|webm|ogg|opus|mp3|wav|m4a)"""
    r"""(?=[\s`"',;:)\]}]|$)|\S+)[`"']?"""
)
_MD_IMAGE = r"!\[([^\]]*)\]\((https?://[^\s\)]+)\)"
_HTML_IMAGE = r"<img\s+src=[\"']?(https?://[^\s\"'<>]+)[\"']?\s*/?>\s*(?:</img>)?"
_IMAGE_HOSTS = (
    ".png",
    ".jpg",
    ".jpeg",
    ".gif",
    ".webp",
    "fal.media",
    "fal-cdn",
    "replicate.delivery",
)


class BasePlatformAdapter(ABC):
    """The base of every platform adapter (see the module's description)."""

    def __init__(self, config: PlatformConfig, platform: Platform) -> None:
        self.config = config
        self.platform = platform
        self._message_handler: MessageHandler | None = None
        self._running = False
        self._fatal_error_code: str | None = None
        self._fatal_error_message: str | None = None
        self._fatal_error_retryable = True
        self._fatal_error_handler: Callable[[BasePlatformAdapter], Any] | None = None
        self._platform_event_handler: Callable[[dict[str, Any], Any], Any] | None = None
        self._authorization_check: Callable[..., Any] | None = None
        self._session_store: Any = None
        self._busy_session_handler: Callable[..., Any] | None = None
        self._topic_recovery_fn: Callable[..., Any] | None = None
        self._delivery_error_handler: Callable[[BaseException, str], None] | None = None
        self._active_sessions: dict[str, asyncio.Event] = {}
        self._pending_messages: dict[str, MessageEvent] = {}
        self._queues: dict[str, deque[MessageEvent]] = {}
        self._background_tasks: set[asyncio.Task[None]] = set()
        self._auto_tts_disabled_chats: set[str] = set()
        self._platform_lock: tuple[str, str] | None = None

    # -- state ----------------------------------------------------------------------------------

    @property
    def has_fatal_error(self) -> bool:
        return self._fatal_error_message is not None

    @property
    def fatal_error_message(self) -> str | None:
        return self._fatal_error_message

    @property
    def fatal_error_code(self) -> str | None:
        return self._fatal_error_code

    @property
    def fatal_error_retryable(self) -> bool:
        return self._fatal_error_retryable

    @property
    def name(self) -> str:
        """Human-readable name for this adapter."""
        return self.platform.value.title()

    @property
    def is_connected(self) -> bool:
        return self._running

    def _status(self, state: str, code: str | None, message: str | None) -> None:
        try:
            from hermes_hooks.compat.gateway_status import write_runtime_status

            write_runtime_status(
                platform=self.platform.value,
                platform_state=state,
                error_code=code,
                error_message=message,
            )
        except Exception:
            logger.debug("could not write the runtime status", exc_info=True)

    def _mark_connected(self) -> None:
        self._running = True
        self._fatal_error_code = None
        self._fatal_error_message = None
        self._fatal_error_retryable = True
        self._status("connected", None, None)

    def _mark_disconnected(self) -> None:
        self._running = False
        if not self.has_fatal_error:
            self._status("disconnected", None, None)

    def _set_fatal_error(self, code: str, message: str, *, retryable: bool) -> None:
        self._running = False
        self._fatal_error_code = code
        self._fatal_error_message = message
        self._fatal_error_retryable = retryable
        self._status("fatal", code, message)

    async def _notify_fatal_error(self) -> None:
        handler = self._fatal_error_handler
        if handler is None:
            return
        result = handler(self)
        if asyncio.iscoroutine(result):
            await result

    def _acquire_platform_lock(self, scope: str, identity: str, description: str = "") -> bool:
        """Take the scoped lock on this adapter's identity; refuse (fatal, not retryable) when
        another gateway holds it."""
        from hermes_hooks.compat.gateway_status import acquire_scoped_lock

        if not acquire_scoped_lock(scope, identity, {"platform": self.platform.value}):
            what = description or identity
            self._set_fatal_error(
                "lock_conflict", f"{what} is in use by another gateway", retryable=False
            )
            return False
        self._platform_lock = (scope, identity)
        return True

    def _release_platform_lock(self) -> None:
        lock, self._platform_lock = self._platform_lock, None
        if lock is not None:
            from hermes_hooks.compat.gateway_status import release_scoped_lock

            release_scoped_lock(*lock)

    def _wire_plugin_handlers(self, _owner: Any = None) -> None:  # noqa: B027
        """Hermes wires plugin-registered message handlers here; the gateway wires them."""

    # -- what the gateway sets ------------------------------------------------------------------

    def set_message_handler(self, handler: MessageHandler) -> None:
        self._message_handler = handler

    def set_fatal_error_handler(self, handler: Callable[[BasePlatformAdapter], Any]) -> None:
        self._fatal_error_handler = handler

    def set_platform_event_handler(self, handler: Callable[[dict[str, Any], Any], Any]) -> None:
        self._platform_event_handler = handler

    def set_authorization_check(self, check: Callable[..., Any]) -> None:
        self._authorization_check = check

    def set_session_store(self, store: Any) -> None:
        self._session_store = store

    def set_busy_session_handler(self, handler: Callable[..., Any]) -> None:
        self._busy_session_handler = handler

    def set_topic_recovery_fn(self, fn: Callable[..., Any]) -> None:
        self._topic_recovery_fn = fn

    async def emit_platform_event(
        self, event_type: str, payload: dict[str, Any], source: SessionSource | None = None
    ) -> None:
        """Publish a non-message event (a reaction, a join...) to ``gateway_platform_event``."""
        handler = self._platform_event_handler
        if handler is None:
            return
        event = {
            "platform": self.platform.value,
            "event_type": event_type,
            "payload": dict(payload),
        }
        result = handler(event, source)
        if asyncio.iscoroutine(result):
            await result

    # -- what an adapter implements -------------------------------------------------------------

    @abstractmethod
    async def connect(self) -> bool:
        """Connect and start receiving; return whether it worked."""

    @abstractmethod
    async def disconnect(self) -> None:
        """Disconnect from the platform."""

    @abstractmethod
    async def send(
        self,
        chat_id: str,
        content: str,
        reply_to: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> SendResult:
        """Send a text message to a chat."""

    @abstractmethod
    async def get_chat_info(self, chat_id: str) -> dict[str, Any]:
        """Return at least ``name`` and ``type`` (``dm``, ``group``, ``channel``)."""

    async def edit_message(self, chat_id: str, message_id: str, content: str) -> SendResult:
        return SendResult(success=False, error="Not supported")

    async def send_typing(self, chat_id: str, metadata: Any = None) -> None:  # noqa: B027
        """A typing indicator; nothing by default."""

    async def stop_typing(self, chat_id: str) -> None:  # noqa: B027
        """Stop a persistent typing indicator; nothing by default."""

    async def on_processing_start(self, event: MessageEvent) -> None:  # noqa: B027
        """Called before the gateway handles ``event`` (reactions, read receipts)."""

    async def on_processing_complete(  # noqa: B027
        self, event: MessageEvent, outcome: ProcessingOutcome
    ) -> None:
        """Called after the gateway handled ``event``."""

    async def send_image(
        self,
        chat_id: str,
        image_url: str,
        caption: str | None = None,
        reply_to: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> SendResult:
        text = f"{caption}\n{image_url}" if caption else image_url
        return await self.send(chat_id=chat_id, content=text, reply_to=reply_to)

    async def send_animation(
        self,
        chat_id: str,
        animation_url: str,
        caption: str | None = None,
        reply_to: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> SendResult:
        return await self.send_image(
            chat_id=chat_id,
            image_url=animation_url,
            caption=caption,
            reply_to=reply_to,
            metadata=metadata,
        )

    async def _send_file_as_text(
        self, label: str, chat_id: str, path: str, caption: str | None, reply_to: str | None
    ) -> SendResult:
        text = f"{caption}\n{label}: {path}" if caption else f"{label}: {path}"
        return await self.send(chat_id=chat_id, content=text, reply_to=reply_to)

    async def send_voice(
        self,
        chat_id: str,
        audio_path: str,
        caption: str | None = None,
        reply_to: str | None = None,
        **kwargs: Any,
    ) -> SendResult:
        return await self._send_file_as_text(
            "\N{SPEAKER WITH THREE SOUND WAVES} Audio", chat_id, audio_path, caption, reply_to
        )

    async def play_tts(self, chat_id: str, audio_path: str, **kwargs: Any) -> SendResult:
        return await self.send_voice(chat_id=chat_id, audio_path=audio_path, **kwargs)

    async def send_video(
        self,
        chat_id: str,
        video_path: str,
        caption: str | None = None,
        reply_to: str | None = None,
        **kwargs: Any,
    ) -> SendResult:
        return await self._send_file_as_text(
            "\N{CLAPPER BOARD} Video", chat_id, video_path, caption, reply_to
        )

    async def send_document(
        self,
        chat_id: str,
        file_path: str,
        caption: str | None = None,
        file_name: str | None = None,
        reply_to: str | None = None,
        **kwargs: Any,
    ) -> SendResult:
        return await self._send_file_as_text(
            "\N{PAPERCLIP} File", chat_id, file_path, caption, reply_to
        )

    async def send_image_file(
        self,
        chat_id: str,
        image_path: str,
        caption: str | None = None,
        reply_to: str | None = None,
        **kwargs: Any,
    ) -> SendResult:
        return await self._send_file_as_text(
            "\N{FRAME WITH PICTURE} Image", chat_id, image_path, caption, reply_to
        )

    # -- reply parsing --------------------------------------------------------------------------

    @staticmethod
    def _is_animation_url(url: str) -> bool:
        return url.lower().split("?")[0].endswith(".gif")

    @staticmethod
    def extract_images(content: str) -> tuple[list[tuple[str, str]], str]:
        """Return the image URLs of markdown and ``<img>`` tags, and the text without them."""
        images: list[tuple[str, str]] = []
        for match in re.finditer(_MD_IMAGE, content):
            url = match.group(2)
            if any(url.lower().endswith(ext) or ext in url.lower() for ext in _IMAGE_HOSTS):
                images.append((url, match.group(1)))
        images.extend((match.group(1), "") for match in re.finditer(_HTML_IMAGE, content))
        if not images:
            return images, content
        urls = {url for url, _ in images}

        def drop(match: re.Match[str]) -> str:
            index = match.lastindex or 1
            url = match.group(2) if index >= 2 else match.group(1)
            return "" if url in urls else match.group(0)

        cleaned = re.sub(_HTML_IMAGE, drop, re.sub(_MD_IMAGE, drop, content))
        return images, re.sub(r"\n{3,}", "\n\n", cleaned).strip()

    @staticmethod
    def extract_media(content: str) -> tuple[list[tuple[str, bool]], str]:
        """Return the ``MEDIA:<path>`` files (with whether ``[[audio_as_voice]]`` asked for a
        voice message), and the text without the tags."""
        voice = "[[audio_as_voice]]" in content
        media: list[tuple[str, bool]] = []
        for match in _MEDIA_PATTERN.finditer(content):
            path = match.group("path").strip()
            if len(path) >= 2 and path[0] == path[-1] and path[0] in "`\"'":
                path = path[1:-1].strip()
            path = path.lstrip("`\"'").rstrip("`\"',.;:)}]")
            if path:
                media.append((path, voice))
        cleaned = content.replace("[[audio_as_voice]]", "")
        if media:
            cleaned = re.sub(r"\n{3,}", "\n\n", _MEDIA_PATTERN.sub("", cleaned)).strip()
        return media, cleaned

    @staticmethod
    def extract_local_files(content: str) -> tuple[list[str], str]:
        """Return the existing absolute (or ``~/``) image and video paths named in the text
        outside code, and the text without them."""
        exts = "png|jpg|jpeg|gif|webp|mp4|mov|avi|mkv|webm"
        path_re = re.compile(
            r"(?<![/:\w.])(?:~/|/)(?:[\w.\-]+/)*[\w.\-]+\.(?:" + exts + r")\b", re.IGNORECASE
        )
        spans = [
            (m.start(), m.end()) for m in re.finditer(r"```[^\n]*\n.*?```", content, re.DOTALL)
        ]
        spans += [(m.start(), m.end()) for m in re.finditer(r"`[^`\n]+`", content)]
        found: dict[str, str] = {}
        for match in path_re.finditer(content):
            if any(start <= match.start() < end for start, end in spans):
                continue
            expanded = os.path.expanduser(match.group(0))
            if os.path.isfile(expanded) and expanded not in found.values():
                found[match.group(0)] = expanded
        cleaned = content
        for raw in found:
            cleaned = cleaned.replace(raw, "")
        if found:
            cleaned = re.sub(r"\n{3,}", "\n\n", cleaned).strip()
        return list(found.values()), cleaned

    def format_message(self, content: str) -> str:
        """Format a reply for this platform; as it is by default."""
        return content

    @staticmethod
    def truncate_message(content: str, max_length: int = 4096) -> list[str]:
        """Split a long reply into chunks of at most ``max_length``, closing and reopening
        code fences across chunks, with ``(i/n)`` marks."""
        if len(content) <= max_length:
            return [content]
        reserve, fence_close = 10, "\n```"
        chunks: list[str] = []
        remaining = content
        carry: str | None = None
        while remaining:
            prefix = f"```{carry}\n" if carry is not None else ""
            room = max_length - reserve - len(prefix) - len(fence_close)
            if room < 1:
                room = max_length // 2
            if len(prefix) + len(remaining) <= max_length - reserve:
                chunks.append(prefix + remaining)
                break
            region = remaining[:room]
            split = region.rfind("\n")
            if split < room // 2:
                split = region.rfind(" ")
            if split < 1:
                split = room
            body, remaining = remaining[:split], remaining[split:].lstrip()
            in_code, lang = carry is not None, carry or ""
            for line in body.split("\n"):
                stripped = line.strip()
                if stripped.startswith("```"):
                    if in_code:
                        in_code, lang = False, ""
                    else:
                        tag = stripped[3:].strip()
                        in_code, lang = True, (tag.split()[0] if tag else "")
            chunk = prefix + body
            if in_code:
                chunk += fence_close
                carry = lang
            else:
                carry = None
            chunks.append(chunk)
        if len(chunks) > 1:
            chunks = [f"{chunk} ({i + 1}/{len(chunks)})" for i, chunk in enumerate(chunks)]
        return chunks

    # -- inbound --------------------------------------------------------------------------------

    def build_source(
        self,
        chat_id: str,
        chat_name: str | None = None,
        chat_type: str = "dm",
        user_id: str | None = None,
        user_name: str | None = None,
        thread_id: str | None = None,
        chat_topic: str | None = None,
        user_id_alt: str | None = None,
        chat_id_alt: str | None = None,
        **kwargs: Any,
    ) -> SessionSource:
        """Build this platform's :class:`SessionSource`."""
        if chat_topic is not None and not chat_topic.strip():
            chat_topic = None
        return SessionSource(
            platform=self.platform,
            chat_id=str(chat_id),
            chat_name=chat_name,
            chat_type=chat_type,
            user_id=str(user_id) if user_id else None,
            user_name=user_name,
            thread_id=str(thread_id) if thread_id else None,
            chat_topic=chat_topic.strip() if chat_topic else None,
            user_id_alt=user_id_alt,
            chat_id_alt=chat_id_alt,
            **{
                key: value
                for key, value in kwargs.items()
                if key in SessionSource.__dataclass_fields__
            },
        )

    def _session_key(self, event: MessageEvent) -> str:
        extra = getattr(self.config, "extra", None) or {}
        return build_session_key(
            event.source,
            group_sessions_per_user=extra.get("group_sessions_per_user", True),
            thread_sessions_per_user=extra.get("thread_sessions_per_user", False),
        )

    async def handle_message(self, event: MessageEvent) -> None:
        """Take one inbound message: returns at once, the gateway handles it in a task (the
        chat's messages one after another, in arrival order)."""
        if self._message_handler is None:
            return
        key = self._session_key(event)
        if key in self._active_sessions:
            from hermes_hooks.compat.tools_approval import gateway_answer

            if gateway_answer(event, key) is not None:
                # An answer to the approval the chat's running turn waits for: it cannot wait
                # behind that turn (Hermes lets /approve and /deny past the queue too).
                task = asyncio.create_task(self._process_one(event))
                self._background_tasks.add(task)
                task.add_done_callback(self._background_tasks.discard)
                return
            self._queues.setdefault(key, deque()).append(event)
            return
        self._active_sessions[key] = asyncio.Event()
        task = asyncio.create_task(self._process_message_background(event, key))
        self._background_tasks.add(task)
        task.add_done_callback(self._background_tasks.discard)

    async def _process_message_background(self, event: MessageEvent, session_key: str) -> None:
        try:
            while True:
                await self._process_one(event)
                queue = self._queues.get(session_key)
                if not queue:
                    break
                event = queue.popleft()
        finally:
            self._queues.pop(session_key, None)
            self._active_sessions.pop(session_key, None)

    async def _process_one(self, event: MessageEvent) -> None:
        handler = self._message_handler
        if handler is None:
            return
        chat_id = event.source.chat_id
        metadata = {"thread_id": event.source.thread_id} if event.source.thread_id else None
        typing = asyncio.create_task(self._keep_typing(chat_id, metadata=metadata))
        outcome = ProcessingOutcome.SUCCESS
        try:
            await self.on_processing_start(event)
            response = await handler(event)
            if response:
                await self._deliver_response(event, response, metadata)
        except asyncio.CancelledError:
            outcome = ProcessingOutcome.CANCELLED
            raise
        except Exception as exc:
            outcome = ProcessingOutcome.FAILURE
            logger.exception("[%s] error handling a message", self.name)
            detail = str(exc)[:300] or "no details available"
            try:
                await self.send(
                    chat_id=chat_id,
                    content=(
                        f"Sorry, I encountered an error ({type(exc).__name__}).\n"
                        f"{detail}\nTry again or use /reset to start a fresh session."
                    ),
                    metadata=metadata,
                )
            except Exception as send_exc:
                self._report_delivery_error(send_exc, "send")
        finally:
            typing.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await typing
            try:
                await self.stop_typing(chat_id)
                await self.on_processing_complete(event, outcome)
            except Exception:
                logger.debug("[%s] processing callbacks raised", self.name, exc_info=True)

    def _report_delivery_error(self, exc: BaseException, where: str) -> None:
        handler = self._delivery_error_handler
        if handler is not None:
            handler(exc, where)
        else:
            logger.error("[%s] %s failed: %s", self.name, where, exc)

    async def _guarded_send(self, where: str, call: Awaitable[SendResult]) -> SendResult | None:
        try:
            result = await call
        except Exception as exc:
            self._report_delivery_error(exc, where)
            return None
        if result is not None and not getattr(result, "success", True):
            logger.warning("[%s] %s failed: %s", self.name, where, getattr(result, "error", ""))
        return result

    async def _deliver_response(
        self, event: MessageEvent, response: str, metadata: dict[str, Any] | None
    ) -> None:
        """Send a reply: its text, then its images and media files as attachments."""
        chat_id = event.source.chat_id
        media, response = self.extract_media(response)
        images, text = self.extract_images(response)
        text = re.sub(r"MEDIA:\s*\S+", "", text.replace("[[audio_as_voice]]", "")).strip()
        local_files, text = self.extract_local_files(text)
        if text:
            await self._guarded_send(
                "send",
                self.send(
                    chat_id=chat_id, content=text, reply_to=event.message_id, metadata=metadata
                ),
            )
        for url, alt in images:
            sender = self.send_animation if self._is_animation_url(url) else self.send_image
            await self._guarded_send(
                sender.__name__, sender(chat_id, url, alt or None, metadata=metadata)
            )
        for path, _voice in media:
            await self._send_path(chat_id, path, metadata)
        for path in local_files:
            await self._send_path(chat_id, path, metadata)

    async def _send_path(self, chat_id: str, path: str, metadata: dict[str, Any] | None) -> None:
        ext = Path(path).suffix.lower()
        if ext in _AUDIO_EXTS:
            await self._guarded_send(
                "send_voice", self.send_voice(chat_id=chat_id, audio_path=path, metadata=metadata)
            )
        elif ext in _VIDEO_EXTS:
            await self._guarded_send(
                "send_video", self.send_video(chat_id=chat_id, video_path=path, metadata=metadata)
            )
        elif ext in _IMAGE_EXTS:
            await self._guarded_send(
                "send_image_file",
                self.send_image_file(chat_id=chat_id, image_path=path, metadata=metadata),
            )
        else:
            await self._guarded_send(
                "send_document",
                self.send_document(chat_id=chat_id, file_path=path, metadata=metadata),
            )

    async def _keep_typing(
        self,
        chat_id: str,
        interval: float = 2.0,
        metadata: Any = None,
    ) -> None:
        try:
            while True:
                await self.send_typing(chat_id, metadata=metadata)
                await asyncio.sleep(interval)
        except asyncio.CancelledError:
            pass
        except Exception:
            logger.debug("[%s] send_typing raised", self.name, exc_info=True)

    async def cancel_background_tasks(self) -> None:
        """Cancel the messages being handled (the gateway's last resort at shutdown)."""
        tasks = [task for task in self._background_tasks if not task.done()]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        self._background_tasks.clear()
        self._queues.clear()
        self._pending_messages.clear()
        self._active_sessions.clear()

    async def wait_idle(self, timeout: float) -> bool:
        """Wait until no message is being handled, at most ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            tasks = [task for task in self._background_tasks if not task.done()]
            if not tasks:
                return True
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            await asyncio.wait(tasks, timeout=remaining)

    def has_pending_interrupt(self, session_key: str) -> bool:
        """Whether a message waits behind the running one of ``session_key``."""
        return bool(self._queues.get(session_key))

    def get_pending_message(self, session_key: str) -> MessageEvent | None:
        """Take the next message waiting for ``session_key``, if any."""
        queue = self._queues.get(session_key)
        return queue.popleft() if queue else None
