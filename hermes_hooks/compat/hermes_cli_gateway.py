"""Hermes' ``hermes_cli.gateway``, as far as platform plugins use it.

Hermes' module is its ``hermes gateway`` command (setup wizard, service install...). The
platform plugins it ships reach it for one name, in their ``is_connected`` checks:
``get_env_value`` (which Hermes' module takes from ``hermes_cli.config``). That is what is
served; the command itself is ``hermes gateway`` here.
"""

from __future__ import annotations

from hermes_hooks.compat.hermes_cli_config import get_env_value

__all__ = ["get_env_value"]
