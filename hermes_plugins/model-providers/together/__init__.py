"""Together AI: open models behind one API (chat completions)."""

from hermes_hooks import PluginContext, ProviderProfile

PROFILE = ProviderProfile(
    name="together",
    aliases=("together-ai", "togetherai"),
    display_name="Together AI",
    description="Together AI — open models behind one API",
    signup_url="https://api.together.ai/settings/api-keys",
    env_vars=("TOGETHER_API_KEY",),
    base_url="https://api.together.xyz/v1",
    fallback_models=(
        "meta-llama/Llama-3.3-70B-Instruct-Turbo",
        "deepseek-ai/DeepSeek-V3",
    ),
)


def register(ctx: PluginContext) -> None:
    ctx.register_model_provider(PROFILE)
