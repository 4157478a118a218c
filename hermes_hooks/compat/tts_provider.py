"""Hermes' ``agent.tts_provider``: the text-to-speech provider ABC and its helpers.

The same objects as :mod:`hermes_hooks.backends.tts.provider` (``TTSProvider`` is the
family's ABC, so a provider written for Hermes registers with ``ctx.register_tts_provider``
unchanged).
"""

from __future__ import annotations

from hermes_hooks.backends.tts.provider import (
    DEFAULT_OUTPUT_FORMAT,
    VALID_OUTPUT_FORMATS,
    TTSProvider,
    resolve_output_format,
)

__all__ = ["DEFAULT_OUTPUT_FORMAT", "VALID_OUTPUT_FORMATS", "TTSProvider", "resolve_output_format"]
