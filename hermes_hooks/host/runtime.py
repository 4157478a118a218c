"""Building a host: a plugin manager with the host tools, and the model ``config.yaml`` names."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from hermes_hooks.backends.models import ModelProvider, ModelSettings, create_model
from hermes_hooks.host.tools import install_builtin_tools
from hermes_hooks.plugins.config import config_path, load_config

if TYPE_CHECKING:
    from hermes_hooks.plugins.manager import PluginManager

__all__ = ["create_manager", "load_model", "load_model_settings"]


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
    return pm


def load_model_settings(pm: PluginManager) -> ModelSettings:
    """Return the ``model:`` settings of ``pm``'s ``config.yaml`` (defaults when absent).

    :raises ConfigError: the file cannot be read or the section has wrong types.
    """
    home = pm.hermes_home
    return ModelSettings.from_config(load_config(home), source=config_path(home))


def load_model(pm: PluginManager) -> ModelProvider:
    """Build the model ``pm``'s ``config.yaml`` names (``offline`` when it names none).

    :raises ConfigError: the provider is unknown or its settings do not fit.
    """
    return create_model(load_model_settings(pm))
