"""Pairing codes as Hermes has them: an unknown user in a direct chat gets a code, the owner
approves it with ``hermes pairing approve``, the user is authorized; limits, lockout, revoke."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import pytest
from cli_support import home, invoke
from plugin_builders import user_plugin, write_config

from hermes_hooks.compat.gateway_config import GatewayConfig, Platform, PlatformConfig
from hermes_hooks.compat.gateway_pairing import ALPHABET, MAX_FAILED_ATTEMPTS, PairingStore
from hermes_hooks.compat.gateway_session import SessionSource
from hermes_hooks.host import create_manager
from hermes_hooks.host.gateway_runner import PAIRING_BUSY_TEXT, GatewayRunner

__all__ = ["home"]

CODE = re.compile(r"pairing code: `([A-Z0-9]{8})`")

CHAT_PLATFORM = """
from gateway.config import Platform
from gateway.platforms.base import BasePlatformAdapter, SendResult


class Adapter(BasePlatformAdapter):
    def __init__(self, config):
        super().__init__(config, Platform("pairchat"))

    async def connect(self):
        return True

    async def disconnect(self):
        pass

    async def send(self, chat_id, content, reply_to=None, metadata=None):
        return SendResult(success=True)

    async def get_chat_info(self, chat_id):
        return {"name": chat_id, "type": "dm"}


def register(ctx):
    ctx.register_platform(
        name="pairchat", label="Pair chat", adapter_factory=Adapter,
        check_fn=lambda: True, allowed_users_env="PAIRCHAT_ALLOWED_USERS",
    )
"""


def test_codes_are_hermes_codes_and_approval_authorizes(home: Path) -> None:
    store = PairingStore()
    code = store.generate_code("telegram", "42", "Ann")
    assert code is not None
    assert len(code) == 8
    assert set(code) <= set(ALPHABET)
    assert store.generate_code("telegram", "42") is None  # one request per 10 minutes
    pending = store.list_pending()
    assert [(row["platform"], row["user_id"]) for row in pending] == [("telegram", "42")]
    assert PairingStore.looks_like_request_id(pending[0]["request_id"])
    files = sorted(path.name for path in (home / "platforms" / "pairing").iterdir())
    assert files == ["_rate_limits.json", "telegram-pending.json"]
    pending_file = home / "platforms" / "pairing" / "telegram-pending.json"
    assert code not in pending_file.read_text()  # only a salted hash is kept
    assert stat.S_IMODE(pending_file.stat().st_mode) == 0o600
    assert not store.is_approved("telegram", "42")
    assert store.approve_code("telegram", code.lower()) == {"user_id": "42", "user_name": "Ann"}
    assert store.is_approved("telegram", "42")
    assert store.list_pending() == []
    assert store.approve_code("telegram", code) is None  # single use
    assert store.revoke("telegram", "42")
    assert not store.is_approved("telegram", "42")
    assert not store.revoke("telegram", "42")


def test_three_pending_per_platform_and_lockout_after_five_failures(home: Path) -> None:
    store = PairingStore()
    codes = [store.generate_code("sms", f"+1555000000{n}") for n in range(4)]
    assert all(codes[:3])
    assert codes[3] is None
    for _ in range(MAX_FAILED_ATTEMPTS):
        assert store.approve_code("sms", "AAAAAAAA") is None
    assert store._is_locked_out("sms")
    assert codes[0] is not None
    assert store.approve_code("sms", codes[0]) is None  # even a good code, while locked
    request_id = store.list_pending("sms")[0]["request_id"]
    assert store.approve_request("sms", request_id) is not None  # the admin path is not locked
    assert store.clear_pending() == 2


def test_approval_is_mirrored_into_a_configured_allowlist(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DISCORD_ALLOWED_USERS", "1001")
    store = PairingStore()
    code = store.generate_code("discord", "2002")
    assert code is not None
    store.approve_code("discord", code)
    assert os.environ["DISCORD_ALLOWED_USERS"] == "1001,2002"
    assert "DISCORD_ALLOWED_USERS=1001,2002" in (home / ".env").read_text()
    store.revoke("discord", "2002")
    assert os.environ["DISCORD_ALLOWED_USERS"] == "1001"


def test_the_cli_lists_approves_and_revokes(home: Path) -> None:
    store = PairingStore()
    code = store.generate_code("irc", "bob", "Bob")
    assert code is not None
    listed = invoke("pairing", "list")
    assert "Pending Pairing Requests (1):" in listed.stdout
    assert "bob" in listed.stdout
    assert code not in listed.stdout  # codes are never shown again
    wrong = invoke("pairing", "approve", "irc", "ZZZZZZZZ")
    assert wrong.exit_code == 1
    assert "not found or expired" in wrong.stderr
    done = invoke("pairing", "approve", "IRC", code)
    assert done.exit_code == 0, done.output
    assert "Approved! User Bob (bob) on irc can now use the bot~" in done.stdout
    assert "Approved Users (1):" in invoke("pairing", "list").stdout
    assert invoke("pairing", "revoke", "irc", "bob").exit_code == 0
    assert invoke("pairing", "revoke", "irc", "bob").exit_code == 1
    assert "No pairing data found" in invoke("pairing", "list").stdout


def test_the_runner_gives_an_unknown_user_a_code_and_authorizes_once_approved(
    home: Path,
) -> None:
    user_plugin(home, "pairchat", CHAT_PLATFORM, manifest={"kind": "platform"})
    write_config(home, ["pairchat"])
    pm = create_manager(home)
    with pm.activate():
        config = GatewayConfig(platforms={Platform("pairchat"): PlatformConfig(enabled=True)})
    runner = GatewayRunner(pm, config=config)
    dm = SessionSource(
        platform=Platform("pairchat"), chat_id="d1", chat_type="dm", user_id="U7", user_name="Uma"
    )
    group = SessionSource(
        platform=Platform("pairchat"), chat_id="g1", chat_type="group", user_id="U8"
    )
    with pm.activate():
        assert not runner.is_authorized("pairchat", dm)
        assert runner._unauthorized("pairchat", group) is None  # groups get no code
        answer = runner._unauthorized("pairchat", dm)
        assert answer is not None
        assert "`hermes pairing approve pairchat " in answer
        match = CODE.search(answer)
        assert match is not None
        assert runner._unauthorized("pairchat", dm) is None  # one answer per 10 minutes
        for n in range(2):
            other = SessionSource(
                platform=Platform("pairchat"), chat_id=f"o{n}", chat_type="dm", user_id=f"O{n}"
            )
            assert runner._unauthorized("pairchat", other) is not None
        crowd = SessionSource(
            platform=Platform("pairchat"), chat_id="o9", chat_type="dm", user_id="O9"
        )
        assert runner._unauthorized("pairchat", crowd) == PAIRING_BUSY_TEXT  # 3 pending
    assert invoke("pairing", "approve", "pairchat", match.group(1)).exit_code == 0
    with pm.activate():
        assert runner.is_authorized("pairchat", dm)
