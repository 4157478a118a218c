"""A plugin's life: manifest, discovery, trust, config, loading, the manager, ``PluginContext``.

Internal: not part of the public API (docs/reference/api.md).
"""
