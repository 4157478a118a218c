"""A plugin's thread that never ends does not keep ``hermes`` running, and is named."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from cli_support import clean_env
from homes import clean_home as home  # noqa: F401  (the fixture)
from plugin_builders import user_plugin, write_config

from hermes_hooks.cli.lifetime import GRACE_SECONDS

SLEEPER = """\
import signal, threading, time

def nap():
    time.sleep(600)

def on_term(number, frame):
    pass

def register(ctx):
    signal.signal(signal.SIGTERM, on_term)
    threading.Thread(target=nap, name="napper").start()  # not a daemon
"""

QUICK = """\
import threading, time

def register(ctx):
    threading.Thread(target=time.sleep, args=(0.3,), name="quick").start()
"""


def hermes(home: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "hermes_hooks", *args],
        env=clean_env(home),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return done, time.monotonic() - started


def sleeper_home(home: Path) -> None:
    # load_timeout: 0 loads on the main thread, where a plugin may set a signal handler.
    user_plugin(home, "sleeper", SLEEPER)
    write_config(home, text="plugins:\n  enabled: [sleeper]\n  load_timeout: 0\n")


def test_a_thread_left_running_is_named_and_the_command_exits(home: Path) -> None:
    sleeper_home(home)
    done, _ = hermes(home, "-z", "run `echo hi`")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Ran `echo hi` (exit code 0):\nhi\n"
    assert "exiting although 1 thread(s) still run" in done.stderr
    assert "thread 'napper', started by plugin 'sleeper': nap (" in done.stderr
    assert "SIGTERM handler set by plugin 'sleeper': on_term (" in done.stderr


def test_the_exit_code_of_the_command_is_kept(home: Path) -> None:
    sleeper_home(home)
    done, _ = hermes(home, "plugins", "info", "nosuch")
    assert done.returncode == 1
    assert "thread 'napper', started by plugin 'sleeper'" in done.stderr


def test_a_thread_that_ends_within_the_grace_period_is_waited_for(home: Path) -> None:
    user_plugin(home, "quick", QUICK)
    write_config(home, ["quick"])
    done, _ = hermes(home, "-z", "run `echo hi`")
    assert done.returncode == 0
    assert "still run" not in done.stderr
    assert GRACE_SECONDS >= 1.0
