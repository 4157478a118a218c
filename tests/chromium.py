"""A real headless Chromium for the browser tests, driven over the DevTools protocol.

One browser is started per test session (:func:`chromium`, with a fresh ``--user-data-dir``)
and each test gets its page with the cookies cleared (:func:`browser`). The protocol is spoken
over a WebSocket with the ``websockets`` package: ``Page.navigate``, ``Runtime.evaluate``,
``Page.captureScreenshot``. Without a Chromium (the Debian ``chromium`` package) the tests skip
saying so.
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CANDIDATES = ("chromium", "chromium-browser", "google-chrome")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1100,760",
    "--remote-debugging-port=0",
)


def find_chromium() -> str | None:
    """The Chromium executable, or ``None``."""
    override = os.environ.get("HERMES_TEST_CHROMIUM")
    if override:
        return override
    return next((found for name in CANDIDATES if (found := shutil.which(name))), None)


class Page:
    """One browser tab, spoken to over its DevTools WebSocket."""

    def __init__(self, url: str) -> None:
        from websockets.sync.client import connect

        self._connection = connect(url, max_size=64 * 1024 * 1024, open_timeout=10)
        self._ws = self._connection.__enter__()
        self._ids = itertools.count(1)
        self.send("Page.enable")
        self.send("Network.enable")

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        """Send a command and return its result (events meanwhile are dropped)."""
        ident = next(self._ids)
        self._ws.send(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            message = json.loads(self._ws.recv(timeout=30))
            if message.get("id") == ident:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                result: dict[str, Any] = message.get("result", {})
                return result

    def eval(self, expression: str) -> Any:
        """Evaluate JavaScript in the page (promises awaited) and return its value."""
        result = self.send(
            "Runtime.evaluate", expression=expression, awaitPromise=True, returnByValue=True
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result.get("result", {}).get("value")

    def goto(self, url: str) -> None:
        """Open ``url`` and wait for the document to load."""
        self.send("Page.navigate", url=url)
        time.sleep(0.05)
        self.wait_for("document.readyState === 'complete'")

    def wait_for(self, expression: str, timeout: float = 10.0) -> Any:
        """Wait until ``expression`` is truthy in the page."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                value = self.eval(f"!!({expression})")
            except RuntimeError:
                value = None
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"the page never had: {expression}\n"
                    + str(self.eval("document.body ? document.body.innerText.slice(0, 2000) : ''"))
                )
            time.sleep(0.05)

    def text(self, selector: str) -> str:
        """The text of the first element matching ``selector`` ("" when none)."""
        found = self.eval(f"(document.querySelector({json.dumps(selector)}) || {{}}).innerText")
        return str(found or "")

    def click(self, selector: str) -> None:
        """Click the first element matching ``selector``."""
        self.wait_for(f"document.querySelector({json.dumps(selector)})")
        self.eval(f"document.querySelector({json.dumps(selector)}).click()")

    def type(self, selector: str, text: str) -> None:
        """Set an input's value as typing would."""
        self.eval(
            f"(() => {{ const el = document.querySelector({json.dumps(selector)});"
            f" el.value = {json.dumps(text)};"
            " el.dispatchEvent(new Event('input', {bubbles: true})); })()"
        )

    def cookies(self) -> list[dict[str, Any]]:
        """The browser's cookies for the page."""
        found: list[dict[str, Any]] = self.send("Network.getCookies")["cookies"]
        return found

    def screenshot(self, path: Path) -> None:
        """Save the page as a small PNG (a palette of 64 colours)."""
        from PIL import Image

        raw = base64.b64decode(self.send("Page.captureScreenshot", format="png")["data"])
        path.parent.mkdir(parents=True, exist_ok=True)
        png = path.with_suffix(".full.png")
        png.write_bytes(raw)
        with Image.open(png) as image:
            image.convert("RGB").quantize(colors=64).save(path, optimize=True)
        png.unlink()

    def close(self) -> None:
        self._connection.__exit__(None, None, None)


class Chromium:
    """A running headless Chromium and its DevTools address."""

    def __init__(self, executable: str) -> None:
        self.profile = Path(tempfile.mkdtemp(prefix="hermes-chromium-"))
        scratch = self.profile / "tmp"  # what Chromium leaves in TMPDIR goes with the profile
        scratch.mkdir()
        self.process = subprocess.Popen(
            [executable, *FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "TMPDIR": str(scratch)},
        )
        port_file = self.profile / "DevToolsActivePort"
        deadline = time.monotonic() + 20
        while not port_file.is_file() or not port_file.read_text().strip():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.close()
                raise RuntimeError(f"{executable} did not start its DevTools endpoint")
            time.sleep(0.05)
        self.port = int(port_file.read_text().split()[0])

    def new_page(self) -> Page:
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}/json/new?about:blank", method="PUT"
        )
        with urllib.request.urlopen(request, timeout=10) as answer:
            target = json.loads(answer.read())
        return Page(target["webSocketDebuggerUrl"])

    def close(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        shutil.rmtree(self.profile, ignore_errors=True)


@pytest.fixture(scope="session")
def chromium() -> Iterator[Chromium]:
    """One headless Chromium for the whole session (skips when there is none)."""
    pytest.importorskip("websockets", reason="the browser tests need the websockets package")
    executable = find_chromium()
    if executable is None:
        pytest.skip("no Chromium installed (apt-get install chromium): browser tests skipped")
    browser = Chromium(executable)
    yield browser
    browser.close()


@pytest.fixture
def browser(chromium: Chromium) -> Iterator[Page]:
    """A fresh tab with no cookies."""
    page = chromium.new_page()
    page.send("Network.clearBrowserCookies")
    yield page
    page.close()
