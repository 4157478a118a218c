"""The memory provider contract, as Hermes defines it (``agent/memory_provider.py``).

A memory provider gives the agent recall across sessions. The host keeps the builtin provider
(name ``builtin``) always first, plus at most one external provider, the one
``memory.provider`` selects; it calls them where Hermes does:

- ``initialize(session_id, hermes_home=..., platform=..., **more)`` when a session starts;
- ``system_prompt_block()`` for the system prompt;
- ``on_turn_start(turn_number, message, **kwargs)``, then ``prefetch(query, session_id=...)``
  once per user turn, before the tool loop (skipped for trivial prompts,
  :func:`is_trivial_prompt`), the merged text injected as recalled context;
- ``sync_turn(user, assistant, session_id=..., messages=...)`` and ``queue_prefetch(...)``
  after each turn;
- ``get_tool_schemas()`` offered to the model, calls dispatched to ``handle_tool_call``;
- ``on_delegation(task, result, child_session_id=...)`` when a subagent finishes;
- ``on_pre_compress(messages)`` before the context engine compresses;
- ``on_memory_write(action, target, content, metadata)`` when the builtin memory tool writes;
- ``on_session_end(messages)`` and ``shutdown()`` at the end.

The names here are served to Hermes plugins as ``agent.memory_provider``.
"""

from __future__ import annotations

import abc
import contextvars
import logging
import re
import threading
import unicodedata
from collections.abc import Callable, Mapping
from typing import Any, Final

import attrs

__all__ = [
    "INDICATOR_GLYPH",
    "PRE_COMPRESS_CHECKPOINT_API_VERSION",
    "TRIVIAL_PROMPT_RE",
    "MemoryProvider",
    "RecallStatus",
    "build_memory_context_block",
    "ctx_bound",
    "is_trivial_prompt",
    "normalize_tool_schema",
    "sanitize_context",
    "spawn_context_thread",
]

logger = logging.getLogger(__name__)

PRE_COMPRESS_CHECKPOINT_API_VERSION: Final = 2
"""Hermes' opt-in checkpoint contract of ``on_pre_compress``; version 1 is the default one."""

INDICATOR_GLYPH: Final = "\N{BRAIN}"
"""The default mark of the "memory was used" indicator (:class:`RecallStatus`)."""


@attrs.frozen
class RecallStatus:
    """What a provider's last :meth:`MemoryProvider.prefetch` injected this turn.

    :param provider_label: how the provider is named in the indicator.
    :param count: how many memories; ``0`` means content without a discrete count.
    :param glyph: the indicator's mark.
    """

    provider_label: str
    count: int
    glyph: str = INDICATOR_GLYPH


TRIVIAL_PROMPT_RE: Final = re.compile(
    r"^(yes|no|ok|okay|sure|thanks|thank you|y|n|yep|nope|yeah|nah|"
    r"hi|hey|hello|yo|sup|"
    r"continue|go ahead|do it|proceed|got it|cool|nice|great|done|next|lgtm|k)"
    r"[\s!?.:;,\"'~\u2018\u2019\u201c\u201d\u2014\u2013\u2026()\[\]{}<>*&^%$#@+=`\u00a0]*$",
    re.IGNORECASE,
)
"""Prompts with no semantic signal: an acknowledgement or greeting, then only punctuation."""


def is_trivial_prompt(text: str | None) -> bool:
    """Tell whether a user prompt is too trivial to recall memory for.

    Empty or blank input, a slash command, and a bare greeting or acknowledgement (``ok``,
    ``thanks!``, ``lgtm``) are; words that merely start like one (``k8s``, ``note``) are not.
    """
    if not text:
        return True
    stripped = text.strip()
    if not stripped or stripped.startswith("/"):
        return True
    return bool(TRIVIAL_PROMPT_RE.match(stripped))


def ctx_bound(function: Callable[..., Any]) -> Callable[..., Any]:
    """Return ``function`` bound to a copy of the caller's context variables.

    Called on another thread, it still sees them (the current manager, a plugin's own
    variables), as Hermes' helper of the same name does.
    """
    context = contextvars.copy_context()

    def bound(*args: Any, **kwargs: Any) -> Any:
        return context.run(function, *args, **kwargs)

    return bound


def spawn_context_thread(
    target: Callable[..., Any],
    *,
    name: str | None = None,
    daemon: bool = True,
    args: tuple[Any, ...] = (),
    kwargs: Mapping[str, Any] | None = None,
) -> threading.Thread:
    """Return a thread, not started, that runs ``target`` under the caller's context variables."""
    return threading.Thread(
        target=ctx_bound(target), args=args, kwargs=dict(kwargs or {}), name=name, daemon=daemon
    )


_FENCE_WORD = r"memory[\s_\-]*context"
_FENCE_TAG = re.compile(rf"<\s*/?\s*{_FENCE_WORD}\b[^<>]*>", re.IGNORECASE)
_INTERNAL_CONTEXT = re.compile(
    rf"<\s*{_FENCE_WORD}\b[^<>]*>[\s\S]*?<\s*/\s*{_FENCE_WORD}\b[^<>]*>", re.IGNORECASE
)
_OPENING_BRACKET = re.compile(rf"<(?=\s*/?\s*{_FENCE_WORD})", re.IGNORECASE)
_CLOSING_BRACKET = re.compile(rf"({_FENCE_WORD}[^<>]*)>", re.IGNORECASE)
_INTERNAL_NOTE = re.compile(
    r"\[System note:\s*The following is recalled memory context,\s*NOT new user input\.\s*"
    r"Treat as (?:informational background data|authoritative reference data[^\]]*)\.\]\s*",
    re.IGNORECASE,
)

MEMORY_CONTEXT_NOTE: Final = (
    "[System note: The following is recalled memory context, NOT new user input. Treat as "
    "authoritative reference data \N{EM DASH} this is the agent's persistent memory and should "
    "inform all responses.]"
)
"""The note that opens the recalled-memory block, as Hermes words it."""


def sanitize_context(text: str) -> str:
    """Remove fence tags, whole recalled blocks and system notes from a provider's text.

    A provider (or a fact it stores) must not be able to forge, close or open the fence the host
    puts around recall. The text is read in its NFKC form (so fullwidth ``\uff1c`` is ``<``),
    removal is repeated until nothing changes (a tag split by another tag does not rejoin), and a
    bracket still next to the marker's words is replaced by a look-alike that is not a tag.
    """
    text = unicodedata.normalize("NFKC", text)
    while True:
        before = text
        for pattern in (_INTERNAL_CONTEXT, _INTERNAL_NOTE, _FENCE_TAG):
            text = pattern.sub("", text)
        if text == before:
            break
    text = _OPENING_BRACKET.sub("\N{SINGLE LEFT-POINTING ANGLE QUOTATION MARK}", text)
    return _CLOSING_BRACKET.sub("\\1\N{SINGLE RIGHT-POINTING ANGLE QUOTATION MARK}", text)


def build_memory_context_block(raw_context: str) -> str:
    """Wrap recalled memory in the ``<memory-context>`` fence with its system note.

    :returns: ``""`` when there is nothing to wrap.
    """
    if not raw_context or not raw_context.strip():
        return ""
    clean = sanitize_context(raw_context)
    if clean != raw_context:
        logger.warning("a memory provider returned pre-wrapped context; the fence was removed")
    return f"<memory-context>\n{MEMORY_CONTEXT_NOTE}\n\n{clean.strip()}\n</memory-context>"


def normalize_tool_schema(schema: object) -> dict[str, Any] | None:
    """Return a bare function schema (``{"name", "description", "parameters"}``) or ``None``.

    Providers should return the bare shape; the wrapped OpenAI form
    (``{"type": "function", "function": {...}}``) is unwrapped; one without a name is ``None``.
    """
    if not isinstance(schema, Mapping):
        return None
    if schema.get("type") == "function" and isinstance(schema.get("function"), Mapping):
        schema = schema["function"]
    assert isinstance(schema, Mapping)
    name = schema.get("name")
    return dict(schema) if isinstance(name, str) and name.strip() else None


class MemoryProvider(abc.ABC):
    """A memory backend: implement ``name``, ``is_available``, ``initialize`` and
    ``get_tool_schemas``; everything else has Hermes' default (nothing)."""

    pre_compress_checkpoint_api_version: int = 1
    """Set to :data:`PRE_COMPRESS_CHECKPOINT_API_VERSION` to opt into Hermes' checkpoint
    contract of :meth:`on_pre_compress`; version 1 is best effort."""

    @property
    @abc.abstractmethod
    def name(self) -> str:
        """Short identifier: ``builtin``, ``honcho``, ``mem0``."""

    # -- the core life cycle ----------------------------------------------------------------------

    @abc.abstractmethod
    def is_available(self) -> bool:
        """Return whether it is configured and ready: credentials, packages; no network."""

    @abc.abstractmethod
    def initialize(self, session_id: str, **kwargs: Any) -> None:
        """Get ready for a session: connect, create tables, start background threads.

        ``kwargs`` always hold ``hermes_home`` (the home, a ``str``: keep data there, never in
        a hard-coded ``~/.hermes``) and ``platform`` (``cli``, ``telegram``...); they may hold
        ``agent_context`` (``primary``), ``agent_identity``, ``parent_session_id`` and
        ``user_id``.
        """

    def initialize_for_inspection(self, session_id: str, **kwargs: Any) -> None:
        """Prepare what ``system_prompt_block`` and ``get_tool_schemas`` need, for a look only.

        By default the same as :meth:`initialize`.
        """
        self.initialize(session_id, **kwargs)

    def unavailable_reason(self) -> str:
        """Return a short hint why it is not available (what to install or set), or ``""``."""
        return ""

    def system_prompt_block(self) -> str:
        """Return static text for the system prompt (instructions, status), or ``""``."""
        return ""

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        """Return what to recall for the coming turn, as text to inject, or ``""``.

        Called once per user turn, before the model is asked, and bounded by
        ``memory.prefetch_timeout``: keep it fast (return what :meth:`queue_prefetch`
        prepared in the background).
        """
        return ""

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:  # noqa: B027 - optional, Hermes' default
        """Start recalling for the *next* turn, in the background (called after each turn)."""

    def recall_status(self) -> RecallStatus | None:
        """Describe what the last :meth:`prefetch` injected, for a "memory was used" line."""
        return None

    def sync_turn(  # noqa: B027 - optional, Hermes' default
        self,
        user_content: str,
        assistant_content: str,
        *,
        session_id: str = "",
        messages: list[dict[str, Any]] | None = None,
    ) -> None:
        """Persist a finished turn; ``messages`` is the conversation as of that turn."""

    @abc.abstractmethod
    def get_tool_schemas(self) -> list[dict[str, Any]]:
        """Return the tools it offers the model (``{"name", "description", "parameters"}``)."""

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        """Run one of its tools and return the result as JSON text."""
        raise NotImplementedError(f"provider {self.name} does not handle tool {tool_name}")

    def shutdown(self) -> None:  # noqa: B027 - optional, Hermes' default
        """Flush and close: the session is over."""

    # -- optional hooks ---------------------------------------------------------------------------

    def on_turn_start(self, turn_number: int, message: str, **kwargs: Any) -> None:  # noqa: B027 - optional, Hermes' default
        """A user turn starts; ``kwargs`` may hold ``model``, ``platform``, ``tool_count``."""

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:  # noqa: B027 - optional, Hermes' default
        """The session ends (exit, ``/new``): the whole conversation, for extraction."""

    def on_session_switch(  # noqa: B027 - optional, Hermes' default
        self,
        new_session_id: str,
        *,
        parent_session_id: str = "",
        reset: bool = False,
        rewound: bool = False,
        **kwargs: Any,
    ) -> None:
        """The session id changed without a new provider (``/new``: ``reset=True``)."""

    def on_pre_compress(self, messages: list[dict[str, Any]]) -> str:
        """The context engine is about to summarize ``messages`` away: return what the
        summary should keep, or ``""``."""
        return ""

    def on_delegation(  # noqa: B027 - optional, Hermes' default
        self, task: str, result: str, *, child_session_id: str = "", **kwargs: Any
    ) -> None:
        """On the parent, when a subagent finished ``task`` with ``result``."""

    def get_config_schema(self) -> list[dict[str, Any]]:
        """Return the fields setup asks for (``key``, ``description``, ``secret``, ...)."""
        return []

    def save_config(self, values: dict[str, Any], hermes_home: str) -> None:  # noqa: B027 - optional, Hermes' default
        """Write non-secret settings where the provider keeps them."""

    def on_memory_write(  # noqa: B027 - optional, Hermes' default
        self,
        action: str,
        target: str,
        content: str,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        """The builtin memory tool wrote: ``action`` is ``add``, ``replace`` or ``remove``,
        ``target`` is ``memory`` or ``user``."""

    def backup_paths(self) -> list[str]:
        """Return paths outside the home that hold its data, for backups."""
        return []
