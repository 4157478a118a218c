"""Hermes' ``tools.transcription_tools``, the part plugins call: ``transcribe_audio``.

It is the transcription family's dispatcher (``hermes_hooks.backends.transcription``): the
provider ``stt.provider`` selects transcribes the file, ``pre_transcription`` fires first, and
the answer is Hermes' envelope (``success``, ``transcript``, ``provider``, or ``error``).
"""

from __future__ import annotations

from typing import Any

from hermes_hooks.backends.transcription.registry import transcribe
from hermes_hooks.compat.current import require_manager

__all__ = ["transcribe_audio"]


def transcribe_audio(file_path: str, model: str | None = None) -> dict[str, Any]:
    """Transcribe ``file_path`` with the configured speech-to-text provider.

    :returns: ``{"success": True, "transcript": ..., "provider": ...}``, or ``success: False``
        with an ``error`` (no such file, no provider, a provider that failed).
    """
    pm = require_manager("tools.transcription_tools")
    return transcribe(pm, file_path, source="tool", model=model)
