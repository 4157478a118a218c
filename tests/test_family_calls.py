"""Every family calls its provider the same way: asked first whether it is available, bounded
by ``<family>.timeout``, and a provider that raises, answers the wrong type or hangs gives a
tool error naming it, never its raw exception.

One Hermes-shaped plugin per family (its Hermes import, its ``register``) misbehaves as
``MISBEHAVE`` says; the host's tool reaches it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import pytest
from plugin_builders import isolated_home, load, user_plugin, write_config

COMMON = """
import os
import threading

CALLS = []
_STUCK = threading.Event()


def misbehave(answer):
    CALLS.append(os.environ["MISBEHAVE"])
    mode = os.environ["MISBEHAVE"]
    if mode == "raise":
        raise KeyError("SECRET_INTERNAL_KEY")
    if mode == "wrong":
        return ["not", "a", "dict"]
    if mode == "hang":
        _STUCK.wait(10)
    return answer


def available():
    return os.environ["MISBEHAVE"] != "unavailable"
"""


@attrs.frozen
class FamilyCase:
    section: str
    key: str
    tool: str
    args: dict[str, Any]
    code: str


CASES = [
    FamilyCase(
        "image_gen",
        "provider",
        "image_generate",
        {"prompt": "a corgi"},
        """
from agent.image_gen_provider import ImageGenProvider


class Bad(ImageGenProvider):
    name = "bad"

    def is_available(self):
        return available()

    def unavailable_reason(self):
        return "the bad service is down for maintenance"

    def generate(self, prompt, aspect_ratio="landscape", **kwargs):
        return misbehave({"success": True, "image": "/nowhere.png", "model": "m",
                          "prompt": prompt, "aspect_ratio": aspect_ratio, "provider": "bad"})


def register(ctx):
    ctx.register_image_gen_provider(Bad())
""",
    ),
    FamilyCase(
        "video_gen",
        "provider",
        "video_generate",
        {"prompt": "a corgi"},
        """
from agent.video_gen_provider import VideoGenProvider, success_response


class Bad(VideoGenProvider):
    name = "bad"

    def is_available(self):
        return available()

    def unavailable_reason(self):
        return "the bad service is down for maintenance"

    def generate(self, prompt, **kwargs):
        return misbehave(success_response(video="/nowhere.gif", model="m", prompt=prompt,
                                          provider="bad"))


def register(ctx):
    ctx.register_video_gen_provider(Bad())
""",
    ),
    FamilyCase(
        "web",
        "backend",
        "web_search",
        {"query": "corgi"},
        """
from agent.web_search_provider import WebSearchProvider


class Bad(WebSearchProvider):
    @property
    def name(self):
        return "bad"

    def is_available(self):
        return available()

    def unavailable_reason(self):
        return "the bad service is down for maintenance"

    def search(self, query, limit=5):
        return misbehave({"success": True, "data": {"web": []}})


def register(ctx):
    ctx.register_web_search_provider(Bad())
""",
    ),
    FamilyCase(
        "browser",
        "provider",
        "browser_navigate",
        {"url": "https://93.184.215.14/"},
        """
from agent.browser_provider import BrowserProvider


class Bad(BrowserProvider):
    @property
    def name(self):
        return "bad"

    def is_available(self):
        return available()

    def unavailable_reason(self):
        return "the bad service is down for maintenance"

    def create_session(self, task_id):
        return misbehave({"session_name": "s", "bb_session_id": "b", "cdp_url": ""})

    def close_session(self, session_id):
        return True

    def emergency_cleanup(self, session_id):
        pass


def register(ctx):
    ctx.register_browser_provider(Bad())
""",
    ),
]


@pytest.fixture(params=CASES, ids=[c.section for c in CASES])
def case(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[FamilyCase, Path]:
    family: FamilyCase = request.param
    home = isolated_home(tmp_path, monkeypatch)
    user_plugin(home, "bad-backend", COMMON + family.code, manifest={"kind": "backend"})
    sections: dict[str, Any] = {family.section: {family.key: "bad", "timeout": 0.5}}
    write_config(home, ["bad-backend"], **sections)
    return family, home


def run(case: tuple[FamilyCase, Path], mode: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    family, home = case
    monkeypatch.setenv("MISBEHAVE", mode)
    pm = load(home, strict=True)
    answer = json.loads(pm.tools.dispatch(family.tool, family.args))
    assert answer["success"] is False, answer
    assert answer["provider"] == "bad"
    assert "'bad'" in answer["error"]
    assert "KeyError" not in answer.get("error_type", "")
    return answer, pm


def calls(pm: Any) -> list[str]:
    import sys

    module = next(m for k, m in sys.modules.items() if k.endswith("bad_backend"))
    return list(module.CALLS)


def test_an_unavailable_provider_is_not_called_and_says_why(
    case: tuple[FamilyCase, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    answer, pm = run(case, "unavailable", monkeypatch)
    assert answer["error_type"] == "provider_unavailable"
    assert "unavailable: the bad service is down for maintenance" in answer["error"]
    assert calls(pm) == []


def test_a_provider_that_raises_gives_an_error_naming_it(
    case: tuple[FamilyCase, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    answer, pm = run(case, "raise", monkeypatch)
    assert answer["error_type"] == "provider_exception"
    assert "KeyError" in answer["error"]
    info = pm.get_plugin_info("bad-backend")
    assert info is not None
    assert info.status == "enabled"
    assert info.hook_errors == 1  # counted on its plugin: hermes plugins list shows it


def test_a_provider_that_answers_the_wrong_type_gives_a_contract_error(
    case: tuple[FamilyCase, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    answer, _ = run(case, "wrong", monkeypatch)
    assert answer["error_type"] == "provider_contract"
    assert "list" in answer["error"]


def test_a_provider_that_hangs_is_bounded_by_the_family_timeout(
    case: tuple[FamilyCase, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    family, _ = case
    answer, _ = run(case, "hang", monkeypatch)
    assert answer["error_type"] == "provider_timeout"
    assert f"{family.section}.timeout" in answer["error"]


# --- hermes tools <family>: a plugin that has not loaded is listed and can be chosen -------------

CLI_NAMES = {"image_gen": "image-gen", "video_gen": "video-gen", "web": "web", "browser": "browser"}


def hermes(home: Path, *args: str, env: dict[str, str] | None = None) -> Any:
    import os
    import subprocess
    import sys

    return subprocess.run(
        [sys.executable, "-m", "hermes_hooks", *args],
        capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, "HERMES_HOME": str(home), **(env or {})},
    )  # fmt: skip


@pytest.mark.parametrize("family", CASES, ids=[c.section for c in CASES])
def test_a_plugin_missing_its_env_loads_and_its_provider_is_listed(
    family: FamilyCase, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As in Hermes, requires_env is no refusal: the provider says itself what it lacks.
    home = isolated_home(tmp_path, monkeypatch)
    monkeypatch.setenv("MISBEHAVE", "no")
    monkeypatch.delenv("BAD_KEY", raising=False)
    # outside any category folder, no provides_* field: its code says which family it serves
    user_plugin(
        home, "bad-backend", COMMON + family.code,
        manifest={"kind": "backend", "requires_env": ["BAD_KEY"]},
    )  # fmt: skip
    write_config(home, ["bad-backend"])
    cli = CLI_NAMES[family.section]
    listed = hermes(home, "tools", cli)
    assert listed.returncode == 0, listed.stderr
    assert "(available; plugin bad-backend)" in listed.stdout


def _fail(error: str, error_type: str, provider: str, model: str) -> dict[str, Any]:
    return {"success": False, "error": error, "error_type": error_type, "provider": provider}


@pytest.mark.parametrize(("field", "a_what"), [("image", "an image"), ("video", "a video")])
def test_a_media_providers_answer_is_settled_the_same_in_both_families(
    field: str, a_what: str
) -> None:
    from hermes_hooks.backends.calls import settle_media_result

    def settle(result: object) -> dict[str, Any]:
        return settle_media_result(
            result, field=field, a_what=a_what, name="pics", model="m1", fail=_fail
        )

    good = {"success": True, field: "/tmp/x", "provider": "pics"}
    assert settle(good) is good
    wrong = settle(["not", "a", "dict"])
    assert wrong["error_type"] == "provider_contract"
    assert wrong["error"].startswith(f"{field} provider 'pics' returned list")
    empty = settle({"success": True, field: ""})
    assert empty["error_type"] == "provider_contract"
    assert f"reported success without {a_what}" in empty["error"]
    silent = settle({"success": False})
    assert silent == {
        "success": False,
        field: None,
        "error": f"{field} provider 'pics' reported a failure without a message",
        "error_type": "provider_error",
        "provider": "pics",
    }
    own = settle({"success": False, "error": "quota", "error_type": "rate_limited"})
    assert (own["error"], own["error_type"], own["provider"]) == ("quota", "rate_limited", "pics")
