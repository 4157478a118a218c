"""comfyui: a local ComfyUI server behind ``image_generate``.

The provider speaks ComfyUI's HTTP API: ``POST /prompt`` with a workflow in API format, then
``GET /history/<prompt_id>`` until the run is done, then ``GET /view`` for the first output
image, which is saved under ``$HERMES_HOME/cache/images``.

Configuration (``config.yaml``; every key is optional)::

    image_gen:
      provider: comfyui
      model: sd_xl_base_1.0.safetensors     # the checkpoint (ckpt_name) to load
      comfyui:
        url: http://127.0.0.1:8188
        workflow: ~/workflows/my-api.json   # API-format workflow with {{placeholders}}
        negative_prompt: "blurry, low quality"
        steps: 25
        cfg: 7
        sampler: euler
        scheduler: normal
        timeout: 300                        # seconds to wait for the run
        poll_interval: 1.0

A custom workflow (ComfyUI's "Export (API)") may use ``{{prompt}}``, ``{{negative_prompt}}``,
``{{width}}``, ``{{height}}``, ``{{seed}}``, ``{{checkpoint}}``, ``{{steps}}`` and ``{{cfg}}``
in any string value; a value that is only a placeholder takes the value's type (a number for
``{{width}}``). The provider cannot know that a server is running without asking it, so it is
*available* (picked when ``image_gen.provider`` is unset) only once ``image_gen.comfyui.url``
is set; choosing it with ``image_gen.provider: comfyui`` works with the default URL.
"""

from __future__ import annotations

import json
import logging
import secrets
import time
import uuid
from pathlib import Path
from typing import Any

from hermes_hooks import (
    DEFAULT_ASPECT_RATIO,
    ImageGenProvider,
    error_response,
    load_image_gen_section,
    resolve_aspect_ratio,
    save_image_bytes,
    success_response,
)

logger = logging.getLogger(__name__)

DEFAULT_URL = "http://127.0.0.1:8188"
DEFAULT_CHECKPOINT = "sd_xl_base_1.0.safetensors"
SIZES = {"landscape": (1216, 832), "square": (1024, 1024), "portrait": (832, 1216)}
DEFAULTS: dict[str, Any] = {
    "negative_prompt": "",
    "steps": 25,
    "cfg": 7.0,
    "sampler": "euler",
    "scheduler": "normal",
    "timeout": 300.0,
    "poll_interval": 1.0,
}


class ComfyUIError(Exception):
    """A failure with the ``error_type`` to report it under."""

    def __init__(self, message: str, error_type: str) -> None:
        super().__init__(message)
        self.error_type = error_type


def default_workflow() -> dict[str, Any]:
    """Return the built-in SD/SDXL text-to-image workflow, in API format, with placeholders."""
    return {
        "3": {
            "class_type": "KSampler",
            "inputs": {
                "seed": "{{seed}}",
                "steps": "{{steps}}",
                "cfg": "{{cfg}}",
                "sampler_name": "{{sampler}}",
                "scheduler": "{{scheduler}}",
                "denoise": 1,
                "model": ["4", 0],
                "positive": ["6", 0],
                "negative": ["7", 0],
                "latent_image": ["5", 0],
            },
        },
        "4": {"class_type": "CheckpointLoaderSimple", "inputs": {"ckpt_name": "{{checkpoint}}"}},
        "5": {
            "class_type": "EmptyLatentImage",
            "inputs": {"width": "{{width}}", "height": "{{height}}", "batch_size": 1},
        },
        "6": {"class_type": "CLIPTextEncode", "inputs": {"text": "{{prompt}}", "clip": ["4", 1]}},
        "7": {
            "class_type": "CLIPTextEncode",
            "inputs": {"text": "{{negative_prompt}}", "clip": ["4", 1]},
        },
        "8": {"class_type": "VAEDecode", "inputs": {"samples": ["3", 0], "vae": ["4", 2]}},
        "9": {
            "class_type": "SaveImage",
            "inputs": {"filename_prefix": "hermes", "images": ["8", 0]},
        },
    }


def fill_workflow(node: Any, values: dict[str, Any]) -> Any:
    """Return ``node`` with every ``{{name}}`` placeholder replaced from ``values``."""
    if isinstance(node, dict):
        return {key: fill_workflow(value, values) for key, value in node.items()}
    if isinstance(node, list):
        return [fill_workflow(value, values) for value in node]
    if isinstance(node, str) and "{{" in node:
        stripped = node.strip()
        if stripped.startswith("{{") and stripped.endswith("}}") and stripped.count("{{") == 1:
            name = stripped[2:-2].strip()
            if name in values:
                return values[name]
        for name, value in values.items():
            node = node.replace("{{" + name + "}}", str(value))
        return node
    return node


class ComfyUIImageGenProvider(ImageGenProvider):
    """Runs a workflow on a ComfyUI server.

    :param home: the Hermes home whose ``config.yaml`` holds ``image_gen.comfyui``.
    """

    def __init__(self, home: Path | None = None) -> None:
        self.home = home

    @property
    def name(self) -> str:
        return "comfyui"

    @property
    def display_name(self) -> str:
        return "ComfyUI (local server)"

    def _settings(self) -> dict[str, Any]:
        if self.home is None:
            from hermes_hooks.plugins.config import get_hermes_home

            return load_image_gen_section(get_hermes_home(), self.name)
        return load_image_gen_section(self.home, self.name)

    def is_available(self) -> bool:
        try:
            return bool(self._settings().get("url"))
        except Exception:
            return False

    def list_models(self) -> list[dict[str, Any]]:
        # Open catalog: any checkpoint file of the server is a model (image_gen.model).
        return []

    def get_setup_schema(self) -> dict[str, Any]:
        return {
            "name": self.display_name,
            "badge": "local",
            "tag": (
                "Your ComfyUI server (image_gen.comfyui.url, default http://127.0.0.1:8188); "
                f"image_gen.model is the checkpoint (default {DEFAULT_CHECKPOINT})"
            ),
            "env_vars": [],
        }

    def generate(
        self,
        prompt: str,
        aspect_ratio: str = DEFAULT_ASPECT_RATIO,
        *,
        image_url: str | None = None,
        reference_image_urls: list[str] | None = None,
        **kwargs: Any,
    ) -> dict[str, Any]:
        prompt = (prompt or "").strip()
        aspect = resolve_aspect_ratio(aspect_ratio)
        model = str(kwargs.get("model") or "")

        def fail(error: str, error_type: str) -> dict[str, Any]:
            return error_response(
                error=error,
                error_type=error_type,
                provider=self.name,
                model=model,
                prompt=prompt,
                aspect_ratio=aspect,
            )

        if not prompt:
            return fail("Prompt is required", "invalid_input")
        if image_url or reference_image_urls:
            return fail(
                "the comfyui provider runs text-to-image workflows only", "modality_unsupported"
            )
        try:
            settings = {**DEFAULTS, **self._settings()}
            model = model or str(settings.get("checkpoint") or DEFAULT_CHECKPOINT)
            width, height = SIZES[aspect]
            seed = kwargs.get("seed")
            values = {
                "prompt": prompt,
                "negative_prompt": str(settings["negative_prompt"]),
                "width": width,
                "height": height,
                "seed": seed if isinstance(seed, int) else secrets.randbelow(2**32),
                "checkpoint": model,
                "steps": int(settings["steps"]),
                "cfg": float(settings["cfg"]),
                "sampler": str(settings["sampler"]),
                "scheduler": str(settings["scheduler"]),
            }
            workflow_path = settings.get("workflow")
            if workflow_path:
                text = Path(str(workflow_path)).expanduser().read_text(encoding="utf-8")
                template = json.loads(text)
            else:
                template = default_workflow()
            workflow = fill_workflow(template, values)
            url = str(settings.get("url") or DEFAULT_URL).rstrip("/")
            path = self._run(
                url, workflow, float(settings["timeout"]), float(settings["poll_interval"])
            )
        except ComfyUIError as exc:
            return fail(str(exc), exc.error_type)
        except Exception as exc:
            logger.debug("comfyui run failed", exc_info=True)
            return fail(f"ComfyUI request failed: {type(exc).__name__}: {exc}", type(exc).__name__)
        return success_response(
            image=str(path),
            model=model,
            prompt=prompt,
            aspect_ratio=aspect,
            provider=self.name,
            extra={"width": width, "height": height, "seed": values["seed"], "server": url},
        )

    def _run(self, url: str, workflow: dict[str, Any], timeout: float, interval: float) -> Path:
        """Submit ``workflow``, wait for it and save its first output image."""
        import httpx

        deadline = time.monotonic() + timeout
        with httpx.Client(timeout=min(timeout, 60.0)) as client:
            try:
                response = client.post(
                    f"{url}/prompt", json={"prompt": workflow, "client_id": uuid.uuid4().hex}
                )
            except httpx.TransportError as exc:
                raise ComfyUIError(
                    f"cannot reach ComfyUI at {url} ({exc}); start the server or set "
                    f"image_gen.comfyui.url",
                    "connection_error",
                ) from exc
            if response.status_code >= 400:
                raise ComfyUIError(
                    f"ComfyUI refused the workflow (HTTP {response.status_code}): "
                    f"{_describe_refusal(response)}",
                    "api_error",
                )
            prompt_id = response.json().get("prompt_id")
            if not isinstance(prompt_id, str) or not prompt_id:
                raise ComfyUIError("ComfyUI accepted the workflow without a prompt_id", "api_error")
            while True:
                history = client.get(f"{url}/history/{prompt_id}")
                history.raise_for_status()
                entry = history.json().get(prompt_id)
                if isinstance(entry, dict):
                    image = _finished_image(entry, prompt_id)
                    if image is not None:
                        break
                if time.monotonic() >= deadline:
                    raise ComfyUIError(
                        f"ComfyUI run {prompt_id} did not finish within {timeout:g} s "
                        f"(image_gen.comfyui.timeout)",
                        "timeout",
                    )
                time.sleep(interval)
            view = client.get(f"{url}/view", params=image)
            view.raise_for_status()
        extension = image["filename"].rsplit(".", 1)[-1] if "." in image["filename"] else "png"
        return save_image_bytes(view.content, prefix=self.name, extension=extension)


def _describe_refusal(response: Any) -> str:
    try:
        body = response.json()
    except ValueError:
        return str(response.text[:500])
    error = body.get("error") if isinstance(body, dict) else None
    message = str(error.get("message")) if isinstance(error, dict) else str(error or body)
    node_errors = body.get("node_errors") if isinstance(body, dict) else None
    if node_errors:
        message += f"; node errors: {json.dumps(node_errors)[:500]}"
    return message


def _finished_image(entry: dict[str, Any], prompt_id: str) -> dict[str, str] | None:
    """Return ``/view`` parameters of the run's first image, ``None`` while it is running."""
    found = entry.get("status")
    status: dict[str, Any] = found if isinstance(found, dict) else {}
    if status.get("status_str") == "error":
        messages = [m for m in status.get("messages", []) if m and m[0] == "execution_error"]
        detail = messages[0][1].get("exception_message", "") if messages else ""
        raise ComfyUIError(f"ComfyUI run {prompt_id} failed: {detail or status}", "api_error")
    outputs = entry.get("outputs") or {}
    for node_output in outputs.values():
        for image in node_output.get("images", []) if isinstance(node_output, dict) else []:
            if isinstance(image, dict) and image.get("filename"):
                return {
                    "filename": str(image["filename"]),
                    "subfolder": str(image.get("subfolder", "")),
                    "type": str(image.get("type", "output")),
                }
    if status.get("completed"):
        raise ComfyUIError(f"ComfyUI run {prompt_id} finished without an image", "empty_response")
    return None


def register(ctx: Any) -> None:
    """Register the ComfyUI provider, reading its settings from the host's home."""
    ctx.register_image_gen_provider(ComfyUIImageGenProvider(home=ctx.hermes_home))
