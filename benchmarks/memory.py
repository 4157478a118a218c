"""``python -m benchmarks.memory``: the builtin memory provider's ``prefetch`` at 10k, 100k facts.

For each size, a fresh home gets that many generated facts (sentences of words drawn from a
fixed vocabulary, written in batches, one transaction each), then the same user messages are
recalled two ways, alternating, many rounds:

- ``prefetch``: :meth:`BuiltinMemoryProvider.prefetch`, what the host calls once per user
  turn (the query's words, the FTS5 search, the formatted recall);
- ``bare sqlite3``: the same ``MATCH`` on the same database through a plain ``sqlite3``
  connection, the floor of the same query shape.

The budget (issue 14): ``prefetch`` under 20 ms at 100k facts. The ``LIKE`` fallback (a SQLite
without FTS5) is measured with ``--like``; it scans every fact, so it has no budget.
Timings are printed, never asserted by tests.
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final

from hermes_hooks.backends.memory.builtin import PREFETCH_LIMIT, BuiltinMemoryProvider
from hermes_hooks.backends.memory.store import (
    FTS_SEARCH_SQL,
    FactStore,
    db_path,
    fts5_available,
    fts_query,
    query_terms,
)

BUDGET_MS: Final = 20.0
"""``prefetch`` at 100k facts must take less than this (median)."""
_SYLLABLES: Final = ("ka", "ri", "to", "mo", "lu", "sen", "dar", "vi", "pel", "nor", "qua", "zi")
QUERIES: Final = (
    "Which editor do I use for Rust projects?",
    "What did we decide about the deployment on friday?",
    "remind me how the tests are run",
    "what is my favourite tea and where do I buy it",
    "Tell me about the database migration plan",
    "who reviews the pull requests on the billing service",
)

KNOWN: Final = (
    "The user edits Rust projects in Helix",
    "The deployment moved to friday mornings",
    "Tests are run with pytest -q",
    "The favourite tea is sencha, bought at the market",
)
"""Facts written first, so that every size has something the queries recall."""


def _vocabulary(size: int, rng: random.Random) -> list[str]:
    words = {"editor", "rust", "deployment", "friday", "tests", "tea", "database", "migration"}
    words |= {"billing", "service", "reviews", "pull", "requests", "plan", "favourite"}
    while len(words) < size:
        words.add("".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words)


def fill(home: Path, count: int, *, seed: int = 14, use_fts: bool = True) -> None:
    """Write ``count`` generated facts into ``home``'s builtin database."""
    rng = random.Random(seed)
    vocabulary = _vocabulary(5_000, rng)
    with FactStore(db_path(home), use_fts=use_fts) as store:
        store.add_many(KNOWN)
        batch: list[str] = []
        for n in range(count):
            words = rng.choices(vocabulary, k=rng.randint(6, 14))
            batch.append(f"Fact {n}: " + " ".join(words))
            if len(batch) == 10_000:
                store.add_many(batch)
                batch = []
        if batch:
            store.add_many(batch)


def _median_ms(timings: Sequence[int]) -> float:
    return statistics.median(timings) / 1e6


def _p95_ms(timings: Sequence[int]) -> float:
    ordered = sorted(timings)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))] / 1e6


def measure(home: Path, rounds: int, *, use_fts: bool = True) -> dict[str, float]:
    """Time ``prefetch`` and the bare query on ``home``'s facts; return the figures in ms."""
    provider = BuiltinMemoryProvider(use_fts=use_fts)
    provider.initialize("bench", hermes_home=str(home), platform="cli")
    bare = sqlite3.connect(db_path(home))
    expressions = [fts_query(query_terms(q)) for q in QUERIES]
    like_sql = ""

    def run_bare(index: int) -> object:
        if use_fts:
            return bare.execute(FTS_SEARCH_SQL, (expressions[index], PREFETCH_LIMIT)).fetchall()
        terms = query_terms(QUERIES[index])
        patterns = [f"%{term}%" for term in terms]
        score = " + ".join("(content LIKE ?)" for _ in patterns)
        sql = like_sql or (
            f"SELECT id, content FROM (SELECT *, ({score}) AS score FROM facts) "
            "WHERE score > 0 ORDER BY score DESC, id DESC LIMIT ?"
        )
        return bare.execute(sql, (*patterns, PREFETCH_LIMIT)).fetchall()

    calls: dict[str, Callable[[int], object]] = {
        "prefetch": lambda i: provider.prefetch(QUERIES[i], session_id="bench"),
        "bare": run_bare,
    }
    timings: dict[str, list[int]] = {name: [] for name in calls}
    for call in calls.values():  # warm the page cache and the statement cache
        for index in range(len(QUERIES)):
            call(index)
    for _ in range(rounds):
        for index in range(len(QUERIES)):
            for name, call in calls.items():
                started = time.perf_counter_ns()
                call(index)
                timings[name].append(time.perf_counter_ns() - started)
    recalled = provider.prefetch(QUERIES[0])
    provider.shutdown()
    bare.close()
    if not recalled.startswith("## Memory (builtin)"):
        raise RuntimeError(f"prefetch recalled nothing for {QUERIES[0]!r}: {recalled!r}")
    prefetch, floor = _median_ms(timings["prefetch"]), _median_ms(timings["bare"])
    return {
        "prefetch_ms": prefetch,
        "prefetch_p95_ms": _p95_ms(timings["prefetch"]),
        "bare_ms": floor,
        "ratio": prefetch / floor if floor else float("inf"),
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print its table; exit 1 when the budget is missed."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.memory", description=__doc__)
    parser.add_argument("--sizes", default="10000,100000", help="fact counts (comma-separated)")
    parser.add_argument("--rounds", type=int, default=50, help="rounds of the query set")
    parser.add_argument("--like", action="store_true", help="the LIKE fallback instead of FTS5")
    options = parser.parse_args(argv)
    use_fts = not options.like
    if use_fts and not fts5_available():
        print("this SQLite has no FTS5: run with --like", file=sys.stderr)
        return 2
    sizes = [int(part) for part in options.sizes.split(",") if part.strip()]
    search = "FTS5" if use_fts else "LIKE"
    print(f"builtin memory prefetch ({search}), {len(QUERIES)} queries x {options.rounds} rounds")
    print("| facts | prefetch median | prefetch p95 | bare sqlite3 | ratio |")
    print("| ---: | ---: | ---: | ---: | ---: |")
    missed = False
    for size in sizes:
        with tempfile.TemporaryDirectory(prefix="hermes-memory-bench-") as folder:
            home = Path(folder)
            fill(home, size, use_fts=use_fts)
            figures = measure(home, options.rounds, use_fts=use_fts)
        print(
            f"| {size:,} | {figures['prefetch_ms']:.3f} ms | {figures['prefetch_p95_ms']:.3f} ms "
            f"| {figures['bare_ms']:.3f} ms | {figures['ratio']:.2f}x |"
        )
        if use_fts and size >= 100_000 and figures["prefetch_ms"] >= BUDGET_MS:
            missed = True
    if use_fts and any(size >= 100_000 for size in sizes):
        verdict = "missed" if missed else "met"
        print(f"budget: prefetch under {BUDGET_MS:g} ms at 100k facts: {verdict}")
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
