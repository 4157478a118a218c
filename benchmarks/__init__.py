"""Benchmarks of hermes-hooks against pluggy and plain loops (docs/performance.md, issue 7).

Run every one and regenerate ``docs/performance.md`` and its chart with ``python -m
benchmarks``; ``python -m benchmarks --quick`` is a smoke run. Not part of the test suite:
tests never assert timings.
"""
