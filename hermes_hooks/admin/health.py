"""The environment summary behind ``hermes doctor``: versions, home, config and plugin health.

:func:`check_environment` reads a discovered-and-loaded manager and the environment and returns
facts (what is installed where) and findings (what is wrong): a config file that cannot be read,
tolerated config problems, names in ``plugins.enabled``/``disabled`` that match no plugin,
plugins that failed to load, and project plugins present but not opted in.
"""

from __future__ import annotations

import os
import platform
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import attrs

from hermes_hooks import __version__
from hermes_hooks.admin.actions import closest_names
from hermes_hooks.admin.doctor import Finding
from hermes_hooks.plugins.config import (
    PROJECT_PLUGINS_ENV,
    SAFE_MODE_ENV,
    STRICT_ENV,
    config_path,
    env_flag,
)
from hermes_hooks.plugins.discovery import bundled_plugins_dir, scan_directory
from hermes_hooks.plugins.manager import PluginManager

__all__ = ["EnvironmentReport", "check_environment"]


@attrs.frozen
class EnvironmentReport:
    """Facts as ``(label, value)`` pairs, in display order, and the findings."""

    facts: tuple[tuple[str, str], ...]
    findings: tuple[Finding, ...]

    @property
    def errors(self) -> int:
        """How many findings are errors."""
        return sum(1 for f in self.findings if f.level == "error")

    def to_dict(self) -> dict[str, Any]:
        """Return the report as a JSON-ready dict."""
        return {
            "facts": dict(self.facts),
            "ok": self.errors == 0,
            "findings": [f.to_dict() for f in self.findings],
        }


def _version_of(distribution: str) -> str:
    try:
        return version(distribution)
    except PackageNotFoundError:
        return "not installed"


def _facts(pm: PluginManager) -> list[tuple[str, str]]:
    home = pm.hermes_home
    config = config_path(home)
    counts: dict[str, int] = {}
    for info in pm.list_plugins():
        counts[info.status] = counts.get(info.status, 0) + 1
    plugins = ", ".join(f"{n} {status}" for status, n in sorted(counts.items())) or "none found"
    return [
        ("hermes-hooks", __version__),
        ("python", f"{platform.python_version()} ({sys.executable})"),
        ("pluggy", _version_of("pluggy")),
        ("click", _version_of("click")),
        ("platform", platform.platform(terse=True)),
        ("HERMES_HOME", f"{home}{'' if home.is_dir() else ' (does not exist yet)'}"),
        ("config", f"{config}{'' if config.is_file() else ' (none: defaults)'}"),
        ("bundled plugins", str(bundled_plugins_dir())),
        ("safe mode", "on: no plugin is loaded" if env_flag(SAFE_MODE_ENV) else "off"),
        ("strict mode", "on" if env_flag(STRICT_ENV) else "off"),
        ("project plugins", "on" if env_flag(PROJECT_PLUGINS_ENV) else "off"),
        ("plugins", plugins),
    ]


def _config_findings(pm: PluginManager) -> list[Finding]:
    where = str(config_path(pm.hermes_home))
    if pm.config_error is not None:
        return [Finding("error", "config", pm.config_error, where)]
    # Every section the framework reads: wrong values, unknown keys and near misses
    # (``modle`` for ``model``), from the one table of keys; a wrong type is an error.
    from hermes_hooks.plugins.settings import check_config

    findings = [
        Finding(p.level, "config", p.message, where)
        for p in check_config(pm.config, source=config_path(pm.hermes_home))
    ]
    infos = pm.list_plugins()
    known = {i.key for i in infos} | {i.name for i in infos}
    leaves = {i.key.rsplit("/", 1)[-1] for i in infos}
    for field, names in (
        ("enabled", pm.plugins_config.enabled),
        ("disabled", pm.plugins_config.disabled),
    ):
        for name in sorted(names - known - leaves):
            close = closest_names(name, known)
            hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
            message = f"plugins.{field} lists {name!r}, which is not installed or bundled{hint}"
            findings.append(Finding("warning", "config", message, where))
    return findings


def _plugin_findings(pm: PluginManager) -> list[Finding]:
    findings = []
    for info in pm.list_plugins():
        if info.status == "error":
            message = f"plugin {info.key!r}: {info.error}"
            findings.append(Finding("error", "plugin", message, info.path))
        for warning in info.warnings:
            findings.append(Finding("warning", "plugin", f"plugin {info.key!r} {warning}"))
    return findings


def _project_findings(cwd: Path) -> list[Finding]:
    if env_flag(PROJECT_PLUGINS_ENV):
        return []
    folder = cwd / ".hermes" / "plugins"
    present = scan_directory(folder, "project")
    if not present:
        return []
    keys = ", ".join(c.key for c in present)
    message = (
        f"{folder} holds {len(present)} project plugin(s) ({keys}), which are not loaded: "
        f"set {PROJECT_PLUGINS_ENV}=1 to opt in"
    )
    return [Finding("warning", "project", message, str(folder))]


def check_environment(pm: PluginManager) -> EnvironmentReport:
    """Summarise the environment of a manager that has discovered and loaded its plugins."""
    findings = [
        *_config_findings(pm),
        *_plugin_findings(pm),
        *_project_findings(pm.cwd or Path(os.getcwd())),
    ]
    findings.sort(key=lambda f: f.level != "error")
    return EnvironmentReport(tuple(_facts(pm)), tuple(findings))
