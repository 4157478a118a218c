"""Groq: fast inference of open models (chat completions)."""

from hermes_hooks import PluginContext, ProviderProfile

PROFILE = ProviderProfile(
    name="groq",
    display_name="Groq",
    description="Groq — fast inference of open models",
    signup_url="https://console.groq.com/keys",
    env_vars=("GROQ_API_KEY",),
    base_url="https://api.groq.com/openai/v1",
    fallback_models=("llama-3.3-70b-versatile", "llama-3.1-8b-instant"),
)


def register(ctx: PluginContext) -> None:
    ctx.register_model_provider(PROFILE)
