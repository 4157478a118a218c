"""OpenAI: the chat completions API.

Hermes routes its newest OpenAI models through the Responses API; this profile speaks chat
completions.
"""

from hermes_hooks import PluginContext, ProviderProfile

PROFILE = ProviderProfile(
    name="openai",
    aliases=("openai-api",),
    display_name="OpenAI",
    description="OpenAI — chat completions API",
    signup_url="https://platform.openai.com/api-keys",
    env_vars=("OPENAI_API_KEY", "OPENAI_BASE_URL"),
    base_url="https://api.openai.com/v1",
    fallback_models=("gpt-4.1", "gpt-4.1-mini", "gpt-4o-mini"),
)


def register(ctx: PluginContext) -> None:
    ctx.register_model_provider(PROFILE)
