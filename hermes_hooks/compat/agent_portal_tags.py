"""Hermes' ``agent.portal_tags``: the product tags every Nous Portal request carries.

``["product=hermes-agent", "client=hermes-client-v<version>"]``, plus
``conversation=<id>`` for the conversation in progress: the one a host published with
``set_conversation_context`` (per context, so concurrent sessions never see each other's),
else the ``session_id`` given. The version is the Hermes release whose contract hermes-hooks
serves (``hermes_cli.__version__`` here).
"""

from __future__ import annotations

from contextvars import ContextVar, Token

from hermes_hooks.spec.contract import HERMES_CONTRACT_VERSION

__all__ = [
    "conversation_tag",
    "get_conversation_context",
    "hermes_client_tag",
    "nous_portal_tags",
    "reset_conversation_context",
    "set_conversation_context",
]

_conversation_id: ContextVar[str | None] = ContextVar("nous_portal_conversation_id", default=None)


def set_conversation_context(conversation_id: str | None) -> Token[str | None]:
    """Publish the conversation in progress (``None`` clears); returns the token to reset."""
    return _conversation_id.set(conversation_id or None)


def reset_conversation_context(token: Token[str | None]) -> None:
    """Restore the conversation published before ``token``'s (or clear it, from elsewhere)."""
    try:
        _conversation_id.reset(token)
    except ValueError:  # a token of another context: clear rather than raise in cleanup
        _conversation_id.set(None)


def get_conversation_context() -> str | None:
    """Return the conversation published in this context, or ``None``."""
    return _conversation_id.get()


def hermes_client_tag() -> str:
    """Return ``client=hermes-client-v<version>``."""
    return f"client=hermes-client-v{HERMES_CONTRACT_VERSION}"


def conversation_tag(session_id: str) -> str:
    """Return ``conversation=<session_id>``."""
    return f"conversation={session_id}"


def nous_portal_tags(session_id: str | None = None) -> list[str]:
    """Return a fresh list of the Portal tags (see the module docstring)."""
    tags = ["product=hermes-agent", hermes_client_tag()]
    effective = get_conversation_context() or session_id
    if effective:
        tags.append(conversation_tag(effective))
    return tags
