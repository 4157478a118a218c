"""web-offline: ``web_search`` over a folder of documents on this machine, with no network.

It is not the web: it searches the ``.md``, ``.txt`` and ``.html`` files under
``$HERMES_HOME/search/`` (or ``web.offline.path``), so that ``hermes -z "search for X"`` runs a
real search tool call on a laptop with no key and no network. Put notes, saved pages or a
project's docs there. Each hit's ``url`` is the file's ``file://`` URL.

Ranking: every word of the query (case-folded, two letters or more) that occurs in a document
counts once per occurrence, three times in its title; documents with more of the query's words
come first, then higher counts, then the path. The same folder and query always give the same
answer.

Configuration (``config.yaml``)::

    web:
      offline:
        path: search          # relative to $HERMES_HOME, or absolute
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from hermes_hooks import (
    PluginContext,
    WebSearchProvider,
    active_home,
    html_to_text,
    load_web_section,
    search_failure,
    search_results,
    web_result,
)

SUFFIXES = (".md", ".markdown", ".txt", ".html", ".htm")
MAX_FILE_BYTES = 2_000_000
MAX_FILES = 5_000
_WORD = re.compile(r"[\w][\w'-]*", re.UNICODE)
_STOP = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "for",
        "from",
        "how",
        "in",
        "is",
        "it",
        "of",
        "on",
        "or",
        "the",
        "this",
        "to",
        "was",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "with",
        "search",
        "find",
        "look",
        "up",
        "about",
        "web",
        "me",
        "please",
    ]
)


def folder() -> Path:
    """Return the folder searched: ``web.offline.path`` (relative to the home), else ``search``."""
    home = active_home()
    configured = load_web_section("offline").get("path")
    path = Path(configured).expanduser() if isinstance(configured, str) and configured else None
    if path is None:
        return home / "search"
    return path if path.is_absolute() else home / path


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text) if len(w) > 1]


def _read(path: Path) -> tuple[str, str]:
    """Return ``(title, text)`` of a document."""
    raw = path.read_bytes()[:MAX_FILE_BYTES].decode("utf-8", errors="replace")
    if path.suffix.lower() in (".html", ".htm"):
        title, text = html_to_text(raw)
        return title or path.stem, text
    for line in raw.splitlines():
        if line.strip():
            heading = line.strip().lstrip("#").strip()
            return (heading if line.lstrip().startswith("#") else path.stem), raw
    return path.stem, raw


def _snippet(text: str, terms: set[str], width: int = 240) -> str:
    flat = " ".join(text.split())
    lower = flat.lower()
    starts = [lower.find(t) for t in terms if lower.find(t) >= 0]
    start = max(min(starts) - 60, 0) if starts else 0
    piece = flat[start : start + width]
    return ("…" if start else "") + piece + ("…" if start + width < len(flat) else "")


class OfflineWebSearchProvider(WebSearchProvider):
    """Searches a local folder of documents."""

    @property
    def name(self) -> str:
        return "offline"

    @property
    def display_name(self) -> str:
        return "Offline documents"

    def is_available(self) -> bool:
        return True

    def get_setup_schema(self) -> dict[str, Any]:
        return {
            "name": self.display_name,
            "badge": "offline · no key",
            "tag": "Searches .md, .txt and .html files in $HERMES_HOME/search/ (not the web).",
            "env_vars": [],
        }

    def search(self, query: str, limit: int = 5) -> dict[str, Any]:
        root = folder()
        if not root.is_dir():
            return search_failure(
                f"the offline search has no documents: put .md, .txt or .html files in "
                f"{root} (web.offline.path), or choose a web search provider with "
                f"'hermes tools web --provider NAME'"
            )
        terms = {w for w in _words(query) if w not in _STOP} or set(_words(query))
        if not terms:
            return search_results([])
        scored = []
        files = sorted(p for p in root.rglob("*") if p.suffix.lower() in SUFFIXES and p.is_file())
        for path in files[:MAX_FILES]:
            try:
                title, text = _read(path)
            except OSError:
                continue
            body, head = _words(text), _words(title)
            counts = {t: body.count(t) + 3 * head.count(t) for t in terms}
            matched = sum(1 for c in counts.values() if c)
            if matched:
                scored.append((-matched, -sum(counts.values()), str(path), title, text, path))
        scored.sort()
        rows = [
            web_result(title, path.resolve().as_uri(), _snippet(text, terms), position)
            for position, (_, _, _, title, text, path) in enumerate(scored[:limit], 1)
        ]
        return search_results(rows)


def register(ctx: PluginContext) -> None:
    ctx.register_web_search_provider(OfflineWebSearchProvider())
