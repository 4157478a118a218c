"""Hermes' ``agent.transcription_provider``: the speech-to-text provider ABC.

The same objects as :mod:`hermes_hooks.backends.transcription.provider`
(``TranscriptionProvider`` is the family's ABC, so a provider written for Hermes registers with
``ctx.register_transcription_provider`` unchanged).
"""

from __future__ import annotations

from hermes_hooks.backends.transcription.provider import TranscriptionProvider

__all__ = ["TranscriptionProvider"]
