"""Gateway platforms that ``kind: platform`` plugins register, recorded until adapters run them.

Hermes' ``ctx.register_platform(name, label, adapter_factory, check_fn, ...)`` adds a chat
platform adapter (Telegram, Discord, ...) to its gateway. This version has no adapter layer
yet: the registration is recorded here, owned by its plugin and removed when it unloads, so
that ``hermes plugins list`` can say which platforms a plugin brings and that nothing runs
them yet.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import attrs

from hermes_hooks.errors import RegistrationError
from hermes_hooks.registries.base import HOST, Handle, Registry, describe_owner

__all__ = ["PlatformEntry", "PlatformRegistry"]


@attrs.frozen
class PlatformEntry:
    """One registered gateway platform, with Hermes' ``PlatformEntry`` fields.

    :param extra: the further keyword arguments Hermes forwards (``setup_fn``, ``emoji``,
        ``allowed_users_env``, ``platform_hint``, ``ensure_deps_fn``...), as given.
    """

    name: str
    label: str
    adapter_factory: Callable[..., Any]
    check_fn: Callable[[], Any]
    validate_config: Callable[..., Any] | None = None
    required_env: tuple[str, ...] = ()
    install_hint: str = ""
    extra: Mapping[str, Any] = attrs.field(factory=dict)
    owner: str = HOST


class PlatformRegistry(Registry[PlatformEntry]):
    """Gateway platforms by name, with owners (one plugin per name, as for tools)."""

    def __init__(self) -> None:
        super().__init__("platform", normalize=str.strip)

    def register_platform(
        self,
        name: str,
        label: str,
        adapter_factory: Callable[..., Any],
        check_fn: Callable[[], Any],
        *,
        validate_config: Callable[..., Any] | None = None,
        required_env: list[str] | tuple[str, ...] | None = None,
        install_hint: str = "",
        extra: Mapping[str, Any] | None = None,
        owner: str = HOST,
    ) -> Handle:
        """Record a platform for ``owner``.

        :raises RegistrationError: a factory or check that is not callable, or a name taken.
        """
        who = describe_owner(owner)
        for field, value in (("adapter_factory", adapter_factory), ("check_fn", check_fn)):
            if not callable(value):
                raise RegistrationError(
                    f"platform {name!r} from {who}: {field} must be callable, "
                    f"found {type(value).__name__}"
                )
        entry = PlatformEntry(
            name=self.normalize(name),
            label=label,
            adapter_factory=adapter_factory,
            check_fn=check_fn,
            validate_config=validate_config,
            required_env=tuple(required_env or ()),
            install_hint=install_hint,
            extra=dict(extra or {}),
            owner=owner,
        )
        return self.register(entry.name, entry, owner=owner)
