"""Hermes' ``hermes_constants``: the Hermes home folder, the paths under it, and the small
environment probes plugins use.

``get_hermes_home()`` reads, at each call and in this order: the context-local override
(:func:`set_hermes_home_override`), the home of the manager loading, activated for or calling
the plugin, then ``$HERMES_HOME``, then ``~/.hermes``. A manager merely alive does not count, so
a plugin's test suite that sets ``HERMES_HOME`` per test reads the new home, as in Hermes.

Hermes' helpers for its own managed Node.js tree are served for plugins that find ``node`` or
``npx`` with them; :func:`heal_hermes_managed_node` never downloads anything here.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import shutil
import socket
import stat
import subprocess
import sysconfig
from pathlib import Path
from typing import Any

from hermes_hooks.compat.current import HOME_OVERRIDE, current_home

__all__ = [
    "FINISH_REASON_LENGTH",
    "OPENROUTER_BASE_URL",
    "OPENROUTER_CHAT_URL",
    "OPENROUTER_MODELS_URL",
    "PARTIAL_STREAM_STUB_ID",
    "VALID_REASONING_EFFORTS",
    "agent_browser_runnable",
    "apply_ipv4_preference",
    "apply_subprocess_home_env",
    "display_hermes_home",
    "find_hermes_node_executable",
    "find_node_executable",
    "find_node_executable_on_path",
    "get_bundled_skills_dir",
    "get_config_path",
    "get_default_hermes_root",
    "get_env_path",
    "get_hermes_dir",
    "get_hermes_home",
    "get_hermes_home_override",
    "get_optional_mcps_dir",
    "get_optional_skills_dir",
    "get_real_home",
    "get_skills_dir",
    "get_subprocess_home",
    "heal_hermes_managed_node",
    "hermes_home_key",
    "hermes_managed_node_tree_present",
    "is_container",
    "is_termux",
    "is_wsl",
    "iter_hermes_node_dirs",
    "node_tool_runnable",
    "parse_reasoning_effort",
    "reset_hermes_home_override",
    "secure_parent_dir",
    "set_hermes_home_override",
    "with_hermes_node_path",
]

OPENROUTER_BASE_URL = "https://openrouter.ai/api/v1"
OPENROUTER_MODELS_URL = f"{OPENROUTER_BASE_URL}/models"
OPENROUTER_CHAT_URL = f"{OPENROUTER_BASE_URL}/chat/completions"
PARTIAL_STREAM_STUB_ID = "partial-stream-stub"
FINISH_REASON_LENGTH = "length"
VALID_REASONING_EFFORTS = ("minimal", "low", "medium", "high", "xhigh")


# -- the home --------------------------------------------------------------------------------


def set_hermes_home_override(path: str | Path | None) -> contextvars.Token[str | None]:
    """Point this thread or task at another home (never ``os.environ``); return the token."""
    return HOME_OVERRIDE.set(None if path is None else str(path))


def reset_hermes_home_override(token: contextvars.Token[str | None]) -> None:
    """Restore the override in place before :func:`set_hermes_home_override`."""
    HOME_OVERRIDE.reset(token)


def get_hermes_home_override() -> str | None:
    """Return the context-local home override, if one is set."""
    return HOME_OVERRIDE.get() or None


def get_hermes_home() -> Path:
    """Return the Hermes home folder (not created), read at each call."""
    return current_home()


def hermes_home_key(home: str | Path | None = None) -> str:
    """Return a comparable key for a home (the current one by default): its absolute path."""
    raw = str(home) if home is not None else str(get_hermes_home())
    return os.path.normcase(os.path.abspath(os.path.expanduser(raw)))


def get_default_hermes_root() -> Path:
    """Return the root holding every profile: ``~/.hermes``, or ``$HERMES_HOME`` outside it
    (its grandparent when it is ``<root>/profiles/<name>``)."""
    native = Path.home() / ".hermes"
    raw = os.environ.get("HERMES_HOME", "").strip()
    if not raw:
        return native
    env_path = Path(raw).expanduser()
    try:
        env_path.resolve().relative_to(native.resolve())
        return native
    except ValueError:
        pass
    return env_path.parent.parent if env_path.parent.name == "profiles" else env_path


def _packaged_data_dir(name: str) -> Path | None:
    for scheme in ("data", "purelib", "platlib"):
        raw = sysconfig.get_path(scheme)
        if raw and (Path(raw) / name).exists():
            return Path(raw) / name
    return None


def _data_dir(env: str, name: str, default: Path | None, fallback: str) -> Path:
    override = os.environ.get(env, "").strip()
    if override:
        return Path(override)
    packaged = _packaged_data_dir(name)
    if packaged is not None:
        return packaged
    return default if default is not None else get_hermes_home() / fallback


def get_optional_skills_dir(default: Path | None = None) -> Path:
    """Return the optional-skills folder (``$HERMES_OPTIONAL_SKILLS`` first)."""
    return _data_dir("HERMES_OPTIONAL_SKILLS", "optional-skills", default, "optional-skills")


def get_optional_mcps_dir(default: Path | None = None) -> Path:
    """Return the optional-MCPs folder (``$HERMES_OPTIONAL_MCPS`` first)."""
    return _data_dir("HERMES_OPTIONAL_MCPS", "optional-mcps", default, "optional-mcps")


def get_bundled_skills_dir(default: Path | None = None) -> Path:
    """Return the bundled skills folder (``$HERMES_BUNDLED_SKILLS`` first)."""
    return _data_dir("HERMES_BUNDLED_SKILLS", "skills", default, "skills")


def _has_content(path: Path) -> bool:
    """Whether a legacy path is in use: a file, or a folder with an entry (links followed;
    a dangling link is not). When it cannot be told, it is in use: never orphan data."""
    try:
        st = path.lstat()
    except FileNotFoundError:
        return False
    except OSError:
        return True
    if stat.S_ISLNK(st.st_mode):
        try:
            st = path.stat()
        except FileNotFoundError:
            return False
        except OSError:
            return True
    if not stat.S_ISDIR(st.st_mode):
        return True
    try:
        with os.scandir(path) as entries:
            return any(True for _ in entries)
    except OSError:
        return True


def get_hermes_dir(new_subpath: str, old_name: str, *, home: Path | None = None) -> Path:
    """Return ``<home>/<old_name>`` when that legacy path holds something, else the new one.

    An empty legacy folder does not count (an install scaffold must not shadow real data).
    """
    base = home if home is not None else get_hermes_home()
    old = base / old_name
    return old if _has_content(old) else base / new_subpath


def display_hermes_home() -> str:
    """Return the home for people: ``~/.hermes``, ``~/.hermes/profiles/coder`` or a full path."""
    home = get_hermes_home()
    try:
        return "~/" + str(home.relative_to(Path.home()))
    except ValueError:
        return str(home)


def get_config_path() -> Path:
    """Return ``<home>/config.yaml``."""
    return get_hermes_home() / "config.yaml"


def get_skills_dir() -> Path:
    """Return ``<home>/skills``."""
    return get_hermes_home() / "skills"


def get_env_path() -> Path:
    """Return ``<home>/.env``."""
    return get_hermes_home() / ".env"


def secure_parent_dir(path: Path) -> None:
    """Make ``path``'s parent folder private (0700), never ``/`` or a folder right under it."""
    parent = Path(path).parent.resolve()
    if parent == Path("/") or len(parent.parts) < 3:
        return
    with contextlib.suppress(OSError):
        os.chmod(parent, 0o700)


# -- HOME for subprocesses -------------------------------------------------------------------


def _norm(path: str | None) -> str:
    raw = (path or "").strip()
    return os.path.normcase(os.path.abspath(os.path.expanduser(raw))) if raw else ""


def _profile_home(env: dict[str, str] | None) -> str | None:
    base = get_hermes_home_override() or (env or {}).get("HERMES_HOME")
    base = base or os.environ.get("HERMES_HOME")
    if not base:
        return None
    candidate = os.path.join(base, "home")
    return candidate if os.path.isdir(candidate) else None


def get_real_home(env: dict[str, str] | None = None) -> str:
    """Return the OS user's home (``$HERMES_REAL_HOME``, ``$HOME``...), never the profile's."""
    env = env or {}
    profile = _profile_home(env)
    candidates = [
        str(env.get("HERMES_REAL_HOME") or os.environ.get("HERMES_REAL_HOME", "")).strip(),
        str(env.get("HOME") or os.environ.get("HOME", "")).strip(),
        os.path.expanduser("~"),
    ]
    for candidate in candidates:
        if candidate and candidate != "~" and not (profile and _norm(candidate) == _norm(profile)):
            return candidate
    return "/tmp"


def get_subprocess_home(env: dict[str, str] | None = None) -> str | None:
    """Return the ``HOME`` a subprocess should get, if it should not keep its own
    (``TERMINAL_HOME_MODE``: ``auto``, ``real`` or ``profile``)."""
    env = env or {}
    profile = _profile_home(env)
    mode = str(env.get("TERMINAL_HOME_MODE") or os.environ.get("TERMINAL_HOME_MODE", "auto"))
    mode = mode.strip().lower() or "auto"
    if mode in {"isolated", "profile_home", "profile-home"}:
        mode = "profile"
    if mode in {"host", "user", "real_home", "real-home"}:
        mode = "real"
    if mode == "profile":
        return profile
    real = get_real_home(env)
    now = str(env.get("HOME") or os.environ.get("HOME", "")).strip()
    if mode == "real":
        return real if _norm(real) != _norm(now) else None
    if profile and is_container():
        return profile
    if profile and _norm(now) == _norm(profile):
        return real if _norm(real) != _norm(now) else None
    return None


def apply_subprocess_home_env(env: dict[str, str]) -> None:
    """Set ``HERMES_REAL_HOME`` and, when it should change, ``HOME`` in ``env``."""
    real = get_real_home(env)
    if real:
        env["HERMES_REAL_HOME"] = real
    home = get_subprocess_home(env)
    if home:
        env["HOME"] = home


# -- small probes ----------------------------------------------------------------------------


def parse_reasoning_effort(effort: str) -> dict[str, Any] | None:
    """Read a reasoning effort: ``{"enabled": False}`` for ``none``, ``{"enabled": True,
    "effort": level}`` for a valid level, ``None`` when empty or unknown."""
    if not effort or not effort.strip():
        return None
    level = effort.strip().lower()
    if level == "none":
        return {"enabled": False}
    return {"enabled": True, "effort": level} if level in VALID_REASONING_EFFORTS else None


def is_termux() -> bool:
    """Whether this runs in Termux (Android)."""
    return bool(
        os.environ.get("TERMUX_VERSION") or "com.termux/files/usr" in os.environ.get("PREFIX", "")
    )


def is_wsl() -> bool:
    """Whether this runs in WSL (``microsoft`` in ``/proc/version``)."""
    try:
        with open("/proc/version", encoding="utf-8") as f:
            return "microsoft" in f.read().lower()
    except OSError:
        return False


def is_container() -> bool:
    """Whether this runs in a container (Docker, Podman, Kubernetes, LXC, containerd)."""
    if os.path.exists("/.dockerenv") or os.path.exists("/run/.containerenv"):
        return True
    if os.environ.get("KUBERNETES_SERVICE_HOST"):
        return True
    markers = ("docker", "podman", "/lxc/", "kubepods", "containerd", "crio")
    for name, found in (("/proc/1/cgroup", markers), ("/proc/self/mountinfo", markers[3:])):
        try:
            with open(name, encoding="utf-8") as f:
                text = f.read()
        except OSError:
            continue
        if any(marker in text for marker in found):
            return True
    return False


def apply_ipv4_preference(force: bool = False) -> None:
    """With ``force``, make unspecified-family name lookups prefer IPv4 (once per process)."""
    if not force or getattr(socket.getaddrinfo, "_hermes_ipv4_patched", False):
        return
    original = socket.getaddrinfo

    def ipv4_first(host: Any, port: Any, family: int = 0, *args: Any) -> Any:
        if family == 0:
            try:
                return original(host, port, socket.AF_INET, *args)
            except socket.gaierror:
                pass
        return original(host, port, family, *args)

    ipv4_first._hermes_ipv4_patched = True  # type: ignore[attr-defined]
    socket.getaddrinfo = ipv4_first  # type: ignore[assignment]


# -- Hermes' managed Node.js -----------------------------------------------------------------


def iter_hermes_node_dirs(home: Path | None = None) -> list[Path]:
    """Return the folders of a Node.js tree Hermes manages under the home, in lookup order."""
    root = home or get_hermes_home()
    return [root / "node" / "bin", root / "node"]


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def node_tool_runnable(path: str | None) -> bool:
    """Whether ``path`` is a Node, npm or npx binary that runs (``--version`` exits 0)."""
    if not path or not _executable(Path(path)):
        return False
    try:
        done = subprocess.run(
            [path, "--version"], capture_output=True, timeout=10, env=with_hermes_node_path()
        )
    except (OSError, subprocess.TimeoutExpired, ValueError):
        return False
    return done.returncode == 0


def hermes_managed_node_tree_present(home: Path | None = None) -> bool:
    """Whether a managed ``node``, ``npm`` or ``npx`` exists under the home."""
    return any(
        _executable(folder / name)
        for folder in iter_hermes_node_dirs(home)
        for name in ("node", "npm", "npx")
    )


def heal_hermes_managed_node() -> bool:
    """Hermes re-downloads a broken managed Node.js; this never downloads: ``False``."""
    return False


def find_hermes_node_executable(command: str) -> str | None:
    """Return a managed Node.js executable named ``command`` that runs, or ``None``."""
    name = Path(command).name
    for folder in iter_hermes_node_dirs():
        if node_tool_runnable(str(folder / name)):
            return str(folder / name)
    return None


def find_node_executable_on_path(command: str) -> str | None:
    """Return ``command`` found on ``PATH``."""
    return shutil.which(command)


def find_node_executable(command: str) -> str | None:
    """Return a managed executable, else (when no managed tree exists) one on ``PATH``."""
    managed = find_hermes_node_executable(command)
    if managed:
        return managed
    return None if hermes_managed_node_tree_present() else find_node_executable_on_path(command)


def with_hermes_node_path(env: dict[str, str] | None = None) -> dict[str, str]:
    """Return ``env`` (``os.environ`` by default) with the managed Node.js folders on ``PATH``."""
    merged = dict(os.environ if env is None else env)
    parts = [p for p in merged.get("PATH", "").split(os.pathsep) if p]
    for folder in reversed([str(d) for d in iter_hermes_node_dirs() if d.is_dir()]):
        if folder not in parts:
            parts.insert(0, folder)
    merged["PATH"] = os.pathsep.join(parts)
    return merged


def agent_browser_runnable(path: str | None) -> bool:
    """Whether ``path`` is an ``agent-browser`` CLI that runs (``npx agent-browser`` counts)."""
    if not path:
        return False
    if " " in path and path.split()[0].endswith("npx"):
        return True
    return node_tool_runnable(path)
