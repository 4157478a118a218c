"""The built-in rules of command-guard, and the compiler for rules from settings."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Rule:
    """A pattern, a stable key for approvals remembered per rule, and the reason shown."""

    key: str
    pattern: re.Pattern[str]
    reason: str


def _rule(key: str, pattern: str, reason: str) -> Rule:
    return Rule(key, re.compile(pattern), reason)


BLOCK: list[Rule] = [
    _rule(
        "rm-root",
        r"\brm\s+(-[a-zA-Z]*[rR][a-zA-Z]*\s+)+(--no-preserve-root\s+)?(/|/\*|~|\$HOME)(\s|$)",
        "recursive delete of the root or home folder",
    ),
    _rule("mkfs", r"\bmkfs(\.\w+)?\b", "formatting a file system"),
    _rule("raw-disk", r"\bdd\b.*\bof=/dev/(sd|nvme|hd|vd|mmcblk)", "writing to a raw disk"),
    _rule("fork-bomb", r":\(\)\s*\{\s*:\|:&\s*\};:", "fork bomb"),
    _rule("chmod-root", r"\bchmod\s+(-R\s+)?[0-7]*777\s+/(\s|$)", "making / world-writable"),
]

APPROVE: list[Rule] = [
    _rule("force-push", r"\bgit\s+push\b.*(--force\b|-f\b)", "force push rewrites shared history"),
    _rule("sudo", r"(^|[;&|]\s*)sudo\b", "runs with root rights"),
    _rule(
        "pipe-shell", r"\b(curl|wget)\b[^|]*\|\s*(sudo\s+)?(ba|z)?sh\b", "runs a downloaded script"
    ),
    _rule("rm-recursive", r"\brm\s+-[a-zA-Z]*[rR]", "recursive delete"),
]


def compile_rules(patterns: Any, where: str) -> list[Rule]:
    """Compile user patterns from settings; a bad pattern is an error naming where it is."""
    if not isinstance(patterns, list):
        raise TypeError(f"command-guard {where}: expected a list of regular expressions")
    rules = []
    for i, pattern in enumerate(patterns):
        try:
            rules.append(Rule(f"custom-{i}", re.compile(str(pattern)), f"matches {pattern!r}"))
        except re.error as exc:
            raise ValueError(
                f"command-guard {where}[{i}]: invalid pattern {pattern!r}: {exc}"
            ) from exc
    return rules
