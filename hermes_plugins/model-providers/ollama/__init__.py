"""Ollama on this machine: its OpenAI-compatible ``/v1`` (chat completions, no key).

No model is suggested: name one you pulled (``hermes models use ollama --model llama3.2``). A
key is sent only when ``OLLAMA_API_KEY`` is set (a proxy in front of it); ``OLLAMA_BASE_URL``
or ``providers.ollama.base_url`` points elsewhere.
"""

from hermes_hooks import PluginContext, ProviderProfile

PROFILE = ProviderProfile(
    name="ollama",
    aliases=("ollama-local",),
    display_name="Ollama",
    description="Ollama — local models on this machine",
    signup_url="https://ollama.com/download",
    env_vars=("OLLAMA_API_KEY", "OLLAMA_BASE_URL"),
    base_url="http://127.0.0.1:11434/v1",
)


def register(ctx: PluginContext) -> None:
    ctx.register_model_provider(PROFILE)
