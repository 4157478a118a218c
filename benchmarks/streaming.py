"""``python -m benchmarks.streaming``: what a stream observer costs the token path, and what a
shell hook adds to its script's own run time (issue 24).

- ``stream``: the time :meth:`StreamRun.delta` takes per delta on the token path with k
  ``on_stream_delta`` implementations registered (k = 0, 1, 5), the implementations being
  guarded by the manager as always. One variant's observer blocks until the round ends, so the
  figure shows that a slow observer costs the token path nothing more. Budget: under 5 µs per
  delta for one observer, minus the cost with none.
- ``shell``: a ``pre_tool_call`` shell hook whose script does nothing (``/bin/sh`` exiting 0),
  called through ``pm.hook.pre_tool_call``, against ``subprocess.run`` of the same command
  with the same stdin; the overhead is the difference of the medians.

The results go between this module's markers in ``docs/performance.md`` (``--doc``), the rest
of the page untouched.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

BEGIN: Final = "<!-- benchmarks.streaming: begin -->"
END: Final = "<!-- benchmarks.streaming: end -->"
BUDGET_US: Final = 5.0


def _manager(home: Path, observers: int, gate: threading.Event | None) -> Any:
    from hermes_hooks import hookimpl
    from hermes_hooks.plugins.manager import PluginManager

    pm = PluginManager(home)
    for index in range(observers):

        class Observer:
            @hookimpl
            def on_stream_delta(self, delta: str, kind: str) -> None:
                if gate is not None:
                    gate.wait(30)

        pm.register(Observer(), name=f"observer-{index}")
    return pm


def measure_stream(deltas: int, rounds: int) -> list[dict[str, Any]]:
    """Return, per variant, the median microseconds one delta costs the token path."""
    from hermes_hooks.host.streaming import StreamObservers

    variants = [("0 observers", 0, False), ("1 observer", 1, False), ("5 observers", 5, False)]
    variants.append(("1 observer that blocks", 1, True))
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for label, count, blocking in variants:
            samples = []
            for _ in range(rounds):
                gate = threading.Event() if blocking else None
                observers = StreamObservers(_manager(Path(folder), count, gate))
                run = observers.start(turn_id="t", iteration=1, session_id="s")
                started = time.perf_counter()
                for _ in range(deltas):
                    run.delta("token ", "text")
                samples.append((time.perf_counter() - started) / deltas * 1e6)
                if gate is not None:
                    gate.set()
                observers.close()
            rows.append({"variant": label, "us_per_delta": statistics.median(samples)})
    return rows


def measure_shell(runs: int) -> dict[str, float]:
    """Return the median milliseconds of a do-nothing shell hook, and of its bare command."""
    from hermes_hooks.host import create_manager
    from hermes_hooks.host.shell_hooks import install_shell_hooks, payload_for

    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder)
        script = home / "noop.sh"
        script.write_text("#!/bin/sh\nexit 0\n")
        script.chmod(0o755)
        config = {"hooks": {"pre_tool_call": [{"command": str(script)}]}}
        pm = create_manager(home, load=False)
        install_shell_hooks(pm, config, accept=True)
        args = {"tool_name": "terminal", "args": {"command": "ls"}}
        stdin = payload_for("pre_tool_call", args)
        hook: list[float] = []
        bare: list[float] = []

        def run_bare() -> None:
            started = time.perf_counter()
            subprocess.run([str(script)], input=stdin, text=True, capture_output=True, check=False)
            bare.append((time.perf_counter() - started) * 1000)

        def run_hook() -> None:
            started = time.perf_counter()
            pm.hook.pre_tool_call(
                tool_name="terminal",
                args={"command": "ls"},
                task_id="",
                session_id="",
                tool_call_id="",
                turn_id="",
                api_request_id="",
                middleware_trace=[],
                telemetry_schema_version="hermes.observer.v1",
            )
            hook.append((time.perf_counter() - started) * 1000)

        for index in range(runs):  # alternate which goes first, so neither gains from order
            first, second = (run_bare, run_hook) if index % 2 else (run_hook, run_bare)
            first()
            second()
    return {
        "hook_ms": statistics.median(hook),
        "bare_ms": statistics.median(bare),
        "overhead_ms": statistics.median(hook) - statistics.median(bare),
    }


def render(stream: list[dict[str, Any]], shell: dict[str, float], quick: bool) -> str:
    """Return the Markdown block written into the performance page."""
    base = stream[0]["us_per_delta"]
    one = stream[1]["us_per_delta"] - base
    verdict = "within" if one < BUDGET_US else "OVER"
    lines = [
        BEGIN,
        "",
        f"### Stream observers and shell hooks{' (quick run)' if quick else ''}",
        "",
        f"Budget: one stream observer costs the token path under {BUDGET_US:g} µs per delta "
        f"(beyond the cost with none): **{one:.2f} µs, {verdict} budget**. Measured by "
        "`python -m benchmarks.streaming`.",
        "",
        "| variant | µs per delta on the token path |",
        "| --- | --- |",
    ]
    lines += [f"| {row['variant']} | {row['us_per_delta']:.2f} |" for row in stream]
    lines += [
        "",
        "A shell hook whose script does nothing, through `pm.hook.pre_tool_call`, against "
        "`subprocess.run` of the same script with the same stdin (medians):",
        "",
        "| shell hook call | bare command | overhead |",
        "| --- | --- | --- |",
        f"| {shell['hook_ms']:.2f} ms | {shell['bare_ms']:.2f} ms "
        f"| {shell['overhead_ms']:.2f} ms |",
        "",
        END,
    ]
    return "\n".join(lines)


def write(doc: Path, block: str, begin: str = BEGIN, end: str = END) -> None:
    """Replace the block between ``begin`` and ``end`` in ``doc`` (or append it), keeping the
    rest; ``block`` holds the markers itself."""
    text = doc.read_text(encoding="utf-8") if doc.exists() else ""
    if begin in text and end in text:
        head, _, rest = text.partition(begin)
        _, _, tail = rest.partition(end)
        text = head + block + tail
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    doc.write_text(text, encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    """Run both measurements, print them, and write the block into ``--doc``."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.streaming")
    parser.add_argument("--quick", action="store_true", help="a smoke run: few rounds")
    parser.add_argument("--doc", type=Path, help="the page to write the results into")
    options = parser.parse_args(argv)
    quick = options.quick
    stream = measure_stream(deltas=2_000 if quick else 100_000, rounds=2 if quick else 15)
    shell = measure_shell(runs=3 if quick else 40)
    block = render(stream, shell, quick)
    print(block)
    print(json.dumps({"stream": stream, "shell": shell}), file=sys.stderr)
    if options.doc is not None:
        write(options.doc, block)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
