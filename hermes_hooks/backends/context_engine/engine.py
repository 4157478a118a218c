"""The context engine contract, as Hermes defines it (``agent/context_engine.py``).

A context engine keeps the conversation inside the model's context window: it tracks token
usage, says when to compact, and compacts. One engine runs per session, chosen by
``context.engine`` (default ``compressor``, the bundled
:class:`~hermes_hooks.backends.context_engine.compressor.ContextCompressor`). The host calls,
per session: ``update_model(...)`` and ``on_session_start(session_id, ...)``; after every model
response ``update_from_response(usage)``; before every model request
``should_compress(prompt_tokens)`` and, when it says so, ``compress(messages, ...)``, after
the memory providers' ``on_pre_compress``; ``on_session_reset()`` on ``/new``;
``on_session_end(session_id, messages)`` at the end. Its tools are offered to the model and
dispatched to ``handle_tool_call``.

The names here are served to Hermes plugins as ``agent.context_engine``.
"""

from __future__ import annotations

import abc
import json
from typing import Any, Final

__all__ = [
    "MEMORY_CONTEXT_MAX_CHARS",
    "ContextEngine",
    "sanitize_memory_context",
]

MEMORY_CONTEXT_MAX_CHARS: Final = 6_000
"""The most of the memory providers' ``on_pre_compress`` text a summary prompt gets."""
_HEAD_CHARS: Final = 4_000
_TAIL_CHARS: Final = 1_500
_TRUNCATED: Final = "\n...[memory provider context truncated]...\n"


def sanitize_memory_context(memory_context: str) -> str:
    """Prepare memory providers' text for a summary prompt: stripped, and cut in the middle
    past :data:`MEMORY_CONTEXT_MAX_CHARS` (its head and tail kept)."""
    text = memory_context.strip()
    if len(text) <= MEMORY_CONTEXT_MAX_CHARS:
        return text
    return text[:_HEAD_CHARS] + _TRUNCATED + text[-_TAIL_CHARS:]


class ContextEngine(abc.ABC):
    """Decides when and how the conversation is compacted; implement ``name``,
    ``update_from_response``, ``should_compress`` and ``compress``."""

    # Token state: every engine keeps these up to date; the host reads them.
    last_prompt_tokens: int = 0
    last_completion_tokens: int = 0
    last_total_tokens: int = 0
    threshold_tokens: int = 0
    context_length: int = 0
    compression_count: int = 0
    # Compaction parameters; protect_first_n counts head messages kept verbatim besides the
    # system prompt, which is always kept.
    threshold_percent: float = 0.75
    protect_first_n: int = 3
    protect_last_n: int = 6
    emit_automatic_compaction_status: bool = True

    @property
    @abc.abstractmethod
    def name(self) -> str:
        """Short identifier, the value of ``context.engine``: ``compressor``, ``lcm``."""

    @abc.abstractmethod
    def update_from_response(self, usage: dict[str, Any]) -> None:
        """Record the token usage of the last model response.

        ``prompt_tokens``, ``completion_tokens`` and ``total_tokens`` are always there (the
        model's counts when it reports them, else estimates).
        """

    @abc.abstractmethod
    def should_compress(self, prompt_tokens: int | None = None) -> bool:
        """Return whether to compact before the next request (``prompt_tokens`` its size)."""

    def should_compress_info(self, prompt_tokens: int | None = None) -> tuple[bool, str | None]:
        """Return ``(should_compress, why not)``; engines with cool-downs explain themselves."""
        return self.should_compress(prompt_tokens), None

    @abc.abstractmethod
    def compress(
        self,
        messages: list[dict[str, Any]],
        current_tokens: int | None = None,
        focus_topic: str | None = None,
        force: bool = False,
        memory_context: str = "",
    ) -> list[dict[str, Any]]:
        """Return ``messages`` compacted to fit: valid chat messages, the system prompt first.

        :param focus_topic: what to keep most of (``/compress <topic>``).
        :param force: compact even within an engine's own cool-down.
        :param memory_context: what the memory providers' ``on_pre_compress`` returned.
        """

    def prune_tool_results_only(
        self, messages: list[dict[str, Any]], current_tokens: int | None = None
    ) -> tuple[list[dict[str, Any]], int]:
        """Trim old tool results without a model call; return the messages and how many."""
        return messages, 0

    def should_compress_preflight(self, messages: list[dict[str, Any]]) -> bool:
        """A cheap check before a request, with no real token count yet; ``False`` here."""
        return False

    def has_content_to_compress(self, messages: list[dict[str, Any]]) -> bool:
        """Return whether anything could be compacted (``False``: all of it is protected)."""
        return True

    def on_session_start(self, session_id: str, **kwargs: Any) -> None:  # noqa: B027 - optional, Hermes' default
        """A session begins; ``kwargs`` may hold ``hermes_home``, ``platform``, ``model``."""

    def on_session_end(self, session_id: str, messages: list[dict[str, Any]]) -> None:  # noqa: B027 - optional, Hermes' default
        """A session ends (exit, ``/new``): never called per turn."""

    def on_session_reset(self) -> None:
        """``/new``: forget the per-session state (the token counts, by default)."""
        self.last_prompt_tokens = 0
        self.last_completion_tokens = 0
        self.last_total_tokens = 0
        self.compression_count = 0

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        """Return the tools it offers the model (none by default)."""
        return []

    def handle_tool_call(self, name: str, args: dict[str, Any], **kwargs: Any) -> str:
        """Run one of its tools and return JSON text; ``kwargs`` hold ``messages``."""
        return json.dumps({"error": f"Unknown context engine tool: {name}"})

    def get_status(self) -> dict[str, Any]:
        """Return the token state: ``last_prompt_tokens``, ``threshold_tokens``,
        ``context_length``, ``usage_percent``, ``compression_count``."""
        last = max(self.last_prompt_tokens, 0)
        percent = min(100.0, last / self.context_length * 100) if self.context_length else 0
        return {
            "last_prompt_tokens": last,
            "threshold_tokens": self.threshold_tokens,
            "context_length": self.context_length,
            "usage_percent": percent,
            "compression_count": self.compression_count,
        }

    def update_model(
        self,
        model: str,
        context_length: int,
        base_url: str = "",
        api_key: str = "",
        provider: str = "",
        api_mode: str = "",
    ) -> None:
        """The model is known (or changed): set ``context_length`` and ``threshold_tokens``."""
        self.context_length = context_length
        self.threshold_tokens = int(context_length * self.threshold_percent)
