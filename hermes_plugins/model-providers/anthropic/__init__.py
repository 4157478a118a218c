"""Anthropic: the Claude models through the Messages API (``anthropic_messages``).

The key goes in ``x-api-key``; ``ANTHROPIC_BASE_URL`` points at a proxy or a gateway.
"""

from hermes_hooks import PluginContext, ProviderProfile

PROFILE = ProviderProfile(
    name="anthropic",
    api_mode="anthropic_messages",
    aliases=("claude",),
    display_name="Anthropic",
    description="Anthropic — the Claude models",
    signup_url="https://console.anthropic.com/settings/keys",
    env_vars=("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"),
    base_url="https://api.anthropic.com",
    fallback_models=("claude-sonnet-4-5", "claude-haiku-4-5", "claude-opus-4-1"),
    default_aux_model="claude-haiku-4-5",
)


def register(ctx: PluginContext) -> None:
    ctx.register_model_provider(PROFILE)
