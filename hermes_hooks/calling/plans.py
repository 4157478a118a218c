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
:mod:`hermes_hooks.calling.guards` (and any bound it applies) runs exactly as under pluggy.

A hook with wrappers (new-style ``wrapper=True`` or old-style ``hookwrapper=True``) is served by
:meth:`CallPlan.call_wrapped`, a copy of ``_multicall``'s loop with the plan's argument getters:
wrappers set up in call order, their teardowns run in reverse with the result or the exception,
a wrapper that does not yield or yields twice raising pluggy's ``RuntimeError``, an old-style
wrapper run through pluggy's own adapter (``run_old_style_hookwrapper``), so its
:class:`pluggy.Result` and teardown warning are pluggy's. Such a plan is not :attr:`is_fast`
(the typed facade, which attributes each result to its plugin, cannot use it).

A plan cannot serve a hook with an implementation taking keyword arguments with defaults
(:attr:`CallPlan.is_planned` is false); the manager hands such calls to pluggy's loop, and also
every call while tracing or monitoring (``add_hookcall_monitoring``) is on.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping, Sequence
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Final, cast

import pluggy

from hermes_hooks.calling.pluggy_private import raise_wrapfail, run_old_style_hookwrapper

__all__ = ["CallPlan"]

_Getter = Callable[[Mapping[str, object]], Any]
_Teardown = Generator[None, object, object]


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

    __slots__ = ("firstresult", "impls", "is_fast", "is_planned", "steps", "wrapped_steps")

    def __init__(self, impls: Sequence[pluggy.HookImpl], *, firstresult: bool) -> None:
        self.impls: list[pluggy.HookImpl] = list(impls)
        self.firstresult = firstresult
        #: No implementation takes keyword arguments with defaults: the plan serves the hook.
        self.is_planned = not any(i.kwargnames for i in self.impls)
        has_wrappers = any(i.wrapper or i.hookwrapper for i in self.impls)
        #: Planned and without wrappers: :meth:`call` and :meth:`call_attributed` serve it.
        self.is_fast = self.is_planned and not has_wrappers
        # In call order, each with its argument getter and its plugin's name.
        self.steps: tuple[tuple[pluggy.HookImpl, _Getter, bool, str], ...] = tuple(
            (impl, *_getter(impl.argnames), impl.plugin_name) for impl in reversed(self.impls)
        )
        # The same, with the kind of each: 0 plain, 1 new-style wrapper, 2 old-style wrapper.
        self.wrapped_steps: tuple[tuple[pluggy.HookImpl, _Getter, bool, int], ...] = tuple(
            (impl, get, single, 2 if impl.hookwrapper else 1 if impl.wrapper else 0)
            for impl, get, single, _ in self.steps
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

    def call_wrapped(self, hook_name: str, kwargs: Mapping[str, object]) -> object:
        """Call a hook that may have wrappers exactly as pluggy's ``_multicall`` would."""
        firstresult = self.firstresult
        results: list[object] = []
        exception: BaseException | None = None
        teardowns: list[_Teardown] = []
        try:  # run impl and wrapper setup functions in a loop
            for impl, get, single, kind in self.wrapped_steps:
                try:
                    args = get(kwargs)
                except KeyError as exc:
                    raise _missing(exc) from exc
                if kind == 0:
                    result = impl.function(args) if single else impl.function(*args)
                    if result is not None:
                        results.append(result)
                        if firstresult:
                            break
                elif kind == 1:
                    made = impl.function(args) if single else impl.function(*args)
                    # Not a generator: next() raises TypeError, as in pluggy.
                    if TYPE_CHECKING:
                        gen = cast(_Teardown, made)
                    else:
                        gen = made
                    try:
                        next(gen)
                    except StopIteration:
                        raise_wrapfail(gen, "did not yield")
                    teardowns.append(gen)
                else:
                    gen = run_old_style_hookwrapper(
                        impl, hook_name, (args,) if single else args, None
                    )
                    next(gen)
                    teardowns.append(gen)
        except BaseException as exc:
            exception = exc
        outcome: object = (results[0] if results else None) if firstresult else results
        return finish_teardowns(teardowns, outcome, exception)


def finish_teardowns(
    teardowns: Sequence[_Teardown], result: object, exception: BaseException | None
) -> object:
    """Run wrapper teardowns newest first, exactly as pluggy's ``_multicall`` does.

    Each teardown receives the result so far (or has the exception thrown into it) and may
    replace it; the final result is returned, or the final exception raised.
    """
    for teardown in reversed(teardowns):
        try:
            if exception is not None:
                try:
                    teardown.throw(exception)
                except RuntimeError as error:
                    # A StopIteration thrown into a generator comes out as a RuntimeError.
                    if isinstance(exception, StopIteration) and error.__cause__ is exception:
                        teardown.close()
                        continue
                    raise
            else:
                teardown.send(result)
            # Unreachable for a well-behaved wrapper: force its finalizers now.
            teardown.close()
        except StopIteration as stop:
            result = stop.value
            exception = None
            continue
        except BaseException as error:
            exception = error
            continue
        raise_wrapfail(teardown, "has second yield")
    if exception is not None:
        raise exception
    return result
