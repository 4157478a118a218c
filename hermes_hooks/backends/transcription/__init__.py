"""Transcription (speech to text): the provider contract, its family and the dispatcher.

A provider written for Hermes works unchanged (``agent.transcription_provider`` is served by
the compatibility layer) and registers with ``ctx.register_transcription_provider(provider)``;
``stt.provider`` in ``config.yaml`` chooses it. :func:`transcribe` fires ``pre_transcription``
before the provider runs.
"""

from __future__ import annotations

from hermes_hooks.backends.transcription.provider import (
    BUILTIN_STT_PROVIDERS,
    TranscriptionProvider,
    transcription_error,
)
from hermes_hooks.backends.transcription.registry import (
    TRANSCRIPTION,
    transcribe,
)

__all__ = [
    "BUILTIN_STT_PROVIDERS",
    "TRANSCRIPTION",
    "TranscriptionProvider",
    "transcribe",
    "transcription_error",
]
