"""Text to speech: the provider contract, its family (``tts.provider``) and the dispatcher.

A provider written for Hermes works unchanged (``agent.tts_provider`` is served by the
compatibility layer) and registers with ``ctx.register_tts_provider(provider)``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from hermes_hooks.backends.calls import call_provider, read_timeout
from hermes_hooks.backends.family import Family, FamilyError, Selection
from hermes_hooks.backends.tts.provider import (
    BUILTIN_TTS_PROVIDERS,
    DEFAULT_OUTPUT_FORMAT,
    VALID_OUTPUT_FORMATS,
    TTSProvider,
    resolve_output_format,
)
from hermes_hooks.errors import HermesHooksError

if TYPE_CHECKING:
    from hermes_hooks.plugins.manager import PluginManager

__all__ = [
    "BUILTIN_TTS_PROVIDERS",
    "DEFAULT_OUTPUT_FORMAT",
    "TTS",
    "VALID_OUTPUT_FORMATS",
    "TTSProvider",
    "resolve_output_format",
    "synthesize",
]


TTS: Final[Family[TTSProvider]] = Family(
    name="tts",
    title="text to speech",
    provider_type=TTSProvider,
    selections=(Selection("tts.provider"),),
    model_key="tts.model",
    ctx_method="register_tts_provider",
    provider_kind="TTS provider",
    reserved_names=BUILTIN_TTS_PROVIDERS,
    reserved_what="a built-in text-to-speech engine of Hermes",
    categories=("tts",),
    timeout_key="tts.timeout",
    default_timeout=120.0,
)
"""The text-to-speech family."""


def synthesize(
    pm: PluginManager,
    text: str,
    output_path: str | Path,
    *,
    voice: str | None = None,
    model: str | None = None,
    speed: float | None = None,
    format: str = DEFAULT_OUTPUT_FORMAT,
) -> dict[str, Any]:
    """Speak ``text`` into ``output_path`` with the provider ``tts.provider`` selects.

    :returns: ``{"success": True, "file_path", "provider"}``, or ``{"success": False,
        "error", "provider"}`` when there is no provider or it failed.
    """
    registry = TTS.registry(pm)
    try:
        settings = registry.settings()
        provider = registry.select_provider(settings)
        timeout = read_timeout(TTS, getattr(settings, "section", {}), None)
    except HermesHooksError as exc:
        return {"success": False, "error": str(exc), "provider": ""}
    target = Path(output_path)
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        written = call_provider(
            TTS,
            provider,
            "synthesize",
            text,
            str(target),
            timeout=timeout,
            registry=registry,
            voice=voice,
            model=model,
            speed=speed,
            format=resolve_output_format(format),
        )
    except FamilyError as exc:
        return {"success": False, "error": str(exc), "provider": provider.name}
    return {"success": True, "file_path": str(written), "provider": provider.name}
