"""HTML to text for the model: Markdown, with headings, lists, links and tables kept.

`markdownify <https://pypi.org/project/markdownify/>`_ (on Beautiful Soup) writes the
Markdown; before that, what a reader never sees is dropped (scripts, styles, templates,
forms' hidden inputs, ``<nav>``, ``<footer>``, ``<aside>``), and a page's ``<main>`` or
``<article>`` is preferred to its whole ``<body>`` when it has one. Both libraries are
imported on the first call only.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["html_to_text", "page_title"]

_DROP: Final = (
    "script",
    "style",
    "noscript",
    "template",
    "svg",
    "canvas",
    "iframe",
    "nav",
    "footer",
    "aside",
    "head",
)
_BLANKS: Final = re.compile(r"\n{3,}")
_SPACES: Final = re.compile(r"[ \t]+\n")


def page_title(html: str) -> str:
    """Return the page's ``<title>`` (or first ``<h1>``), whitespace folded; ``""`` when none."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    for tag in (soup.title, soup.find("h1")):
        if tag is not None:
            text = " ".join(tag.get_text(" ").split())
            if text:
                return text
    return ""


def html_to_text(html: str) -> tuple[str, str]:
    """Return ``(title, markdown)`` for an HTML page (see the module's docstring)."""
    from bs4 import BeautifulSoup
    from markdownify import MarkdownConverter

    soup = BeautifulSoup(html, "html.parser")
    title = ""
    for tag in (soup.title, soup.find("h1")):
        if tag is not None and " ".join(tag.get_text(" ").split()):
            title = " ".join(tag.get_text(" ").split())
            break
    for name in _DROP:
        for tag in soup.find_all(name):
            tag.decompose()
    for tag in soup.find_all("input", attrs={"type": "hidden"}):
        tag.decompose()
    root = soup.find("main") or soup.find("article") or soup.body or soup
    markdown = MarkdownConverter(heading_style="ATX", bullets="-").convert_soup(root)
    markdown = _SPACES.sub("\n", markdown)
    return title, _BLANKS.sub("\n\n", markdown).strip()
