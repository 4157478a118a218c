"""Bridges to other agents' protocols: MCP both ways, and Claude Code's hooks.

- :mod:`~hermes_hooks.bridges.mcp_config` reads ``mcp_servers:`` as Hermes does, and names MCP
  tools as Hermes names them (``mcp_<server>_<tool>``);
- :mod:`~hermes_hooks.bridges.mcp_client` connects to those servers (the ``mcp`` extra) and
  turns their tools into tools of ``pm.tools``, so every hook and the tool gate apply;
- :mod:`~hermes_hooks.bridges.mcp_server` publishes the plugins' and the host's tools to any MCP
  client (``hermes mcp serve``), each call through the same hooks;
- :mod:`~hermes_hooks.bridges.claude_code` answers Claude Code's hook events with the enabled
  plugins' hooks (``hermes claude-hook``).

Importing this package imports none of them; the ``mcp`` SDK is imported on first use only.

Internal: not part of the public API (docs/reference/api.md).
"""
