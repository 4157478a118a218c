"""``python -m benchmarks``: run every benchmark and write ``docs/performance.md`` and its chart.

``--quick`` is a smoke run (few rounds, small N, short timings): its figures are printed, and
written only where ``--doc`` says, never over the committed results.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from benchmarks.budgets import run_bounded, run_scaling, run_shims
from benchmarks.dispatch import CASE_KINDS, run_dispatch
from benchmarks.processes import CHECKOUT
from benchmarks.report import Report, render, write_report
from benchmarks.startup import run_commands, run_startup

_DOC: Final = CHECKOUT / "docs" / "performance.md"
_PARTS: Final = ("dispatch", "bounded", "shims", "scaling", "startup", "commands", "claude-hook")


def _ints(text: str) -> list[int]:
    try:
        return [int(part) for part in text.split(",") if part.strip()]
    except ValueError as exc:
        raise argparse.ArgumentTypeError(
            f"expected numbers separated by commas, got {text!r}"
        ) from exc


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description=(
            "Benchmarks of hermes-hooks against pluggy and plain loops (docs/performance.md)."
        ),
    )
    parser.add_argument("--quick", action="store_true", help="a smoke run: few rounds, small N")
    parser.add_argument(
        "--only", choices=_PARTS, action="append", help="run only this part (repeatable)"
    )
    parser.add_argument("--ks", type=_ints, help="implementation counts (default 0,1,5,20)")
    parser.add_argument("--ns", type=_ints, help="plugin counts (default 10,100,500)")
    parser.add_argument(
        "--scaling-ns", type=_ints, help="plugin counts of the scaling part (default 100,2000)"
    )
    parser.add_argument(
        "--callbacks",
        type=int,
        help="register_hook calls of the one-plugin scaling case (default 100000)",
    )
    parser.add_argument("--rounds", type=int, help="dispatch rounds (default 25; quick 3)")
    parser.add_argument("--repeats", type=int, help="process rounds (default 15; quick 2)")
    parser.add_argument("--seed", type=int, help="seed of the shuffles")
    parser.add_argument(
        "--doc",
        type=Path,
        help=f"the document to write (default {_DOC.relative_to(_DOC.parent.parent)}; "
        "with --quick, nothing is written unless given)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmarks chosen on the command line; return the exit code."""
    options = _parser().parse_args(argv)
    quick = options.quick
    parts = options.only or list(_PARTS)
    ks = options.ks or ([0, 1, 5, 20])
    ns = options.ns or ([10, 50] if quick else [10, 100, 500])
    rounds = options.rounds or (3 if quick else 25)
    repeats = options.repeats or (2 if quick else 15)
    doc: Path | None = options.doc or (None if quick else _DOC)

    def progress(message: str) -> None:
        print(f"  {message}", file=sys.stderr, flush=True)

    import hermes_hooks

    if not Path(hermes_hooks.__file__ or "").resolve().is_relative_to(CHECKOUT):
        print(
            f"warning: hermes_hooks comes from {hermes_hooks.__file__}, not {CHECKOUT}; "
            "run from the checkout's root",
            file=sys.stderr,
        )
    started = time.perf_counter()
    report = Report("quick" if quick else "full", None, None, None)
    positive = [k for k in ks if k > 0] or [1]
    if "dispatch" in parts:
        print("dispatch ...", file=sys.stderr, flush=True)
        report.dispatch = run_dispatch(
            ks,
            kinds=CASE_KINDS,
            rounds=rounds,
            target_seconds=0.002 if quick else 0.02,
            seed=options.seed,
            progress=progress,
        )
    if "bounded" in parts:
        print("bounded calls ...", file=sys.stderr, flush=True)
        report.bounded = run_bounded(
            positive if options.ks else [1, 5, 20],
            rounds=rounds,
            target_seconds=0.002 if quick else 0.05,
            seed=options.seed,
            progress=progress,
        )
    if "shims" in parts:
        print("register_hook callbacks ...", file=sys.stderr, flush=True)
        report.shims = run_shims(
            max(positive) if options.ks else 20,
            rounds=rounds,
            target_seconds=0.002 if quick else 0.05,
            seed=options.seed,
            progress=progress,
        )
    if "scaling" in parts:
        print("loading and unloading at scale ...", file=sys.stderr, flush=True)
        report.scaling = run_scaling(
            options.scaling_ns or ([10, 40] if quick else [100, 2000]),
            rounds=repeats if quick else max(3, repeats // 3),
            callbacks=options.callbacks or (1000 if quick else 100_000),
            seed=options.seed,
            progress=progress,
        )
    if "startup" in parts:
        print("start-up with N plugins ...", file=sys.stderr, flush=True)
        report.startup = run_startup(ns, repeats=repeats, seed=options.seed, progress=progress)
    if "commands" in parts:
        print("command start ...", file=sys.stderr, flush=True)
        report.commands = run_commands(
            repeats=repeats + 5 if not quick else repeats, seed=options.seed, progress=progress
        )
    claude = None
    if "claude-hook" in parts:
        from benchmarks.claude_hook import run_claude_hook

        print("hermes claude-hook ...", file=sys.stderr, flush=True)
        claude = run_claude_hook(
            repeats=repeats + 5 if not quick else repeats, seed=options.seed, progress=progress
        )
    only_claude = set(parts) == {"claude-hook"}
    if doc is None:
        if not only_claude:
            print(render(report, None))
    elif not only_claude:
        written, chart = write_report(report, doc)
        print(f"wrote {written}" + (f" and {chart}" if chart else ""), file=sys.stderr)
    if claude is not None:
        from benchmarks.claude_hook import render_claude_hook, write_claude_hook
        from benchmarks.report import machine

        if doc is None:
            print(render_claude_hook(claude, machine()))
        else:
            print(f"wrote {write_claude_hook(claude, doc, machine())}", file=sys.stderr)
    print(f"done in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
