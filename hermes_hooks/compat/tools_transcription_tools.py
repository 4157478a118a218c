"""Hermes' ``tools.transcription_tools``: speech to text with the configured provider.

:func:`transcribe_audio` uses the transcription provider ``stt.provider`` selects (a
``register_transcription_provider`` plugin's, see ``agent.transcription_provider``), with the
``pre_transcription`` hook, and returns Hermes' envelope: ``success``, ``transcript``, and
``error`` or ``provider``. Hermes' own built-in engines (local Whisper, Groq, OpenAI...) are
not shipped here: without a provider plugin the envelope says so.
"""

from __future__ import annotations

from typing import Any

from hermes_hooks.compat.current import require_manager

__all__ = ["transcribe_audio"]


def transcribe_audio(file_path: str, model: str | None = None) -> dict[str, Any]:
    """Transcribe the audio file ``file_path``; Hermes' result envelope (never raises)."""
    from hermes_hooks.backends.transcription.registry import transcribe

    manager = require_manager("tools.transcription_tools.transcribe_audio")
    return transcribe(manager, file_path, source="tool", model=model)
