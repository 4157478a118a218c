"""The hook contract: typed hookspecs, each hook's contract, the decision types and combine rules.

The ground floor of the framework: imports nothing of hermes_hooks but :mod:`hermes_hooks.errors`.

Internal: not part of the public API (docs/reference/api.md).
"""
