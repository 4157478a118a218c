"""Hermes' ``agent.i18n`` (the part adapters call): ``t(key)`` for user-facing strings.

``t`` looks ``key`` up in the home's ``locales/<lang>.yaml`` (nested mappings flattened to
dotted keys), then in ``locales/en.yaml``, then gives the key itself, formatting it with the
keyword arguments. The language is ``lang``, else ``HERMES_LANGUAGE``, else config.yaml's
``display.language``, else ``en``. Hermes' bundled catalogs and plugin language packs are not
served: without an overlay file, a key is its own text.
"""

from __future__ import annotations

import logging
import os
from typing import Any, Final

from hermes_hooks.compat.hermes_cli_config import load_config
from hermes_hooks.compat.hermes_constants import get_hermes_home
from hermes_hooks.plugins.safe_yaml import safe_load_yaml

__all__ = ["DEFAULT_LANGUAGE", "get_language", "reset_language_cache", "t"]

logger = logging.getLogger(__name__)

DEFAULT_LANGUAGE: Final = "en"

_cache: dict[tuple[str, str], dict[str, str]] = {}


def _flatten(node: Any, prefix: str, out: dict[str, str]) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            _flatten(value, f"{prefix}.{key}" if prefix else str(key), out)
    elif isinstance(node, str):
        out[prefix] = node


def _catalog(lang: str) -> dict[str, str]:
    home = str(get_hermes_home())
    cached = _cache.get((home, lang))
    if cached is not None:
        return cached
    catalog: dict[str, str] = {}
    path = get_hermes_home() / "locales" / f"{lang}.yaml"
    if path.is_file():
        try:
            _flatten(safe_load_yaml(path.read_bytes(), source=str(path)), "", catalog)
        except Exception as exc:
            logger.warning("cannot read the locale file %s: %s", path, exc)
    _cache[(home, lang)] = catalog
    return catalog


def get_language() -> str:
    """Return the active language: ``HERMES_LANGUAGE``, ``display.language``, else ``en``."""
    env = os.environ.get("HERMES_LANGUAGE", "").strip().lower()
    if env:
        return env
    display = load_config().get("display")
    lang = display.get("language") if isinstance(display, dict) else None
    return str(lang).strip().lower() if lang else DEFAULT_LANGUAGE


def reset_language_cache() -> None:
    """Forget the catalogs read (after editing a locale file)."""
    _cache.clear()


def t(key: str, lang: str | None = None, **format_kwargs: Any) -> str:
    """Return ``key``'s text in the active (or ``lang``) language, else English, else the key."""
    target = (lang or get_language()).lower()
    value = _catalog(target).get(key)
    if value is None and target != DEFAULT_LANGUAGE:
        value = _catalog(DEFAULT_LANGUAGE).get(key)
    if value is None:
        value = key
    if not format_kwargs:
        return value
    try:
        return value.format(**format_kwargs)
    except (KeyError, IndexError, ValueError):
        return value
