"""``PluginManager``: pluggy's manager with discovery, gating, loading, isolation and status."""

from __future__ import annotations

import contextlib
import importlib
import inspect
import logging
import sys
import threading
import time
import types
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from hermes_hooks.calling import handoff, workers
from hermes_hooks.calling.guarded import FailureCount, GuardedManager
from hermes_hooks.errors import ConfigError, PluginLoadError, RegistrationError
from hermes_hooks.plugins import active, extensions, gating
from hermes_hooks.plugins.config import (
    DEBUG_ENV,
    NO_ENTRY_POINTS_ENV,
    STRICT_ENV,
    PluginsConfig,
    env_flag,
    get_hermes_home,
    load_config,
)
from hermes_hooks.plugins.context import PluginContext
from hermes_hooks.plugins.discovery import Candidate, discover_candidates
from hermes_hooks.plugins.kinds import LOADED_ON_LOOKUP
from hermes_hooks.plugins.loading import (
    CodeOwners,
    PluginHooks,
    describe_load_failure,
    evict_modules,
    find_hookimpls,
    import_plugin,
    make_hook_adapter,
    plugin_roots,
    running_at,
)
from hermes_hooks.plugins.records import (
    LoadGate as _LoadGate,
    PluginInfo,
    Record as _Record,
    Status,
)
from hermes_hooks.plugins.replacing import describe_place, settle_replacement
from hermes_hooks.registries.base import Handle
from hermes_hooks.registries.commands import CliCommandRegistry, CommandRegistry
from hermes_hooks.registries.middleware import (
    MiddlewareRegistry,
    RequestMiddlewareResult,
    apply_request_middleware,
    run_execution_middleware,
)
from hermes_hooks.registries.platforms import PlatformRegistry
from hermes_hooks.registries.skills import SkillRegistry
from hermes_hooks.registries.tools import ToolRegistry
from hermes_hooks.spec import hookspecs
from hermes_hooks.spec.markers import PROJECT_NAME

if TYPE_CHECKING:
    from hermes_hooks.plugins.manifest import PluginManifest

__all__ = ["FailureCount", "PluginInfo", "PluginManager", "Status"]

logger = logging.getLogger("hermes_hooks")

_SHIM_ATTR: Final = "__wrapped_callback__"
_debug_handler_installed = False


def _install_debug_handler() -> None:
    """With ``HERMES_PLUGINS_DEBUG=1``, log discovery, gating and loading at DEBUG on stderr."""
    global _debug_handler_installed
    if _debug_handler_installed or not env_flag(DEBUG_ENV):
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setLevel(logging.DEBUG)
    handler.setFormatter(logging.Formatter("[hermes-hooks] %(levelname)s %(name)s: %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    _debug_handler_installed = True


class PluginManager(GuardedManager):
    """A ``pluggy.PluginManager`` for the ``hermes`` project, with every Hermes hook declared.

    :param hermes_home: the Hermes home folder; ``$HERMES_HOME`` or ``~/.hermes`` by default.
    :param strict: re-raise plugin failures (load errors and hook errors) instead of isolating
        them; also on with ``HERMES_PLUGINS_STRICT=1``.
    :param cwd: where project plugins (``./.hermes/plugins``) are looked for; the current
        directory by default.
    """

    def __init__(
        self,
        hermes_home: Path | str | None = None,
        *,
        strict: bool = False,
        cwd: Path | None = None,
    ) -> None:
        super().__init__(PROJECT_NAME, strict=strict or env_flag(STRICT_ENV))
        _install_debug_handler()
        home = Path(hermes_home).expanduser() if hermes_home else get_hermes_home()
        # Absolute: plugin modules keep their folder as __path__, which must survive a chdir.
        self.hermes_home = home.absolute()
        self.cwd = cwd.absolute() if cwd is not None else None
        self.plugins_config = PluginsConfig.from_config({})
        self.config: Mapping[str, Any] = {}
        """The whole ``config.yaml`` as last read (families read their selection keys in it)."""
        self.config_error: str | None = None
        self.tools = ToolRegistry(
            allow_override=self._allow_tool_override, count_failure=self.count_failure
        )
        self.commands = CommandRegistry(count_failure=self.count_failure)
        self.cli_commands = CliCommandRegistry()
        self.skills = SkillRegistry()
        self.platforms = PlatformRegistry()
        self.middleware = MiddlewareRegistry()
        """The plugins' middleware (``ctx.register_middleware``): see :meth:`apply_middleware`."""
        # Plugin code may register only as itself, whatever owner it passes to a registry.
        self._code_owners = CodeOwners()
        for registry in self._registries():
            registry.set_acting_plugins(self._code_owners.on_stack)
        self.message_sink: Callable[[str, str], bool] | None = None
        # Set by a running gateway: ctx.inject_message(session_key=...) goes through it.
        self.gateway_injector: Callable[..., bool] | None = None
        self._records: dict[str, _Record] = {}
        # The records of a discovery being loaded, published as _records when it is done.
        self._pending_records: dict[str, _Record] | None = None
        self._discovered = False
        # Held for a whole discovery, load or unload (never while a hook runs); _lock only
        # around each change, so plugin code loading in a worker may still reach the manager.
        self._load_lock = threading.RLock()
        self._plugin_code_threads: set[int] = set()  # the threads running a plugin's load now
        self._warned_unknown: set[tuple[str, str]] = set()
        # The kinds load_deferred began loading since discovery (under _load_lock), and those
        # it finished: a thread that finds its kind begun but not done waits for the lock.
        self._deferred_loaded: set[str] = set()
        self._deferred_done: set[str] = set()
        self.add_hookspecs(hookspecs)
        # One registry per provider family, each installing its host tools (image_generate).
        self._backends: dict[str, Any] = {}
        families = extensions.families()
        for family in families:
            if hasattr(self, family.name):
                raise AttributeError(
                    f"provider family {family.name!r} would hide PluginManager.{family.name}: "
                    f"give the family another name"
                )
            backend = family.create_registry(self)
            backend.set_acting_plugins(self._code_owners.on_stack)
            self._backends[family.name] = backend
            # pm.image_gen: a plain attribute (a __getattr__ would slow every attribute
            # access on the manager, hook calls included: CPython does not specialise those).
            setattr(self, family.name, backend)
        for family in families:
            family.install(self, self._backends[family.name])
        active.note_created(self)

    # -- what the guarded manager asks of its subclass ----------------------------------------

    def _record(self, key: str) -> _Record | None:
        """Return the record of plugin ``key``: the one being loaded, else the published one."""
        pending = self._pending_records
        if pending is not None:
            record = pending.get(key)
            if record is not None:
                return record
        return self._records.get(key)

    def _failure_slot(self, plugin_key: str) -> _Record | None:
        return self._record(plugin_key)

    def _note_unknown_hook(self, plugin_key: str, hook_name: str, message: str) -> None:
        # On the status of every load (a forced reload starts a fresh record), logged once.
        record = self._record(plugin_key)
        if record is not None and message not in record.warnings:
            record.warnings.append(message)
        if (plugin_key, hook_name) not in self._warned_unknown:
            self._warned_unknown.add((plugin_key, hook_name))
            super()._note_unknown_hook(plugin_key, hook_name, message)

    @property
    def plugins_config(self) -> PluginsConfig:
        """The ``plugins:`` section of ``config.yaml``, as last read (:meth:`reload_config`)."""
        return self._plugins_config

    @plugins_config.setter
    def plugins_config(self, config: PluginsConfig) -> None:
        self._plugins_config = config
        # What every bounded call reads, so that a reload applies at once.
        self.callback_bound.seconds = config.hook_callback_timeout
        self.result_limit.bytes = config.max_hook_result_bytes
        if config.hook_worker_threads is not None:
            workers.MAX_WORKERS = config.hook_worker_threads  # the process's pool

    def invoke_hook(self, name: str, **kwargs: Any) -> list[Any]:
        """Call hook ``name`` as Hermes' ``invoke_hook`` does and return the non-``None`` results.

        As Hermes, it stamps ``telemetry_schema_version="hermes.observer.v1"`` on every call
        (a caller's own value wins); other arguments the caller leaves out are ``None``.
        """
        kwargs.setdefault("telemetry_schema_version", hookspecs.TELEMETRY_SCHEMA_VERSION)
        return super().invoke_hook(name, **kwargs)

    # -- provider families ------------------------------------------------------------------------

    def backend(self, family: str) -> Any:
        """Return this manager's registry of provider family ``family`` (``pm.image_gen``).

        :raises KeyError: no family of that name is listed at the extension point.
        """
        try:
            return self._backends[family]
        except KeyError:
            known = ", ".join(sorted(self._backends)) or "none"
            raise KeyError(f"no provider family {family!r} (families: {known})") from None

    if TYPE_CHECKING:
        # For type checkers only: pm.image_gen and the other families' registries are set in
        # __init__ from the families listed, so they are Any to them; typed access is
        # FAMILY.registry(pm). A real __getattr__ would slow every attribute access.
        def __getattr__(self, name: str) -> Any: ...

    def _add_hook_callback(
        self, plugin_key: str, hook_name: str, callback: Callable[..., Any]
    ) -> None:
        """Add a ``ctx.register_hook`` callback as a hookimpl of ``plugin_key``.

        :raises RegistrationError: the call comes from another plugin's code (it holds
            ``plugin_key``'s ctx): the registries' owner check (:class:`CodeOwners`).
        """
        acting = self.acting_plugins()
        if acting and plugin_key not in acting:
            who = ", ".join(repr(key) for key in sorted(acting))
            raise RegistrationError(
                f"code of plugin {who} may not register it for plugin {plugin_key!r}; a plugin "
                f"registers through its own ctx"
            )
        spec_argnames = self.hook_argnames(hook_name)
        adapter = make_hook_adapter(hook_name, callback, spec_argnames, owner=plugin_key)
        record = self._record(plugin_key)
        if record is not None and record.loading:
            # Its register(ctx) is running (perhaps on a loading worker): registered with the
            # rest when it returns. No lock: one plugin's load is one job.
            record.pending.append((hook_name, adapter))
            return
        with self._lock, self.staged():
            record = self._record(plugin_key)
            if record is not None and record.status != "enabled":
                # A failed or unloaded plugin keeping its ctx must not come back in through it.
                raise RegistrationError(
                    f"plugin {plugin_key!r} is {record.status}: its hook {hook_name!r} is refused"
                )
            holder = record.holder if record is not None else None
            if holder is None:
                holder = PluginHooks(plugin_key, None, {})
                if record is not None:
                    record.holder = holder
            # Registered already: register again with the extra adapter (moves it to "newest");
            # staged, so a hook called meanwhile sees all of the plugin's implementations.
            if self.is_registered(holder):
                self.unregister(holder)
            holder.add_adapter(hook_name, adapter)
            self.register(holder, name=plugin_key)

    # -- configuration --------------------------------------------------------------------------

    def _allow_tool_override(self, owner: str) -> bool:
        return self.plugins_config.allow_tool_override(owner)

    def reload_config(self) -> PluginsConfig:
        """Read ``config.yaml`` again; a broken file is reported and treated as empty."""
        aliases = self.plugins_config.aliases
        try:
            config = load_config(self.hermes_home)
            self.plugins_config = PluginsConfig.from_config(
                config, source=self.hermes_home / "config.yaml"
            ).with_aliases(aliases)
            self.config = config
            self.config_error = None
        except ConfigError as exc:
            if self.strict:
                raise
            logger.error("%s", exc)
            self.config_error = str(exc)
            self.plugins_config = PluginsConfig.from_config({}).with_aliases(aliases)
            self.config = {}
        return self.plugins_config

    # -- discovery, gating, loading -------------------------------------------------------------

    def discover(self) -> list[Candidate]:
        """Return every discovered plugin, reading manifests only (no plugin code runs).

        Pip-installed plugins are left out while ``HERMES_PLUGINS_NO_ENTRY_POINTS`` is set.
        """
        return discover_candidates(
            hermes_home=self.hermes_home,
            cwd=self.cwd,
            include_entry_points=not env_flag(NO_ENTRY_POINTS_ENV),
        )

    def discover_and_load(self, force: bool = False) -> None:
        """Discover plugins and load the enabled ones; a second call does nothing.

        The plugins' hook implementations become callable together, when the call returns: a
        hook called meanwhile from another thread runs the implementations it had before (none
        on the first call), never some of the new ones. A reload is atomic in the same way.

        :param force: unload every plugin first, then scan and load again.
        """
        if self._discovered and not force and threading.get_ident() in self._plugin_code_threads:
            return  # a plugin's register(ctx) asks, from its loading worker: it is under way
        with self._load_lock:  # another thread's call waits for the load under way
            if self._discovered and not force:
                return
            with self._publishing():
                if force:
                    for record in self._records.values():
                        if record.status == "enabled":
                            self._rollback(record)
                    # Files written since the last scan (plugin modules, dist-info) must be seen.
                    importlib.invalidate_caches()
                self.reload_config()
                self._deferred_loaded.clear()
                self._deferred_done.clear()
                candidates = self.discover()
                self.plugins_config = self.plugins_config.with_aliases(
                    {c.key: c.aliases for c in candidates}
                )
                records = {c.key: _Record(c) for c in candidates}
                self._pending_records = records
                self._discovered = True
                # Plugins written for Hermes import its modules (agent.*, tools.registry, ...).
                extensions.install_import_finder()
                try:
                    for record in records.values():
                        self._gate_and_load(record)
                finally:
                    self._records = records
                    self._pending_records = None

    @contextlib.contextmanager
    def _publishing(self) -> Iterator[None]:
        """Stage every change to the hooks made in the block; publish them at its end."""
        with self._lock:
            stage = self.staged()
            stage.__enter__()
        try:
            yield
        finally:
            with self._lock:
                stage.__exit__(None, None, None)

    def _gate_and_load(self, record: _Record, *, lookup: bool = False) -> None:
        if record.candidate.displaces is not None:
            settled = settle_replacement(
                record.candidate, self.plugins_config.entry(record.candidate.key)
            )
            record.candidate, record.replacement = settled.candidate, settled.note
            record.checked = settled.checked
        manifest = record.candidate.manifest
        if manifest is not None and manifest.version_problem is not None and not lookup:
            # As in Hermes, a warning: the plugin loads all the same (strict refuses).
            record.warnings.append(manifest.version_problem)
        status, reason = self._gate(record, lookup=lookup)
        record.status, record.reason = status, reason
        if status == "error":
            record.error, record.reason = reason, None
            # Said like a failure to load: an enabled plugin that does not load (a trusted
            # project blocker changed by a pull, say) must never be dropped silently.
            logger.warning("plugin %r did not load: %s", record.candidate.key, reason)
            if self.strict:
                raise PluginLoadError(record.candidate.key, reason or "error")
        elif status == "enabled":
            logger.debug("plugin %r is to be loaded: %s", record.candidate.key, reason)
            self._load(record)
            if record.status == "error" and record.candidate.displaces is not None:
                self._fall_back(record, lookup=lookup)
        else:
            logger.debug("plugin %r %s: %s", record.candidate.key, status, reason)

    def _fall_back(self, record: _Record, *, lookup: bool) -> None:
        """A plugin that failed to load gives its key back to the one it displaced.

        A user's broken copy of ``model-providers/openai`` never takes the working bundled
        profile away: the earlier plugin of the key is gated and loaded instead, and its
        status says what failed.
        """
        failed, earlier = record.candidate, record.candidate.displaces
        if earlier is None or earlier.error is not None:
            return
        warning = (
            f"{describe_place(failed)} failed to load ({record.error}); "
            f"{describe_place(earlier)} is loaded instead"
        )
        record.candidate, record.error, record.reason = earlier, None, None
        record.replacement, record.checked, record.module = None, None, None
        record.warnings.append(warning)
        logger.warning("plugin %r: %s", earlier.key, warning)
        status, reason = self._gate(record, lookup=lookup)
        record.status, record.reason = status, reason
        if status == "error":
            record.error, record.reason = reason, None
        elif status == "enabled":
            self._load(record)

    def _note_alias(self, record: _Record, listed_as: str, field: str) -> None:
        """Warn (once per process, and on the plugin's status) that config uses an old key."""
        key = record.candidate.key
        if listed_as == key:
            return
        what = "its category and folder" if "/" in key else "its manifest name, as in Hermes"
        message = (
            f"{field} names this plugin {listed_as!r}, its folder name; its key is {key!r} "
            f"({what}). The entry still matches, and the next config write (hermes plugins "
            f"enable/disable, hermes tools ...) rewrites it to {key!r}"
        )
        if message not in record.warnings:
            record.warnings.append(message)
        if (key, listed_as) not in self._warned_unknown:
            self._warned_unknown.add((key, listed_as))
            logger.warning("plugin %r: %s", key, message)

    def load_deferred(self, kind: str) -> list[str]:
        """Import the plugins of ``kind`` that wait for their family's first lookup; once.

        Model-provider plugins register their profiles when imported, so the models family
        calls this before its first lookup of a profile by name or alias. Every such plugin
        loads (bundled and user ones; project and pip-installed ones listed in
        ``plugins.enabled``), each gated, bounded and isolated as any other; a later call does
        nothing until the plugins are discovered again. Discovers first when nothing was.

        Asked from a plugin's own loading code, it does nothing (the load under way would
        wait on itself); another thread asking meanwhile waits for the load to finish.

        :returns: the keys of the plugins it loaded.
        """
        if kind in self._deferred_done or kind not in LOADED_ON_LOOKUP:
            return []
        if threading.get_ident() in self._plugin_code_threads:
            return []
        with self._load_lock:
            if not self._discovered:
                self.discover_and_load()
            if kind in self._deferred_loaded:
                return []
            self._deferred_loaded.add(kind)
            loaded: list[str] = []
            with self._publishing():
                for record in list(self._records.values()):
                    if (
                        record.deferred
                        and record.candidate.kind == kind
                        and (record.status == "not enabled" and record.reason != "unloaded")
                    ):
                        self._gate_and_load(record, lookup=True)
                        status: Status = record.status  # changed by the load
                        if status == "enabled":
                            loaded.append(record.candidate.key)
            self._deferred_done.add(kind)
            return loaded

    def _gate(self, record: _Record, *, lookup: bool = False) -> tuple[Status, str | None]:
        """Decide from config and environment whether a candidate is to be loaded."""
        return gating.gate(
            record,
            self.config,
            self.plugins_config,
            strict=self.strict,
            note_alias=self._note_alias,
            lookup=lookup,
            home=self.hermes_home,
        )

    def _load(self, record: _Record) -> None:
        """Load one plugin: its import and ``register(ctx)`` within ``plugins.load_timeout``.

        They run on a worker thread (in this thread's plugin-side context), so that a plugin
        that hangs while loading is put in ``error`` and every other plugin, and the command,
        goes on; with ``load_timeout: 0`` they run here. Registering what it offered to
        pluggy always happens here.
        """
        candidate = record.candidate
        key = candidate.key
        started = time.perf_counter()
        record.loading = True
        record.pending = []
        seconds = self.plugins_config.load_timeout
        gate = _LoadGate()
        try:
            self._code_owners.add(key, plugin_roots(candidate))
            if seconds > 0:
                module, native = self._run_plugin_code_within(record, gate, seconds)
            else:
                module, native = self._run_plugin_code(record, gate)
            record.holder = PluginHooks(key, module, native, record.pending)
            record.loading = False
            self.register(record.holder, name=key)
        except KeyboardInterrupt:
            gate.close()
            self._rollback(record)
            raise
        except BaseException as exc:
            gate.close()
            self._rollback(record)
            message = (
                exc.reason
                if isinstance(exc, PluginLoadError)
                else describe_load_failure(exc, plugin_roots(candidate))
            )
            record.status, record.error = "error", message
            logger.warning("plugin %r failed to load: %s", key, message)
            if self.strict:
                if isinstance(exc, PluginLoadError):
                    raise
                raise PluginLoadError(key, message) from exc
            return
        finally:
            record.loading = False
            record.pending = []
            record.load_ms = (time.perf_counter() - started) * 1000
        record.status, record.error = "enabled", None
        logger.debug("plugin %r loaded in %.1f ms", key, record.load_ms)

    def _run_plugin_code_within(
        self, record: _Record, gate: _LoadGate, seconds: float
    ) -> tuple[types.ModuleType | None, dict[str, Callable[..., Any]]]:
        """:meth:`_run_plugin_code` on a worker; at the bound, say where the plugin was."""
        key = record.candidate.key
        try:
            found: tuple[types.ModuleType | None, dict[str, Callable[..., Any]]]
            found = handoff.call_within(self._run_plugin_code, (record, gate), seconds)
        except workers.WorkerUnavailableError as exc:
            raise PluginLoadError(key, f"could not be loaded: {exc}") from None
        except TimeoutError:
            gate.close()  # from now on, what the abandoned load registers is refused
            where = running_at(gate.thread_id, plugin_roots(record.candidate))
            raise PluginLoadError(
                key,
                f"did not finish loading within {seconds:g} s (plugins.load_timeout)"
                + (f"; still running ({where})" if where else ""),
            ) from None
        return found

    def _run_plugin_code(
        self, record: _Record, gate: _LoadGate
    ) -> tuple[types.ModuleType | None, dict[str, Callable[..., Any]]]:
        """Import the plugin and call its ``register(ctx)``; return its module and hookimpls."""
        thread_id = gate.thread_id = threading.get_ident()
        self._plugin_code_threads.add(thread_id)
        try:
            return self._import_and_register(record, gate)
        finally:
            self._plugin_code_threads.discard(thread_id)

    def _import_and_register(
        self, record: _Record, gate: _LoadGate
    ) -> tuple[types.ModuleType | None, dict[str, Callable[..., Any]]]:
        candidate = record.candidate
        key = candidate.key
        assert candidate.manifest is not None

        def entered(module: types.ModuleType) -> None:
            with gate.lock:
                gate.check(key)
                record.module = module
                record.import_name = module.__name__

        if candidate.entry_point is not None:
            record.host_modules = frozenset(_package_modules(candidate.entry_point.module))
        # On the loading thread: the Hermes modules a plugin imports answer for this manager.
        with active.loading(self, key):
            target = import_plugin(candidate, entered, record.checked)
            module, register_fn, native = self._plugin_parts(key, target)
            if register_fn is None and not native and not self._registered_anything(key):
                # Hermes' model-provider plugins register at import time, with no register().
                where = candidate.path or _describe_entry_point(candidate)
                raise PluginLoadError(
                    key,
                    f"no register() function, no @hookimpl and nothing registered when imported, "
                    f"in {where}",
                )
            path = candidate.path
            if path is None and module is not None and getattr(module, "__file__", None):
                path = Path(module.__file__ or "").parent
            with gate.lock:
                gate.check(key)
                record.module = module
                context = PluginContext(self, key, candidate.manifest, path)
                record.context = context
            if register_fn is not None:
                register_fn(context)
        return module, native

    @staticmethod
    def _plugin_parts(
        key: str, target: object
    ) -> tuple[types.ModuleType | None, Callable[..., Any] | None, dict[str, Callable[..., Any]]]:
        """Split an imported plugin into (its module, its ``register``, its ``@hookimpl``s).

        A module brings its ``register`` and module-level hookimpls; a function or class (an
        entry point ``pkg:register``) is the ``register``, with its module's hookimpls; any
        other object (``pkg:plugin``) brings its hookimpl methods, or is called if callable.
        """
        if isinstance(target, types.ModuleType):
            register_fn = getattr(target, "register", None)
            return target, register_fn if callable(register_fn) else None, find_hookimpls(target)
        if inspect.isroutine(target) or inspect.isclass(target):
            module = sys.modules.get(getattr(target, "__module__", "") or "")
            return module, target, find_hookimpls(module)
        module = sys.modules.get(type(target).__module__)
        native = find_hookimpls(target)
        if native:
            return module, None, native
        if callable(target):
            return module, target, {}
        raise PluginLoadError(
            key, f"entry point gives {type(target).__name__}, expected a module or callable"
        )

    def _rollback(self, record: _Record) -> None:
        """Remove whatever a plugin registered; used when it fails and when it is unloaded."""
        key = record.candidate.key
        # Only our own holder: the key may be taken by an object the host registered.
        if record.holder is not None and self.is_registered(record.holder):
            self.unregister(record.holder)
        self._run_unload_callbacks(record)
        for registry in self._registries():
            registry.remove_owner(key)
        for backend in self._backends.values():
            backend.remove_owner(key)
        # Only the module this plugin was imported as: another plugin may share its slug.
        if record.candidate.path is not None and record.module is not None:
            evict_modules(record.module.__name__)
        elif record.module is not None:
            others = [r for r in self._records.values() if r is not record]
            names = [other.module.__name__ for other in others if other.module is not None]
            left = _evict_entry_point(record.module.__name__, record.host_modules, names)
            for other in others:  # what this plugin brought, the last one out evicts
                if other.host_modules is not None:
                    other.host_modules -= left
        if record.context is not None:
            record.context.revoke()  # a plugin keeping its ctx must not register through it
        self._code_owners.remove(key)
        record.holder = None
        record.module = None
        record.context = None
        record.import_name = None
        record.platforms = []

    def _registered_anything(self, key: str) -> bool:
        """Whether plugin ``key`` has an entry in a registry or a family's (its import's)."""
        return any(r.names(owner=key) for r in (*self._registries(), *self._backends.values()))

    def _registries(self) -> tuple[Any, ...]:
        return (
            self.tools,
            self.commands,
            self.cli_commands,
            self.skills,
            self.platforms,
            self.middleware,
        )

    def dispatch_tool(
        self, tool_name: str, args: Mapping[str, Any] | str | None = None, **kwargs: Any
    ) -> str:
        """Call tool ``tool_name`` as the model would (``ctx.dispatch_tool``); never raises."""
        return self.tools.dispatch(tool_name, args, **kwargs)

    # -- middleware (Hermes' hermes_cli.middleware) ------------------------------------------------

    def apply_middleware(
        self, kind: str, payload_key: str, payload: dict[str, Any], **context: Any
    ) -> RequestMiddlewareResult:
        """Run the request middleware of ``kind`` (``tool_request``, ``llm_request``) over
        ``payload``; failures count on their plugins, each call is bounded like a hook's."""
        return apply_request_middleware(
            self.middleware.entries(kind),
            payload_key,
            payload,
            context,
            count_failure=self.count_failure,
            seconds=self.callback_bound.seconds,
        )

    def run_middleware(
        self,
        kind: str,
        payload_key: str,
        payload: Any,
        terminal: Callable[[Any], Any],
        **context: Any,
    ) -> Any:
        """Run ``terminal(payload)`` through the execution middleware of ``kind``
        (``tool_execution``, ``llm_execution``), the first registered outermost."""
        return run_execution_middleware(
            self.middleware.entries(kind),
            payload_key,
            payload,
            terminal,
            context,
            count_failure=self.count_failure,
            seconds=self.callback_bound.seconds,
        )

    def add_unload_callback(self, key: str, callback: Callable[[], Any]) -> Handle:
        """Run ``callback()`` when plugin ``key`` unloads or fails (``ctx.on_unload``)."""
        record = self._record(key)
        if record is None:
            raise RegistrationError(f"plugin {key!r} was not discovered: on_unload is refused")
        entry: list[tuple[Callable[[], Any], Handle]] = record.unload_callbacks

        def forget() -> None:
            entry[:] = [pair for pair in entry if pair[1] is not handle]

        handle = Handle(forget, getattr(callback, "__name__", "callback"), key, "on_unload")
        entry.append((callback, handle))
        return handle

    def _run_unload_callbacks(self, record: _Record) -> None:
        callbacks, record.unload_callbacks = record.unload_callbacks, []
        for callback, _ in reversed(callbacks):
            try:
                callback()
            except (Exception, SystemExit):
                logger.warning(
                    "plugin %r: an on_unload callback raised", record.candidate.key, exc_info=True
                )

    def unload_plugin(self, key: str) -> bool:
        """Unload one plugin: unregister its hookimpls and every entry it registered."""
        with self._load_lock, self._lock:
            record = self._records.get(key)
            if record is None or record.status != "enabled":
                return False
            with self.staged():
                self._rollback(record)
            record.status, record.reason = "not enabled", "unloaded"
            return True

    def unload_all(self) -> None:
        """Unload every loaded plugin and forget what discovery found.

        Their hook implementations go together, when the call returns; the cost is one pass
        over each hook's implementations, whatever the number of plugins.
        """
        with self._load_lock, self._publishing():
            for record in self._records.values():
                if record.status == "enabled":
                    self._rollback(record)
                    record.status, record.reason = "not enabled", "unloaded"
            self._records = {}
            self._discovered = False
            self._deferred_loaded.clear()
            self._deferred_done.clear()

    # -- status ---------------------------------------------------------------------------------

    def _info(self, record: _Record) -> PluginInfo:
        candidate = record.candidate
        manifest = candidate.manifest
        key = candidate.key
        hooks: tuple[str, ...] = ()
        if record.holder is not None and self.is_registered(record.holder):
            hooks = tuple(sorted({c.name for c in self.get_hookcallers(record.holder) or []}))
        return PluginInfo(
            key=key,
            name=candidate.name,
            version=manifest.version if manifest else "",
            kind=candidate.kind,
            source=candidate.source,
            status=record.status,
            error=record.error,
            path=str(candidate.path) if candidate.path else None,
            description=manifest.description if manifest else "",
            reason=record.reason,
            tools=tuple(self.tools.names(owner=key)),
            hooks=hooks,
            commands=tuple(self.commands.names(owner=key)),
            cli_commands=tuple(self.cli_commands.names(owner=key)),
            skills=tuple(self.skills.names(owner=key)),
            providers=tuple(
                f"{family}:{name}"
                for family, backend in self._backends.items()
                for name in backend.names(owner=key)
            ),
            hook_errors=record.hook_errors,
            last_hook_error=record.last_hook_error,
            warnings=tuple(record.warnings),
            load_ms=record.load_ms,
            hook_timeouts=record.hook_timeouts,
            aliases=candidate.aliases,
            kind_inferred=candidate.kind_inferred,
            served_by=record.served_by,
            platforms=tuple(record.platforms),
            replacement=record.replacement,
        )

    def list_plugins(self) -> list[PluginInfo]:
        """Return one :class:`PluginInfo` per discovered plugin, sorted by key."""
        # Under the lock: pluggy's own look-ups iterate dicts that a load in another thread
        # changes ("dictionary changed size during iteration"), and a snapshot should be one.
        with self._lock:
            return sorted((self._info(r) for r in self._records.values()), key=lambda i: i.key)

    def get_plugin_info(self, key: str) -> PluginInfo | None:
        """Return the :class:`PluginInfo` of plugin ``key``, or ``None`` when not discovered."""
        with self._lock:
            record = self._records.get(key)
            return self._info(record) if record is not None else None

    def get_manifest(self, key: str) -> PluginManifest | None:
        """Return the manifest of discovered plugin ``key`` (loaded or not), or ``None``."""
        record = self._record(key)
        return record.candidate.manifest if record is not None else None

    def get_context(self, key: str) -> PluginContext | None:
        """Return the context a loaded plugin was given, or ``None``."""
        record = self._record(key)
        return record.context if record is not None else None

    def get_plugin_module(self, key: str) -> types.ModuleType | None:
        """Return the module of plugin ``key`` (or of an old folder key of it): loaded, or being
        imported right now; else ``None``.

        While a folder plugin's ``__init__.py`` runs, its module is already in ``sys.modules``
        under its import name, so that its code can import itself by another name (Hermes'
        ``plugins.<key>``) and get this very module.
        """
        record = self._record(key)
        if record is None:
            # An old folder key names the plugin too (a folder pr_review/ of plugin pr-review).
            records = {**self._records, **(self._pending_records or {})}
            record = next((r for r in records.values() if key in r.candidate.aliases), None)
        if record is None:
            return None
        if record.module is not None:
            return record.module
        if record.loading and record.import_name is not None:
            return sys.modules.get(record.import_name)
        return None

    def loaded_keys(self) -> list[str]:
        """Return the keys of the plugins loaded, or being loaded, now."""
        with self._lock:
            records = {**self._records, **(self._pending_records or {})}
            return [k for k, r in records.items() if r.status == "enabled" or r.loading]

    def acting_plugins(self) -> frozenset[str]:
        """Return the keys of this manager's plugins with code on the calling thread's stack."""
        return self._code_owners.on_stack()

    def add_platform(self, key: str, name: str) -> None:
        """Record that plugin ``key`` registered gateway platform ``name``."""
        record = self._record(key)
        if record is not None and name not in record.platforms:
            record.platforms.append(name)

    def add_warning(self, key: str, message: str) -> None:
        """Record a warning on plugin ``key``'s status (shown by ``hermes plugins list``)."""
        record = self._record(key)
        if record is not None and message not in record.warnings:
            record.warnings.append(message)

    @contextlib.contextmanager
    def activate(self) -> Iterator[PluginManager]:
        """Make this the current manager within the block, for Hermes' plugin-facing modules.

        ``hermes_constants.get_hermes_home()``, ``tools.registry.registry`` and the other
        names the compatibility layer serves answer for the current manager: the one loading
        the plugin, else the one activated here (carried onto the workers of bounded hook
        calls), else the one whose plugin code is running, else the most recently created.
        A host running a turn activates its manager.
        """
        with active.activated(self):
            yield self


def _set_import(record: _Record, name: str) -> None:
    record.import_name = name


def _describe_entry_point(candidate: Candidate) -> str:
    ep = candidate.entry_point
    return f"entry point {ep.name} = {ep.value}" if ep is not None else candidate.key


def callback_of(function: Callable[..., Any]) -> Callable[..., Any]:
    """Return the plugin's own function behind a guarded hookimpl or shim adapter."""
    inner = getattr(function, "__wrapped_impl__", function)
    inner = getattr(inner, _SHIM_ATTR, inner)
    return inner if inspect.isroutine(inner) or callable(inner) else function


__all__ += ["callback_of"]


def _package_modules(name: str) -> list[str]:
    """The loaded modules of the top-level package of module ``name`` (itself included)."""
    top = name.partition(".")[0]
    return [m for m in list(sys.modules) if m == top or m.startswith(top + ".")]


def _evict_entry_point(
    name: str, host_modules: frozenset[str] | None, others: Sequence[str] = ()
) -> frozenset[str]:
    """Forget an entry-point plugin's modules, so that a reload re-runs them; return those left
    for the other loaded plugins.

    Its own module and those below it; and, of its top-level package, the modules loaded since
    it began to load (``host_modules`` holds those there before: the host's, another plugin's),
    except the modules of the other loaded plugins (``others``), and their packages.
    """

    def needed(module: str) -> bool:
        return any(
            module == other or other.startswith(module + ".") or module.startswith(other + ".")
            for other in others
        )

    prefix = name + "."
    mine = [
        m
        for m in _package_modules(name)
        if m == name or m.startswith(prefix) or (host_modules is not None and m not in host_modules)
    ]
    left = frozenset(m for m in mine if needed(m))
    for loaded in mine:
        if loaded not in left:
            sys.modules.pop(loaded, None)
    return left
