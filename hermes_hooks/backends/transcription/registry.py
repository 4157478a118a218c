"""The transcription family: ``stt.provider`` chooses who transcribes audio.

:func:`transcribe` is the dispatcher Hermes' ``transcribe_audio`` is: it resolves the provider,
fires ``pre_transcription`` (the plugins may change ``prompt``, ``language`` and ``model``; never
the file) and calls the provider within ``stt.timeout``, bounded and isolated like every family
call. Names of Hermes' built-in engines are refused at registration, as there.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from hermes_hooks.backends.calls import call_provider, read_timeout
from hermes_hooks.backends.family import Family, FamilyError, Selection
from hermes_hooks.backends.transcription.provider import (
    BUILTIN_STT_PROVIDERS,
    TranscriptionProvider,
    transcription_error,
)
from hermes_hooks.errors import HermesHooksError
from hermes_hooks.spec.hookspecs import TELEMETRY_SCHEMA_VERSION

if TYPE_CHECKING:
    from hermes_hooks.plugins.manager import PluginManager

__all__ = ["TRANSCRIPTION", "transcribe"]


TRANSCRIPTION: Final[Family[TranscriptionProvider]] = Family(
    name="transcription",
    title="transcription",
    provider_type=TranscriptionProvider,
    selections=(Selection("stt.provider"),),
    model_key="stt.model",
    ctx_method="register_transcription_provider",
    provider_kind="transcription provider",
    reserved_names=BUILTIN_STT_PROVIDERS,
    reserved_what="a built-in speech-to-text engine of Hermes",
    categories=("transcription",),
    timeout_key="stt.timeout",
    default_timeout=300.0,
)
"""The transcription family."""


def transcribe(
    pm: PluginManager,
    file_path: str | Path,
    *,
    source: str = "tool",
    model: str | None = None,
    language: str | None = None,
    prompt: str | None = None,
) -> dict[str, Any]:
    """Transcribe ``file_path`` with the provider ``stt.provider`` selects.

    :param source: what asks: ``"tool"``, ``"gateway"`` or ``"cli"`` (passed to the hook).
    :returns: the provider's envelope; a missing file, no provider, or a provider that raised
        or sent something else is an error envelope saying so.
    """
    from hermes_hooks.calling.facade import Hooks

    path = str(file_path)
    if not Path(path).is_file():
        return transcription_error("", f"no audio file at {path}")
    registry = TRANSCRIPTION.registry(pm)
    try:
        settings = registry.settings()
        provider = registry.select_provider(settings)
        section = getattr(settings, "section", {})
        timeout = read_timeout(TRANSCRIPTION, section, None)
    except HermesHooksError as exc:  # no provider, an unknown name, a bad timeout
        return transcription_error("", str(exc))
    name = provider.name
    changes = Hooks(pm).pre_transcription(
        telemetry_schema_version=TELEMETRY_SCHEMA_VERSION,
        file_path=path,
        provider=name,
        model=model,
        language=language,
        prompt=prompt,
        source=source,
    )
    model = changes.get("model", model)
    language = changes.get("language", language)
    prompt = changes.get("prompt", prompt)
    extra: dict[str, Any] = {"prompt": prompt} if prompt is not None else {}
    try:
        result = call_provider(
            TRANSCRIPTION,
            provider,
            "transcribe",
            path,
            timeout=timeout,
            registry=registry,
            model=model,
            language=language,
            **extra,
        )
    except FamilyError as exc:  # unavailable, timed out or raised: counted on its plugin
        return transcription_error(name, str(exc))
    if not isinstance(result, dict) or not isinstance(result.get("success"), bool):
        return transcription_error(name, f"provider {name!r} did not return a transcript envelope")
    return result
