"""Hermes' ``cron.executions``: the ledger of cron runs under the current home."""

from __future__ import annotations

from hermes_hooks.backends.cron.executions import (
    create_execution,
    finish_execution,
    get_execution,
    list_executions,
    recover_interrupted_executions,
)

__all__ = [
    "create_execution",
    "finish_execution",
    "get_execution",
    "list_executions",
    "recover_interrupted_executions",
]
