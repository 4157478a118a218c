"""The combine rules of the hooks (docs/reference/hooks.md), as pure functions over what the
implementations returned.

The typed facade (:class:`hermes_hooks.calling.facade.Hooks`) calls pluggy and hands the results to
these functions; keeping them pure means a faster way of calling the implementations can
reuse them unchanged, and tests can check them without a plugin manager.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any, Final, Literal

import attrs

from hermes_hooks.spec.contract import (
    TRANSCRIPTION_FIELDS,
    is_context,
    is_error_classification,
    is_gateway_decision,
    is_tool_decision,
    is_transcription_override,
    is_verify_decision,
)

__all__ = [
    "ALLOW",
    "GATEWAY_ALLOW",
    "UNATTRIBUTED",
    "ErrorClassification",
    "GatewayDecision",
    "ModifyConflict",
    "Tampering",
    "ToolDecision",
    "VerifyDecision",
    "combine_tool_decisions",
    "error_classification",
    "gateway_decision",
    "join_context",
    "transcription_overrides",
    "verify_decision",
]

UNATTRIBUTED: Final = "<hook wrapper>"
"""The owner given to a result that no implementation returned itself (a wrapper added it)."""

ToolAction = Literal["allow", "block", "approve"]
GatewayAction = Literal["allow", "skip", "rewrite"]


@attrs.frozen
class ModifyConflict:
    """Two or more ``modify`` results set one argument to different values.

    :param key: the argument.
    :param winner: the plugin whose value was kept (the one that ran first).
    :param losers: the plugins whose different values were dropped, in the order they ran.
    """

    key: str
    winner: str
    losers: tuple[str, ...]

    def describe(self) -> str:
        """Return a one-line account: which plugin's value won over which."""
        dropped = ", ".join(repr(name) for name in self.losers)
        return f"argument {self.key!r}: kept {self.winner!r}'s value, dropped {dropped}"


@attrs.frozen
class Tampering:
    """An implementation that tried to change the gate's outcome other than by a decision.

    It changed the arguments in place (``pre_tool_call``'s ``args``), or a wrapper removed or
    replaced another plugin's results; the change was undone, and counted nothing.

    :param plugin: the plugin that did it.
    :param what: what it did, for people.
    :param victims: the plugins whose results it removed or replaced (none for ``args``).
    """

    plugin: str
    what: str
    victims: tuple[str, ...] = ()

    def describe(self) -> str:
        """Return a one-line account naming the plugin, what it did, and that it was undone."""
        return f"plugin {self.plugin!r} {self.what}; undone, it changes nothing"


@attrs.frozen(slots=False)  # slots=False: ToolDecision.allow fills one dict
class ToolDecision:
    """The one decision the ``pre_tool_call`` results combine into.

    :param action: ``"allow"`` (run the tool), ``"block"`` (do not run it; ``message`` becomes
        the tool result) or ``"approve"`` (ask a person first).
    :param message: the block or approval message of the deciding plugin.
    :param rule_key: the deciding ``approve`` result's ``rule_key``, if it gave one.
    :param args: the arguments the tool runs with: the original ones with every ``modify``
        merged over them.
    :param conflicts: arguments that ``modify`` results disagreed on.
    :param plugin: the plugin whose block or approve decided, ``None`` for ``allow``.
    :param modified_by: the plugins whose ``modify`` results were merged, in the order they ran.
    :param tampering: what implementations tried besides deciding (arguments changed in place,
        a wrapper removing another's results); each was undone and counts nothing.
    """

    action: ToolAction = "allow"
    message: str | None = None
    rule_key: str | None = None
    args: Mapping[str, Any] = attrs.field(factory=dict)
    conflicts: tuple[ModifyConflict, ...] = ()
    plugin: str | None = None
    modified_by: tuple[str, ...] = ()
    tampering: tuple[Tampering, ...] = ()

    @classmethod
    def allow(cls, args: Mapping[str, Any], *, owned: bool = False) -> ToolDecision:
        """Return :data:`ALLOW` for this call: its fields, with a copy of ``args``.

        :param owned: ``args`` is a dict no one else holds (the gate's snapshot): kept, not copied.
        """
        if cls is not ToolDecision:
            return cls(args=dict(args))
        decision: ToolDecision = _new_object(cls)
        fields = decision.__dict__  # attrs' __init__ sets each field through a frozen setattr
        fields.update(_ALLOW_FIELDS)
        fields["args"] = args if owned and type(args) is dict else dict(args)
        return decision

    @property
    def is_blocked(self) -> bool:
        """Whether the call must not run."""
        return self.action == "block"

    @property
    def needs_approval(self) -> bool:
        """Whether a person must approve the call before it runs."""
        return self.action == "approve"


ALLOW: Final = ToolDecision(args=MappingProxyType({}))
"""What every call no plugin objects to answers, but for its ``args``: shared, frozen."""

_new_object = object.__new__
_ALLOW_FIELDS: Final = dict(vars(ALLOW))


@attrs.frozen
class GatewayDecision:
    """What ``pre_gateway_dispatch`` decided for one inbound message.

    :param action: ``"allow"`` (dispatch as is), ``"skip"`` (drop it) or ``"rewrite"``.
    :param reason: why it was skipped, for ``skip``.
    :param text: the replacement text, for ``rewrite``.
    """

    action: GatewayAction = "allow"
    reason: str | None = None
    text: str | None = None


GATEWAY_ALLOW: Final = GatewayDecision()
"""The one ``allow`` answer of ``pre_gateway_dispatch``: frozen, so every call shares it."""


@attrs.frozen
class VerifyDecision:
    """A ``pre_verify`` result that sends the agent back to work.

    :param message: the text given to the agent as a new user message.
    :param form: ``"continue"`` (``{"action": "continue"}``) or ``"block"`` (the Claude Code
        Stop form ``{"decision": "block"}``).
    """

    message: str
    form: Literal["continue", "block"] = "continue"


def _same(a: object, b: object) -> bool:
    try:
        return a is b or bool(a == b)
    except Exception:  # a value whose == raises counts as different
        return False


def combine_tool_decisions(
    args: Mapping[str, Any],
    results: Iterable[tuple[str, object]],
    tampering: tuple[Tampering, ...] = (),
    *,
    owned: bool = False,
) -> ToolDecision:
    """Combine ``pre_tool_call`` results: block > approve > modify, whatever the order.

    :param args: the arguments the model asked for.
    :param results: ``(plugin key, returned value)`` in the order the implementations ran;
        values that are not a decision (``None``, or what a wrapper slipped in) are skipped.
    :param tampering: what was undone during the call, kept on the decision.
    :param owned: ``args`` is a dict no one else holds, which an ``allow`` decision keeps.
    :returns: the first block if any, else the first approve, else ``allow``; ``args`` has
        every ``modify`` merged key by key, the plugin that ran first winning a key.
    """
    decisions: list[tuple[str, Any]] = [(o, v) for o, v in results if is_tool_decision(v)]
    if not decisions:  # every plugin let the call through: the common case, kept cheap
        decision = ToolDecision.allow(args, owned=owned)
        return attrs.evolve(decision, tampering=tampering) if tampering else decision
    merged, conflicts, modified_by = _merge_modifies(args, decisions)
    common: dict[str, Any] = {
        "args": merged,
        "conflicts": conflicts,
        "modified_by": modified_by,
        "tampering": tampering,
    }
    for owner, value in decisions:  # the first block in run order decides
        if value.get("action") in (None, "block"):
            text = value.get("message") if value.get("action") == "block" else value.get("reason")
            message = text if isinstance(text, str) and text else f"blocked by plugin {owner!r}"
            return ToolDecision(action="block", message=message, plugin=owner, **common)
    for owner, value in decisions:  # else the first approve
        if value.get("action") == "approve":
            text, rule_key = value.get("message"), value.get("rule_key")
            return ToolDecision(
                action="approve",
                message=text if isinstance(text, str) and text else f"plugin {owner!r} asks",
                rule_key=rule_key if isinstance(rule_key, str) and rule_key else None,
                plugin=owner,
                **common,
            )
    return ToolDecision(**common)


def _merge_modifies(
    args: Mapping[str, Any], decisions: list[tuple[str, Any]]
) -> tuple[dict[str, Any], tuple[ModifyConflict, ...], tuple[str, ...]]:
    """Merge the ``modify`` decisions over ``args``, the one that ran first winning a key."""
    merged = dict(args)
    set_by: dict[str, tuple[str, object]] = {}
    losers: dict[str, list[str]] = {}
    modified_by: list[str] = []
    for owner, value in decisions:
        if value.get("action") in (None, "block", "approve"):
            continue
        modified_by.append(owner)
        for key, new in value["args"].items():
            first = set_by.get(key)
            if first is None:
                set_by[key] = (owner, new)
                merged[key] = new
            elif not _same(first[1], new):
                losers.setdefault(key, []).append(owner)
    conflicts = tuple(
        ModifyConflict(key=key, winner=set_by[key][0], losers=tuple(names))
        for key, names in losers.items()
    )
    return merged, conflicts, tuple(modified_by)


def join_context(results: Iterable[object]) -> str | None:
    """Join ``pre_llm_call`` results (``str`` or ``{"context": str}``) with blank lines.

    :returns: the joined text, or ``None`` when no result gave any.
    """
    parts: list[str] = []
    for value in results:
        if not is_context(value):
            continue
        text = value if isinstance(value, str) else value["context"]  # type: ignore[index]
        if text:
            parts.append(text)
    return "\n\n".join(parts) if parts else None


def gateway_decision(value: object) -> GatewayDecision:
    """Turn the first ``pre_gateway_dispatch`` result into a decision (``None`` → allow)."""
    if not is_gateway_decision(value):
        return GATEWAY_ALLOW
    assert isinstance(value, Mapping)
    action = value["action"]
    if action == "skip":
        reason = value.get("reason")
        return GatewayDecision(action="skip", reason=reason if reason else "skipped by a plugin")
    if action == "rewrite":
        return GatewayDecision(action="rewrite", text=value["text"])
    return GATEWAY_ALLOW


def verify_decision(value: object) -> VerifyDecision | None:
    """Turn the first ``pre_verify`` result into a decision, or ``None`` to finish the turn."""
    if not is_verify_decision(value):
        return None
    assert isinstance(value, Mapping)
    if value.get("action") == "continue":
        message = value.get("message")
        return VerifyDecision(message=message or "Keep going: the work is not done yet.")
    reason = value.get("reason")
    return VerifyDecision(message=reason or "Keep going: the work is not done yet.", form="block")


@attrs.frozen
class ErrorClassification:
    """A plugin's classification of a failed model request (``transform_api_error_classification``).

    :param reason: a FailoverReason name (``rate_limit``, ``context_overflow``, ``auth``...).
    :param retryable: whether trying again may succeed; ``None`` leaves it to the host.
    :param should_compress: whether the context should be compressed before trying again.
    :param should_rotate_credential: whether another credential should be tried.
    :param should_fallback: whether another provider or model should be tried.
    :param message: a person-readable text for the error, if given.
    :param error_context: what else the plugin said about the error.
    """

    reason: str
    retryable: bool | None = None
    should_compress: bool = False
    should_rotate_credential: bool = False
    should_fallback: bool = False
    message: str | None = None
    error_context: Mapping[str, Any] = attrs.field(factory=dict)


def error_classification(results: object) -> ErrorClassification | None:
    """Return the first fitting ``transform_api_error_classification`` answer, or ``None``.

    Every implementation ran before this is called (run all, then pick the first).
    """
    for value in results if isinstance(results, list) else []:
        if not is_error_classification(value):
            continue
        assert isinstance(value, Mapping)
        retryable = value.get("retryable")
        message = value.get("message")
        return ErrorClassification(
            reason=value["reason"],
            retryable=retryable if isinstance(retryable, bool) else None,
            should_compress=bool(value.get("should_compress", False)),
            should_rotate_credential=bool(value.get("should_rotate_credential", False)),
            should_fallback=bool(value.get("should_fallback", False)),
            message=message if message else None,
            error_context=dict(value.get("error_context", {})),
        )
    return None


def transcription_overrides(results: object) -> dict[str, str]:
    """Merge the ``pre_transcription`` answers: ``prompt``, ``language`` and ``model`` only,
    in the order the implementations ran, a later answer winning per field."""
    merged: dict[str, str] = {}
    for value in results if isinstance(results, list) else []:
        if not is_transcription_override(value):
            continue
        assert isinstance(value, Mapping)
        merged.update({key: value[key] for key in TRANSCRIPTION_FIELDS if key in value})
    return merged
