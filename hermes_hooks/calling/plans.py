"""Call plans: a hook's implementations called with less work than pluggy's general loop.

pluggy's ``_multicall`` handles every case on every call: old- and new-style wrappers, keyword
arguments with defaults, and it builds each implementation's argument list with a fresh list
comprehension. A :class:`CallPlan` is made once for one hook's implementations (rebuilt when
they change) and serves the common case, a hook with no wrappers, with exactly pluggy's
behaviour: the same implementations in the same order (``reversed`` registration order, as
pluggy sorts them), their arguments taken from the call by name, ``None`` results skipped,
``firstresult`` stopping at the first answer, an exception propagating as it would from
pluggy, and :class:`pluggy.HookCallError` for an argument the call does not provide, raised
when that implementation's turn comes. ``HookImpl.function`` is read at every call: while it is
the fault-isolation guard of :mod:`hermes_hooks.calling.guards`, the plan calls the guarded
target itself and hands the guard its failures and results (one frame less per
implementation; a ``register_hook`` callback taking ``**kwargs`` gets the call's keywords as
they are); when something replaced it (a recorder), the replacement is called. A hook with a
timeout, while ``plugins.hook_callback_timeout`` is above zero, hands all its plain
implementations to one worker (:mod:`hermes_hooks.calling.handoff`), unless the call is made on
a worker already.

A hook with wrappers (new-style ``wrapper=True`` or old-style ``hookwrapper=True``) is served by
:meth:`CallPlan.call_wrapped`, a copy of ``_multicall``'s loop with the plan's argument getters:
wrappers set up in call order, their teardowns run in reverse with the result or the exception,
a wrapper that does not yield or yields twice raising pluggy's ``RuntimeError``, an old-style
wrapper run through pluggy's own adapter (``run_old_style_hookwrapper``), so its
:class:`pluggy.Result` and teardown warning are pluggy's; it can attribute each plain result to
its plugin, for the typed facade. Such a plan is not :attr:`is_fast`.

A plan cannot serve a hook with an implementation taking keyword arguments with defaults
(:attr:`CallPlan.is_planned` is false); the manager hands such calls to pluggy's loop, and also
every call while tracing or monitoring (``add_hookcall_monitoring``) is on.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping, Sequence
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Final, cast

import pluggy

from hermes_hooks.calling import handoff
from hermes_hooks.calling.pluggy_private import raise_wrapfail, run_old_style_hookwrapper
from hermes_hooks.calling.tracebacks import hide_in_pytest

__tracebackhide__ = hide_in_pytest  # a plugin's failure: pytest leaves these frames out

if TYPE_CHECKING:
    from hermes_hooks.calling.bounds import BoundSetting
    from hermes_hooks.calling.guards import Guard

__all__ = ["CallPlan", "finish_teardowns", "step_of"]

_Getter = Callable[[Mapping[str, object]], Any]
_Teardown = Generator[None, object, object]
# (impl, get, single, owner, guard, kind, the guard's entry, what to call): see handoff.Step.
# The guard is a Guard whenever the entry is set (typed Any: the loop tells them apart by that).
_Step = tuple[pluggy.HookImpl, _Getter, bool, str, Any, int, Any, Any]


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


_missing = handoff.missing_argument


def step_of(impl: pluggy.HookImpl) -> _Step:
    """Return the plan's step of one implementation (also a :data:`handoff.Step`)."""
    return _step(impl)


def _step(impl: pluggy.HookImpl) -> _Step:
    from hermes_hooks.calling.guards import guard_of  # guards imports aio, which imports this

    guard = guard_of(impl.function)
    get, single = _getter(impl.argnames)
    if guard is None:
        return (impl, get, single, impl.plugin_name, None, handoff.POSITIONAL, None, None)
    if guard.kw_target is not None:
        kind, target = handoff.KEYWORDS, guard.kw_target
    else:
        kind, target = handoff.POSITIONAL, guard.target
    return (impl, get, single, impl.plugin_name, guard, kind, guard.entry, target)


class CallPlan:
    """How to call one hook's implementations, made from the list pluggy holds for it.

    :param impls: the hook's implementations as pluggy orders them (it calls them from the
        end); a plan serves a call only while the call's list equals this one.
    :param firstresult: the hook stops at the first result that is not ``None``.
    :param nspec: how many arguments the hook's spec has, when it has one: a call with that
        many keywords passes exactly the hook's arguments, which a ``**kwargs`` callback then
        gets as they are.
    """

    __slots__ = (
        "firstresult",
        "impls",
        "is_fast",
        "is_planned",
        "nspec",
        "setting",
        "steps",
        "wrappers",
    )

    def __init__(
        self, impls: Sequence[pluggy.HookImpl], *, firstresult: bool, nspec: int = -1
    ) -> None:
        self.impls: list[pluggy.HookImpl] = list(impls)
        self.firstresult = firstresult
        self.nspec = nspec
        in_call_order = list(reversed(self.impls))
        is_wrapper = [i.wrapper or i.hookwrapper for i in in_call_order]
        wrappers = is_wrapper.count(True)
        #: No implementation takes keyword arguments with defaults, and the wrappers come
        #: first in call order (pluggy keeps them so): the plan serves the hook.
        self.is_planned = not any(i.kwargnames for i in self.impls) and not any(
            is_wrapper[wrappers:]
        )
        #: Planned and without wrappers: :meth:`call` and :meth:`call_attributed` serve it.
        self.is_fast = self.is_planned and not wrappers
        # In call order, each with its argument getter and its kind: 1 new-style, 2 old-style.
        self.wrappers: tuple[tuple[pluggy.HookImpl, _Getter, bool, int], ...] = tuple(
            (impl, *_getter(impl.argnames), 2 if impl.hookwrapper else 1)
            for impl in in_call_order[:wrappers]
        )
        # The plain implementations in call order, each with its getter, plugin and guard.
        self.steps: tuple[_Step, ...] = tuple(_step(impl) for impl in in_call_order[wrappers:])
        #: The bound of a hook with a timeout, when every implementation is guarded by it.
        self.setting: BoundSetting | None = None
        guards = [step[4] for step in self.steps]
        if guards and all(g is not None and g.bound is not None for g in guards):
            self.setting = cast("Guard", guards[0]).setting

    def serves(self, impls: Sequence[pluggy.HookImpl]) -> bool:
        """Tell whether this plan was made from exactly these implementations."""
        return self.impls == impls

    def call(self, kwargs: Mapping[str, object]) -> object:
        """Call the implementations as pluggy's loop would; return what it would return."""
        setting = self.setting  # _plain(kwargs, False), inlined: a frame less per call
        if setting is not None and setting.seconds > 0 and not handoff.on_worker():
            results = self._plain(kwargs, False)
        else:
            results = self._inline(kwargs, False)
        if self.firstresult:
            return results[0] if results else None
        return results

    def call_attributed(self, kwargs: Mapping[str, object]) -> list[tuple[str, object]]:
        """Call a collecting hook; return its results, each with the plugin that returned it."""
        return self._plain(kwargs, True)

    def _plain(self, kwargs: Mapping[str, object], attributed: bool) -> list[Any]:
        """Run the plain implementations: on one worker when the hook is bounded, else here."""
        setting = self.setting
        if setting is not None and setting.seconds > 0 and not handoff.on_worker():
            return handoff.run(
                cast("Sequence[handoff.Step]", self.steps),
                kwargs,
                seconds=setting.seconds,
                attributed=attributed,
                firstresult=self.firstresult,
                exact=len(kwargs) == self.nspec,
            )
        return self._inline(kwargs, attributed)

    def _inline(self, kwargs: Mapping[str, object], attributed: bool) -> list[Any]:
        """Run the plain implementations here, each under its guard, as pluggy's loop would.

        A guarded implementation's target is called from here, its guard only told of a
        failure or a result, which saves the guard's frame; an implementation whose function
        someone replaced (a recorder's wrapper) is called through the replacement.
        """
        results: list[Any] = []
        firstresult = self.firstresult
        exact = len(kwargs) == self.nspec
        for impl, get, single, owner, guard, kind, entry, target in self.steps:
            if impl.function is not entry:  # not guarded by us, or replaced since
                function = impl.function
                try:
                    args = get(kwargs)
                except KeyError as exc:
                    raise _missing(exc) from exc
                result = function(args) if single else function(*args)
            elif kind:  # a register_hook callback taking **kwargs (entry set: guard too)
                if exact:
                    picked = kwargs
                else:
                    try:
                        picked = guard.select(kwargs)
                    except KeyError as exc:
                        raise _missing(exc) from exc
                try:
                    result = target(**picked)
                except BaseException as exc:
                    result = guard.failed(exc)
                else:
                    if result is not None:
                        result = guard.settle(result)
            else:
                try:
                    args = get(kwargs)
                except KeyError as exc:
                    raise _missing(exc) from exc
                try:
                    result = target(args) if single else target(*args)
                except BaseException as exc:
                    result = guard.failed(exc)
                else:
                    if result is not None:
                        result = guard.settle(result)
            if result is not None:
                results.append((owner, result) if attributed else result)
                if firstresult:
                    break
        return results

    def call_wrapped(
        self,
        hook_name: str,
        kwargs: Mapping[str, object],
        records: list[tuple[str, object]] | None = None,
    ) -> object:
        """Call a hook that may have wrappers exactly as pluggy's ``_multicall`` would.

        The wrappers are set up here, in call order; the plain implementations then run as
        :meth:`call` runs them (on one worker when the hook is bounded); the teardowns run
        here, newest first.

        :param records: receives ``(plugin, result)`` for each plain result.
        """
        firstresult = self.firstresult
        results: list[object] = []
        exception: BaseException | None = None
        teardowns: list[_Teardown] = []
        try:  # run the wrappers' set-up, then the implementations
            for impl, get, single, kind in self.wrappers:
                try:
                    args = get(kwargs)
                except KeyError as exc:
                    raise _missing(exc) from exc
                if kind == 1:
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
            if records is None:
                results = self._plain(kwargs, False)
            else:
                found = self._plain(kwargs, True)
                records.extend(found)
                results = [value for _, value in found]
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
