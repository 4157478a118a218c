"""The video generation family: the offline placeholder clip, a Hermes-shaped provider on
``OpenAICompatibleVideoGenProvider`` against a local ``/videos`` job server, and ``hermes -z``.
"""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from homes import bundled_home as home  # noqa: F401  (the fixture)
from local_http import Request, Server, as_json, running
from PIL import GifImagePlugin, Image
from plugin_builders import load, user_plugin, write_config

from hermes_hooks import PluginManager


@pytest.fixture(autouse=True)
def no_clips_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CLIPS_API_KEY", raising=False)


@pytest.fixture
def server() -> Iterator[Server]:
    with running() as srv:
        yield srv


def generate(pm: PluginManager, **args: Any) -> dict[str, Any]:
    result = json.loads(pm.tools.dispatch("video_generate", args))
    assert isinstance(result, dict)
    return result


def in_cache(home: Path, result: dict[str, Any]) -> Path:
    path = Path(result["video"])
    assert path.parent == (home / "cache" / "videos").resolve(), result
    return path


def gif_frames(data: bytes) -> int:
    with Image.open(io.BytesIO(data)) as clip:
        assert isinstance(clip, GifImagePlugin.GifImageFile)
        return int(clip.n_frames)


def test_offline_is_the_default_and_draws_an_animated_placeholder(home: Path) -> None:
    write_config(home)
    result = generate(load(home, strict=True), prompt="a corgi surfing")
    assert result["success"] is True, result
    assert result["provider"] == "offline"
    assert "placeholder" in json.dumps(result).lower()
    path = in_cache(home, result)
    assert path.suffix == ".gif"
    assert gif_frames(path.read_bytes()) > 1


def test_hermes_z_generates_a_video_offline(home: Path) -> None:
    write_config(home)
    done = subprocess.run(
        [sys.executable, "-m", "hermes_hooks", "-z", "Generate a video of a corgi surfing"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "placeholder" in done.stdout
    (clip,) = (home / "cache" / "videos").iterdir()
    assert str(clip) in done.stdout


HERMES_SHAPED = """
from agent.video_gen_provider import OpenAICompatibleVideoGenProvider


class ClipsVideoGenProvider(OpenAICompatibleVideoGenProvider):
    name = "clips"
    _env_key = "CLIPS_API_KEY"
    _default_base_url = "https://api.clips.invalid/v1"
    _poll_interval_s = 0.01

    def list_models(self):
        return [{"id": "clips-1"}]


def register(ctx):
    ctx.register_video_gen_provider(ClipsVideoGenProvider())
"""


def test_a_hermes_shaped_openai_compatible_provider_creates_polls_and_saves(
    home: Path, server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    clip = io.BytesIO()
    frames = [Image.new("RGB", (8, 8), c) for c in ("red", "blue")]
    frames[0].save(clip, format="GIF", save_all=True, append_images=frames[1:])
    polls: list[str] = []

    @server.route("POST", "/v1/videos")
    def create(request: Request) -> tuple[int, dict[str, str], bytes]:
        return as_json({"id": "job-1", "status": "queued"})

    @server.route("GET", "/v1/videos/job-1")
    def poll(request: Request) -> tuple[int, dict[str, str], bytes]:
        polls.append("poll")
        return as_json({"id": "job-1", "status": "completed" if len(polls) > 1 else "running"})

    server.routes[("GET", "/v1/videos/job-1/content")] = lambda r: (
        200, {"Content-Type": "image/gif"}, clip.getvalue(),
    )  # fmt: skip
    user_plugin(home, "clips", HERMES_SHAPED, manifest={"kind": "backend"})
    monkeypatch.setenv("CLIPS_API_KEY", "clips-secret")
    monkeypatch.setenv("CLIPS_BASE_URL", server.url + "/v1")
    write_config(home, ["clips"], video_gen={"provider": "clips"})
    result = generate(load(home, strict=True), prompt="a corgi surfing", duration=4)
    assert result["success"] is True, result
    assert (result["provider"], result["model"], result["duration"]) == ("clips", "clips-1", 4)
    assert in_cache(home, result).read_bytes() == clip.getvalue()
    create_request = server.requests[0]
    assert create_request.headers["authorization"] == "Bearer clips-secret"
    assert create_request.json()["model"] == "clips-1"
    assert create_request.json()["prompt"] == "a corgi surfing"
    assert create_request.json()["seconds"] == "4"
    assert server.paths()[-1] == "GET /v1/videos/job-1/content"


def test_a_failed_job_reports_the_servers_error_naming_nothing_secret(
    home: Path, server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.routes[("POST", "/v1/videos")] = lambda r: as_json(
        {"id": "job-2", "status": "failed", "error": {"message": "content policy"}}
    )
    user_plugin(home, "clips", HERMES_SHAPED, manifest={"kind": "backend"})
    monkeypatch.setenv("CLIPS_API_KEY", "clips-secret")
    monkeypatch.setenv("CLIPS_BASE_URL", server.url + "/v1")
    write_config(home, ["clips"], video_gen={"provider": "clips"})
    result = generate(load(home, strict=True), prompt="x")
    assert result["success"] is False
    assert result["error_type"] == "job_failed"
    assert "content policy" in result["error"]
    assert "clips-secret" not in json.dumps(result)


def test_without_its_key_the_chosen_provider_is_unavailable_and_not_called(
    home: Path, server: Server
) -> None:
    user_plugin(home, "clips", HERMES_SHAPED, manifest={"kind": "backend"})
    write_config(home, ["clips"], video_gen={"provider": "clips"})
    result = generate(load(home, strict=True), prompt="x")
    assert result["success"] is False
    assert result["error_type"] == "provider_unavailable"
    assert "CLIPS_API_KEY" in result["error"]
    assert server.requests == []


# --- the how-to's provider, docs/how-to/video-provider.md ----------------------------------------

HOW_TO = Path(__file__).resolve().parents[1] / "docs" / "how-to" / "video-provider.md"
_BLOCK = re.compile(r"^```(\w+)\n# file: (\S+)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def test_the_how_tos_provider_generates_through_a_job_server(
    home: Path, server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = home / "plugins" / "video_gen" / "clips"
    folder.mkdir(parents=True)
    for _, path, body in _BLOCK.findall(HOW_TO.read_text("utf-8")):
        (folder / path.removeprefix("clips/")).write_text(body, encoding="utf-8")
    server.routes[("POST", "/v1/videos")] = lambda r: as_json({"id": "j9", "status": "completed"})
    server.routes[("GET", "/v1/videos/j9/content")] = lambda r: (200, {}, b"\x00\x00\x00 ftypmp4")
    monkeypatch.setenv("CLIPS_API_KEY", "k")
    monkeypatch.setenv("CLIPS_BASE_URL", server.url + "/v1")
    write_config(home, ["video_gen/clips"], video_gen={"provider": "clips"})
    result = generate(load(home, strict=True), prompt="a corgi surfing", aspect_ratio="9:16")
    assert result["success"] is True, result
    assert (result["model"], result["aspect_ratio"]) == ("clips-1", "9:16")
    assert in_cache(home, result).read_bytes() == b"\x00\x00\x00 ftypmp4"
    assert server.requests[0].json()["aspect_ratio"] == "9:16"


def test_save_url_video_keeps_a_delivery_url_and_refuses_what_is_not_a_video(
    tmp_path: Path, server: Server
) -> None:
    from hermes_hooks import save_url_video

    home = tmp_path / "home"
    clip = b"\x00\x00\x00\x18ftypmp42" + b"\x01" * 4096
    server.routes[("GET", "/clip")] = lambda r: (200, {"Content-Type": "video/mp4"}, clip)
    server.routes[("GET", "/raw.webm")] = lambda r: (
        200, {"Content-Type": "application/octet-stream"}, b"webm bytes",
    )  # fmt: skip
    server.routes[("GET", "/expired")] = lambda r: (
        200, {"Content-Type": "text/html"}, b"<h1>link expired</h1>",
    )  # fmt: skip
    server.routes[("GET", "/empty")] = lambda r: (200, {"Content-Type": "video/mp4"}, b"")

    saved = save_url_video(f"{server.url}/clip", prefix="grok clip", home=home)
    assert saved.parent == (home / "cache" / "videos").resolve()
    assert re.fullmatch(r"grok_clip_\d{8}_\d{6}_[0-9a-f]{8}\.mp4", saved.name), saved.name
    assert saved.read_bytes() == clip
    # No Content-Type of a video: the URL's suffix decides.
    assert save_url_video(f"{server.url}/raw.webm", home=home).suffix == ".webm"

    before = sorted((home / "cache" / "videos").iterdir())
    with pytest.raises(ValueError, match=r"not a video; refusing to cache it"):
        save_url_video(f"{server.url}/expired", home=home)
    with pytest.raises(ValueError, match=r"larger than 1024 bytes"):
        save_url_video(f"{server.url}/clip", home=home, max_bytes=1024)
    with pytest.raises(ValueError, match=r"returned 0 bytes"):
        save_url_video(f"{server.url}/empty", home=home)
    with pytest.raises(ValueError, match=r"expected an http\(s\) video URL"):
        save_url_video("file:///etc/passwd", home=home)
    assert sorted((home / "cache" / "videos").iterdir()) == before  # nothing left behind
