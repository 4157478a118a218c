"""``hermes chat`` on a pseudo-terminal as a good REPL: Ctrl-C cancels the running request and
returns to the prompt, the model's work and each tool call are shown as they happen (a block
as blocked), and colour follows the terminal and NO_COLOR/FORCE_COLOR/--color."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from cli_support import clean_env
from host_helpers import ChatServer, chat_server
from plugin_builders import user_plugin, write_config
from terminal_support import Terminal

__all__ = ["chat_server"]

NO_RM = """\
def register(ctx):
    def guard(tool_name, args, **kwargs):
        if "rm -rf" in args.get("command", ""):
            return {"action": "block", "message": "rm -rf is not allowed here"}
        return None
    ctx.register_hook("pre_tool_call", guard)
"""


def test_ctrl_c_cancels_the_request_and_the_chat_goes_on(
    tmp_path: Path, chat_server: ChatServer
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    model = {"provider": "openai-compatible", "base_url": chat_server.base_url, "name": "m"}
    write_config(home, model=model)
    chat_server.reply_text("too late")
    status, body, headers, _ = chat_server.replies.pop()
    chat_server.reply(body, status, headers=headers, delay=30.0)  # a model that takes long
    chat_server.reply_text("the second answer")
    term = Terminal(home, controlling=True)
    term.prompt()
    term.type("first question\r")
    term.expect("working")  # something shows that the model works
    deadline = time.monotonic() + 30
    while not chat_server.requests:  # Ctrl-C while the request is out, not before it
        assert time.monotonic() < deadline, "the model request never came"
        time.sleep(0.02)
    term.type("\x03")
    term.expect("(cancelled: Ctrl-C again or Ctrl-D ends the chat)")
    term.prompt()
    term.type("second question\r")
    term.expect("the second answer")
    term.prompt()
    term.type("\x04")
    assert term.wait() == 0
    assert "too late" not in term.seen


def test_tool_calls_and_blocks_are_shown_as_they_happen(tmp_path: Path) -> None:
    home = tmp_path / "home"
    user_plugin(home, "no-rm", NO_RM)
    write_config(home, ["no-rm"])
    term = Terminal(home)
    term.prompt()
    term.type("run `echo shown`\r")
    term.expect("→ terminal(command='echo shown')")
    term.expect("✓ done")
    term.expect("Ran `echo shown` (exit code 0)")
    term.prompt()
    term.type("run `rm -rf build`\r")
    term.expect("→ terminal(command='rm -rf build')")
    screen = term.expect("⊘ blocked by no-rm: rm -rf is not allowed here")
    assert "failed" not in screen
    term.prompt()
    term.type("/exit\r")
    assert term.wait() == 0


def _list(home: Path, *args: str, **env: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "hermes_hooks", *args, "plugins", "list"],
        env={k: v for k, v in clean_env(home, **env).items() if k not in env or env[k]},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return done.stdout


def test_colour_on_a_terminal_none_in_a_pipe_and_the_switches(tmp_path: Path) -> None:
    home = tmp_path / "home"
    user_plugin(home, "no-rm", NO_RM)
    write_config(home, ["no-rm"])
    assert "\x1b[" not in _list(home)  # a pipe
    assert "\x1b[32menabled" in _list(home, FORCE_COLOR="1")
    assert "\x1b[" not in _list(home, FORCE_COLOR="1", NO_COLOR="1")
    assert "\x1b[" in _list(home, "--color", "always", NO_COLOR="1")
    term = Terminal(home, "plugins", "list")
    assert "\x1b[32menabled" in term.expect("enabled")
    assert term.wait() == 0
