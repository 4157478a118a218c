"""What the dashboard's pages show, read from the manager it observes: JSON-ready dicts.

Nothing here knows of HTTP; :mod:`hermes_hooks.dashboard.app` serves these. The actions
(enable, disable, doctor, choosing a provider, forgetting a fact) are the CLI's own, from
:mod:`hermes_hooks.admin` and :mod:`hermes_hooks.backends`, so the page writes config exactly
as ``hermes plugins enable`` does.
"""

from __future__ import annotations

import importlib
import logging
from pathlib import Path
from typing import Any

from hermes_hooks.admin.actions import is_effectively_enabled, resolve_plugin, set_enabled
from hermes_hooks.admin.introspect import list_hook_order, list_tools, registrations_of
from hermes_hooks.dashboard.counters import HookCounters
from hermes_hooks.errors import HermesHooksError
from hermes_hooks.plugins import extensions
from hermes_hooks.plugins.manager import PluginManager

__all__ = [
    "KANBAN_MODULE",
    "choose_family_provider",
    "doctor_plugin",
    "environment",
    "families",
    "forget_fact",
    "hooks",
    "kanban",
    "memory",
    "plugins",
    "set_plugin_enabled",
    "tools",
]

logger = logging.getLogger(__name__)

KANBAN_MODULE = "hermes_hooks.host.kanban"
"""The kanban subsystem's module; its board has a tab when it is installed."""


def plugins(pm: PluginManager) -> list[dict[str, Any]]:
    """Every discovered plugin: its status and why, version, source, what it registered, and
    whether config enables it (which may differ from its status until it is reloaded)."""
    config = pm.plugins_config
    candidates = {c.key: c for c in pm.discover()}
    out = []
    for info in pm.list_plugins():
        row = info.to_dict()
        candidate = candidates.get(info.key)
        row["configured"] = (
            "enabled" if candidate and is_effectively_enabled(config, candidate) else "disabled"
        )
        row["registrations"] = registrations_of(pm, info.key)
        out.append(row)
    return out


def set_plugin_enabled(pm: PluginManager, name: str, enabled: bool) -> dict[str, Any]:
    """Enable or disable plugin ``name`` in ``config.yaml`` (as ``hermes plugins enable`` and
    ``disable`` do), then apply it to the observed manager: a disabled plugin is unloaded; an
    enabled one loads with a reload of the plugins (as a restart would).

    :raises HermesHooksError: no plugin of that name (the error names the closest ones).
    """
    candidate = resolve_plugin(pm.discover(), name)
    changed = set_enabled(pm.hermes_home, candidate, enabled)
    if enabled:
        pm.discover_and_load(force=True)
    else:
        pm.reload_config()
        pm.unload_plugin(candidate.key)
    info = pm.get_plugin_info(candidate.key)
    return {
        "key": candidate.key,
        "changed": changed,
        "enabled": enabled,
        "status": info.status if info else None,
        "error": info.error if info else None,
    }


def doctor_plugin(pm: PluginManager, name: str) -> dict[str, Any]:
    """Check plugin ``name`` as ``hermes plugins doctor NAME`` does."""
    from hermes_hooks.admin.doctor import check_plugin

    report: dict[str, Any] = check_plugin(resolve_plugin(pm.discover(), name)).to_dict()
    return report


def hooks(pm: PluginManager, counters: HookCounters | None) -> dict[str, Any]:
    """Each hook with its implementations in resolved (call) order, and the figures counted
    since the dashboard started: calls and time per hook, calls reaching each implementation,
    and each plugin's failures and timeouts."""
    figures = counters.snapshot() if counters is not None else {}
    infos = {info.key: info for info in pm.list_plugins()}
    out = []
    for order in list_hook_order(pm):
        row = order.to_dict()
        hook_figures = figures.get(order.hook, {})
        row["calls"] = hook_figures.get("calls", 0)
        row["seconds"] = hook_figures.get("seconds", 0.0)
        impl_figures = hook_figures.get("impls", {})
        for impl in row["impls"]:
            counted = impl_figures.get(impl["plugin"], {})
            impl["calls"] = counted.get("calls", 0)
            impl["seconds"] = counted.get("seconds", 0.0) if counted.get("timed") else None
            info = infos.get(impl["plugin"])
            impl["plugin_errors"] = (
                info.hook_errors if info else pm.get_failures(impl["plugin"]).count
            )
            impl["plugin_timeouts"] = info.hook_timeouts if info else 0
            impl["last_error"] = info.last_hook_error if info else None
        out.append(row)
    return {
        "since": counters.started if counters is not None else None,
        "per_implementation_time": any(
            impl.get("timed") for f in figures.values() for impl in f.get("impls", {}).values()
        ),
        "hooks": out,
    }


def tools(pm: PluginManager) -> list[dict[str, Any]]:
    """Every registered tool: its owner, toolset, and whether it is offered now and why not."""
    return [info.to_dict() for info in list_tools(pm)]


def families(pm: PluginManager) -> list[dict[str, Any]]:
    """Each provider family with a ``hermes tools`` section: its providers, which is active,
    what each needs (``hermes tools <family> --json``)."""
    from hermes_hooks.backends.listing import describe_family

    plugins_now = pm.list_plugins()
    out = []
    for family in extensions.families():
        cli_name = getattr(family, "cli_name", None)
        if not cli_name:
            continue
        try:
            described = describe_family(pm.backend(family.name), plugins_now)
        except HermesHooksError as exc:
            described = {"error": str(exc), "providers": []}
        described["family"] = family.name
        described["cli_name"] = cli_name
        described["title"] = getattr(family, "title", family.name)
        out.append(described)
    return out


def choose_family_provider(pm: PluginManager, family: str, provider: str) -> dict[str, Any]:
    """Choose ``provider`` for ``family``, written as ``hermes tools <family> --provider``."""
    from hermes_hooks.backends.listing import choose_provider

    chosen: dict[str, Any] = choose_provider(
        pm.backend(family), pm.hermes_home, provider, None, plugins=pm.list_plugins()
    )
    return chosen


def memory(pm: PluginManager, query: str | None, limit: int = 50) -> dict[str, Any]:
    """The memory status and the builtin's facts: the latest, or those matching ``query``."""
    from hermes_hooks.backends.memory.status import describe_memory, search_facts
    from hermes_hooks.backends.memory.store import FactStore, db_path

    facts: list[dict[str, Any]] = []
    if query:
        facts = [dict(f.to_dict()) for f in search_facts(pm.hermes_home, query, limit)]
    elif db_path(pm.hermes_home).is_file():
        with FactStore(db_path(pm.hermes_home)) as store:
            facts = [dict(f.to_dict()) for f in store.latest(limit)]
    return {"status": describe_memory(pm), "query": query or "", "facts": facts}


def forget_fact(pm: PluginManager, fact_id: int) -> dict[str, Any] | None:
    """Forget the builtin's fact ``fact_id``; ``None`` when there is none."""
    from hermes_hooks.backends.memory.status import forget_fact as forget

    fact = forget(pm.hermes_home, fact_id)
    return dict(fact.to_dict()) if fact is not None else None


def environment(pm: PluginManager) -> dict[str, Any]:
    """The health checks of ``hermes doctor``."""
    from hermes_hooks.admin.health import check_environment

    report: dict[str, Any] = check_environment(pm).to_dict()
    return report


def kanban(home: Path) -> dict[str, Any]:
    """The kanban board's tasks, or why there is no board (the subsystem is not installed)."""
    try:
        module = importlib.import_module(KANBAN_MODULE)
    except ImportError as exc:
        return {"available": False, "reason": f"the kanban subsystem is not installed ({exc})"}
    try:
        board = module.KanbanBoard.open(home)
        tasks = [dict(task) for task in board.list_tasks()]
    except Exception as exc:
        logger.warning("dashboard: the kanban board could not be read: %s", exc)
        return {"available": False, "reason": f"the kanban board could not be read: {exc}"}
    return {"available": True, "tasks": tasks}


def gateway_drain(
    home: Path, action: str, principal: str, suppress_notification: bool
) -> dict[str, Any]:
    """Begin (``"drain"``) or cancel (``"cancel"``) a gateway drain, as Hermes'
    ``POST /api/gateway/drain`` does: write or remove the home's drain marker
    (:mod:`gateway.drain_control <hermes_hooks.compat.gateway_drain_control>`), which
    ``hermes gateway run`` watches.

    :raises ValueError: another action.
    """
    from hermes_hooks.compat import gateway_drain_control as control

    if action == "cancel":
        existed = control.clear_drain_request(home=home)
        logger.info("gateway drain cancelled by %s (was draining: %s)", principal, existed)
        return {"ok": True, "action": "cancel", "was_draining": existed}
    if action != "drain":
        raise ValueError(f"Unknown drain action {action!r}; expected 'drain' or 'cancel'")
    payload = control.write_drain_request(
        principal=principal, suppress_notification=suppress_notification, home=home
    )
    logger.info("gateway drain requested by %s", principal)
    return {
        "ok": True,
        "action": "drain",
        "requested_at": payload["requested_at"],
        "draining": True,
        "suppress_notification": suppress_notification,
    }
