"""``hermes dashboard``: the plugins, their hooks and Hermes' dashboard plugins in a browser.

A FastAPI application on uvicorn (the ``dashboard`` extra, imported only when the dashboard
runs) observing one manager: its plugins, every hook's implementations with the calls counted
since it started, tools and provider families, memory and the doctor's checks. Plugins add tabs
with ``dashboard/manifest.json``; ``dashboard_auth`` providers guard it beyond loopback.

Run it with ``hermes dashboard``, beside a host with :func:`start_dashboard`, or blocking with
:func:`serve_dashboard` (``from hermes_hooks.dashboard import serve_dashboard``); importing them
does not import FastAPI. See ``docs/how-to/dashboard.md``.
"""

from __future__ import annotations

from hermes_hooks.dashboard.server import DashboardServer, serve_dashboard, start_dashboard

__all__ = ["DashboardServer", "serve_dashboard", "start_dashboard"]
