"""Load one plugin in a throwaway ``HERMES_HOME`` and record what it tried to do.

Used to check a plugin before it is trusted (``hermes plugins doctor``) and to learn whether it
asks to replace host tools (``hermes plugins enable``) without touching the real home: the
trial home is a temporary folder holding only a ``config.yaml`` that enables the one plugin, so
whatever the plugin writes under ``ctx.hermes_home`` is thrown away with it.
"""

from __future__ import annotations

import contextlib
import inspect
import logging
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attrs

from hermes_hooks.errors import PluginTrustError
from hermes_hooks.plugins.config import write_config
from hermes_hooks.plugins.discovery import Candidate
from hermes_hooks.plugins.manager import PluginManager, callback_of
from hermes_hooks.plugins.trust import TRUSTED_HASH_FIELD, content_hash
from hermes_hooks.registries.base import Handle

__all__ = ["HookimplRecord", "TrialManager", "captured_logs", "trial_load", "where_defined"]


def where_defined(function: object) -> tuple[str | None, int | None]:
    """Return the file and first line of a function (unwrapping guards and shims), if known."""
    target = callback_of(function) if callable(function) else function
    target = inspect.unwrap(target) if callable(target) else target
    code = getattr(target, "__code__", None)
    if code is None:
        call = type(target).__dict__.get("__call__")  # a callable object: its method
        code = getattr(call, "__code__", None)
    if code is None:
        return None, None
    return code.co_filename, code.co_firstlineno


@attrs.frozen
class HookimplRecord:
    """One hook implementation a plugin offered to pluggy, seen before pluggy validated it.

    :param hook: the hook it implements (``specname`` or its attribute name).
    :param function: the plugin's own function (a ``register_hook`` callback, not its adapter).
    :param argnames: the arguments pluggy would pass it (those without defaults).
    :param via_register_hook: it came from ``ctx.register_hook``, not ``@hookimpl``.
    :param opts: the pluggy options (``tryfirst``, ``wrapper``, ...).
    """

    hook: str
    function: Callable[..., Any]
    argnames: tuple[str, ...]
    via_register_hook: bool
    opts: dict[str, Any] = attrs.field(factory=dict, eq=False)


def _required_args(function: Callable[..., Any]) -> tuple[str, ...]:
    """Return the arguments pluggy passes to an implementation: those without a default."""
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return ()
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return tuple(
        p.name
        for p in signature.parameters.values()
        if p.kind in kinds and p.default is inspect.Parameter.empty
    )


class TrialManager(PluginManager):
    """A manager that discovers exactly one candidate and records what its plugin registers."""

    def __init__(self, candidate: Candidate, hermes_home: Path) -> None:
        super().__init__(hermes_home)
        self.strict = False  # a failure is what the trial reports, even under STRICT_ENV
        self.candidate = candidate
        self.hookimpls: list[HookimplRecord] = []
        self.log_records: list[logging.LogRecord] = []
        self._override_requests: list[str] = []
        # Wrap this registry's method (rather than replace the registry), so that the host's
        # own tools stay registered and a clash with them shows as it would in the host.
        register_tool = self.tools.register_tool

        def recording_register_tool(*args: Any, **kwargs: Any) -> Handle:
            if kwargs.get("override"):
                self._override_requests.append(str(args[0] if args else kwargs.get("name")))
            return register_tool(*args, **kwargs)

        setattr(self.tools, "register_tool", recording_register_tool)  # noqa: B010

    @property
    def override_requests(self) -> tuple[str, ...]:
        """Names of the tools the plugin registered with ``override=True``."""
        return tuple(self._override_requests)

    def discover(self) -> list[Candidate]:
        """Return only the candidate under trial."""
        return [self.candidate]

    def register(self, plugin: object, name: str | None = None) -> str | None:
        """Record the plugin's hook implementations, then register it as usual."""
        if name == self.candidate.key:
            self.hookimpls = list(self._hookimpls_of(plugin))
        return super().register(plugin, name)

    def _hookimpls_of(self, plugin: object) -> Iterator[HookimplRecord]:
        for attr in dir(plugin):
            opts = self.parse_hookimpl_opts(plugin, attr)
            if opts is None:
                continue
            function = getattr(plugin, attr)
            own = callback_of(function)
            via_shim = own is not function
            yield HookimplRecord(
                hook=opts.get("specname") or attr,
                function=own,
                argnames=_required_args(own if via_shim else function),
                via_register_hook=via_shim,
                opts=dict(opts),
            )


class _Collector(logging.Handler):
    def __init__(self, sink: list[logging.LogRecord]) -> None:
        super().__init__(logging.DEBUG)
        self.sink = sink

    def emit(self, record: logging.LogRecord) -> None:
        self.sink.append(record)


@contextlib.contextmanager
def captured_logs(sink: list[logging.LogRecord] | None = None) -> Iterator[list[logging.LogRecord]]:
    """Collect what ``hermes_hooks`` logs during the block instead of showing it."""
    records = [] if sink is None else sink
    logger = logging.getLogger("hermes_hooks")
    collector = _Collector(records)
    logger.addHandler(collector)
    try:
        yield records
    finally:
        logger.removeHandler(collector)


@contextlib.contextmanager
def trial_load(
    candidate: Candidate, *, load_timeout: float | None = None
) -> Iterator[TrialManager]:
    """Load *candidate* alone in a temporary home; unload it and delete the home afterwards.

    What the loading logs is collected in :attr:`TrialManager.log_records` rather than shown.
    The plugin's status, error and registrations are read from the manager as usual
    (``pm.get_plugin_info(candidate.key)``). A plugin that hangs while loading is given up on
    after ``plugins.load_timeout`` like anywhere else, so a trial never hangs on it.

    :param load_timeout: the operator's ``plugins.load_timeout``; the default when ``None``.
    """
    with tempfile.TemporaryDirectory(prefix="hermes-trial-") as tmp:
        home = Path(tmp)
        # The operator's grant is given, so that a tool override shows as a request, not
        # as a load failure (whether to grant it is the operator's question, not the plugin's).
        entry: dict[str, object] = {"allow_tool_override": True}
        if candidate.source == "project" and candidate.path is not None:
            # A trial is how a project plugin is checked before it is trusted: trust its files
            # here. One that cannot be hashed is left without, and its status says why.
            with contextlib.suppress(PluginTrustError):
                entry[TRUSTED_HASH_FIELD] = content_hash(candidate.path)
        entries = {candidate.key: entry}
        section: dict[str, object] = {"enabled": [candidate.key], "entries": entries}
        if load_timeout is not None:
            section["load_timeout"] = load_timeout
        write_config(home, {"plugins": section})
        pm = TrialManager(candidate, home)
        # A trial leaves the plugin's folder as it found it: no __pycache__ written into it
        # (an installed plugin, a folder under development). Restored for whoever runs next.
        wrote_bytecode = sys.dont_write_bytecode
        sys.dont_write_bytecode = True
        with captured_logs(pm.log_records):
            try:
                pm.discover_and_load()
                yield pm
            finally:
                pm.unload_all()
                sys.dont_write_bytecode = wrote_bytecode
