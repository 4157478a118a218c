"""Terminal environments: where the ``terminal`` tool's commands run.

``terminal.backend`` in ``config.yaml`` (``TERMINAL_ENV`` in the environment, read first, as
Hermes reads it) names the backend; unset or ``local``, commands run on this machine, as
before. Any other name must be a provider a plugin registered with
``ctx.register_terminal_environment_provider(provider)`` (Hermes' contract, served as
``agent.terminal_env_provider``); Hermes' built-in names (``docker``, ``ssh``...) are refused at
registration, so a plugin never shadows them. :func:`run_command` creates the provider's
environment once per task (kept until its plugin unloads, then ``cleanup()``), runs the
command in it, bounded and isolated like every family call, and answers Hermes' envelope.
"""

from __future__ import annotations

import functools
import os
import re
import threading
import types
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from hermes_hooks.backends.calls import call_provider
from hermes_hooks.backends.family import Family, FamilyError, ProviderRegistry, Selection
from hermes_hooks.backends.terminal_env.provider import (
    BUILTIN_BACKEND_NAMES,
    Environment,
    TerminalEnvironmentProvider,
)
from hermes_hooks.errors import HermesHooksError, RegistrationError
from hermes_hooks.registries.base import HOST, Handle

if TYPE_CHECKING:
    from hermes_hooks.plugins.manager import PluginManager

__all__ = [
    "BUILTIN_BACKEND_NAMES",
    "ENV_VARIABLE",
    "LOCAL",
    "TERMINAL_ENV",
    "Environment",
    "TerminalEnvRegistry",
    "TerminalEnvironmentProvider",
    "backend_name",
    "run_command",
    "strip_env_keys",
]

LOCAL: Final = "local"
"""The backend that runs commands on this machine (the host's own)."""

ENV_VARIABLE: Final = "TERMINAL_ENV"
"""The environment variable Hermes reads before ``terminal.backend``."""

CREATE_TIMEOUT: Final = 120.0
"""Seconds ``create_environment`` may take (a sandbox may boot)."""

EXECUTE_GRACE: Final = 30.0
"""Seconds an environment may take past the command's own timeout before it is abandoned."""

_NAME: Final = re.compile(r"^[a-z0-9_]+$")


class TerminalEnvRegistry(ProviderRegistry[TerminalEnvironmentProvider]):
    """The terminal environment providers of one manager, and the environments they made."""

    def __init__(self, home: Any = None) -> None:
        super().__init__(TERMINAL_ENV, home)
        self._environments: dict[tuple[str, str], Any] = {}
        self._lock = threading.Lock()

    def register_provider(self, provider: object, *, owner: str = HOST) -> Handle:
        """Register as every family does; the name must be Hermes' ``[a-z0-9_]+``."""
        if isinstance(provider, TerminalEnvironmentProvider):
            try:
                raw = provider.name
            except Exception:  # the base class says so, naming the error
                raw = None
            if isinstance(raw, str) and raw.strip() and not _NAME.match(raw.strip()):
                raise RegistrationError(
                    f"terminal environment provider {type(provider).__name__} from plugin "
                    f"{owner!r} is refused: its name must be lower case letters, digits and "
                    f"'_' (what terminal.backend names), found {raw!r}"
                )
        return super().register_provider(provider, owner=owner)

    def environment(
        self, provider: TerminalEnvironmentProvider, *, cwd: str, timeout: int, task_id: str
    ) -> Any:
        """Return the environment of ``provider`` for ``task_id``, created on first use.

        :raises FamilyError: ``create_environment`` raised, timed out or returned no
            environment.
        """
        key = (provider.name, task_id or "default")
        with self._lock:
            found = self._environments.get(key)
        if found is not None:
            return found
        # Hermes' create_environment takes the commands' timeout as 'timeout=', the keyword
        # call_provider bounds the call with: the arguments are bound first.
        bound = functools.partial(
            provider.create_environment, cwd=cwd, timeout=timeout, task_id=key[1]
        )
        created = call_provider(
            TERMINAL_ENV,
            provider,
            "create_environment",
            timeout=CREATE_TIMEOUT,
            registry=self,
            on=types.SimpleNamespace(create_environment=bound),
        )
        if not callable(getattr(created, "execute", None)):
            raise FamilyError(
                f"terminal environment provider {provider.name!r}: create_environment() returned "
                f"{type(created).__name__}, which has no execute(command, cwd, timeout=)"
            )
        with self._lock:
            self._environments.setdefault(key, created)
            created = self._environments[key]
        owner = self.owner_of(provider.name)
        manager = self.manager
        if owner is not None and owner != HOST and manager is not None:
            manager.add_unload_callback(owner, lambda: self._drop(key))
        return created

    def _drop(self, key: tuple[str, str]) -> None:
        with self._lock:
            environment = self._environments.pop(key, None)
        cleanup = getattr(environment, "cleanup", None)
        if callable(cleanup):
            cleanup()

    def close(self) -> None:
        """Clean up every environment made (the host is done)."""
        with self._lock:
            keys = list(self._environments)
        for key in keys:
            try:
                self._drop(key)
            except Exception:  # one backend's cleanup never stops the others'
                continue


TERMINAL_ENV: Final[Family[TerminalEnvironmentProvider]] = Family(
    name="terminal_env",
    title="terminal environment",
    provider_type=TerminalEnvironmentProvider,
    selections=(Selection("terminal.backend", default=LOCAL),),
    ctx_method="register_terminal_environment_provider",
    provider_kind="terminal environment provider",
    registry_class=TerminalEnvRegistry,
    reserved_names=BUILTIN_BACKEND_NAMES,
    reserved_what="a built-in terminal backend of Hermes",
    categories=("terminal",),
    default_timeout=CREATE_TIMEOUT,
)
"""The terminal environment family."""


def strip_env_keys(pm: PluginManager) -> frozenset[str]:
    """The variables no command the agent runs may read: every registered provider's
    ``strip_env_keys`` (whichever backend is chosen, as Hermes strips them); a provider whose
    property raises adds none."""
    keys: set[str] = set()
    for provider in TERMINAL_ENV.registry(pm).list_providers():
        try:
            found = provider.strip_env_keys
            keys.update(k for k in found if isinstance(k, str))
        except Exception:
            continue
    return frozenset(keys)


def backend_name(pm: PluginManager, environ: Mapping[str, str] | None = None) -> str:
    """Return the backend the ``terminal`` tool uses now: ``TERMINAL_ENV``, else
    ``terminal.backend``, else ``local``.

    :raises ConfigError: ``config.yaml``'s ``terminal`` section is malformed.
    """
    env = os.environ if environ is None else environ
    chosen = (env.get(ENV_VARIABLE) or "").strip().lower()
    if chosen:
        return chosen
    settings = TERMINAL_ENV.registry(pm).settings()
    configured = settings.choice(TERMINAL_ENV.selections[0])
    return configured.strip().lower() if configured else LOCAL


def run_command(
    pm: PluginManager, backend: str, command: str, *, cwd: str, timeout: int, task_id: str
) -> dict[str, Any]:
    """Run ``command`` in the environment of the provider named ``backend``.

    :returns: ``{"output", "exit_code"}``, or ``{"output": "", "exit_code": -1, "error"}``
        when there is no such provider, or it (or its environment) failed.
    """
    registry = TERMINAL_ENV.registry(pm)
    if backend in BUILTIN_BACKEND_NAMES:
        return _failed(
            f"terminal.backend is {backend!r}, a built-in backend of Hermes this host does not "
            f"run; use 'local' or a terminal environment plugin "
            f"(registered: {', '.join(registry.names()) or 'none'})"
        )
    provider = registry.get_provider(backend)
    if provider is None:
        import difflib

        names = registry.names()
        close = difflib.get_close_matches(backend, [*names, LOCAL], n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        return _failed(
            f"terminal.backend is {backend!r}{hint}, but no loaded plugin registered a terminal "
            f"environment provider of that name (registered: {', '.join(names) or 'none'}); "
            f"enable its plugin or set terminal.backend: local"
        )
    if not isinstance(registry, TerminalEnvRegistry):  # pragma: no cover - the family's own
        return _failed("the terminal environment registry is not the family's")
    try:
        environment = registry.environment(provider, cwd=cwd, timeout=timeout, task_id=task_id)
        bound = functools.partial(
            environment.execute, command, **_execute_kwargs(environment, cwd, timeout)
        )
        result = call_provider(
            TERMINAL_ENV,
            provider,
            "execute",
            timeout=timeout + EXECUTE_GRACE,
            registry=registry,
            check_available=False,
            on=types.SimpleNamespace(execute=bound),
        )
    except HermesHooksError as exc:  # unavailable, raised, timed out: said, counted
        return _failed(str(exc))
    if not isinstance(result, Mapping):
        return _failed(
            f"terminal environment {backend!r}: execute() returned {type(result).__name__}, "
            "expected {'output': str, 'returncode': int}"
        )
    output = result.get("output", "")
    code = result.get("returncode", result.get("exit_code"))
    envelope: dict[str, Any] = {
        "output": output if isinstance(output, str) else str(output),
        "exit_code": code if isinstance(code, int) and not isinstance(code, bool) else -1,
    }
    error = result.get("error")
    if isinstance(error, str) and error:
        envelope["error"] = error
    return envelope


def _execute_kwargs(environment: Any, cwd: str, timeout: int) -> dict[str, Any]:
    """``timeout=`` always, ``cwd=`` when ``execute`` takes it: Hermes' guide has
    ``execute(command, timeout=None, **kwargs)``, its ``BaseEnvironment`` ``execute(command,
    cwd="", *, timeout=None)``; both are passed by name, so neither lands in the other."""
    import inspect

    try:
        parameters = inspect.signature(environment.execute).parameters
    except (TypeError, ValueError):
        return {"timeout": timeout}
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
    if takes_any or "cwd" in parameters:
        return {"cwd": cwd, "timeout": timeout}
    return {"timeout": timeout}


def _failed(message: str) -> dict[str, Any]:
    return {"output": "", "exit_code": -1, "error": message}
