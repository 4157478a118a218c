"""Building a host: a plugin manager with the host tools, and the model ``config.yaml`` names."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from hermes_hooks.backends.models import load_model, load_model_settings
from hermes_hooks.host.tools import install_builtin_tools

if TYPE_CHECKING:
    from hermes_hooks.plugins.manager import PluginManager

__all__ = ["apply_secrets", "create_manager", "load_model", "load_model_settings"]

logger = logging.getLogger(__name__)
# load_model and load_model_settings live with the models family; hosts find them here too.


def create_manager(
    hermes_home: Path | str | None = None, *, strict: bool = False, load: bool = True
) -> PluginManager:
    """Return a manager with the host tools registered first, then the plugins loaded.

    Registering ``read_file``, ``terminal`` and ``delegate_task`` before any plugin loads is
    what makes them host tools: a plugin may replace one only with the operator's grant.

    :param load: discover and load the plugins (``pm.discover_and_load()``).
    """
    from hermes_hooks.plugins.manager import PluginManager

    pm = PluginManager(hermes_home, strict=strict)
    install_builtin_tools(pm)
    if load:
        pm.discover_and_load()
        from hermes_hooks.host.shell_hooks import install_shell_hooks

        install_shell_hooks(pm)
        apply_secrets(pm)
    return pm


def apply_secrets(pm: PluginManager) -> None:
    """Fill the environment from the enabled secret sources of ``pm``'s plugins (after
    ``.env``, as Hermes re-pulls plugin sources after discovery); a failed source is logged
    with what to do, never fatal."""
    from hermes_hooks.backends.secret_sources import SECRET_SOURCES, apply_secret_sources

    report = apply_secret_sources(pm)
    if report.error:
        logger.warning("secret sources not applied: %s", report.error)
    registry = SECRET_SOURCES.registry(pm)
    for part in report.sources:
        if part.result.ok:
            continue
        source = registry.get_provider(part.name)
        hint = ""
        if source is not None:
            try:
                hint = source.remediation(part.result.error_kind, {})
            except Exception:
                hint = ""
        logger.warning(
            "secret source %r failed: %s%s",
            part.name,
            part.result.error,
            f"; {hint}" if hint else "",
        )
    for conflict in report.conflicts:
        logger.warning("secret sources: %s", conflict)
