"""Mistral AI: Mistral's own models (chat completions)."""

from hermes_hooks import PluginContext, ProviderProfile

PROFILE = ProviderProfile(
    name="mistral",
    aliases=("mistralai",),
    display_name="Mistral AI",
    description="Mistral AI — Mistral's models",
    signup_url="https://console.mistral.ai/api-keys",
    env_vars=("MISTRAL_API_KEY",),
    base_url="https://api.mistral.ai/v1",
    fallback_models=("mistral-large-latest", "mistral-small-latest", "codestral-latest"),
)


def register(ctx: PluginContext) -> None:
    ctx.register_model_provider(PROFILE)
