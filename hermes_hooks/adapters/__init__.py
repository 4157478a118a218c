"""The plugins inside other agents' SDKs: :mod:`~hermes_hooks.adapters.openai_agents`.

Each adapter needs its SDK (an extra: ``pip install 'hermes-hooks[openai-agents]'``); importing
this package imports none of them.

Public: :mod:`~hermes_hooks.adapters.openai_agents` (docs/reference/api.md).
"""
