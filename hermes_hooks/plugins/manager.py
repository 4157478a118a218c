"""``PluginManager``: pluggy's manager with discovery, gating, loading, isolation and status."""

from __future__ import annotations

import collections
import difflib
import importlib
import inspect
import logging
import os
import sys
import threading
import time
import types
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, Literal

import attrs
import pluggy

from hermes_hooks.backends.image_gen import ImageGenRegistry, install_image_generate_tool
from hermes_hooks.calling.guards import guard_hookimpl
from hermes_hooks.calling.plans import CallPlan
from hermes_hooks.errors import ConfigError, HookTimeoutError, PluginLoadError, RegistrationError
from hermes_hooks.plugins.config import (
    DEBUG_ENV,
    STRICT_ENV,
    PluginsConfig,
    env_flag,
    get_hermes_home,
    load_config,
)
from hermes_hooks.plugins.context import PluginContext
from hermes_hooks.plugins.discovery import Candidate, Source, discover_candidates
from hermes_hooks.plugins.loading import (
    CodeOwners,
    PluginHooks,
    describe_failure,
    evict_modules,
    find_hookimpls,
    import_plugin,
    make_hook_adapter,
    plugin_roots,
)
from hermes_hooks.registries.commands import CliCommandRegistry, CommandRegistry
from hermes_hooks.registries.skills import SkillRegistry
from hermes_hooks.registries.tools import ToolRegistry
from hermes_hooks.spec import hookspecs
from hermes_hooks.spec.contract import HookContract, get_contract
from hermes_hooks.spec.markers import PROJECT_NAME

__all__ = ["FailureCount", "PluginInfo", "PluginManager", "Status"]

logger = logging.getLogger("hermes_hooks")

Status = Literal["enabled", "disabled", "not enabled", "error"]

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


@attrs.frozen
class PluginInfo:
    """What is known of one discovered plugin: its manifest, its status and what it registered.

    ``status`` is what actually happened: ``enabled`` (loaded), ``disabled`` (in
    ``plugins.disabled``), ``not enabled`` (not opted in, or a kind this manager does not load),
    or ``error`` (it could not be read or loaded; ``error`` says why).
    """

    key: str
    name: str
    version: str
    kind: str
    source: Source
    status: Status
    error: str | None
    path: str | None
    description: str = ""
    reason: str | None = None
    tools: tuple[str, ...] = ()
    hooks: tuple[str, ...] = ()
    commands: tuple[str, ...] = ()
    cli_commands: tuple[str, ...] = ()
    skills: tuple[str, ...] = ()
    hook_errors: int = 0
    last_hook_error: str | None = None
    warnings: tuple[str, ...] = ()
    load_ms: float | None = None
    hook_timeouts: int = 0
    """Calls of its hook implementations that exceeded ``plugins.hook_callback_timeout``, or
    were skipped after one (also counted in ``hook_errors``)."""

    def to_dict(self) -> dict[str, Any]:
        """Return the fields as a JSON-ready dict (tuples become lists)."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in attrs.asdict(self).items()}


@attrs.frozen
class FailureCount:
    """How often a plugin's code failed (hooks, tool and command handlers), and the last time."""

    count: int = 0
    last: str | None = None


_MAX_LOGGED_FAILURES: Final = 1024
"""Distinct failures remembered (to log each once), and plugins counted without a record."""
_MAX_MESSAGE_CHARS: Final = 1000


def _clip(message: str) -> str:
    """Bound a failure message kept on a status: a plugin's exception text can be any size."""
    if len(message) <= _MAX_MESSAGE_CHARS:
        return message
    return message[:_MAX_MESSAGE_CHARS] + "… [truncated]"


@attrs.define(eq=False)
class _Record:
    """The manager's mutable state for one plugin."""

    candidate: Candidate
    status: Status = "not enabled"
    error: str | None = None
    reason: str | None = None
    module: types.ModuleType | None = None
    holder: PluginHooks | None = None
    context: PluginContext | None = None
    loading: bool = False
    pending: list[tuple[str, Callable[..., Any]]] = attrs.Factory(list)
    hook_errors: int = 0
    last_hook_error: str | None = None
    warnings: list[str] = attrs.Factory(list)
    load_ms: float | None = None
    hook_timeouts: int = 0


class PluginManager(pluggy.PluginManager):
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
        super().__init__(PROJECT_NAME)
        # pluggy's own call loop, told apart from the wrapper tracing or monitoring puts on it.
        self._pluggy_loop = self._inner_hookexec
        self._plans: dict[str, CallPlan] = {}
        self._direct_plans: dict[str, CallPlan] = {}  # the ones get_call_plan may hand out
        _install_debug_handler()
        home = Path(hermes_home).expanduser() if hermes_home else get_hermes_home()
        # Absolute: plugin modules keep their folder as __path__, which must survive a chdir.
        self.hermes_home = home.absolute()
        self.strict = strict or env_flag(STRICT_ENV)
        self.cwd = cwd.absolute() if cwd is not None else None
        self.plugins_config = PluginsConfig.from_config({})
        self.config_error: str | None = None
        self.tools = ToolRegistry(allow_override=self._allow_tool_override)
        self.commands = CommandRegistry()
        self.cli_commands = CliCommandRegistry()
        self.skills = SkillRegistry()
        # Plugin code may register only as itself, whatever owner it passes to a registry.
        self._code_owners = CodeOwners()
        for registry in (self.tools, self.commands, self.cli_commands, self.skills):
            registry.set_acting_plugins(self._code_owners.on_stack)
        self.image_gen = ImageGenRegistry(self.hermes_home)
        self.message_sink: Callable[[str, str], bool] | None = None
        self._records: dict[str, _Record] = {}
        self._discovered = False
        self._lock = threading.RLock()
        self._failures_lock = threading.Lock()
        self._logged_failures: collections.OrderedDict[tuple[str, str, str], None] = (
            collections.OrderedDict()
        )
        self._other_failures: collections.OrderedDict[str, FailureCount] = collections.OrderedDict()
        self._warned_unknown: set[tuple[str, str]] = set()
        self._contracts: dict[str, tuple[HookContract, bool]] = {}
        self.add_hookspecs(hookspecs)
        install_image_generate_tool(self)

    # -- hook specs and contracts --------------------------------------------------------------

    def add_hookspecs(self, module_or_class: types.ModuleType | type) -> None:
        """Add hookspecs (as pluggy does) and remember each one's contract."""
        super().add_hookspecs(module_or_class)
        self._contracts.clear()

    def get_hook_contract(self, name: str) -> HookContract:
        """Return the contract of hook ``name`` (observe/open for unknown hooks)."""
        return self._contract_of(name)[0]

    def _contract_of(self, name: str) -> tuple[HookContract, bool]:
        cached = self._contracts.get(name)
        if cached is None:
            caller = getattr(self.hook, name, None)
            spec = caller.spec if caller is not None else None
            if spec is None:
                cached = (get_contract(None), False)
            else:
                cached = (get_contract(spec.function), bool(spec.opts.get("firstresult")))
            if spec is not None:
                self._contracts[name] = cached
        return cached

    def hook_argnames(self, name: str) -> tuple[str, ...] | None:
        """Return the argument names of hook ``name``, or ``None`` for an unknown hook."""
        caller = getattr(self.hook, name, None)
        if caller is None or caller.spec is None:
            return None
        return tuple(caller.spec.argnames)

    def known_hooks(self) -> list[str]:
        """Return the names of every hook with a spec, sorted."""
        return sorted(
            name
            for name, caller in vars(self.hook).items()
            if isinstance(caller, pluggy.HookCaller) and caller.spec is not None
        )

    # -- dispatch -------------------------------------------------------------------------------

    def _hookexec(
        self,
        hook_name: str,
        methods: Sequence[pluggy.HookImpl],
        kwargs: Mapping[str, object],
        firstresult: bool,
    ) -> object | list[object]:
        """Run one hook call: by the hook's call plan when one serves it, else by pluggy's loop.

        Every ``HookCaller`` calls this (``pm.hook.X(...)``, ``call_historic``, ``call_extra``).
        The plan serves the hook's own list of implementations (wrappers included) when no
        tracing or monitoring is on; it gives what pluggy's loop gives (see
        :mod:`hermes_hooks.calling.plans`).
        """
        if self._inner_hookexec is self._pluggy_loop:
            plan = self._plans.get(hook_name)
            if plan is None or plan.impls != methods:  # plan.serves(methods), inlined
                plan = self._make_plan(hook_name, methods)
            if plan is not None and plan.firstresult is firstresult:
                if plan.is_fast:
                    return plan.call(kwargs)
                if plan.is_planned:
                    return plan.call_wrapped(hook_name, kwargs)
        return self._inner_hookexec(hook_name, methods, kwargs, firstresult)

    def _make_plan(self, hook_name: str, impls: Sequence[pluggy.HookImpl]) -> CallPlan | None:
        """Make and keep the plan of hook ``hook_name``, if ``impls`` are all its implementations.

        Any other list (a subset caller's, ``call_extra``'s, a historic replay's) runs through
        pluggy's loop, and the hook's plan is kept for its next ordinary call.
        """
        caller = getattr(self.hook, hook_name, None)
        if not isinstance(caller, pluggy.HookCaller) or caller.get_hookimpls() != list(impls):
            return None
        spec = caller.spec
        plan = CallPlan(impls, firstresult=bool(spec is not None and spec.opts.get("firstresult")))
        self._plans[hook_name] = plan
        return plan

    def get_call_plan(self, name: str) -> CallPlan | None:
        """Return the call plan that serves hook ``name`` now, or ``None`` when pluggy's loop must.

        ``None`` for an unknown or historic hook, one whose spec has argument defaults, one
        with a wrapper, and for every hook while tracing or monitoring is on. Calling the plan
        with every argument of the hook is calling ``pm.hook.<name>(...)``.
        """
        if self._inner_hookexec is not self._pluggy_loop:
            return None
        caller = getattr(self.hook, name, None)
        plan = self._direct_plans.get(name)
        # The list pluggy holds (not get_hookimpls()'s copy): the facade asks on every call.
        if plan is not None and caller is not None and plan.impls == caller._hookimpls:
            return plan
        if not isinstance(caller, pluggy.HookCaller) or caller.is_historic():
            return None
        if caller.spec is not None and caller.spec.kwargdefaults:
            return None
        impls = caller.get_hookimpls()
        plan = self._plans.get(name)
        if plan is None or not plan.serves(impls):
            plan = self._make_plan(name, impls)
        if plan is None or not plan.is_fast:
            return None
        self._direct_plans[name] = plan
        return plan

    # -- registration with isolation -----------------------------------------------------------

    def register(self, plugin: object, name: str | None = None) -> str | None:
        """Register a plugin object (as pluggy does) and guard each of its hookimpls."""
        with self._lock:
            try:
                plugin_name = super().register(plugin, name)
            except BaseException:
                # pluggy leaves a half-registered plugin behind when validation fails.
                if self.is_registered(plugin):
                    self.unregister(plugin)
                raise
            if plugin_name is None:
                return None
            # Implementations of hooks with a spec were guarded in _verify_hook; only hooks
            # without one are left. Looking at those alone, rather than at every hook's
            # implementations (get_hookcallers), keeps registering N plugins linear in N.
            for caller in list(vars(self.hook).values()):
                if not isinstance(caller, pluggy.HookCaller) or caller.spec is not None:
                    continue
                mine = [impl for impl in caller.get_hookimpls() if impl.plugin is plugin]
                for impl in mine:
                    self._guard(impl, caller.name)
                if mine:
                    self._warn_unknown_hook(plugin_name, caller.name)
            return plugin_name

    def _verify_hook(self, hook: pluggy.HookCaller, hookimpl: pluggy.HookImpl) -> None:
        """Check an implementation against its spec (as pluggy does), then guard it.

        pluggy calls this before it adds the implementation to the hook, so a hook called from
        another thread meanwhile never runs it unguarded.
        """
        super()._verify_hook(hook, hookimpl)
        self._guard(hookimpl, hook.name)

    def _guard(self, impl: pluggy.HookImpl, hook_name: str) -> None:
        contract, firstresult = self._contract_of(hook_name)
        guard_hookimpl(
            impl,
            hook_name,
            contract,
            self._report_failure,
            strict=self.strict,
            firstresult=firstresult,
            timeout=self._hook_callback_timeout,
        )

    def _warn_unknown_hook(self, plugin_key: str, hook_name: str) -> None:
        close = difflib.get_close_matches(hook_name, self.known_hooks(), n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
        message = f"implements unknown hook {hook_name!r} (kept for newer hosts){hint}"
        # On the status of every load (a forced reload starts a fresh record), logged once.
        record = self._records.get(plugin_key)
        if record is not None and message not in record.warnings:
            record.warnings.append(message)
        if (plugin_key, hook_name) not in self._warned_unknown:
            self._warned_unknown.add((plugin_key, hook_name))
            logger.warning("plugin %r %s", plugin_key, message)

    def _report_failure(
        self, plugin_key: str, hook_name: str, message: str, exc: BaseException | None
    ) -> None:
        message = _clip(message)
        self.count_failure(plugin_key, hook_name, message)
        if isinstance(exc, HookTimeoutError):
            with self._failures_lock:
                record = self._records.get(plugin_key)
                if record is not None:
                    record.hook_timeouts += 1
        fingerprint = (plugin_key, hook_name, message)
        with self._failures_lock:
            if fingerprint in self._logged_failures:
                return
            # Bounded: messages that vary (ids, timestamps) must not grow it without end.
            self._logged_failures[fingerprint] = None
            if len(self._logged_failures) > _MAX_LOGGED_FAILURES:
                self._logged_failures.popitem(last=False)
        logger.warning(
            "plugin %r failed in hook %r: %s",
            plugin_key,
            hook_name,
            message,
            exc_info=exc if exc is not None and logger.isEnabledFor(logging.DEBUG) else None,
        )

    def _hook_callback_timeout(self) -> float:
        """Return the bound of each bounded hook call, read at every call (config may reload)."""
        return self.plugins_config.hook_callback_timeout

    def count_failure(self, plugin_key: str, where: str, message: str) -> None:
        """Count one failure of plugin ``plugin_key``'s code on its status, without logging it.

        For a discovered plugin it shows in ``PluginInfo.hook_errors``/``last_hook_error``;
        for an object the host registered itself (``pm.register(obj, name=...)``), in
        :meth:`get_failures`.

        :param where: the hook, or ``tool 'name'`` / ``command '/name'`` for a handler.
        """
        last = f"{where}: {_clip(message)}"
        with self._failures_lock:
            record = self._records.get(plugin_key)
            if record is not None:
                record.hook_errors += 1
                record.last_hook_error = last
                return
            count = self._other_failures.pop(plugin_key, FailureCount()).count
            self._other_failures[plugin_key] = FailureCount(count + 1, last)
            if len(self._other_failures) > _MAX_LOGGED_FAILURES:
                self._other_failures.popitem(last=False)

    def get_failures(self, name: str) -> FailureCount:
        """Return how often plugin ``name``'s code failed, and the last failure.

        Works for discovered plugins and for objects registered directly with
        ``pm.register(obj, name=...)``.
        """
        with self._failures_lock:
            record = self._records.get(name)
            if record is not None:
                return FailureCount(record.hook_errors, record.last_hook_error)
            return self._other_failures.get(name, FailureCount())

    def _add_hook_callback(
        self, plugin_key: str, hook_name: str, callback: Callable[..., Any]
    ) -> None:
        """Add a ``ctx.register_hook`` callback as a hookimpl of ``plugin_key``."""
        spec_argnames = self.hook_argnames(hook_name)
        adapter = make_hook_adapter(hook_name, callback, spec_argnames, owner=plugin_key)
        with self._lock:
            record = self._records.get(plugin_key)
            if record is not None and record.loading:
                record.pending.append((hook_name, adapter))
                return
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
            # Registered already: register again with the extra adapter (moves it to "newest").
            if self.is_registered(holder):
                self.unregister(holder)
            holder.add_adapter(hook_name, adapter)
            self.register(holder, name=plugin_key)

    # -- configuration --------------------------------------------------------------------------

    def _allow_tool_override(self, owner: str) -> bool:
        return self.plugins_config.allow_tool_override(owner)

    def reload_config(self) -> PluginsConfig:
        """Read ``config.yaml`` again; a broken file is reported and treated as empty."""
        try:
            self.plugins_config = PluginsConfig.from_config(
                load_config(self.hermes_home), source=self.hermes_home / "config.yaml"
            )
            self.config_error = None
        except ConfigError as exc:
            if self.strict:
                raise
            logger.error("%s", exc)
            self.config_error = str(exc)
            self.plugins_config = PluginsConfig.from_config({})
        return self.plugins_config

    # -- discovery, gating, loading -------------------------------------------------------------

    def discover(self) -> list[Candidate]:
        """Return every discovered plugin, reading manifests only (no plugin code runs)."""
        return discover_candidates(hermes_home=self.hermes_home, cwd=self.cwd)

    def discover_and_load(self, force: bool = False) -> None:
        """Discover plugins and load the enabled ones; a second call does nothing.

        :param force: unload every plugin first, then scan and load again.
        """
        with self._lock:
            if self._discovered and not force:
                return
            if force:
                self.unload_all()
                # Files written since the last scan (plugin modules, dist-info) must be seen.
                importlib.invalidate_caches()
            self.reload_config()
            self._records = {c.key: _Record(c) for c in self.discover()}
            self._discovered = True
            for record in self._records.values():
                status, reason = self._gate(record.candidate)
                record.status, record.reason = status, reason
                if status == "error":
                    record.error, record.reason = reason, None
                    logger.debug("plugin %r: %s", record.candidate.key, reason)
                    if self.strict:
                        raise PluginLoadError(record.candidate.key, reason or "error")
                elif status == "enabled":
                    logger.debug("plugin %r is to be loaded: %s", record.candidate.key, reason)
                    self._load(record)
                else:
                    logger.debug("plugin %r %s: %s", record.candidate.key, status, reason)

    def _gate(self, candidate: Candidate) -> tuple[Status, str | None]:
        """Decide from config and environment whether a candidate is to be loaded."""
        if candidate.error is not None:
            return "error", candidate.error
        config = self.plugins_config
        names = {candidate.key, candidate.name}
        if names & config.disabled:
            return "disabled", "listed in plugins.disabled"
        if candidate.kind == "exclusive":
            return "not enabled", "kind 'exclusive' plugins are loaded by their own subsystem"
        if names & config.enabled:
            why = "listed in plugins.enabled"
        elif candidate.source == "bundled" and candidate.kind == "backend":
            why = "bundled backend, loaded by default"
        else:
            return "not enabled", "not listed in plugins.enabled"
        if candidate.source == "project" and candidate.path is not None:
            # Trusted as its files were when enabled (hash recorded by hermes plugins enable).
            # Imported here: hashlib is only needed for project plugins.
            from hermes_hooks.plugins.trust import get_untrusted_reason

            untrusted = get_untrusted_reason(
                candidate.path, candidate.key, config.entry(candidate.key)
            )
            if untrusted is not None:
                return "error", untrusted
        manifest = candidate.manifest
        missing = (
            [n for n in manifest.required_env_names if not os.environ.get(n)] if manifest else []
        )
        if missing:
            plural = "s" if len(missing) > 1 else ""
            return "error", (
                f"requires environment variable{plural} {', '.join(missing)}, which "
                f"{'are' if plural else 'is'} not set"
            )
        return "enabled", why

    def _load(self, record: _Record) -> None:
        candidate = record.candidate
        key = candidate.key
        assert candidate.manifest is not None
        started = time.perf_counter()
        record.loading = True
        record.pending = []
        try:
            self._code_owners.add(key, plugin_roots(candidate))
            target = import_plugin(candidate)
            module, register_fn, native = self._plugin_parts(key, target)
            record.module = module
            if register_fn is None and not native:
                where = candidate.path or _describe_entry_point(candidate)
                raise PluginLoadError(key, f"no register() function and no @hookimpl in {where}")
            path = candidate.path
            if path is None and module is not None and getattr(module, "__file__", None):
                path = Path(module.__file__ or "").parent
            context = PluginContext(self, key, candidate.manifest, path)
            record.context = context
            if register_fn is not None:
                register_fn(context)
            record.holder = PluginHooks(key, module, native, record.pending)
            record.loading = False
            self.register(record.holder, name=key)
        except KeyboardInterrupt:
            self._rollback(record)
            raise
        except BaseException as exc:
            self._rollback(record)
            message = (
                exc.reason
                if isinstance(exc, PluginLoadError)
                else describe_failure(exc, plugin_roots(candidate))
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
        for registry in (self.tools, self.commands, self.cli_commands, self.skills):
            registry.remove_owner(key)
        self.image_gen.remove_owner(key)
        # Only the module this plugin was imported as: another plugin may share its slug.
        if record.candidate.path is not None and record.module is not None:
            evict_modules(record.module.__name__)
        if record.context is not None:
            record.context.revoke()  # a plugin keeping its ctx must not register through it
        self._code_owners.remove(key)
        record.holder = None
        record.module = None
        record.context = None

    def unload_plugin(self, key: str) -> bool:
        """Unload one plugin: unregister its hookimpls and every entry it registered."""
        with self._lock:
            record = self._records.get(key)
            if record is None or record.status != "enabled":
                return False
            self._rollback(record)
            record.status, record.reason = "not enabled", "unloaded"
            return True

    def unload_all(self) -> None:
        """Unload every loaded plugin and forget what discovery found."""
        with self._lock:
            for key in list(self._records):
                self.unload_plugin(key)
            self._records = {}
            self._discovered = False

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
            hook_errors=record.hook_errors,
            last_hook_error=record.last_hook_error,
            warnings=tuple(record.warnings),
            load_ms=record.load_ms,
            hook_timeouts=record.hook_timeouts,
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

    def get_context(self, key: str) -> PluginContext | None:
        """Return the context a loaded plugin was given, or ``None``."""
        record = self._records.get(key)
        return record.context if record is not None else None

    # -- Hermes-compatible calls ----------------------------------------------------------------

    def has_hook(self, name: str) -> bool:
        """Return whether any implementation of hook ``name`` is registered."""
        caller = getattr(self.hook, name, None)
        return isinstance(caller, pluggy.HookCaller) and bool(caller.get_hookimpls())

    def invoke_hook(self, name: str, **kwargs: Any) -> list[Any]:
        """Call hook ``name`` as Hermes does and return the non-``None`` results.

        Arguments of the hook that the caller leaves out are passed as ``None``; an unknown
        hook or one with no implementations returns ``[]``.
        """
        caller = getattr(self.hook, name, None)
        if not isinstance(caller, pluggy.HookCaller) or not caller.get_hookimpls():
            return []
        # Hermes passes what it has; pluggy needs every argument an impl names (for a hook
        # unknown to this host, whatever its callbacks ask for).
        argnames = list(caller.spec.argnames) if caller.spec is not None else []
        for impl in caller.get_hookimpls():
            argnames.extend(impl.argnames)
        for argname in argnames:
            kwargs.setdefault(argname, None)
        result = caller(**kwargs)
        if self._contract_of(name)[1]:
            return [] if result is None else [result]
        return [r for r in result if r is not None]


def _describe_entry_point(candidate: Candidate) -> str:
    ep = candidate.entry_point
    return f"entry point {ep.name} = {ep.value}" if ep is not None else candidate.key


def callback_of(function: Callable[..., Any]) -> Callable[..., Any]:
    """Return the plugin's own function behind a guarded hookimpl or shim adapter."""
    inner = getattr(function, "__wrapped_impl__", function)
    inner = getattr(inner, _SHIM_ATTR, inner)
    return inner if inspect.isroutine(inner) or callable(inner) else function


__all__ += ["callback_of"]
