"""The plugin manifest (``plugin.yaml``): a safe, bounded YAML parse and a frozen, checked record.

:func:`safe_load_yaml` is the one YAML entry point for untrusted files: it caps the size, refuses
alias bombs and deep nesting before anything is built, and raises :class:`YAMLLoadError`.
:class:`PluginManifest` is built from it by :meth:`PluginManifest.from_path` or, for data that is
already parsed, :meth:`PluginManifest.from_mapping`; every problem is a
:class:`~hermes_hooks.errors.ManifestError` naming the file, the field, what was expected and
what was found. The fields are the ones Hermes Agent knows (``hermes_cli/plugins_manifest.py``);
unknown fields are kept in :attr:`PluginManifest.extra` and logged once.
"""

from __future__ import annotations

import difflib
import logging
import re
import stat
import threading
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Final

import attrs

from hermes_hooks.errors import ManifestError

if TYPE_CHECKING:
    from packaging.specifiers import SpecifierSet
from hermes_hooks.plugins.safe_yaml import (
    MAX_YAML_DEPTH,
    MAX_YAML_NODES,
    YAMLLoadError,
    safe_load_yaml,
)

__all__ = [
    "KNOWN_FIELDS",
    "MANIFEST_FILENAMES",
    "MAX_MANIFEST_BYTES",
    "MAX_NAME_LENGTH",
    "MAX_YAML_DEPTH",
    "MAX_YAML_NODES",
    "NAME_PATTERN",
    "SUPPORTED_MANIFEST_VERSION",
    "VALID_KINDS",
    "EnvRequirement",
    "PluginManifest",
    "PluginRequirement",
    "YAMLLoadError",
    "find_manifest",
    "is_valid_plugin_name",
    "safe_load_yaml",
]

logger = logging.getLogger(__name__)

MANIFEST_FILENAMES: Final = ("plugin.yaml", "plugin.yml")
"""Manifest file names, in the order they are looked for (``plugin.yaml`` wins over ``.yml``)."""

MAX_MANIFEST_BYTES: Final = 256 * 1024
"""A manifest larger than this is refused, by its size on disk, before it is read."""

NAME_PATTERN: Final = re.compile(r"\A[a-z0-9][a-z0-9._-]*\Z")
"""What a plugin name looks like; anchored, so ``match`` and ``fullmatch`` agree."""

MAX_NAME_LENGTH: Final = 64
"""Longest plugin name accepted."""

VALID_KINDS: Final[frozenset[str]] = frozenset(
    {"standalone", "backend", "exclusive", "platform", "model-provider"}
)
"""The plugin kinds Hermes knows; ``standalone`` is the default."""

SUPPORTED_MANIFEST_VERSION: Final = 2
"""Highest ``manifest_version`` understood; a newer one loads, with a warning."""

_STRING_LIST_FIELDS: Final = (
    "provides_tools",
    "provides_hooks",
    "hooks",
    "pip_dependencies",
    "python_dependencies",
    "platforms",
    "tags",
    "capabilities",
    "emits",
    "listens",
    "provides_browser_providers",
    "provides_web_providers",
    "provides_image_gen_providers",
    "provides_video_gen_providers",
    "provides_memory_providers",
)
# Hermes reserves these names (no warning there) but gives them no shape yet: kept in ``extra``.
_RESERVED_FIELDS: Final = frozenset({"hermes", "depends", "python_runtime"})

KNOWN_FIELDS: Final[frozenset[str]] = frozenset(
    {
        "name", "version", "description", "author", "kind", "label", "license", "homepage",
        "requires_env", "optional_env", "requires_hermes", "manifest_version", "api_version",
        "requires_plugins", "config_schema", "external_dependencies", "provides_locales",
        *_STRING_LIST_FIELDS,
        *_RESERVED_FIELDS,
    }
)  # fmt: skip
"""Every top-level field Hermes knows; any other field is kept in ``extra`` and warned about."""

_ENV_NAME: Final = re.compile(r"\A[A-Za-z_][A-Za-z0-9_]*\Z")
_ENV_KEYS: Final = frozenset(
    {"name", "description", "url", "secret", "password", "prompt", "category"}
)
_EMPTY: Final[Mapping[str, object]] = MappingProxyType({})
# Fields whose YAML number keeps its written text: ``version: 1.10`` is "1.10", not "1.1".
_VERBATIM_FIELDS: Final = frozenset({"version", "requires_hermes"})

_warned: set[tuple[str, str]] = set()
_warned_lock = threading.Lock()


# ── the manifest ─────────────────────────────────────────────────────────────────────────────


@attrs.frozen(kw_only=True)
class EnvRequirement:
    """One environment variable a plugin needs (``requires_env``) or can use (``optional_env``).

    A manifest gives it as a bare name (``- MY_API_KEY``) or as a mapping with ``name`` and any
    of ``description``, ``url``, ``prompt``, ``category`` and ``secret`` (``password`` is read
    as ``secret``).

    :param name: the variable, ``[A-Za-z_][A-Za-z0-9_]*``.
    :param description: what it is for, shown when it is asked for.
    :param url: where to get a value.
    :param secret: ask for it without echoing it.
    :param prompt: the question shown when asking for it.
    :param category: Hermes' grouping for its setup screens (``setting`` for a plain
        setting rather than a credential); kept as written.
    """

    name: str
    description: str = ""
    url: str = ""
    secret: bool = False
    prompt: str = ""
    category: str = ""


@attrs.frozen(kw_only=True)
class PluginRequirement:
    """Another plugin this one asks to be loaded after (``requires_plugins``); advisory.

    :param id: the other plugin's name or key (``image_gen/openai``).
    :param version_range: e.g. ``">=1.0,<2"``; ``None`` accepts any version.
    """

    id: str
    version_range: str | None = None


@attrs.frozen(kw_only=True)
class PluginManifest:
    """A checked ``plugin.yaml``; build it with :meth:`from_path` or :meth:`from_mapping`.

    Every list field is a tuple and every mapping a read-only view (its nested values are kept
    as YAML gave them). Absent or ``null`` fields take the defaults below.
    """

    name: str
    version: str = ""
    description: str = ""
    author: str | Mapping[str, str] = attrs.field(default="", hash=False)
    kind: str = "standalone"
    label: str = ""
    license: str = ""
    homepage: str = ""
    requires_env: tuple[EnvRequirement, ...] = ()
    optional_env: tuple[EnvRequirement, ...] = ()
    provides_tools: tuple[str, ...] = ()
    provides_hooks: tuple[str, ...] = ()
    hooks: tuple[str, ...] = ()
    pip_dependencies: tuple[str, ...] = ()
    python_dependencies: tuple[str, ...] = ()
    platforms: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    capabilities: tuple[str, ...] = ()
    emits: tuple[str, ...] = ()
    listens: tuple[str, ...] = ()
    provides_browser_providers: tuple[str, ...] = ()
    provides_web_providers: tuple[str, ...] = ()
    provides_image_gen_providers: tuple[str, ...] = ()
    provides_video_gen_providers: tuple[str, ...] = ()
    provides_memory_providers: tuple[str, ...] = ()
    provides_locales: tuple[str | Mapping[str, object], ...] = attrs.field(default=(), hash=False)
    requires_hermes: str = ""
    manifest_version: int = 1
    api_version: int | None = None
    requires_plugins: tuple[PluginRequirement, ...] = ()
    config_schema: Mapping[str, Mapping[str, object]] = attrs.field(default=_EMPTY, hash=False)
    external_dependencies: tuple[Mapping[str, object], ...] = attrs.field(default=(), hash=False)
    extra: Mapping[str, object] = attrs.field(default=_EMPTY, hash=False)
    """Fields this version does not model, as given: unknown ones and Hermes' reserved ones."""
    declared_fields: frozenset[str] = frozenset()
    """The top-level fields the manifest actually set (e.g. to tell a default ``kind``)."""
    path: Path | None = None
    """The manifest file, when it came from one."""
    key: str = ""
    """The plugin's key (``name`` or ``category/name``), set by discovery as Hermes' manifest
    ``key`` is: plugins read ``ctx.manifest.key or ctx.manifest.name``. Empty for a manifest
    read on its own."""

    def hermes_mismatch(self, hermes_version: str) -> str | None:
        """Say why this plugin does not fit a host implementing Hermes ``hermes_version``.

        :returns: ``None`` when ``requires_hermes`` is unset or admits the version.
        """
        if not self.requires_hermes:
            return None
        if hermes_specifier(self.requires_hermes).contains(hermes_version, prereleases=True):
            return None
        return (
            f"requires Hermes {self.requires_hermes} (requires_hermes), and this host implements "
            f"the plugin contract of Hermes {hermes_version}"
        )

    @property
    def version_problem(self) -> str | None:
        """Say why ``version`` is not a version (PEP 440), or ``None`` (also when it is unset).

        Hermes only warns about it; strict mode refuses the plugin.
        """
        if not self.version or is_valid_version(self.version):
            return None
        return f"version {self.version!r} is not a version such as '1.0.0' (PEP 440)"

    @property
    def required_env_names(self) -> tuple[str, ...]:
        """The names in ``requires_env``, in order."""
        return tuple(env.name for env in self.requires_env)

    @property
    def author_display(self) -> str:
        """The author as one line: the string, or ``name, email, url`` from a mapping."""
        if isinstance(self.author, str):
            return self.author
        return ", ".join(
            self.author[key] for key in ("name", "email", "url") if self.author.get(key)
        )

    @classmethod
    def from_path(cls, path: Path, *, default_name: str | None = None) -> PluginManifest:
        """Read and check the manifest file at *path*.

        :param path: a ``plugin.yaml`` or ``plugin.yml``.
        :param default_name: the name when the file has none; default: the folder's name.
        :raises ManifestError: the file cannot be read, is over :data:`MAX_MANIFEST_BYTES`, is not
            UTF-8, is not safe valid YAML, or does not fit the schema.
        """
        try:
            info = path.stat()
        except OSError as exc:
            reason = exc.strerror or str(exc)
            raise ManifestError(f"cannot read the manifest: {reason}", path=path) from exc
        if not stat.S_ISREG(info.st_mode):
            raise ManifestError("expected a regular file, found something else", path=path)
        if info.st_size > MAX_MANIFEST_BYTES:
            raise ManifestError(
                f"expected at most {MAX_MANIFEST_BYTES} bytes, found {info.st_size} bytes",
                path=path,
            )
        try:
            with path.open("rb") as stream:
                raw = stream.read(MAX_MANIFEST_BYTES + 1)
        except OSError as exc:
            reason = exc.strerror or str(exc)
            raise ManifestError(f"cannot read the manifest: {reason}", path=path) from exc
        try:
            data = safe_load_yaml(
                raw,
                source=str(path),
                max_bytes=MAX_MANIFEST_BYTES,
                verbatim_keys=_VERBATIM_FIELDS,
                unique_keys=True,  # a key twice is refused naming both lines, as in config.yaml
            )
        except YAMLLoadError as exc:
            raise ManifestError(exc.located_reason, path=path) from exc
        if default_name is None:
            default_name = path.parent.name
        # An empty file is an empty manifest, as in Hermes: every field takes its default.
        return cls.from_mapping({} if data is None else data, path=path, default_name=default_name)

    @classmethod
    def from_mapping(
        cls, data: object, *, path: Path | None = None, default_name: str | None = None
    ) -> PluginManifest:
        """Check already-parsed manifest data (e.g. built from package metadata).

        :param data: the top-level mapping.
        :param path: the file it came from, named in errors and kept on the manifest.
        :param default_name: the name when *data* has none (discovery passes the folder name).
        :raises ManifestError: *data* is not a mapping or a field does not fit.
        """
        if not isinstance(data, Mapping):
            raise ManifestError(
                f"expected a mapping of fields at the top level, found {_describe(data)}",
                path=path,
            )
        for key in data:
            if not isinstance(key, str):
                raise ManifestError(
                    f"expected field names to be strings, found {_describe(key)}", path=path
                )
        r = _Reader(data, path)
        extra = {k: v for k, v in data.items() if k not in KNOWN_FIELDS or k in _RESERVED_FIELDS}
        for key in sorted(extra.keys() - _RESERVED_FIELDS):
            _warn_unknown(path, key, kept=True)
        manifest_version = r.integer("manifest_version", minimum=1) or 1
        if manifest_version > SUPPORTED_MANIFEST_VERSION:
            _warn_once(
                path,
                "manifest_version",
                "%s: manifest_version %d is newer than the %d this version understands; "
                "loading it anyway",
                _where(path), manifest_version, SUPPORTED_MANIFEST_VERSION,
            )  # fmt: skip
        return cls(
            name=r.name(default_name),
            version=r.version(),
            description=r.text("description"),
            author=r.author(),
            kind=r.kind(),
            label=r.text("label"),
            license=r.text("license"),
            homepage=r.text("homepage"),
            requires_env=r.env("requires_env"),
            optional_env=r.env("optional_env"),
            provides_tools=r.texts("provides_tools"),
            provides_hooks=r.texts("provides_hooks"),
            hooks=r.texts("hooks"),
            pip_dependencies=r.texts("pip_dependencies"),
            python_dependencies=r.texts("python_dependencies"),
            platforms=r.texts("platforms"),
            tags=r.texts("tags"),
            capabilities=r.texts("capabilities"),
            emits=r.texts("emits"),
            listens=r.texts("listens"),
            provides_browser_providers=r.texts("provides_browser_providers"),
            provides_web_providers=r.texts("provides_web_providers"),
            provides_image_gen_providers=r.texts("provides_image_gen_providers"),
            provides_video_gen_providers=r.texts("provides_video_gen_providers"),
            provides_memory_providers=r.texts("provides_memory_providers"),
            provides_locales=r.locales(),
            requires_hermes=r.requirement("requires_hermes"),
            manifest_version=manifest_version,
            api_version=r.integer("api_version", minimum=0),
            requires_plugins=r.plugins(),
            config_schema=r.config_schema(),
            external_dependencies=r.external_dependencies(),
            extra=MappingProxyType(extra) if extra else _EMPTY,
            declared_fields=frozenset(k for k, v in data.items() if v is not None),
            path=path,
        )


def find_manifest(folder: Path) -> Path | None:
    """Return the manifest file in *folder* (``plugin.yaml`` first), or ``None``."""
    for filename in MANIFEST_FILENAMES:
        candidate = folder / filename
        if candidate.is_file():
            return candidate
    return None


def is_valid_plugin_name(name: str) -> bool:
    """Answer whether *name* is a valid plugin name (:data:`NAME_PATTERN`, no ``..``, ≤ 64)."""
    return (
        len(name) <= MAX_NAME_LENGTH and ".." not in name and NAME_PATTERN.match(name) is not None
    )


# ── field checks ─────────────────────────────────────────────────────────────────────────────


class _Reader:
    """Reads one field at a time from manifest data, raising a :class:`ManifestError` on misfit."""

    __slots__ = ("data", "path")

    def __init__(self, data: Mapping[str, object], path: Path | None) -> None:
        self.data = data
        self.path = path

    def fail(self, field: str, expected: str, value: object, at: str = "") -> ManifestError:
        prefix = f"{at}: " if at else ""
        return ManifestError(
            f"{prefix}expected {expected}, found {_describe(value)}", path=self.path, field=field
        )

    def name(self, default_name: str | None) -> str:
        value = self.data.get("name")
        origin = ""
        if value is None:
            if default_name is None:
                raise ManifestError(
                    "expected a plugin name, found none (no 'name' field and no folder name)",
                    path=self.path,
                    field="name",
                )
            value, origin = default_name, " (taken from the folder name)"
        if not isinstance(value, str):
            raise self.fail("name", "a string (quote it)", value)
        if is_valid_plugin_name(value):
            return value
        hint = ""
        odd = next((ch for ch in value if not ch.isascii()), None)
        if odd is not None:
            hint = f"; it holds the non-ASCII character {odd!r} (U+{ord(odd):04X})"
        elif ".." in value:
            hint = "; '..' is not allowed"
        elif len(value) > MAX_NAME_LENGTH:
            hint = f"; it has {len(value)} characters"
        elif is_valid_plugin_name(value.lower()):
            hint = f"; did you mean {value.lower()!r}?"
        raise ManifestError(
            f"expected a name of lowercase ASCII letters, digits, '.', '_' and '-' that starts "
            f"with a letter or digit (^[a-z0-9][a-z0-9._-]*$, at most {MAX_NAME_LENGTH} "
            f"characters), found {_describe(value)}{origin}{hint}",
            path=self.path,
            field="name",
        )

    def text(self, field: str, value: object = None, at: str = "") -> str:
        if not at:
            value = self.data.get(field)
        if value is None:
            return ""
        if not isinstance(value, str):
            raise self.fail(field, "a string", value, at)
        return value

    def requirement(self, field: str) -> str:
        """A Hermes version requirement: a specifier set, or a bare version meaning ``>=``."""
        text = self.version(field).strip()
        if text:
            try:
                hermes_specifier(text)
            except ValueError as exc:
                raise self.fail(
                    field, "a version (meaning '>=') or a specifier such as '>=0.19,<1'", text
                ) from exc
        return text

    def version(self, field: str = "version") -> str:
        value = self.data.get(field)
        if value is None:
            return ""
        if isinstance(value, str):
            return value
        if isinstance(value, int | float) and not isinstance(value, bool):
            return str(value)
        raise self.fail(field, 'a string such as "1.0.0"', value)

    def integer(self, field: str, *, minimum: int) -> int | None:
        value = self.data.get(field)
        if value is None:
            return None
        if isinstance(value, str) and value.isascii() and value.strip().isdigit():  # as Hermes
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise self.fail(field, f"an integer of at least {minimum}", value)
        return value

    def kind(self) -> str:
        value = self.data.get("kind")
        if value is None:
            return "standalone"
        choices = ", ".join(repr(k) for k in sorted(VALID_KINDS))
        if not isinstance(value, str):
            raise self.fail("kind", f"one of {choices}", value)
        kind = value.strip().lower()  # Hermes accepts "Backend" and " backend "
        if kind in VALID_KINDS:
            return kind
        close = difflib.get_close_matches(kind, sorted(VALID_KINDS), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ManifestError(
            f"expected one of {choices}, found {_describe(value)}{hint}",
            path=self.path,
            field="kind",
        )

    def author(self) -> str | Mapping[str, str]:
        value = self.data.get("author")
        if value is None:
            return ""
        if isinstance(value, str):
            return value
        if isinstance(value, Mapping):
            for key, item in value.items():
                if not isinstance(key, str) or not isinstance(item, str):
                    raise self.fail("author", "string keys and values", item, f"key {key!r}")
            return MappingProxyType(dict(value))
        raise self.fail("author", "a string or a mapping such as {name: ..., email: ...}", value)

    def items(self, field: str, what: str) -> list[object]:
        value = self.data.get(field)
        if value is None:
            return []
        if isinstance(value, list):
            return value
        # A lone string is refused, not wrapped: Hermes iterates it character by character.
        hint = f" (write a one-item list: [{value}])" if isinstance(value, str) else ""
        raise ManifestError(
            f"expected a list of {what}, found {_describe(value)}{hint}",
            path=self.path,
            field=field,
        )

    def texts(self, field: str) -> tuple[str, ...]:
        values = self.items(field, "strings")
        for number, item in enumerate(values, 1):
            if not isinstance(item, str) or not item.strip():
                raise self.fail(field, "a non-empty string", item, f"item {number}")
        return tuple(values)  # type: ignore[arg-type]

    def env(self, field: str) -> tuple[EnvRequirement, ...]:
        found: list[EnvRequirement] = []
        for number, item in enumerate(self.items(field, "variable names or mappings"), 1):
            at = f"item {number}"
            if isinstance(item, str):
                found.append(EnvRequirement(name=self.env_name(field, item, at)))
                continue
            if not isinstance(item, Mapping):
                raise self.fail(field, "a variable name or a mapping with 'name'", item, at)
            for key in item:
                if key not in _ENV_KEYS:
                    _warn_unknown(self.path, f"{field}[{number}].{key}", kept=False)
            flags = [item.get(flag) for flag in ("secret", "password")]
            for flag, value in zip(("secret", "password"), flags, strict=True):
                if value is not None and not isinstance(value, bool):
                    raise self.fail(field, "true or false", value, f"{at}, key {flag!r}")
            found.append(
                EnvRequirement(
                    name=self.env_name(field, item.get("name"), at),
                    description=self.text(
                        field, item.get("description"), f"{at}, key 'description'"
                    ),
                    url=self.text(field, item.get("url"), f"{at}, key 'url'"),
                    secret=any(flags),
                    prompt=self.text(field, item.get("prompt"), f"{at}, key 'prompt'"),
                    category=self.text(field, item.get("category"), f"{at}, key 'category'"),
                )
            )
        return tuple(found)

    def env_name(self, field: str, value: object, at: str) -> str:
        if isinstance(value, str) and _ENV_NAME.match(value):
            return value
        raise self.fail(field, "an environment variable name ([A-Za-z_][A-Za-z0-9_]*)", value, at)

    def plugins(self) -> tuple[PluginRequirement, ...]:
        found: list[PluginRequirement] = []
        for number, item in enumerate(self.items("requires_plugins", "plugin ids"), 1):
            at = f"item {number}"
            ident: object = item
            version_range: str | None = None
            if isinstance(item, Mapping):
                ident = item.get("id")
                raw_range = item.get("version_range")
                if isinstance(raw_range, int | float) and not isinstance(raw_range, bool):
                    raw_range = str(raw_range)
                if raw_range is not None and not isinstance(raw_range, str):
                    raise self.fail(
                        "requires_plugins", "a version range string such as '>=1.0,<2'",
                        raw_range, f"{at}, key 'version_range'",
                    )  # fmt: skip
                version_range = raw_range
            if not isinstance(ident, str) or not all(map(is_valid_plugin_name, ident.split("/"))):
                raise self.fail(
                    "requires_plugins", "a plugin id or a mapping {id, version_range}", ident, at
                )
            found.append(PluginRequirement(id=ident, version_range=version_range))
        return tuple(found)

    def mappings(self, field: str, key: str) -> tuple[Mapping[str, object], ...]:
        found: list[Mapping[str, object]] = []
        for number, item in enumerate(self.items(field, f"mappings with '{key}'"), 1):
            if not isinstance(item, Mapping) or not isinstance(item.get(key), str):
                raise self.fail(field, f"a mapping with a string {key!r}", item, f"item {number}")
            found.append(MappingProxyType(dict(item)))
        return tuple(found)

    def external_dependencies(self) -> tuple[Mapping[str, object], ...]:
        return self.mappings("external_dependencies", "name")

    def locales(self) -> tuple[str | Mapping[str, object], ...]:
        found: list[str | Mapping[str, object]] = []
        for number, item in enumerate(self.items("provides_locales", "locale ids"), 1):
            if isinstance(item, str) and item.strip():
                found.append(item)
            elif isinstance(item, Mapping) and isinstance(item.get("id"), str):
                found.append(MappingProxyType(dict(item)))
            else:
                raise self.fail(
                    "provides_locales", "a locale id or a mapping {id, endonym, rtl}", item,
                    f"item {number}",
                )  # fmt: skip
        return tuple(found)

    def config_schema(self) -> Mapping[str, Mapping[str, object]]:
        value = self.data.get("config_schema")
        if value is None:
            return MappingProxyType({})
        if not isinstance(value, Mapping):
            raise self.fail(
                "config_schema", "a mapping of setting name to {type, default, ...}", value
            )
        schema: dict[str, Mapping[str, object]] = {}
        for key, spec in value.items():
            at = f"key {key!r}"
            if not isinstance(key, str):
                raise self.fail("config_schema", "string setting names", key)
            if not isinstance(spec, Mapping):
                raise self.fail("config_schema", "a mapping such as {type: str}", spec, at)
            if spec.get("type") is not None and not isinstance(spec["type"], str):
                raise self.fail(
                    "config_schema", "a type name string", spec["type"], f"{at}, 'type'"
                )
            schema[key] = MappingProxyType(dict(spec))
        return MappingProxyType(schema)


def _describe(value: object) -> str:
    """Name what was found, for a message: ``int 3``, ``str 'x'``, ``null``, ``list [...]``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"bool {str(value).lower()}"
    kind = "mapping" if isinstance(value, Mapping) else type(value).__name__
    text = repr(dict(value) if isinstance(value, Mapping) else value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{kind} {text}"


def hermes_specifier(text: str) -> SpecifierSet:
    """Return the specifier set of a ``requires_hermes``: a bare version ``0.19`` means ``>=0.19``.

    :raises ValueError: ``text`` is neither a version nor a specifier set.
    """
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    text = text.strip()
    try:
        return SpecifierSet(f">={text}" if text[:1].isdigit() else text)
    except InvalidSpecifier as exc:
        raise ValueError(str(exc)) from exc


def is_valid_version(text: str) -> bool:
    """Return whether ``text`` is a version as Python packaging reads it (PEP 440)."""
    from packaging.version import InvalidVersion, Version

    try:
        Version(text)
    except InvalidVersion:
        return False
    return True


def _where(path: Path | None) -> str:
    return str(path) if path is not None else "plugin manifest"


def _warn_unknown(path: Path | None, field: str, *, kept: bool) -> None:
    close = difflib.get_close_matches(field, sorted(KNOWN_FIELDS), n=1) if kept else []
    _warn_once(
        path,
        field,
        "%s: unknown manifest field %r %s%s",
        _where(path),
        field,
        "kept in extra, not used" if kept else "ignored",
        f"; did you mean {close[0]!r}?" if close else "",
    )


def _warn_once(path: Path | None, field: str, message: str, *args: object) -> None:
    """Log *message* once per (file, field); without a file, every time."""
    if path is not None:
        key = (str(path), field)
        with _warned_lock:
            if key in _warned:
                return
            _warned.add(key)
    logger.warning(message, *args)
