"""Running the dashboard: :func:`serve_dashboard` (blocking) and :func:`start_dashboard` (in a
thread, for a host that runs the dashboard beside its own work: ``hermes gateway run
--dashboard``, tests).

The dashboard observes the manager it is given: its pages show that manager's plugins and the
hook figures counted since it started, live. uvicorn's access log is off (an address may hold
the session token); the dashboard logs each request's method, path and status itself, without
the query.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from typing import Any

from hermes_hooks.backends.dashboard_auth.registry import providers_for
from hermes_hooks.dashboard.app import DashboardLimits, build_app
from hermes_hooks.dashboard.auth import Gate, choose_mode
from hermes_hooks.dashboard.counters import HookCounters
from hermes_hooks.errors import HermesHooksError
from hermes_hooks.plugins.manager import PluginManager

__all__ = ["DashboardServer", "MissingExtraError", "serve_dashboard", "start_dashboard"]

logger = logging.getLogger(__name__)
access_logger = logging.getLogger("hermes_hooks.dashboard.access")

DEFAULT_PORT = 9119
"""Hermes' dashboard port."""


class MissingExtraError(HermesHooksError):
    """The dashboard's dependencies (the ``dashboard`` extra) are not installed."""


def _require_extra() -> None:
    try:
        import fastapi  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise MissingExtraError(
            f"hermes dashboard needs FastAPI and uvicorn ({exc.name} is missing): "
            "pip install 'hermes-hooks[dashboard]'"
        ) from None


class DashboardServer:
    """A dashboard running on a thread: its address, its token, and :meth:`stop`."""

    def __init__(
        self,
        server: Any,
        thread: threading.Thread,
        sock: socket.socket,
        gate: Gate,
        counters: HookCounters,
    ) -> None:
        self._server = server
        self._thread = thread
        self._socket = sock
        self.gate = gate
        self.counters = counters
        host, port = sock.getsockname()[:2]
        self.host = host
        self.port = int(port)

    @property
    def base_url(self) -> str:
        """``http://HOST:PORT``."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def url(self) -> str:
        """The address to open: with the session token in token modes (say it only to the
        person who started it)."""
        if self.gate.mode == "gated":
            return self.base_url + "/"
        return f"{self.base_url}/?token={self.gate.token}"

    def stop(self, timeout: float = 5.0) -> None:
        """Stop serving and wait for the thread."""
        self._server.should_exit = True
        self._thread.join(timeout)
        self.counters.detach()
        self._socket.close()

    def __enter__(self) -> DashboardServer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def skip_reasons(pm: PluginManager) -> list[str]:
    """Why loaded plugins registered no dashboard-auth provider: each one's module-level
    ``LAST_SKIP_REASON`` (Hermes' bundled providers keep it), as ``"plugin: reason"``."""
    found = []
    for info in pm.list_plugins():
        module = pm.get_plugin_module(info.key)
        reason = getattr(module, "LAST_SKIP_REASON", None) if module is not None else None
        if isinstance(reason, str) and reason.strip():
            found.append(f"{info.key}: {reason.strip()}")
    return found


def _prepare(
    pm: PluginManager,
    host: str,
    port: int,
    insecure: bool,
    limits: DashboardLimits | None,
    token: str | None,
    login: bool = False,
) -> tuple[Any, socket.socket, Gate, HookCounters]:
    _require_extra()
    import uvicorn

    mode = choose_mode(
        host, insecure, providers_for(pm), login=login, skip_reasons=skip_reasons(pm)
    )
    gate = Gate(mode, lambda: providers_for(pm), token=token)
    counters = HookCounters().attach(pm)
    app = build_app(pm, gate=gate, counters=counters, limits=limits)

    @app.middleware("http")
    async def access_log(request: Any, call_next: Any) -> Any:
        started = time.perf_counter()
        response = await call_next(request)
        access_logger.info(
            "%s %s %s %.1fms",
            request.method,
            request.url.path,
            response.status_code,
            (time.perf_counter() - started) * 1000,
        )
        return response

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        counters.detach()
        raise HermesHooksError(f"the dashboard cannot listen on {host}:{port}: {exc}") from None
    sock.listen(128)
    sock.set_inheritable(True)
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        lifespan="off",
        proxy_headers=mode == "gated",
        timeout_keep_alive=5,
        h11_max_incomplete_event_size=65536,
    )
    return uvicorn.Server(config), sock, gate, counters


def start_dashboard(
    pm: PluginManager,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    insecure: bool = False,
    limits: DashboardLimits | None = None,
    token: str | None = None,
    login: bool = False,
) -> DashboardServer:
    """Start the dashboard observing ``pm`` on a thread and return once it listens.

    ``login`` asks for a ``dashboard_auth`` login even on loopback. ``port=0`` lets the system
    choose (see :attr:`DashboardServer.port`). This is what a host
    calls to run the dashboard beside its work (``hermes gateway run --dashboard``).

    :raises DashboardAuthError: beyond loopback with no provider and no ``insecure``.
    :raises MissingExtraError: FastAPI or uvicorn is not installed.
    """
    server, sock, gate, counters = _prepare(pm, host, port, insecure, limits, token, login)
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, name="hermes-dashboard", daemon=True
    )
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.01)
    if not server.started:
        server.should_exit = True
        sock.close()
        counters.detach()
        raise HermesHooksError("the dashboard did not start")
    return DashboardServer(server, thread, sock, gate, counters)


def serve_dashboard(
    pm: PluginManager,
    *,
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    insecure: bool = False,
    limits: DashboardLimits | None = None,
    announce: Any = print,
    login: bool = False,
) -> None:
    """Serve the dashboard observing ``pm`` until interrupted (Ctrl-C).

    ``announce`` receives the line saying where it listens (with the session token in token
    modes): the terminal, never a log.
    """
    server, sock, gate, counters = _prepare(pm, host, port, insecure, limits, None, login)
    bound_host, bound_port = sock.getsockname()[:2]
    shown = f"[{bound_host}]" if ":" in bound_host else bound_host
    base = f"http://{shown}:{bound_port}"
    if gate.mode == "gated":
        names = ", ".join(p.name for p in gate.session_providers())
        announce(f"Hermes dashboard on {base}/ (log in with: {names})")
    else:
        if gate.mode == "insecure":
            announce(
                "warning: --insecure: anyone who reaches this address and has the token "
                "can use the dashboard"
            )
        announce(f"Hermes dashboard on {base}/?token={gate.token}")
    try:
        server.run(sockets=[sock])
    finally:
        counters.detach()
        sock.close()
