"""OpenRouter: one API in front of hundreds of models (chat completions).

OpenRouter names models ``vendor/model``; ``X-Title`` attributes the requests to this app.
"""

from hermes_hooks import PluginContext, ProviderProfile

PROFILE = ProviderProfile(
    name="openrouter",
    aliases=("or",),
    display_name="OpenRouter",
    description="OpenRouter — unified API for hundreds of models",
    signup_url="https://openrouter.ai/keys",
    env_vars=("OPENROUTER_API_KEY", "OPENROUTER_BASE_URL"),
    base_url="https://openrouter.ai/api/v1",
    models_url="https://openrouter.ai/api/v1/models",
    fallback_models=(
        "anthropic/claude-sonnet-4.5",
        "openai/gpt-4.1",
        "deepseek/deepseek-chat",
        "google/gemini-2.5-flash",
    ),
    default_headers={"X-Title": "hermes-hooks"},
)


def register(ctx: PluginContext) -> None:
    ctx.register_model_provider(PROFILE)
