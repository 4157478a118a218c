"""Hermes' ``agent.secret_sources.base``: the secret source ABC and its result types.

The same objects as :mod:`hermes_hooks.backends.secret_sources.base`, so a source written for
Hermes registers with ``ctx.register_secret_source`` unchanged.
"""

from __future__ import annotations

from hermes_hooks.backends.secret_sources.base import (
    DEFAULT_CLI_TIMEOUT_SECONDS,
    DEFAULT_FETCH_TIMEOUT_SECONDS,
    SECRET_SOURCE_API_VERSION,
    ErrorKind,
    FetchResult,
    SecretSource,
    build_minimal_provider_env,
    get_source_environment,
    is_valid_env_name,
    redact_secret_value,
    run_secret_cli,
    scrub_ansi,
)

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
