"""The tool gate's watch: a protected argument restored after each implementation, results kept.

How the gate works, and what it promises, is in docs/explanation/facade-and-gate.md.
"""

from __future__ import annotations

import contextlib
from collections.abc import Generator, Mapping, MutableMapping
from typing import Any, Final

from hermes_hooks.calling import handoff
from hermes_hooks.calling.aio import raise_wrapfail
from hermes_hooks.calling.tracebacks import hide_in_pytest
from hermes_hooks.spec.decisions import UNATTRIBUTED, Tampering

__tracebackhide__ = hide_in_pytest  # a plugin's failure: pytest leaves these frames out

__all__ = ["AFTER_CALL", "GateWatch", "json_copy"]

AFTER_CALL: Final = "<still running after its timeout>"
"""Who a change found only once the call is over is attributed to: an abandoned implementation."""

_SHARED: Final = frozenset({str, int, float, bool, type(None), bytes})


def json_copy(value: Any) -> Any:
    """Return a copy of ``value`` whose dicts, lists and tuples are new; anything else is shared."""
    kind = type(value)
    if kind is dict:
        if _SHARED.issuperset(map(type, value.values())):
            return dict(value)  # the common case: flat arguments
        return {key: json_copy(item) for key, item in value.items()}
    if kind is list:
        return [json_copy(item) for item in value]
    if kind is tuple:
        return tuple(json_copy(item) for item in value)
    return value


def _is_flat(value: dict[Any, Any]) -> bool:
    """Whether a dict's keys and values are all of exact JSON scalar types."""
    return _SHARED.issuperset(map(type, value.values())) and _SHARED.issuperset(map(type, value))


def _same(current: Any, snapshot: Any) -> bool:
    """Whether ``current`` is still ``snapshot``: only exact JSON types compare by value."""
    if current is snapshot:
        return True
    kind = type(current)
    if kind is not type(snapshot):
        return False
    if kind in _SHARED:
        return bool(current == snapshot)
    if kind is dict:
        if _is_flat(current):
            return bool(current == snapshot)  # flat, of exact types: the builtin == decides
        return len(current) == len(snapshot) and all(
            type(key) in _SHARED and key in snapshot and _same(value, snapshot[key])
            for key, value in current.items()
        )
    if kind is list or kind is tuple:
        return len(current) == len(snapshot) and all(map(_same, current, snapshot))
    return False


class GateWatch(handoff.Sink):
    """One gated hook call: the protected arguments' snapshot, whose results count, what was undone.

    It is the call's sink too (its own ``watch`` until :meth:`finish`): the guards record each
    result in it and tell it after each implementation.

    :param kwargs: the call's keyword arguments (the very mapping the implementations get).
    :param names: the arguments to protect; those the call does not pass are skipped.
    """

    __slots__ = ("_frozen", "_owners", "kwargs", "snapshots", "tampering")

    def __init__(self, hook: str, kwargs: Mapping[str, object], names: tuple[str, ...]) -> None:
        self.hook, self.kwargs, self.watch = hook, kwargs, self
        self.snapshots: dict[str, object] = {}
        for name in names:  # a loop, not a comprehension: no function call on every tool call
            if name in kwargs:
                self.snapshots[name] = json_copy(kwargs[name])
        #: ``(plugin, result)`` of each implementation, as it returned it, in run order.
        self.records: list[tuple[str, object]] = []
        self.tampering: list[Tampering] = []
        self._frozen = 0
        self._owners: dict[int, str] = {}

    def original(self, name: str) -> Any:
        """Return the snapshot of argument ``name`` (what the host passed); never give it out."""
        return self.snapshots[name] if name in self.snapshots else self.kwargs[name]

    def check(self, owner: str, where: str = "") -> None:
        """After ``owner``'s code ran: undo and report a change to a protected argument."""
        for name, snapshot in self.snapshots.items():
            current = self.kwargs[name]
            if type(current) is dict and _is_flat(current):
                if current == snapshot:  # flat, of exact types: the builtin == decides
                    continue
            elif _same(current, snapshot):
                continue
            fresh = json_copy(snapshot)
            if isinstance(current, MutableMapping) and isinstance(fresh, Mapping):
                current.clear()
                current.update(fresh)
            elif isinstance(current, list) and isinstance(fresh, list):
                current[:] = fresh
            elif isinstance(self.kwargs, MutableMapping):
                self.kwargs[name] = fresh
            self.tampering.append(
                Tampering(owner, f"changed {self.hook}'s {name!r} in place{where}")
            )

    def finish(self, *, late: bool = True) -> None:
        """Close the call: with ``late``, undo a change an abandoned implementation made."""
        self.watch = None  # no reference cycle left to the garbage collector
        if late:
            self.check(AFTER_CALL, " after the call")

    def teardown(
        self, gen: Generator[None, object, object], owner: str
    ) -> Generator[None, Any, Any]:
        """A new-style wrapper's teardown as pluggy drives it (not started), its change checked."""
        try:
            result = yield
        except BaseException as exc:
            try:
                gen.throw(exc)
            except StopIteration as stop:
                self.check(owner, " after its yield")
                return stop.value
            raise_wrapfail(gen, "has second yield")
        before = self._before_teardown(result)
        try:
            gen.send(result)
        except StopIteration as stop:
            out = stop.value
        else:
            raise_wrapfail(gen, "has second yield")
        self.check(owner, " after its yield")
        return self._kept(owner, before, out)

    def old_style_teardown(
        self, gen: Generator[None, Any, None], owner: str
    ) -> Generator[None, Any, None]:
        """:meth:`teardown` for an old-style ``hookwrapper=True`` guard (sent a ``Result``)."""
        outcome = yield
        failed = outcome.exception is not None
        before = None if failed else self._before_teardown(outcome.get_result())
        with contextlib.suppress(StopIteration):
            gen.send(outcome)
        self.check(owner, " after its yield")
        if not failed and outcome.exception is None:
            out = outcome.get_result()
            kept = self._kept(owner, before, out)
            if kept is not out:
                outcome.force_result(kept)

    def _before_teardown(self, result: object) -> object:
        """Copy the results so far (a wrapper edits its copy); return a copy of the list."""
        records = self.records
        for index in range(self._frozen, len(records)):
            owner, value = records[index]
            self._owners[id(value)] = owner
            records[index] = (owner, json_copy(value))
        self._frozen = len(records)
        return list(result) if isinstance(result, list) else result

    def _kept(self, owner: str, before: object, out: object) -> object:
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
        victims = tuple(dict.fromkeys(self._owners.get(id(v), UNATTRIBUTED) for v in removed))
        if victims:
            what += " (" + ", ".join(f"{name!r}'s" for name in victims) + ")"
        self.tampering.append(Tampering(owner, what, victims))
        return list(before)
