"""Calling a family's provider: asked first whether it can serve, bounded, its failures named.

Every family's tools call their provider through :func:`call_provider`, so that each family
behaves the same way when a provider misbehaves:

- ``is_available()`` is asked before each call; an unavailable provider is not called, and
  :class:`ProviderUnavailableError` says why (:func:`unavailable_reason`: the provider's own
  ``unavailable_reason()`` where it has one, else the variables of its setup schema that are
  not set, else that ``is_available()`` said no), never the provider's raw exception;
- the call is bounded by the family's ``<family>.timeout`` (:func:`read_timeout`) through the
  calling layer's bound (:func:`hermes_hooks.calling.handoff.call_within`): a provider that
  hangs is abandoned on its worker and the tool answers at once;
- what it raises becomes :class:`ProviderCallError` naming the provider, and counts as a
  failure of its plugin (``hermes plugins list`` shows it);
- an ``async def`` method is awaited.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from hermes_hooks.backends.family import Family, FamilyError, ProviderRegistry
from hermes_hooks.calling import aio, handoff
from hermes_hooks.plugins.settings import Seconds, keys_of, read_mapping

if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "ProviderCallError",
    "ProviderContractError",
    "ProviderTimeoutError",
    "ProviderUnavailableError",
    "call_provider",
    "describe_provider",
    "missing_env",
    "read_timeout",
    "settle_media_result",
    "unavailable_reason",
]

logger = logging.getLogger(__name__)


class ProviderUnavailableError(FamilyError):
    """The chosen provider says it cannot serve now (``is_available()`` is false)."""

    error_type = "provider_unavailable"


class ProviderCallError(FamilyError):
    """The provider raised; the original exception is the ``__cause__``."""

    error_type = "provider_exception"


class ProviderTimeoutError(FamilyError):
    """The provider did not answer within ``<family>.timeout``."""

    error_type = "provider_timeout"


class ProviderContractError(FamilyError):
    """The provider answered with something its contract does not allow."""

    error_type = "provider_contract"


def _name_of(provider: object) -> str:
    try:
        return str(provider.name)  # type: ignore[attr-defined]
    except Exception:
        return type(provider).__name__


def describe_provider(family: Family[Any], provider: object) -> str:
    """Return how messages name ``provider``: ``image provider 'openai'``."""
    return f"{family.kind} {_name_of(provider)!r}"


def missing_env(provider: object) -> list[str]:
    """Return the variables of the provider's setup schema (``env_vars``) that are not set."""
    schema_of = getattr(provider, "get_setup_schema", None)
    try:
        schema = schema_of() if callable(schema_of) else None
    except Exception:
        return []
    if not isinstance(schema, Mapping):
        return []
    found = []
    for var in schema.get("env_vars") or ():
        key = var.get("key") if isinstance(var, Mapping) else None
        if isinstance(key, str) and key and not os.environ.get(key, "").strip():
            found.append(key)
    return found


def unavailable_reason(provider: object) -> str | None:
    """Return why ``provider`` cannot serve now, or ``None`` when ``is_available()`` is true.

    The reason is the provider's own ``unavailable_reason()`` where it has one (a non-empty
    string), else the setup schema's variables that are not set, else a plain statement.
    """
    try:
        available = bool(provider.is_available())  # type: ignore[attr-defined]
    except Exception as exc:
        return f"its is_available() raised {type(exc).__name__}: {exc}"
    if available:
        return None
    explain = getattr(provider, "unavailable_reason", None)
    if callable(explain):
        try:
            reason = explain()
        except Exception as exc:
            logger.debug("provider %r: unavailable_reason() raised %r", provider, exc)
            reason = None
        if isinstance(reason, str) and reason.strip():
            return reason.strip()
    missing = missing_env(provider)
    if missing:
        verb = "are" if len(missing) > 1 else "is"
        return f"{' and '.join(missing)} {verb} not set"
    return "its is_available() returned False"


def read_timeout(family: Family[Any], section: Mapping[str, Any], source: Path | None) -> float:
    """Return the bound of one provider call: ``<family>.timeout`` in ``section``, in seconds.

    :raises ConfigError: the value is not a non-negative number.
    """
    if family.timeout_key is None:
        return family.default_timeout
    name, _, field = family.timeout_key.partition(".")
    keys = keys_of(name, (field,), defaults=False, kind=Seconds())
    values, _ = read_mapping(keys, section, source=source)
    value = values[field]
    return family.default_timeout if value is None else float(value)


def _count_failure(
    registry: ProviderRegistry[Any] | None, name: str, where: str, text: str
) -> None:
    if registry is None:
        return
    manager = registry.manager
    owner = registry.owner_of(name)
    if manager is None or owner is None:
        return
    try:
        manager.count_failure(owner, where, text)
    except Exception:  # the status is a courtesy; never let it break the tool
        logger.debug("could not count a failure of %r", owner, exc_info=True)


def call_provider(
    family: Family[Any],
    provider: object,
    method: str,
    /,
    *args: Any,
    timeout: float,
    registry: ProviderRegistry[Any] | None = None,
    check_available: bool = True,
    on: object | None = None,
    **kwargs: Any,
) -> Any:
    """Call ``provider.<method>(*args, **kwargs)`` as the module's docstring says.

    :param timeout: seconds, ``0`` for no bound (the call runs in this thread).
    :param registry: the registry it came from, to count a failure on its plugin.
    :param check_available: ask ``is_available()`` first.
    :param on: call the method of this object instead (a browser page the provider opened);
        the messages still name the provider.
    :raises ProviderUnavailableError: it is not available (it was not called).
    :raises ProviderTimeoutError: it did not answer in time (it goes on in the background).
    :raises ProviderCallError: it raised (the exception is the ``__cause__``).
    """
    who = describe_provider(family, provider)
    name = _name_of(provider)
    if check_available:
        reason = unavailable_reason(provider)
        if reason is not None:
            raise ProviderUnavailableError(f"{who} is unavailable: {reason}")
    target = provider if on is None else on
    try:
        function: Callable[..., Any] = getattr(target, method)
    except AttributeError as exc:
        raise ProviderContractError(
            f"{who} has no {method}() ({type(target).__name__} lacks it)"
        ) from exc

    def work() -> tuple[bool, Any]:
        try:
            result = function(*args, **kwargs)
            if aio.is_awaitable(result):
                result = aio.resolve(result)
            return True, result
        except (Exception, SystemExit) as exc:
            return False, exc

    if timeout > 0:
        try:
            ok, value = handoff.call_within(work, (), timeout)
        except TimeoutError as exc:
            message = (
                f"{who} did not answer within {timeout:g} s ({family.timeout_key}); it was "
                f"left running in the background"
            )
            _count_failure(registry, name, f"{family.name} provider {method}()", message)
            raise ProviderTimeoutError(message) from exc
    else:
        ok, value = work()
    if not ok:
        text = str(value)
        detail = f"{type(value).__name__}: {text}" if text else type(value).__name__
        logger.warning("%s: %s() raised %s", who, method, detail)
        _count_failure(registry, name, f"{family.name} provider {method}()", detail)
        raise ProviderCallError(f"{who} failed: {detail}") from value
    return value


def settle_media_result(
    result: object,
    *,
    field: str,
    a_what: str,
    name: str,
    model: str,
    fail: Callable[[str, str, str, str], dict[str, Any]],
) -> dict[str, Any]:
    """Return a media provider's answer as its tool gives it back (``image_generate``, ...).

    A dict of ``success_response()`` is returned as it is; a failure gets ``success`` false,
    ``field`` ``None``, an ``error`` and its type and the provider's name where it left them
    out; anything else, or success without a ``field``, is a ``provider_contract`` failure made
    by ``fail(error, error_type, provider, model)``.

    :param field: the result's key for the medium (``image``); ``a_what`` names it with its
        article (``an image``).
    """
    what = f"{field} provider {name!r}"
    if not isinstance(result, dict):
        return fail(
            f"{what} returned {type(result).__name__}, expected the dict of "
            f"success_response() or error_response()",
            "provider_contract",
            name,
            model,
        )
    if result.get("success") is not True:
        result = dict(result)
        result["success"] = False
        result.setdefault(field, None)
        if not result.get("error"):
            result["error"] = f"{what} reported a failure without a message"
        result["error_type"] = result.get("error_type") or "provider_error"
        result["provider"] = result.get("provider") or name
        return result
    medium = result.get(field)
    if not isinstance(medium, str) or not medium:
        return fail(
            f"{what} reported success without {a_what} (expected a URL or a file path in "
            f"{field!r}, found {medium!r})",
            "provider_contract",
            name,
            model,
        )
    return result
