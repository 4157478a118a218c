"""Fireworks AI: open models behind one API (chat completions)."""

from hermes_hooks import PluginContext, ProviderProfile

PROFILE = ProviderProfile(
    name="fireworks",
    aliases=("fireworks-ai",),
    display_name="Fireworks AI",
    description="Fireworks AI — open models behind one API",
    signup_url="https://fireworks.ai/account/api-keys",
    env_vars=("FIREWORKS_API_KEY",),
    base_url="https://api.fireworks.ai/inference/v1",
    fallback_models=(
        "accounts/fireworks/models/llama-v3p3-70b-instruct",
        "accounts/fireworks/models/deepseek-v3",
    ),
)


def register(ctx: PluginContext) -> None:
    ctx.register_model_provider(PROFILE)
