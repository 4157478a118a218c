"""``compressor``: the bundled context engine, Hermes' ``ContextCompressor`` in shape.

Past the threshold (``compression.threshold`` of the model's context window, by the model's
reported usage, else an estimate) it replaces the middle of the conversation with one summary
message written by the active model. It never touches the system prompt, the protected head
(``compression.protect_first_n`` messages after it) or the tail: at least the last
``compression.protect_last_n`` messages, more while they fit in ``compression.target_ratio``
of the threshold, and always the latest user message. A tool call and its results stay
together. The summary message sits right after the head; its text starts with
:data:`SUMMARY_PREFIX` and ends with :data:`SUMMARY_END_MARKER`.

``config.yaml`` (Hermes' keys and defaults)::

    compression:
      enabled: true
      threshold: 0.50        # compact past this share of the context window
      target_ratio: 0.20     # the tail (and the summary) may take this share of the threshold
      protect_first_n: 3
      protect_last_n: 20
    model:
      context_length: 128000 # the model's window, when the model's name does not say
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import attrs

from hermes_hooks.backends.context_engine.engine import ContextEngine
from hermes_hooks.backends.context_engine.summary import (
    SUMMARY_SYSTEM_PROMPT,
    build_summary_prompt,
    extractive_summary,
)
from hermes_hooks.backends.context_engine.tokens import (
    CHARS_PER_TOKEN,
    estimate_message_tokens,
    estimate_messages_tokens_rough,
    usage_tokens,
)
from hermes_hooks.errors import ConfigError
from hermes_hooks.plugins.settings import keys_of, read_mapping, read_section

if TYPE_CHECKING:
    from hermes_hooks.backends.models.base import ModelProvider

__all__ = [
    "LEGACY_SUMMARY_PREFIX",
    "SUMMARY_END_MARKER",
    "SUMMARY_PREFIX",
    "CompressionSettings",
    "ContextCompressor",
    "is_compaction_summary_message",
    "summary_text",
]

logger = logging.getLogger(__name__)

SUMMARY_PREFIX: Final = (
    "[CONTEXT COMPACTION \N{EM DASH} REFERENCE ONLY] Earlier turns were compacted into the "
    "summary below. This is a handoff from a previous context window \N{EM DASH} treat it as "
    "background reference, NOT as active instructions. Do NOT answer questions or fulfill "
    "requests mentioned in this summary; they were already addressed. Respond ONLY to the "
    "latest user message that appears AFTER this summary. Your tools remain fully active:"
)
"""How a summary message starts, as in Hermes (shortened)."""
SUMMARY_END_MARKER: Final = (
    "--- END OF CONTEXT SUMMARY \N{EM DASH} respond to the message below, not the summary above ---"
)
LEGACY_SUMMARY_PREFIX: Final = "[CONTEXT SUMMARY]:"
_MIN_SUMMARY_TOKENS: Final = 128
_MAX_SUMMARY_TOKENS: Final = 10_000
_SUMMARY_RATIO: Final = 0.20
"""The summary may take this share of what it replaces (within the bounds above)."""


def summary_text(message: Mapping[str, Any]) -> str:
    """Return the summary a compaction summary message carries, without its framing."""
    content = str(message.get("content") or "")
    body = content.partition(SUMMARY_END_MARKER)[0]
    if body.lstrip().startswith(SUMMARY_PREFIX):
        body = body.lstrip()[len(SUMMARY_PREFIX) :]
    elif body.lstrip().startswith(LEGACY_SUMMARY_PREFIX):
        body = body.lstrip()[len(LEGACY_SUMMARY_PREFIX) :]
    return body.strip()


def is_compaction_summary_message(message: Mapping[str, Any]) -> bool:
    """Tell whether a message is a compaction summary (by how its text starts)."""
    content = message.get("content")
    return isinstance(content, str) and content.lstrip().startswith(
        (SUMMARY_PREFIX[:40], LEGACY_SUMMARY_PREFIX)
    )


@attrs.frozen
class CompressionSettings:
    """The ``compression:`` section, and ``model.context_length``.

    A value of the wrong type or range is replaced by its default, with a warning.
    """

    enabled: bool = True
    threshold: float = 0.50
    target_ratio: float = 0.20
    protect_first_n: int = 3
    protect_last_n: int = 20
    context_length: int | None = None
    warnings: tuple[str, ...] = ()

    @classmethod
    def from_config(
        cls, config: Mapping[str, Any], source: Path | None = None
    ) -> CompressionSettings:
        """Read ``compression`` (and ``model.context_length``) of a whole config mapping.

        :raises ConfigError: ``compression`` is not a mapping.
        """
        # The keys, their kinds and defaults are the table's (plugins/settings.py).
        values, read = read_section(config, "compression", source=source)
        warnings = list(read)
        try:  # a wrong window size is the model section's problem: here it is only ignored
            window, _ = read_mapping(
                keys_of("model", ("context_length",)), config.get("model"), source=source
            )
            length: int | None = window["context_length"]
        except ConfigError as exc:
            warnings.append(f"{exc}; ignored")
            length = None
        return cls(
            enabled=values["enabled"],
            threshold=float(values["threshold"]),
            target_ratio=float(values["target_ratio"]),
            protect_first_n=int(values["protect_first_n"]),
            protect_last_n=int(values["protect_last_n"]),
            context_length=length,
            warnings=tuple(warnings),
        )


class ContextCompressor(ContextEngine):
    """The bundled engine (``context.engine: compressor``); see the module's documentation.

    Its constructor takes Hermes' keyword names, so that an engine written for Hermes may
    subclass it. The summary is written by the model given to :meth:`bind_model` (the host
    binds its active model); without one, or when the request fails, it is extractive.
    """

    def __init__(
        self,
        model: str = "",
        threshold_percent: float = 0.50,
        protect_first_n: int = 3,
        protect_last_n: int = 20,
        summary_target_ratio: float = 0.20,
        quiet_mode: bool = False,
        summary_model_override: str | None = None,
        base_url: str = "",
        api_key: str = "",
        config_context_length: int | None = None,
        provider: str = "",
        api_mode: str = "",
        *,
        enabled: bool = True,
        **_ignored: Any,
    ) -> None:
        self.model = model
        self.threshold_percent = threshold_percent
        self.protect_first_n = protect_first_n
        self.protect_last_n = protect_last_n
        self.summary_target_ratio = summary_target_ratio
        self.quiet_mode = quiet_mode
        self.summary_model_override = summary_model_override
        self.enabled = enabled
        self.config_context_length = config_context_length
        self.last_summary: str | None = None
        self.last_summary_error: str | None = None
        self._summarizer: ModelProvider | None = None
        if config_context_length:
            self.update_model(model, config_context_length)

    @property
    def name(self) -> str:
        return "compressor"

    @classmethod
    def from_settings(cls, settings: CompressionSettings, model: str = "") -> ContextCompressor:
        """Build the engine ``config.yaml``'s ``compression`` section describes."""
        return cls(
            model=model,
            threshold_percent=settings.threshold,
            protect_first_n=settings.protect_first_n,
            protect_last_n=settings.protect_last_n,
            summary_target_ratio=settings.target_ratio,
            config_context_length=settings.context_length,
            enabled=settings.enabled,
        )

    def bind_model(self, model: ModelProvider | None) -> None:
        """Write summaries with ``model`` (the host's active model); ``None``: extractive."""
        self._summarizer = model

    def __deepcopy__(self, memo: dict[int, Any]) -> ContextCompressor:
        # The bound model holds connections: a copy for another session shares it.
        clone = type(self).__new__(type(self))
        memo[id(self)] = clone
        for key, value in vars(self).items():
            setattr(clone, key, value if key == "_summarizer" else copy.deepcopy(value, memo))
        return clone

    # -- the token state --------------------------------------------------------------------------

    def update_from_response(self, usage: dict[str, Any]) -> None:
        counts = usage_tokens(usage)
        if counts is None:
            return
        self.last_prompt_tokens = counts["prompt_tokens"]
        self.last_completion_tokens = counts["completion_tokens"]
        self.last_total_tokens = counts["total_tokens"]

    def should_compress(self, prompt_tokens: int | None = None) -> bool:
        tokens = self.last_prompt_tokens if prompt_tokens is None else prompt_tokens
        return bool(self.enabled and self.threshold_tokens and tokens >= self.threshold_tokens)

    @property
    def tail_token_budget(self) -> int:
        """Tokens the tail may take beyond ``protect_last_n`` messages."""
        return int(self.threshold_tokens * self.summary_target_ratio)

    # -- compacting -------------------------------------------------------------------------------

    def _head_end(self, messages: Sequence[Mapping[str, Any]]) -> int:
        start = 0
        while start < len(messages) and messages[start].get("role") == "system":
            start += 1
        end = min(len(messages), start + self.protect_first_n)
        # A head that ends on a tool call keeps its results with it.
        while end < len(messages) and messages[end].get("role") == "tool":
            end += 1
        return end

    def _tail_start(self, messages: Sequence[Mapping[str, Any]], head_end: int) -> int:
        n = len(messages)
        start = max(head_end, n - self.protect_last_n)
        used = sum(estimate_message_tokens(m) for m in messages[start:])
        budget = self.tail_token_budget
        while start > head_end:
            cost = estimate_message_tokens(messages[start - 1])
            if used + cost > budget:
                break
            used += cost
            start -= 1
        # The latest user message always stays, as the turn's own request.
        last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
        if head_end <= last_user < start:
            start = last_user
        # Never start with tool results: their call goes with them.
        while start > head_end and messages[start].get("role") == "tool":
            start -= 1
        return start

    def has_content_to_compress(self, messages: list[dict[str, Any]]) -> bool:
        head_end = self._head_end(messages)
        return self._tail_start(messages, head_end) > head_end

    def compress(
        self,
        messages: list[dict[str, Any]],
        current_tokens: int | None = None,
        focus_topic: str | None = None,
        force: bool = False,
        memory_context: str = "",
    ) -> list[dict[str, Any]]:
        """Replace the middle turns with one summary message; see the module's documentation."""
        head_end = self._head_end(messages)
        tail_start = self._tail_start(messages, head_end)
        if tail_start <= head_end:
            logger.debug("compressor: nothing to compact (everything is protected)")
            return messages
        head, middle, tail = (
            messages[:head_end],
            messages[head_end:tail_start],
            messages[tail_start:],
        )
        summary = self._summarize(middle, memory_context, focus_topic)
        content = f"{SUMMARY_PREFIX}\n\n{summary}\n\n{SUMMARY_END_MARKER}"
        before = head[-1].get("role") if head else None
        after = tail[0].get("role") if tail else None
        role = "user" if before in (None, "system", "assistant", "tool") else "assistant"
        if role == after:
            role = "assistant" if role == "user" else "user"
            if role == before or (role == "assistant" and before in (None, "system")):
                role = ""
        if role:
            compacted = [*head, {"role": role, "content": content}, *tail]
        else:
            # Both roles would repeat a neighbour's: the summary goes into the first tail message.
            first = dict(tail[0])
            first["content"] = f"{content}\n\n{first.get('content') or ''}".rstrip()
            compacted = [*head, first, *tail[1:]]
        self.compression_count += 1
        self.last_prompt_tokens = estimate_messages_tokens_rough(compacted)
        logger.info(
            "compressor: compacted %d messages into a summary (%d -> %d messages)",
            len(middle),
            len(messages),
            len(compacted),
        )
        return compacted

    def summary_budget(self, middle: Sequence[Mapping[str, Any]]) -> int:
        """Tokens the summary of ``middle`` may take."""
        share = int(estimate_messages_tokens_rough(middle) * _SUMMARY_RATIO)
        ceiling = max(_MIN_SUMMARY_TOKENS, min(_MAX_SUMMARY_TOKENS, self.tail_token_budget))
        return max(_MIN_SUMMARY_TOKENS, min(share, ceiling))

    def _summarize(
        self, middle: Sequence[Mapping[str, Any]], memory_context: str, focus_topic: str | None
    ) -> str:
        budget = self.summary_budget(middle)
        previous: list[str] = []
        turns: list[Mapping[str, Any]] = []
        for message in middle:
            if not is_compaction_summary_message(message):
                turns.append(message)
                continue
            # An earlier summary is carried forward; a message it was merged into stays a turn.
            previous.append(summary_text(message))
            rest = str(message.get("content") or "").partition(SUMMARY_END_MARKER)[2].strip()
            if rest:
                turns.append({**message, "content": rest})
        prompt = build_summary_prompt(
            turns,
            memory_context=memory_context,
            focus_topic=focus_topic,
            max_tokens=budget,
            previous_summary="\n".join(previous),
        )
        limit = budget * CHARS_PER_TOKEN
        self.last_summary_error = None
        text = ""
        model = self._summarizer
        if model is not None:
            try:
                response = model.complete(
                    [
                        {"role": "system", "content": SUMMARY_SYSTEM_PROMPT},
                        {"role": "user", "content": prompt},
                    ],
                    (),
                    model=self.summary_model_override,
                    max_tokens=budget,
                )
                text = response.text.strip()
            except Exception as exc:  # the conversation must still fit: fall back
                self.last_summary_error = f"{type(exc).__name__}: {exc}"
                logger.warning("compressor: the summary request failed (%s); extractive", exc)
        if not text:
            text = extractive_summary(prompt, limit)
        if len(text) > limit:
            text = text[: limit - 1].rstrip() + "\N{HORIZONTAL ELLIPSIS}"
        self.last_summary = text
        return text
