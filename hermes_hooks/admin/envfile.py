"""``$HERMES_HOME/.env`` for operators: the functions of :mod:`hermes_hooks.plugins.envfile`.

The reader and writer moved down to the plugin layer, next to ``config.yaml``'s, so that
the compatibility layer's ``hermes_cli.config.get_env_value`` can use them; this module keeps
the name the CLI and admin code import.
"""

from __future__ import annotations

from hermes_hooks.plugins.envfile import (
    ENV_FILENAME,
    apply_env_file,
    env_file_path,
    read_env_file,
    remove_env_value,
    set_env_value,
)

__all__ = [
    "ENV_FILENAME",
    "apply_env_file",
    "env_file_path",
    "read_env_file",
    "remove_env_value",
    "set_env_value",
]
