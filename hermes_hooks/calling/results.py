"""The bound on what one hook implementation may return: ``plugins.max_hook_result_bytes``.

A 200 MB string returned from a transform hook would stall the turn (it is copied, logged,
sent to the model). Every plain implementation's result is measured before its hook's own
check (:func:`bounded_check`): its text and binary data in bytes, one byte for every other
item, walked without recursion and only until the bound is passed, so a small result costs a
type test and a ``len``. A result past the bound is a failure of the implementation, which
the hook's error policy turns into nothing or its safe decision
(:meth:`hermes_hooks.calling.guards.Guard.unfit`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final, final

from hermes_hooks.calling.tracebacks import hide_in_pytest

__tracebackhide__ = hide_in_pytest  # a plugin's failure: pytest leaves these frames out

__all__ = [
    "DEFAULT_MAX_HOOK_RESULT_BYTES",
    "SETTING",
    "ResultLimit",
    "bounded_check",
    "oversized",
]

DEFAULT_MAX_HOOK_RESULT_BYTES: Final = 16 * 1024 * 1024
"""Bytes one hook result may hold when ``plugins.max_hook_result_bytes`` is not set (16 MiB)."""

SETTING: Final = "plugins.max_hook_result_bytes"

_BINARY: Final = (bytes, bytearray)


@final
class ResultLimit:
    """The current ``plugins.max_hook_result_bytes``; ``0`` or less: no bound.

    One per manager, shared by its guards and set when the config is read, as
    :class:`~hermes_hooks.calling.bounds.BoundSetting` is.
    """

    __slots__ = ("bytes",)

    def __init__(self, limit: int = DEFAULT_MAX_HOOK_RESULT_BYTES) -> None:
        self.bytes = limit

    def __repr__(self) -> str:
        return f"ResultLimit({self.bytes!r})"


def _text_bytes(text: str, room: int) -> int:
    """The UTF-8 size of *text*, encoded only when its length alone cannot decide against *room*."""
    length = len(text)
    if length > room or length * 4 <= room:
        return length
    return len(text.encode("utf-8", "surrogatepass"))


def oversized(value: object, limit: int) -> int | None:
    """Return the size of *value* when it is more than *limit* bytes, else ``None``.

    Strings count their UTF-8 bytes, ``bytes``/``bytearray``/``memoryview`` theirs; a
    mapping or a list, tuple or set counts its items (keys too), each at least one byte; a
    container met twice (a cycle) counts once. The walk stops as soon as the bound is passed.
    """
    if limit <= 0:
        return None
    total = 0
    stack: list[Any] = [value]
    seen: set[int] = set()
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is str:
            total += _text_bytes(item, limit - total)
        elif kind in _BINARY:
            total += len(item)
        elif kind is memoryview:
            total += item.nbytes
        elif isinstance(item, Mapping):
            if id(item) in seen:
                continue
            seen.add(id(item))
            total += 1
            for key, inner in item.items():
                stack.append(key)
                stack.append(inner)
        elif isinstance(item, list | tuple | set | frozenset):
            if id(item) in seen:
                continue
            seen.add(id(item))
            total += 1
            stack.extend(item)
        else:
            total += 1
        if total > limit:
            return total
    return None


_SCALARS: Final = frozenset({int, float, bool, type(None)})


def _small_mapping(value: dict[Any, Any], bound: int) -> bool:
    """Whether a flat dict (a decision, a context) is within *bound* for sure, cheaply.

    At most 16 items whose keys and values are short text or scalars: each text is at most a
    32nd of the bound in UTF-8 (4 bytes a character at most), so all of them fit.
    """
    if len(value) > 16:
        return False
    room = bound // 128  # characters: 4 bytes each at most, a 32nd of the bound
    for key, item in value.items():
        if type(key) is not str or len(key) > room:
            return False
        kind = type(item)
        if kind is str:
            if len(item) > room:
                return False
        elif kind not in _SCALARS:
            return False
    return True


def bounded_check(
    check: Callable[[object], bool] | None, limit: ResultLimit
) -> Callable[[object], bool]:
    """The hook's *check*, refusing first a result past *limit* (read at each call)."""

    def fits(value: object) -> bool:
        bound = limit.bytes
        kind = type(value)
        # The common cases, a short string or a flat decision, in a test or two each.
        if kind is str:
            small = len(value) * 4 <= bound  # type: ignore[arg-type]
        else:
            small = kind is dict and _small_mapping(value, bound)  # type: ignore[arg-type]
        if not small and oversized(value, bound) is not None:
            return False
        return check is None or check(value)

    return fits
