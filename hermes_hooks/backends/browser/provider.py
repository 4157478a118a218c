"""The ``BrowserProvider`` ABC, and ``BrowserPage``: what the browser tools drive.

Faithful to Hermes' ``agent/browser_provider.py``: a provider gives browser *sessions*
(``create_session(task_id)`` returns Hermes' session metadata: ``session_name``,
``bb_session_id``, ``cdp_url``, ``features`` ...), closes them (``close_session``) and tears
them down at exit (``emergency_cleanup``). Hermes then drives a session's Chrome DevTools
endpoint with its ``agent-browser`` command; hermes-hooks ships no such driver, so the browser
tools drive a session through the page its provider opens for it: :meth:`BrowserProvider.open_page`
returns a :class:`BrowserPage` (navigate, snapshot, click, type, scroll, back, press, images).

A provider written for Hermes (sessions only) loads and is called: ``browser_navigate``
creates its session and then says that the provider has no ``open_page()``; one written for
hermes-hooks implements ``open_page`` (a remote browser service's REST API, a local
automation library, or a plain HTTP reader like the how-to's).
"""

from __future__ import annotations

import abc
from typing import Any

__all__ = ["BrowserPage", "BrowserProvider"]


class BrowserPage(abc.ABC):
    """One open page of a browser session, as the browser tools drive it.

    Every action returns a dict with at least ``url`` (where the page is now) and ``title``;
    the tools judge that URL by the URL policy before showing anything of the page. Element
    references (``@e1``) are the ones :meth:`snapshot` printed.
    """

    @property
    @abc.abstractmethod
    def url(self) -> str:
        """The URL of the page shown now (``""`` before the first navigation)."""

    @abc.abstractmethod
    def navigate(self, url: str) -> dict[str, Any]:
        """Load ``url``; return ``{"url", "title", ...}``."""

    @abc.abstractmethod
    def snapshot(self, full: bool = False) -> str:
        """Return the page as text: its interactive elements with refs (``[@e1] link ...``);
        with ``full``, all of its text as well."""

    @abc.abstractmethod
    def click(self, ref: str) -> dict[str, Any]:
        """Click element ``ref``; return ``{"url", "title", ...}``."""

    @abc.abstractmethod
    def type(self, ref: str, text: str) -> dict[str, Any]:
        """Clear field ``ref`` and type ``text`` into it; return ``{"url", "title", ...}``."""

    def scroll(self, direction: str) -> dict[str, Any]:
        """Scroll ``up`` or ``down``; return ``{"url", "title", ...}``."""
        raise NotImplementedError("this browser page cannot scroll")

    def back(self) -> dict[str, Any]:
        """Go back in the history; return ``{"url", "title", ...}``."""
        raise NotImplementedError("this browser page has no history")

    def press(self, key: str) -> dict[str, Any]:
        """Press ``key`` (``Enter`` submits the form being typed in); return the page."""
        raise NotImplementedError("this browser page cannot press keys")

    def images(self) -> list[dict[str, Any]]:
        """Return the page's images: ``{"src", "alt"}`` each."""
        return []

    def close(self) -> None:  # noqa: B027 - optional: nothing to release by default
        """Release what the page holds (the session itself is closed by its provider)."""


class BrowserProvider(abc.ABC):
    """A browser backend behind the ``browser_*`` tools (see the module's docstring).

    Subclasses implement :attr:`name`, :meth:`is_available`, :meth:`create_session`,
    :meth:`close_session` and :meth:`emergency_cleanup`, as in Hermes, and
    :meth:`open_page` for the tools to drive the session. Register an instance with
    ``ctx.register_browser_provider(provider)``.
    """

    @property
    @abc.abstractmethod
    def name(self) -> str:
        """Stable identifier used in ``browser.provider``: lower case, hyphens allowed."""

    @property
    def display_name(self) -> str:
        """Human-readable label shown by ``hermes tools browser``; ``name`` by default."""
        return self.name

    @abc.abstractmethod
    def is_available(self) -> bool:
        """Return whether it can serve calls now; cheap, never the network."""

    @abc.abstractmethod
    def create_session(self, task_id: str) -> dict[str, object]:
        """Create a session for ``task_id``; return its metadata (``session_name``,
        ``bb_session_id``, ``cdp_url``, optionally ``live_url``, ``expires_at``, ``features``).

        May raise ``ValueError`` (missing credentials) or ``RuntimeError`` (the API failed);
        the tool reports it, naming the provider.
        """

    @abc.abstractmethod
    def close_session(self, session_id: str) -> bool:
        """Release session ``session_id``; ``True`` on success. Should not raise."""

    @abc.abstractmethod
    def emergency_cleanup(self, session_id: str) -> None:
        """Best-effort teardown at process exit. Must not raise."""

    def open_page(self, session: dict[str, object]) -> BrowserPage:
        """Return the page the tools drive for ``session`` (what :meth:`create_session` gave).

        hermes-hooks' addition to Hermes' contract; the default has no driver and says so.
        """
        endpoint = session.get("cdp_url") if isinstance(session, dict) else None
        where = f" (its session offers a DevTools endpoint, {endpoint!r})" if endpoint else ""
        raise NotImplementedError(
            f"browser provider {self.name!r} has no open_page(){where}: hermes-hooks drives "
            f"a session through the page its provider opens, and ships no DevTools driver; "
            f"implement open_page() to return a BrowserPage (from hermes_hooks)"
        )

    def get_setup_schema(self) -> dict[str, Any]:
        """Return picker metadata: ``name``, ``badge``, ``tag`` and the ``env_vars`` to ask for."""
        return {"name": self.display_name, "badge": "", "tag": "", "env_vars": []}

    def is_configured(self) -> bool:
        """Hermes' older name of :meth:`is_available`."""
        return self.is_available()

    def provider_name(self) -> str:
        """Hermes' older name of :attr:`display_name`."""
        return self.display_name

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"
