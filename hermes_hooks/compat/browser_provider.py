"""Hermes' ``agent.browser_provider``: the browser provider ABC.

``BrowserProvider`` is the browser family's ABC, so a provider written for Hermes registers with
``ctx.register_browser_provider`` unchanged; to be driven by the ``browser_*`` tools it also
needs ``open_page()`` (hermes-hooks ships no DevTools driver: see the reference).
"""

from __future__ import annotations

from hermes_hooks.backends.browser.provider import BrowserProvider

__all__ = ["BrowserProvider"]
