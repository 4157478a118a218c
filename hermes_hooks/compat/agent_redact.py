"""Hermes' ``agent.redact``: secrets masked out of text before it is logged or shown.

Platform plugins pass error texts and logs through :func:`redact_sensitive_text`; the terminal
tool's output goes through :func:`redact_terminal_output`. What is masked, as Hermes masks it:

- tokens with a vendor's known prefix (``sk-``, ``ghp_``, ``xoxb-``, ``AKIA``, ``hf_``...):
  their first 6 and last 4 characters kept (``ghp_S1...Pn2T``), ``***`` under 18 characters;
  in file content read back to the agent (``file_read=True``) a sentinel that cannot be taken
  for a key (``«redacted:ghp_…»``);
- ``NAME=value`` where the name says it holds a secret (``API_KEY``, ``TOKEN``, ``SECRET``,
  ``PASSWORD``, ``CREDENTIAL``, ``AUTH``), and the same keys in JSON and YAML (skipped for
  source code, ``code_file=True``, where ``MAX_TOKENS=512`` is no secret);
- ``Authorization:`` header values, private-key blocks, database URLs' passwords, JWTs,
  Telegram bot tokens;
- with ``redact_url_credentials=True``, ``user:pass@`` in URLs and credential-named query
  parameters (off by default, so OAuth callbacks and pre-signed links keep working);
- and whatever the plugins registered with ``ctx.register_redaction_patterns``.

``security.redact_secrets: false`` (or ``HERMES_REDACT_SECRETS=false``, read at import, as
Hermes does) turns it off, except for ``force=True``.
"""

from __future__ import annotations

import logging
import os
import re
from typing import Any, Final

from hermes_hooks.plugins.newer_ctx import redact_everywhere

__all__ = [
    "RedactingFormatter",
    "mask_secret",
    "redact_cdp_url",
    "redact_sensitive_text",
    "redact_terminal_output",
]

_ENABLED: Final = os.getenv("HERMES_REDACT_SECRETS", "true").strip().lower() in {
    "1",
    "true",
    "yes",
    "on",
}

# Vendor tokens: the literal every one contains (a cheap check first), and its whole form.
_PREFIXES: Final = (
    ("sk-", r"sk-[A-Za-z0-9_-]{10,}"),
    ("ghp_", r"ghp_[A-Za-z0-9]{10,}"),
    ("github_pat_", r"github_pat_[A-Za-z0-9_]{10,}"),
    ("gh", r"gh[ousr]_[A-Za-z0-9]{10,}"),
    ("xapp-", r"xapp-\d+-[A-Za-z0-9-]{10,}"),
    ("xox", r"xox[baprs]-[A-Za-z0-9-]{10,}"),
    ("AIza", r"AIza[A-Za-z0-9_-]{30,}"),
    ("pplx-", r"pplx-[A-Za-z0-9]{10,}"),
    ("fal_", r"fal_[A-Za-z0-9_-]{10,}"),
    ("fc-", r"fc-[A-Za-z0-9]{10,}"),
    ("bb_live_", r"bb_live_[A-Za-z0-9_-]{10,}"),
    ("gAAAA", r"gAAAA[A-Za-z0-9_=-]{20,}"),
    ("AKIA", r"AKIA[A-Z0-9]{16}"),
    ("k_", r"[sr]k_(?:live|test)_[A-Za-z0-9]{10,}"),
    ("SG.", r"SG\.[A-Za-z0-9_-]{10,}"),
    ("hf_", r"hf_[A-Za-z0-9]{10,}"),
    ("r8_", r"r8_[A-Za-z0-9]{10,}"),
    ("npm_", r"npm_[A-Za-z0-9]{10,}"),
    ("pypi-", r"pypi-[A-Za-z0-9_-]{10,}"),
    ("_v1_", r"do[po]_v1_[A-Za-z0-9]{10,}"),
    ("am_", r"am_[A-Za-z0-9_-]{10,}"),
    ("sk_", r"sk_[A-Za-z0-9_]{10,}"),
    ("tvly-", r"tvly-[A-Za-z0-9]{10,}"),
    ("exa_", r"exa_[A-Za-z0-9]{10,}"),
    ("gsk_", r"gsk_[A-Za-z0-9]{10,}"),
    ("syt_", r"syt_[A-Za-z0-9]{10,}"),
    ("retaindb_", r"retaindb_[A-Za-z0-9]{10,}"),
    ("hsk-", r"hsk-[A-Za-z0-9]{10,}"),
    ("mem0_", r"mem0_[A-Za-z0-9]{10,}"),
    ("brv_", r"brv_[A-Za-z0-9]{10,}"),
    ("xai-", r"xai-[A-Za-z0-9]{30,}"),
    ("ntn_", r"ntn_[A-Za-z0-9]{10,}"),
    ("fw", r"fw[-_][A-Za-z0-9]{30,}"),
    ("fpk_", r"fpk_[A-Za-z0-9]{30,}"),
)
_PREFIX_RES: Final = tuple(
    (literal, re.compile(rf"(?<![A-Za-z0-9_-])(?:{form})(?![A-Za-z0-9_-])"))
    for literal, form in _PREFIXES
)
_PREFIX_RE: Final = re.compile(
    "|".join(f"(?<![A-Za-z0-9_-])(?:{form})(?![A-Za-z0-9_-])" for _, form in _PREFIXES)
)
"""Every vendor token form as one pattern (Hermes' name; plugins use it to find keys)."""
_LABEL_RE: Final = re.compile(r"[A-Za-z]+[_.-](?:v1_|pat_|live_|test_)?")
_NAMES: Final = r"(?:API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH)"
_ENV_RE: Final = re.compile(
    rf"(?P<key>\b[A-Z0-9_]*{_NAMES}[A-Z0-9_]*)(?P<eq>\s*=\s*)(?P<q>['\"]?)(?P<value>[^\s'\"]+)(?P=q)"
)
_JSON_RE: Final = re.compile(
    r"(?P<key>\"(?:api_?[Kk]ey|[A-Za-z_]*(?:token|secret|password)|bearer|auth_token)\")"
    r"(?P<sep>\s*:\s*)\"(?P<value>[^\"]+)\"",
    re.IGNORECASE,
)
_YAML_RE: Final = re.compile(
    r"^(?P<key>\s*[A-Za-z0-9_.-]*(?:api[ _.-]?key|token|secret|passwd|password|credential)"
    r"[A-Za-z0-9_.-]*)(?P<sep>\s*:\s+)(?P<value>['\"]?[^\s#'\"][^\n#]*?['\"]?)\s*$",
    re.IGNORECASE | re.MULTILINE,
)
_AUTH_RE: Final = re.compile(
    r"(?P<head>\bAuthorization\s*:\s*(?:Bearer|Basic|Token)?\s*)(?P<value>[^\s,;]+)", re.I
)
_PRIVATE_KEY_RE: Final = re.compile(
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----", re.S
)
_DB_RE: Final = re.compile(
    r"(?P<head>\b(?:postgres(?:ql)?|mysql|mariadb|mongodb(?:\+srv)?|redis|amqp)://[^:/\s@]+:)"
    r"(?P<value>[^@\s]+)(?P<at>@)",
    re.I,
)
_JWT_RE: Final = re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")
_TELEGRAM_RE: Final = re.compile(r"\b(?P<id>\d{8,10}):(?P<value>[A-Za-z0-9_-]{35})\b")
_USERINFO_RE: Final = re.compile(r"(?P<head>\b[a-z][a-z0-9+.-]*://[^:/\s@]+:)(?P<value>[^@\s/]+)@")
_QUERY_RE: Final = re.compile(
    r"(?P<head>[?&](?:access_token|refresh_token|id_token|token|api_key|apikey|key|secret|"
    r"password|passwd|signature|sig|code|client_secret|auth)=)(?P<value>[^&#\s]+)",
    re.I,
)
_ENV_DUMPS: Final = frozenset({"env", "printenv", "set", "export", "declare"})


def mask_secret(value: str, *, head: int = 6, tail: int = 4, floor: int = 18) -> str:
    """``value`` with only its first ``head`` and last ``tail`` characters kept; ``***`` when
    it is shorter than ``floor``."""
    if not value or len(value) < floor:
        return "***"
    return f"{value[:head]}...{value[-tail:]}"


def _prefix(match: re.Match[str], file_read: bool) -> str:
    token = match.group(0)
    if not file_read:
        return mask_secret(token)
    label = _LABEL_RE.match(token)
    return f"«redacted:{label.group(0) if label else token[:4]}…»"


def redact_sensitive_text(
    text: Any,
    *,
    force: bool = False,
    code_file: bool = False,
    file_read: bool = False,
    redact_url_credentials: bool = False,
) -> Any:
    """``text`` with every secret the module's docstring lists masked; ``None`` stays
    ``None``, another object is made a string."""
    if text is None:
        return None
    if not isinstance(text, str):
        text = str(text)
    if not text or not (force or _ENABLED):
        return text
    code_file = code_file or file_read
    for literal, pattern in _PREFIX_RES:
        if literal in text:
            text = pattern.sub(lambda m: _prefix(m, file_read), text)
    if not code_file:
        if "=" in text:
            text = _ENV_RE.sub(lambda m: f"{m['key']}{m['eq']}{m['q']}***{m['q']}", text)
        if '"' in text:
            text = _JSON_RE.sub(lambda m: f'{m["key"]}{m["sep"]}"***"', text)
        if ":" in text:
            text = _YAML_RE.sub(lambda m: f"{m['key']}{m['sep']}***", text)
    text = _AUTH_RE.sub(lambda m: f"{m['head']}***", text)
    if "PRIVATE KEY" in text:
        text = _PRIVATE_KEY_RE.sub("[REDACTED PRIVATE KEY]", text)
    if "://" in text:
        text = _DB_RE.sub(lambda m: f"{m['head']}***{m['at']}", text)
        if redact_url_credentials:
            text = _USERINFO_RE.sub(lambda m: f"{m['head']}***@", text)
    if redact_url_credentials and "=" in text:
        text = _QUERY_RE.sub(lambda m: f"{m['head']}***", text)
    if "eyJ" in text:
        text = _JWT_RE.sub(lambda m: mask_secret(m.group(0)), text)
    text = _TELEGRAM_RE.sub(lambda m: f"{m['id']}:***", text)
    return redact_everywhere(text)  # and the plugins' own patterns


def redact_terminal_output(output: str, command: str | None = None, *, force: bool = False) -> str:
    """Terminal output redacted: an environment dump (``env``, ``printenv``, ``export``...)
    gets the ``NAME=value`` pass, other output is treated as code (no false positives on
    ``MAX_TOKENS=512``)."""
    if not output:
        return output
    first = (command or "").strip().split(maxsplit=1)
    dump = bool(first) and os.path.basename(first[0]) in _ENV_DUMPS
    return str(redact_sensitive_text(output, force=force, code_file=not dump))


def redact_cdp_url(value: object) -> str:
    """A browser (CDP) endpoint URL fit for a log: its ``user:pass@`` and credential query
    parameters masked too, which :func:`redact_sensitive_text` leaves by default."""
    return str(redact_sensitive_text(str(value), force=True, redact_url_credentials=True))


class RedactingFormatter(logging.Formatter):
    """A logging formatter whose output went through :func:`redact_sensitive_text`."""

    def format(self, record: logging.LogRecord) -> str:
        return str(redact_sensitive_text(super().format(record)))
