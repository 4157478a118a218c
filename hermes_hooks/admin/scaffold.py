"""``hermes plugins new NAME``: the files of a new plugin project, ready to test and publish.

The project is a folder named after the plugin, with:

- ``<module>/plugin.yaml`` and ``<module>/__init__.py``: the plugin (a tool and a
  ``pre_tool_call`` hook registered through ``register(ctx)``), loadable as it is with
  ``hermes plugins install ./<name>/<module>``;
- ``<module>/skills/``: where the plugin's skills go (``ctx.register_skill``);
- ``tests/test_<module>.py``: tests on the fixtures hermes-hooks ships (``hermes_hooks.testing``);
- ``pyproject.toml``: the pip package, with the ``hermes_agent.plugins`` entry point and
  ``plugin.yaml`` and ``skills/`` as package data, so an installed copy has its manifest.

Nothing is written over: an existing folder is refused.
"""

from __future__ import annotations

import importlib.resources
import json
import re
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Final

import attrs

from hermes_hooks.errors import InstallError

__all__ = ["NewPlugin", "create_plugin_project", "plugin_module_name"]

_NAME: Final = re.compile(r"^[a-z0-9][a-z0-9._-]*$")


def plugin_module_name(name: str) -> str:
    """Return the Python package name of plugin ``name``: ``pr-review`` is ``pr_review``."""
    return re.sub(r"[^a-z0-9_]", "_", name)


@attrs.frozen
class NewPlugin:
    """What :func:`create_plugin_project` wrote.

    :param root: the project folder.
    :param module: the plugin's package folder inside it (what ``plugins install`` takes).
    :param files: every file written, relative to ``root``.
    """

    root: Path
    module: Path
    files: tuple[str, ...]


def create_plugin_project(
    name: str, parent: Path, *, description: str = "", author: str = ""
) -> NewPlugin:
    """Write the project of a new plugin ``name`` into ``parent/name`` and return what it wrote.

    :param description: the manifest's and the package's description.
    :param author: the manifest's ``author``, when given.
    :raises InstallError: ``name`` is not a valid plugin name, or the folder exists.
    """
    if not isinstance(name, str) or not _NAME.match(name) or name.endswith((".", "-", "_")):
        raise InstallError(
            f"plugin name {name!r} is invalid: expected lower-case letters, digits, '.', '_' "
            f"and '-', starting with a letter or digit (like 'no-rm' or 'pr_review')"
        )
    module = plugin_module_name(name)
    if not module[0].isalpha():
        raise InstallError(
            f"plugin name {name!r} gives the Python package {module!r}, which cannot be "
            f"imported: start the name with a letter"
        )
    root = parent / name
    if root.exists():
        raise InstallError(f"{root} exists already: choose another name or folder")
    summary = description.strip() or f"The {name} plugin for Hermes"
    tool = f"{module}_hello"
    values = {
        "name": name,
        "module": module,
        "tool": tool,
        "description": summary,
        "author_line": f"author: {_yaml_string(author)}\n" if author.strip() else "",
        "yaml_description": _yaml_string(summary),
        "toml_description": summary.replace("\\", "\\\\").replace('"', '\\"'),
    }
    written = []
    root.mkdir(parents=True)
    for relative, template in _templates():
        target = relative.replace("MODULE", module)
        path = root / target
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(template.format(**values), encoding="utf-8")
        written.append(target)
    return NewPlugin(root=root, module=root / module, files=tuple(written))


def _templates() -> list[tuple[str, str]]:
    """Return ``(path in the project, template)`` of every file; ``MODULE`` is the package.

    The templates are files of this package (``admin/plugin-template/``): Python with
    ``{placeholders}`` is not Python the linters could read, and its imports are the
    generated plugin's, not this module's.
    """
    base = importlib.resources.files("hermes_hooks.admin") / "plugin-template"
    found: list[tuple[str, str]] = []

    def walk(folder: Traversable, prefix: str) -> None:
        for entry in sorted(folder.iterdir(), key=lambda e: e.name):
            if entry.is_dir():
                walk(entry, f"{prefix}{entry.name}/")
            elif entry.name.endswith(".tmpl"):
                found.append((prefix + entry.name.removesuffix(".tmpl"), entry.read_text("utf-8")))

    walk(base, "")
    return found


def _yaml_string(text: str) -> str:
    """Quote ``text`` for YAML (a double-quoted scalar, which JSON's escaping also is)."""
    return json.dumps(text.strip(), ensure_ascii=False)
