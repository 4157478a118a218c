"""The package imports where the POSIX-only modules are missing (Windows), module by module.

What is tested is POSIX (Linux in CI; the classifiers say so), but nothing may fail at import
elsewhere: a module of the standard library that exists only on POSIX is imported where it is
used, behind a check, never at a module's top. The test imports every module of the package in
a fresh interpreter and lists every import of such a module that one of its files makes.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

POSIX_ONLY = (
    "fcntl", "termios", "tty", "pty", "pwd", "grp", "resource", "posix", "_posixsubprocess"
)  # fmt: skip
"""Standard modules Windows does not have."""

SCRIPT = textwrap.dedent(
    """
    import importlib, pkgutil, sys

    BLOCKED = set(sys.argv[1].split(","))
    ROOTS = tuple(sys.argv[2:])
    found = []

    class Watch:
        # Who imports a POSIX-only module while the package is imported: the standard library
        # and the dependencies choose by platform themselves, the package's modules must not
        # import one at their top.
        def find_spec(self, name, path=None, target=None):
            if name.partition(".")[0] not in BLOCKED:
                return None
            frame = sys._getframe(1)
            while frame is not None and frame.f_code.co_filename.startswith("<frozen"):
                frame = frame.f_back
            if frame is not None and frame.f_code.co_filename.startswith(ROOTS):
                found.append(f"{frame.f_code.co_filename}:{frame.f_lineno} imports {name}")
            return None

    sys.meta_path.insert(0, Watch())
    for package_name in ("hermes_hooks", "hermes_plugins"):
        package = importlib.import_module(package_name)
        for info in pkgutil.walk_packages(package.__path__, package_name + "."):
            if not info.name.endswith(".__main__"):
                importlib.import_module(info.name)
    print("\\n".join(sorted(set(found))))
    sys.exit(1 if found else 0)
    """
)


def test_no_module_imports_a_posix_only_module_at_its_top(tmp_path: Path) -> None:
    roots = [str(ROOT / "hermes_hooks"), str(ROOT / "hermes_plugins")]
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, ",".join(POSIX_ONLY), *roots],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "HERMES_HOME": str(tmp_path / "home")},
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_classifiers_say_what_is_tested() -> None:
    text = (ROOT / "setup.cfg").read_text(encoding="utf-8")
    assert "Operating System :: POSIX :: Linux" in text
    assert "Operating System :: OS Independent" not in text
