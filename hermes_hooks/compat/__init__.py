"""Hermes' plugin-facing modules, served by their Hermes names: the compatibility layer.

A plugin written for Hermes imports ``agent.image_gen_provider``, ``tools.registry``,
``hermes_constants``, ``hermes_cli.config``, ``utils``, and itself as ``plugins.<key>``. None
of those exist in this package; the import finder of :mod:`hermes_hooks.compat.finder`,
installed by the first manager that discovers plugins (through the plugin layer's extension
point), serves them from the modules listed in :mod:`hermes_hooks.compat.surface`, backed by
this project's own implementation. A real module of the same name always wins. See
``docs/reference/compat.md`` and ``docs/explanation/compat-finder.md``.

Importing this package does nothing.

Internal: not part of the public API (docs/reference/api.md).
"""
