"""Check one plugin before trusting it: load it in a throwaway home and report what is wrong.

:func:`check_plugin` reports, each as an error or a warning with file and line where known:
manifest problems, import and ``register()`` failures, hooks that do not exist (with the
closest names), ``@hookimpl`` arguments the hook does not pass, ``register_hook`` callbacks
without ``**kwargs`` that the hook would pass more to, tools and hooks declared in
``provides_tools``/``provides_hooks`` (or its short form ``hooks``) but not registered (and the
reverse), unset ``requires_env`` variables, missing ``pip_dependencies``, and which of Hermes'
modules the plugin imports: those served here (as information), names they lack, and Hermes
modules not served, which stop the plugin at import.
"""

from __future__ import annotations

import inspect
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final, Literal

import attrs

from hermes_hooks.admin.actions import closest_names
from hermes_hooks.admin.install import missing_pip_dependencies
from hermes_hooks.admin.trial import HookimplRecord, TrialManager, trial_load, where_defined
from hermes_hooks.compat.scan import HermesImport, scan_plugin
from hermes_hooks.errors import ManifestError
from hermes_hooks.plugins.discovery import Candidate, Source, scan_directory
from hermes_hooks.plugins.manifest import KNOWN_FIELDS, PluginManifest, find_manifest

__all__ = ["Finding", "PluginReport", "candidate_from_path", "check_plugin"]

Level = Literal["error", "warning", "info"]

_AT_END: Final = re.compile(r"\s\((?P<file>[^()]+):(?P<line>\d+)\)$")
_LINE_IN: Final = re.compile(r"\bline (\d+)\b")
_RESERVED: Final = frozenset({"hermes", "depends", "python_runtime"})


@attrs.frozen
class Finding:
    """One problem: how bad, which check found it, what it is, and where.

    :param check: a stable identifier (``manifest``, ``load``, ``unknown-hook``, ...).
    """

    level: Level
    check: str
    message: str
    file: str | None = None
    line: int | None = None

    @property
    def where(self) -> str:
        """``file:line``, ``file``, or an empty string."""
        if self.file is None:
            return ""
        return f"{self.file}:{self.line}" if self.line is not None else self.file

    def to_dict(self) -> dict[str, Any]:
        """Return the fields as a JSON-ready dict."""
        return attrs.asdict(self)


@attrs.frozen
class PluginReport:
    """What :func:`check_plugin` found for one plugin."""

    key: str
    path: str | None
    source: Source
    status: str
    findings: tuple[Finding, ...]

    @property
    def errors(self) -> int:
        """How many findings are errors."""
        return sum(1 for f in self.findings if f.level == "error")

    @property
    def warnings(self) -> int:
        """How many findings are warnings."""
        return sum(1 for f in self.findings if f.level == "warning")

    @property
    def notes(self) -> tuple[Finding, ...]:
        """The findings that are information only (``info``)."""
        return tuple(f for f in self.findings if f.level == "info")

    def to_dict(self) -> dict[str, Any]:
        """Return the report as a JSON-ready dict."""
        return {
            "key": self.key,
            "path": self.path,
            "source": self.source,
            "status": self.status,
            "ok": self.errors == 0,
            "errors": self.errors,
            "warnings": self.warnings,
            "findings": [f.to_dict() for f in self.findings],
        }


HERMES_CATEGORIES: Final = frozenset(
    {"browser", "context_engine", "cron_providers", "dashboard_auth", "image_gen", "kanban",
     "memory", "model-providers", "observability", "platforms", "tts", "transcription",
     "video_gen", "web"}
)  # fmt: skip
"""The category folders of Hermes' ``plugins/``: a plugin folder inside one (with no manifest
of its own) is keyed ``category/name``, as discovery keys it, so it imports itself as
``plugins.<category>.<name>``."""


def candidate_from_path(path: Path) -> Candidate:
    """Build the candidate for a plugin folder (or its ``plugin.yaml``) anywhere on disk.

    Its key is the folder name, or ``category/name`` for a folder inside one of
    :data:`HERMES_CATEGORIES` (``plugins/web/firecrawl``); a manifest that cannot be read
    becomes the candidate's error.
    """
    folder = path.parent if path.is_file() else path
    folder = folder.resolve()
    parent = folder.parent
    if parent.name in HERMES_CATEGORIES and find_manifest(parent) is None:
        for found in scan_directory(parent.parent, "user"):
            if found.path is not None and Path(found.path).resolve() == folder:
                return found
    manifest_path = find_manifest(folder)
    if manifest_path is None:
        error = f"{folder}: no plugin.yaml (a plugin folder needs a manifest)"
        return Candidate(key=folder.name, source="user", manifest=None, path=folder, error=error)
    try:
        manifest = PluginManifest.from_path(manifest_path, default_name=folder.name)
    except ManifestError as exc:
        return Candidate(key=folder.name, source="user", manifest=None, path=folder, error=str(exc))
    missing = None
    if not (folder / "__init__.py").is_file():
        missing = f"{folder}: no __init__.py next to {manifest_path.name}"
    return Candidate(key=folder.name, source="user", manifest=manifest, path=folder, error=missing)


def _field_line(manifest_path: Path | None, field: str | None) -> int | None:
    """Return the line where top-level *field* is set in the manifest, if it can be found."""
    if manifest_path is None or field is None:
        return None
    try:
        lines = manifest_path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    pattern = re.compile(rf"^['\"]?{re.escape(field)}['\"]?\s*:")
    return next((n for n, text in enumerate(lines, start=1) if pattern.match(text)), None)


def _split_location(message: str) -> tuple[str, str | None, int | None]:
    """Split ``"... (file:line)"`` into the message and its location."""
    match = _AT_END.search(message)
    if match is None:
        return message, None, None
    return message[: match.start()], match.group("file"), int(match.group("line"))


def _manifest_findings(candidate: Candidate) -> list[Finding]:
    folder = candidate.path
    manifest_path = find_manifest(folder) if folder is not None else None
    where = str(manifest_path) if manifest_path is not None else None
    manifest = candidate.manifest
    if candidate.error is not None:
        line_match = _LINE_IN.search(candidate.error)
        line = int(line_match.group(1)) if line_match else None
        if line is None and manifest_path is not None:
            field = re.search(r"field '([^']+)'", candidate.error)
            line = _field_line(manifest_path, field.group(1) if field else None)
        return [Finding("error", "manifest", candidate.error, where, line)]
    assert manifest is not None
    findings = []
    for name in sorted(set(manifest.extra) - _RESERVED):
        close = closest_names(name, KNOWN_FIELDS)
        hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
        findings.append(
            Finding(
                "warning",
                "manifest",
                f"unknown manifest field {name!r} is ignored{hint}",
                where,
                _field_line(manifest_path, name),
            )
        )
    for env in manifest.requires_env:
        if not os.environ.get(env.name):
            findings.append(
                Finding(
                    "warning",  # as in Hermes: the plugin loads; it may read config instead
                    "requires-env",
                    f"requires environment variable {env.name}, which is not set "
                    f"(set it, or add it to $HERMES_HOME/.env)",
                    where,
                    _field_line(manifest_path, "requires_env"),
                )
            )
    for requirement in missing_pip_dependencies(manifest):
        findings.append(
            Finding(
                "warning",
                "pip-dependencies",
                f"pip dependency {requirement!r} is not installed "
                f"('hermes plugins install' asks before installing it)",
                where,
                _field_line(manifest_path, "pip_dependencies"),
            )
        )
    return findings


def _located(level: Level, check: str, message: str, function: object) -> Finding:
    file, line = where_defined(function)
    return Finding(level, check, message, file, line)


def _hook_findings(pm: TrialManager, records: Iterable[HookimplRecord]) -> list[Finding]:
    known = pm.known_hooks()
    findings = []
    for record in records:
        name = getattr(record.function, "__qualname__", repr(record.function))
        argnames = pm.hook_argnames(record.hook)
        if argnames is None:
            close = closest_names(record.hook, known)
            if close:
                message = (
                    f"{name} implements hook {record.hook!r}, which does not exist; "
                    f"did you mean {', '.join(map(repr, close))}?"
                )
                findings.append(_located("error", "unknown-hook", message, record.function))
            else:
                message = (
                    f"{name} implements hook {record.hook!r}, which this version does not "
                    f"know; it is kept for newer hosts and never called here"
                )
                findings.append(_located("warning", "unknown-hook", message, record.function))
            continue
        if not record.via_register_hook:
            for extra in [a for a in record.argnames if a not in argnames]:
                close = closest_names(extra, argnames)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                message = (
                    f"{name} takes argument {extra!r}{hint}, which hook {record.hook!r} does "
                    f"not pass; it passes {', '.join(argnames) or 'nothing'}"
                )
                findings.append(_located("error", "hookimpl-args", message, record.function))
            continue
        findings.extend(_kwargs_findings(record, argnames, name))
    return findings


def _kwargs_findings(record: HookimplRecord, argnames: tuple[str, ...], name: str) -> list[Finding]:
    try:
        parameters = inspect.signature(record.function).parameters.values()
    except (TypeError, ValueError):
        return []
    if any(p.kind is p.VAR_KEYWORD for p in parameters):
        return []
    taken = {p.name for p in parameters}
    left_out = [a for a in argnames if a not in taken]
    if not left_out:
        return []
    message = (
        f"register_hook callback {name} for {record.hook!r} has no **kwargs, so it cannot take "
        f"{', '.join(left_out)}; Hermes passes every hook argument by keyword, so add **kwargs"
    )
    return [_located("warning", "register-hook-kwargs", message, record.function)]


def _declared_findings(
    candidate: Candidate, tools: Iterable[str], hooks: Iterable[str]
) -> list[Finding]:
    manifest = candidate.manifest
    assert manifest is not None
    manifest_path = manifest.path
    where = str(manifest_path) if manifest_path is not None else None
    findings = []
    # Hermes' plugins declare their hooks under ``hooks:``, the short form of provides_hooks.
    hook_field = "hooks" if manifest.hooks and not manifest.provides_hooks else "provides_hooks"
    declared_hooks = set(manifest.provides_hooks) | set(manifest.hooks)
    for kind, field, declared, registered in (
        ("tool", "provides_tools", set(manifest.provides_tools), set(tools)),
        ("hook", hook_field, declared_hooks, set(hooks)),
    ):
        line = _field_line(manifest_path, field)
        for name in sorted(declared - registered):
            message = f"{field} declares {kind} {name!r}, but the plugin does not register it"
            findings.append(Finding("warning", "declared", message, where, line))
        for name in sorted(registered - declared):
            message = f"registers {kind} {name!r}, which {field} does not declare"
            findings.append(Finding("warning", "declared", message, where, line))
    return findings


def _tool_findings(pm: TrialManager, tools: Iterable[str]) -> list[Finding]:
    """Errors a model or the dispatcher would meet later: a bad schema, a handler's signature."""
    from hermes_hooks.registries.schemas import schema_problem

    findings = []
    for name in tools:
        entry = pm.tools.get(name)
        if entry is None:
            continue
        problem = schema_problem(entry.schema)
        if problem is not None:
            message = f"tool {name!r}: its schema is not a valid JSON Schema: {problem}"
            findings.append(_located("error", "tool-schema", message, entry.handler))
        handler = inspect.unwrap(entry.handler)
        try:
            parameters = list(inspect.signature(handler).parameters.values())
        except (TypeError, ValueError):
            continue
        if not any(p.kind is p.VAR_KEYWORD for p in parameters):
            message = (
                f"tool {name!r}: its handler {getattr(handler, '__qualname__', handler)} takes "
                f"no **kwargs, so every call fails: the host passes task_id (and other context) "
                f"by keyword, as Hermes does; declare it as handler(args, **kwargs)"
            )
            findings.append(_located("error", "tool-handler", message, handler))
    return findings


def _load_findings(pm: TrialManager, candidate: Candidate, found: list[Finding]) -> list[Finding]:
    info = pm.get_plugin_info(candidate.key)
    if info is None:
        return []
    if info.status == "error" and info.error:
        already = {f.check for f in found}
        if "requires-env" in already and "requires environment variable" in info.error:
            return []
        if "hookimpl-args" in already:
            return []  # pluggy refused the same arguments; the specific finding says where
        message, file, line = _split_location(info.error)
        return [Finding("error", "load", f"failed to load: {message}", file, line)]
    if info.status != "enabled":
        return [Finding("warning", "load", f"not loaded: {info.reason or info.status}")]
    refused = [
        Finding("error", "registration", f"a registration was refused: {warning}")
        for warning in info.warnings
        if REFUSED_MARK in warning
    ]
    known = set(pm.known_hooks())  # an unknown hook is reported as such already
    findings = refused + _declared_findings(
        candidate, info.tools, [h for h in info.hooks if h in known]
    )
    findings.extend(_tool_findings(pm, info.tools))
    for tool in pm.override_requests:
        message = (
            f"registers tool {tool!r} with override=True: replacing a host tool also needs "
            f"plugins.entries.{candidate.key}.allow_tool_override: true"
        )
        findings.append(Finding("warning", "tool-override", message))
    return findings


def _listing(uses: list[HermesImport]) -> str:
    by_module: dict[str, list[str]] = {}
    for use in uses:
        names = by_module.setdefault(use.module, [])
        names.extend(n for n in use.names if n not in names)
    return ", ".join(f"{m} ({', '.join(n)})" if n else m for m, n in by_module.items())


def _shadowed(tops: set[str]) -> dict[str, str]:
    """Return each of Hermes' top-level names that a real module on ``sys.path`` takes, with
    where that module is (the finder serves a name only when no real module has it)."""
    import importlib.machinery

    found: dict[str, str] = {}
    for top in tops:
        try:
            spec = importlib.machinery.PathFinder.find_spec(top)
        except (ImportError, ValueError):
            continue
        if spec is None or spec.origin in (None, "namespace"):
            continue  # a bare folder without __init__.py does not count
        found[top] = str(spec.origin)
    return found


def _is_hermes_agent(origin: str) -> bool:
    """Whether a shadowing module sits in a Hermes Agent checkout or install."""
    from pathlib import Path

    root = Path(origin).parent.parent
    return (root / "run_agent.py").is_file() or (root / "hermes_cli" / "plugins.py").is_file()


def _compat_findings(candidate: Candidate) -> list[Finding]:
    """Say which Hermes modules the plugin imports, from a static scan of its files."""
    if candidate.path is None:
        return []
    uses = scan_plugin(candidate.path)
    findings: list[Finding] = []
    served = [u for u in uses if u.kind == "served"]
    for top, origin in sorted(_shadowed({u.module.partition(".")[0] for u in served}).items()):
        use = next(u for u in served if u.module.partition(".")[0] == top)
        what = "a Hermes Agent install" if _is_hermes_agent(origin) else f"a real package {top!r}"
        message = (
            f"imports {use.module}, but {what} at {origin} shadows Hermes' name {top!r} on "
            f"sys.path: the plugin gets that package's modules, not hermes-hooks' (a real "
            f"module always wins; see docs/reference/compat.md)"
        )
        findings.append(Finding("warning", "compat-shadowed", message, use.file, use.line))
    if served:
        message = f"imports Hermes modules served by hermes-hooks: {_listing(served)}"
        findings.append(Finding("info", "compat", message, served[0].file, served[0].line))
    selves = [u for u in uses if u.kind == "self"]
    if selves:
        message = (
            f"imports plugins by Hermes' package path: {_listing(selves)}; served from the "
            f"loaded plugins' own modules (a plugin it names must be loaded too)"
        )
        findings.append(Finding("info", "compat", message, selves[0].file, selves[0].line))
    for use in uses:
        if use.kind == "not served":
            message = (
                f"imports {use.module}, a Hermes module hermes-hooks does not serve: the "
                f"plugin stops there with ModuleNotFoundError unless the import is guarded "
                f"(see docs/reference/compat.md)"
            )
            findings.append(Finding("warning", "compat", message, use.file, use.line))
        elif use.missing:
            message = (
                f"imports {', '.join(use.missing)} from {use.module}, which hermes-hooks does "
                f"not provide (see docs/reference/compat.md for what it does)"
            )
            findings.append(Finding("warning", "compat", message, use.file, use.line))
    return findings


def _profile_findings(pm: TrialManager, candidate: Candidate) -> list[Finding]:
    """Check the model-provider profiles the plugin registered, as ``model.provider`` uses
    them: a wire protocol this version speaks, an http(s) endpoint, where its key is read."""
    from hermes_hooks.backends.models import get_models
    from hermes_hooks.backends.models.profiles import SUPPORTED_API_MODES

    models = get_models(pm)
    findings: list[Finding] = []
    for name in models.names(owner=candidate.key):
        profile = models.get_profile(name)
        if profile is None:
            continue
        if profile.api_mode not in SUPPORTED_API_MODES:
            findings.append(
                Finding(
                    "error",
                    "profile",
                    f"profile {name!r}: api_mode {profile.api_mode!r} is not spoken by this version"
                    f" (it speaks {', '.join(SUPPORTED_API_MODES)})",
                )
            )
        if not str(profile.base_url or "").startswith(("http://", "https://")):
            findings.append(
                Finding(
                    "error",
                    "profile",
                    f"profile {name!r}: base_url {profile.base_url!r} is not an http(s) URL",
                )
            )
        if not profile.env_vars and str(profile.auth_type or "api_key") == "api_key":
            findings.append(
                Finding(
                    "warning",
                    "profile",
                    f"profile {name!r}: no env_vars, so no key is ever sent"
                    f" (fine for a local server)",
                )
            )
        if not findings:
            findings.append(
                Finding(
                    "info",
                    "profile",
                    f"profile {name!r}: {profile.api_mode} at {profile.base_url}, key from"
                    f" {', '.join(profile.env_vars) or 'nowhere'}",
                )
            )
    return findings


REFUSED_MARK: Final = " refused: "
"""In a status warning, what marks a registration the framework refused (``ctx._refusable``)."""

_BLOCKED_FORM: Final = re.compile(r"""["']blocked["']\s*:\s*True""")


def _blocked_form_findings(candidate: Candidate) -> list[Finding]:
    """Point a plugin that returns ``{"blocked": True, ...}`` to Hermes's own block form."""
    if candidate.path is None or not candidate.path.is_dir():
        return []
    for file in sorted(candidate.path.rglob("*.py")):
        try:
            text = file.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        match = _BLOCKED_FORM.search(text)
        if match is not None:
            line = text.count("\n", 0, match.start()) + 1
            message = (
                'returns the {"blocked": True, "reason": ...} form: it blocks here, as the '
                'plugin guide shows it; Hermes\'s own form is {"action": "block", "message": ...}'
            )
            return [Finding("info", "blocked-form", message, str(file), line)]
    return []


def check_plugin(
    candidate: Candidate, *, load_timeout: float | None = None, untrusted: str | None = None
) -> PluginReport:
    """Load *candidate* alone in a throwaway ``HERMES_HOME`` and report what is wrong with it.

    :param untrusted: why a project plugin is not trusted: its code is then never imported
        (the report says so, and what reading its files found).

    :param load_timeout: the operator's ``plugins.load_timeout`` (a plugin that hangs while
        loading is reported after it, never waited for); the default when ``None``.
    """
    findings = _manifest_findings(candidate)
    findings.extend(_compat_findings(candidate))
    findings.extend(_blocked_form_findings(candidate))
    status = "error"
    if untrusted is not None:
        message = (
            f"not trusted, so not imported: {untrusted} (run 'hermes plugins enable "
            f"{candidate.key}' to review its files)"
        )
        findings.append(Finding("error", "trust", message))
    elif candidate.error is None:
        with trial_load(candidate, load_timeout=load_timeout) as pm:
            if candidate.manifest is not None and candidate.manifest.kind == "model-provider":
                pm.load_deferred("model-provider")  # as the first profile lookup does
            hook_findings = _hook_findings(pm, pm.hookimpls)
            findings.extend(hook_findings)
            findings.extend(_load_findings(pm, candidate, findings))
            findings.extend(_profile_findings(pm, candidate))
            info = pm.get_plugin_info(candidate.key)
            status = info.status if info is not None else "error"
    order = {"error": 0, "warning": 1, "info": 2}
    findings.sort(key=lambda f: order[f.level])
    return PluginReport(
        key=candidate.key,
        path=str(candidate.path) if candidate.path else None,
        source=candidate.source,
        status=status,
        findings=tuple(findings),
    )
