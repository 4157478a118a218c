"""Browsers: the provider contract, the page the tools drive, its family and the tools.

A provider written for Hermes loads unchanged (``agent.browser_provider`` is served by the
compatibility layer); one written for hermes-hooks imports from ``hermes_hooks``::

    from hermes_hooks import BrowserPage, BrowserProvider

registers with ``ctx.register_browser_provider(MyProvider())`` and implements ``open_page``
so that the ``browser_*`` tools can drive its sessions. See ``docs/how-to/browser-provider.md``.
"""

from __future__ import annotations

from hermes_hooks.backends.browser.provider import BrowserPage, BrowserProvider
from hermes_hooks.backends.browser.registry import BROWSER

__all__ = ["BROWSER", "BrowserPage", "BrowserProvider"]
