"""``hermes chat`` as people use it: on a real terminal (a pty), through a pipe, woken by plugins.

The terminal tests run the real command in a subprocess on a pseudo-terminal and type at it:
line editing and history come from prompt_toolkit, Ctrl-C ends with 130. The pipe tests check
that an idle ``ctx.inject_message`` runs as the next input at once, and that a reader that
goes away (``| head``) ends the command quietly.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from cli_support import clean_env
from homes import clean_home as home  # noqa: F401  (the fixture)
from plugin_builders import user_plugin, write_config
from terminal_support import Terminal

# Injects one message when the test says so (the trigger file appears): while the chat waits
# for the person's next line, long after the session started.
INJECTOR = """\
import threading, time
from pathlib import Path

def register(ctx):
    trigger = ctx.hermes_home / "trigger"

    def later():
        for _ in range(1200):
            if trigger.exists() and ctx.inject_message("run `echo injected`"):
                return
            time.sleep(0.05)

    threading.Thread(target=later, daemon=True).start()
"""


def test_on_a_terminal_lines_are_edited_and_the_history_is_kept(home: Path) -> None:
    term = Terminal(home)
    term.prompt()
    term.type("run `echo firstt`\x1b[D\x7f\r")  # Left, Backspace: the typo is gone
    term.expect("Ran `echo first` (exit code 0)")
    term.prompt()
    term.type("\x1b[A\r")  # Up: the line before, again
    term.expect("Ran `echo first` (exit code 0)")
    term.prompt()
    term.type("/exit\r")
    term.expect("Bye.")
    assert term.wait() == 0
    history = (home / "chat_history").read_text(encoding="utf-8")
    assert "+run `echo first`" in history

    again = Terminal(home)  # the history survives the process
    again.prompt()
    again.type("\x1b[A\x1b[A\r")
    again.expect("Ran `echo first` (exit code 0)")
    again.prompt()
    again.type("\x04")  # Ctrl-D on an empty line ends the chat
    assert again.wait() == 0


def test_bare_hermes_on_a_terminal_is_the_chat(home: Path) -> None:
    term = Terminal(home, "--debug")  # no command: HERMES_PLUGINS_DEBUG=1 hermes, say
    term.expect("hermes chat on offline/")
    term.prompt()
    term.type("/exit\r")
    term.expect("Bye.")
    assert term.wait() == 0


def test_ctrl_c_ends_the_chat_with_130_on_a_new_line(home: Path) -> None:
    term = Terminal(home)
    term.prompt()
    term.type("half a line")
    term.expect("half a line")
    term.type("\x03")
    assert term.wait() == 130
    assert "Traceback" not in term.seen


def test_an_idle_injection_runs_at_once_on_a_terminal(home: Path) -> None:
    user_plugin(home, "injector", INJECTOR)
    write_config(home, ["injector"])
    term = Terminal(home)
    term.prompt()
    time.sleep(0.2)  # the line editor waits
    (home / "trigger").touch()
    term.expect("Ran `echo injected` (exit code 0)")  # nobody typed anything
    term.prompt()
    term.type("/exit\r")
    term.expect("Bye.")
    assert term.wait() == 0


def test_an_idle_injection_runs_at_once_through_a_pipe(home: Path) -> None:
    user_plugin(home, "injector", INJECTOR)
    write_config(home, ["injector"])
    chat = subprocess.Popen(
        [sys.executable, "-m", "hermes_hooks", "chat"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=clean_env(home),
        text=True,
    )
    assert chat.stdout is not None
    assert chat.stdout.readline().startswith("hermes chat on ")  # the reader waits
    (home / "trigger").touch()
    assert chat.stdout.readline() == "Ran `echo injected` (exit code 0):\n"
    out, err = chat.communicate("/exit\n", timeout=60)
    assert chat.returncode == 0, err
    assert "Bye." in out


def test_a_reader_that_goes_away_ends_the_command_quietly(home: Path) -> None:
    turns = "".join(f"run `echo {n}`\n" for n in range(40))
    done = subprocess.run(
        f"{sys.executable} -m hermes_hooks chat | head -n 1",
        shell=True,
        input=turns,
        env=clean_env(home),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.stdout.startswith("hermes chat on offline/")
    assert done.stderr == ""
