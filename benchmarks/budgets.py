"""The budgets of bounded calls, shims and scaling (issue 16), each against its anchor.

- ``bounded``: the overhead of the default ``plugins.hook_callback_timeout`` per hook call
  (the same call with the default bound, minus with ``hook_callback_timeout: 0``) against a
  bare thread round trip measured in the same rounds: an ``Event`` set for a waiting thread,
  which sets another back. At k = 1, 5 and 20 ``pre_tool_call`` implementations, through
  ``pm.hook`` and through ``Hooks(pm)``.
- ``shims``: ``pm.hook.pre_tool_call`` with k ``register_hook`` callbacks (``**kwargs``, as
  Hermes plugins write them), the bound off, against raw pluggy with the same functions as
  native ``@hookimpl``; and ``pm.invoke_hook`` against ``pm.hook`` on the same plugins.
- ``scaling``: loading N generated plugins (a manifest, one ``@hookimpl``, one
  ``register_hook``) with ``discover_and_load()``, and unloading them with ``unload_all()``, in
  fresh processes; the per-plugin cost at the largest N against the smallest. And one plugin
  whose ``register(ctx)`` makes many ``register_hook`` calls.

In-process timings run in rounds, every variant once per round in a fresh random order; a
ratio is taken within a round and the report gives the median over rounds.
"""

from __future__ import annotations

import random
import statistics
import subprocess
import tempfile
import threading
import timeit
import types
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import pluggy

from benchmarks.dispatch import _CALL_ARGS, _call, _tool_impl
from benchmarks.processes import child_env, python_argv
from benchmarks.startup import build_plugin_tree

__all__ = [
    "BoundedResults",
    "ScalingResults",
    "ShimResults",
    "run_bounded",
    "run_scaling",
    "run_shims",
]

_HOOK: Final = "pre_tool_call"


def _calibrate(timer: timeit.Timer, target: float) -> int:
    number = 1
    while True:
        elapsed = timer.timeit(number)
        if elapsed >= target / 10 or number >= 10**6:
            return max(1, int(number * target / max(elapsed, 1e-9)))
        number *= 10


def _rounds(
    timers: dict[str, timeit.Timer],
    rounds: int,
    target_seconds: float,
    rng: random.Random,
    progress: Callable[[str], None] | None,
    what: str,
) -> dict[str, list[float]]:
    """ns per call of each timer, once per round, in a fresh random order each round."""
    numbers = {key: _calibrate(timer, target_seconds) for key, timer in timers.items()}
    samples: dict[str, list[float]] = {key: [] for key in timers}
    for index in range(rounds):
        if progress is not None:
            progress(f"{what}: round {index + 1}/{rounds}")
        for key in rng.sample(list(timers), len(timers)):
            samples[key].append(timers[key].timeit(numbers[key]) / numbers[key] * 1e9)
    return samples


def _median_ratio(a: Sequence[float], b: Sequence[float]) -> float:
    return statistics.median(x / y for x, y in zip(a, b, strict=True))


@contextmanager
def _event_round_trip() -> Iterator[dict[str, object]]:
    """A thread that answers each ``go.set()`` with ``back.set()``: the bare handoff."""
    go, back = threading.Event(), threading.Event()
    stop = False

    def serve() -> None:
        while True:
            go.wait()
            go.clear()
            if stop:
                return
            back.set()

    thread = threading.Thread(target=serve, name="bench-event-round-trip", daemon=True)
    thread.start()
    try:
        yield {"go": go, "back": back}
    finally:
        stop = True
        go.set()
        thread.join(10)


_ROUND_TRIP: Final = "go.set(); back.wait(); back.clear()"


def _manager(home: Path, timeout: float | None) -> Any:
    from hermes_hooks.plugins.manager import PluginManager

    home.mkdir(parents=True)
    if timeout is not None:
        (home / "config.yaml").write_text(
            f"plugins:\n  hook_callback_timeout: {timeout}\n", encoding="utf-8"
        )
    pm = PluginManager(home)
    pm.reload_config()
    return pm


def _native_module(index: int, function: Callable[..., object]) -> types.ModuleType:
    from hermes_hooks import hookimpl

    module = types.ModuleType(f"bench_plugin_{index}")
    setattr(module, _HOOK, hookimpl(function))
    return module


# -- bounded ------------------------------------------------------------------------------------


@dataclass
class BoundedResults:
    """Per k: every round's ns per call, default bound and inline, and the round trip."""

    ks: tuple[int, ...]
    rounds: int
    samples: dict[str, list[float]] = field(default_factory=dict)

    def overhead(self, way: str, k: int) -> float:
        """Median ns the default bound adds to one call (``way``: ``hook`` or ``facade``)."""
        return statistics.median(
            b - i
            for b, i in zip(
                self.samples[f"{way} bounded k={k}"],
                self.samples[f"{way} inline k={k}"],
                strict=True,
            )
        )

    def ratio(self, way: str, k: int) -> float:
        """Median over rounds of (default bound - inline) / one bare round trip."""
        bounded, inline = self.samples[f"{way} bounded k={k}"], self.samples[f"{way} inline k={k}"]
        trips = self.samples["event round trip"]
        return statistics.median(
            (b - i) / t for b, i, t in zip(bounded, inline, trips, strict=True)
        )

    def median(self, key: str) -> float:
        """Median ns per call of one timer."""
        return statistics.median(self.samples[key])


def run_bounded(
    ks: Sequence[int] = (1, 5, 20),
    *,
    rounds: int = 25,
    target_seconds: float = 0.05,
    seed: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> BoundedResults:
    """Measure the default bound's overhead per hook call against a bare round trip."""
    from hermes_hooks.calling.facade import Hooks

    rng = random.Random(seed)
    namespace: dict[str, object] = {f"_{n}": v for n, v in _CALL_ARGS[_HOOK].items()}
    statements: dict[str, str] = {}
    with (
        tempfile.TemporaryDirectory(prefix="hermes-bench-bounded-") as tmp,
        _event_round_trip() as trip,
    ):
        namespace.update(trip)
        statements["event round trip"] = _ROUND_TRIP
        for k in ks:
            for way_of_bound, timeout in (("bounded", None), ("inline", 0)):
                pm = _manager(Path(tmp) / f"{way_of_bound}-{k}", timeout)
                for index in range(k):
                    pm.register(_native_module(index, _tool_impl(index)), name=f"plugin{index}")
                hooks = Hooks(pm)
                namespace[f"pm_{way_of_bound}_{k}"] = pm
                namespace[f"hooks_{way_of_bound}_{k}"] = hooks
                statements[f"hook {way_of_bound} k={k}"] = _call(
                    f"pm_{way_of_bound}_{k}.hook.{_HOOK}", _HOOK
                )
                statements[f"facade {way_of_bound} k={k}"] = _call(
                    f"hooks_{way_of_bound}_{k}.{_HOOK}", _HOOK
                )
        timers = {key: timeit.Timer(s, globals=namespace) for key, s in statements.items()}
        samples = _rounds(timers, rounds, target_seconds, rng, progress, "bounded")
    return BoundedResults(tuple(ks), rounds, samples)


# -- shims --------------------------------------------------------------------------------------


@dataclass
class ShimResults:
    """Every round's ns per call of raw pluggy (native), ours on shims, and invoke_hook."""

    k: int
    rounds: int
    samples: dict[str, list[float]] = field(default_factory=dict)

    def ratio(self, variant: str, anchor: str) -> float:
        """Median over rounds of ``variant`` / ``anchor``."""
        return _median_ratio(self.samples[variant], self.samples[anchor])

    def per_impl(self, variant: str) -> float:
        """Median ns per implementation of one variant."""
        return statistics.median(self.samples[variant]) / max(self.k, 1)


def run_shims(
    k: int = 20,
    *,
    rounds: int = 25,
    target_seconds: float = 0.05,
    seed: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> ShimResults:
    """Measure ``register_hook`` callbacks against native hookimpls, the bound off."""
    from hermes_hooks.plugins.loading import PluginHooks, make_hook_adapter
    from hermes_hooks.spec import hookspecs
    from hermes_hooks.spec.markers import PROJECT_NAME

    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="hermes-bench-shims-") as tmp:
        raw = pluggy.PluginManager(PROJECT_NAME)
        raw.add_hookspecs(hookspecs)
        native = _manager(Path(tmp) / "native", 0)
        shims = _manager(Path(tmp) / "shims", 0)
        argnames = shims.hook_argnames(_HOOK)
        for index in range(k):
            raw.register(_native_module(index, _tool_impl(index)), name=f"plugin{index}")
            native.register(_native_module(index, _tool_impl(index)), name=f"plugin{index}")
            adapter = make_hook_adapter(_HOOK, _tool_impl(index), argnames, owner=f"plugin{index}")
            shims.register(
                PluginHooks(f"plugin{index}", None, {}, [(_HOOK, adapter)]), name=f"plugin{index}"
            )
        namespace: dict[str, object] = {f"_{n}": v for n, v in _CALL_ARGS[_HOOK].items()}
        namespace.update(raw=raw, native=native, shims=shims)
        statements = {
            "raw pluggy, native": _call(f"raw.hook.{_HOOK}", _HOOK),
            "ours, native": _call(f"native.hook.{_HOOK}", _HOOK),
            "ours, shims": _call(f"shims.hook.{_HOOK}", _HOOK),
            "invoke_hook, shims": _call("shims.invoke_hook", _HOOK, leading=repr(_HOOK)),
        }
        for statement in statements.values():  # every variant gives every variant's answer
            scope = dict(namespace)
            exec("_out = " + statement, scope)
            if scope["_out"] != []:
                raise AssertionError(f"{statement} gave {scope['_out']!r}")
        timers = {key: timeit.Timer(s, globals=namespace) for key, s in statements.items()}
        samples = _rounds(timers, rounds, target_seconds, rng, progress, "shims")
    return ShimResults(k, rounds, samples)


# -- scaling ------------------------------------------------------------------------------------

_SCALE: Final = """\
import sys, time
from hermes_hooks.plugins.manager import PluginManager
pm = PluginManager(sys.argv[1])
t0 = time.perf_counter()
pm.discover_and_load()
t1 = time.perf_counter()
infos = [info for info in pm.list_plugins() if info.status == "enabled"]
loaded = len(infos)
full = sum(1 for info in infos if len(info.tools) == len(info.commands) == 1)
t2 = time.perf_counter()
pm.unload_all()
t3 = time.perf_counter()
print((t1 - t0) * 1000, (t3 - t2) * 1000, loaded, full)
"""

_FULL: Final = '''\
"""Generated plugin {i} for the scaling benchmark: a hook, a tool and a command."""

from hermes_hooks import hookimpl

SCHEMA = {{"name": "scale_{i}", "description": "d", "parameters": {{"type": "object"}}}}


@hookimpl
def pre_tool_call(tool_name, args):
    return None


def _tool(args, **kwargs):
    return "ok"


def _command(raw_args):
    return "ok"


def register(ctx):
    ctx.register_tool("scale_{i}", "scaling", SCHEMA, _tool)
    ctx.register_command("scale-{i}", _command, description="d")
'''
"""What each of the N plugins is (issue 22): a hook, a tool and a command to load and unload."""

_MANY_HOOKS: Final = '''\
"""One plugin that registers {m} callbacks of one hook."""


def _seen(**kwargs):
    return None


def register(ctx):
    for _ in range({m}):
        ctx.register_hook("post_tool_call", _seen)
'''


@dataclass
class ScalingResults:
    """Per N, every round's load and unload ms; and the many-callbacks plugin's load ms."""

    ns: tuple[int, ...]
    rounds: int
    load_ms: dict[int, list[float]] = field(default_factory=dict)
    unload_ms: dict[int, list[float]] = field(default_factory=dict)
    callbacks: int = 0
    callbacks_ms: list[float] = field(default_factory=list)

    def per_plugin(self, what: str, n: int) -> float:
        """Median ms per plugin of loading or unloading ``n`` plugins."""
        samples = self.load_ms if what == "load" else self.unload_ms
        return statistics.median(samples[n]) / n

    def growth(self, what: str) -> float:
        """Median over rounds of per-plugin ms at the largest N / at the smallest N."""
        small, large = min(self.ns), max(self.ns)
        samples = self.load_ms if what == "load" else self.unload_ms
        return statistics.median(
            (b / large) / (a / small) for a, b in zip(samples[small], samples[large], strict=True)
        )


def _child(code: str, home: Path, bundled: Path) -> tuple[float, float, int, int]:
    env = child_env({"HERMES_HOME": str(home), "HERMES_BUNDLED_PLUGINS": str(bundled)})
    done = subprocess.run(
        python_argv(code, str(home)), env=env, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"scaling child failed:\n{done.stdout}\n{done.stderr}")
    load, unload, count, full = done.stdout.split()
    return float(load), float(unload), int(count), int(full)


def run_scaling(
    ns: Sequence[int] = (100, 2000),
    *,
    rounds: int = 5,
    callbacks: int = 100_000,
    seed: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> ScalingResults:
    """Time loading and unloading N plugins, and one plugin of many callbacks, in processes."""
    rng = random.Random(seed)
    results = ScalingResults(tuple(ns), rounds, callbacks=callbacks)
    with tempfile.TemporaryDirectory(prefix="hermes-bench-scaling-") as tmp:
        trees = {n: build_plugin_tree(Path(tmp) / f"n{n}", n) for n in ns}
        for tree in trees.values():
            for i, folder in enumerate(sorted(tree.plugins.iterdir())):
                (folder / "__init__.py").write_text(_FULL.format(i=i), encoding="utf-8")
        many = build_plugin_tree(Path(tmp) / "many", 1)
        (many.plugins / "plugin_0000" / "__init__.py").write_text(
            _MANY_HOOKS.format(m=callbacks), encoding="utf-8"
        )
        jobs: list[tuple[str, int]] = [("tree", n) for n in ns] + [("many", 0)]
        for tree in [*trees.values(), many]:  # unmeasured: bytecode caches, file cache
            _child(_SCALE, tree.home, tree.bundled)
        for index in range(rounds):
            if progress is not None:
                progress(f"scaling: round {index + 1}/{rounds}")
            for kind, n in rng.sample(jobs, len(jobs)):
                tree = trees[n] if kind == "tree" else many
                load, unload, count, full = _child(_SCALE, tree.home, tree.bundled)
                if count != tree.n or (kind == "tree" and full != tree.n):
                    raise RuntimeError(f"loaded {count} plugins of {tree.n}, {full} in full")
                if kind == "tree":
                    results.load_ms.setdefault(n, []).append(load)
                    results.unload_ms.setdefault(n, []).append(unload)
                else:
                    results.callbacks_ms.append(load)
    return results
