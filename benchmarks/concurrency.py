"""``python -m benchmarks.concurrency``: many concurrent asyncio turns, bounded and not.

Each *turn* is what a host's tool step fires, awaited through the typed facade:
``apre_tool_call`` (a blocker that allows ``ls``), ``apost_tool_call`` (an observer) and
``atransform_tool_result`` (a redactor), with three plugins of each kind. ``--turns`` of them
(1,000 by default) run at once on one event loop, ``asyncio.gather``-ed, in four
configurations: the default bound (``plugins.hook_callback_timeout: 30``) or none (``0``), with
``Hooks(pm, concurrent_observers=True)`` or not. No plugin is slow, so every turn must be
allowed and redacted, and no plugin charged a failure.

The budget (issue 22): zero blocked or refused calls, and the bounded run's wall time within
1.2x of the same run with the bound off. Pin to one CPU (``taskset -c 0``) for figures that
mean something on a two-vCPU machine. Timings are printed, never asserted by tests.
``--no-gc`` runs with the garbage collector off: a bounded turn suspends until the worker's
results come back, so a thousand suspended turns keep their objects alive at once, and most
of what is left of the bound's cost is the collector walking them.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import statistics
import tempfile
import time
import types
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from hermes_hooks import hookimpl

BUDGET: Final = 1.2
BEGIN: Final = "<!-- benchmarks.concurrency: begin -->"
END: Final = "<!-- benchmarks.concurrency: end -->"
PLUGINS_PER_KIND: Final = 3


def _plugins() -> list[tuple[str, object]]:
    made: list[tuple[str, object]] = []
    for index in range(PLUGINS_PER_KIND):
        blocker = types.SimpleNamespace()

        @hookimpl
        def pre_tool_call(tool_name: str, args: dict[str, Any]) -> object:
            if "rm -rf" in str(args.get("command", "")):
                return {"action": "block", "message": "no rm -rf"}
            return None

        @hookimpl
        def post_tool_call(tool_name: str, result: str) -> None:
            return None

        @hookimpl
        def transform_tool_result(result: str) -> str | None:
            return result.replace("secret", "[redacted]") if "secret" in result else None

        blocker.pre_tool_call = pre_tool_call
        observer = types.SimpleNamespace(post_tool_call=post_tool_call)
        redactor = types.SimpleNamespace(transform_tool_result=transform_tool_result)
        made += [(f"blocker{index}", blocker), (f"observer{index}", observer)]
        made.append((f"redactor{index}", redactor))
    return made


def _manager(home: Path, timeout: float) -> Any:
    from hermes_hooks.plugins.manager import PluginManager

    home.mkdir(parents=True)
    (home / "config.yaml").write_text(
        f"plugins:\n  hook_callback_timeout: {timeout}\n", encoding="utf-8"
    )
    pm = PluginManager(home)
    pm.reload_config()
    for name, plugin in _plugins():
        pm.register(plugin, name=name)
    return pm


async def _turn(hooks: Any, index: int) -> tuple[bool, str]:
    args = {"command": f"ls /srv/{index}"}
    decision = await hooks.apre_tool_call(tool_name="terminal", args=args, session_id=str(index))
    result = "a secret listing"
    await hooks.apost_tool_call(tool_name="terminal", args=decision.args, result=result)
    text = await hooks.atransform_tool_result(tool_name="terminal", args=args, result=result)
    return decision.is_blocked, text


def run_once(pm: Any, turns: int, *, concurrent: bool) -> tuple[float, int, int]:
    """Run ``turns`` concurrent turns; return the wall time, blocked turns and wrong results."""
    from hermes_hooks import Hooks

    hooks = Hooks(pm, concurrent_observers=concurrent)

    async def main() -> list[tuple[bool, str]]:
        return await asyncio.gather(*(_turn(hooks, i) for i in range(turns)))

    started = time.perf_counter()
    outcomes = asyncio.run(main())
    elapsed = time.perf_counter() - started
    blocked = sum(1 for is_blocked, _ in outcomes if is_blocked)
    wrong = sum(1 for _, text in outcomes if text != "a [redacted] listing")
    return elapsed, blocked, wrong


def measure(turns: int, rounds: int) -> dict[tuple[float, bool], dict[str, float]]:
    """Interleave the four configurations ``rounds`` times; return their medians and counts."""
    figures: dict[tuple[float, bool], dict[str, float]] = {}
    logging.getLogger("hermes_hooks").setLevel(logging.ERROR)
    with tempfile.TemporaryDirectory(prefix="hermes-concurrency-bench-") as folder:
        managers = {
            (timeout, concurrent): _manager(Path(folder) / f"h{timeout}-{concurrent}", timeout)
            for timeout in (30.0, 0.0)
            for concurrent in (False, True)
        }
        times: dict[tuple[float, bool], list[float]] = {key: [] for key in managers}
        bad: dict[tuple[float, bool], int] = dict.fromkeys(managers, 0)
        for _ in range(rounds):
            for key, pm in managers.items():
                elapsed, blocked, wrong = run_once(pm, turns, concurrent=key[1])
                times[key].append(elapsed)
                bad[key] += blocked + wrong
        for key, pm in managers.items():
            failures = sum(pm.get_failures(name).count for name, _ in _plugins())
            figures[key] = {
                "seconds": statistics.median(times[key]),
                "bad": bad[key],
                "failures": failures,
            }
    return figures


def render(
    figures: dict[tuple[float, bool], dict[str, float]], turns: int, rounds: int, no_gc: bool
) -> tuple[str, bool]:
    """Return the Markdown block for the performance page, and whether the budget was missed."""
    collector = ", collector off" if no_gc else ""
    lines = [
        BEGIN,
        "",
        f"### {turns:,} concurrent asyncio turns",
        "",
        f"Median of {rounds} interleaved rounds{collector}, measured by "
        "`python -m benchmarks.concurrency` (pinned to one CPU for the published figures): "
        "`apre_tool_call`, `apost_tool_call` and `atransform_tool_result` with three plugins "
        "each, through `Hooks(pm)`.",
        "",
        "| concurrent observers | bound off | default bound | ratio | blocked or wrong "
        "| failures charged |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    missed = False
    for concurrent in (False, True):
        off, on = figures[(0.0, concurrent)], figures[(30.0, concurrent)]
        ratio = on["seconds"] / off["seconds"]
        bad = int(on["bad"] + off["bad"])
        charged = int(on["failures"] + off["failures"])
        missed = missed or bad > 0 or charged > 0 or ratio > BUDGET
        lines.append(
            f"| {'on' if concurrent else 'off'} | {off['seconds'] * 1000:.0f} ms "
            f"| {on['seconds'] * 1000:.0f} ms | {ratio:.2f}x | {bad} | {charged} |"
        )
    verdict = "missed" if missed else "met"
    lines += [
        "",
        f"Budget (issue 22): no blocked call, and the bounded run within {BUDGET:g}x of the "
        f"unbounded one: **{verdict}**.",
        "",
        END,
    ]
    return "\n".join(lines), missed


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark, print its table (and write it into ``--doc``); exit 1 when missed."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.concurrency", description=__doc__)
    parser.add_argument("--turns", type=int, default=1000, help="concurrent turns per run")
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds")
    parser.add_argument(
        "--no-gc", action="store_true", help="with the garbage collector off (to see its share)"
    )
    parser.add_argument("--doc", type=Path, help="the page to write the results into")
    options = parser.parse_args(argv)
    if options.no_gc:
        gc.disable()
    figures = measure(options.turns, options.rounds)
    block, missed = render(figures, options.turns, options.rounds, options.no_gc)
    print(block)
    if options.doc is not None:
        from benchmarks.streaming import write

        write(options.doc, block, BEGIN, END)
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
