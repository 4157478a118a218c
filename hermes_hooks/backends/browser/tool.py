"""The ``browser_*`` host tools: one session per task, driven through its provider's page.

The first ``browser_navigate`` of a task asks the provider chosen by ``browser.provider`` for
a session (``create_session(task_id)``) and for its page (``open_page(session)``); later
tools of the task act on that page, and ``browser_close`` closes it (``close_session``).
Sessions still open when the process ends get the provider's ``emergency_cleanup``.

Every call goes through :func:`~hermes_hooks.backends.calls.call_provider` (available first,
bounded by ``browser.timeout``, failures named). URLs are judged by the URL policy
(:mod:`~hermes_hooks.backends.web_search.urlsafety`): a private, loopback or link-local
address is refused before the page is asked to go there, and after every action the page's
own URL is judged again, so a redirect or a click that lands on one shows nothing of it.
"""

from __future__ import annotations

import atexit
import json
import logging
import threading
import weakref
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

import attrs

from hermes_hooks.backends.browser.provider import BrowserPage, BrowserProvider
from hermes_hooks.backends.browser.registry import BROWSER
from hermes_hooks.backends.calls import call_provider, read_timeout
from hermes_hooks.backends.family import FamilyError, ProviderRegistry
from hermes_hooks.backends.home import using_hermes_home
from hermes_hooks.backends.web_search.urlsafety import UrlPolicy, check_url
from hermes_hooks.errors import ConfigError
from hermes_hooks.plugins.config import config_path, load_config
from hermes_hooks.registries.base import HOST, Handle

if TYPE_CHECKING:
    from hermes_hooks.plugins.manager import PluginManager

__all__ = ["BROWSER_TOOL_SCHEMAS", "BrowserTools", "install_browser_tools"]

logger = logging.getLogger(__name__)

TOOLSET: Final = "browser"
MAX_SNAPSHOT_CHARS: Final = 15_000

_NOTHING: Final[dict[str, Any]] = {"type": "object", "properties": {}, "required": []}
BROWSER_TOOL_SCHEMAS: Final[list[dict[str, Any]]] = [
    {
        "name": "browser_navigate",
        "description": (
            "Navigate to a URL in the browser. Starts the session and loads the page; call it "
            "before the other browser tools. For reading a page, web_extract is faster; use "
            "the browser to interact (click, fill forms). Private and local network addresses "
            "are refused."
        ),
        "parameters": {
            "type": "object",
            "properties": {"url": {"type": "string", "description": "The URL to open."}},
            "required": ["url"],
        },
    },
    {
        "name": "browser_snapshot",
        "description": (
            "Get a text snapshot of the current page: its interactive elements with ref IDs "
            "(like @e1) for browser_click and browser_type. full=true adds all of the text."
        ),
        "parameters": {
            "type": "object",
            "properties": {"full": {"type": "boolean", "default": False}},
            "required": [],
        },
    },
    {
        "name": "browser_click",
        "description": "Click the element with a ref ID from the snapshot (e.g. '@e5').",
        "parameters": {
            "type": "object",
            "properties": {"ref": {"type": "string", "description": "The element's ref."}},
            "required": ["ref"],
        },
    },
    {
        "name": "browser_type",
        "description": "Clear the input field with a ref ID and type text into it.",
        "parameters": {
            "type": "object",
            "properties": {
                "ref": {"type": "string", "description": "The field's ref, e.g. '@e3'."},
                "text": {"type": "string", "description": "The text to type."},
            },
            "required": ["ref", "text"],
        },
    },
    {
        "name": "browser_scroll",
        "description": "Scroll the page up or down to reveal more of it.",
        "parameters": {
            "type": "object",
            "properties": {"direction": {"type": "string", "enum": ["up", "down"]}},
            "required": ["direction"],
        },
    },
    {
        "name": "browser_back",
        "description": "Go back to the previous page in the browser history.",
        "parameters": _NOTHING,
    },
    {
        "name": "browser_press",
        "description": "Press a key: Enter submits the form being typed in, Tab moves on.",
        "parameters": {
            "type": "object",
            "properties": {"key": {"type": "string", "description": "e.g. 'Enter', 'Tab'."}},
            "required": ["key"],
        },
    },
    {
        "name": "browser_get_images",
        "description": "List the images of the current page with their URLs and alt text.",
        "parameters": _NOTHING,
    },
    {
        "name": "browser_close",
        "description": "Close the browser session and release its resources.",
        "parameters": _NOTHING,
    },
]


def _failure(error: str, error_type: str, provider: str = "") -> dict[str, Any]:
    return {"success": False, "error": error, "error_type": error_type, "provider": provider}


@attrs.define
class _Session:
    provider: BrowserProvider
    metadata: dict[str, object]
    page: BrowserPage
    withheld: str | None = None
    """Why the page shown now may not be shown (it landed on a refused address)."""

    @property
    def session_id(self) -> str:
        return str(self.metadata.get("bb_session_id") or self.metadata.get("session_name") or "")


class _Refused(Exception):
    def __init__(self, answer: dict[str, Any]) -> None:
        super().__init__(answer.get("error"))
        self.answer = answer


class BrowserTools:
    """The state behind one manager's browser tools: a session per task."""

    def __init__(self, registry: ProviderRegistry[BrowserProvider]) -> None:
        self.registry = registry
        self._sessions: dict[str, _Session] = {}
        self._lock = threading.Lock()
        _LIVE.add(self)

    # -- plumbing -------------------------------------------------------------------------------

    def _settings(self) -> tuple[float, UrlPolicy]:
        home = self.registry.config_home()
        config = load_config(home)
        section = config.get("browser") or {}
        return read_timeout(BROWSER, section, config_path(home)), UrlPolicy.from_config(
            config, config_path(home)
        )

    def _call(
        self, provider: BrowserProvider, method: str, *args: Any, on: object | None = None
    ) -> Any:
        timeout, _ = self._settings()
        with using_hermes_home(self.registry.config_home()):
            return call_provider(
                BROWSER, provider, method, *args, timeout=timeout, registry=self.registry, on=on
            )

    def _session(self, task_id: str) -> _Session:
        with self._lock:
            found = self._sessions.get(task_id)
        if found is None:
            raise _Refused(
                _failure(
                    "no browser session for this task: call browser_navigate first",
                    "no_session",
                )
            )
        return found

    def _judge(self, session: _Session, answer: object, what: str) -> dict[str, Any]:
        """Check an action's answer and the page's URL; return the tool's answer."""
        name = session.provider.name
        if not isinstance(answer, dict):
            return _failure(
                f"browser provider {name!r}: the page's {what}() returned "
                f"{type(answer).__name__}, expected a dict with 'url' and 'title'",
                "provider_contract",
                name,
            )
        url = answer.get("url")
        url = url if isinstance(url, str) else _page_url(session.page)
        _, policy = self._settings()
        reason = check_url(url, policy) if url else None
        session.withheld = reason
        if reason is not None:
            return _failure(f"withheld: the page is now at {url}: {reason}", "url_blocked", name)
        return {"success": True, **answer, "url": url, "provider": name}

    # -- the tools ------------------------------------------------------------------------------

    def navigate(self, args: Mapping[str, Any], task_id: str) -> dict[str, Any]:
        url = args.get("url")
        if not isinstance(url, str) or not url.strip():
            return _failure("url is required: the page to open", "invalid_input")
        url = url.strip()
        try:
            _, policy = self._settings()
            reason = check_url(url, policy)
            if reason is not None:
                return _failure(reason, "url_blocked")
            with self._lock:
                session = self._sessions.get(task_id)
            if session is None:
                session = self._open(task_id)
            answer = self._call(session.provider, "navigate", url, on=session.page)
        except (_Refused, FamilyError, ConfigError) as exc:
            return self._answer_for(exc, task_id)
        return self._judge(session, answer, "navigate")

    def _open(self, task_id: str) -> _Session:
        provider = self.registry.select_provider()
        try:
            metadata = self._call(provider, "create_session", task_id)
        except FamilyError as exc:
            # no session is stored yet, so the answer names the provider here
            raise _Refused(_failure(str(exc), exc.error_type, provider.name)) from exc
        if not isinstance(metadata, dict):
            raise _Refused(
                _failure(
                    f"browser provider {provider.name!r}: create_session() returned "
                    f"{type(metadata).__name__}, expected the session dict",
                    "provider_contract",
                    provider.name,
                )
            )
        try:
            page = self._call(provider, "open_page", metadata)
        except FamilyError as exc:
            self._close_quietly(provider, metadata)
            raise _Refused(_failure(str(exc), exc.error_type, provider.name)) from exc
        if not isinstance(page, BrowserPage):
            self._close_quietly(provider, metadata)
            raise _Refused(
                _failure(
                    f"browser provider {provider.name!r}: open_page() returned "
                    f"{type(page).__name__}, expected a BrowserPage (from hermes_hooks)",
                    "provider_contract",
                    provider.name,
                )
            )
        session = _Session(provider, metadata, page)
        with self._lock:
            self._sessions[task_id] = session
        return session

    def _close_quietly(self, provider: BrowserProvider, metadata: Mapping[str, object]) -> None:
        session_id = str(metadata.get("bb_session_id") or metadata.get("session_name") or "")
        try:
            self._call(provider, "close_session", session_id)
        except FamilyError as exc:
            logger.warning("%s", exc)

    def _name(self, task_id: str) -> str:
        with self._lock:
            found = self._sessions.get(task_id)
        return found.provider.name if found is not None else ""

    def _answer_for(self, exc: Exception, task_id: str) -> dict[str, Any]:
        """The tool's answer when serving ``task_id`` raised ``exc``: a refusal's own answer, a
        provider's failure naming the provider, or the configuration that cannot be read."""
        if isinstance(exc, _Refused):
            return exc.answer
        if isinstance(exc, FamilyError):
            return _failure(str(exc), exc.error_type, self._name(task_id))
        return _failure(f"cannot read the configuration: {exc}", "config_error")

    def act(
        self, method: str, args: tuple[Any, ...], task_id: str, *, what: str | None = None
    ) -> dict[str, Any]:
        """Run one page action (click, type, scroll, back, press) and judge where it landed."""
        try:
            session = self._session(task_id)
            answer = self._call(session.provider, method, *args, on=session.page)
        except (_Refused, FamilyError, ConfigError) as exc:
            return self._answer_for(exc, task_id)
        return self._judge(session, answer, what or method)

    def snapshot(self, args: Mapping[str, Any], task_id: str) -> dict[str, Any]:
        full = args.get("full") is True
        try:
            session = self._session(task_id)
            if session.withheld is not None:
                return _failure(
                    f"withheld: {session.withheld}", "url_blocked", session.provider.name
                )
            text = self._call(session.provider, "snapshot", full, on=session.page)
        except (_Refused, FamilyError, ConfigError) as exc:
            return self._answer_for(exc, task_id)
        name = session.provider.name
        if not isinstance(text, str):
            return _failure(
                f"browser provider {name!r}: the page's snapshot() returned "
                f"{type(text).__name__}, expected a string",
                "provider_contract",
                name,
            )
        truncated = len(text) > MAX_SNAPSHOT_CHARS
        shown = text[:MAX_SNAPSHOT_CHARS] + ("\n[... snapshot cut ...]" if truncated else "")
        return {
            "success": True,
            "url": _page_url(session.page),
            "snapshot": shown,
            "element_count": text.count("[@e"),
            "truncated": truncated,
            "provider": name,
        }

    def get_images(self, args: Mapping[str, Any], task_id: str) -> dict[str, Any]:
        try:
            session = self._session(task_id)
            if session.withheld is not None:
                return _failure(
                    f"withheld: {session.withheld}", "url_blocked", session.provider.name
                )
            images = self._call(session.provider, "images", on=session.page)
        except (_Refused, FamilyError) as exc:
            return self._answer_for(exc, task_id)
        if not isinstance(images, list):
            name = session.provider.name
            return _failure(
                f"browser provider {name!r}: images() returned {type(images).__name__}, "
                f"expected a list",
                "provider_contract",
                name,
            )
        return {"success": True, "images": images, "provider": session.provider.name}

    def close(self, args: Mapping[str, Any], task_id: str) -> dict[str, Any]:
        with self._lock:
            session = self._sessions.pop(task_id, None)
        if session is None:
            return {"success": True, "closed": False, "note": "no browser session was open"}
        name = session.provider.name
        try:
            self._call(session.provider, "close", on=session.page)
        except FamilyError as exc:
            logger.warning("%s", exc)
        try:
            closed = self._call(session.provider, "close_session", session.session_id)
        except FamilyError as exc:
            return _failure(str(exc), exc.error_type, name)
        return {"success": True, "closed": bool(closed), "provider": name}

    def cleanup(self) -> None:
        """Tear down every open session (``emergency_cleanup``); for process exit."""
        with self._lock:
            sessions = list(self._sessions.values())
            self._sessions.clear()
        for session in sessions:
            try:
                session.provider.emergency_cleanup(session.session_id)
            except Exception:  # at exit: log and move on, as Hermes asks of providers
                logger.debug("emergency_cleanup of %r raised", session.provider, exc_info=True)


_LIVE: weakref.WeakSet[BrowserTools] = weakref.WeakSet()


@atexit.register
def _cleanup_all() -> None:
    for tools in list(_LIVE):
        tools.cleanup()


def _page_url(page: BrowserPage) -> str:
    try:
        url = page.url
    except Exception:
        return ""
    return url if isinstance(url, str) else ""


def _text(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""


def install_browser_tools(
    pm: PluginManager, registry: ProviderRegistry[BrowserProvider]
) -> list[Handle]:
    """Register the ``browser_*`` host tools of ``pm``, offered while a provider is."""
    tools = BrowserTools(registry)

    def has_provider() -> bool:
        """Offered while a browser provider is registered (a browser plugin)."""
        return registry.has_providers()

    def missing(field: str) -> dict[str, Any]:
        return _failure(f"{field} is required", "invalid_input")

    runs: dict[str, Callable[[Mapping[str, Any], str], dict[str, Any]]] = {
        "browser_navigate": tools.navigate,
        "browser_snapshot": tools.snapshot,
        "browser_click": lambda a, t: (
            tools.act("click", (_text(a.get("ref")),), t) if _text(a.get("ref")) else missing("ref")
        ),
        "browser_type": lambda a, t: (
            tools.act("type", (_text(a.get("ref")), str(a.get("text") or "")), t)
            if _text(a.get("ref"))
            else missing("ref")
        ),
        "browser_scroll": lambda a, t: tools.act(
            "scroll", ("up" if a.get("direction") == "up" else "down",), t
        ),
        "browser_back": lambda a, t: tools.act("back", (), t),
        "browser_press": lambda a, t: (
            tools.act("press", (_text(a.get("key")),), t) if _text(a.get("key")) else missing("key")
        ),
        "browser_get_images": tools.get_images,
        "browser_close": tools.close,
    }
    handles = []
    for schema in BROWSER_TOOL_SCHEMAS:
        run = runs[schema["name"]]

        def handler(
            args: Mapping[str, Any],
            _run: Callable[[Mapping[str, Any], str], dict[str, Any]] = run,
            **kwargs: Any,
        ) -> str:
            task_id = str(kwargs.get("task_id") or "default")
            return json.dumps(_run(args, task_id), ensure_ascii=False, default=str)

        handles.append(
            pm.tools.register_tool(
                schema["name"],
                TOOLSET,
                schema,
                handler,
                check_fn=has_provider,
                emoji="🌐",
                owner=HOST,
            )
        )
    return handles
