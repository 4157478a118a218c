"""xAI: the Grok models (chat completions).

Hermes speaks the Responses API to xAI; its chat completions endpoint serves the same models.
"""

from hermes_hooks import PluginContext, ProviderProfile

PROFILE = ProviderProfile(
    name="xai",
    aliases=("grok", "x-ai"),
    display_name="xAI",
    description="xAI — the Grok models",
    signup_url="https://console.x.ai/",
    env_vars=("XAI_API_KEY",),
    base_url="https://api.x.ai/v1",
    fallback_models=("grok-4", "grok-3-mini"),
)


def register(ctx: PluginContext) -> None:
    ctx.register_model_provider(PROFILE)
