"""A registry finds an owner's entries through its own index (unloading is linear in what the
plugin registered, not in what every plugin did): random registrations, handle removals,
displacements and owner removals leave ``names(owner=...)`` and ``remove_owner`` exactly what
a scan of every entry says."""

from __future__ import annotations

import contextlib
import random

import pytest

from hermes_hooks.errors import RegistrationError
from hermes_hooks.registries.base import HOST, Handle, Registry

OWNERS = ("alpha", "beta", "gamma", HOST)
NAMES = ("one", "two", "three", "four")


def scanned(registry: Registry[int], owner: str) -> list[str]:
    """What the owner has an entry under, current or displaced, found by looking at each."""
    found = {entry.name for entry in registry.entries() if entry.owner == owner}
    for name, stack in registry._displaced.items():
        if any(entry.owner == owner for entry in stack):
            found.add(name)
    return sorted(found)


@pytest.mark.parametrize("seed", range(30))
@pytest.mark.parametrize("last_writer_wins", [True, False])
def test_owner_lookups_match_a_scan_through_every_change(seed: int, last_writer_wins: bool) -> None:
    rng = random.Random(seed)
    registry: Registry[int] = Registry("thing", last_writer_wins=last_writer_wins)
    handles: list[Handle] = []
    for step in range(80):
        action = rng.random()
        owner = rng.choice(OWNERS)
        if action < 0.55:
            with contextlib.suppress(RegistrationError):  # refused: another plugin's name
                handles.append(
                    registry.register(rng.choice(NAMES), step, owner=owner, replace_host=True)
                )
        elif action < 0.85 and handles:
            handles.pop(rng.randrange(len(handles))).unregister()
        else:
            expected = scanned(registry, owner)
            assert registry.remove_owner(owner) == expected
            assert scanned(registry, owner) == []
        for each in OWNERS:
            assert registry.names(owner=each) == scanned(registry, each), (seed, step, each)
    assert all(registry._displaced.values()), "no empty stack of displaced entries is kept"
