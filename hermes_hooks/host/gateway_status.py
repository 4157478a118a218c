"""What ``hermes gateway status`` reports: the registered platforms and their last state."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from hermes_hooks.compat import gateway_config as _hconfig, gateway_status as _hstatus

if TYPE_CHECKING:
    from hermes_hooks.plugins.manager import PluginManager

__all__ = ["gather_status"]


def _alive(pid: object) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def gather_status(pm: PluginManager) -> dict[str, Any]:
    """Return the gateway's state and one record per platform (registered or recorded)."""
    with pm.activate():
        recorded = _hstatus.read_runtime_status() or {}
        config = _hconfig.load_gateway_config()
    enabled = {platform.value for platform in config.get_connected_platforms()}
    states = recorded.get("platforms") if isinstance(recorded.get("platforms"), dict) else {}
    assert isinstance(states, dict)
    pid = recorded.get("pid")
    alive = _alive(pid)
    gateway_state = str(recorded.get("gateway_state") or "never run")
    if gateway_state in ("running", "starting") and not alive:
        gateway_state = "not running (stale status)"
    platforms: list[dict[str, Any]] = []
    for name in sorted(set(pm.platforms.names()) | set(states)):
        entry = pm.platforms.get(name)
        record = states.get(name) if isinstance(states.get(name), dict) else {}
        assert isinstance(record, dict)
        state = str(record.get("state") or "never connected")
        if not alive and state in ("connected", "connecting", "retrying"):
            state = f"was {state}"
        platforms.append(
            {
                "name": name,
                "label": entry.label if entry is not None else name,
                "owner": entry.owner if entry is not None else "no plugin registers it here",
                "enabled": name in enabled,
                "state": state,
                "error_code": record.get("error_code"),
                "error_message": record.get("error_message"),
                "required_env": list(entry.required_env) if entry is not None else [],
            }
        )
    return {"gateway_state": gateway_state, "pid": pid, "alive": alive, "platforms": platforms}
