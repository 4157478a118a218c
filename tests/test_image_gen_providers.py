"""The bundled image providers (local, openai, comfyui) and a Hermes-style example provider.

The HTTP providers run against real servers on 127.0.0.1 started here, which record every
request they receive; nothing leaves the machine.
"""

from __future__ import annotations

import base64
import io
import json
import re
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from homes import detached_bundled_home as home  # noqa: F401  (the fixture)
from local_http import Request, Server, as_json, running
from PIL import Image, PngImagePlugin
from plugin_builders import load as load_home

from hermes_hooks import PluginManager

pytest_plugins = ["pytester"]


def png_bytes(colour: str = "red", size: tuple[int, int] = (4, 3)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, colour).save(buffer, format="PNG")
    return buffer.getvalue()


@pytest.fixture
def server() -> Iterator[Server]:
    with running() as srv:
        yield srv


@pytest.fixture(autouse=True)
def no_openai_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_IMAGE_MODEL"):
        monkeypatch.delenv(name, raising=False)


def configure(
    home: Path, image_gen: dict[str, Any] | None = None, enabled: tuple[str, ...] = ()
) -> None:
    data: dict[str, Any] = {"plugins": {"enabled": list(enabled)}}
    if image_gen is not None:
        data["image_gen"] = image_gen
    (home / "config.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")


def load(home: Path) -> PluginManager:
    return load_home(home, strict=True)


def generate(pm: PluginManager, **args: Any) -> dict[str, Any]:
    result = json.loads(pm.tools.dispatch("image_generate", args))
    assert isinstance(result, dict)
    return result


def cached(home: Path, result: dict[str, Any]) -> Path:
    path = Path(result["image"])
    assert path.parent == (home / "cache" / "images").resolve(), result
    assert path.is_file()
    return path


# --- bundled and loaded by default ----------------------------------------------------------------


def test_the_three_providers_are_bundled_backends_that_load_by_default(home: Path) -> None:
    configure(home)
    pm = load(home)
    for key in ("image_gen/local", "image_gen/openai", "image_gen/comfyui"):
        info = pm.get_plugin_info(key)
        assert info is not None
        assert (info.source, info.kind, info.status) == ("bundled", "backend", "enabled"), key
    assert pm.image_gen.names() == ["comfyui", "local", "openai"]
    assert pm.image_gen.owner_of("local") == "image_gen/local"
    assert pm.tools.is_available("image_generate")


# --- local ----------------------------------------------------------------------------------------


def test_local_is_the_default_on_a_fresh_home_and_says_it_is_a_placeholder(home: Path) -> None:
    pm = load(home)
    result = generate(pm, prompt="a corgi in a spacesuit")
    assert result["success"] is True, result
    assert result["provider"] == "local"
    assert "placeholder" in result["note"]
    assert "not a generative model" in result["note"]
    with Image.open(cached(home, result)) as image:
        assert (image.format, image.size) == ("PNG", (1536, 1024))
        assert isinstance(image, PngImagePlugin.PngImageFile)
        assert "placeholder" in image.text["Software"]
    info = pm.get_plugin_info("image_gen/local")
    assert info is not None
    assert "placeholder" in info.description


@pytest.mark.parametrize(
    ("aspect", "size"),
    [("landscape", (1536, 1024)), ("square", (1024, 1024)), ("portrait", (1024, 1536))],
)
def test_local_renders_the_exact_sizes_deterministically(
    home: Path, aspect: str, size: tuple[int, int]
) -> None:
    pm = load(home)
    first = generate(pm, prompt="a lighthouse at dusk", aspect_ratio=aspect)
    again = generate(pm, prompt="a lighthouse at dusk", aspect_ratio=aspect)
    other = generate(pm, prompt="a lighthouse at dawn", aspect_ratio=aspect)
    assert (first["width"], first["height"]) == size
    with Image.open(cached(home, first)) as image:
        assert image.size == size
    assert first["image"] != again["image"]
    assert cached(home, first).read_bytes() == cached(home, again).read_bytes()
    assert cached(home, first).read_bytes() != cached(home, other).read_bytes()


def test_local_cannot_edit(home: Path) -> None:
    pm = load(home)
    result = generate(pm, prompt="x", image_url="/tmp/a.png")
    assert result["error_type"] == "modality_unsupported"


# --- openai ---------------------------------------------------------------------------------------


@pytest.fixture
def openai_home(home: Path, server: Server, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-123")
    configure(home, {"provider": "openai", "openai": {"base_url": server.url + "/v1"}})
    return home


def test_openai_generates_and_saves_the_b64_answer(openai_home: Path, server: Server) -> None:
    configure(
        openai_home,
        {
            "provider": "openai",
            "model": "gpt-image-2-high",
            "openai": {"base_url": server.url + "/v1"},
        },
    )
    image = png_bytes("blue")
    server.routes[("POST", "/v1/images/generations")] = lambda r: as_json(
        {
            "created": 1,
            "data": [{"b64_json": base64.b64encode(image).decode(), "revised_prompt": "rp"}],
        }
    )
    result = generate(load(openai_home), prompt="a corgi", aspect_ratio="portrait")

    assert result["success"] is True, result
    assert cached(openai_home, result).read_bytes() == image
    assert Path(result["image"]).name.startswith("openai_gpt-image-2-high_")
    assert (result["model"], result["quality"], result["size"]) == (
        "gpt-image-2-high",
        "high",
        "1024x1536",
    )
    assert result["revised_prompt"] == "rp"
    (request,) = server.requests
    assert request.path == "/v1/images/generations"
    assert request.headers["authorization"] == "Bearer sk-test-123"
    assert request.json() == {
        "model": "gpt-image-2",
        "prompt": "a corgi",
        "size": "1024x1536",
        "quality": "high",
        "n": 1,
    }


def test_openai_edits_with_source_images_as_multipart(
    openai_home: Path, server: Server, tmp_path: Path
) -> None:
    source = tmp_path / "dog.png"
    source.write_bytes(png_bytes("green"))
    reference = "data:image/png;base64," + base64.b64encode(png_bytes("white")).decode()
    server.routes[("POST", "/v1/images/edits")] = lambda r: as_json(
        {"data": [{"b64_json": base64.b64encode(png_bytes("black")).decode()}]}
    )
    result = generate(
        load(openai_home),
        prompt="give it a hat",
        aspect_ratio="square",
        image_url=str(source),
        reference_image_urls=[reference],
    )

    assert (result["success"], result["modality"]) == (True, "image"), result
    (request,) = server.requests
    assert request.path == "/v1/images/edits"
    assert request.headers["content-type"].startswith("multipart/form-data")
    parts = request.form()
    fields = {name: data.decode() for name, filename, data in parts if filename is None}
    assert fields == {
        "model": "gpt-image-2",
        "prompt": "give it a hat",
        "size": "1024x1024",
        "quality": "medium",
        "n": "1",
    }
    files = [(name, filename, data) for name, filename, data in parts if filename is not None]
    assert files == [
        ("image[]", "dog.png", source.read_bytes()),
        ("image[]", "image.png", png_bytes("white")),
    ]


def test_openai_refuses_a_source_that_is_not_an_image(
    openai_home: Path, server: Server, tmp_path: Path
) -> None:
    secret = tmp_path / "id_rsa"
    secret.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n")
    result = generate(load(openai_home), prompt="x", image_url=str(secret))
    assert result["error_type"] == "invalid_input"
    assert "is not a PNG, JPEG, WebP or GIF image" in result["error"]
    assert server.requests == []


def test_openai_downloads_a_url_answer(openai_home: Path, server: Server) -> None:
    server.routes[("POST", "/v1/images/generations")] = lambda r: as_json(
        {"data": [{"url": server.url + "/files/out.png?sig=1"}]}
    )
    server.routes[("GET", "/files/out.png")] = lambda r: (
        200,
        {"Content-Type": "image/png"},
        png_bytes(),
    )
    result = generate(load(openai_home), prompt="x")
    assert cached(openai_home, result).read_bytes() == png_bytes()
    assert server.paths() == ["POST /v1/images/generations", "GET /files/out.png"]


def test_openai_reports_the_servers_error(openai_home: Path, server: Server) -> None:
    server.routes[("POST", "/v1/images/generations")] = lambda r: as_json(
        {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}, 401
    )
    result = generate(load(openai_home), prompt="x")
    assert result["error_type"] == "auth_error"
    assert result["error"] == "OpenAI API error (HTTP 401): Incorrect API key provided"
    assert result["provider"] == "openai"


def test_openai_without_a_key_is_not_picked_and_not_called_but_says_why(
    home: Path, server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    configure(home, {"openai": {"base_url": server.url + "/v1"}})
    pm = load(home)
    provider = pm.image_gen.get_provider("openai")
    assert provider is not None
    assert provider.is_available() is False
    assert generate(pm, prompt="x")["provider"] == "local"
    configure(home, {"provider": "openai", "openai": {"base_url": server.url + "/v1"}})
    result = generate(pm, prompt="x")
    assert (result["provider"], result["error_type"]) == ("openai", "provider_unavailable")
    assert "image provider 'openai' is unavailable: OPENAI_API_KEY is not set" in result["error"]
    assert server.requests == []


# --- comfyui --------------------------------------------------------------------------------------


def comfy_server(server: Server, *, polls_before_done: int = 1) -> None:
    state = {"polls": 0}

    @server.route("POST", "/prompt")
    def submit(request: Request) -> tuple[int, dict[str, str], bytes]:
        return as_json({"prompt_id": "p-1", "number": 0, "node_errors": {}})

    @server.route("GET", "/history/p-1")
    def history(request: Request) -> tuple[int, dict[str, str], bytes]:
        state["polls"] += 1
        if state["polls"] <= polls_before_done:
            return as_json({})
        image = {"filename": "hermes_00001_.png", "subfolder": "", "type": "output"}
        return as_json(
            {
                "p-1": {
                    "outputs": {"9": {"images": [image]}},
                    "status": {"status_str": "success", "completed": True, "messages": []},
                }
            }
        )

    @server.route("GET", "/view")
    def view(request: Request) -> tuple[int, dict[str, str], bytes]:
        return 200, {"Content-Type": "image/png"}, png_bytes("orange")


def test_comfyui_submits_polls_and_downloads(home: Path, server: Server) -> None:
    comfy_server(server, polls_before_done=2)
    configure(
        home,
        {
            "provider": "comfyui",
            "model": "dreamshaper_8.safetensors",
            "comfyui": {"url": server.url, "poll_interval": 0.01, "steps": 12},
        },
    )
    result = generate(load(home), prompt="a castle", aspect_ratio="portrait")

    assert result["success"] is True, result
    assert cached(home, result).read_bytes() == png_bytes("orange")
    assert result["model"] == "dreamshaper_8.safetensors"
    assert server.paths() == [
        "POST /prompt",
        "GET /history/p-1",
        "GET /history/p-1",
        "GET /history/p-1",
        "GET /view",
    ]
    workflow = server.requests[0].json()["prompt"]
    assert workflow["6"]["inputs"]["text"] == "a castle"
    assert workflow["4"]["inputs"]["ckpt_name"] == "dreamshaper_8.safetensors"
    assert (workflow["5"]["inputs"]["width"], workflow["5"]["inputs"]["height"]) == (832, 1216)
    assert workflow["3"]["inputs"]["steps"] == 12
    assert workflow["3"]["inputs"]["seed"] == result["seed"]
    assert server.requests[-1].query == {
        "filename": ["hermes_00001_.png"],
        "subfolder": [""],
        "type": ["output"],
    }


def test_comfyui_fills_a_custom_workflow(home: Path, server: Server, tmp_path: Path) -> None:
    comfy_server(server, polls_before_done=0)
    template = {
        "1": {"class_type": "MyLoader", "inputs": {"name": "{{checkpoint}}"}},
        "2": {"class_type": "MyPrompt", "inputs": {"text": "art of {{prompt}}", "w": "{{width}}"}},
    }
    path = tmp_path / "workflow.json"
    path.write_text(json.dumps(template))
    configure(home, {"provider": "comfyui", "comfyui": {"url": server.url, "workflow": str(path)}})
    assert generate(load(home), prompt="a fox", aspect_ratio="square")["success"] is True
    workflow = server.requests[0].json()["prompt"]
    assert workflow == {
        "1": {"class_type": "MyLoader", "inputs": {"name": "sd_xl_base_1.0.safetensors"}},
        "2": {"class_type": "MyPrompt", "inputs": {"text": "art of a fox", "w": 1024}},
    }


def test_comfyui_reports_a_refused_workflow(home: Path, server: Server) -> None:
    server.routes[("POST", "/prompt")] = lambda r: as_json(
        {
            "error": {
                "type": "prompt_outputs_failed_validation",
                "message": "Prompt outputs failed",
            },
            "node_errors": {"4": {"errors": [{"message": "Value not in list"}]}},
        },
        400,
    )
    configure(home, {"provider": "comfyui", "comfyui": {"url": server.url}})
    result = generate(load(home), prompt="x")
    assert result["error_type"] == "api_error"
    assert "refused the workflow (HTTP 400): Prompt outputs failed" in result["error"]
    assert "Value not in list" in result["error"]


def test_comfyui_reports_a_failed_run(home: Path, server: Server) -> None:
    server.routes[("POST", "/prompt")] = lambda r: as_json({"prompt_id": "p-1"})
    server.routes[("GET", "/history/p-1")] = lambda r: as_json(
        {
            "p-1": {
                "outputs": {},
                "status": {
                    "status_str": "error",
                    "completed": False,
                    "messages": [["execution_error", {"exception_message": "CUDA out of memory"}]],
                },
            }
        }
    )
    configure(home, {"provider": "comfyui", "comfyui": {"url": server.url}})
    result = generate(load(home), prompt="x")
    assert result["error_type"] == "api_error"
    assert "CUDA out of memory" in result["error"]


def test_comfyui_without_a_server_says_where_it_looked(home: Path) -> None:
    with socket.socket() as probe:  # a port that was free a moment ago, and nothing listens on
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}"
    configure(home, {"provider": "comfyui", "comfyui": {"url": url}})
    result = generate(load(home), prompt="x")
    assert result["error_type"] == "connection_error"
    assert f"cannot reach ComfyUI at {url}" in result["error"]


def test_comfyui_is_available_only_once_its_url_is_set(home: Path) -> None:
    configure(home)
    pm = load(home)
    comfy = pm.image_gen.get_provider("comfyui")
    assert comfy is not None
    assert comfy.is_available() is False
    configure(home, {"comfyui": {"url": "http://127.0.0.1:8188"}})
    assert comfy.is_available() is True


# --- the Hermes documentation's example provider, from docs/how-to/image-provider.md -------------

HOW_TO = Path(__file__).resolve().parents[1] / "docs" / "how-to" / "image-provider.md"
_BLOCK = re.compile(r"^```(\w+)\n# file: (\S+)\n(.*?)^```$", re.MULTILINE | re.DOTALL)

SDK = """
import json
import os
import urllib.request


class Client:
    def __init__(self, api_key):
        self.api_key = api_key

    def _post(self, path, payload):
        request = urllib.request.Request(
            os.environ["MY_BACKEND_URL"] + path,
            data=json.dumps(payload).encode(),
            headers={"Authorization": "Bearer " + self.api_key, "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read())

    def generate(self, prompt, model, aspect_ratio):
        return self._post("/generate", {"prompt": prompt, "model": model, "aspect": aspect_ratio})

    def edit(self, prompt, model, image_urls):
        return self._post("/edit", {"prompt": prompt, "model": model, "images": image_urls})
"""


def how_to_files() -> dict[str, str]:
    """Return the files of the how-to's ``# file: PATH`` blocks, by path."""
    text = HOW_TO.read_text(encoding="utf-8")
    return {path: body for _, path, body in _BLOCK.findall(text)}


@pytest.fixture
def example(
    home: Path, tmp_path: Path, server: Server, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """Install the how-to's plugin as a user plugin, with an SDK that talks to ``server``."""
    folder = home / "plugins" / "image_gen" / "my-backend"
    folder.mkdir(parents=True)
    for path, body in how_to_files().items():
        if path.startswith("my-backend/"):
            (folder / path.removeprefix("my-backend/")).write_text(body, encoding="utf-8")
    sdk = tmp_path / "sdk"
    sdk.mkdir()
    (sdk / "my_backend_sdk.py").write_text(SDK, encoding="utf-8")
    monkeypatch.syspath_prepend(str(sdk))
    monkeypatch.setenv("MY_BACKEND_URL", server.url)
    monkeypatch.setenv("MY_BACKEND_API_KEY", "mb-key")

    def answer(request: Request) -> tuple[int, dict[str, str], bytes]:
        if request.json()["model"] == "my-model-hq":
            return as_json({"image_url": server.url + "/img/hq.png"})
        return as_json({"image_b64": base64.b64encode(png_bytes("purple")).decode()})

    server.routes[("POST", "/generate")] = answer
    server.routes[("POST", "/edit")] = answer
    yield folder
    sys.modules.pop("my_backend_sdk", None)


def test_the_example_is_the_hermes_example_with_the_import_changed() -> None:
    code = how_to_files()["my-backend/__init__.py"]
    assert "from hermes_hooks import (" in code
    assert "agent." not in code
    assert "def register(ctx) -> None:" in code


def test_the_example_is_discovered_selected_and_called_end_to_end(
    home: Path, example: Path, server: Server
) -> None:
    configure(home, {"provider": "my-backend"}, enabled=("my-backend",))
    pm = load(home)
    info = pm.get_plugin_info("image_gen/my-backend")
    assert info is not None
    assert (info.source, info.status) == ("user", "enabled")

    result = generate(pm, prompt="a corgi in a spacesuit", aspect_ratio="portrait")
    assert result["success"] is True, result
    assert (result["provider"], result["model"], result["modality"]) == (
        "my-backend",
        "my-model-fast",
        "text",
    )
    assert Path(result["image"]).name.startswith("my-backend_")
    assert cached(home, result).read_bytes() == png_bytes("purple")
    (request,) = server.requests
    assert request.path == "/generate"
    assert request.headers["authorization"] == "Bearer mb-key"
    assert request.json() == {
        "prompt": "a corgi in a spacesuit",
        "model": "my-model-fast",
        "aspect": "portrait",
    }


def test_the_example_passes_urls_the_model_and_source_images(
    home: Path, example: Path, server: Server
) -> None:
    configure(
        home, {"provider": "my-backend", "model": "my-model-hq"}, enabled=("image_gen/my-backend",)
    )
    pm = load(home)
    result = generate(pm, prompt="a corgi")
    assert result["image"] == server.url + "/img/hq.png"

    result = generate(
        pm,
        prompt="add a helmet",
        image_url="https://example.org/dog.png",
        reference_image_urls=["https://example.org/helmet.png"],
    )
    assert result["modality"] == "image"
    assert server.requests[-1].path == "/edit"
    assert server.requests[-1].json()["images"] == [
        "https://example.org/dog.png",
        "https://example.org/helmet.png",
    ]
    too_many = [f"https://example.org/{i}.png" for i in range(5)]
    result = generate(pm, prompt="x", image_url="a.png", reference_image_urls=too_many)
    assert result["error_type"] == "too_many_images"


def test_the_example_without_its_key_is_not_replaced_by_another_backend(
    home: Path, example: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MY_BACKEND_API_KEY")
    configure(home, {"provider": "my-backend"}, enabled=("my-backend",))
    pm = PluginManager(home)
    pm.discover_and_load()
    info = pm.get_plugin_info("image_gen/my-backend")
    assert info is not None
    # A missing requires_env variable is a warning, as in Hermes: the plugin loads.
    assert info.status == "enabled"
    assert any("MY_BACKEND_API_KEY" in w for w in info.warnings)
    result = generate(pm, prompt="x")
    assert result["success"] is False
    assert result["error_type"] == "provider_unavailable"  # never another backend's image
    assert result["error"] == (
        "image provider 'my-backend' is unavailable: MY_BACKEND_API_KEY is not set"
    )


def test_the_how_to_test_passes(pytester: pytest.Pytester) -> None:
    """The how-to's test file, as an author has it next to the plugin, in its own pytest run."""
    files = how_to_files()
    plugin = pytester.path / "my-backend"
    plugin.mkdir()
    for path, body in files.items():
        if path.startswith("my-backend/"):
            (plugin / path.removeprefix("my-backend/")).write_text(body, encoding="utf-8")
    pytester.makepyfile(test_my_backend=files["test_my_backend.py"])
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider", timeout=120)
    result.assert_outcomes(passed=2)


# -- save_url_image: providers whose API answers with a short-lived URL ------------------------


def test_save_url_image_keeps_the_bytes_under_the_active_home(
    tmp_path: Path, server: Server
) -> None:
    from hermes_hooks import save_url_image
    from hermes_hooks.backends.image_gen import get_active_home, using_hermes_home

    server.routes[("GET", "/tmp/a.bin")] = lambda r: (200, {"Content-Type": "image/jpeg"}, b"JPG")
    server.routes[("GET", "/big.webp")] = lambda r: (200, {}, b"x" * 2048)
    server.routes[("GET", "/empty.png")] = lambda r: (200, {"Content-Type": "image/png"}, b"")
    server.routes[("GET", "/gone.png")] = lambda r: (404, {}, b"gone")
    server.routes[("GET", "/page.png")] = lambda r: (200, {"Content-Type": "text/html"}, b"<p>")
    assert get_active_home() is None
    with using_hermes_home(tmp_path / "home"):
        assert get_active_home() == tmp_path / "home"
        saved = save_url_image(f"{server.url}/tmp/a.bin", prefix="grok/../x")
        assert saved.parent == (tmp_path / "home" / "cache" / "images").resolve()
        assert saved.suffix == ".jpg"  # from the Content-Type, not the URL
        assert re.fullmatch(r"grok_\.\._x_\d{8}_\d{6}_[0-9a-f]{8}\.jpg", saved.name)
        assert saved.read_bytes() == b"JPG"
        webp = save_url_image(f"{server.url}/big.webp?sig=1", prefix="big")
        assert webp.suffix == ".webp"  # no Content-Type: from the URL's path, query ignored
        with pytest.raises(ValueError, match="larger than 1024 bytes"):
            save_url_image(f"{server.url}/big.webp", max_bytes=1024)
        with pytest.raises(ValueError, match="0 bytes"):
            save_url_image(f"{server.url}/empty.png")
        with pytest.raises(ValueError, match="Content-Type 'text/html', not an image"):
            save_url_image(f"{server.url}/page.png")
        with pytest.raises(httpx.HTTPStatusError):
            save_url_image(f"{server.url}/gone.png")
        with pytest.raises(ValueError, match="expected an http"):
            save_url_image("file:///etc/passwd")
    assert get_active_home() is None
    # Nothing half-written is left behind by the refusals.
    assert sorted(p.name for p in saved.parent.iterdir()) == sorted([saved.name, webp.name])
