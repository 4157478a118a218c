"""What ``hermes chat`` shows while a turn runs: that the model works, each tool call and its
outcome as it happens, and the answer as it streams.

:class:`ChatDisplay` is the session's :attr:`~hermes_hooks.host.session.Session.on_event`
listener. On a terminal a one-line indicator (``working…``) stands while the model or a tool
works and is erased before anything is printed, and each tool call is shown with its outcome;
off a terminal (a piped chat) only the answers are written. A model that streams gives
``text_delta`` events (``{"text": ...}``): their text is printed as it comes, and the turn's
answer is then not printed again.
"""

from __future__ import annotations

import json
import threading
from typing import IO, Any, Final

import click

__all__ = ["ChatDisplay"]

_FRAMES: Final = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
_ARGS_WIDTH: Final = 60


def _short_args(raw: object) -> str:
    """The arguments of a tool call in one short line (``command='ls -la'``)."""
    try:
        args = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        args = raw
    pairs = args.items() if isinstance(args, dict) else None
    text = ", ".join(f"{k}={v!r}" for k, v in pairs) if pairs is not None else str(args)
    return text if len(text) <= _ARGS_WIDTH else text[: _ARGS_WIDTH - 1] + "…"


class ChatDisplay:
    """Shows a running turn on *stream*; see the module's documentation.

    :param terminal: *stream* is a terminal: show the indicator.
    :param color: colour the outcome of tool calls.
    """

    def __init__(self, stream: IO[str], *, terminal: bool, color: bool) -> None:
        self.stream = stream
        self.terminal = terminal
        self.color = color
        self.streamed = False
        self.line_open = False
        self._lock = threading.Lock()
        self._label: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # -- the indicator ----------------------------------------------------------------------------

    def _spin(self) -> None:
        frame = 0
        while not self._stop.wait(0.1):
            with self._lock:
                if self._label is None:
                    return
                self.stream.write(f"\r{_FRAMES[frame % len(_FRAMES)]} {self._label}")
                self.stream.flush()
            frame += 1

    def working(self, label: str) -> None:
        """Show *label* (``working…``) until the next output, on a terminal."""
        if not self.terminal:
            return
        self.quiet()
        with self._lock:
            self._label = label
            self.stream.write(f"\r{_FRAMES[0]} {label}")
            self.stream.flush()
        self._stop = threading.Event()
        thread = threading.Thread(target=self._spin, name="hermes-chat-working", daemon=True)
        thread.start()
        self._thread = thread  # only once started: Ctrl-C may land in start()

    def quiet(self) -> None:
        """Erase the indicator, if one is shown."""
        thread = self._thread
        with self._lock:
            if self._label is not None:
                self.stream.write("\r\x1b[2K")
                self.stream.flush()
            self._label = None
        self._stop.set()
        if thread is not None and thread.ident is not None:
            thread.join()
        self._thread = None

    # -- the session's events ---------------------------------------------------------------------

    def _line(self, text: str, color: str | None = None) -> None:
        self.quiet()
        styled = click.style(text, fg=color) if self.color and color else text
        self.stream.write(styled + "\n")
        self.stream.flush()

    def start_turn(self) -> None:
        """Before a turn: nothing streamed yet, the model works."""
        self.streamed = self.line_open = False
        self.working("working…")

    def __call__(self, kind: str, data: dict[str, Any]) -> None:
        if not self.terminal and kind not in ("text_delta", "text_end"):
            return  # a piped chat is a script's: its output stays the answers alone
        try:
            self._show(kind, data)
        except OSError:  # the terminal went away: the turn goes on without its display
            self.terminal = False

    def _show(self, kind: str, data: dict[str, Any]) -> None:
        if kind == "model_request":
            if not self.streamed:
                self.working("working…")
        elif kind == "tool_start":
            name = str(data.get("tool_name", "?"))
            self._line(f"→ {name}({_short_args(data.get('args'))})", "cyan")
            self.working(f"running {name}…")
        elif kind == "tool_call":
            self._outcome(data)
            self.working("working…")
        elif kind == "text_delta":
            self.quiet()
            self.streamed = self.line_open = True
            self.stream.write(str(data.get("text", "")))
            self.stream.flush()
        elif kind == "text_end":  # one streamed message is over: its line ends
            self._end_line()
        elif kind in ("turn_end", "context_warning", "memory_warning"):
            self.quiet()
            if kind != "turn_end":
                self._line(f"warning: {data.get('message', '')}", "yellow")

    def _outcome(self, data: dict[str, Any]) -> None:
        status = data.get("status")
        took = f" ({data.get('duration_ms', 0)} ms)"
        if status == "blocked":
            who = data.get("decided_by")
            why = data.get("error_message") or "blocked"
            by = f" by {who}" if who else ""
            self._line(f"  ⊘ blocked{by}: {why}", "yellow")
        elif status == "error":
            why = data.get("error_message") or data.get("error_type") or "failed"
            self._line(f"  ✗ failed{took}: {why}", "red")
        else:
            self._line(f"  ✓ done{took}", "green")

    def end_turn(self) -> None:
        """After a turn (answered, failed or cancelled): no indicator left, a streamed answer
        ends its line."""
        self.quiet()
        self._end_line()

    def _end_line(self) -> None:
        if self.line_open:
            self.line_open = False
            self.stream.write("\n")
            self.stream.flush()
