"""``python -m benchmarks.dashboard``: how fast ``hermes dashboard`` starts and a page loads.

Measured, each ``--repeats`` times (the median and the spread are reported):

- **start-up**: ``hermes dashboard --port 0`` in a fresh process, from its start until its
  address is printed and ``/api/status`` answers;
- **in process**: ``start_dashboard(pm)`` for a loaded manager, until it listens;
- **API**: one request of ``/api/dashboard/plugins`` and of ``/api/dashboard/hooks``;
- **page load**: the plugins page in headless Chromium, from navigation until its table is
  drawn (skipped without Chromium).

The home has ``--plugins`` generated plugins, all enabled. Results go to
``docs/performance-dashboard.md`` (``--doc`` elsewhere; ``--quick`` prints only).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from benchmarks.processes import CHECKOUT
from benchmarks.startup import build_plugin_tree, hermes_argv

DOC = CHECKOUT / "docs" / "performance-dashboard.md"


def _timed(run: Callable[[], object], repeats: int) -> list[float]:
    found = []
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        found.append((time.perf_counter() - started) * 1000)
    return found


def _cli_startup(home: Path, bundled: Path, repeats: int) -> list[float]:
    import httpx

    env = {**os.environ, "HERMES_HOME": str(home), "HERMES_BUNDLED_PLUGINS": str(bundled)}
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        process = subprocess.Popen(
            [*hermes_argv(), "dashboard", "--port", "0"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        try:
            assert process.stdout is not None
            line = process.stdout.readline()
            found = re.search(r"(http://[^/\s]+)/", line)
            if found is None:
                raise RuntimeError(f"hermes dashboard printed {line!r}")
            httpx.get(found.group(1) + "/api/status", timeout=10).raise_for_status()
            times.append((time.perf_counter() - started) * 1000)
        finally:
            process.terminate()
            process.wait(10)
    return times


def _page_load(url: str, repeats: int) -> list[float] | None:
    sys.path.insert(0, str(CHECKOUT / "tests"))
    from chromium import Chromium, find_chromium

    executable = find_chromium()
    if executable is None:
        return None
    browser = Chromium(executable)
    try:
        page = browser.new_page()
        page.goto(url)  # the token's cookie, once
        times = []
        for _ in range(repeats):
            started = time.perf_counter()
            page.goto(url.partition("?")[0])
            page.wait_for("document.querySelector('tr[data-plugin]')")
            times.append((time.perf_counter() - started) * 1000)
        page.close()
        return times
    finally:
        browser.close()


def _row(name: str, times: list[float] | None) -> str:
    if not times:
        return f"| {name} | not measured (no Chromium) | |"
    spread = f"{min(times):.1f} to {max(times):.1f}"
    return f"| {name} | {statistics.median(times):.1f} ms | {spread} ms |"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.dashboard", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="3 repeats, print only")
    parser.add_argument("--repeats", type=int, help="repeats of each measure (default 9)")
    parser.add_argument("--plugins", type=int, default=20, help="generated plugins (20)")
    parser.add_argument("--doc", type=Path, help="where to write the results")
    options = parser.parse_args(argv)
    repeats = options.repeats or (3 if options.quick else 9)
    doc = options.doc or (None if options.quick else DOC)

    import httpx

    from hermes_hooks.dashboard.server import start_dashboard
    from hermes_hooks.host.runtime import create_manager

    with tempfile.TemporaryDirectory() as folder:
        tree = build_plugin_tree(Path(folder), options.plugins)
        home = tree.home
        os.environ["HERMES_HOME"] = str(home)
        os.environ["HERMES_BUNDLED_PLUGINS"] = str(tree.bundled)
        cli = _cli_startup(home, tree.bundled, repeats)
        pm = create_manager(home)
        servers = []
        in_process = _timed(lambda: servers.append(start_dashboard(pm)), repeats)
        for server in servers[1:]:
            server.stop()
        server = servers[0]
        client = httpx.Client(base_url=server.base_url)
        client.get(server.url)  # the cookie
        plugins = _timed(lambda: client.get("/api/dashboard/plugins").raise_for_status(), repeats)
        hooks = _timed(lambda: client.get("/api/dashboard/hooks").raise_for_status(), repeats)
        page = _page_load(server.url, repeats)
        server.stop()
    lines = [
        "# The dashboard's performance",
        "",
        "Made by `python -m benchmarks.dashboard` (see its docstring for what is measured), "
        f"with {options.plugins} plugins enabled, {repeats} repeats each, on this project's "
        "2-core machine.",
        "",
        "| measure | median | range |",
        "| --- | --- | --- |",
        _row("`hermes dashboard` start-up, until `/api/status` answers", cli),
        _row("`start_dashboard(pm)`, in process", in_process),
        _row("`GET /api/dashboard/plugins`", plugins),
        _row("`GET /api/dashboard/hooks`", hooks),
        _row("the plugins page in headless Chromium, until its table is drawn", page),
        "",
    ]
    text = "\n".join(lines)
    print(text)
    if doc is not None:
        doc.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
