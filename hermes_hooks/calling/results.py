"""The bound on what one hook implementation may return: ``plugins.max_hook_result_bytes``.

Why and how results are measured: docs/explanation/facade-and-gate.md.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final, final

from hermes_hooks.calling.tracebacks import hide_in_pytest

__tracebackhide__ = hide_in_pytest  # a plugin's failure: pytest leaves these frames out

__all__ = ["DEFAULT_MAX_HOOK_RESULT_BYTES", "SETTING", "ResultLimit", "bounded_check", "oversized"]

DEFAULT_MAX_HOOK_RESULT_BYTES: Final = 16 * 1024 * 1024
"""Bytes one hook result may hold when ``plugins.max_hook_result_bytes`` is not set (16 MiB)."""

SETTING: Final = "plugins.max_hook_result_bytes"

_SCALARS: Final = frozenset({int, float, bool, type(None)})


@final
class ResultLimit:
    """The current ``plugins.max_hook_result_bytes`` (``0`` or less: no bound), one per manager."""

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

    Text and binary data count their bytes; a container counts one byte and its items (a
    mapping's keys too), once even in a cycle; anything else one byte. Stops past the bound.
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
        elif kind is bytes or kind is bytearray:
            total += len(item)
        elif kind is memoryview:
            total += item.nbytes
        elif isinstance(item, Mapping | list | tuple | set | frozenset):
            if id(item) in seen:
                continue
            seen.add(id(item))
            total += 1
            if isinstance(item, Mapping):
                for key, inner in item.items():
                    stack += (key, inner)
            else:
                stack.extend(item)
        else:
            total += 1
        if total > limit:
            return total
    return None


def _small_mapping(value: object, bound: int) -> bool:
    """Whether a flat dict (a decision, a context) is within *bound* for sure, cheaply: at most
    16 short texts and scalars, each text at most a 32nd of the bound in UTF-8."""
    if type(value) is not dict or len(value) > 16:
        return False
    room = bound // 128  # characters: 4 bytes each at most, a 32nd of the bound
    for key, item in value.items():
        if type(key) is not str or len(key) > room:
            return False
        if type(item) is str:
            if len(item) > room:
                return False
        elif type(item) not in _SCALARS:
            return False
    return True


def bounded_check(
    check: Callable[[object], bool] | None, limit: ResultLimit
) -> Callable[[object], bool]:
    """The hook's *check*, refusing first a result past *limit* (read at each call)."""

    def fits(value: object) -> bool:
        bound = limit.bytes
        # The common cases in a test or two: a short string, or a flat decision.
        small = len(value) * 4 <= bound if type(value) is str else _small_mapping(value, bound)
        if not small and oversized(value, bound) is not None:
            return False
        return check is None or check(value)

    return fits
