"""The terminal environment contract (Hermes' ``agent.terminal_env_provider``).

A provider is a place where the ``terminal`` tool's commands run other than this machine (a
container, a cloud sandbox, a remote runner). Its :attr:`~TerminalEnvironmentProvider.name` is
what ``terminal.backend`` (or ``TERMINAL_ENV``) names; :meth:`create_environment` returns an
*environment*: any object with ``execute(command, timeout=None, **kwargs)`` (``cwd=`` is passed
when it takes it) returning ``{"output": str, "exit_code": int}`` (or ``"returncode"``) and,
optionally, ``cleanup()`` (Hermes' ``BaseEnvironment`` duck type).
"""

from __future__ import annotations

import abc
import copy
from collections.abc import Mapping
from typing import Any, Final, Protocol, runtime_checkable

__all__ = [
    "BUILTIN_BACKEND_NAMES",
    "Environment",
    "TerminalEnvironmentProvider",
]

BUILTIN_BACKEND_NAMES: Final = frozenset(
    {"local", "docker", "singularity", "modal", "managed_modal", "daytona", "vercel_sandbox", "ssh"}
)
"""Hermes' in-tree backends: a plugin may not take one of these names (``local`` runs here)."""


@runtime_checkable
class Environment(Protocol):
    """What :meth:`TerminalEnvironmentProvider.create_environment` returns."""

    def execute(self, command: str, cwd: str = "", **kwargs: Any) -> Mapping[str, Any]:
        """Run ``command``; return ``{"output": str, "returncode": int}``."""
        ...


class TerminalEnvironmentProvider(abc.ABC):
    """A pluggable terminal backend: subclasses implement :attr:`name`, :meth:`is_available`
    and :meth:`create_environment`; the rest has Hermes' defaults.

    The classification attributes are Hermes': ``is_remote`` (commands run off this host),
    ``is_container`` (its own filesystem), ``skip_container_guards``, ``cache_path_base``,
    ``strip_env_keys`` (vendor credentials never passed to a command) and
    ``session_isolated_when_nonpersistent``.
    """

    is_remote: bool = True
    is_container: bool = True
    session_isolated_when_nonpersistent: bool = False

    @property
    @abc.abstractmethod
    def name(self) -> str:
        """What ``terminal.backend`` names it by: lower case, ``[a-z0-9_]``."""

    @property
    def display_name(self) -> str:
        """The label shown in listings (the name by default)."""
        return self.name

    @property
    def description(self) -> str:
        """One line for pickers."""
        return f"Run commands in a {self.display_name} environment."

    @property
    def skip_container_guards(self) -> bool:
        """Whether the sandbox is disposable enough to skip dangerous-command prompts."""
        return self.is_container

    @property
    def cache_path_base(self) -> str | None:
        """Where synced ``~/.hermes/cache`` files land inside the backend, if elsewhere."""
        return None

    @property
    def strip_env_keys(self) -> frozenset[str]:
        """Vendor credential variables no command the agent runs may read."""
        return frozenset()

    @property
    def env_description(self) -> str:
        """Where commands run, for the prompt when the live probe fails."""
        return f"a {self.display_name} environment (likely Linux)"

    @abc.abstractmethod
    def is_available(self) -> bool:
        """Whether it can run commands now; cheap, no network calls, never raises."""

    def check_requirements(self, config: dict[str, Any]) -> bool:
        """The full check, with the merged ``terminal`` config."""
        return self.is_available()

    def probe(self) -> tuple[str, str]:
        """``(status, detail)``: ``ready``, ``needs_setup`` or ``unavailable``; never raises."""
        if self.is_available():
            return ("ready", "")
        return ("needs_setup", f"{self.display_name} is not configured.")

    def probe_with_config(self, config: Mapping[str, Any]) -> tuple[str, str]:
        """The probe, knowing the config (the plain probe by default)."""
        return self.probe()

    def setup_instructions(self) -> list[str]:
        """Lines ``hermes setup`` prints after choosing it."""
        return []

    def post_setup(self) -> None:  # noqa: B027 - optional, as in Hermes
        """An optional interactive step after choosing it."""

    def doctor_checks(self) -> list[tuple[bool, str, str]]:
        """``hermes doctor`` rows ``(ok, label, detail)``."""
        try:
            ok = bool(self.is_available())
        except Exception:
            ok = False
        detail = "(configured)" if ok else "(not configured — see setup instructions)"
        return [(ok, f"{self.display_name} backend", detail)]

    def get_config_schema(self) -> dict[str, dict[str, Any]]:
        """The schema of its keys below ``terminal.backends.<name>``."""
        return {}

    def resolve_config(self, config: Mapping[str, Any]) -> dict[str, Any]:
        """Its own config, resolved (a copy by default)."""
        return copy.deepcopy(dict(config))

    def get_setup_schema(self) -> dict[str, Any]:
        """What ``hermes tools`` shows to set it up."""
        return {"name": self.display_name, "badge": "", "tag": "", "env_vars": []}

    @abc.abstractmethod
    def create_environment(
        self,
        *,
        cwd: str,
        timeout: int,
        task_id: str = "default",
        image: str | None = None,
        container_config: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> Any:
        """Create an environment (see the module's docstring); must accept and ignore unknown
        keyword arguments."""
