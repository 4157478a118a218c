"""Hermes' WhatsApp names: the shared adapter behaviour (gating, aliases, mentions, Markdown),
the access-policy mixin, and the bridge session helpers."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from homes import compat_home as home  # noqa: F401  (the fixture)


def served(name: str) -> Any:
    """Import a Hermes module the compatibility layer serves (untyped, as plugins see it)."""
    return importlib.import_module(name)


def bridge_adapter(**attributes: Any) -> Any:
    """An adapter shaped like Hermes' bridge adapter: the mixin and the attributes it reads."""
    mixin = served("gateway.platforms.whatsapp_common").WhatsAppBehaviorMixin

    class Adapter(mixin):  # type: ignore[misc, valid-type]
        pass

    adapter = Adapter()
    defaults: dict[str, Any] = {
        "config": SimpleNamespace(extra={}),
        "name": "whatsapp",
        "_dm_policy": "allowlist",
        "_group_policy": "open",
        "_allow_from": {"15551234567"},
        "_group_allow_from": set(),
        "_mention_patterns": [],
        "_reply_prefix": None,
    }
    for key, value in (defaults | attributes).items():
        setattr(adapter, key, value)
    return adapter


def test_dm_allowlist_matches_a_lid_through_the_bridge_mapping(home: Path) -> None:
    session = home / "platforms" / "whatsapp" / "session"
    session.mkdir(parents=True)
    (session / "lid-mapping-999.json").write_text(json.dumps("15551234567@s.whatsapp.net"))
    adapter = bridge_adapter()
    assert adapter._should_process_message({"chatId": "999@lid", "senderId": "999@lid"})
    assert not adapter._should_process_message({"chatId": "111@lid", "senderId": "111@lid"})
    assert not adapter._should_process_message({"chatId": "status@broadcast", "senderId": "999"})


def test_policies_pairing_intake_and_open_needs_the_opt_in(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pairing = bridge_adapter(_dm_policy="pairing", _allow_from=set())
    assert pairing._is_dm_intake_allowed("123")  # the pairing handshake runs later
    assert not pairing._is_dm_allowed("123")
    assert not pairing._is_dm_intake_allowed("  ")
    opened = bridge_adapter(_dm_policy="open")
    assert not opened._is_dm_allowed("123")
    monkeypatch.setenv("WHATSAPP_ALLOW_ALL_USERS", "true")
    assert opened._is_dm_allowed("123")
    policy = served("gateway.platforms.access_policy_mixin").OwnAccessPolicyMixin
    with pytest.raises(TypeError, match="ALLOW_ALL_ENV_PREFIX"):
        type("NoPrefix", (policy,), {})


def test_groups_need_a_mention_when_required(home: Path) -> None:
    adapter = bridge_adapter(config=SimpleNamespace(extra={"require_mention": True}))
    chatter = {"chatId": "g1@g.us", "isGroup": True, "body": "lunch?", "botIds": ["777@lid"]}
    mention = chatter | {"body": "@777 what time is it", "mentionedIds": ["777:2@lid"]}
    assert not adapter._should_process_message(chatter)
    assert adapter._should_process_message(mention)
    assert adapter._should_process_message(chatter | {"body": "/help"})
    assert adapter._clean_bot_mention_text("@777 what time is it", mention) == "what time is it"
    assert adapter._reply_expected_for_message(chatter) is None  # a bare question
    assert adapter._reply_expected_for_message(chatter | {"body": "ok"}) is False
    closed = bridge_adapter(_group_policy="allowlist", _group_allow_from={"g2@g.us"})
    assert not closed._should_process_message(chatter | {"body": "/help"})


def test_environment_allowlist_is_read_live(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WHATSAPP_ALLOWED_USERS", "15550000001")
    adapter = bridge_adapter(_allow_from=set())
    source = adapter._select_dm_allowlist({}, ["WHATSAPP_ALLOWED_USERS"], served("os").getenv)
    adapter._allow_from = adapter._coerce_allow_list(source)
    assert adapter._is_dm_allowed("15550000001")
    monkeypatch.setenv("WHATSAPP_ALLOWED_USERS", "15550000002")  # a pairing approval, say
    assert adapter._is_dm_allowed("15550000002")
    assert not adapter._is_dm_allowed("15550000001")
    assert adapter._coerce_allow_list('["a", " b "]') == {"a", "b"}


def test_markdown_becomes_whatsapp_syntax_and_prefix_budget(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    adapter = bridge_adapter()
    text = "# **Title**\n**bold** *it* ~~gone~~ [site](https://x.y) `**code**`\u2060"
    assert (
        adapter.format_message(text) == "*Title*\n*bold* _it_ ~gone~ site (https://x.y) `**code**`"
    )
    assert adapter._outgoing_chunk_limit() == 4096 - len(adapter.DEFAULT_REPLY_PREFIX)
    monkeypatch.setenv("WHATSAPP_MODE", "bot")
    assert adapter._effective_reply_prefix() == ""


def test_bridge_session_helpers(home: Path, tmp_path: Path) -> None:
    common = served("gateway.platforms.whatsapp_common")
    assert common.resolve_whatsapp_bridge_dir() == home / "scripts" / "whatsapp-bridge"
    assert "bridge.js" in common.WHATSAPP_BRIDGE_RUNTIME_INPUTS
    creds = tmp_path / "creds.json"
    assert not common.whatsapp_session_is_paired(tmp_path)
    for payload, paired in (
        ({}, True),
        ({"registered": True}, True),
        ({"registered": False}, False),
        ({"pairingCode": "ABCD"}, False),
        ([], False),
    ):
        creds.write_text(json.dumps(payload))
        assert common.whatsapp_session_is_paired(tmp_path) is paired, payload
