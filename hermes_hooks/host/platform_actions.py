"""The gateway's sink for ``ctx.platform_actions``: a plugin's action reaches the platform's
adapter while ``hermes gateway run`` runs.

:func:`install_sink` is called by the gateway runner on its loop. A verb names the platform;
the sink finds that platform's adapter (it must be connected) and calls the adapter's method
for the verb, the first one it has, in Hermes' names:

- ``add_reaction``: ``add_reaction(chat_id, message_id, emoji)``, else Telegram's
  ``_set_reaction(chat_id, message_id, emoji)``;
- ``set_thread_title``: ``set_thread_title(chat_id, thread_id, title)``, else Discord's
  ``rename_thread(thread_id, title)``, else Telegram's ``rename_dm_topic(chat_id,
  int(thread_id), title)``.

A coroutine method runs on the gateway's loop: from another thread the call waits for it
(at most :data:`DELIVERY_TIMEOUT` seconds); on the loop itself it is scheduled, and awaiting
the verb's result waits for it. The answers are Hermes': ``{"ok": True, "action": verb}``, or
``{"ok": False, "error": code, "detail"}`` with ``unknown_platform``,
``adapter_disconnected``, ``unsupported_platform_action``, ``action_failed``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import logging
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

from hermes_hooks.plugins.newer_ctx import ActionResult, extras

if TYPE_CHECKING:
    from hermes_hooks.plugins.manager import PluginManager

__all__ = ["DELIVERY_TIMEOUT", "install_sink"]

logger = logging.getLogger(__name__)

DELIVERY_TIMEOUT: Final = 10.0
"""Seconds a call from another thread waits for the adapter (Hermes' delivery bound)."""

_METHODS: Final[
    dict[str, tuple[tuple[str, Callable[[Mapping[str, str]], tuple[Any, ...]]], ...]]
] = {
    "add_reaction": (
        ("add_reaction", lambda a: (a["chat_id"], a["message_id"], a["emoji"])),
        ("_set_reaction", lambda a: (a["chat_id"], a["message_id"], a["emoji"])),
    ),
    "set_thread_title": (
        ("set_thread_title", lambda a: (a["chat_id"], a["thread_id"], a["title"])),
        ("rename_thread", lambda a: (a["thread_id"], a["title"])),
        ("rename_dm_topic", lambda a: (a["chat_id"], int(a["thread_id"]), a["title"])),
    ),
}


def _err(code: str, detail: str) -> dict[str, Any]:
    return {"ok": False, "error": code, "detail": detail}


def _settle(verb: str, value: object) -> dict[str, Any]:
    if value is False:
        return _err("action_failed", f"the adapter's {verb} said it failed")
    if isinstance(value, Mapping) and "ok" in value:
        return dict(value)
    return {"ok": True, "action": verb}


def install_sink(pm: PluginManager, adapters: Mapping[str, Any]) -> Callable[[], None]:
    """Serve ``pm``'s plugins' platform actions through ``adapters`` (by platform name), on
    the running loop; return the undo (the sink there before comes back)."""
    loop = asyncio.get_running_loop()
    loop_thread = threading.get_ident()
    table = extras(pm)
    previous = table.platform_action_sink

    def sink(plugin: str, verb: str, arguments: Mapping[str, Any]) -> Mapping[str, Any]:
        platform = str(arguments.get("platform", "")).strip().lower()
        adapter = adapters.get(platform)
        if adapter is None:
            known = ", ".join(sorted(adapters)) or "none"
            return _err("unknown_platform", f"no {platform!r} adapter runs (running: {known})")
        try:
            connected = bool(adapter.is_connected)
        except Exception:
            connected = False
        if not connected:
            return _err("adapter_disconnected", f"the {platform} adapter is not connected")
        found = [
            (method, order)
            for name, order in _METHODS.get(verb, ())
            if callable(method := getattr(adapter, name, None))
        ]
        if not found:
            return _err("unsupported_platform_action", f"{verb} is not implemented for {platform}")
        method, order = found[0]
        try:
            value = method(*order(arguments))
        except Exception as exc:
            return _err("action_failed", f"{type(exc).__name__}: {exc}"[:512])
        if not inspect.isawaitable(value):
            return _settle(verb, value)
        awaitable = value

        async def run() -> dict[str, Any]:
            try:
                return _settle(verb, await awaitable)
            except Exception as exc:
                return _err("action_failed", f"{type(exc).__name__}: {exc}"[:512])

        if threading.get_ident() == loop_thread:
            task = loop.create_task(run())
            return ActionResult({"ok": True, "scheduled": True}, pending=task)
        future = asyncio.run_coroutine_threadsafe(run(), loop)
        try:
            return future.result(timeout=DELIVERY_TIMEOUT)
        except concurrent.futures.TimeoutError:
            future.cancel()
            return _err("action_failed", f"{verb} did not finish within {DELIVERY_TIMEOUT:g} s")

    table.platform_action_sink = sink
    logger.debug("platform actions reach the gateway's adapters: %s", ", ".join(adapters))

    def undo() -> None:
        if table.platform_action_sink is sink:
            table.platform_action_sink = previous

    return undo
