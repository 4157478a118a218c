"""Hermes' ``tools.lazy_deps``: the optional packages a backend needs, by feature.

Hermes installs a missing package into its venv on first use. hermes-hooks never installs
anything silently: :func:`ensure` returns when the feature's packages are installed and
otherwise raises :class:`FeatureUnavailable` naming each missing package and the command that
installs it (``hermes plugins install`` asks before installing a plugin's
``pip_dependencies``).
"""

from __future__ import annotations

import importlib.metadata
import re
from collections.abc import Callable
from typing import Any, Final

from packaging.requirements import InvalidRequirement, Requirement

__all__ = [
    "LAZY_DEPS",
    "FeatureUnavailable",
    "activate_durable_lazy_target",
    "ensure",
    "ensure_and_bind",
    "feature_missing",
    "feature_install_command",
    "missing_packages",
]

LAZY_DEPS: Final[dict[str, tuple[str, ...]]] = {
    "provider.anthropic": ("anthropic",),
    "provider.bedrock": ("boto3",),
    "search.exa": ("exa-py",),
    "search.firecrawl": ("firecrawl-py",),
    "search.parallel": ("parallel-web",),
    "export.otlp": ("opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"),
    "tts.edge": ("edge-tts",),
    "tts.elevenlabs": ("elevenlabs",),
    "image.fal": ("fal-client",),
    "memory.honcho": ("honcho-ai",),
    "memory.supermemory": ("supermemory",),
    "memory.mem0": ("mem0ai>=2.0.10,<3",),
    "platform.telegram": ("python-telegram-bot",),
    "platform.discord": ("discord.py",),
    "platform.slack": ("slack-bolt", "slack-sdk"),
    "platform.matrix": ("mautrix[encryption]", "aiosqlite", "asyncpg", "aiohttp-socks"),
    "platform.dingtalk": ("dingtalk-stream", "alibabacloud-dingtalk", "qrcode"),
    "platform.feishu": ("lark-oapi", "qrcode"),
    "platform.wecom_callback": ("defusedxml",),
    "platform.teams": ("microsoft-teams-apps", "aiohttp"),
    "tool.dashboard": ("fastapi", "uvicorn"),
}
"""Each feature and the packages it needs (Hermes' allowlist, without its exact pins)."""

_SAFE: Final = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]*(\[[A-Za-z0-9_,\-]+\])?[<>=!~,.\w*+-]*$")


class FeatureUnavailable(RuntimeError):
    """A feature's packages are missing (this project never installs them by itself)."""

    def __init__(self, feature: str, missing: tuple[str, ...], reason: str) -> None:
        self.feature, self.missing, self.reason = feature, missing, reason
        specs = " ".join(repr(spec) for spec in missing)
        super().__init__(
            f"Feature {feature!r} unavailable: {reason}. To enable it: pip install {specs}"
        )


def _installed(spec: str) -> bool:
    try:
        requirement = Requirement(spec)
    except InvalidRequirement:
        return False
    try:
        version = importlib.metadata.version(requirement.name)
    except importlib.metadata.PackageNotFoundError:
        return False
    return not requirement.specifier or requirement.specifier.contains(version, prereleases=True)


def missing_packages(feature: str) -> tuple[str, ...]:
    """Return the packages of ``feature`` that are not installed (or not in range).

    :raises KeyError: ``feature`` is not in :data:`LAZY_DEPS`.
    """
    return tuple(spec for spec in LAZY_DEPS[feature] if not _installed(spec))


def feature_install_command(feature: str) -> str:
    """Return the ``pip install`` command for ``feature``'s missing packages (empty if none)."""
    missing = missing_packages(feature)
    return "pip install " + " ".join(repr(s) for s in missing) if missing else ""


def feature_missing(feature: str) -> tuple[str, ...]:
    """The packages of ``feature`` not installed; ``()`` for an unknown feature (Hermes reads
    an unknown feature's specs as none)."""
    return missing_packages(feature) if feature in LAZY_DEPS else ()


def ensure(feature: str, *, prompt: bool = True) -> None:
    """Return when ``feature``'s packages are installed; never installs them.

    :raises FeatureUnavailable: some are missing (each named), or ``feature`` is unknown.
    """
    if feature not in LAZY_DEPS:
        raise FeatureUnavailable(feature, (), f"{feature!r} is not a known feature")
    missing = missing_packages(feature)
    unsafe = [spec for spec in missing if not _SAFE.match(spec)]
    if unsafe:
        raise FeatureUnavailable(feature, tuple(unsafe), "its package specs are not plain names")
    if missing:
        raise FeatureUnavailable(
            feature, missing, "hermes-hooks installs no package by itself (Hermes would, here)"
        )


def activate_durable_lazy_target() -> None:
    """Hermes puts its lazy-install folder on ``sys.path``; nothing is installed here: no-op."""
    return None


def ensure_and_bind(
    feature: str,
    importer: Callable[[], dict[str, Any]],
    target_globals: dict[str, Any],
    *,
    prompt: bool = False,
) -> bool:
    """:func:`ensure` ``feature``, then put what ``importer()`` returns into
    ``target_globals`` (how Hermes' adapters rebind their optional imports); ``False`` when the
    packages are missing or the import fails (nothing is installed here)."""
    try:
        ensure(feature, prompt=prompt)
        bindings = importer()
    except (FeatureUnavailable, ImportError):
        return False
    target_globals.update(bindings)
    return True
