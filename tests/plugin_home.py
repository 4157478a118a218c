"""The :class:`PluginHome` helpers, now in :mod:`plugin_builders`; kept for the modules that
still import them from here."""

from plugin_builders import PluginHome, info, make_home

__all__ = ["PluginHome", "info", "make_home"]
