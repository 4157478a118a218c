"""The ``offline`` provider: a deterministic, rule-based stand-in for a model.

It is not an LLM and says so. It exists so that ``hermes -z "..."`` runs a real turn, with real
tool calls and every hook, on a machine with no key and no network. Given the same messages
and tools it always answers the same, by these rules, tried in order on the last user message:

0. "call `TOOL`" or "call `TOOL` with {JSON}" calls the tool TOOL (any tool offered, an MCP
   server's ``mcp_files_read_file`` say) with the JSON object, or ``{}``;
1. a message that starts with "delegate: GOAL" calls ``delegate_task`` with ``{"goal": GOAL}``;
2. "remember: FACT" (or "remember that FACT") calls ``memory`` with ``{"action": "add",
   "content": FACT}``; "forget fact 3" (or "forget #3") calls it with ``{"action": "forget",
   "id": 3}``; "search memory for X" and "what do you remember about X" call it with
   ``{"action": "search", "query": X}``;
3. "generate / create / make / render / animate ... a video (clip, animation) of X" calls
   ``video_generate`` with ``{"prompt": X}``;
4. "generate / create / draw / make ... an image (picture, photo) of X" calls
   ``image_generate`` with ``{"prompt": X}``;
5. "read (fetch, open, extract, summarize) URL", with an ``http(s)://`` URL, calls
   ``web_extract`` with ``{"urls": [URL]}``;
6. "search (the web) for X", "look up X" or "web search X" calls ``web_search`` with
   ``{"query": X}``;
7. "run `CMD`", "execute `CMD`" or "run: CMD" calls ``terminal`` with ``{"command": CMD}``;
8. "read (show, cat, open) PATH", where PATH has a ``.`` or ``/``, calls ``read_file`` with
   ``{"path": PATH}``;
9. anything else gets a plain answer that explains what it can do, and quotes what the host
   recalled from memory for the message (its ``<memory-context>`` block), if anything.

A rule whose tool is not offered gets a plain answer saying so. After tool results it answers
with a short account of them (the command's output, the file's text, the error). When a JSON
answer is asked for (``json_schema``), it returns the schema's skeleton: empty strings, zeros,
``false``, empty lists, the first ``enum`` value or the ``default``. A summary request of the
context engine (:func:`~hermes_hooks.backends.context_engine.summary.is_summary_request`) gets
an extractive summary: the memory notes, then the first sentence of each turn.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from hermes_hooks.backends.context_engine.summary import extractive_summary, is_summary_request
from hermes_hooks.backends.models.base import (
    ModelProvider,
    ModelResponse,
    ModelSettings,
    ToolCall,
    dumps,
    message_text,
)

__all__ = ["OfflineModel", "json_skeleton"]

DEFAULT_MODEL: Final = "offline-rules-1"

_TRAILING: Final = ".,;:!?)\"'"
_IMAGE: Final = re.compile(
    r"\b(?:generate|create|draw|make|paint|render)\b.*?\b(?:image|picture|photo|drawing|"
    r"illustration)\s+of\s+(?P<prompt>.+)",
    re.IGNORECASE | re.DOTALL,
)
_VIDEO: Final = re.compile(
    r"\b(?:generate|create|make|render|animate|produce|film)\b.*?\b(?:video|clip|animation|"
    r"movie)\s+of\s+(?P<prompt>.+)",
    re.IGNORECASE | re.DOTALL,
)
_URL: Final = re.compile(
    r"\b(?:read|fetch|open|extract|summari[sz]e|get)\b[^\n]*?(?P<url>https?://[^\s`'\"<>]+)",
    re.IGNORECASE,
)
_SEARCH: Final = re.compile(
    r"^\s*(?:please\s+)?(?:(?:search|google)(?:\s+the\s+web|\s+online)?(?:\s+for)?|"
    r"look\s+up|web\s+search(?:\s+for)?|find\s+(?:on|in)\s+the\s+web)\s*:?\s+(?P<query>.+)",
    re.IGNORECASE | re.DOTALL,
)
_RUN_QUOTED: Final = re.compile(r"\b(?:run|execute)\b[^`]*?`(?P<command>[^`]+)`", re.IGNORECASE)
_RUN_COLON: Final = re.compile(r"^\s*(?:run|execute)\s*:\s*(?P<command>.+)$", re.IGNORECASE)
_REMEMBER: Final = re.compile(
    r"^\s*remember\b\s*(?::\s*|that\s+)(?P<fact>.+)", re.IGNORECASE | re.DOTALL
)
_FORGET: Final = re.compile(r"^\s*forget\s+(?:fact\s+|memory\s+)?#?(?P<id>\d+)\b", re.IGNORECASE)
_RECALL: Final = re.compile(
    r"^\s*(?:search\s+(?:your\s+|the\s+)?memory\s+for|what\s+do\s+you\s+remember\s+about)"
    r"\s+(?P<query>.+)",
    re.IGNORECASE | re.DOTALL,
)
_MEMORY_BLOCK: Final = re.compile(r"<memory-context>(?P<body>.*?)</memory-context>", re.DOTALL)
_CALL: Final = re.compile(
    r"^\s*call\s+`(?P<name>[A-Za-z0-9_.:-]+)`(?:\s+with\s+(?P<args>\{.*\}))?\s*$",
    re.IGNORECASE | re.DOTALL,
)
_DELEGATE: Final = re.compile(r"^\s*delegate\b\s*:?\s*(?P<goal>.+)", re.IGNORECASE | re.DOTALL)
_READ: Final = re.compile(
    r"\b(?:read|show|cat|open)\s+(?:me\s+)?(?:the\s+)?(?:file\s+)?`?(?P<path>[^\s`'\"]+)`?",
    re.IGNORECASE,
)
_INTRO: Final = (
    "I am the offline model: a rule-based stand-in, not an LLM. I can run a command "
    "(run `ls`), read a file (read README.md), generate an image (generate an image of a "
    "lighthouse) or a video (generate a video of a corgi surfing), search (search for "
    "pluggy hooks) or read a page (read https://example.org) when those tools are "
    "installed, keep a fact in memory (remember: FACT), or hand a goal to a subagent "
    "(delegate: GOAL). Set model.provider in config.yaml to use a real model."
)


def _recalled_lines(text: str) -> list[str]:
    """Return the ``- `` lines of the ``<memory-context>`` block the host added, if any."""
    match = _MEMORY_BLOCK.search(text)
    if match is None:
        return []
    return [line.strip() for line in match["body"].splitlines() if line.strip().startswith("- ")]


def _first_line(text: str, limit: int = 200) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


def pick_tool(text: str) -> tuple[str, dict[str, Any]] | None:
    """Return the tool call the rules pick for ``text``, or ``None`` for a plain answer."""
    first = text.strip().split("\n\n", 1)[0]
    if match := _CALL.match(first):
        try:
            args = json.loads(match["args"]) if match["args"] else {}
        except ValueError:
            args = None
        if isinstance(args, dict):
            return match["name"], args
    if match := _DELEGATE.search(first):
        return "delegate_task", {"goal": match["goal"].strip()}
    if match := _REMEMBER.search(first):
        fact = " ".join(match["fact"].split()).rstrip(".")
        if fact:
            return "memory", {"action": "add", "content": fact}
    if match := _FORGET.search(first):
        return "memory", {"action": "forget", "id": int(match["id"])}
    if match := _RECALL.search(first):
        query = " ".join(match["query"].split()).rstrip(_TRAILING)
        if query:
            return "memory", {"action": "search", "query": query}
    if match := _VIDEO.search(first):
        prompt = " ".join(match["prompt"].split()).rstrip(_TRAILING)
        if prompt:
            return "video_generate", {"prompt": prompt}
    if match := _IMAGE.search(first):
        prompt = " ".join(match["prompt"].split()).rstrip(_TRAILING)
        if prompt:
            return "image_generate", {"prompt": prompt}
    if match := _URL.search(first):
        return "web_extract", {"urls": [match["url"].rstrip(_TRAILING)]}
    if match := _SEARCH.search(first):
        query = " ".join(match["query"].split()).rstrip(_TRAILING)
        if query:
            return "web_search", {"query": query}
    if match := _RUN_QUOTED.search(first) or _RUN_COLON.search(first):
        return "terminal", {"command": match["command"].strip()}
    match = _READ.search(first)
    if match:
        path = match["path"].rstrip(_TRAILING)
        if "." in path or "/" in path:
            return "read_file", {"path": path}
    return None


def json_skeleton(schema: object) -> object:
    """Return the simplest value that fits a JSON schema (its ``default`` or first ``enum``)."""
    if not isinstance(schema, Mapping):
        return {}
    if "default" in schema:
        return schema["default"]
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return enum[0]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or (kind is None and "properties" in schema):
        properties = schema.get("properties")
        if not isinstance(properties, Mapping):
            return {}
        return {str(key): json_skeleton(sub) for key, sub in properties.items()}
    simple: dict[str, object] = {"string": "", "integer": 0, "number": 0, "boolean": False}
    return [] if kind == "array" else simple.get(str(kind))


def _describe_result(tool: str, args: Mapping[str, Any], result: str) -> str:
    try:
        data = json.loads(result)
    except ValueError:
        data = None
    if not isinstance(data, dict):
        return f"The {tool} tool returned:\n{result}"
    error = data.get("error")
    if tool == "terminal" and "output" in data:
        command = args.get("command", "")
        output = str(data.get("output") or "").rstrip("\n")
        head = f"Ran `{command}` (exit code {data.get('exit_code')})"
        if error:
            head = f"`{command}` failed: {error}"
        return f"{head}:\n{output}" if output else head + "."
    if set(data) <= {"result", "structuredContent"} and isinstance(data.get("result"), str):
        return f"The {tool} tool returned:\n{data['result']}"  # an MCP server's tool
    if error:
        # A block and a failure give the model the same {"error": ...} (as in Hermes): the
        # call failed either way, whether the gate stopped it or the tool itself.
        return f"The {tool} call failed: {error}"
    if tool == "read_file" and "content" in data:
        return f"{data.get('path', args.get('path', ''))}:\n{data['content']}"
    if tool == "image_generate" and data.get("image"):
        prompt = data.get("prompt") or args.get("prompt", "")
        made_by = f" by {data['provider']}" if data.get("provider") else ""
        note = f"\n({data['note']})" if data.get("note") else ""
        return f"Generated an image of {prompt}{made_by}: {data['image']}{note}"
    if tool == "video_generate" and data.get("video"):
        prompt = data.get("prompt") or args.get("prompt", "")
        made_by = f" by {data['provider']}" if data.get("provider") else ""
        note = f"\n({data['note']})" if data.get("note") else ""
        return f"Generated a video of {prompt}{made_by}: {data['video']}{note}"
    if tool == "web_search" and isinstance(data.get("data"), dict):
        return _describe_search(args, data["data"].get("web") or [])
    if tool == "web_extract" and isinstance(data.get("results"), list):
        return _describe_pages(data["results"])
    if tool == "memory" and data.get("success"):
        action = data.get("action")
        if action == "add":
            return f"Saved to memory as #{data.get('id')}: {data.get('content')}"
        if action == "forget":
            return f"Forgot #{data.get('id')}: {data.get('content')}"
        found = data.get("results", data.get("facts")) or []
        if not found:
            return "Nothing in memory matches."
        lines = [f"- [#{f.get('id')}] {f.get('content')}" for f in found if isinstance(f, dict)]
        return "From memory:\n" + "\n".join(lines)
    if tool == "delegate_task" and "summary" in data:
        return f"The subagent ({data.get('status', 'done')}) reported:\n{data['summary']}"
    return f"The {tool} tool returned:\n{result}"


def _describe_search(args: Mapping[str, Any], hits: Sequence[Any]) -> str:
    query = args.get("query", "")
    if not hits:
        return f"The search for {query!r} found nothing."
    lines = [f"Found {len(hits)} result{'s' if len(hits) != 1 else ''} for {query!r}:"]
    for number, hit in enumerate(hits, 1):
        if not isinstance(hit, Mapping):
            continue
        lines.append(f"{number}. {hit.get('title') or hit.get('url')} — {hit.get('url', '')}")
        if hit.get("description"):
            lines.append(f"   {_first_line(str(hit['description']))}")
    return "\n".join(lines)


def _describe_pages(pages: Sequence[Any]) -> str:
    parts = []
    for page in pages:
        if not isinstance(page, Mapping):
            continue
        if page.get("error"):
            parts.append(f"{page.get('url', '')}: could not be read: {page['error']}")
            continue
        text = str(page.get("content") or "").strip()
        head = text if len(text) <= 1200 else text[:1199] + "…"
        title = f" ({page['title']})" if page.get("title") else ""
        parts.append(f"{page.get('url', '')}{title}:\n{head}")
    return "\n\n".join(parts) or "The web_extract tool returned no page."


class OfflineModel(ModelProvider):
    """The rule-based stand-in; see the module documentation for its rules.

    :param model: the name it reports (``offline-rules-1`` by default).
    """

    provider = "offline"
    api_mode = "offline"

    def __init__(self, model: str | None = None) -> None:
        self.model = model or DEFAULT_MODEL

    @classmethod
    def from_settings(cls, settings: ModelSettings) -> OfflineModel:
        """Build it from ``model:`` settings (only ``name`` is read)."""
        return cls(settings.name)

    def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] = (),
        *,
        model: str | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        json_schema: Mapping[str, Any] | None = None,
    ) -> ModelResponse:
        """Answer by the rules; see the module documentation."""
        served = model or self.model
        if json_schema is not None:
            return ModelResponse(text=dumps(json_skeleton(json_schema)), model=served)
        if messages and messages[-1].get("role") == "tool":
            return ModelResponse(text=self._summarize(messages), model=served)
        user = next((m for m in reversed(messages) if m.get("role") == "user"), None)
        text = message_text(user) if user is not None else ""
        if is_summary_request(text):
            limit = (max_tokens or 1_000) * 4
            return ModelResponse(text=extractive_summary(text, limit), model=served)
        picked = pick_tool(text)
        if picked is None:
            said = _first_line(text)
            answer = f"{_INTRO}\n\nYou said: {said}" if said else _INTRO
            recalled = _recalled_lines(text)
            if recalled:
                answer += "\n\nFrom memory:\n" + "\n".join(recalled)
            return ModelResponse(text=answer, model=served)
        name, args = picked
        offered = {
            str(tool.get("function", {}).get("name"))
            for tool in tools
            if isinstance(tool.get("function"), Mapping)
        }
        if name not in offered:
            return ModelResponse(
                text=f"That needs the {name} tool, which is not available here, so I cannot "
                f"do it. (I am the offline, rule-based stand-in for a model.)",
                model=served,
            )
        calls = sum(len(m.get("tool_calls") or ()) for m in messages)
        call = ToolCall(id=f"call_{calls + 1}", name=name, arguments=dumps(args))
        return ModelResponse(tool_calls=(call,), finish_reason="tool_calls", model=served)

    @staticmethod
    def _summarize(messages: Sequence[Mapping[str, Any]]) -> str:
        """Describe the tool results that follow the last assistant message."""
        start = len(messages)
        while start > 0 and messages[start - 1].get("role") == "tool":
            start -= 1
        calls: dict[str, tuple[str, dict[str, Any]]] = {}
        if start > 0:
            for call in messages[start - 1].get("tool_calls") or ():
                function = call.get("function", {})
                try:
                    args = json.loads(function.get("arguments") or "{}")
                except ValueError:
                    args = {}
                calls[str(call.get("id"))] = (
                    str(function.get("name")),
                    args if isinstance(args, dict) else {},
                )
        parts = []
        for message in messages[start:]:
            tool, args = calls.get(str(message.get("tool_call_id")), ("tool", {}))
            parts.append(_describe_result(tool, args, message_text(message)))
        return "\n\n".join(parts)
