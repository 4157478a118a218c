"""The one table of the ``config.yaml`` keys the framework reads: each key's type and default.

Every section reader, ``hermes config check``, the typo warnings (``modle:`` → ``model``) and
``hermes config set``'s type check come from :data:`SECTIONS`. A key is a :class:`Key` with a
:class:`Kind` (what a value must be), its default and one line of help; a section is a
:class:`Section` of keys. :func:`read_section` reads one section of a loaded config into its
checked values, :func:`check_config` reports every problem of a whole config, and
:func:`parse_value` turns the text of ``hermes config set KEY VALUE`` into the value the key
takes.

A section is *open* when providers keep keys of their own in it (``image_gen.<provider>``): a
key not in the table is left alone there, unless it is one letter-slip from a known one. A
*lenient* key replaces a wrong value by its default with a warning (as Hermes does for
``plugins.hook_callback_timeout``); any other wrong value is an error.

Importing this module reads nothing: no environment, no files.
"""

from __future__ import annotations

import contextlib
import difflib
import math
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Final, Literal, Protocol

import attrs
import yaml

from hermes_hooks.calling.results import DEFAULT_MAX_HOOK_RESULT_BYTES
from hermes_hooks.errors import ConfigError
from hermes_hooks.plugins.configfile import describe

__all__ = [
    "DEFAULT_HOOK_CALLBACK_TIMEOUT",
    "DEFAULT_LOAD_TIMEOUT",
    "DEFAULT_MAX_RESPONSE_BYTES",
    "DEFAULT_PREFETCH_TIMEOUT",
    "MAX_HOOK_CALLBACK_TIMEOUT",
    "MAX_LOAD_TIMEOUT",
    "MAX_PREFETCH_TIMEOUT",
    "HERMES_ONLY_SECTIONS",
    "SECTIONS",
    "Flag",
    "Key",
    "Kind",
    "Mismatch",
    "Names",
    "Number",
    "Problem",
    "Seconds",
    "Section",
    "Table",
    "Text",
    "Whole",
    "check_config",
    "closest",
    "find_key",
    "keys_of",
    "parse_value",
    "read_entries",
    "read_mapping",
    "read_section",
]


DEFAULT_HOOK_CALLBACK_TIMEOUT: Final = 30.0
"""Seconds a hook callback may run when ``plugins.hook_callback_timeout`` is not set."""
MAX_HOOK_CALLBACK_TIMEOUT: Final = 600.0
"""Upper bound for ``plugins.hook_callback_timeout``; larger values are capped."""
DEFAULT_HOOK_WORKER_THREADS: Final = 256
"""Worker threads bounded hook calls (and plugin loading) may hold at once, when
``plugins.hook_worker_threads`` is not set."""
DEFAULT_LOAD_TIMEOUT: Final = 10.0
"""Seconds one plugin's import and ``register(ctx)`` may take when ``plugins.load_timeout`` is
not set: heavy SDK imports take seconds on two cores."""
MAX_LOAD_TIMEOUT: Final = 600.0
"""Upper bound for ``plugins.load_timeout``; larger values are capped."""
DEFAULT_MAX_RESPONSE_BYTES: Final = 64 * 1024 * 1024
"""The most bytes of one HTTP answer, once decoded, when ``model.max_response_bytes`` is not
set (the backends' HTTP reader bounds every provider call by it)."""
DEFAULT_PREFETCH_TIMEOUT: Final = 2.0
"""Seconds a provider's ``prefetch`` may take when ``memory.prefetch_timeout`` is not set."""
MAX_PREFETCH_TIMEOUT: Final = 60.0
"""Upper bound of ``memory.prefetch_timeout``; larger values are capped."""


class Mismatch(ValueError):
    """A value a :class:`Kind` refuses.

    :param tail: what follows ``FILE: KEY: `` in the message (``expected ..., found ...``).
    :param use: what a lenient key takes instead; its default when not given.
    """

    def __init__(self, tail: str, *, use: object = None, replace: bool = False) -> None:
        super().__init__(tail)
        self.tail = tail
        self.use = use
        self.replace = replace


class Kind(Protocol):
    """What a key's value must be."""

    @property
    def expected(self) -> str:
        """For people: ``a number of seconds``."""
        ...

    def check(self, value: object) -> Any:
        """Return *value* as the key takes it (``"45"`` seconds as ``45.0``).

        :raises Mismatch: the value does not fit.
        """
        ...

    def show(self, value: object) -> str:
        """Write a value of this kind for a message (``30s``)."""
        ...


def _mismatch(kind: Kind, value: object) -> Mismatch:
    return Mismatch(f"expected {kind.expected}, found {describe(value)}")


def _number_or_none(value: object) -> float | None:
    # bool is an int subclass, but `true` as a number is a mistake, not 1.
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


@attrs.frozen
class Text:
    """A string."""

    expected: str = "a string"

    def check(self, value: object) -> Any:
        if not isinstance(value, str):
            raise _mismatch(self, value)
        return value

    def show(self, value: object) -> str:
        return repr(value)


@attrs.frozen
class Flag:
    """``true`` or ``false`` (the string ``"true"`` is not one)."""

    expected: str = "true or false"

    def check(self, value: object) -> Any:
        if not isinstance(value, bool):
            raise _mismatch(self, value)
        return value

    def show(self, value: object) -> str:
        return "true" if value else "false"


@attrs.frozen
class Whole:
    """A whole number from *minimum* (and up to *maximum*, when given)."""

    minimum: int = 0
    maximum: int | None = None
    unit: str = ""
    note: str = ""

    @property
    def expected(self) -> str:
        what = f"a whole number{' of ' + self.unit if self.unit else ''}"
        span = (
            f"{self.minimum} or more"
            if self.maximum is None
            else (f"from {self.minimum} to {self.maximum}")
        )
        return f"{what}, {span}{' (' + self.note + ')' if self.note else ''}"

    def check(self, value: object) -> Any:
        if (
            isinstance(value, bool)
            or not isinstance(value, int)
            or value < self.minimum
            or (self.maximum is not None and value > self.maximum)
        ):
            raise _mismatch(self, value)
        return value

    def show(self, value: object) -> str:
        return str(value)


@attrs.frozen
class Number:
    """A number from *minimum* to *maximum*."""

    minimum: float
    maximum: float

    @property
    def expected(self) -> str:
        return f"a number from {self.minimum:g} to {self.maximum:g}"

    def check(self, value: object) -> Any:
        number = _number_or_none(value)
        if number is None or math.isnan(number) or not self.minimum <= number <= self.maximum:
            raise _mismatch(self, value)
        return number

    def show(self, value: object) -> str:
        return f"{value:g}" if isinstance(value, int | float) else repr(value)


@attrs.frozen
class Seconds:
    """A number of seconds, 0 or more, capped at *maximum*; numeric strings (``"45"``) count,
    as in Hermes. Above the maximum the maximum is used."""

    maximum: float = math.inf
    above_zero: bool = False
    expected: str = "a number of seconds"

    def check(self, value: object) -> Any:
        seconds = _number_or_none(value)
        if isinstance(value, str):
            with contextlib.suppress(ValueError):
                seconds = float(value)
        if seconds is None or math.isnan(seconds):
            raise _mismatch(self, value)
        if seconds < 0 or (self.above_zero and seconds == 0):
            least = "more than 0" if self.above_zero else "0 or more"
            raise Mismatch(f"expected {least} seconds, found {value!r}")
        if seconds > self.maximum:
            raise Mismatch(
                f"{value!r} is more than the maximum {self.show(self.maximum)}",
                use=self.maximum,
                replace=True,
            )
        return seconds

    def show(self, value: object) -> str:
        return f"{value:g}s" if isinstance(value, int | float) else repr(value)


@attrs.frozen
class Names:
    """A list of strings (plugin keys, provider names, URLs...)."""

    item: str = "a string"
    what: str = "strings"

    @property
    def expected(self) -> str:
        return f"a list of {self.what}"

    def check(self, value: object) -> Any:
        if not isinstance(value, list | tuple | set | frozenset):
            raise _mismatch(self, value)
        for index, item in enumerate(value):
            if not isinstance(item, str):
                raise Mismatch(f"[{index}]: expected {self.item}, found {describe(item)}")
        return list(value)

    def show(self, value: object) -> str:
        return "[]" if not value else repr(value)


@attrs.frozen
class Table:
    """A mapping whose keys the table does not list (plugin settings, provider entries)."""

    expected: str = "a mapping"

    def check(self, value: object) -> Any:
        if not isinstance(value, Mapping):
            raise _mismatch(self, value)
        return value

    def show(self, value: object) -> str:
        return "{}" if not value else repr(value)


@attrs.frozen
class Key:
    """One key of a section.

    :param name: the field in its section (``hook_callback_timeout``).
    :param kind: what its value must be.
    :param default: what it is when unset (``None``: nothing).
    :param help: one line for people (``hermes config check``, the docs).
    :param lenient: a wrong value is replaced by the default, with a warning.
    """

    name: str
    kind: Kind
    default: object = None
    help: str = ""
    lenient: bool = False


@attrs.frozen
class Section:
    """One top-level section of ``config.yaml``.

    :param scalar: a kind the whole section may be instead of a mapping (``model: NAME``).
    :param open: providers keep keys of their own here; unknown keys are not warned about
        unless one is a near miss of a known one.
    :param entries: the section maps names (a plugin, a provider) to mappings of these keys.
    :param expected: how the mapping is named in the error for a section of the wrong type.
    """

    name: str
    keys: tuple[Key, ...]
    help: str = ""
    scalar: Kind | None = None
    open: bool = False
    entries: bool = False
    expected: str = ""

    def key(self, name: str) -> Key | None:
        """Return the key *name* of this section, or ``None``."""
        return next((k for k in self.keys if k.name == name), None)

    @property
    def names(self) -> tuple[str, ...]:
        """The names of the keys."""
        return tuple(k.name for k in self.keys)

    def described(self) -> str:
        """How the section's mapping is named in errors."""
        if self.expected or not self.names:
            return self.expected or "a mapping"
        return f"a mapping ({', '.join(self.names[:4])}, ...)"


_ENTRY_KEYS: Final = (
    Key("allow_tool_override", Flag(), False, "let this plugin replace host tools"),
    Key("trusted_hash", Text(), None, "the content hash a project plugin is trusted at"),
    Key("llm", Table(), None, "what ctx.llm may do for this plugin (allowed_providers, ...)"),
)
"""The framework's own keys of ``plugins.entries.<plugin>``; the rest is the plugin's."""

SECTIONS: Final[Mapping[str, Section]] = {
    s.name: s
    for s in (
        Section(
            "plugins",
            (
                Key(
                    "enabled",
                    Names("a plugin key (a string)", "plugin keys"),
                    [],
                    "plugins that load (opt-in)",
                ),
                Key(
                    "disabled",
                    Names("a plugin key (a string)", "plugin keys"),
                    [],
                    "plugins that never load; beats enabled",
                ),
                Key(
                    "entries",
                    Table("a mapping of plugin id to settings"),
                    {},
                    "per-plugin settings: plugins.entries.<plugin>.<key>",
                ),
                Key(
                    "hook_callback_timeout",
                    Seconds(MAX_HOOK_CALLBACK_TIMEOUT),
                    DEFAULT_HOOK_CALLBACK_TIMEOUT,
                    "seconds a hook callback may run; 0: no limit",
                    lenient=True,
                ),
                Key(
                    "hook_worker_threads",
                    Whole(minimum=1, unit="threads"),
                    None,
                    "worker threads bounded hook calls may hold at once, for the process "
                    f"({DEFAULT_HOOK_WORKER_THREADS} when unset; a worker given up at the bound "
                    "no longer counts); when all are busy a bounded call runs inline, never "
                    "refused",
                    lenient=True,
                ),
                Key(
                    "load_timeout",
                    Seconds(MAX_LOAD_TIMEOUT),
                    DEFAULT_LOAD_TIMEOUT,
                    "seconds one plugin's import and register(ctx) may take",
                    lenient=True,
                ),
                Key(
                    "max_hook_result_bytes",
                    Whole(unit="bytes", note="0: no bound"),
                    DEFAULT_MAX_HOOK_RESULT_BYTES,
                    "bytes one hook result may hold",
                    lenient=True,
                ),
            ),
            "which plugins load, and their settings",
            expected="a mapping of plugin settings",
        ),
        Section(
            "model",
            (
                Key("provider", Text(), "offline", "the provider that runs the model"),
                Key("name", Text(), None, "the model id sent to the provider"),
                Key("model", Text(), None, "Hermes' name for model.name"),
                Key("default", Text(), None, "Hermes' name for model.name"),
                Key("base_url", Text(), None, "the provider's endpoint"),
                Key("api_key_env", Text(), None, "the environment variable holding the key"),
                Key(
                    "read_timeout", Seconds(above_zero=True), 60.0, "seconds to wait for the answer"
                ),
                Key(
                    "timeout",
                    Seconds(above_zero=True),
                    None,
                    "seconds the whole request may take (300 when unset); the read timeout too "
                    "when model.read_timeout is unset",
                ),
                Key(
                    "connect_timeout",
                    Seconds(above_zero=True),
                    10.0,
                    "seconds to wait for a connection",
                ),
                Key(
                    "max_response_bytes",
                    Whole(minimum=1, unit="bytes"),
                    DEFAULT_MAX_RESPONSE_BYTES,
                    "the most bytes of one answer, once decoded",
                ),
                Key("max_retries", Whole(), 2, "how often a retryable failure is tried again"),
                Key("retry_backoff", Number(0, 3600), 1.0, "seconds before the first retry"),
                Key("temperature", Number(0, 2), None, "the sampling temperature"),
                Key("max_tokens", Whole(minimum=1), None, "the most tokens of an answer"),
                Key(
                    "context_length",
                    Whole(minimum=256),
                    None,
                    "the model's window in tokens, for the compressor",
                ),
            ),
            "the model a turn runs on",
            scalar=Text(),
            open=True,  # Hermes keeps more here (api_mode, reasoning_effort, ...)
        ),
        Section(
            "providers",
            (
                Key("base_url", Text(), None, "the endpoint, instead of the profile's"),
                Key("api_key_env", Text(), None, "the variable holding its key"),
                Key("default", Text(), None, "the model when the caller names none"),
                Key("model", Text(), None, "providers.<name>.default's other name"),
            ),
            "per provider profile: base_url, api_key_env, default",
            open=True,
            entries=True,
        ),
        Section(
            "compression",
            (
                Key("enabled", Flag(), True, "whether the compressor compresses", lenient=True),
                Key(
                    "threshold",
                    Number(0.05, 1.0),
                    0.5,
                    "the share of the window that starts a compression",
                    lenient=True,
                ),
                Key(
                    "target_ratio",
                    Number(0.01, 0.9),
                    0.2,
                    "the share of the window a summary may take",
                    lenient=True,
                ),
                Key(
                    "protect_first_n",
                    Number(0, 1000),
                    3,
                    "first messages never compressed",
                    lenient=True,
                ),
                Key(
                    "protect_last_n",
                    Number(1, 1000),
                    20,
                    "last messages never compressed",
                    lenient=True,
                ),
            ),
            "the bundled context compressor",
            open=True,
        ),
        Section(
            "context",
            (Key("engine", Text(), "compressor", "the context engine"),),
            "which context engine keeps the conversation in the window",
            open=True,
        ),
        Section(
            "memory",
            (
                Key("provider", Text(), None, "the memory provider plugin"),
                Key(
                    "builtin",
                    Flag(),
                    True,
                    "whether the builtin SQLite memory runs",
                    lenient=True,
                ),
                Key(
                    "prefetch_timeout",
                    Seconds(MAX_PREFETCH_TIMEOUT),
                    DEFAULT_PREFETCH_TIMEOUT,
                    "seconds a provider's recall may take; 0: no bound",
                    lenient=True,
                ),
            ),
            "the memory providers",
            open=True,
        ),
        Section(
            "image_gen",
            (
                Key("provider", Text(), "offline", "the image generation provider"),
                Key("model", Text(), None, "the model the provider runs"),
                Key("timeout", Seconds(), 600.0, "seconds one generation may take"),
            ),
            "image generation",
            open=True,
        ),
        Section(
            "video_gen",
            (
                Key("provider", Text(), "offline", "the video generation provider"),
                Key("model", Text(), None, "the model the provider runs"),
                Key("timeout", Seconds(), 1200.0, "seconds one generation may take"),
            ),
            "video generation",
            open=True,
        ),
        Section(
            "web",
            (
                Key("backend", Text(), None, "the web provider for both tools"),
                Key("search_backend", Text(), None, "the web_search provider"),
                Key("extract_backend", Text(), None, "the web_extract provider"),
                Key("timeout", Seconds(), 60.0, "seconds one call may take"),
            ),
            "web_search and web_extract",
            open=True,
        ),
        Section(
            "browser",
            (
                Key("provider", Text(), None, "the browser provider"),
                Key("cloud_provider", Text(), None, "Hermes' name for browser.provider"),
                Key("timeout", Seconds(), 60.0, "seconds one call may take"),
            ),
            "the browser tools",
            open=True,
        ),
        Section(
            "security",
            (
                Key(
                    "allow_private_urls",
                    Flag(),
                    False,
                    "whether web tools may reach private addresses",
                ),
                Key(
                    "private_url_allowlist",
                    Names(what="addresses, networks or host names"),
                    [],
                    "private addresses web tools may reach",
                ),
            ),
            "the URL policy of the web and browser tools",
            open=True,  # Hermes keeps its redaction settings here
        ),
    )
}
"""Every section the framework reads, by name."""

HERMES_ONLY_SECTIONS: Final = frozenset(
    {
        "_config_version",
        "agent",
        "approvals",
        "auxiliary",
        "checkpoints",
        "code_execution",
        "command_allowlist",
        "credential_pool_strategies",
        "cron",
        "curator",
        "custom_providers",
        "dashboard",
        "database",
        "delegation",
        "discord",
        "display",
        "fallback_model",
        "fallback_providers",
        "gateway",
        "honcho",
        "hooks",
        "kanban",
        "logging",
        "max_concurrent_sessions",
        "max_live_sessions",
        "mcp_servers",
        "network",
        "personalities",
        "platform_toolsets",
        "platforms",
        "privacy",
        "prompt_caching",
        "quick_commands",
        "runtime",
        "secrets",
        "session",
        "skills",
        "slack",
        "smart_model_routing",
        "streaming",
        "stt",
        "telegram",
        "terminal",
        "timezone",
        "toolsets",
        "tts",
        "updates",
        "voice",
        "whatsapp",
    }
)
"""Top-level keys Hermes Agent reads and this framework leaves alone: known, never warned."""


@attrs.frozen
class Problem:
    """One problem of a config file: an ``error`` (the file is refused) or a ``warning``."""

    level: Literal["error", "warning"]
    key: str
    message: str

    def __str__(self) -> str:
        return self.message


def closest(name: str, known: Iterable[str]) -> str | None:
    """Return the known name *name* is most likely a slip of (``modle`` → ``model``)."""
    found = difflib.get_close_matches(name, list(known), n=1, cutoff=0.75)
    return found[0] if found else None


def _where(source: Path | None) -> str:
    return str(source) if source is not None else "config"


def _check_key(key: Key, value: object, path: str, where: str) -> tuple[object, Problem | None]:
    """Check one value: return what the key takes and the problem, if any."""
    try:
        return key.kind.check(value), None
    except Mismatch as exc:
        tail = exc.tail
        if tail.startswith("["):  # an item of a list: plugins.enabled[1]: ...
            return None, Problem("error", path, f"{where}: {path}{tail}")
        if key.lenient or exc.replace:
            use = exc.use if exc.replace else key.default
            said = key.kind.show(use)
            suffix = f"using {said}" if exc.replace else f"using the default {said}"
            return use, Problem("warning", path, f"{where}: {path}: {tail}; {suffix}")
        return None, Problem("error", path, f"{where}: {path}: {tail}")


def _unknown(name: str, known: Iterable[str], path: str, where: str) -> Problem:
    guess = closest(name, known)
    hint = f"; did you mean {guess!r}?" if guess else " (not read by hermes-hooks)"
    return Problem("warning", path, f"{where}: {path}: unknown key{hint}")


def _check_mapping(
    section: Section, mapping: Mapping[Any, Any], prefix: str, where: str
) -> Iterator[tuple[str, object, Problem | None]]:
    """Yield (field, value taken, problem) for each field of one mapping of *section*."""
    order = {name: index for index, name in enumerate(section.names)}
    fields = sorted(mapping, key=lambda f: order.get(str(f), len(order)))  # the table's order
    for field in fields:
        value = mapping[field]
        path = f"{prefix}.{field}"
        key = section.key(str(field))
        if key is None:
            guess = closest(str(field), section.names)
            if not section.open or guess is not None:
                yield str(field), value, _unknown(str(field), section.names, path, where)
            continue
        if value is None:
            continue
        taken, problem = _check_key(key, value, path, where)
        yield str(field), taken, problem


def _section_problems(section: Section, value: object, where: str) -> list[Problem]:
    if value is None:
        return []
    if section.scalar is not None and not isinstance(value, Mapping):
        try:
            section.scalar.check(value)
            return []
        except Mismatch:
            pass
    if not isinstance(value, Mapping):
        expected = section.described()
        if section.scalar is not None:
            expected = f"{section.scalar.expected} or {expected}"
        return [
            Problem(
                "error",
                section.name,
                f"{where}: {section.name}: expected {expected}, found {describe(value)}",
            )
        ]
    if not section.entries:
        return [p for _, _, p in _check_mapping(section, value, section.name, where) if p]
    problems: list[Problem] = []
    for name, entry in value.items():
        path = f"{section.name}.{name}"
        if entry is None:
            continue
        if not isinstance(entry, Mapping):
            problems.append(
                Problem(
                    "error",
                    path,
                    f"{where}: {path}: expected {section.described()}, found {describe(entry)}",
                )
            )
            continue
        problems.extend(p for _, _, p in _check_mapping(section, entry, path, where) if p)
    return problems


def _entries_problems(value: object, where: str) -> list[Problem]:
    """Check the framework's own keys of each ``plugins.entries.<plugin>``."""
    if not isinstance(value, Mapping):
        return []
    entry_section = Section("entries", _ENTRY_KEYS, open=True)
    problems: list[Problem] = []
    for plugin, entry in value.items():
        path = f"plugins.entries.{plugin}"
        if entry is None:
            continue
        if not isinstance(entry, Mapping):
            problems.append(
                Problem(
                    "error",
                    path,
                    f"{where}: {path}: expected a mapping of settings, found {describe(entry)}",
                )
            )
            continue
        problems.extend(p for _, _, p in _check_mapping(entry_section, entry, path, where) if p)
    return problems


def check_config(config: Mapping[str, Any], *, source: Path | None = None) -> list[Problem]:
    """Return every problem of a whole loaded config: wrong types, unknown keys, near misses.

    An unknown top-level key, or an unknown key in a section the framework owns, is a warning
    naming the closest known key. Keys of sections providers share are checked where known.
    """
    from hermes_hooks.plugins import extensions

    where = _where(source)
    # A provider family listed at the extension point (by a host or a test) owns its section.
    families = extensions.family_names()
    known = [*SECTIONS, *HERMES_ONLY_SECTIONS, *families]
    problems: list[Problem] = []
    for name, value in config.items():
        section = SECTIONS.get(str(name))
        if section is None:
            if str(name) not in HERMES_ONLY_SECTIONS and str(name) not in families:
                problems.append(_unknown(str(name), known, str(name), where))
            continue
        problems.extend(_section_problems(section, value, where))
        if section.name == "plugins" and isinstance(value, Mapping):
            problems.extend(_entries_problems(value.get("entries"), where))
    return problems


def read_section(
    config: Mapping[str, Any], name: str, *, source: Path | None = None
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """Read section *name* of a whole loaded config: every key's value, defaults filled in.

    :returns: the values by key and the warnings (lenient values replaced by their default;
        unknown keys are :func:`check_config`'s, reported once by whoever checks the file).
    :raises ConfigError: the section, or a value of a key that is not lenient, has the wrong
        type; the message names the file, the key, what was expected and what was found.
    """
    return read_mapping(SECTIONS[name], config.get(name), source=source)


def read_mapping(
    section: Section, raw: object, *, source: Path | None = None
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """Read *raw*, the value of ``config[section.name]``, by the keys of *section*.

    As :func:`read_section`, for a section given as a :class:`Section` (one of
    :func:`keys_of`, or a provider family's own).
    """
    name = section.name
    where = _where(source)
    values: dict[str, Any] = {key.name: key.default for key in section.keys}
    if raw is None:
        return values, ()
    errors = [p for p in _section_problems(section, raw, where) if p.level == "error"]
    if not isinstance(raw, Mapping) or section.entries:
        if errors:
            raise ConfigError(errors[0].message)
        return values, ()
    warnings: list[str] = []
    for field, taken, problem in _check_mapping(section, raw, name, where):
        if problem is not None and problem.level == "error":
            raise ConfigError(problem.message)
        if problem is not None and section.key(field) is not None:
            warnings.append(problem.message)
        if section.key(field) is not None and taken is not None:
            values[field] = taken
    return values, tuple(warnings)


def read_entries(
    config: Mapping[str, Any], name: str, *, source: Path | None = None
) -> dict[str, dict[str, Any]]:
    """Read entries section *name* (``providers``): each entry's values, defaults filled in.

    :raises ConfigError: the section, an entry or one of its values has the wrong type.
    """
    section = SECTIONS[name]
    raw = config.get(name)
    if raw is None:
        return {}
    where = _where(source)
    errors = [p for p in _section_problems(section, raw, where) if p.level == "error"]
    if errors:
        raise ConfigError(errors[0].message)
    assert isinstance(raw, Mapping)  # _section_problems refuses anything else
    entries: dict[str, dict[str, Any]] = {}
    for entry_name, entry in raw.items():
        values: dict[str, Any] = {key.name: key.default for key in section.keys}
        for field, taken, _ in _check_mapping(section, entry or {}, f"{name}.{entry_name}", where):
            if section.key(field) is not None and taken is not None:
                values[field] = taken
        entries[str(entry_name)] = values
    return entries


def keys_of(
    name: str, fields: Iterable[str], *, defaults: bool = True, kind: Kind = Text()
) -> Section:
    """Return section *name* of the table cut to *fields*, as an open section (its scalar
    form, ``model: NAME``, kept).

    A field the table does not list (a family a plugin declares) is read as *kind*.

    :param defaults: keep the table's defaults; without, an unset key reads as ``None``
        (a provider family tells "unset" from its default).
    """
    listed = SECTIONS.get(name)
    keys: list[Key] = []
    for field in fields:
        key = (listed.key(field) if listed is not None else None) or Key(field, kind)
        keys.append(key if defaults else attrs.evolve(key, default=None))
    if listed is None:
        return Section(name, tuple(keys), open=True)
    return attrs.evolve(listed, keys=tuple(keys), open=True)


def find_key(dotted: str) -> Key | None:
    """Return the table's key at a dotted path (``plugins.load_timeout``), or ``None``.

    ``providers.<name>.<key>`` and ``plugins.entries.<plugin>.<key>`` are found too.
    """
    parts = dotted.split(".")
    section = SECTIONS.get(parts[0])
    if section is None:
        return None
    if section.entries and len(parts) == 3:
        return section.key(parts[2])
    if parts[:2] == ["plugins", "entries"] and len(parts) == 4:
        return Section("entries", _ENTRY_KEYS).key(parts[3])
    return section.key(parts[1]) if len(parts) == 2 else None


def parse_value(dotted: str, text: str) -> object:
    """Turn the text of ``hermes config set KEY VALUE`` into the value *dotted* takes.

    The text is read as a YAML value (``20``, ``true``, ``[a, b]``); a string key keeps the
    text as written. A key the table knows is type-checked.

    :raises ConfigError: the value does not fit the key; the message says what was expected.
    """
    key = find_key(dotted)
    if key is not None and isinstance(key.kind, Text):
        return text
    try:
        value: object = yaml.safe_load(text) if text.strip() else text
    except yaml.YAMLError:
        value = text
    if key is None:
        return value
    try:
        key.kind.check(value)
    except Mismatch as exc:
        if exc.replace:
            return value
        tail = exc.tail if not exc.tail.startswith("[") else f"expected {key.kind.expected}"
        raise ConfigError(f"{dotted}: {tail}") from None
    return value


def render_reference() -> str:
    """Return ``docs/reference/config.md``: every key of :data:`SECTIONS`, as Markdown."""
    lines = [
        "# Configuration reference",
        "",
        "<!-- Generated from hermes_hooks/plugins/settings.py: run",
        "     python -m hermes_hooks.plugins.settings > docs/reference/config.md -->",
        "",
        "The keys of `$HERMES_HOME/config.yaml` that hermes-hooks reads, with their types and",
        "defaults: the one table `hermes config check`, `hermes config set` and the typo",
        "warnings use. A *lenient* key replaces a wrong value by its default, with a warning;",
        "any other wrong value is an error. In an *open* section providers keep keys of their",
        "own, so a key not listed there is not warned about (unless it is a near miss).",
        "",
        "Top-level keys Hermes Agent reads and hermes-hooks leaves alone are known too: "
        + ", ".join(f"`{name}`" for name in sorted(HERMES_ONLY_SECTIONS))
        + ".",
    ]
    for section in SECTIONS.values():
        notes = [n for n, on in (("open", section.open), ("one entry per name", section.entries))
                 if on]  # fmt: skip
        if section.scalar is not None:
            notes.append(f"or {section.scalar.expected} alone")
        title = f"## `{section.name}`" + (f" ({', '.join(notes)})" if notes else "")
        lines += ["", title, "", section.help[:1].upper() + section.help[1:] + ".", ""]
        lines += ["| key | type | default | |", "| --- | --- | --- | --- |"]
        prefix = f"{section.name}.<name>" if section.entries else section.name
        for key in section.keys:
            default = "-" if key.default is None else f"`{key.kind.show(key.default)}`"
            lenient = " (lenient)" if key.lenient else ""
            lines.append(
                f"| `{prefix}.{key.name}` | {key.kind.expected}{lenient} | {default} | {key.help} |"
            )
        if section.name == "plugins":
            lines += ["", "The framework's own keys of `plugins.entries.<plugin>` (the rest is the"
                      " plugin's, `hermes plugins config NAME`):", ""]  # fmt: skip
            lines += ["| key | type | default | |", "| --- | --- | --- | --- |"]
            for key in _ENTRY_KEYS:
                default = "-" if key.default is None else f"`{key.kind.show(key.default)}`"
                lines.append(
                    f"| `plugins.entries.<plugin>.{key.name}` | {key.kind.expected} | {default}"
                    f" | {key.help} |"
                )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    import sys

    sys.stdout.write(render_reference())
