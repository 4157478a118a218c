"""command-guard: a pluggy-native policy plugin for the ``terminal`` tool.

Destructive commands (``rm -rf /``, ``mkfs``, writing to a raw disk, a fork bomb) are blocked;
risky ones (force pushes, ``sudo``, piping a download into a shell) need the person's approval.
Extra patterns come from ``plugins.entries.command-guard.settings.block`` / ``.approve``.
"""

from __future__ import annotations

import re
from typing import Any

from hermes_hooks import hookimpl

from .rules import APPROVE, BLOCK, Rule, compile_rules

_extra_block: list[Rule] = []
_extra_approve: list[Rule] = []


def register(ctx: Any) -> None:
    """Read extra patterns from the plugin's settings."""
    _extra_block[:] = compile_rules(ctx.get_config("block", []), "settings.block")
    _extra_approve[:] = compile_rules(ctx.get_config("approve", []), "settings.approve")


def _first_match(rules: list[Rule], command: str) -> Rule | None:
    return next((rule for rule in rules if rule.pattern.search(command)), None)


@hookimpl(tryfirst=True)
def pre_tool_call(tool_name: str, args: dict[str, Any]) -> dict[str, Any] | None:
    """Block or ask for approval of a ``terminal`` command that matches a rule."""
    if tool_name != "terminal" or not isinstance(args, dict):
        return None
    command = re.sub(r"\s+", " ", str(args.get("command", ""))).strip()
    rule = _first_match([*BLOCK, *_extra_block], command)
    if rule is not None:
        return {"action": "block", "message": f"command-guard: {rule.reason}"}
    rule = _first_match([*APPROVE, *_extra_approve], command)
    if rule is not None:
        return {
            "action": "approve",
            "message": f"command-guard: {rule.reason}",
            "rule_key": f"command-guard:{rule.key}",
        }
    return None
