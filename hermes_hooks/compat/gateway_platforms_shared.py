"""Hermes' ``gateway.platforms._shared``: what adapters share for their settings.

Hermes reads credentials through a per-profile secret scope (several profiles multiplexed in
one gateway); this host runs one home per gateway, so a "scoped" read is the environment
(where ``hermes`` has applied the home's ``.env``) and :func:`profile_scoped` is always false.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterable
from typing import Any

__all__ = [
    "apply_yaml_bridge",
    "coerce_port",
    "decode_json_list_literal",
    "env_is_connected",
    "extra_or_secret",
    "get_scoped_secret",
    "platform_gate_env",
    "profile_scoped",
    "seed_extra_from_env",
    "send_error",
    "yaml_env_setter",
]


def get_scoped_secret(name: str, default: Any = None, *, external_fallback: bool = False) -> Any:
    """Return the credential ``name`` (the environment's), or ``default``."""
    value = os.environ.get(name)
    return value if value is not None else default


def platform_gate_env(name: str, default: str = "") -> str:
    """Return an allow/deny switch's value, stripped."""
    return (os.getenv(name) or default).strip() if name else default


def decode_json_list_literal(raw: Any) -> Any:
    """A string holding a JSON list (``'["-100", "-200"]'``, as ``hermes config set`` writes an
    allow-list) decoded to that list; anything else, malformed JSON included, as it came."""
    if isinstance(raw, str) and raw.lstrip()[:1] == "[":
        try:
            loaded = json.loads(raw)
        except ValueError:
            return raw
        if isinstance(loaded, list):
            return loaded
    return raw


def extra_or_secret(
    extra: dict[str, Any] | None,
    key: str,
    env: str,
    default: Any = "",
    *,
    blank_is_unset: bool = True,
) -> Any:
    """``extra[key]`` when set (``False``/``0`` count as set), else the variable ``env``."""
    value = (extra or {}).get(key)
    if value is None or (blank_is_unset and isinstance(value, str) and not value.strip()):
        return get_scoped_secret(env, default)
    return value


def profile_scoped() -> bool:
    """Whether a multiplexed secondary profile's scope is active: never here."""
    return False


def yaml_env_setter() -> Callable[[str, Any], None]:
    """Return ``set_env(name, value)`` for ``apply_yaml_config_fn`` hooks: sets the variable
    only when it is unset (the environment wins over YAML); lists are comma-joined."""

    def set_env(name: str, value: Any) -> None:
        if value is None or os.getenv(name):
            return
        os.environ[name] = (
            ",".join(str(item) for item in value) if isinstance(value, list) else str(value)
        )

    return set_env


_OFF = {"off", "false", "0", "no", "none", ""}
_KINDS: dict[str, tuple[Callable[[dict[str, Any], str], bool], Callable[[Any], Any]]] = {
    "lower": (lambda cfg, key: key in cfg, lambda value: str(value).lower()),
    "str": (lambda cfg, key: cfg.get(key) not in (None, ""), str),
    "csv": (lambda cfg, key: cfg.get(key) is not None, lambda value: value),
    "json": (lambda cfg, key: key in cfg, json.dumps),
    "onoff": (
        lambda cfg, key: key in cfg,
        lambda value: "on" if value is None or str(value).strip().lower() not in _OFF else "off",
    ),
}


def apply_yaml_bridge(
    cfg: dict[str, Any], spec: Iterable[tuple[str, str, str]]
) -> dict[str, Any] | None:
    """For each ``(yaml_key, ENV_VAR, kind)``: seed the YAML value into the returned ``extra``
    and bridge it to the environment (``kind``: ``lower``, ``str``, ``csv``, ``json``,
    ``onoff``); ``None`` when nothing matched."""
    set_env = yaml_env_setter()
    seeded: dict[str, Any] = {}
    for key, env, kind in spec:
        applies, encode = _KINDS[kind]
        if applies(cfg, key):
            seeded[key] = cfg[key]
            set_env(env, encode(cfg[key]))
    return seeded or None


def seed_extra_from_env(
    spec: Iterable[tuple[str, str, Callable[[str], Any] | None]],
    *,
    home_env: str | None = None,
    home_default: str = "",
) -> dict[str, Any]:
    """For each ``(ENV_VAR, extra_key, conv)``: seed ``conv(value)`` when the variable is set
    (a ``ValueError`` skips it); ``home_env`` seeds ``home_channel`` as ``{"chat_id", "name"}``."""
    seed: dict[str, Any] = {}
    for env, key, conv in spec:
        raw = str(get_scoped_secret(env, "") or "").strip()
        if not raw:
            continue
        with contextlib.suppress(ValueError):
            seed[key] = conv(raw) if conv else raw
    if home_env:
        home = str(get_scoped_secret(home_env, "") or "").strip() or home_default
        if home:
            seed["home_channel"] = {
                "chat_id": home,
                "name": get_scoped_secret(f"{home_env}_NAME", "Home"),
            }
    return seed


def env_is_connected(*names: str) -> Callable[[Any], bool]:
    """An ``is_connected`` that is true when every variable of ``names`` is set."""

    def is_connected(config: Any) -> bool:
        return all((os.environ.get(name) or "").strip() for name in names)

    return is_connected


def send_error(message: Any) -> dict[str, Any]:
    """A standalone sender's failure envelope: ``{"error": text}``."""
    return {"error": str(message)}


def coerce_port(value: Any, default: int) -> int:
    """``int(value)``, or ``default`` when it does not parse."""
    try:
        return int(value)
    except (TypeError, ValueError):
        return default
