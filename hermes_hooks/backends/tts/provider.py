"""The text-to-speech provider contract (Hermes' ``agent.tts_provider``).

A provider has a :attr:`~TTSProvider.name` (what ``tts.provider`` names) and
:meth:`~TTSProvider.synthesize`, which writes the audio to ``output_path``, returns that path
and raises on failure.
"""

from __future__ import annotations

import abc
from collections.abc import Iterator
from typing import Any, Final

__all__ = [
    "BUILTIN_TTS_PROVIDERS",
    "DEFAULT_OUTPUT_FORMAT",
    "VALID_OUTPUT_FORMATS",
    "TTSProvider",
    "resolve_output_format",
]

DEFAULT_OUTPUT_FORMAT: Final = "mp3"
VALID_OUTPUT_FORMATS: Final = frozenset({"mp3", "wav", "ogg", "opus", "flac"})
BUILTIN_TTS_PROVIDERS: Final = frozenset(
    {"edge", "openai", "elevenlabs", "minimax", "gemini", "mistral", "xai", "fish", "piper",
     "kittentts", "neutts"}
)  # fmt: skip
"""Hermes' built-in text-to-speech names: a plugin provider may not take one."""


class TTSProvider(abc.ABC):
    """A text-to-speech backend: subclasses implement :attr:`name` and :meth:`synthesize`."""

    @property
    @abc.abstractmethod
    def name(self) -> str:
        """The short, lowercase name ``tts.provider`` selects it by."""

    @property
    def display_name(self) -> str:
        """The label shown in listings (``name.title()`` by default)."""
        return self.name.title()

    def is_available(self) -> bool:
        """Whether it can serve calls now; must not raise."""
        return True

    def list_voices(self) -> list[dict[str, Any]]:
        """Its voices, each ``{"id", "display"?, "language"?, "gender"?, "preview_url"?}``."""
        return []

    def list_models(self) -> list[dict[str, Any]]:
        """Its models, each ``{"id", "display"?, "languages"?, "max_text_length"?}``."""
        return []

    def get_setup_schema(self) -> dict[str, Any]:
        """What ``hermes tools`` shows to set it up: ``name``, ``badge``, ``tag``, ``env_vars``."""
        return {"name": self.display_name, "badge": "", "tag": "", "env_vars": []}

    def default_model(self) -> str | None:
        """The first model listed, or ``None``."""
        models = self.list_models()
        found = models[0].get("id") if models else None
        return found if isinstance(found, str) else None

    def default_voice(self) -> str | None:
        """The first voice listed, or ``None``."""
        voices = self.list_voices()
        found = voices[0].get("id") if voices else None
        return found if isinstance(found, str) else None

    @abc.abstractmethod
    def synthesize(
        self,
        text: str,
        output_path: str,
        *,
        voice: str | None = None,
        model: str | None = None,
        speed: float | None = None,
        format: str = DEFAULT_OUTPUT_FORMAT,
        **extra: Any,
    ) -> str:
        """Write the audio of ``text`` to ``output_path`` and return the path; raise on failure."""

    def stream(
        self,
        text: str,
        *,
        voice: str | None = None,
        model: str | None = None,
        format: str = "opus",
        **extra: Any,
    ) -> Iterator[bytes]:
        """Stream the audio; optional (the default says it is not supported)."""
        raise NotImplementedError(f"TTS provider {self.name!r} does not stream; use synthesize()")

    @property
    def voice_compatible(self) -> bool:
        """Whether its output can be sent as a voice message (False unless it says so)."""
        return False


def resolve_output_format(value: object) -> str:
    """Return ``value`` when it is a known format, else :data:`DEFAULT_OUTPUT_FORMAT`."""
    if isinstance(value, str) and value.strip().lower() in VALID_OUTPUT_FORMATS:
        return value.strip().lower()
    return DEFAULT_OUTPUT_FORMAT
