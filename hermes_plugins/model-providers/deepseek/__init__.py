"""DeepSeek: the native DeepSeek API (chat completions)."""

from hermes_hooks import PluginContext, ProviderProfile

PROFILE = ProviderProfile(
    name="deepseek",
    aliases=("deepseek-chat",),
    display_name="DeepSeek",
    description="DeepSeek — native DeepSeek API",
    signup_url="https://platform.deepseek.com/",
    env_vars=("DEEPSEEK_API_KEY",),
    base_url="https://api.deepseek.com/v1",
    fallback_models=("deepseek-chat", "deepseek-reasoner"),
)


def register(ctx: PluginContext) -> None:
    ctx.register_model_provider(PROFILE)
