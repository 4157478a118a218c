"""Call plans: a hook's implementations called with less work than pluggy's general loop.

pluggy's ``_multicall`` handles every case on every call: old- and new-style wrappers, keyword
arguments with defaults, and it builds each implementation's argument list with a fresh list
comprehension. A :class:`CallPlan` is made once for one hook's implementations (rebuilt when
they change) and serves the common case, a hook with no wrappers, with exactly pluggy's
behaviour: the same implementations in the same order (``reversed`` registration order, as
pluggy sorts them), their arguments taken from the call by name, ``None`` results skipped,
``firstresult`` stopping at the first answer, an exception propagating as it would from
pluggy, and :class:`pluggy.HookCallError` for an argument the call does not provide, raised
when that implementation's turn comes. Each implementation runs through
``HookImpl.function``, read at every call, so the fault-isolation guard of
:mod:`hermes_hooks.isolation` (and any bound it applies) runs exactly as under pluggy.

A plan cannot serve a hook with a wrapper or an implementation taking keyword arguments with
defaults (:attr:`CallPlan.is_fast` is false); the manager hands such calls to pluggy's loop,
and also every call while tracing or monitoring (``add_hookcall_monitoring``) is on.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from operator import itemgetter
from typing import Any, Final

import pluggy

__all__ = ["CallPlan"]

_Getter = Callable[[Mapping[str, object]], Any]


def _no_arguments(kwargs: Mapping[str, object]) -> tuple[()]:
    return ()


_NO_ARGUMENTS: Final[tuple[_Getter, bool]] = (_no_arguments, False)


def _getter(argnames: Sequence[str]) -> tuple[_Getter, bool]:
    """Return a getter of an implementation's arguments and whether it gets a single one.

    ``itemgetter`` with one name returns the value rather than a 1-tuple, so such a getter's
    value is passed as the one argument instead of being unpacked.
    """
    if not argnames:
        return _NO_ARGUMENTS
    return itemgetter(*argnames), len(argnames) == 1


def _missing(exc: KeyError) -> pluggy.HookCallError:
    # pluggy's own message, so that a caller cannot tell which loop ran.
    return pluggy.HookCallError(f"hook call must provide argument {exc.args[0]!r}")


class CallPlan:
    """How to call one hook's implementations, made from the list pluggy holds for it.

    :param impls: the hook's implementations as pluggy orders them (it calls them from the
        end); a plan serves a call only while the call's list equals this one.
    :param firstresult: the hook stops at the first result that is not ``None``.
    """

    __slots__ = ("firstresult", "impls", "is_fast", "steps")

    def __init__(self, impls: Sequence[pluggy.HookImpl], *, firstresult: bool) -> None:
        self.impls: list[pluggy.HookImpl] = list(impls)
        self.firstresult = firstresult
        self.is_fast = not any(i.wrapper or i.hookwrapper or i.kwargnames for i in self.impls)
        # In call order, each with its argument getter and its plugin's name.
        self.steps: tuple[tuple[pluggy.HookImpl, _Getter, bool, str], ...] = tuple(
            (impl, *_getter(impl.argnames), impl.plugin_name) for impl in reversed(self.impls)
        )

    def serves(self, impls: Sequence[pluggy.HookImpl]) -> bool:
        """Tell whether this plan was made from exactly these implementations."""
        return self.impls == impls

    def call(self, kwargs: Mapping[str, object]) -> object:
        """Call the implementations as pluggy's loop would; return what it would return."""
        results: list[object] = []
        for impl, get, single, _ in self.steps:
            try:
                args = get(kwargs)
            except KeyError as exc:
                raise _missing(exc) from exc
            result = impl.function(args) if single else impl.function(*args)
            if result is not None:
                if self.firstresult:
                    return result
                results.append(result)
        return None if self.firstresult else results

    def call_attributed(self, kwargs: Mapping[str, object]) -> list[tuple[str, object]]:
        """Call a collecting hook; return its results, each with the plugin that returned it."""
        results: list[tuple[str, object]] = []
        for impl, get, single, owner in self.steps:
            try:
                args = get(kwargs)
            except KeyError as exc:
                raise _missing(exc) from exc
            result = impl.function(args) if single else impl.function(*args)
            if result is not None:
                results.append((owner, result))
                if self.firstresult:
                    break
        return results
