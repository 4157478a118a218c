"""Check that a folder of ``kind: platform`` plugins loads here and registers its platforms.

Usage::

    python -m benchmarks.platform_plugins FOLDER [--json]

``FOLDER`` holds one sub-folder per plugin (each with its ``plugin.yaml``), e.g. a copy of
Hermes Agent's ``plugins/platforms/``. The plugins are copied into the ``plugins/`` folder of a
throwaway ``HERMES_HOME``, every one is listed in ``plugins.enabled``, and ``hermes plugins list
--json`` loads them in a clean environment (no API key or token set: only ``PATH`` and the
locale are kept). The report says, per plugin, whether it loaded and which platforms it
registered, or the error; the last line is the count ``N of M load (and register their
platforms)``: a ``kind: platform`` plugin must register one, another kind must load.

Nothing of the checked plugins is kept: the home is removed when the check ends. The plugins
themselves are never part of this repository (see docs/reference/compat.md for the figure
measured against Hermes Agent's own platform plugins).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

_KEPT_ENV = ("PATH", "LANG", "LC_ALL", "SYSTEMROOT")


def _manifest_name(folder: Path) -> str:
    for name in ("plugin.yaml", "plugin.yml"):
        path = folder / name
        if path.is_file():
            data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
            if isinstance(data, dict) and isinstance(data.get("name"), str):
                return str(data["name"])
    return folder.name


def plugin_folders(root: Path) -> list[Path]:
    """The sub-folders of ``root`` that hold a plugin manifest, sorted by name."""
    return sorted(
        child
        for child in root.iterdir()
        if child.is_dir()
        and ((child / "plugin.yaml").is_file() or (child / "plugin.yml").is_file())
    )


def check(root: Path) -> list[dict[str, Any]]:
    """Load every plugin under ``root`` in a throwaway home; one row per plugin folder."""
    folders = plugin_folders(root)
    with tempfile.TemporaryDirectory(prefix="hermes-platform-check-") as tmp:
        home = Path(tmp) / "home"
        (home / "plugins").mkdir(parents=True)
        names = []
        for folder in folders:
            shutil.copytree(folder, home / "plugins" / folder.name)
            names.append(_manifest_name(folder))
        config = {"plugins": {"enabled": names}}
        (home / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
        env = {key: os.environ[key] for key in _KEPT_ENV if key in os.environ}
        env.update(HERMES_HOME=str(home), HOME=tmp, PYTHONDONTWRITEBYTECODE="1")
        command = [sys.executable, "-m", "hermes_hooks", "plugins", "list", "--json"]
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
        try:
            listed = json.loads(done.stdout)
        except ValueError:
            raise SystemExit(f"hermes plugins list failed:\n{done.stdout}\n{done.stderr}") from None
    by_path = {Path(entry["path"]).name: entry for entry in listed}
    rows = []
    for folder in folders:
        entry = by_path.get(folder.name, {})
        platforms = list(entry.get("platforms") or [])
        loaded = entry.get("status") == "enabled"
        # A kind: platform plugin must register its platform; another kind (Hermes'
        # teams_pipeline is standalone) must load.
        needs_platform = entry.get("kind", "platform") == "platform"
        rows.append(
            {
                "folder": folder.name,
                "name": entry.get("name", _manifest_name(folder)),
                "kind": entry.get("kind"),
                "ok": loaded and (bool(platforms) or not needs_platform),
                "status": entry.get("status", "not discovered"),
                "platforms": platforms,
                "error": entry.get("error"),
            }
        )
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.platform_plugins")
    parser.add_argument("folder", type=Path, help="a folder of platform plugin folders")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = parser.parse_args(argv)
    rows = check(args.folder)
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        for row in rows:
            if row["ok"]:
                registered = ", ".join(row["platforms"]) or f"loaded ({row['kind']})"
                print(f"ok    {row['folder']}: {registered}")
            else:
                why = row["error"] or f"status {row['status']}, no platform registered"
                first = str(why).strip().splitlines()[-1] if why else ""
                print(f"FAIL  {row['folder']}: {first}")
    good = sum(1 for row in rows if row["ok"])
    print(f"{good} of {len(rows)} load (and register their platforms)")
    return 0 if good == len(rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
