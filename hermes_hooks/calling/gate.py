"""What the tool gate guarantees whatever the implementations do: their arguments, their results.

A hook whose contract ``protects`` an argument (``pre_tool_call``'s ``args``) is called by the
typed facade with a :class:`GateWatch`. The watch takes one snapshot of the argument before the
first implementation runs and compares it after each one (both halves of a wrapper included);
an implementation that changed it in place has the change undone before the next one runs and
is reported, naming it. It never raises: a raise would turn every tool call into a block.

The watch also keeps what each implementation itself returned (:attr:`GateWatch.records`), so
the answer is combined from those, not from the list a wrapper hands back. A wrapper may add
results of its own (they count like any other, under its plugin's name); a wrapper's teardown
that removes or replaces another's result is reported and undone: the list goes on as it came
in. Results are copied before the first teardown runs, so a wrapper editing another's decision
in place changes the copy it sees, not the one that counts.

Nothing is copied for a call where nobody changes anything beyond the one snapshot, which is
also the original the answer's arguments are made from.
"""

from __future__ import annotations

import contextlib
from collections.abc import Generator, Mapping, MutableMapping
from typing import Any, Final

from hermes_hooks.calling.aio import raise_wrapfail
from hermes_hooks.calling.tracebacks import hide_in_pytest
from hermes_hooks.spec.decisions import UNATTRIBUTED, Tampering

__tracebackhide__ = hide_in_pytest  # a plugin's failure: pytest leaves these frames out

__all__ = ["AFTER_CALL", "GateWatch", "json_copy"]

AFTER_CALL: Final = "<still running after its timeout>"
"""Who a change found only once the call is over is attributed to: an abandoned implementation."""

_SHARED: Final = frozenset({str, int, float, bool, type(None), bytes})


def json_copy(value: Any) -> Any:
    """Return a copy of ``value`` whose dicts, lists and tuples are new (JSON-shaped data).

    Strings, numbers and other values are shared: tool arguments come from the model's JSON,
    and an object of another type is checked by identity only (it is never copied).
    """
    kind = type(value)
    if kind in _SHARED:
        return value
    if kind is dict:
        if _SHARED.issuperset(map(type, value.values())):
            return dict(value)  # the common case: flat arguments
        return {key: json_copy(item) for key, item in value.items()}
    if kind is list:
        return [json_copy(item) for item in value]
    if kind is tuple:
        return tuple(json_copy(item) for item in value)
    return value


def _same(current: object, snapshot: object) -> bool:
    """Whether ``current`` is still ``snapshot``, judged without trusting either's ``__eq__``.

    Only values of exactly the JSON types are compared by value (their ``==`` is the builtin
    one); anything else, a ``str`` subclass whose ``__eq__`` always says yes included, counts
    as unchanged only while it is the very object the snapshot holds.
    """
    if current is snapshot:
        return True
    kind = type(current)
    if kind is not type(snapshot):
        return False
    if kind in _SHARED:
        return bool(current == snapshot)
    if kind is dict:
        assert isinstance(current, dict)
        if _SHARED.issuperset(map(type, current.values())) and _SHARED.issuperset(
            map(type, current)
        ):
            return bool(current == snapshot)  # flat, of exact types: the builtin == decides
        assert isinstance(snapshot, dict)
        return len(current) == len(snapshot) and all(
            type(key) in _SHARED and key in snapshot and _same(value, snapshot[key])
            for key, value in current.items()
        )
    if kind is list or kind is tuple:
        assert isinstance(current, list | tuple)
        assert isinstance(snapshot, list | tuple)
        return len(current) == len(snapshot) and all(
            _same(a, b) for a, b in zip(current, snapshot, strict=True)
        )
    return False


class GateWatch:
    """One gated hook call: the protected arguments' snapshot, whose results count, what was undone.

    :param hook: the hook's name, for messages.
    :param kwargs: the call's keyword arguments (the very mapping the implementations get).
    :param names: the arguments to protect; those the call does not pass are skipped.
    """

    __slots__ = ("_frozen", "_owners", "hook", "kwargs", "records", "snapshots", "tampering")

    def __init__(self, hook: str, kwargs: Mapping[str, object], names: tuple[str, ...]) -> None:
        self.hook = hook
        self.kwargs = kwargs
        self.snapshots: tuple[tuple[str, object], ...] = tuple(
            (name, json_copy(kwargs[name])) for name in names if name in kwargs
        )
        #: ``(plugin, result)`` of each implementation, as it returned it, in run order.
        self.records: list[tuple[str, object]] = []
        self.tampering: list[Tampering] = []
        self._frozen = 0
        self._owners: dict[int, str] = {}

    def original(self, name: str) -> Any:
        """Return the snapshot of argument ``name`` (what the host passed); never give it out."""
        for known, snapshot in self.snapshots:
            if known == name:
                return snapshot
        return self.kwargs[name]

    def check(self, owner: str, where: str = "") -> None:
        """After ``owner``'s code ran: undo and report a change to a protected argument."""
        kwargs = self.kwargs
        for name, snapshot in self.snapshots:
            current = kwargs[name]
            if _same(current, snapshot):
                continue
            self._restore(name, current, snapshot)
            self.tampering.append(
                Tampering(owner, f"changed {self.hook}'s {name!r} in place{where}")
            )

    def _restore(self, name: str, current: object, snapshot: object) -> None:
        fresh = json_copy(snapshot)
        if isinstance(current, MutableMapping) and isinstance(fresh, Mapping):
            current.clear()
            current.update(fresh)
        elif isinstance(current, list) and isinstance(fresh, list):
            current[:] = fresh
        elif isinstance(self.kwargs, MutableMapping):
            self.kwargs[name] = fresh

    def finish(self) -> None:
        """Once the call is over: a change made by an implementation abandoned at its timeout."""
        self.check(AFTER_CALL, " after the call")

    def _freeze(self) -> None:
        """Copy the results recorded so far, so that a wrapper cannot edit the ones that count."""
        records = self.records
        for index in range(self._frozen, len(records)):
            owner, value = records[index]
            self._owners[id(value)] = owner
            records[index] = (owner, json_copy(value))
        self._frozen = len(records)

    def teardown(
        self, gen: Generator[None, object, object], owner: str
    ) -> Generator[None, Any, Any]:
        """Return a wrapper's teardown as pluggy drives it, with its change to the results checked.

        The returned generator is not started: ``next()`` it once, then ``send`` the result (or
        ``throw`` the exception) as pluggy does. It returns what the wrapper returned, unless
        the wrapper removed or replaced a result it did not add itself: then the results as
        they came in, and the wrapper is reported.
        """
        try:
            result = yield
        except BaseException as exc:
            try:
                gen.throw(exc)
            except StopIteration as stop:
                self.check(owner, " after its yield")
                return stop.value
            raise_wrapfail(gen, "has second yield")
        before = self.before_teardown(result)
        try:
            gen.send(result)
        except StopIteration as stop:
            out = stop.value
        else:
            raise_wrapfail(gen, "has second yield")
        self.check(owner, " after its yield")
        return self.settle(owner, before, out)

    def old_style_teardown(
        self, gen: Generator[None, Any, None], owner: str
    ) -> Generator[None, Any, None]:
        """:meth:`teardown` for an old-style ``hookwrapper=True`` guard (sent a ``Result``)."""
        outcome = yield
        if outcome.exception is not None:
            with contextlib.suppress(StopIteration):
                gen.send(outcome)
            self.check(owner, " after its yield")
            return
        before = self.before_teardown(outcome.get_result())
        with contextlib.suppress(StopIteration):
            gen.send(outcome)
        self.check(owner, " after its yield")
        if outcome.exception is None:
            out = outcome.get_result()
            kept = self.settle(owner, before, out)
            if kept is not out:
                outcome.force_result(kept)

    def before_teardown(self, result: object) -> object:
        """Before a wrapper's teardown: freeze the results so far, return a copy of the list."""
        self._freeze()
        return list(result) if isinstance(result, list) else result

    def settle(self, owner: str, before: object, out: object) -> object:
        """Keep a wrapper's teardown result when it only added to the list, else undo it."""
        if not isinstance(before, list):
            return out
        if isinstance(out, list):
            removed = [v for v in before if not any(v is o for o in out)]
            if not removed:
                for value in out:
                    if value is not None and not any(value is v for v in before):
                        self._owners[id(value)] = owner
                        self.records.append((owner, json_copy(value)))
                self._frozen = len(self.records)
                return out
            what = "removed or replaced results in its wrapper"
        else:
            removed = before
            what = f"replaced the result list with {type(out).__name__} in its wrapper"
        victims = tuple(
            dict.fromkeys(self._owners.get(id(value), UNATTRIBUTED) for value in removed)
        )
        if victims:
            what += " (" + ", ".join(f"{name!r}'s" for name in victims) + ")"
        self.tampering.append(Tampering(owner, what, victims))
        return list(before)
