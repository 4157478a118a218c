"""Hermes' ``agent.file_safety``: the paths tools must not read or write.

Defense in depth, as Hermes says of its own: a model that respects a tool's refusal stops, but
nothing here stops a shell. Reads are refused for the home's credential stores (``auth.json``,
``.env``, ``mcp-tokens/``...), its skills hub cache and any project's ``.env`` files; writes
for SSH keys, cloud credentials, system files, the home's ``.env``, session state and tokens,
and everything outside ``$HERMES_WRITE_SAFE_ROOT`` when it is set. "The home" is the current
home and the default root (``~/.hermes``) both, as Hermes blocks the root under a profile.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final, Literal

from hermes_hooks.compat.current import current_home
from hermes_hooks.compat.hermes_constants import get_default_hermes_root

__all__ = [
    "build_write_denied_paths",
    "build_write_denied_prefixes",
    "get_read_block_error",
    "get_safe_write_roots",
    "get_write_denied_error",
    "is_write_denied",
    "raise_if_read_blocked",
]

_PROJECT_ENV_NAMES: Final = frozenset(
    {".env", ".env.local", ".env.development", ".env.production", ".env.test", ".env.staging",
     ".envrc"}
)  # fmt: skip
_CREDENTIAL_FILES: Final = (
    "auth.json",
    "auth.lock",
    ".anthropic_oauth.json",
    ".env",
    "webhook_subscriptions.json",
    os.path.join("auth", "google_oauth.json"),
    os.path.join("cache", "bws_cache.json"),
)
_NOT_A_BOUNDARY: Final = (
    "(Defense-in-depth — not a security boundary; the terminal tool can still bypass.)"
)


def _homes() -> list[Path]:
    found: list[Path] = []
    for base in (current_home(), get_default_hermes_root()):
        try:
            real = base.resolve()
        except OSError:
            continue
        if real not in found:
            found.append(real)
    return found


def _under(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def build_write_denied_paths(home: str) -> set[str]:
    """Return the exact files under user ``home`` (and the system) never to be written."""
    homes = [str(base) for base in _homes()]
    return {
        os.path.realpath(p)
        for p in [
            *(os.path.join(home, ".ssh", n) for n in ("authorized_keys", "id_rsa", "id_ed25519")),
            os.path.join(home, ".ssh", "config"),
            *(os.path.join(base, ".env") for base in homes),
            *(os.path.join(base, ".anthropic_oauth.json") for base in homes),
            *(os.path.join(home, n) for n in (".netrc", ".pgpass", ".npmrc", ".pypirc")),
            os.path.join(home, ".git-credentials"),
            "/etc/sudoers",
            "/etc/passwd",
            "/etc/shadow",
        ]
    }


def build_write_denied_prefixes(home: str) -> list[str]:
    """Return the folders under user ``home`` (and the system) never to be written into."""
    return [
        os.path.realpath(p) + os.sep
        for p in [
            *(os.path.join(home, n) for n in (".ssh", ".aws", ".gnupg", ".kube")),
            "/etc/sudoers.d",
            "/etc/systemd",
            *(os.path.join(home, n) for n in (".docker", ".azure")),
            os.path.join(home, ".config", "gh"),
            os.path.join(home, ".config", "gcloud"),
        ]
    ]


def get_safe_write_roots() -> set[str]:
    """Return the folders of ``$HERMES_WRITE_SAFE_ROOT`` (``os.pathsep``-separated), resolved."""
    roots: set[str] = set()
    for entry in os.environ.get("HERMES_WRITE_SAFE_ROOT", "").split(os.pathsep):
        if entry:
            try:
                roots.add(os.path.realpath(os.path.expanduser(entry)))
            except (OSError, ValueError):
                continue
    return roots


def _write_denial(path: str) -> Literal["credential", "state", "safe_root"] | None:
    home = os.path.realpath(os.path.expanduser("~"))
    resolved = os.path.realpath(os.path.expanduser(str(path)))
    if resolved in build_write_denied_paths(home):
        return "credential"
    if any(resolved.startswith(prefix) for prefix in build_write_denied_prefixes(home)):
        return "credential"
    target = Path(resolved)
    for base in _homes():
        if target == base / "state.db" or _under(target, base / "sessions"):
            return "state"
        if _under(target, base / "mcp-tokens") or _under(target, base / "pairing"):
            return "credential"
    roots = get_safe_write_roots()
    if roots and not any(resolved == r or resolved.startswith(r + os.sep) for r in roots):
        return "safe_root"
    return None


def is_write_denied(path: str) -> bool:
    """Return whether writing ``path`` is refused."""
    return _write_denial(path) is not None


def get_write_denied_error(path: str, *, verb: str = "Write") -> str | None:
    """Return the message for a refused write of ``path``, or ``None`` when it is allowed."""
    denial = _write_denial(path)
    if denial is None:
        return None
    if denial == "safe_root":
        roots = os.pathsep.join(sorted(get_safe_write_roots()))
        return (
            f"{verb} denied: '{path}' is outside HERMES_WRITE_SAFE_ROOT ({roots}). Unset the "
            f"variable or add this path's directory prefix."
        )
    return f"{verb} denied: '{path}' is a protected system/credential file."


def get_read_block_error(path: str) -> str | None:
    """Return the message for a refused read of ``path``, or ``None`` when it may be read.

    A relative ``path`` is resolved against the process's working directory: a caller with
    another working directory passes the absolute path.
    """
    resolved = Path(path).expanduser().resolve()
    homes = _homes()
    for base in homes:
        if _under(resolved, base / "skills" / ".hub"):
            return (
                f"Access denied: {path} is an internal Hermes cache file and cannot be read "
                "directly to prevent prompt injection. Use the skills_list or skill_view tools "
                "instead."
            )
    for base in homes:
        for name in _CREDENTIAL_FILES:
            if resolved == (base / name).resolve():
                return (
                    f"Access denied: {path} is a Hermes credential store and cannot be read "
                    "directly. Provider tools consume these credentials through internal "
                    f"channels. {_NOT_A_BOUNDARY}"
                )
    for base in homes:
        tokens = (base / "mcp-tokens").resolve()
        if resolved == tokens:
            return (
                f"Access denied: {path} is the Hermes MCP token directory and cannot be read "
                f"directly. {_NOT_A_BOUNDARY}"
            )
        if tokens in resolved.parents:
            return (
                f"Access denied: {path} is a Hermes MCP token file and cannot be read "
                f"directly. {_NOT_A_BOUNDARY}"
            )
    if resolved.name.lower() in _PROJECT_ENV_NAMES:
        return (
            f"Access denied: {path} is a secret-bearing environment file and cannot be read to "
            "prevent credential leakage. If you need to check the file structure, read "
            f".env.example instead. {_NOT_A_BOUNDARY}"
        )
    return None


def raise_if_read_blocked(path: str) -> None:
    """Raise ``ValueError`` with :func:`get_read_block_error`'s message when it refuses ``path``.

    An unexpected error inside the check lets the read through, as in Hermes (the guard never
    breaks loading a local file); a refusal always raises.
    """
    try:
        blocked = get_read_block_error(path)
    except Exception:
        return
    if blocked:
        raise ValueError(blocked)
