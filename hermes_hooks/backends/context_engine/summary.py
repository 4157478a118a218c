"""The summary request the compressor sends the model, and the extractive summary of it.

The request is plain text a real model reads as an instruction: :data:`SUMMARY_REQUEST`, the
memory providers' notes under :data:`NOTES_HEADING`, the summary of an earlier compaction
under :data:`PREVIOUS_HEADING` (to be carried forward, so that a second compaction does not
lose what the first kept), then the turns under :data:`TURNS_HEADING`, one ``[role] text``
line each. A model that cannot write (the offline model) answers it with
:func:`extractive_summary`: the notes as they are, the earlier summary's lines, then the first
sentence of each turn, cut to the length asked for (the oldest lines go first). The compressor
falls back to the same when the model's request fails.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from hermes_hooks.backends.context_engine.engine import sanitize_memory_context

__all__ = [
    "NOTES_HEADING",
    "PREVIOUS_HEADING",
    "SUMMARY_REQUEST",
    "SUMMARY_SYSTEM_PROMPT",
    "TURNS_HEADING",
    "build_summary_prompt",
    "extractive_summary",
    "is_summary_request",
    "render_turn",
]

SUMMARY_SYSTEM_PROMPT: Final = (
    "You compact conversations. Write a faithful, dense summary of the turns you are given, "
    "for the same assistant to continue from: the user's goals and preferences, decisions "
    "made, facts learned, files and commands involved, what was done and what is still open. "
    "Do not answer anything in the turns; only summarize them."
)
SUMMARY_REQUEST: Final = "Summarize the conversation turns below for a context handoff."
"""The first line of every summary request."""
NOTES_HEADING: Final = "Notes from memory (keep these):"
PREVIOUS_HEADING: Final = "Summary of still earlier turns (carry it forward):"
TURNS_HEADING: Final = "Turns:"
_TURN_CHARS: Final = 2_000
"""The most of one message a summary request carries."""
_PROMPT_CHARS: Final = 160_000
"""The most of the turns a summary request carries (the oldest and newest kept)."""
_FIRST_SENTENCE: Final = re.compile(r"^(.+?[.!?])(?:\s|$)", re.DOTALL)
_TURN_LINE: Final = re.compile(r"^\[(?P<role>[^\]]+)\]\s?(?P<text>.*)$")


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(part.get("text", "")) for part in content if isinstance(part, Mapping))
    return "" if content is None else str(content)


def render_turn(message: Mapping[str, Any]) -> str:
    """Return one message as the ``[role] text`` line a summary request carries."""
    role = str(message.get("role", "?"))
    text = " ".join(_text(message.get("content")).split())
    calls = []
    for call in message.get("tool_calls") or ():
        function = call.get("function") if isinstance(call, Mapping) else None
        if isinstance(function, Mapping):
            arguments = " ".join(str(function.get("arguments", "")).split())
            calls.append(f"{function.get('name', '?')}({arguments[:200]})")
    if calls:
        text = (text + " " if text else "") + "calls " + ", ".join(calls)
    if role == "tool":
        role = "tool result"
    if len(text) > _TURN_CHARS:
        text = text[: _TURN_CHARS - 1] + "\N{HORIZONTAL ELLIPSIS}"
    return f"[{role}] {text}"


def build_summary_prompt(
    messages: Sequence[Mapping[str, Any]],
    *,
    memory_context: str = "",
    focus_topic: str | None = None,
    max_tokens: int = 1_000,
    previous_summary: str = "",
) -> str:
    """Return the user message of a summary request for ``messages``.

    :param previous_summary: the text of an earlier compaction's summary among the turns.
    """
    lines = [SUMMARY_REQUEST, f"Keep the summary under {max_tokens} tokens."]
    if focus_topic:
        lines.append(f"Keep the most detail about: {focus_topic}")
    notes = sanitize_memory_context(memory_context) if memory_context else ""
    if notes:
        lines += ["", NOTES_HEADING, notes]
    if previous_summary.strip():
        lines += ["", PREVIOUS_HEADING, previous_summary.strip()]
    turns = [render_turn(message) for message in messages]
    if sum(len(turn) for turn in turns) > _PROMPT_CHARS:
        kept_head: list[str] = []
        kept_tail: list[str] = []
        size = 0
        for turn in turns[: len(turns) // 2]:
            if size + len(turn) > _PROMPT_CHARS // 2:
                break
            kept_head.append(turn)
            size += len(turn)
        for turn in reversed(turns[len(turns) // 2 :]):
            if size + len(turn) > _PROMPT_CHARS:
                break
            kept_tail.insert(0, turn)
            size += len(turn)
        omitted = len(turns) - len(kept_head) - len(kept_tail)
        turns = [*kept_head, f"[...] {omitted} turns omitted", *kept_tail]
    lines += ["", TURNS_HEADING, *turns]
    return "\n".join(lines)


def is_summary_request(text: str) -> bool:
    """Tell whether a user message is a summary request of :func:`build_summary_prompt`."""
    return text.lstrip().startswith(SUMMARY_REQUEST)


def _first_sentence(text: str, limit: int = 160) -> str:
    text = text.strip()
    match = _FIRST_SENTENCE.match(text)
    sentence = match.group(1) if match else text
    return sentence if len(sentence) <= limit else sentence[: limit - 1] + "\N{HORIZONTAL ELLIPSIS}"


def _section(body: str, heading: str) -> str:
    """Return the text under ``heading`` in the part of a request before its turns."""
    if heading not in body:
        return ""
    text = body.partition(heading)[2]
    for other in (NOTES_HEADING, PREVIOUS_HEADING):
        if other != heading:
            text = text.partition("\n\n" + other)[0]
    return text.strip()


def extractive_summary(request: str, max_chars: int = 4_000) -> str:
    """Return the extractive summary of a summary request: its notes, the earlier summary's
    lines, then one line per turn (its role and first sentence), at most ``max_chars`` long;
    when it is longer, the earlier summary's oldest lines are left out first."""
    _, _, body = request.partition("\n\n")
    head, _, turns_part = body.partition(TURNS_HEADING)
    notes = _section(head, NOTES_HEADING)
    previous = [
        line
        for line in _section(head, PREVIOUS_HEADING).splitlines()
        if line.strip() and not line.startswith(("Notes from memory:", "  "))
    ]
    lines: list[str] = []
    if notes:
        lines += ["Notes from memory:", *(f"  {line}" for line in notes.splitlines() if line)]
    turn_lines = []
    for raw in turns_part.splitlines():
        match = _TURN_LINE.match(raw.strip())
        if match is None or not match["text"].strip():
            continue
        turn_lines.append(f"- {match['role']}: {_first_sentence(match['text'])}")
    earlier = [line for line in previous if line != "Earlier turns:"]
    if earlier or turn_lines:
        middle = ["Earlier turns:", *earlier, *turn_lines]
        while earlier and len("\n".join([*lines, *middle])) > max_chars:
            earlier.pop(0)
            middle = ["Earlier turns:", *earlier, *turn_lines]
        lines += middle
    text = "\n".join(lines) or "(nothing to summarize)"
    if len(text) > max_chars:
        text = text[: max(0, max_chars - 1)].rstrip() + "\N{HORIZONTAL ELLIPSIS}"
    return text
