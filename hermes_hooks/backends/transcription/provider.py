"""The transcription provider contract (Hermes' ``agent.transcription_provider``).

A provider turns an audio file into text. It has a :attr:`~TranscriptionProvider.name` (what
``stt.provider`` names) and :meth:`~TranscriptionProvider.transcribe`, which returns Hermes'
envelope ``{"success", "transcript", "provider", "error"?}`` and never raises.
"""

from __future__ import annotations

import abc
from typing import Any, Final

__all__ = ["BUILTIN_STT_PROVIDERS", "TranscriptionProvider", "transcription_error"]

BUILTIN_STT_PROVIDERS: Final = frozenset(
    {
        "local",
        "local_command",
        "groq",
        "openai",
        "mistral",
        "xai",
        "elevenlabs",
        "gladia",
        "deepinfra",
    }
)
"""Hermes' built-in speech-to-text names: a plugin provider may not take one."""


class TranscriptionProvider(abc.ABC):
    """A speech-to-text backend: subclasses implement :attr:`name` and :meth:`transcribe`."""

    @property
    @abc.abstractmethod
    def name(self) -> str:
        """The short, lowercase name ``stt.provider`` selects it by."""

    @property
    def display_name(self) -> str:
        """The label shown in listings (``name.title()`` by default)."""
        return self.name.title()

    def is_available(self) -> bool:
        """Whether it can serve calls now (a key set, an SDK importable); must not raise."""
        return True

    def list_models(self) -> list[dict[str, Any]]:
        """Its models, each ``{"id", "display"?, "languages"?, "max_audio_seconds"?}``."""
        return []

    def default_model(self) -> str | None:
        """The model used when none is asked for: the first listed, by default."""
        models = self.list_models()
        found = models[0].get("id") if models else None
        return found if isinstance(found, str) else None

    def get_setup_schema(self) -> dict[str, Any]:
        """What ``hermes tools`` shows to set it up: ``name``, ``badge``, ``tag``, ``env_vars``."""
        return {"name": self.display_name, "badge": "", "tag": "", "env_vars": []}

    @abc.abstractmethod
    def transcribe(
        self,
        file_path: str,
        *,
        model: str | None = None,
        language: str | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        """Transcribe the audio at ``file_path``; return the envelope, never raise.

        :param model: one of :meth:`list_models`, or ``None`` for :meth:`default_model`.
        :param language: a BCP-47 hint such as ``"en"``; ignore it when unsupported.
        :param extra: what later versions pass (``prompt``...); ignore what is unknown.
        """


def transcription_error(provider: str, error: str) -> dict[str, Any]:
    """Return the failure envelope."""
    return {"success": False, "transcript": "", "provider": provider, "error": error}
