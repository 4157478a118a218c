"""Running the real ``hermes`` command on a pseudo-terminal: type keys, read the screen's text."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

from cli_support import clean_env


def _take_terminal() -> None:
    """In the child, after its new session: its stdin becomes its controlling terminal."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class Terminal:
    """``hermes chat`` on a pseudo-terminal: type keys, read the screen's text."""

    def __init__(
        self, home: Path, *args: str, env: dict[str, str] | None = None, controlling: bool = False
    ) -> None:
        """:param controlling: make the terminal the command's controlling terminal, so that
        Ctrl-C sends SIGINT as a real one does (otherwise only a key read can see it)."""
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
        env = {**clean_env(home, TERM="xterm", PROMPT_TOOLKIT_NO_CPR="1"), **(env or {})}
        env.pop("COLUMNS", None)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "hermes_hooks", *(args or ("chat",))],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
            close_fds=True,
            start_new_session=True,
            preexec_fn=_take_terminal if controlling else None,
        )
        os.close(slave)
        self.seen = ""

    def expect(self, text: str, timeout: float = 30.0) -> str:
        """Read until ``text`` has appeared (after what was expected before); return it all."""
        deadline = time.monotonic() + timeout
        while text not in self.seen:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"{text!r} never appeared; the terminal shows:\n{self.seen}")
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                try:
                    chunk = os.read(self.master, 4096).decode("utf-8", "replace")
                except OSError:  # the process ended and closed the terminal
                    chunk = ""
                if not chunk:
                    raise AssertionError(f"{text!r} never appeared; the chat ended:\n{self.seen}")
                self.seen += chunk
        before, _, after = self.seen.partition(text)
        self.seen = after
        return before + text

    def prompt(self) -> None:
        """Wait until the line editor has the terminal (it turns bracketed paste on)."""
        self.expect("\x1b[?2004h")

    def type(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    def wait(self, timeout: float = 30.0) -> int:
        try:
            return self.process.wait(timeout)
        finally:
            os.close(self.master)
