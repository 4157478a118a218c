"""The browser family: ``browser.provider`` chooses who serves the ``browser_*`` tools.

Hermes' own key, ``browser.cloud_provider``, is read when ``browser.provider`` is unset. No
provider is bundled: with none registered the tools are not offered; with one available it
serves; with several, ``browser.provider`` must say which. ``browser.timeout`` (60 s by default)
bounds each call of the provider and of its pages.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from hermes_hooks.backends.browser.provider import BrowserProvider
from hermes_hooks.backends.family import Family, ProviderRegistry, Selection

if TYPE_CHECKING:
    from hermes_hooks.plugins.manager import PluginManager

__all__ = ["BROWSER"]


def _install_tools(manager: PluginManager, registry: ProviderRegistry[BrowserProvider]) -> None:
    from hermes_hooks.backends.browser.tool import install_browser_tools

    install_browser_tools(manager, registry)


BROWSER: Final[Family[BrowserProvider]] = Family(
    name="browser",
    title="browser",
    provider_type=BrowserProvider,
    selections=(Selection("browser.provider", fallback="browser.cloud_provider"),),
    cli_name="browser",
    cli_examples=("--provider NAME", "--json"),
    ctx_method="register_browser_provider",
    provider_kind="browser provider",
    install_tools=_install_tools,
    tool_names=(
        "browser_navigate",
        "browser_snapshot",
        "browser_click",
        "browser_type",
        "browser_scroll",
        "browser_back",
        "browser_press",
        "browser_get_images",
        "browser_close",
    ),
    none_registered_hint="; none is bundled: install a browser plugin",
    categories=("browser",),
    manifest_field="provides_browser_providers",
    timeout_key="browser.timeout",
    default_timeout=60.0,
)
"""The browser family."""
