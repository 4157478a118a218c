"""Hermes' ``tools.website_policy``: the user's website blocklist for URL-capable tools.

``config.yaml`` of the current home holds it, as in Hermes::

    security:
      website_blocklist:
        enabled: true
        domains: [example.com, "*.tracker.net"]
        shared_files: [blocklists/team.txt]     # one rule a line; relative to the home

A rule ``example.com`` blocks that host and its subdomains, ``*.example.com`` the subdomains
only; ``www.`` and a URL's scheme and path are dropped from a rule. The policy is off unless
``enabled`` is true. :func:`check_website_access` fails open, as Hermes' does: a broken policy
is logged and allows everything (pass ``config_path`` to have the error raised instead).

The policy is read again whenever ``config.yaml`` changes (its size and modification time),
not after Hermes' 30-second cache.
"""

from __future__ import annotations

import fnmatch
import logging
import threading
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlparse

from hermes_hooks.compat.current import current_home
from hermes_hooks.errors import ConfigError
from hermes_hooks.plugins.safe_yaml import YAMLLoadError, safe_load_yaml

__all__ = [
    "WebsitePolicyError",
    "check_website_access",
    "invalidate_cache",
    "load_website_blocklist",
]

logger = logging.getLogger(__name__)

_DEFAULTS: Final[dict[str, Any]] = {"enabled": False, "domains": [], "shared_files": []}

_lock = threading.Lock()
_cache: dict[tuple[str, int, int], dict[str, Any]] = {}


class WebsitePolicyError(Exception):
    """The website policy in ``config.yaml`` (or a shared list) is malformed."""


def _normalize_rule(rule: object) -> str | None:
    if not isinstance(rule, str):
        return None
    value = rule.strip().lower()
    if not value or value.startswith("#"):
        return None
    if "://" in value:
        parsed = urlparse(value)
        value = parsed.netloc or parsed.path
    value = value.split("/", 1)[0].strip().rstrip(".")
    if value.startswith("www."):
        value = value[4:]
    return value or None


def _file_rules(path: Path) -> list[str]:
    """Rules of a shared list; a missing or unreadable file is skipped with a warning."""
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        logger.warning("Shared blocklist file not found (skipping): %s", path)
        return []
    except (OSError, UnicodeDecodeError) as exc:
        logger.warning("Failed to read shared blocklist file %s (skipping): %s", path, exc)
        return []
    found = (_normalize_rule(line) for line in raw.splitlines())
    return [rule for rule in found if rule]


def _section(config_path: Path) -> dict[str, Any]:
    try:
        data = config_path.read_bytes()
    except FileNotFoundError:
        return dict(_DEFAULTS)
    except OSError as exc:
        raise WebsitePolicyError(f"Failed to read config file {config_path}: {exc}") from exc
    try:
        config = safe_load_yaml(data, source=str(config_path), unique_keys=True) or {}
    except YAMLLoadError as exc:
        raise WebsitePolicyError(f"Invalid config YAML at {config_path}: {exc}") from exc
    if not isinstance(config, dict):
        raise WebsitePolicyError(f"{config_path}: config root must be a mapping")
    security = config.get("security") or {}
    if not isinstance(security, dict):
        raise WebsitePolicyError(f"{config_path}: security must be a mapping")
    blocklist = security.get("website_blocklist") or {}
    if not isinstance(blocklist, dict):
        raise WebsitePolicyError(f"{config_path}: security.website_blocklist must be a mapping")
    return {**_DEFAULTS, **blocklist}


def _build(config_path: Path, home: Path) -> dict[str, Any]:
    policy = _section(config_path)
    domains = policy.get("domains") or []
    if not isinstance(domains, list):
        raise WebsitePolicyError("security.website_blocklist.domains must be a list")
    shared = policy.get("shared_files") or []
    if not isinstance(shared, list):
        raise WebsitePolicyError("security.website_blocklist.shared_files must be a list")
    enabled = policy.get("enabled", True)
    if not isinstance(enabled, bool):
        raise WebsitePolicyError("security.website_blocklist.enabled must be a boolean")
    rules: list[dict[str, str]] = []
    seen: set[tuple[str, str]] = set()
    for raw in domains:
        rule = _normalize_rule(raw)
        if rule and ("config", rule) not in seen:
            rules.append({"pattern": rule, "source": "config"})
            seen.add(("config", rule))
    for entry in shared:
        if not isinstance(entry, str) or not entry.strip():
            continue
        path = Path(entry).expanduser()
        if not path.is_absolute():
            path = (home / path).resolve()
        for rule in _file_rules(path):
            if (str(path), rule) not in seen:
                rules.append({"pattern": rule, "source": str(path)})
                seen.add((str(path), rule))
    return {"enabled": enabled, "rules": rules}


def load_website_blocklist(config_path: Path | None = None) -> dict[str, Any]:
    """Return the policy: ``{"enabled": bool, "rules": [{"pattern", "source"}...]}``.

    :param config_path: read this file instead of the current home's ``config.yaml``.
    :raises WebsitePolicyError: the policy or the file is malformed.
    """
    home = current_home()
    path = Path(config_path) if config_path is not None else home / "config.yaml"
    try:
        stat = path.stat()
        stamp = (str(path), stat.st_mtime_ns, stat.st_size)
    except OSError:
        stamp = (str(path), -1, -1)
    with _lock:
        cached = _cache.get(stamp)
    if cached is not None:
        return cached
    try:
        policy = _build(path, home)
    except ConfigError as exc:  # pragma: no cover - defensive: the reader raises its own
        raise WebsitePolicyError(str(exc)) from exc
    with _lock:
        _cache.clear()  # one policy kept: the newest file read
        _cache[stamp] = policy
    return policy


def invalidate_cache() -> None:
    """Have the next check read the policy again."""
    with _lock:
        _cache.clear()


def _matches(host: str, pattern: str) -> bool:
    if not host or not pattern:
        return False
    if pattern.startswith("*."):
        return fnmatch.fnmatch(host, pattern)
    return host == pattern or host.endswith(f".{pattern}")


def _host_of(url: str) -> str:
    parsed = urlparse(url)
    host = (parsed.hostname or parsed.netloc or "").strip().lower().rstrip(".")
    if host or "://" in url:
        return host
    bare = urlparse(f"//{url}")
    return (bare.hostname or bare.netloc or "").strip().lower().rstrip(".")


def check_website_access(url: str, config_path: Path | None = None) -> dict[str, str] | None:
    """Return ``None`` when ``url`` is allowed, else what blocked it.

    The block is ``{"url", "host", "rule", "source", "message"}``. A malformed policy allows
    everything and logs a warning (fail-open), unless ``config_path`` was given: then the
    :class:`WebsitePolicyError` is raised.
    """
    host = _host_of(url)
    if not host:
        return None
    try:
        policy = load_website_blocklist(config_path)
    except WebsitePolicyError as exc:
        if config_path is not None:
            raise
        logger.warning("Website policy config error (failing open): %s", exc)
        return None
    except Exception as exc:
        logger.warning("Unexpected error loading website policy (failing open): %s", exc)
        return None
    if not policy.get("enabled"):
        return None
    for rule in policy.get("rules", []):
        pattern = rule.get("pattern", "")
        if _matches(host, pattern):
            source = rule.get("source", "config")
            logger.info("Blocked URL %s: matched rule %r from %s", url, pattern, source)
            return {
                "url": url,
                "host": host,
                "rule": pattern,
                "source": source,
                "message": (
                    f"Blocked by website policy: '{host}' matched rule '{pattern}' from {source}"
                ),
            }
    return None
