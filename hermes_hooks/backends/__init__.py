"""Provider families on one mechanism (:mod:`hermes_hooks.backends.family`).

Internal: not part of the public API (docs/reference/api.md).
"""
