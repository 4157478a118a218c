"""Load every plugin of a Hermes ``plugins/`` folder with hermes-hooks, with no API key set.

``python -m benchmarks.hermes_plugins_load FOLDER`` treats ``FOLDER`` (a copy of Hermes Agent's
``plugins/``, kept outside this repository) as the bundled plugins, enables each plugin and
reports which load and why the others do not. Plugins that a provider family selects by
config (``memory.provider``, ``cron.provider``, ``context.engine``...) are each loaded in a
fresh home that selects them; model-provider plugins load on the family's first lookup, as in
Hermes. Every environment variable that looks like a credential is removed first, so a plugin
that refuses to load without its key shows as failing.

Nothing is written outside temporary homes; the exit status is 0 when every plugin loaded.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Final

import yaml

from hermes_hooks.compat.scan import scan_plugin
from hermes_hooks.plugins.manager import PluginManager
from hermes_hooks.plugins.records import PluginInfo

_SECRET_SUFFIXES: Final = ("_API_KEY", "_KEY", "_TOKEN", "_SECRET", "_PASSWORD")
_LOADED_ON_LOOKUP: Final = "model.provider"
_MANAGERS: list[PluginManager] = []


def manifests(folder: Path) -> list[Path]:
    """Return the folders under ``folder`` that hold a ``plugin.yaml``, sorted."""
    return sorted(
        path.parent for path in folder.rglob("plugin.yaml") if "__pycache__" not in path.parts
    )


def scrub_credentials() -> list[str]:
    """Remove every credential-looking variable from the environment; return their names."""
    names = [name for name in os.environ if name.upper().endswith(_SECRET_SUFFIXES)]
    for name in names:
        del os.environ[name]
    return sorted(names)


@contextlib.contextmanager
def _environment_kept() -> Iterator[None]:
    """Give the environment back as it was (the run sets homes and removes credentials)."""
    saved = dict(os.environ)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _manager(home: Path, config: dict[str, object]) -> PluginManager:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    pm = PluginManager(home)
    _MANAGERS.append(pm)
    return pm


def _nested(dotted: str, value: object) -> dict[str, object]:
    head, _, rest = dotted.partition(".")
    return {head: _nested(rest, value) if rest else value}


def load_all(folder: Path, scratch: Path) -> dict[str, PluginInfo]:
    """Load each plugin of ``folder`` as the bundled set; return its final info by key."""
    os.environ["HERMES_BUNDLED_PLUGINS"] = str(folder)
    probe = _manager(scratch / "probe", {})
    keys = [c.key for c in probe.discover() if c.source == "bundled"]
    pm = _manager(scratch / "all", {"plugins": {"enabled": keys}})
    os.environ["HERMES_HOME"] = str(pm.hermes_home)
    pm.discover_and_load()
    pm.load_deferred("model-provider")
    found = {info.key: info for info in pm.list_plugins() if info.source == "bundled"}
    for key, info in list(found.items()):
        if info.status != "not enabled" or not info.served_by:
            continue
        if info.served_by == _LOADED_ON_LOOKUP:
            continue
        name = key.rsplit("/", 1)[-1]
        config = {**_nested(info.served_by, name), "plugins": {"enabled": [key]}}
        home = scratch / key.replace("/", "__")
        one = _manager(home, config)
        os.environ["HERMES_HOME"] = str(home)
        one.discover_and_load()
        again = one.get_plugin_info(key)
        if again is not None:
            found[key] = again
    return found


def _unserved(info: PluginInfo) -> list[str]:
    """The Hermes modules the plugin's files import that are not served (at any depth)."""
    if info.path is None:
        return []
    found = {i.module for i in scan_plugin(Path(info.path)) if i.kind == "not served"}
    return sorted(found)


def _row(info: PluginInfo) -> dict[str, object]:
    return {
        "key": info.key,
        "kind": info.kind,
        "status": info.status,
        "error": info.error,
        "reason": info.reason if info.status != "enabled" else None,
        "registered": [
            *info.tools,
            *info.hooks,
            *info.commands,
            *info.cli_commands,
            *info.providers,
            *info.platforms,
        ],
        "unserved_imports": _unserved(info),
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Run the load and print the report; 0 when every plugin loaded."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.hermes_plugins_load")
    parser.add_argument("folder", type=Path, help="a copy of Hermes Agent's plugins/ folder")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    args = parser.parse_args(argv)
    folder: Path = args.folder.resolve()
    if not folder.is_dir():
        parser.error(f"{folder} is not a folder")
    if (folder.parent / "hermes_cli").is_dir():
        # There the plugins reach Hermes's own packages, and a real module wins over a served
        # one (compat/finder.py): what is measured would be Hermes, not hermes-hooks.
        parser.error(f"{folder} sits beside Hermes's own packages: copy the folder out first")
    with (
        _environment_kept(),
        tempfile.TemporaryDirectory(prefix="hermes-plugins-load-") as scratch,
    ):
        scrubbed = scrub_credentials()
        found = load_all(folder, Path(scratch))
        for pm in _MANAGERS:
            pm.unload_all()
        _MANAGERS.clear()
    rows = [_row(found[key]) for key in sorted(found)]
    loaded = [row for row in rows if row["status"] == "enabled"]
    if args.json:
        print(json.dumps({"total": len(rows), "loaded": len(loaded), "plugins": rows}, indent=2))
    else:
        print(f"manifests under {folder}: {len(manifests(folder))}")
        print(f"credential variables removed: {', '.join(scrubbed) or 'none'}")
        for row in rows:
            if row["status"] != "enabled":
                why = row["error"] or row["reason"] or ""
                print(f"  {row['key']}: {row['status']}: {why}")
        print(f"{len(loaded)} of {len(rows)} plugins load")
        later = [row for row in loaded if row["unserved_imports"]]
        if later:
            print("loaded, but importing Hermes modules not served (where they run, they fail):")
            for row in later:
                print(f"  {row['key']}: {', '.join(row['unserved_imports'])}")  # type: ignore[arg-type]
    return 0 if len(loaded) == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
