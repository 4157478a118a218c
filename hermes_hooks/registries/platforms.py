"""Gateway platforms that ``kind: platform`` plugins register, with Hermes' ``PlatformEntry``.

Hermes' ``ctx.register_platform(name, label, adapter_factory, check_fn, ...)`` adds a chat
platform adapter (IRC, Telegram, ntfy...) to its gateway. The entry is owned by its plugin,
removed when the plugin unloads, and :meth:`PlatformRegistry.create_adapter` builds the adapter
as Hermes' ``create_adapter`` does: the passive ``check_fn`` first, then ``ensure_deps_fn`` when
it fails, then ``validate_config``, then the factory. ``hermes gateway run`` is its caller.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any, Final

import attrs

from hermes_hooks.errors import RegistrationError
from hermes_hooks.registries.base import HOST, Handle, Registry, describe_owner

__all__ = ["ENTRY_FIELDS", "AdapterUnavailable", "PlatformEntry", "PlatformRegistry"]

logger = logging.getLogger(__name__)


@attrs.define(eq=False)
class PlatformEntry:
    """One gateway platform: Hermes' ``gateway.platform_registry.PlatformEntry`` fields, in
    Hermes' order (the first four positional), plus its owner here.

    :param adapter_factory: ``PlatformConfig -> adapter``.
    :param check_fn: passive: are the dependencies importable now (no installs).
    :param validate_config: ``PlatformConfig -> bool``: is it configured; ``None`` skips.
    :param ensure_deps_fn: active: install the dependencies; tried when ``check_fn`` fails.
    :param allowed_users_env: the variable holding the comma-separated allowed user ids.
    :param allow_all_env: the variable whose truthy value lets everyone in.
    :param extra: keyword arguments Hermes does not define (kept, and warned about).
    """

    name: str
    label: str
    adapter_factory: Callable[[Any], Any]
    check_fn: Callable[[], Any]
    validate_config: Callable[[Any], Any] | None = None
    ensure_deps_fn: Callable[[], Any] | None = None
    is_connected: Callable[[Any], Any] | None = None
    required_env: list[str] = attrs.Factory(list)
    install_hint: str = ""
    setup_fn: Callable[[], Any] | None = None
    source: str = "plugin"
    plugin_name: str = ""
    allowed_users_env: str = ""
    allow_all_env: str = ""
    max_message_length: int = 0
    pii_safe: bool = False
    emoji: str = "\N{ELECTRIC PLUG}"
    allow_update_command: bool = True
    platform_hint: str = ""
    env_enablement_fn: Callable[[], Any] | None = None
    apply_yaml_config_fn: Callable[[Any, Any], Any] | None = None
    cron_deliver_env_var: str = ""
    parse_target_ref_fn: Callable[[str], Any] | None = None
    validate_target_ref_fn: Callable[[str], Any] | None = None
    send_message_handler: Callable[..., Any] | None = None
    standalone_sender_fn: Callable[..., Any] | None = None
    extra: dict[str, Any] = attrs.Factory(dict)
    owner: str = HOST


ENTRY_FIELDS: Final[frozenset[str]] = frozenset(
    field.name for field in attrs.fields(PlatformEntry) if field.name not in ("extra", "owner")
)
"""The keyword arguments ``ctx.register_platform`` takes as Hermes' entry fields."""

_CALLABLE_FIELDS: Final = (
    "validate_config",
    "ensure_deps_fn",
    "is_connected",
    "setup_fn",
    "env_enablement_fn",
    "apply_yaml_config_fn",
    "parse_target_ref_fn",
    "validate_target_ref_fn",
    "send_message_handler",
    "standalone_sender_fn",
)


class AdapterUnavailable(Exception):
    """A platform's adapter cannot be built now; the message says why and what to do."""

    def __init__(self, name: str, reason: str, *, retryable: bool) -> None:
        super().__init__(f"platform {name!r}: {reason}")
        self.name = name
        self.reason = reason
        self.retryable = retryable


def _truthy(value: object) -> bool:
    return bool(value) and value is not NotImplemented


class PlatformRegistry(Registry[PlatformEntry]):
    """Gateway platforms by name, with owners (one plugin per name, as for tools)."""

    def __init__(self) -> None:
        super().__init__("platform", normalize=lambda name: name.strip().lower())

    def register_platform(
        self,
        name: str,
        label: str,
        adapter_factory: Callable[..., Any],
        check_fn: Callable[[], Any],
        *,
        owner: str = HOST,
        **fields: Any,
    ) -> Handle:
        """Register a platform for ``owner``; ``fields`` are the further entry fields.

        :raises RegistrationError: a factory or check that is not callable, a callable field
            that is not, a bad ``required_env``, or a name taken by another owner.
        """
        who = describe_owner(owner)
        if not isinstance(name, str) or not name.strip() or " " in name.strip():
            raise RegistrationError(
                f"platform from {who}: name must be a non-empty string without spaces, "
                f"found {name!r}"
            )
        for field, value in (("adapter_factory", adapter_factory), ("check_fn", check_fn)):
            if not callable(value):
                raise RegistrationError(
                    f"platform {name!r} from {who}: {field} must be callable, "
                    f"found {type(value).__name__}"
                )
        for field in _CALLABLE_FIELDS:
            hook = fields.get(field)
            if hook is not None and not callable(hook):
                raise RegistrationError(
                    f"platform {name!r} from {who}: {field} must be callable or None, "
                    f"found {type(hook).__name__}"
                )
        required = fields.pop("required_env", None) or []
        if isinstance(required, str) or not all(isinstance(item, str) for item in required):
            raise RegistrationError(
                f"platform {name!r} from {who}: required_env must be a list of variable "
                f"names, found {required!r}"
            )
        unknown = {key: fields.pop(key) for key in list(fields) if key not in ENTRY_FIELDS}
        if unknown:
            logger.warning(
                "platform %r from %s: unknown entry fields kept but unused: %s",
                name,
                who,
                ", ".join(sorted(unknown)),
            )
        fields.setdefault("plugin_name", owner if owner != HOST else "")
        entry = PlatformEntry(
            self.normalize(name),
            label,
            adapter_factory,
            check_fn,
            required_env=list(required),
            extra=unknown,
            owner=owner,
            **fields,
        )
        return self.register(entry.name, entry, owner=owner)

    def create_adapter(self, name: str, config: Any) -> Any:
        """Build ``name``'s adapter for ``config`` as Hermes' gateway does.

        :raises AdapterUnavailable: not registered, dependencies missing (after
            ``ensure_deps_fn``), or ``validate_config`` refuses the config; a factory that
            raises is reported the same way, as retryable.
        """
        entry = self.get(name)
        if entry is None:
            raise AdapterUnavailable(name, "no plugin registered this platform", retryable=False)
        hint = f" ({entry.install_hint})" if entry.install_hint else ""
        if not _truthy(_call_quietly(entry.check_fn)):
            ensure = entry.ensure_deps_fn
            if ensure is None or not _truthy(_call_quietly(ensure)):
                raise AdapterUnavailable(
                    name, f"its dependencies are not available{hint}", retryable=False
                )
        if entry.validate_config is not None and not _truthy(
            _call_quietly(entry.validate_config, config)
        ):
            needed = ", ".join(entry.required_env) or "its gateway.platforms settings"
            raise AdapterUnavailable(name, f"not configured: set {needed}", retryable=False)
        try:
            return entry.adapter_factory(config)
        except Exception as exc:
            raise AdapterUnavailable(
                name, f"its adapter factory raised {type(exc).__name__}: {exc}", retryable=True
            ) from exc


def _call_quietly(function: Callable[..., Any], *args: Any) -> Any:
    try:
        return function(*args)
    except Exception:
        logger.warning(
            "platform check %r raised", getattr(function, "__name__", function), exc_info=True
        )
        return False


def entry_summary(entry: PlatformEntry) -> Mapping[str, Any]:
    """Return what ``hermes gateway status`` shows of an entry."""
    return {
        "name": entry.name,
        "label": entry.label,
        "owner": entry.owner,
        "required_env": list(entry.required_env),
        "install_hint": entry.install_hint,
    }
