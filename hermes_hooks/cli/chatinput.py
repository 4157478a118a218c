"""Reading ``hermes chat``'s input: a line editor on a terminal, plain lines otherwise.

Both readers can be *woken* from another thread: a plugin's ``ctx.inject_message`` while the
chat waits for the person's next line runs as the next input at once (the seeds: "queued as
the next input"), instead of waiting behind a blocking ``input()``.

- :class:`TerminalReader`: prompt_toolkit (as Hermes uses), with line editing and a history
  kept in ``$HERMES_HOME/chat_history``; Up and Down walk it.
- :class:`StreamReader`: lines of a stream that is not a terminal (a pipe, a file), read by a
  daemon thread so that a wake-up does not wait for the next line.
"""

from __future__ import annotations

import queue
import threading
from pathlib import Path
from typing import IO, TYPE_CHECKING, Final, Protocol

if TYPE_CHECKING:
    from prompt_toolkit import PromptSession

__all__ = ["HISTORY_FILE", "WAKE", "LineReader", "StreamReader", "TerminalReader", "Woken"]

HISTORY_FILE: Final = "chat_history"
"""The history of ``hermes chat`` on a terminal, in the Hermes home."""


class Woken:
    """What :meth:`LineReader.read` returns when :meth:`LineReader.wake` was called."""

    def __repr__(self) -> str:
        return "WAKE"


WAKE: Final = Woken()


class LineReader(Protocol):
    """Where ``hermes chat`` reads the person's lines."""

    def read(self, prompt: str) -> str | Woken | None:
        """Return the next line (without its newline), :data:`WAKE`, or ``None`` at the end."""
        ...

    def wake(self) -> None:
        """Make the current (or next) :meth:`read` return :data:`WAKE`; from any thread."""
        ...


class StreamReader:
    """Lines of a stream that is not a terminal, read ahead by a daemon thread.

    :param stream: the stream, ``sys.stdin`` in ``hermes chat``.
    """

    def __init__(self, stream: IO[str]) -> None:
        self._lines: queue.Queue[str | Woken | None] = queue.Queue()
        self._thread = threading.Thread(
            target=self._pump, args=(stream,), name="hermes-chat-input", daemon=True
        )
        self._thread.start()

    def _pump(self, stream: IO[str]) -> None:
        try:
            for line in stream:
                self._lines.put(line.rstrip("\r\n"))
        except (OSError, ValueError):  # the stream was closed under us
            pass
        self._lines.put(None)

    def read(self, prompt: str) -> str | Woken | None:
        item = self._lines.get()
        if item is None:
            self._lines.put(None)  # the end stays the end for every later read
        return item

    def wake(self) -> None:
        self._lines.put(WAKE)


class TerminalReader:
    """A prompt_toolkit line editor with a persistent history.

    :param history: the history file; its folder is created when missing.
    """

    def __init__(self, history: Path) -> None:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.history import FileHistory

        history.parent.mkdir(parents=True, exist_ok=True)
        self._session: PromptSession[object] = PromptSession(history=FileHistory(str(history)))
        self._woken = threading.Event()

    def read(self, prompt: str) -> str | Woken | None:
        """Return the next line; raises ``KeyboardInterrupt`` on Ctrl-C, ``None`` on Ctrl-D."""
        if self._woken.is_set():
            self._woken.clear()
            return WAKE
        try:
            answer = self._session.prompt(prompt, pre_run=self._exit_if_woken)
        except EOFError:
            return None
        if isinstance(answer, Woken):
            self._woken.clear()
            return WAKE
        return str(answer)

    def _exit_if_woken(self) -> None:
        # Run when the prompt starts: a wake-up that came just before it must not be lost.
        app = self._session.app
        done = app.future is None or app.future.done()
        if self._woken.is_set() and not done:
            app.exit(result=WAKE)

    def wake(self) -> None:
        self._woken.set()
        app = self._session.app
        if app.is_running and app.loop is not None:
            app.loop.call_soon_threadsafe(self._exit_if_woken)
