"""Plugins shipped with hermes-hooks, and the namespace directory plugins are imported under.

Each sub-folder with a ``plugin.yaml`` is a plugin, found by the same discovery as any other.
Directory plugins from every source are imported as ``hermes_plugins.<slug>``.
"""
