"""The contract each hook carries: its mode, the check on a returned value, its error policy.

:mod:`hermes_hooks.spec.hookspecs` attaches one :class:`HookContract` to every hookspec with the
:func:`contract` decorator; the manager reads it to guard every implementation of that hook, and
:mod:`hermes_hooks.calling.facadegen` reads its defaults to write the typed facade's methods.
"""

from __future__ import annotations

import difflib
import enum
import inspect
import types
from collections.abc import Callable, Mapping
from typing import Final, TypeVar

import attrs

__all__ = [
    "CONTRACT_ATTR",
    "HERMES_CONTRACT_VERSION",
    "HookContract",
    "Mode",
    "Policy",
    "contract",
    "get_contract",
    "is_context",
    "is_gateway_decision",
    "is_non_empty_str",
    "is_str",
    "is_tool_decision",
    "is_verify_decision",
]

CONTRACT_ATTR: Final = "hermes_contract"

HERMES_CONTRACT_VERSION: Final = "0.21.3"
"""The Hermes Agent release whose plugin contract this project implements.

A plugin's ``requires_hermes`` is checked against it (not against hermes-hooks' own 0.x
version), so a plugin written for Hermes asking for ``>=0.19`` loads, and one asking for a
newer Hermes is not loaded and says which version it needs.
"""

_F = TypeVar("_F", bound=Callable[..., object])


class Mode(enum.Enum):
    """How the results of a hook's implementations are combined."""

    OBSERVE = "observe"
    """Every implementation runs; return values are ignored."""
    FIRST_RESULT = "first result"
    """Implementations run until one returns a fitting value (pluggy ``firstresult``)."""
    COLLECT = "collect"
    """Every implementation runs; the fitting values are combined into one answer."""


class Policy(enum.Enum):
    """What happens when an implementation raises."""

    OPEN = "open"
    """The failure is logged, counted on the plugin and the implementation is skipped."""
    CLOSED = "closed"
    """The failure turns into the hook's safe decision (for ``pre_tool_call``: a block)."""


_NO_DEFAULTS: Final[Mapping[str, object]] = types.MappingProxyType({})


def _read_only(defaults: Mapping[str, object]) -> Mapping[str, object]:
    return types.MappingProxyType(dict(defaults))


@attrs.frozen
class HookContract:
    """The rules one hook's implementations run under.

    :param mode: how results combine.
    :param policy: what a raising implementation turns into.
    :param check: accepts a non-``None`` return value that fits; ``None`` accepts anything.
    :param expects: a person-readable description of a fitting return value.
    :param safe_result: for :attr:`Policy.CLOSED`, builds the safe decision from the plugin key
        and the failure message.
    :param timeout: whether ``plugins.hook_callback_timeout`` applies to the hook.
    :param defaults: for each argument a host may leave out, what leaving it out means; an
        argument not named here is required. An empty ``[]`` or ``{}`` stands for a fresh empty
        list or dict per call.
    :param protects: arguments every implementation must see as the host passed them (the
        tool gate's ``args``): a change an implementation makes to them in place is undone
        before the next one runs, and reported, naming it.
    """

    mode: Mode
    policy: Policy = Policy.OPEN
    check: Callable[[object], bool] | None = None
    expects: str = "anything (the value is ignored)"
    safe_result: Callable[[str, str], object] | None = None
    timeout: bool = True
    # Left out of the hash, which a mapping has not; equal contracts still hash alike.
    defaults: Mapping[str, object] = attrs.field(factory=dict, converter=_read_only, hash=False)
    protects: tuple[str, ...] = ()

    def fits(self, value: object) -> bool:
        """Return whether a non-``None`` value returned by an implementation fits the contract."""
        return self.check is None or self.check(value)


def contract(
    mode: Mode,
    *,
    policy: Policy = Policy.OPEN,
    check: Callable[[object], bool] | None = None,
    expects: str = "anything (the value is ignored)",
    safe_result: Callable[[str, str], object] | None = None,
    timeout: bool = True,
    defaults: Mapping[str, object] = _NO_DEFAULTS,
    protects: tuple[str, ...] = (),
) -> Callable[[_F], _F]:
    """Attach a :class:`HookContract` to a hookspec function.

    :raises ValueError: for a fail-closed contract without ``safe_result``, or a default that
        names no argument of the hookspec or could be shared between calls.
    """
    if policy is Policy.CLOSED and safe_result is None:
        raise ValueError("a fail-closed contract needs a safe_result")
    value = HookContract(
        mode=mode,
        policy=policy,
        check=check,
        expects=expects,
        safe_result=safe_result,
        timeout=timeout,
        defaults=defaults,
        protects=protects,
    )

    def attach(func: _F) -> _F:
        _check_defaults(func, value.defaults)
        unknown = [n for n in protects if n not in inspect.signature(func).parameters]
        if unknown:
            raise ValueError(f"hook {func.__name__}: protects names no argument: {unknown}")
        setattr(func, CONTRACT_ATTR, value)
        return func

    return attach


_DEFAULT_TYPES: Final = (type(None), bool, int, float, str)


def _check_defaults(func: Callable[..., object], defaults: Mapping[str, object]) -> None:
    """Raise when a default names no argument of ``func`` or is a value calls would share."""
    hook = getattr(func, "__name__", repr(func))
    arguments = list(inspect.signature(func).parameters)
    for name, value in defaults.items():
        if name not in arguments:
            close = difflib.get_close_matches(name, arguments, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ValueError(
                f"hook {hook}: the default for {name!r} names no argument of the hookspec "
                f"(its arguments: {', '.join(arguments)}){hint}"
            )
        fresh = type(value) in (list, dict) and not value
        if not (isinstance(value, _DEFAULT_TYPES) or fresh):
            raise ValueError(
                f"hook {hook}: the default for {name!r} must be None, a bool, int, float or "
                f"str, or an empty [] or {{}} (a fresh one per call); got {value!r}"
            )


_OBSERVE: Final = HookContract(mode=Mode.OBSERVE)


def get_contract(spec_function: object) -> HookContract:
    """Return the contract attached to a hookspec function (observe/open when none is)."""
    found = getattr(spec_function, CONTRACT_ATTR, None)
    return found if isinstance(found, HookContract) else _OBSERVE


# -- result checks ------------------------------------------------------------------------------


def is_str(value: object) -> bool:
    """A string (``transform_tool_result``, ``transform_terminal_output``)."""
    return isinstance(value, str)


def is_non_empty_str(value: object) -> bool:
    """A non-empty string (``transform_llm_output``)."""
    return isinstance(value, str) and value != ""


def _str_or_missing(data: Mapping[object, object], key: str) -> bool:
    return isinstance(data.get(key, ""), str)


def is_tool_decision(value: object) -> bool:
    """A ``pre_tool_call`` decision: block, approve, modify, or the legacy ``blocked`` form."""
    if not isinstance(value, Mapping):
        return False
    action = value.get("action")
    if action == "block":
        # As in Hermes, a block must say why: one without a message is not a decision.
        message = value.get("message")
        return isinstance(message, str) and message.strip() != ""
    if action == "approve":
        return _str_or_missing(value, "message") and _str_or_missing(value, "rule_key")
    if action == "modify":
        return isinstance(value.get("args"), Mapping)
    if action is None and value.get("blocked") is True:
        return _str_or_missing(value, "reason")
    return False


def is_context(value: object) -> bool:
    """``pre_llm_call`` context: a string or ``{"context": str}``."""
    if isinstance(value, str):
        return True
    return isinstance(value, Mapping) and isinstance(value.get("context"), str)


def is_gateway_decision(value: object) -> bool:
    """``pre_gateway_dispatch``: ``skip`` with a reason, ``rewrite`` with text, or ``allow``."""
    if not isinstance(value, Mapping):
        return False
    action = value.get("action")
    if action == "skip":
        return _str_or_missing(value, "reason")
    if action == "rewrite":
        return isinstance(value.get("text"), str)
    return action == "allow"


def is_verify_decision(value: object) -> bool:
    """``pre_verify``: ``{"action": "continue", ...}`` or ``{"decision": "block", ...}``."""
    if not isinstance(value, Mapping):
        return False
    if value.get("action") == "continue":
        return _str_or_missing(value, "message")
    if value.get("decision") == "block":
        return _str_or_missing(value, "reason")
    return False


FAILOVER_REASONS: Final[frozenset[str]] = frozenset(
    {
        "auth",
        "auth_permanent",
        "billing",
        "rate_limit",
        "overloaded",
        "server_error",
        "timeout",
        "context_overflow",
        "payload_too_large",
        "image_too_large",
        "model_not_found",
        "provider_policy_blocked",
        "content_policy_blocked",
        "format_error",
        "invalid_encrypted_content",
        "multimodal_tool_content_unsupported",
        "thinking_signature",
        "long_context_tier",
        "oauth_long_context_beta_forbidden",
        "llama_cpp_grammar_pattern",
        "unknown",
    }
)
"""The names of Hermes' ``agent.error_classifier.FailoverReason``, which a classification names."""

_CLASSIFICATION_FLAGS: Final = (
    "retryable",
    "should_compress",
    "should_rotate_credential",
    "should_fallback",
)


def is_error_classification(value: object) -> bool:
    """``transform_api_error_classification``: ``{"reason": <FailoverReason name>, ...}``.

    The optional ``retryable``, ``should_compress``, ``should_rotate_credential`` and
    ``should_fallback`` must be booleans, ``message`` a string and ``error_context`` a mapping.
    """
    if not isinstance(value, Mapping) or value.get("reason") not in FAILOVER_REASONS:
        return False
    if any(not isinstance(value.get(flag, False), bool) for flag in _CLASSIFICATION_FLAGS):
        return False
    return _str_or_missing(value, "message") and isinstance(value.get("error_context", {}), Mapping)


TRANSCRIPTION_FIELDS: Final = ("prompt", "language", "model")
"""What a ``pre_transcription`` answer may change; ``file_path`` is read-only."""

_TRANSCRIPTION_KEYS: Final = frozenset({*TRANSCRIPTION_FIELDS, "file_path"})


def is_transcription_override(value: object) -> bool:
    """``pre_transcription``: a mapping of ``prompt``, ``language``, ``model`` (strings) and
    perhaps ``file_path`` (ignored: it is read-only); another key does not fit."""
    if not isinstance(value, Mapping) or any(k not in _TRANSCRIPTION_KEYS for k in value):
        return False
    return all(isinstance(value[key], str) for key in TRANSCRIPTION_FIELDS if key in value)
