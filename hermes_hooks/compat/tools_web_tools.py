"""Hermes' ``tools.web_tools``, the part the bundled web providers reach into.

The web providers (``web/exa``, ``web/firecrawl``, ``web/parallel``) keep their SDK clients on
this module (``_exa_client``, ``_firecrawl_client``...) and look the gateway helpers up here,
so tests can replace them in one place; both are served. ``Firecrawl`` is the Firecrawl
plugin's own lazy SDK proxy, re-exported while that plugin is loaded, as Hermes re-exports it.
The ``web_search`` and ``web_extract`` tools themselves are the host's (``hermes_hooks.host``),
not functions of this module.
"""

from __future__ import annotations

import importlib
from typing import Any

from hermes_hooks.compat.tools_managed_tool_gateway import (
    build_vendor_gateway_url,
    peek_nous_access_token as _peek_nous_access_token,
    read_nous_access_token as _read_nous_access_token,
    resolve_managed_tool_gateway,
)
from hermes_hooks.compat.tools_tool_backend_helpers import (
    managed_nous_tools_enabled,
    nous_tool_gateway_unavailable_message,
    prefers_gateway,
)

__all__ = [
    "build_vendor_gateway_url",
    "managed_nous_tools_enabled",
    "nous_tool_gateway_unavailable_message",
    "prefers_gateway",
    "resolve_managed_tool_gateway",
]

_firecrawl_client: Any = None
_firecrawl_client_config: Any = None
_parallel_client: Any = None
_async_parallel_client: Any = None
_exa_client: Any = None
_PRIVATE = (_peek_nous_access_token, _read_nous_access_token)  # served under Hermes' names


def __getattr__(name: str) -> Any:
    if name == "Firecrawl":  # the loaded firecrawl plugin's proxy, as Hermes re-exports it
        try:
            return importlib.import_module("plugins.web.firecrawl.provider").Firecrawl
        except ImportError as exc:
            raise AttributeError(
                "tools.web_tools.Firecrawl needs the web/firecrawl plugin loaded"
            ) from exc
    raise AttributeError(f"module 'tools.web_tools' has no attribute {name!r}")
