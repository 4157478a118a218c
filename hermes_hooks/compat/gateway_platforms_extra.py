"""The helpers of Hermes' ``gateway.platforms.base`` beyond the adapter class, which
``gateway.platforms.base`` re-exports: UTF-16 lengths, proxies and ``NO_PROXY``, log-safe URLs,
redirect checks, the inbound media size cap, the video cache, classifying cached media and
send errors, and merging a chat's pending events.

Hermes also detects the macOS system proxy (``scutil --proxy``); that is done here too, only
on macOS. The caches live under the current home, as the rest of this layer's.
"""

from __future__ import annotations

import importlib
import ipaddress
import logging
import os
import re
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from hermes_hooks.compat.gateway_platforms_event import MessageType
from hermes_hooks.compat.hermes_constants import get_hermes_home

if TYPE_CHECKING:
    from hermes_hooks.compat.gateway_platforms_event import MessageEvent

__all__ = [
    "DEFAULT_INBOUND_MEDIA_MAX_BYTES",
    "SEND_ERROR_KINDS",
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
]

logger = logging.getLogger(__name__)

# -- UTF-16 lengths (Telegram and Discord count message limits in UTF-16 code units) ---------


def utf16_len(text: str) -> int:
    """The length of ``text`` in UTF-16 code units (an emoji outside the BMP counts 2)."""
    return len(text.encode("utf-16-le")) // 2


def _prefix_within_utf16_limit(text: str, limit: int) -> str:
    """The longest prefix of ``text`` at most ``limit`` UTF-16 units long (never half a
    surrogate pair)."""
    if utf16_len(text) <= limit:
        return text
    low, high = 0, len(text)
    while low < high:
        middle = (low + high + 1) // 2
        if utf16_len(text[:middle]) <= limit:
            low = middle
        else:
            high = middle - 1
    return text[:low]


# -- proxies -----------------------------------------------------------------------------------


def normalize_proxy_url(proxy_url: str | None) -> str | None:
    """``socks://`` as ``socks5://`` (what httpx expects); blank as ``None``."""
    candidate = str(proxy_url or "").strip()
    if not candidate:
        return None
    if candidate.lower().startswith("socks://"):
        return f"socks5://{candidate[len('socks://') :]}"
    return candidate


def _macos_system_proxy() -> str | None:
    platform: str = getattr(sys, "platform", "")  # read at run time (mypy fixes sys.platform)
    if platform != "darwin":
        return None
    try:
        out = subprocess.check_output(
            ["scutil", "--proxy"], timeout=3, text=True, stderr=subprocess.DEVNULL
        )
    except Exception:
        return None
    props = {}
    for line in out.splitlines():
        key, sep, value = line.strip().partition(" : ")
        if sep:
            props[key.strip()] = value.strip()
    for enable, host_key, port_key in (
        ("HTTPSEnable", "HTTPSProxy", "HTTPSPort"),
        ("HTTPEnable", "HTTPProxy", "HTTPPort"),
    ):
        host, port = props.get(host_key), props.get(port_key)
        if props.get(enable) == "1" and host and port:
            return f"http://{host}:{port}"
    return None


def _split_host_port(value: str) -> tuple[str, int | None]:
    raw = str(value or "").strip()
    if not raw:
        return "", None
    if "://" in raw:
        parsed = urlsplit(raw)
        return (parsed.hostname or "").lower().rstrip("."), parsed.port
    if raw.startswith("[") and "]" in raw:
        host, _, rest = raw[1:].partition("]")
        port = int(rest[1:]) if rest.startswith(":") and rest[1:].isdigit() else None
        return host.lower().rstrip("."), port
    if raw.count(":") == 1:
        host, _, maybe_port = raw.rpartition(":")
        if maybe_port.isdigit():
            return host.lower().rstrip("."), int(maybe_port)
    return raw.lower().strip("[]").rstrip("."), None


def _no_proxy_entries() -> list[str]:
    entries: list[str] = []
    for key in ("NO_PROXY", "no_proxy"):
        entries.extend(part.strip() for part in os.environ.get(key, "").split(",") if part.strip())
    return entries


def _ip_match(token_host: str, host: str) -> bool | None:
    """Whether ``host`` is in the network or address ``token_host``; ``None`` when the token
    is not an IP form."""
    try:
        network = ipaddress.ip_network(token_host, strict=False)
    except ValueError:
        return None
    try:
        return ipaddress.ip_address(host) in network
    except ValueError:
        return False


def _no_proxy_entry_matches(entry: str, host: str, port: int | None = None) -> bool:
    token = str(entry or "").strip().lower()
    if not token:
        return False
    if token == "*":
        return True
    token_host, token_port = _split_host_port(token)
    if token_port is not None and token_port != port:
        return False
    if not token_host:
        return False
    by_ip = _ip_match(token_host, host)
    if by_ip is not None:
        return by_ip
    if token_host.startswith("*."):
        return host.endswith(token_host[1:])
    if token_host.startswith("."):
        return host == token_host[1:] or host.endswith(token_host)
    return host == token_host or host.endswith(f".{token_host}")


def should_bypass_proxy(target_hosts: str | list[str] | tuple[str, ...] | set[str] | None) -> bool:
    """Whether ``NO_PROXY`` (hosts, suffixes, ``*.`` wildcards, IPs, CIDR ranges, ``host:port``
    entries, ``*``) names one of ``target_hosts``."""
    entries = _no_proxy_entries()
    if not entries or not target_hosts:
        return False
    candidates = [target_hosts] if isinstance(target_hosts, str) else list(target_hosts)
    for candidate in candidates:
        host, port = _split_host_port(str(candidate))
        if host and any(_no_proxy_entry_matches(entry, host, port) for entry in entries):
            return True
    return False


def resolve_proxy_url(
    platform_env_var: str | None = None,
    *,
    target_hosts: str | list[str] | tuple[str, ...] | set[str] | None = None,
) -> str | None:
    """The proxy to use: ``platform_env_var`` (``DISCORD_PROXY``...), else ``HTTPS_PROXY``,
    ``HTTP_PROXY``, ``ALL_PROXY`` (either case), else the macOS system proxy; ``None`` when
    there is none or ``NO_PROXY`` names one of ``target_hosts``."""
    names = ([platform_env_var] if platform_env_var else []) + [
        "HTTPS_PROXY",
        "HTTP_PROXY",
        "ALL_PROXY",
        "https_proxy",
        "http_proxy",
        "all_proxy",
    ]
    for name in names:
        value = (os.environ.get(name) or "").strip()
        if value:
            return None if should_bypass_proxy(target_hosts) else normalize_proxy_url(value)
    detected = normalize_proxy_url(_macos_system_proxy())
    if detected and should_bypass_proxy(target_hosts):
        return None
    return detected


def _socks_connector(proxy_url: str) -> Any | None:
    try:  # the optional aiohttp-socks package, untyped
        socks: Any = importlib.import_module("aiohttp_socks")
    except ImportError:
        return None
    return socks.ProxyConnector.from_url(proxy_url, rdns=True)


def proxy_kwargs_for_bot(proxy_url: str | None) -> dict[str, Any]:
    """Keyword arguments for a discord.py client: a SOCKS connector (``aiohttp-socks``), or
    ``{"proxy": url}`` for an HTTP proxy, or ``{}``."""
    if not proxy_url:
        return {}
    if proxy_url.lower().startswith("socks"):
        connector = _socks_connector(proxy_url)
        if connector is None:
            logger.warning("aiohttp_socks not installed: SOCKS proxy %s ignored", proxy_url)
            return {}
        return {"connector": connector}
    return {"proxy": proxy_url}


def proxy_kwargs_for_aiohttp(proxy_url: str | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(session_kwargs, request_kwargs)`` for an ``aiohttp.ClientSession`` through the
    proxy: a connector when ``aiohttp-socks`` is installed, else ``proxy=`` per request (an
    HTTP proxy only); ``({}, {})`` without a proxy."""
    if not proxy_url:
        return {}, {}
    connector = _socks_connector(proxy_url)
    if connector is not None:
        return {"connector": connector}, {}
    if proxy_url.lower().startswith("socks"):
        logger.warning("aiohttp_socks not installed: SOCKS proxy %s ignored", proxy_url)
        return {}, {}
    return {}, {"proxy": proxy_url}


def is_host_excluded_by_no_proxy(hostname: str, no_proxy_value: str | None = None) -> bool:
    """Whether ``hostname`` matches an entry of ``no_proxy_value`` (default ``NO_PROXY``):
    comma- or space-separated, a leading ``.`` or ``*.`` matching the domain and its
    subdomains, ``*`` everything."""
    raw = no_proxy_value
    if raw is None:
        raw = os.environ.get("NO_PROXY") or os.environ.get("no_proxy") or ""
    lower = hostname.lower()
    for entry in re.split(r"[\s,]+", raw.strip()):
        normalized = entry.strip().lower()
        if not normalized:
            continue
        if normalized == "*":
            return True
        normalized = normalized.removeprefix("*.").removeprefix(".")
        if lower == normalized or lower.endswith(f".{normalized}"):
            return True
    return False


# -- URLs ------------------------------------------------------------------------------------


def safe_url_for_log(url: str, max_len: int = 80) -> str:
    """``url`` for a log line: no credentials, query or fragment, the path shortened to its
    last segment, at most ``max_len`` characters."""
    if max_len <= 0 or url is None:
        return ""
    raw = str(url)
    if not raw:
        return ""
    try:
        parsed = urlsplit(raw)
    except ValueError:
        return raw[:max_len]
    safe = raw
    if parsed.scheme and parsed.netloc:
        base = f"{parsed.scheme}://{parsed.netloc.rsplit('@', 1)[-1]}"
        path = parsed.path or ""
        if path and path != "/":
            last = path.rsplit("/", 1)[-1]
            safe = f"{base}/.../{last}" if last else f"{base}/..."
        else:
            safe = base
    if len(safe) <= max_len:
        return safe
    return "." * max_len if max_len <= 3 else f"{safe[: max_len - 3]}..."


async def _ssrf_redirect_guard(response: Any) -> None:
    """An httpx response hook: refuse a redirect to a private or internal address."""
    url_safety: Any = importlib.import_module("tools.url_safety")  # served by this layer
    target = url_safety.redirect_target_from_response(response)
    if target and not url_safety.is_safe_url(target):
        raise ValueError(
            f"Blocked redirect to private/internal address: {safe_url_for_log(target)}"
        )


# -- inbound media -----------------------------------------------------------------------------

DEFAULT_INBOUND_MEDIA_MAX_BYTES = 128 * 1024 * 1024


def get_inbound_media_max_bytes() -> int:
    """``gateway.max_inbound_media_bytes`` of ``config.yaml`` (``0`` disables the cap), else
    128 MiB."""
    try:
        from hermes_hooks.compat.hermes_cli_config import load_config

        config = load_config()
    except Exception:
        return DEFAULT_INBOUND_MEDIA_MAX_BYTES
    section = config.get("gateway", {}) if isinstance(config, dict) else {}
    if not isinstance(section, dict) or "max_inbound_media_bytes" not in section:
        return DEFAULT_INBOUND_MEDIA_MAX_BYTES
    try:
        return int(section["max_inbound_media_bytes"])
    except (TypeError, ValueError):
        return DEFAULT_INBOUND_MEDIA_MAX_BYTES


def validate_inbound_media_size(
    size: int, *, media_type: str = "media", max_bytes: int | None = None
) -> None:
    """Refuse an inbound payload over the cap.

    :raises ValueError: ``size`` is over ``max_bytes`` (the configured cap by default).
    """
    limit = get_inbound_media_max_bytes() if max_bytes is None else max_bytes
    if limit and size > limit:
        raise ValueError(
            f"Inbound {media_type} payload is too large ({size} bytes > {limit} bytes)"
        )


SUPPORTED_VIDEO_TYPES = {
    ".mp4": "video/mp4",
    ".mov": "video/quicktime",
    ".webm": "video/webm",
    ".mkv": "video/x-matroska",
    ".avi": "video/x-msvideo",
}

SUPPORTED_IMAGE_DOCUMENT_TYPES = {
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".png": "image/png",
    ".webp": "image/webp",
    ".gif": "image/gif",
}
"""Image files a platform delivers as documents, routed to the image cache."""

_TEXT_INJECT_EXTENSIONS = {
    ".txt",
    ".md",
    ".markdown",
    ".csv",
    ".tsv",
    ".log",
    ".json",
    ".jsonl",
    ".ndjson",
    ".xml",
    ".yaml",
    ".yml",
    ".toml",
    ".ini",
    ".cfg",
    ".conf",
    ".env",
    ".properties",
    ".html",
    ".htm",
    ".css",
    ".scss",
    ".sass",
    ".less",
    ".py",
    ".pyi",
    ".js",
    ".mjs",
    ".cjs",
    ".ts",
    ".tsx",
    ".jsx",
    ".sh",
    ".bash",
    ".zsh",
    ".fish",
    ".ps1",
    ".bat",
    ".c",
    ".h",
    ".cpp",
    ".cc",
    ".hpp",
    ".cs",
    ".java",
    ".kt",
    ".go",
    ".rs",
    ".rb",
    ".php",
    ".pl",
    ".lua",
    ".r",
    ".jl",
    ".swift",
    ".m",
    ".scala",
    ".clj",
    ".ex",
    ".exs",
    ".erl",
    ".sql",
    ".graphql",
    ".proto",
    ".tf",
    ".hcl",
    ".dockerfile",
    ".makefile",
    ".cmake",
    ".gradle",
    ".rst",
    ".tex",
    ".srt",
    ".vtt",
    ".diff",
    ".patch",
}
"""Uploaded documents whose text is put in the prompt (decodable as UTF-8); others are paths."""


def get_video_cache_dir() -> Path:
    """``<home>/video_cache``, created."""
    folder = get_hermes_home() / "video_cache"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def cache_video_from_bytes(data: bytes, ext: str = ".mp4") -> str:
    """Save a video into the cache (within the size cap); its path."""
    validate_inbound_media_size(len(data), media_type="video")
    path = get_video_cache_dir() / f"video_{uuid.uuid4().hex[:12]}{ext}"
    path.write_bytes(data)
    return str(path)


@dataclass
class CachedMedia:
    """One cached attachment: where it is, its MIME type, its kind (``image``, ``video``,
    ``audio``, ``document``) and a name for the transcript."""

    path: str
    media_type: str
    kind: str
    display_name: str

    def context_note(self) -> str:
        """The transcript's line pointing the agent at the file."""
        return f"[{self.kind} '{self.display_name}' saved at: {self.path}]"


def _media_ext(filename: str, mime_type: str) -> str:
    if filename:
        ext = os.path.splitext(filename)[1].lower()
        if ext:
            return ext
    mime = (mime_type or "").lower()
    if not mime:
        return ""
    from hermes_hooks.compat.gateway_platforms_base import SUPPORTED_DOCUMENT_TYPES

    for table in (SUPPORTED_IMAGE_DOCUMENT_TYPES, SUPPORTED_VIDEO_TYPES, SUPPORTED_DOCUMENT_TYPES):
        for ext, known in table.items():
            if known == mime:
                return ext
    return ""


def cache_media_bytes(
    data: bytes, *, filename: str = "", mime_type: str = "", default_kind: str | None = None
) -> CachedMedia | None:
    """Classify an attachment's bytes (extension, MIME type, then ``default_kind``) and cache
    them as an image, a video, an audio file or a document; ``None`` for an image that is not
    one."""
    from hermes_hooks.compat import gateway_platforms_base as base

    ext = _media_ext(filename, mime_type)
    mime = (mime_type or "").lower()
    display = re.sub(r"[^\w.\- ]", "_", filename) if filename else (ext.lstrip(".") or "file")
    if (
        mime.startswith("image/")
        or ext in SUPPORTED_IMAGE_DOCUMENT_TYPES
        or default_kind == "image"
    ):
        image_ext = ext if ext in SUPPORTED_IMAGE_DOCUMENT_TYPES else ".jpg"
        try:
            path = base.cache_image_from_bytes(data, ext=image_ext)
        except ValueError:
            return None
        out = mime if mime.startswith("image/") else SUPPORTED_IMAGE_DOCUMENT_TYPES[image_ext]
        return CachedMedia(path, out, "image", display)
    if mime.startswith("video/") or ext in SUPPORTED_VIDEO_TYPES or default_kind == "video":
        video_ext = ext if ext in SUPPORTED_VIDEO_TYPES else ".mp4"
        path = cache_video_from_bytes(data, ext=video_ext)
        return CachedMedia(path, SUPPORTED_VIDEO_TYPES[video_ext], "video", display)
    if mime.startswith("audio/") or default_kind == "audio":
        audio_ext = ext if ext in {".ogg", ".mp3", ".wav", ".m4a", ".opus", ".flac"} else ".ogg"
        path = base.cache_audio_from_bytes(data, ext=audio_ext)
        out = mime if mime.startswith("audio/") else f"audio/{audio_ext.lstrip('.')}"
        return CachedMedia(path, out, "audio", display)
    fallback = filename or (f"document{ext}" if ext else "document.bin")
    path = base.cache_document_from_bytes(data, fallback)
    out = base.SUPPORTED_DOCUMENT_TYPES.get(ext) or mime or "application/octet-stream"
    return CachedMedia(path, out, "document", display or fallback)


# -- send errors -------------------------------------------------------------------------------

SEND_ERROR_KINDS = frozenset(
    {"too_long", "bad_format", "forbidden", "not_found", "rate_limited", "transient", "unknown"}
)
_CHAT_GONE = ("chat not found",)
_SUBCHAT_GONE = (
    "message to edit not found",
    "message to reply not found",
    "thread not found",
    "topic_deleted",
    "message_id_invalid",
)
_CONNECTION_FAILURES = (
    "connecterror",
    "connectionerror",
    "connectionreset",
    "connectionrefused",
    "connecttimeout",
    "network",
    "broken pipe",
    "remotedisconnected",
    "eoferror",
)
_KIND_MARKERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("too_long", ("message_too_long", "too long", "message is too long")),
    ("bad_format", ("can't parse entities", "cant parse entities", "can't find end")),
    ("bad_format", ("unsupported start tag",)),
    ("forbidden", ("forbidden", "bot was blocked", "blocked by the user", "user is deactivated")),
    ("forbidden", ("not enough rights", "have no rights", "not a member")),
    ("not_found", _CHAT_GONE + _SUBCHAT_GONE),
    ("rate_limited", ("flood", "too many requests", "retry after", "rate limit")),
    ("transient", _CONNECTION_FAILURES),
)


def _error_blob(exc: BaseException | None = None, error_text: str = "") -> str:
    parts = [error_text] if error_text else []
    if exc is not None:
        if str(exc):
            parts.append(str(exc))
        parts.append(type(exc).__name__)
    return " ".join(parts).lower()


def classify_send_error(exc: BaseException | None, error_text: str = "") -> str:
    """What a send failure is, from its text and exception class: one of
    :data:`SEND_ERROR_KINDS` (``unknown`` when nothing matches)."""
    blob = _error_blob(exc, error_text)
    if not blob.strip():
        return "unknown"
    for kind, markers in _KIND_MARKERS:
        if any(marker in blob for marker in markers):
            return kind
        if kind == "bad_format" and (
            ("entity" in blob and "parse" in blob) or ("bad request" in blob and "entit" in blob)
        ):
            return kind
    return "unknown"


def is_chat_level_not_found(exc: BaseException | None = None, error_text: str = "") -> bool:
    """Whether a not-found failure means the whole chat is gone (not a topic or a message)."""
    blob = _error_blob(exc, error_text)
    return any(s in blob for s in _CHAT_GONE) and not any(s in blob for s in _SUBCHAT_GONE)


# -- pending events ----------------------------------------------------------------------------


def _merge_caption(existing: str | None, new: str) -> str:
    if not existing:
        return new
    if new.strip() not in [caption.strip() for caption in existing.split("\n\n")]:
        return f"{existing}\n\n{new}".strip()
    return existing


def merge_pending_message_event(
    pending_messages: dict[str, MessageEvent],
    session_key: str,
    event: MessageEvent,
    *,
    merge_text: bool = False,
) -> None:
    """Queue ``event`` as the session's pending one, merging it into one already there: a
    photo burst becomes one event, media and captions are joined, and with ``merge_text``
    quick follow-up texts are appended instead of replacing the queued one."""
    existing = pending_messages.get(session_key)
    if existing is None:
        pending_messages[session_key] = event
        return
    existing_photo = existing.message_type == MessageType.PHOTO
    incoming_photo = event.message_type == MessageType.PHOTO
    if existing_photo and incoming_photo:
        existing.media_urls.extend(event.media_urls)
        existing.media_types.extend(event.media_types)
        if event.text:
            existing.text = _merge_caption(existing.text, event.text)
        return
    if existing.media_urls or event.media_urls:
        existing.media_urls.extend(event.media_urls)
        existing.media_types.extend(event.media_types)
        if event.text:
            existing.text = _merge_caption(existing.text, event.text)
        if existing_photo or incoming_photo:
            existing.message_type = MessageType.PHOTO
        elif existing.message_type == MessageType.TEXT and event.message_type != MessageType.TEXT:
            existing.message_type = event.message_type
        return
    if merge_text and existing.message_type == event.message_type == MessageType.TEXT:
        if event.text:
            existing.text = f"{existing.text}\n{event.text}" if existing.text else event.text
        return
    pending_messages[session_key] = event


# -- per-channel settings (``config.extra`` of a platform) ------------------------------------


def resolve_channel_prompt(
    config_extra: dict[str, Any], channel_id: str, parent_id: str | None = None
) -> str | None:
    """``channel_prompts[channel_id]``, else ``[parent_id]`` (a thread inherits its channel's),
    stripped; ``None`` when there is none or it is blank."""
    prompts = config_extra.get("channel_prompts") or {}
    if not isinstance(prompts, dict):
        return None
    for key in (channel_id, parent_id):
        prompt = prompts.get(key) if key else None
        if prompt is not None and str(prompt).strip():
            return str(prompt).strip()
    return None


def resolve_channel_skills(
    config_extra: dict[str, Any], channel_id: str, parent_id: str | None = None
) -> list[str] | None:
    """The skills ``channel_skill_bindings`` loads for the channel (or its parent): the first
    binding whose ``id`` is either, its ``skills`` list or ``skill`` name, de-duplicated."""
    bindings = config_extra.get("channel_skill_bindings") or []
    wanted = {str(key) for key in (channel_id, parent_id) if key}
    if not isinstance(bindings, list) or not wanted:
        return None
    for entry in bindings:
        if not isinstance(entry, dict) or str(entry.get("id", "")) not in wanted:
            continue
        skills = entry.get("skills") or entry.get("skill")
        if isinstance(skills, str):
            return [skills.strip()] if skills.strip() else None
        if isinstance(skills, list) and skills:
            names: list[str] = []
            for name in skills:
                if isinstance(name, str) and name.strip() and name.strip() not in names:
                    names.append(name.strip())
            return names or None
    return None
