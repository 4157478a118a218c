"""A throw-away ``HERMES_HOME`` for tests: its config, and plugin folders written into it."""

from __future__ import annotations

import os
import shutil
import textwrap
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final

import yaml

from hermes_hooks.plugins.config import load_config, set_plugin_enabled, update_config, write_config

__all__ = ["HermesFixtureWarning", "HermesHome"]

_MANIFEST_NAMES: Final = ("plugin.yaml", "plugin.yml")
_COPY_IGNORED: Final = shutil.ignore_patterns("__pycache__", "*.pyc", ".*")


class HermesHome:
    """A temporary Hermes home folder; ``os.fspath(home)`` and ``home / "config.yaml"`` work.

    Changing it through these methods while a manager of the ``hermes_pm`` fixture exists
    reloads that manager, so that it sees the change whatever order the test does things in.

    :param path: the home folder (created, with ``plugins/`` and an empty ``config.yaml``).
    :param workdir: the scratch folder sessions and commands run in.
    :param bundled: whether the bundled plugins are discoverable.
    :param entry_points: whether pip-installed plugins are discoverable (``hermes_pm`` and
        ``hermes_cli`` leave them out unless the test is marked ``entry_points=True``).
    """

    def __init__(
        self, path: Path, *, workdir: Path, bundled: bool = False, entry_points: bool = False
    ) -> None:
        self.path = path
        self.plugins_dir = path / "plugins"
        self.workdir = workdir
        self.bundled = bundled
        self.entry_points = entry_points
        self.plugins_dir.mkdir(parents=True, exist_ok=True)
        workdir.mkdir(parents=True, exist_ok=True)
        write_config(path, {})
        self._listeners: list[Callable[[], None]] = []
        self._copied_from: dict[Path, Path] = {}

    def __fspath__(self) -> str:
        return str(self.path)

    def __truediv__(self, other: str | os.PathLike[str]) -> Path:
        return self.path / other

    def __str__(self) -> str:
        return str(self.path)

    def __repr__(self) -> str:
        return f"<HermesHome {self.path}>"

    # -- change listeners (the managers of the fixtures) -------------------------------------

    def on_change(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call ``listener`` after each change made here; return a function that stops it."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def _changed(self) -> None:
        __tracebackhide__ = True
        for listener in list(self._listeners):
            listener()

    # -- config ----------------------------------------------------------------------------------

    @property
    def config(self) -> dict[str, Any]:
        """``config.yaml`` as it is now."""
        return load_config(self.path)

    def write_config(self, config: Mapping[str, Any]) -> None:
        """Replace ``config.yaml`` with ``config``."""
        __tracebackhide__ = True
        write_config(self.path, config)
        self._changed()

    def enable(self, *keys: str) -> None:
        """Add plugins to ``plugins.enabled`` (and take them out of ``plugins.disabled``)."""
        __tracebackhide__ = True
        for key in keys:
            set_plugin_enabled(self.path, key, True)
        self._changed()

    def disable(self, *keys: str) -> None:
        """Add plugins to ``plugins.disabled`` (and take them out of ``plugins.enabled``)."""
        __tracebackhide__ = True
        for key in keys:
            set_plugin_enabled(self.path, key, False)
        self._changed()

    def configure_plugin(self, key: str, **values: Any) -> None:
        """Set ``plugins.entries.<key>.<name>: value`` for each keyword.

        ``configure_plugin("no-rm", settings={"allow": ["rm -r build"]})`` is what
        ``ctx.get_config`` reads; ``allow_tool_override=True`` grants a host tool override.
        """
        __tracebackhide__ = True

        def mutate(config: dict[str, Any]) -> None:
            plugins = config.setdefault("plugins", {})
            entry = plugins.setdefault("entries", {}).setdefault(key, {})
            entry.update(values)

        update_config(self.path, mutate)
        self._changed()

    # -- plugins ---------------------------------------------------------------------------------

    def add_plugin(
        self,
        source: str | os.PathLike[str],
        code: str | Mapping[str, str] | None = None,
        *,
        key: str | None = None,
        manifest: str | Mapping[str, Any] | None = None,
        files: Mapping[str, str] | None = None,
        enabled: bool = True,
    ) -> Path:
        """Write a plugin folder into ``plugins/`` and return it; enabled unless told not to.

        - ``add_plugin("no-rm", "from hermes_hooks import hookimpl ...")``: the key and the
          ``__init__.py`` (dedented); the manifest is ``name: <key>``, ``version: 0.1.0``;
        - ``add_plugin("no-rm", {"plugin.yaml": ..., "__init__.py": ..., "rules.py": ...})``:
          every file, by relative path (a missing ``plugin.yaml`` is made as above);
        - ``add_plugin(Path("src/no_rm"))``: a copy of an existing folder (``__pycache__`` and
          dot files left out), keyed by its manifest's ``name``; without a manifest, by the
          name of the entry point that installs it (``no-rm = "no_rm"``) when one is
          installed, so the test knows it by the key it has once installed, else by the
          folder's name.

        :param key: the folder under ``plugins/`` (``name`` or ``category/name``).
        :param manifest: the ``plugin.yaml`` text, or fields added to the default one.
        :param files: more files, by relative path (dedented).
        :param enabled: add the key to ``plugins.enabled``.
        :raises FileExistsError: a plugin with this key was written already.
        :raises FileNotFoundError: the folder to copy does not exist.
        """
        __tracebackhide__ = True
        contents: dict[str, str] = {}
        copy_from: Path | None = None
        if isinstance(source, str):
            folder_key = key or source
            if isinstance(code, str):
                contents["__init__.py"] = code
            elif code is not None:
                contents.update(code)
        else:
            copy_from = Path(source)
            if not copy_from.is_dir():
                raise FileNotFoundError(f"no plugin folder to copy at {copy_from}")
            folder_key = (
                key
                or _manifest_name(copy_from)
                or _entry_point_name(copy_from.name)
                or copy_from.name
            )
        target = self.plugins_dir / folder_key
        if target.exists():
            raise FileExistsError(f"plugin {folder_key!r} exists already at {target}")
        if copy_from is not None:
            shutil.copytree(copy_from, target, ignore=_COPY_IGNORED)
            self._copied_from[target] = copy_from.resolve()
        target.mkdir(parents=True, exist_ok=True)
        contents.update(files or {})
        for relative, text in contents.items():
            path = target / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(text), encoding="utf-8")
        _complete_manifest(target, folder_key, manifest)
        if self.entry_points and _entry_point_name(None, key=folder_key) is not None:
            warnings.warn(
                f"plugin {folder_key!r} is also installed with pip (an entry point of that "
                f"name): with entry_points=True the installed copy, not this folder, loads "
                f"under that key; test the folder without entry_points=True, or uninstall it",
                HermesFixtureWarning,
                stacklevel=2,
            )
        if enabled:
            set_plugin_enabled(self.path, folder_key, True)
        self._changed()
        return target

    def source_of(self, path: str | os.PathLike[str]) -> Path | None:
        """Return the author's file that ``path``, a file of a copied plugin folder, copies.

        ``None`` when ``path`` is in no folder :meth:`add_plugin` copied, or when the test
        wrote it (``files=``, the completed manifest) so that it differs from its source.
        """
        copy = Path(path)
        for target, source in self._copied_from.items():
            if not copy.is_relative_to(target):
                continue
            original = source / copy.relative_to(target)
            try:
                same = original.read_bytes() == copy.read_bytes()
            except OSError:
                return None
            return original if same else None
        return None

    def name_sources(self, exc: BaseException) -> None:
        """Add a note to ``exc`` naming the author's file of each frame that ran a copy.

        The traceback points at the copy under this home (what ran); the note gives the
        ``path:line`` of the same line in the folder the test copied, which is the one to edit.
        """
        if not self._copied_from or any(
            note.startswith(_SOURCES_NOTE) for note in getattr(exc, "__notes__", ())
        ):
            return
        lines: list[str] = []
        for current in _chain(exc):
            tb = current.__traceback__
            while tb is not None:
                source = self.source_of(tb.tb_frame.f_code.co_filename)
                if source is not None:
                    line = f"  {source}:{tb.tb_lineno}, in {tb.tb_frame.f_code.co_name}"
                    if line not in lines:
                        lines.append(line)
                tb = tb.tb_next
        if lines:
            exc.add_note("\n".join([_SOURCES_NOTE, *lines]))


_SOURCES_NOTE: Final = "in your plugin's source (the test ran a copy in its hermes home):"


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and the exceptions it chains (``__cause__``, ``__context__``), innermost last."""
    found: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and all(current is not e for e in found):
        found.append(current)
        current = current.__cause__ or current.__context__
    return found[::-1]


class HermesFixtureWarning(UserWarning):
    """A test of the fixtures may not test what it means to (an installed copy shadows it)."""


def _entry_point_name(module: str | None, *, key: str | None = None) -> str | None:
    """Return the name of an installed ``hermes_agent.plugins`` entry point for ``module``
    (its value's module is that package), or the entry point named ``key``."""
    from importlib.metadata import entry_points

    from hermes_hooks.plugins.discovery import ENTRY_POINT_GROUP

    for entry in entry_points(group=ENTRY_POINT_GROUP):
        if key is not None and entry.name == key:
            return entry.name
        if module is not None and entry.value.split(":")[0].split(".")[0] == module:
            return entry.name
    return None


def _manifest_name(folder: Path) -> str | None:
    path = _find_manifest(folder)
    if path is None:
        return None
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    found = data.get("name") if isinstance(data, dict) else None
    return str(found) if found else None


def _find_manifest(folder: Path) -> Path | None:
    return next((folder / n for n in _MANIFEST_NAMES if (folder / n).is_file()), None)


def _complete_manifest(folder: Path, key: str, manifest: str | Mapping[str, Any] | None) -> None:
    """Write ``plugin.yaml``: the text given, or the folder's own (or a default) with the
    fields given merged in; a folder with a manifest of its own and no fields keeps it."""
    existing = _find_manifest(folder)
    if isinstance(manifest, str):
        text = textwrap.dedent(manifest)
    elif existing is not None and not manifest:
        return
    else:
        data: dict[str, Any] = {"name": key.rsplit("/", 1)[-1], "version": "0.1.0"}
        if existing is not None:
            loaded = yaml.safe_load(existing.read_text(encoding="utf-8"))
            data.update(loaded if isinstance(loaded, dict) else {})
        data.update(manifest or {})
        text = yaml.safe_dump(data, sort_keys=False)
    for name in _MANIFEST_NAMES:
        (folder / name).unlink(missing_ok=True)
    (folder / "plugin.yaml").write_text(text, encoding="utf-8")
