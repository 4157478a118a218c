"""The dashboard's HTML: the page shell and the messages shown instead of it.

No page carries a token or secret: the shell loads its data from the API with the browser's
cookies.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fastapi.responses import HTMLResponse

__all__ = ["STATIC", "index_page", "login_page", "message_page"]

STATIC = Path(__file__).resolve().parent / "static"


def _page(title: str, body: str, scripts: tuple[str, ...] = ()) -> str:
    tags = "".join(f'<script src="/static/{name}" defer></script>' for name in scripts)
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(title)}</title>"
        '<link rel="stylesheet" href="/static/style.css">'
        f"{tags}</head><body>{body}</body></html>"
    )


def index_page() -> HTMLResponse:
    """The dashboard's shell: navigation, the page area, the scripts."""
    from fastapi.responses import HTMLResponse

    body = (
        '<header><h1>Hermes dashboard</h1><nav id="nav"></nav>'
        '<span id="who"></span></header><main id="main">Loading…</main>'
    )
    return HTMLResponse(_page("Hermes dashboard", body, ("sdk.js", "app.js")))


def login_page() -> HTMLResponse:
    """The login page: one form per password provider, one button per OAuth provider."""
    from fastapi.responses import HTMLResponse

    body = (
        "<header><h1>Hermes dashboard</h1></header>"
        '<main id="login"><h2>Log in</h2><div id="providers">Loading…</div>'
        '<p id="login-error" role="alert"></p></main>'
    )
    return HTMLResponse(_page("Log in: Hermes dashboard", body, ("login.js",)))


def message_page(status: int, message: str) -> HTMLResponse:
    """A plain page saying why the dashboard is not shown."""
    from fastapi.responses import HTMLResponse

    body = (
        "<header><h1>Hermes dashboard</h1></header>"
        f'<main><p class="message">{html.escape(message)}</p></main>'
    )
    return HTMLResponse(_page("Hermes dashboard", body), status_code=status)
