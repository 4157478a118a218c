"""Hermes' ``providers.base``: :class:`ProviderProfile` and :data:`OMIT_TEMPERATURE`.

The very objects of :mod:`hermes_hooks.backends.models.profiles`, so a profile built against
this module registers through ``providers.register_provider`` or
``ctx.register_model_provider`` alike.
"""

from __future__ import annotations

from hermes_hooks.backends.models.profiles import OMIT_TEMPERATURE, ProviderProfile

__all__ = ["OMIT_TEMPERATURE", "ProviderProfile"]
