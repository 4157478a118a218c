"""Type-check the bundled plugins in hermes_plugins/ under the project's mypy config.

Some plugin folders have dashes (``command-guard``, ``model-providers``), as in Hermes, so they
are no valid package names and ``mypy hermes_plugins`` refuses them. This script hands mypy every
plugin file with a module name of its own (dashes become underscores: ``command-guard/rules.py``
is ``hermes_plugins.command_guard.rules``), so that relative imports resolve. Run it from the
repository root: ``python .ci/mypy_plugins.py``; extra arguments go to mypy.
"""

from __future__ import annotations

import sys
from pathlib import Path

from mypy import build
from mypy.errors import CompileError
from mypy.main import process_options
from mypy.modulefinder import BuildSource

ROOT = Path(__file__).resolve().parent.parent


def plugin_sources() -> list[BuildSource]:
    """Every .py file under hermes_plugins/, with its module name (dashes as underscores)."""
    sources = []
    for path in sorted((ROOT / "hermes_plugins").rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        module = ".".join(part.replace("-", "_") for part in parts)
        sources.append(BuildSource(str(path.relative_to(ROOT)), module, None, str(ROOT)))
    return sources


def main(argv: list[str]) -> int:
    # process_options reads pyproject.toml ([tool.mypy]); the files come from plugin_sources.
    _, options = process_options(["--config-file", str(ROOT / "pyproject.toml"), *argv])
    try:
        result = build.build(plugin_sources(), options)
    except CompileError as exc:
        print("\n".join(exc.messages), file=sys.stderr)
        return 2
    for line in result.errors:
        print(line)
    if result.errors:
        files = {line.split(":", 1)[0] for line in result.errors if ": error:" in line}
        errors = sum(": error:" in line for line in result.errors)
        print(f"Found {errors} errors in {len(files)} files", file=sys.stderr)
        return 1
    print(f"Success: no issues found in {len(plugin_sources())} plugin files")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
