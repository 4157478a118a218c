"""The secret source contract (Hermes' ``agent.secret_sources.base``).

A *secret source* resolves credentials from a secret manager (a vault, an OS keystore, a
script) into environment-variable-shaped values, after ``$HERMES_HOME/.env`` and before the
rest of the host reads ``os.environ``. The contract is Hermes': read-only, synchronous,
:meth:`SecretSource.fetch` never raises nor prompts (its failure goes in the
:class:`FetchResult`), and the source only fetches: precedence, protected variables and the
writes to the environment belong to the orchestrator
(:func:`hermes_hooks.backends.secret_sources.apply_secret_sources`).
"""

from __future__ import annotations

import abc
import contextvars
import enum
import os
import re
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any, Final

import attrs

__all__ = [
    "DEFAULT_FETCH_TIMEOUT_SECONDS",
    "SECRET_SOURCE_API_VERSION",
    "ErrorKind",
    "FetchResult",
    "SecretSource",
    "get_source_environment",
    "is_valid_env_name",
]

SECRET_SOURCE_API_VERSION: Final = 1
"""The contract's version; a source built against another is refused at registration."""

DEFAULT_FETCH_TIMEOUT_SECONDS: Final = 120.0
"""The bound of one ``fetch()`` when ``secrets.<name>.timeout_seconds`` is unset."""

_SOURCE_ENVIRONMENT: contextvars.ContextVar[MutableMapping[str, str] | None] = (
    contextvars.ContextVar("hermes_secret_source_environment", default=None)
)
_ENV_NAME: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def get_source_environment() -> MutableMapping[str, str]:
    """The environment a fetch sees: the one being filled, else ``os.environ``."""
    found = _SOURCE_ENVIRONMENT.get()
    return found if found is not None else os.environ


def is_valid_env_name(name: str) -> bool:
    """Whether ``name`` is a legal environment variable name."""
    return bool(name) and bool(_ENV_NAME.match(name))


class ErrorKind(str, enum.Enum):  # noqa: UP042 - Hermes' own base classes
    """Why a fetch failed (Hermes' fixed vocabulary)."""

    NOT_CONFIGURED = "not_configured"
    BINARY_MISSING = "binary_missing"
    AUTH_FAILED = "auth_failed"
    AUTH_EXPIRED = "auth_expired"
    REF_INVALID = "ref_invalid"
    NETWORK = "network"
    EMPTY_VALUE = "empty_value"
    TIMEOUT = "timeout"
    INTERNAL = "internal"


@attrs.define
class FetchResult:
    """One source's fetch: the variables it would set, or why it could not."""

    secrets: dict[str, str] = attrs.Factory(dict)
    applied: list[str] = attrs.Factory(list)
    skipped: list[str] = attrs.Factory(list)
    warnings: list[str] = attrs.Factory(list)
    error: str | None = None
    error_kind: ErrorKind | None = None
    binary_path: Path | None = None

    @property
    def ok(self) -> bool:
        """Whether the fetch succeeded."""
        return self.error is None

    def fail(self, error: str, kind: ErrorKind = ErrorKind.INTERNAL) -> FetchResult:
        """Mark this result failed and return it."""
        self.error = error
        self.error_kind = kind
        return self


class SecretSource(abc.ABC):
    """One secret backend: subclasses set :attr:`name` (and :attr:`label`, :attr:`shape`,
    :attr:`scheme`) and implement :meth:`fetch`.

    :cvar name: the section under ``secrets:`` (lower case ``[a-z0-9_]``).
    :cvar shape: ``"mapped"`` (names bound to references one by one; wins over bulk) or
        ``"bulk"`` (whole folders of secrets).
    :cvar scheme: a reference scheme it owns (``op`` for ``op://``), unique among sources.
    """

    api_version: int = SECRET_SOURCE_API_VERSION
    name: str = ""
    label: str = ""
    shape: str = "mapped"
    scheme: str | None = None

    @abc.abstractmethod
    def fetch(self, cfg: dict[str, Any], home_path: Path) -> FetchResult:
        """Resolve the secrets; must not raise or prompt. ``cfg`` is ``secrets.<name>``."""

    def is_enabled(self, cfg: dict[str, Any]) -> bool:
        """Whether it is turned on: ``secrets.<name>.enabled``."""
        return bool(isinstance(cfg, dict) and cfg.get("enabled"))

    def override_existing(self, cfg: dict[str, Any]) -> bool:
        """Whether it may replace what ``.env`` or the shell set (never another source's)."""
        return bool(isinstance(cfg, dict) and cfg.get("override_existing", False))

    def protected_env_vars(self, cfg: dict[str, Any]) -> frozenset[str]:
        """Variables no source may overwrite (its own bootstrap token)."""
        return frozenset()

    def fetch_timeout_seconds(self, cfg: dict[str, Any]) -> float:
        """The bound of :meth:`fetch`: ``secrets.<name>.timeout_seconds``."""
        try:
            value = float((cfg or {}).get("timeout_seconds", DEFAULT_FETCH_TIMEOUT_SECONDS))
        except (TypeError, ValueError):
            return DEFAULT_FETCH_TIMEOUT_SECONDS
        return value if value > 0 else DEFAULT_FETCH_TIMEOUT_SECONDS

    def config_schema(self) -> dict[str, Any]:
        """Its config keys, for setup surfaces."""
        return {}

    def remediation(self, kind: ErrorKind | None, cfg: dict[str, Any]) -> str:
        """One line saying what to do about a failed fetch."""
        hints = {
            ErrorKind.NOT_CONFIGURED: f"finish configuring secrets.{self.name} in config.yaml",
            ErrorKind.TIMEOUT: f"raise secrets.{self.name}.timeout_seconds if this recurs",
            ErrorKind.NETWORK: "check connectivity to the secrets backend and retry",
        }
        return hints.get(kind, "") if kind is not None else ""
