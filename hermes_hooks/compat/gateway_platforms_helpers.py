"""Hermes' ``gateway.platforms.helpers``: what adapters share (dedup, teardown, plain text).

``MessageDeduplicator`` drops a message id seen within its TTL; ``cancel_task`` cancels a task
and waits for it to unwind; ``strip_markdown`` turns replies into plain text for SMS-like
platforms; ``ThreadParticipationTracker`` remembers the threads the bot took part in
(``<home>/<platform>_threads.json``, written atomically); ``redact_phone`` is for logs.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

from hermes_hooks.compat.hermes_constants import get_hermes_home
from hermes_hooks.compat.utils import atomic_json_write

__all__ = [
    "TABLE_SEPARATOR_RE",
    "MessageDeduplicator",
    "ThreadParticipationTracker",
    "bounded_put",
    "cancel_task",
    "convert_table_to_bullets",
    "is_table_row",
    "redact_phone",
    "split_markdown_table_row",
    "strip_markdown",
    "text_has_unclosed_fence",
]


class MessageDeduplicator:
    """A TTL cache of message ids: ``if dedup.is_duplicate(msg_id): return``."""

    def __init__(self, max_size: int = 2000, ttl_seconds: float = 300) -> None:
        self._seen: dict[str, float] = {}
        self._max_size = max_size
        self._ttl = ttl_seconds

    def is_duplicate(self, msg_id: str) -> bool:
        """Return whether ``msg_id`` was seen within the TTL; record it either way."""
        if not msg_id:
            return False
        now = time.time()
        seen_at = self._seen.get(msg_id)
        if seen_at is not None:
            if now - seen_at < self._ttl:
                return True
            del self._seen[msg_id]
        self._seen[msg_id] = now
        if len(self._seen) > self._max_size:
            cutoff = now - self._ttl
            self._seen = {key: at for key, at in self._seen.items() if at > cutoff}
            if len(self._seen) > self._max_size:
                newest = sorted(self._seen.items(), key=lambda item: item[1])
                self._seen = dict(newest[-self._max_size :])
        return False

    def contains(self, msg_id: str) -> bool:
        """Return whether ``msg_id`` is live in the cache, without recording it."""
        seen_at = self._seen.get(msg_id) if msg_id else None
        if seen_at is None:
            return False
        if time.time() - seen_at < self._ttl:
            return True
        del self._seen[msg_id]
        return False

    def discard(self, msg_id: str) -> None:
        """Forget ``msg_id`` (a hand-off that failed)."""
        self._seen.pop(msg_id, None)

    def clear(self) -> None:
        """Forget every id."""
        self._seen.clear()


async def cancel_task(task: asyncio.Task[Any] | None) -> None:
    """Cancel ``task`` and wait for it to unwind; ``None``, finished and current tasks are
    only asked to stop. What the task dies with is swallowed (nobody is left to handle it)."""
    if task is None or task.done():
        return
    task.cancel()
    if task is not asyncio.current_task():
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task


def bounded_put(store: MutableMapping[str, Any], key: str, value: Any, cap: int) -> None:
    """Insert into an insertion-ordered mapping, evicting the oldest keys past ``cap``."""
    store.pop(key, None)
    store[key] = value
    while len(store) > cap:
        del store[next(iter(store))]


_STRIP_RULES = (
    (re.compile(r"\*\*(.+?)\*\*", re.DOTALL), r"\1"),
    (re.compile(r"\*(.+?)\*", re.DOTALL), r"\1"),
    (re.compile(r"\b__(?![\s_])(.+?)(?<![\s_])__\b", re.DOTALL), r"\1"),
    (re.compile(r"\b_(?![\s_])(.+?)(?<![\s_])_\b", re.DOTALL), r"\1"),
    (re.compile(r"```[a-zA-Z0-9_+-]*\n?"), ""),
    (re.compile(r"`(.+?)`"), r"\1"),
    (re.compile(r"^#{1,6}\s+", re.MULTILINE), ""),
    (re.compile(r"\[([^\]]+)\]\([^\)]+\)"), r"\1"),
    (re.compile(r"\n{3,}"), "\n\n"),
)


def strip_markdown(text: str) -> str:
    """Strip markdown for plain-text platforms (SMS, iMessage...)."""
    for pattern, replacement in _STRIP_RULES:
        text = pattern.sub(replacement, text)
    return text.strip()


def text_has_unclosed_fence(text: str) -> bool:
    """Return whether ``text`` ends inside an open ````` fence."""
    return sum(line.startswith("```") for line in text.split("\n")) % 2 == 1


class ThreadParticipationTracker:
    """The threads the bot took part in, kept in ``<home>/<platform>_threads.json``."""

    def __init__(self, platform_name: str, max_tracked: int = 500) -> None:
        self._platform = platform_name
        self._max_tracked = max_tracked
        self._threads: dict[str, None] = dict.fromkeys(self._load())

    def _state_path(self) -> Path:
        return get_hermes_home() / f"{self._platform}_threads.json"

    def _load(self) -> list[str]:
        try:
            data = json.loads(self._state_path().read_text(encoding="utf-8-sig"))
        except (OSError, ValueError):
            return []
        return [str(thread) for thread in data] if isinstance(data, list) else []

    def mark(self, thread_id: str) -> None:
        """Record ``thread_id`` and save."""
        if thread_id in self._threads:
            return
        self._threads[thread_id] = None
        threads = list(self._threads)[-self._max_tracked :]
        self._threads = dict.fromkeys(threads)
        atomic_json_write(self._state_path(), threads)

    def __contains__(self, thread_id: object) -> bool:
        return thread_id in self._threads

    def clear(self) -> None:
        """Forget every thread (in memory)."""
        self._threads.clear()


def redact_phone(phone: str) -> str:
    """Redact a phone number for logs, keeping the country code and the last four digits."""
    if not phone:
        return "<none>"
    if len(phone) <= 8:
        return phone[:2] + "****" + phone[-2:] if len(phone) > 4 else "****"
    return phone[:4] + "****" + phone[-4:]


# -- GitHub-flavoured Markdown tables as bullet groups (Discord and Telegram render no tables) --

TABLE_SEPARATOR_RE = re.compile(r"^\s*\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*){1,}\|?\s*$")
"""A table's delimiter row (``|---|:--:|``); a lone ``---`` rule does not match."""


def is_table_row(line: str) -> bool:
    """Whether ``line`` may be a table row (it holds a ``|``)."""
    stripped = line.strip()
    return bool(stripped) and "|" in stripped


def split_markdown_table_row(line: str) -> list[str]:
    """The stripped cells of a table row (outer pipes optional)."""
    stripped = line.strip().removeprefix("|").removesuffix("|")
    return [cell.strip() for cell in stripped.split("|")]


def _render_table(block: list[str]) -> str:
    if len(block) < 3:
        return "\n".join(block)
    headers = split_markdown_table_row(block[0])
    if len(headers) < 2:
        return "\n".join(block)
    row_labels = len(split_markdown_table_row(block[2])) == len(headers) + 1
    groups = []
    for index, row in enumerate(block[2:], start=1):
        cells = split_markdown_table_row(row)
        if row_labels:
            heading = cells[0] if cells and cells[0] else f"Row {index}"
            data = cells[1:]
        else:
            heading = next((cell for cell in cells if cell), f"Row {index}")
            data = cells
        data = (data + [""] * len(headers))[: len(headers)]
        bullets = [
            f"• {header}: {value}"
            for header, value in zip(headers, data, strict=True)
            if row_labels or value != heading
        ]
        groups.append("\n".join([f"**{heading}**", *bullets]))
    return "\n\n".join(groups)


def convert_table_to_bullets(text: str) -> str:
    """Rewrite pipe tables as a bold heading per row and a bullet per cell; tables inside
    code fences are left alone."""
    if "|" not in text or "-" not in text:
        return text
    lines = text.split("\n")
    out: list[str] = []
    in_fence = False
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
        elif (
            not in_fence
            and "|" in line
            and index + 1 < len(lines)
            and TABLE_SEPARATOR_RE.match(lines[index + 1])
        ):
            block = [line, lines[index + 1]]
            end = index + 2
            while end < len(lines) and is_table_row(lines[end]):
                block.append(lines[end])
                end += 1
            out.append(_render_table(block))
            index = end
            continue
        out.append(line)
        index += 1
    return "\n".join(out)
