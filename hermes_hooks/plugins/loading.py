"""Loading: import one candidate's code and shape what pluggy registers for it.

A directory plugin is imported as ``hermes_plugins.<slug>`` (so relative imports inside it
work); an entry point is loaded as its distribution declares. What pluggy registers under the
plugin's key is a :class:`PluginHooks` object holding the module's ``@hookimpl`` functions and
one adapter per ``ctx.register_hook`` callback, so both kinds are real hookimpls of one plugin.
"""

from __future__ import annotations

import functools
import importlib
import importlib.machinery
import importlib.util
import inspect
import keyword
import os
import re
import sys
import sysconfig
import threading
import traceback
import types
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import pluggy

from hermes_hooks.calling.guards import DIRECT_CALL_ATTR
from hermes_hooks.calling.tracebacks import hide_in_pytest
from hermes_hooks.errors import PluginLoadError, RegistrationError
from hermes_hooks.plugins.discovery import Candidate
from hermes_hooks.spec.markers import PROJECT_NAME

if TYPE_CHECKING:
    from hermes_hooks.plugins.trust import TrustedContent

__all__ = [
    "NAMESPACE",
    "CodeOwners",
    "PluginHooks",
    "describe_failure",
    "describe_load_failure",
    "evict_modules",
    "find_hookimpls",
    "import_plugin",
    "make_hook_adapter",
    "module_name_for",
    "plugin_roots",
    "register_alias",
    "running_at",
]

NAMESPACE: Final = "hermes_plugins"
USER_MEMORY_NAMESPACE: Final = "_hermes_user_memory"
"""Where Hermes imports a user's memory plugin: ``_hermes_user_memory.<name>`` (a plugin that
checks its ``__name__`` registers nothing under another name)."""
_IMPL_ATTR: Final = PROJECT_NAME + "_impl"
_SLUG_BAD: Final = re.compile(r"[^0-9a-zA-Z_]")
_NAMES_LOCK: Final = threading.Lock()
"""Held while a folder plugin's module name is chosen and entered in ``sys.modules``."""


def module_name_for(key: str) -> str:
    """Return the module name a directory plugin is imported as: ``hermes_plugins.<slug>``.

    ``image_gen/openai`` becomes ``hermes_plugins.image_gen__openai``; ``my-plugin`` becomes
    ``hermes_plugins.my_plugin``.
    """
    slug = _SLUG_BAD.sub("_", key.replace("/", "__"))
    if slug[0].isdigit():
        slug = "_" + slug
    return f"{NAMESPACE}.{slug}"


_ALIASES: Final[dict[str, str]] = {}
"""Other names plugin modules are in ``sys.modules`` under (alias → real module name)."""
_ALIASES_LOCK: Final = threading.Lock()


def register_alias(alias: str, real: str) -> None:
    """Record that ``sys.modules[alias]`` is the module ``real`` (Hermes' ``plugins.<key>``).

    :func:`evict_modules` then forgets the alias with the module, so that no stale module is
    left under it after its plugin unloads.
    """
    with _ALIASES_LOCK:
        _ALIASES[alias] = real


def _evict_aliases(name: str) -> None:
    prefix = name + "."
    with _ALIASES_LOCK:
        gone = [a for a, real in _ALIASES.items() if real == name or real.startswith(prefix)]
        for alias in gone:
            del _ALIASES[alias]
    for alias in gone:
        sys.modules.pop(alias, None)


def release_self_imports(key: str, real: str) -> None:
    """Forget the ``plugins.<key>`` aliases (and those below) of another module than ``real``.

    Called as plugin ``key`` is imported as ``real``: when another manager loaded a plugin of
    the same key, its Hermes self-imports (``from plugins.<key>.tools import ...``) must now
    find this plugin's own modules, not the other's.
    """
    alias = "plugins." + key.replace("/", ".")
    below = alias + "."
    mine = real + "."
    with _ALIASES_LOCK:
        gone = [
            a
            for a, target in _ALIASES.items()
            if (a == alias or a.startswith(below))
            and not (target == real or target.startswith(mine))
        ]
        for name in gone:
            del _ALIASES[name]
    for name in gone:
        sys.modules.pop(name, None)


class _SubmoduleLog:
    """Notes every module imported below a plugin's package, by the package it belongs to.

    Evicting a plugin's modules then looks at its own names only, never at all of
    ``sys.modules`` (which would make unloading ``n`` plugins quadratic). It sits first on
    ``sys.meta_path`` from the first folder plugin's import on, answers no import itself, and
    costs one ``startswith`` per module imported in the process.
    """

    _PREFIXES: Final = (NAMESPACE + ".", USER_MEMORY_NAMESPACE + ".")

    def __init__(self) -> None:
        self.below: dict[str, set[str]] = {}

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> None:
        for prefix in self._PREFIXES:
            if fullname.startswith(prefix):
                package, dot, _ = fullname[len(prefix) :].partition(".")
                if dot:
                    self.below.setdefault(prefix + package, set()).add(fullname)
                return

    def install(self) -> None:
        """Put this log first on ``sys.meta_path``, once."""
        if not any(finder is self for finder in sys.meta_path):
            sys.meta_path.insert(0, self)


_SUBMODULES: Final = _SubmoduleLog()


class _CheckedLoader:
    """Runs a module from the bytes the trust check read: no file read, no ``__pycache__``."""

    def __init__(self, source: bytes, filename: str) -> None:
        self.source = source
        self.filename = filename

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        return None  # the default module

    def exec_module(self, module: types.ModuleType) -> None:
        code = compile(self.source, self.filename, "exec", dont_inherit=True)
        exec(code, module.__dict__)  # the plugin's own code, checked at gating

    def get_source(self, fullname: str) -> str:
        """The checked source, for tracebacks and ``inspect``."""
        return self.source.decode("utf-8", "replace")


class _CheckedSources:
    """Serves every module of a trusted project plugin from the bytes its check read.

    A trusted project plugin's package and everything below it is imported here, never by
    Python's path finder: a ``.py`` file the check did not read (added since), a sourceless
    ``.pyc`` or an extension module is refused with :class:`ImportError` naming the file, and a
    ``.pyc`` in ``__pycache__`` is never looked at. It sits first on ``sys.meta_path`` from
    the first trusted plugin's import on; for any other module it costs one look-up.
    """

    def __init__(self) -> None:
        self.packages: dict[str, TrustedContent] = {}

    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        packages = self.packages
        if not packages:
            return None
        if not fullname.startswith(NAMESPACE):
            return self._through_path(fullname, path)
        head, _, rest = fullname.partition(".")
        package, _, rest = rest.partition(".")
        content = packages.get(f"{head}.{package}")
        if content is None or not rest:
            return None
        _SUBMODULES.find_spec(fullname)  # answered here, so noted here, to be evicted with it
        return _checked_spec(fullname, content, rest.replace(".", "/"))

    def _through_path(self, fullname: str, path: object) -> importlib.machinery.ModuleSpec | None:
        """A module a trusted plugin's folder provides under another name (its folder put on
        ``sys.path``, ``import helper``): served from the checked bytes too, or refused.

        Only looked for when a search location lies inside a trusted plugin's folder; the
        path finder then says which file the import would run, and a file inside the folder
        is answered as the plugin's own modules are.
        """
        locations = list(path) if isinstance(path, list | tuple) else list(sys.path)
        contents = list(self.packages.values())
        inside = [
            c
            for c in contents
            if any(isinstance(p, str) and _is_within(p, c.folder) for p in locations)
        ]
        if not inside:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, locations)
        origin = spec.origin if spec is not None else None
        if spec is None or not origin or not spec.has_location:
            return None  # the other finders answer as they would have
        for content in inside:
            if _is_within(origin, content.folder):
                relative = Path(os.path.relpath(origin, content.folder)).as_posix()
                parent, _, leaf = relative.rpartition("/")
                if leaf == "__init__.py":
                    relative = parent
                else:
                    stem = leaf.split(".", 1)[0]  # helper.py, helper.pyc, helper.cpython-311.so
                    relative = f"{parent}/{stem}" if parent else stem
                return _checked_spec(fullname, content, relative)
        return None

    def install(self) -> None:
        """Put this finder first on ``sys.meta_path``, once."""
        if not any(finder is self for finder in sys.meta_path):
            sys.meta_path.insert(0, self)


def _is_within(path: str, folder: Path) -> bool:
    try:
        return os.path.commonpath([os.path.realpath(path), os.path.realpath(folder)]) == (
            os.path.realpath(folder)
        )
    except ValueError:
        return False


def _checked_spec(
    fullname: str, content: TrustedContent, relative: str
) -> importlib.machinery.ModuleSpec:
    """Return the spec of module *relative* of a trusted plugin, or refuse it, naming why."""
    folder = content.folder
    for candidate, is_package in ((f"{relative}/__init__.py", True), (f"{relative}.py", False)):
        source = content.source_of(candidate)
        if source is not None:
            filename = str(folder / candidate)
            spec = importlib.util.spec_from_file_location(
                fullname,
                filename,
                loader=_CheckedLoader(source, filename),  # type: ignore[arg-type]
                submodule_search_locations=[str(folder / relative)] if is_package else None,
            )
            assert spec is not None
            return spec
    stem = relative.rsplit("/", 1)[-1]
    parent = relative.rpartition("/")[0]
    for refused, why in content.refused.items():
        if (
            refused.rpartition("/")[0] == parent
            and refused.rsplit("/", 1)[-1].split(".")[0] == stem
        ):
            raise ImportError(
                f"{folder / refused}: {why}, refused: a trusted project plugin runs only the "
                f".py sources checked when it was enabled",
                name=fullname,
                path=str(folder / refused),
            )
    on_disk = [
        p for p in (folder / f"{relative}.py", folder / relative / "__init__.py") if p.exists()
    ]
    if on_disk:
        raise ImportError(
            f"{on_disk[0]}: not among the files checked when the plugin was enabled, refused; "
            f"run 'hermes plugins enable' again to review it",
            name=fullname,
            path=str(on_disk[0]),
        )
    raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname)


_CHECKED: Final = _CheckedSources()


def evict_modules(name: str) -> None:
    """Forget module ``name`` and its sub-modules, so that the next import runs them afresh.

    The cost is that of the package's own modules (see :class:`_SubmoduleLog`); the other
    names they were registered under (:func:`register_alias`) go with them.
    """
    if _ALIASES:
        _evict_aliases(name)
    _CHECKED.packages.pop(name, None)
    below = _SUBMODULES.below.pop(name, ())
    sys.modules.pop(name, None)
    for loaded in below:
        sys.modules.pop(loaded, None)


def _free_module_name(name: str, init: Path) -> str:
    """Return ``name``, or ``name__2``, ... when another plugin's code holds it already.

    Keys like ``my-plugin`` and ``my_plugin`` share a slug; importing one must not evict the
    other's modules. The same file may take its own name back (a re-import).
    """
    candidate, n = name, 1
    while True:
        loaded = sys.modules.get(candidate)
        if loaded is None or getattr(loaded, "__file__", None) == str(init):
            return candidate
        n += 1
        candidate = f"{name}__{n}"


def _import_folder(
    candidate: Candidate,
    entered: Callable[[types.ModuleType], None] | None = None,
    checked: TrustedContent | None = None,
) -> types.ModuleType:
    assert candidate.path is not None
    _SUBMODULES.install()
    importlib.import_module(NAMESPACE)  # the parent package must exist for relative imports
    base_name = module_name_for(candidate.key)
    if candidate.source == "user" and candidate.kind == "exclusive":
        # As Hermes' plugins/memory loader names a user's memory plugin.
        slug = module_name_for(candidate.key.rsplit("/", 1)[-1]).rpartition(".")[2]
        base_name = f"{USER_MEMORY_NAMESPACE}.{slug}"
        if USER_MEMORY_NAMESPACE not in sys.modules:
            parent = importlib.machinery.ModuleSpec(USER_MEMORY_NAMESPACE, None, is_package=True)
            parent.submodule_search_locations = []
            sys.modules[USER_MEMORY_NAMESPACE] = importlib.util.module_from_spec(parent)
    init = candidate.path / "__init__.py"
    loader: Any = None
    if checked is not None:
        source = checked.source_of("__init__.py")
        if source is None:
            raise PluginLoadError(candidate.key, f"{init}: not among the files checked")
        _CHECKED.install()
        loader = _CheckedLoader(source, str(init))
    # Choose the name and enter the module in sys.modules in one step: two managers loading
    # plugins with the same slug in parallel threads would otherwise both take one name.
    with _NAMES_LOCK:
        name = _free_module_name(base_name, init)
        spec = importlib.util.spec_from_file_location(
            name, init, loader=loader, submodule_search_locations=[str(candidate.path)]
        )
        if spec is None or spec.loader is None:
            raise PluginLoadError(candidate.key, f"cannot import {init}")
        module = importlib.util.module_from_spec(spec)
        evict_modules(name)
        if checked is not None:
            _CHECKED.packages[name] = checked
        sys.modules[name] = module
        release_self_imports(candidate.key, name)
    try:
        if entered is not None:
            entered(module)
        spec.loader.exec_module(module)
    except BaseException:
        # Only its own module: a load abandoned at plugins.load_timeout may fail long after
        # a new load of the same plugin took the name.
        if sys.modules.get(name) is module:
            evict_modules(name)
        raise
    return module


def import_plugin(
    candidate: Candidate,
    entered: Callable[[types.ModuleType], None] | None = None,
    checked: TrustedContent | None = None,
) -> object:
    """Import a candidate's code: a module for folders, the entry point's target otherwise.

    :param entered: told a folder plugin's module once it is in ``sys.modules``, before its
        code runs (so that a load given up on can still evict it).
    :param checked: a trusted project plugin's content as its trust check read it: its
        package and every module below it run from those bytes (see :class:`_CheckedSources`).
    """
    if candidate.entry_point is not None:
        return candidate.entry_point.load()
    if candidate.path is None:
        raise PluginLoadError(candidate.key, "has neither a folder nor an entry point")
    return _import_folder(candidate, entered, checked)


def running_at(thread_id: int | None, roots: Iterable[str] = ()) -> str | None:
    """Return ``file:line`` where a thread runs plugin code now, or ``None``.

    The deepest frame under ``roots``; failing that, the deepest that is not hermes-hooks',
    pluggy's or the standard library's (see :func:`describe_failure`).
    """
    if thread_id is None:
        return None
    frame: types.FrameType | None = sys._current_frames().get(thread_id)
    prefixes = tuple(roots)
    fallback: str | None = None
    while frame is not None:
        filename = frame.f_code.co_filename
        where = f"{filename}:{frame.f_lineno}"
        if prefixes and filename.startswith(prefixes):
            return where
        if fallback is None and _is_plugin_frame(filename):
            fallback = where
        frame = frame.f_back
    return fallback


_MAIN_THREAD_ONLY: Final = "only works in main thread"
_LOCATION: Final = re.compile(r"\s\([^()]+:\d+\)$")


def describe_load_failure(exc: BaseException, roots: Iterable[str] = ()) -> str:
    """Return :func:`describe_failure`, in plain words first when loading off the main thread
    is what failed (a signal handler installed at import)."""
    described = describe_failure(exc, roots)
    if not (isinstance(exc, ValueError | RuntimeError) and _MAIN_THREAD_ONLY in str(exc)):
        return described
    found = _LOCATION.search(described)
    what, where = (described[: found.start()], found.group(0)) if found else (described, "")
    return (
        f"installs a signal handler while loading ({what}), which Python allows only on the "
        "main thread, and plugins load on a worker thread so that plugins.load_timeout can "
        "bound them; leave signal handling to the host, or set plugins.load_timeout: 0 to load "
        f"plugins on the main thread, without a bound{where}"
    )


def find_hookimpls(plugin: object) -> dict[str, Callable[..., Any]]:
    """Return the ``@hookimpl`` functions of a module (or methods of an object) by name."""
    if plugin is None:
        return {}
    found: dict[str, Callable[..., Any]] = {}
    if isinstance(plugin, types.ModuleType):
        items: Iterable[tuple[str, object]] = vars(plugin).items()
    else:
        items = ((name, getattr(plugin, name, None)) for name in dir(plugin))
    for name, value in items:
        if inspect.isroutine(value) and isinstance(getattr(value, _IMPL_ATTR, None), dict):
            found[name] = value
    return found


def plugin_roots(candidate: Candidate) -> list[str]:
    """Return the path prefixes of a candidate's own code, to point errors at its lines.

    A folder plugin's code is its folder; an entry point's is its top-level package (or
    module) inside the distribution's install location. Nothing is imported to find them.
    """
    if candidate.path is not None:
        return [str(candidate.path) + os.sep]
    ep = candidate.entry_point
    if ep is None or ep.dist is None:
        return []
    top = ep.module.split(".", 1)[0]
    base = str(ep.dist.locate_file(top))
    return [base + os.sep, base + ".py"]


class CodeOwners:
    """Which plugins' code is on the call stack: who is really asking for a registration.

    A plugin runs in the host's process and can reach the host's objects: ``pm.tools`` is one
    attribute away. The registries ask this object which plugins have a frame on the current
    stack, so that a plugin calling ``pm.tools.register_tool(..., owner=HOST)`` (or another
    plugin's key) from its ``register()``, a hook, a handler or a thread it started is refused,
    whatever ``owner`` it passes. Code is attributed by the file it was compiled from, under
    :func:`plugin_roots`.
    """

    _MAX_FRAMES: Final = 500

    def __init__(self) -> None:
        # root (a folder path ending in os.sep, or a module file) -> plugin key; read without
        # the lock (single look-ups, never iterated), changed under it.
        self._by_root: dict[str, str] = {}
        self._roots_of: dict[str, tuple[str, ...]] = {}
        # filename -> owner, as the roots were; replaced (never cleared in place) after every
        # change of the roots, so an answer worked out from older roots lands in a dropped dict.
        self._owners: dict[str, str | None] = {}
        self._lock = threading.Lock()

    def add(self, key: str, roots: Iterable[str]) -> None:
        """Attribute code under ``roots`` (from :func:`plugin_roots`) to plugin ``key``."""
        ours = _code_prefixes()[0]
        # Never the framework's own code (an entry point could name a module of it).
        kept = tuple(r for r in roots if not any(p.startswith(r) or r.startswith(p) for p in ours))
        with self._lock:
            self._forget(key)
            self._roots_of[key] = kept
            for root in kept:
                self._by_root[root] = key
            self._owners = {}

    def remove(self, key: str) -> None:
        """Stop attributing code to plugin ``key`` (it was unloaded, or failed)."""
        with self._lock:
            self._forget(key)
            self._owners = {}

    def _forget(self, key: str) -> None:
        for root in self._roots_of.pop(key, ()):
            if self._by_root.get(root) == key:
                del self._by_root[root]

    def owner_of_file(self, filename: str) -> str | None:
        """Return the plugin whose code ``filename`` is, or ``None``.

        One look-up per folder above the file the first time, so the cost does not grow with
        the number of plugins; then one look-up, until the roots change (a stack walk per
        registration would otherwise walk every frame's folders: tens of µs per call).
        """
        owners = self._owners
        try:
            return owners[filename]
        except KeyError:
            pass
        by_root = self._by_root
        owner = by_root.get(filename)
        end = len(filename)
        while owner is None and (end := filename.rfind(os.sep, 0, end)) > 0:
            owner = by_root.get(filename[: end + 1])
        owners[filename] = owner
        return owner

    def on_stack(self) -> frozenset[str]:
        """Return the keys of the plugins with a frame on the calling thread's stack."""
        if not self._by_root:
            return frozenset()
        found: set[str] = set()
        frame: types.FrameType | None = sys._getframe(1)
        depth = 0
        while frame is not None and depth < self._MAX_FRAMES:
            owner = self.owner_of_file(frame.f_code.co_filename)
            if owner is not None:
                found.add(owner)
            frame = frame.f_back
            depth += 1
        return frozenset(found)


@functools.cache
def _code_prefixes() -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """Return the path prefixes of (hermes-hooks and pluggy, the stdlib, site-packages)."""
    paths = sysconfig.get_paths()
    ours = (str(Path(__file__).resolve().parents[1]), str(Path(pluggy.__file__).resolve().parent))
    stdlib = {paths["stdlib"], paths["platstdlib"]}
    site = {paths["purelib"], paths["platlib"]}
    return (
        tuple(p + os.sep for p in ours),
        tuple(p + os.sep for p in sorted(stdlib)),
        tuple(p + os.sep for p in sorted(site)),
    )


def _is_plugin_frame(filename: str) -> bool:
    """Tell whether a traceback frame may be plugin code: not ours, pluggy's or the stdlib's."""
    if filename.startswith("<"):
        return False
    ours, stdlib, site = _code_prefixes()
    if filename.startswith(ours):
        return False
    return not filename.startswith(stdlib) or filename.startswith(site)


def _impl_location(plugin: object, hook_name: str) -> str | None:
    """Return ``file:line`` of the plugin's implementation of ``hook_name``, when found."""
    for attr in dir(plugin):
        function = getattr(plugin, attr, None)
        opts = getattr(function, _IMPL_ATTR, None)
        if not callable(function) or not isinstance(opts, dict):
            continue
        if (opts.get("specname") or attr) != hook_name:
            continue
        target = getattr(function, "__wrapped_callback__", function)
        code = getattr(inspect.unwrap(target), "__code__", None)
        if code is not None:
            return f"{code.co_filename}:{code.co_firstlineno}"
    return None


def _one_line(text: str) -> str:
    return "; ".join(line.strip() for line in text.splitlines() if line.strip())


def describe_failure(exc: BaseException, roots: Iterable[str] = ()) -> str:
    """Return ``Type: message (file:line)`` on one line, pointing at the plugin's own code.

    The line is the deepest frame under ``roots``; failing that, the deepest frame outside
    hermes-hooks, pluggy and the standard library; failing that, none is given. A
    ``SyntaxError`` names its own file and line, a pluggy validation error the offending
    hookimpl.
    """
    name = type(exc).__name__
    if isinstance(exc, SyntaxError) and exc.filename:
        return f"{name}: {exc.msg} ({exc.filename}:{exc.lineno})"
    message = _one_line(str(exc))
    text = f"{name}: {message}" if message else name
    if isinstance(exc, pluggy.PluginValidationError):
        hook = re.search(r"for hook '([^']+)'", str(exc))
        where = _impl_location(exc.plugin, hook.group(1)) if hook else None
        return f"{text} ({where})" if where else text
    frames = traceback.extract_tb(exc.__traceback__)
    prefixes = tuple(roots)
    chosen = [f for f in frames if prefixes and f.filename.startswith(prefixes)]
    chosen = chosen or [f for f in frames if _is_plugin_frame(f.filename)]
    if chosen:
        return f"{text} ({chosen[-1].filename}:{chosen[-1].lineno})"
    return text


_Params = tuple[list[str], list[str], bool, list[str]]


def _callback_params(callback: Callable[..., Any]) -> _Params:
    """Return (named parameters, required parameters, takes **kwargs, positional parameters).

    The positional parameters are those that may be passed by position and by name, in
    order, up to the first that may not. For a plain function the answer depends only on its
    code and on which parameters have defaults, so it is worked out once for all functions
    sharing those (a plugin registering one callback many times, or a lambda in a loop).
    """
    # A wrapper (functools.wraps) or a function with a __signature__ answers for another.
    if type(callback) is not types.FunctionType or (
        "__wrapped__" in callback.__dict__ or "__signature__" in callback.__dict__
    ):
        return _signature_params(callback)
    defaults, kwdefaults = callback.__defaults__, callback.__kwdefaults__
    key = (
        callback.__code__,
        len(defaults) if defaults else 0,
        frozenset(kwdefaults) if kwdefaults else frozenset(),
    )
    found = _PARAMS.get(key)
    if found is None:
        if len(_PARAMS) >= _MAX_PARAMS:
            _PARAMS.clear()
        found = _PARAMS[key] = _signature_params(callback)
    return found


_PARAMS: dict[tuple[types.CodeType, int, frozenset[str]], _Params] = {}
_MAX_PARAMS: Final = 1024


def _signature_params(callback: Callable[..., Any]) -> _Params:
    try:
        signature = inspect.signature(callback)
    except (TypeError, ValueError):
        return [], [], True, []  # a builtin without a signature: hand it everything
    named: list[str] = []
    required: list[str] = []
    positional: list[str] = []
    in_order = True
    var_kw = False
    for param in signature.parameters.values():
        if param.kind is param.VAR_KEYWORD:
            var_kw = True
        elif param.kind in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY):
            named.append(param.name)
            if param.default is param.empty:
                required.append(param.name)
        elif param.kind is param.POSITIONAL_ONLY and param.default is param.empty:
            required.append(param.name)
        if in_order and param.kind is param.POSITIONAL_OR_KEYWORD:
            positional.append(param.name)
        else:
            in_order = False
    return named, required, var_kw, positional


ARGUMENT_ALIASES: Final[Mapping[str, Mapping[str, str]]] = {
    "pre_tool_call": {"tool_args": "args"},
}
"""Callback parameter names accepted for a hook argument of another name: the plugin guide's
own seed writes ``def my_pre_tool_hook(tool_name, tool_args, **kwargs)`` for ``args``."""


@functools.lru_cache(maxsize=256)
def _adapter_code(
    wanted: tuple[str, ...],
    by_position: bool,
    renamed: tuple[tuple[str, str], ...] = (),
    keep_real: bool = False,
) -> types.CodeType:
    """Return the code of an adapter taking ``wanted``, compiled once for every callback.

    Plugins of one hook mostly share their parameters; each adapter is then one function
    made from this code, bound to its callback.

    :raises ValueError: a name is not an identifier (it names the first such).
    """
    for name in wanted:  # names come from signatures and specs; never from free text
        if not name.isidentifier() or keyword.iskeyword(name):
            raise ValueError(name)
    for alias, _ in renamed:
        if not alias.isidentifier() or keyword.iskeyword(alias):
            raise ValueError(alias)
    params = ", ".join(wanted)
    call = params if by_position else ", ".join(f"{n}={n}" for n in wanted)
    if renamed:
        reals = {real for _, real in renamed}
        passed = [f"{n}={n}" for n in wanted if n not in reals or keep_real]
        call = ", ".join(passed + [f"{alias}={real}" for alias, real in renamed])
    # Only identifiers checked above reach the source; the hook name (free text from the
    # plugin) is set as the function's name afterwards, never compiled.
    source = f"def adapter({params}):\n    return __callback({call})\n"
    module = compile(source, "<register_hook adapter>", "exec")
    return next(c for c in module.co_consts if isinstance(c, types.CodeType))


def _check_required(
    owner: str, hook_name: str, required: Sequence[str], passed: Sequence[str]
) -> None:
    """:raises RegistrationError: the callback requires an argument the hook does not pass."""
    missing = [p for p in required if p not in passed]
    if missing:
        raise RegistrationError(
            f"plugin {owner!r}: the callback for hook {hook_name!r} requires "
            f"{', '.join(map(repr, missing))}, which the hook does not pass; it passes "
            f"{', '.join(passed) or 'nothing'}"
        )


def make_hook_adapter(
    hook_name: str,
    callback: Callable[..., Any],
    spec_argnames: tuple[str, ...] | None,
    *,
    owner: str,
) -> Callable[..., Any]:
    """Turn a ``ctx.register_hook`` callback into a function pluggy can register as a hookimpl.

    The adapter's parameters are the hook arguments the callback names (all of them when it
    takes ``**kwargs``), so pluggy passes exactly those, and it calls the callback with them.
    It also tells the guards how to call the callback without it
    (:data:`~hermes_hooks.calling.guards.DIRECT_CALL_ATTR`): a ``**kwargs`` callback with the
    call's keyword arguments as they are, one that names its arguments first and in order
    with them by position.

    :param spec_argnames: the hook's arguments, or ``None`` for a hook this host does not know.
    :raises RegistrationError: the callback requires an argument the hook does not pass.
    """
    named, required, var_kw, positional = _callback_params(callback)
    direct: tuple[Callable[..., Any], bool, tuple[str, ...]] | None = None
    by_position = False
    renamed: tuple[tuple[str, str], ...] = ()
    if spec_argnames is not None:
        aliases = ARGUMENT_ALIASES.get(hook_name, {})
        renamed = tuple(
            (alias, real)
            for alias, real in aliases.items()
            if alias in named
            and alias not in spec_argnames
            and real in spec_argnames
            and real not in named
        )
    if renamed:
        spec = spec_argnames or ()
        aliased = dict(renamed)
        _check_required(owner, hook_name, [p for p in required if p not in aliased], spec)
        reals = set(aliased.values())
        wanted = list(spec) if var_kw else [n for n in spec if n in named or n in reals]
    elif spec_argnames is None:
        wanted = required
    else:
        _check_required(owner, hook_name, required, spec_argnames)
        if var_kw:
            wanted = list(spec_argnames)
            direct = (callback, True, tuple(spec_argnames))
        else:
            # In the callback's own order: when they lead its parameters, a call by position
            # is the same call, and a cheaper one.
            wanted = [n for n in named if n in spec_argnames]
            by_position = positional[: len(wanted)] == wanted
            if by_position:
                direct = (callback, False, tuple(wanted))
    try:
        code = _adapter_code(tuple(wanted), by_position, renamed, keep_real=var_kw)
    except ValueError as exc:
        raise RegistrationError(
            f"plugin {owner!r}: invalid argument name {exc.args[0]!r}"
        ) from None
    # Marked as calling machinery: a traceback through it shows the callback, not the adapter.
    namespace = {"__callback": callback, "__tracebackhide__": hide_in_pytest}
    adapter: Callable[..., Any] = types.FunctionType(code, namespace, "adapter")
    adapter.__name__ = hook_name
    adapter.__module__ = getattr(callback, "__module__", None) or __name__
    adapter.__qualname__ = getattr(callback, "__qualname__", hook_name)
    adapter.__wrapped_callback__ = callback  # type: ignore[attr-defined]
    if direct is not None:
        setattr(adapter, DIRECT_CALL_ATTR, direct)
    setattr(adapter, _IMPL_ATTR, _impl_options(hook_name, optional=spec_argnames is None))
    return adapter


def _impl_options(hook_name: str, *, optional: bool) -> dict[str, Any]:
    """What ``@hookimpl`` would set on an adapter: a plain implementation of ``hook_name``,
    optional when this host does not know the hook."""
    return {
        "wrapper": False,
        "hookwrapper": False,
        "optionalhook": optional,
        "tryfirst": False,
        "trylast": False,
        "specname": hook_name,
    }


class PluginHooks:
    """What pluggy registers for one plugin: its ``@hookimpl`` functions and shim adapters.

    The functions are plain instance attributes (pluggy 1.7 finds hookimpls with
    ``inspect.getattr_static``, not through ``__getattr__``), and ``dir()`` lists only them, so
    registering costs one look-up per hook rather than one per module attribute.
    """

    def __init__(
        self,
        key: str,
        module: types.ModuleType | None,
        native: dict[str, Callable[..., Any]],
        adapters: Iterable[tuple[str, Callable[..., Any]]] = (),
    ) -> None:
        self._hermes_key = key
        self._hermes_module = module
        self._hermes_names: list[str] = []
        for name, function in native.items():
            self._add(name, function)
        for hook_name, adapter in adapters:
            self.add_adapter(hook_name, adapter)

    @property
    def key(self) -> str:
        """The plugin key this object is registered under."""
        return self._hermes_key

    @property
    def module(self) -> types.ModuleType | None:
        """The plugin's module, when it has one."""
        return self._hermes_module

    def _add(self, name: str, function: Callable[..., Any]) -> None:
        self.__dict__[name] = function
        self._hermes_names.append(name)

    def add_adapter(self, hook_name: str, adapter: Callable[..., Any]) -> None:
        """Add one more shim adapter (before the object is registered again)."""
        self._add(f"{hook_name}__register_hook_{len(self._hermes_names)}", adapter)

    def __dir__(self) -> list[str]:
        return list(self._hermes_names)

    def __repr__(self) -> str:
        return f"<PluginHooks {self._hermes_key!r}: {len(self._hermes_names)} hookimpls>"
