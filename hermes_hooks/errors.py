"""The exception family of hermes-hooks: one base, every message says who, what and where."""

from __future__ import annotations

__all__ = [
    "ConfigError",
    "HermesHooksError",
    "HookResultError",
    "HookTimeoutError",
    "InstallError",
    "ManifestError",
    "PluginExitError",
    "PluginLlmTrustError",
    "PluginLoadError",
    "PluginNotFoundError",
    "PluginToolOverrideError",
    "PluginTrustError",
    "RegistrationError",
]


class HermesHooksError(Exception):
    """Base of every error raised by hermes-hooks on purpose.

    The CLI shows these as one line without a traceback.
    """


class ManifestError(HermesHooksError, ValueError):
    """A ``plugin.yaml`` cannot be read or does not fit the manifest schema.

    :param message: what was expected and what was found.
    :param path: the manifest file, when known.
    :param field: the offending field, when the problem is one field.
    """

    def __init__(self, message: str, *, path: object = None, field: str | None = None) -> None:
        self.path = path
        self.field = field
        self.reason = message
        where = f"{path}" if path is not None else "plugin manifest"
        if field is not None:
            where += f": field {field!r}"
        super().__init__(f"{where}: {message}")


class ConfigError(HermesHooksError):
    """``config.yaml`` cannot be read, or a value in it has the wrong type."""


class PluginLoadError(HermesHooksError):
    """A plugin could not be imported or registered; the message names the plugin key."""

    def __init__(self, key: str, message: str) -> None:
        self.key = key
        self.reason = message
        super().__init__(f"plugin {key!r}: {message}")


class PluginNotFoundError(HermesHooksError, LookupError):
    """A plugin name matches no discovered plugin (or several); the message names the closest.

    :param name: the name that was looked up.
    :param candidates: the closest known names, best first.
    """

    def __init__(self, message: str, *, name: str, candidates: tuple[str, ...] = ()) -> None:
        self.name = name
        self.candidates = candidates
        super().__init__(message)


class InstallError(HermesHooksError):
    """A plugin could not be installed or removed; nothing was changed."""


class RegistrationError(HermesHooksError, ValueError):
    """A registration (tool, command, skill, ...) was refused: a taken or invalid name."""


class PluginToolOverrideError(HermesHooksError, PermissionError):
    """A plugin tried to replace a host tool without the operator's grant.

    The grant is ``plugins.entries.<id>.allow_tool_override: true`` in ``config.yaml``,
    together with ``override=True`` on the registration.
    """


class PluginTrustError(HermesHooksError):
    """A project plugin's folder cannot be trusted as it is.

    A symlink in it leads outside, it holds a FIFO or device, it is too large to hash, or it
    cannot be read; the message names the path.
    """


class HookResultError(HermesHooksError, TypeError):
    """A hook implementation returned a value that does not fit its hook's contract.

    Raised only in strict mode; otherwise the value is logged and treated as ``None``.
    """


class HookTimeoutError(HermesHooksError, TimeoutError):
    """A hook implementation did not finish within ``plugins.hook_callback_timeout``.

    Also raised for a call skipped because the implementation timed out a moment ago or still
    has workers running. Raised only in strict mode; otherwise the hook's policy applies (the
    implementation is skipped, or ``pre_tool_call`` blocks).
    """


class PluginExitError(HermesHooksError, RuntimeError):
    """A plugin's tool or command handler raised ``SystemExit`` (or another non-``Exception``).

    Raised in its place, from it, so that the host reports a failed call and keeps running;
    only ``KeyboardInterrupt`` and task cancellation go through as they are.
    """


class PluginLlmTrustError(HermesHooksError, PermissionError):
    """A plugin asked ``ctx.llm`` for a provider or model the operator has not allowed it.

    The grants are ``plugins.entries.<id>.llm.allow_provider_override`` and
    ``allow_model_override`` in ``config.yaml``, optionally limited by ``allowed_providers``
    and ``allowed_models``.
    """
