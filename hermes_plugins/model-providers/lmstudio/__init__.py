"""LM Studio on this machine: its OpenAI-compatible server (chat completions, no key).

No model is suggested: name the one loaded (``hermes models use lmstudio --model
qwen2.5-7b-instruct``). ``LM_API_KEY`` and ``LM_BASE_URL`` are Hermes' variables for it.
"""

from hermes_hooks import PluginContext, ProviderProfile

PROFILE = ProviderProfile(
    name="lmstudio",
    aliases=("lm-studio",),
    display_name="LM Studio",
    description="LM Studio — local models on this machine",
    signup_url="https://lmstudio.ai/",
    env_vars=("LM_API_KEY", "LM_BASE_URL"),
    base_url="http://127.0.0.1:1234/v1",
)


def register(ctx: PluginContext) -> None:
    ctx.register_model_provider(PROFILE)
