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
import subprocess
from collections.abc import Mapping, MutableMapping, Sequence
from pathlib import Path
from typing import Any, Final

import attrs

__all__ = [
    "DEFAULT_CLI_TIMEOUT_SECONDS",
    "DEFAULT_FETCH_TIMEOUT_SECONDS",
    "SECRET_SOURCE_API_VERSION",
    "ErrorKind",
    "FetchResult",
    "SecretSource",
    "build_minimal_provider_env",
    "get_source_environment",
    "is_valid_env_name",
    "redact_secret_value",
    "run_secret_cli",
    "scrub_ansi",
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


# -- Hermes' helpers for sources that run a vault's CLI ---------------------------------------

DEFAULT_CLI_TIMEOUT_SECONDS: Final = 30.0
"""The bound of :func:`run_secret_cli` when none is given."""

_ANSI: Final = re.compile(
    r"\x1b\[[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]|\x1b\][^\x07]*(?:\x07|\x1b\\|$)"
)

_PROVIDER_ENV_BASE: Final = (
    "PATH",
    "HOME",
    "USERPROFILE",
    "SYSTEMROOT",
    "TMPDIR",
    "TMP",
    "TEMP",
    "LANG",
    "LC_ALL",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_RUNTIME_DIR",
    "HTTPS_PROXY",
    "HTTP_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    "https_proxy",
    "http_proxy",
    "all_proxy",
    "no_proxy",
    "SSL_CERT_FILE",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
)


def scrub_ansi(text: str) -> str:
    """``text`` without ANSI escape sequences (a helper CLI's coloured diagnostics)."""
    return _ANSI.sub("", text or "")


def redact_secret_value(text: str, secret: str, *, replacement: str = "<redacted>") -> str:
    """``text`` with the exact ``secret`` replaced (a provider's diagnostics may echo it)."""
    if not text or not secret:
        return text or ""
    return text.replace(secret, replacement)


def build_minimal_provider_env(
    source_env: Mapping[str, str] | None = None,
    *,
    allow_env: Sequence[str] = (),
    extra_env: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The environment of a vault's CLI: locations, locale and proxies, the variables named in
    ``allow_env`` and ``extra_env``; never the whole environment, which holds every
    credential by now."""
    source = source_env if source_env is not None else get_source_environment()
    env = {key: source[key] for key in (*_PROVIDER_ENV_BASE, *allow_env) if key in source}
    env.update(extra_env or {})
    env["NO_COLOR"] = "1"
    return env


def run_secret_cli(
    argv: Sequence[str],
    *,
    allow_env: Sequence[str] = (),
    extra_env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_CLI_TIMEOUT_SECONDS,
) -> subprocess.CompletedProcess[str]:
    """Run a vault's CLI as Hermes does: an argument list (no shell), the minimal environment
    (:func:`build_minimal_provider_env`), stdin closed, stderr without ANSI codes.

    :raises RuntimeError: it could not start, or ran past ``timeout`` (a message safe to show).
    """
    env = build_minimal_provider_env(allow_env=allow_env, extra_env=extra_env)
    name = Path(str(argv[0])).name if argv else "?"
    try:
        done = subprocess.run(  # an argument list, no shell
            list(argv),
            env=env,
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise RuntimeError(f"{name} timed out after {timeout:.0f}s") from exc
    except OSError as exc:
        raise RuntimeError(f"failed to invoke {name}: {exc}") from exc
    done.stdout = done.stdout or ""
    done.stderr = scrub_ansi(done.stderr or "")
    return done
