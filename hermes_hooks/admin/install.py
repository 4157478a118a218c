"""Install and remove plugins: from a folder, a git repository, or a pip package.

A folder or repository is copied into ``$HERMES_HOME/plugins/<manifest name>/`` atomically: it
is staged in a hidden temporary folder next to the target (discovery skips hidden folders) and
renamed into place, so a plugin is either fully there or not at all. Replacing an installed
plugin (``--force``) swaps the two folders in one step where the kernel can
(``renameat2(RENAME_EXCHANGE)`` on Linux); elsewhere it takes two renames, and a process killed
between them leaves the old plugin in the staging folder, from where
:func:`recover_interrupted_installs` (run by every ``hermes`` command) puts it back. Nothing
is installed that would land or point outside the plugins folder: the name must be a valid
plugin name, a ``#subdir`` must stay inside the repository, and a symlink must stay inside the
plugin.

Installing software into the running Python (a ``pip:NAME`` source, a plugin's
``pip_dependencies``) is a separate step, :func:`run_pip`, that callers run only after the
person agreed. Git and pip run as subprocesses (``git``, ``sys.executable -m pip``).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import importlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Final, Literal

import attrs

from hermes_hooks.admin.envfile import read_env_file
from hermes_hooks.errors import InstallError
from hermes_hooks.plugins.discovery import Candidate, discover_entry_points, scan_directory
from hermes_hooks.plugins.manifest import (
    EnvRequirement,
    PluginManifest,
    find_manifest,
    is_valid_plugin_name,
)

__all__ = [
    "PIP_PREFIX",
    "Source",
    "StagedPlugin",
    "find_pip_plugins",
    "missing_env",
    "missing_pip_dependencies",
    "parse_source",
    "plugin_target",
    "publish",
    "remove_plugin",
    "run_pip",
    "stage",
]

PIP_PREFIX: Final = "pip:"
GIT_TIMEOUT: Final = 300.0
PIP_TIMEOUT: Final = 900.0

_URL: Final = re.compile(r"\A(?:git\+)?(https?|ssh|git|file)://", re.IGNORECASE)
_SCP: Final = re.compile(r"\A[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:")
_REQUIREMENT: Final = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9._\-\[\],<>=!~*+;]*\Z")
_REQUIREMENT_NAME: Final = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9._-]*")
_IGNORED: Final = shutil.ignore_patterns(".git", "__pycache__", "*.pyc")


@attrs.frozen
class Source:
    """Where a plugin comes from.

    :param kind: ``folder`` (copied as it is), ``git`` (cloned, committed files only) or
        ``pip`` (a package with an entry point, installed into the running environment).
    :param location: the folder, the repository URL or path, or the requirement.
    :param subdir: the plugin's folder inside a repository (``#subdir``).
    """

    kind: Literal["folder", "git", "pip"]
    location: str
    subdir: str | None = None


def _is_bare_repository(path: Path) -> bool:
    return (path / "HEAD").is_file() and (path / "objects").is_dir() and (path / "refs").is_dir()


def parse_source(text: str, cwd: Path | None = None) -> Source:
    """Tell what kind of source *text* is.

    ``pip:NAME`` is a package; a URL (``https://``, ``ssh://``, ``git://``, ``file://``,
    ``git@host:path``) is a repository; a local path is a repository when it has a ``#subdir``
    (``PATH#`` for its root), ends in ``.git`` or is a bare repository, and a folder otherwise.

    :raises InstallError: an empty or unsafe requirement, or a local path that does not exist.
    """
    text = text.strip()
    if text.startswith(PIP_PREFIX):
        requirement = text[len(PIP_PREFIX) :].strip()
        if not _REQUIREMENT.match(requirement):
            raise InstallError(
                f"pip source {text!r}: expected pip:NAME, a package name with an optional "
                f"version (pip:hermes-foo>=1.0), found {requirement!r}"
            )
        return Source("pip", requirement)
    location, hashmark, fragment = text.partition("#")
    subdir = fragment.strip("/") or None
    if _URL.match(location) or _SCP.match(location):
        return Source("git", location.removeprefix("git+"), subdir)
    path = Path(location).expanduser()
    if not path.is_absolute():
        path = (cwd or Path.cwd()) / path
    if not path.exists():
        raise InstallError(f"{text!r} is not a folder, a git repository or pip:NAME")
    if not path.is_dir():
        raise InstallError(f"{path}: expected a plugin folder or a git repository, found a file")
    if hashmark or location.endswith(".git") or _is_bare_repository(path):
        return Source("git", str(path), subdir)
    return Source("folder", str(path))


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def plugin_target(plugins_dir: Path, name: str) -> Path:
    """Return ``plugins_dir/name`` after checking it is a safe place to install *name*.

    :raises InstallError: *name* is ``.``, ``..``, has a slash or is not a valid plugin name,
        or the path (following symlinks) resolves outside *plugins_dir* or onto it.
    """
    if name in {"", ".", ".."} or "/" in name or "\\" in name or ".." in name:
        raise InstallError(
            f"plugin name {name!r} is refused: it must not be '.', '..' or contain a slash or '..'"
        )
    if not is_valid_plugin_name(name):
        raise InstallError(
            f"plugin name {name!r} is refused: expected [a-z0-9][a-z0-9._-]*, at most 64 chars"
        )
    root = plugins_dir.resolve()
    target = plugins_dir / name
    resolved = target.resolve()
    if resolved == root or not _inside(resolved, root):
        raise InstallError(
            f"plugin name {name!r} is refused: {target} resolves to {resolved}, outside {root}"
        )
    return target


def _check_symlinks(root: Path) -> None:
    """Refuse a tree holding a symlink that is absolute or resolves outside *root*."""
    real_root = root.resolve()
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in [*dirs, *files]:
            path = Path(folder) / name
            if not path.is_symlink():
                continue
            link = os.readlink(path)
            relative = path.relative_to(root)
            target = Path(os.path.realpath(path))
            if os.path.isabs(link) or not _inside(target, real_root):
                raise InstallError(
                    f"{relative} is a symlink to {link!r}, which points outside the plugin "
                    f"folder; refusing to install"
                )


def _run_git(args: Sequence[str], cwd: Path | None = None) -> None:
    git = shutil.which("git")
    if git is None:
        raise InstallError("git is not installed or not on PATH; it is needed to clone plugins")
    env = dict(os.environ, GIT_TERMINAL_PROMPT="0", GIT_ASKPASS="", SSH_ASKPASS="")
    try:
        result = subprocess.run(
            [git, *args],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise InstallError(f"git {args[0]} timed out after {GIT_TIMEOUT:.0f} s") from exc
    if result.returncode != 0:
        raise InstallError(f"git {args[0]} failed: {_quoted(result)}")


def _quoted(result: subprocess.CompletedProcess[str]) -> str:
    """What a failed command said, whole (its last 40 lines), or its exit code."""
    lines = (result.stderr or result.stdout).strip().splitlines()[-40:]
    if not lines:
        return f"exit code {result.returncode}"
    return lines[0] if len(lines) == 1 else "\n" + "\n".join(f"    {line}" for line in lines)


def _clone(location: str, dest: Path) -> None:
    local = not (_URL.match(location) or _SCP.match(location)) or location.startswith("file:")
    depth = [] if local else ["--depth", "1"]
    _run_git(["clone", "--quiet", "--no-recurse-submodules", *depth, "--", location, str(dest)])


def _subdir_of(root: Path, subdir: str) -> Path:
    real_root = root.resolve()
    if Path(subdir).is_absolute() or ".." in Path(subdir).parts:
        raise InstallError(
            f"subdirectory {subdir!r} is refused: it must be a path inside the repository, "
            f"without '..'"
        )
    folder = (real_root / subdir).resolve()
    if not _inside(folder, real_root):
        raise InstallError(f"subdirectory {subdir!r} escapes the repository (to {folder})")
    if not folder.is_dir():
        raise InstallError(f"subdirectory {subdir!r} is not a folder in the repository")
    return folder


@attrs.frozen
class StagedPlugin:
    """A plugin ready to be published: its folder (a clone or the source) and its manifest."""

    source: Source
    folder: Path
    manifest: PluginManifest

    @property
    def name(self) -> str:
        """The manifest name: the folder it is installed as."""
        return self.manifest.name


@contextlib.contextmanager
def stage(source: Source, *, work_dir: Path | None = None) -> Iterator[StagedPlugin]:
    """Fetch a folder or git source, check it, and yield it; a clone is deleted afterwards.

    :param work_dir: where a git clone is made (the plugins folder, by the CLI), in a hidden
        folder that :func:`recover_interrupted_installs` sweeps when the install was killed;
        the system's temporary folder when ``None``.

    :raises InstallError: git fails, the ``#subdir`` escapes or is missing, the folder has no
        ``plugin.yaml`` or ``__init__.py``, or holds a symlink pointing outside it.
    :raises ManifestError: the manifest is not valid.
    """
    if source.kind == "pip":
        raise InstallError("a pip source is installed with run_pip, not staged")
    if work_dir is not None:
        work_dir.mkdir(parents=True, exist_ok=True)
    prefix = _FETCH_PREFIX if work_dir is not None else "hermes-install-"
    with tempfile.TemporaryDirectory(prefix=prefix, dir=work_dir) as tmp:
        _claim(Path(tmp))
        if source.kind == "git":
            clone = Path(tmp) / "clone"
            _clone(source.location, clone)
            folder = _subdir_of(clone, source.subdir) if source.subdir else clone
        else:
            folder = Path(source.location).resolve()
        manifest_path = find_manifest(folder)
        if manifest_path is None:
            folder = plugin_folder_in(folder, source)
            manifest_path = find_manifest(folder)
            assert manifest_path is not None
        if not (folder / "__init__.py").is_file():
            raise InstallError(f"{folder}: no __init__.py next to {manifest_path.name}")
        _check_symlinks(folder)
        _check_size(folder)
        default = source.subdir.rsplit("/", 1)[-1] if source.subdir else folder.name
        manifest = PluginManifest.from_path(manifest_path, default_name=default.lower())
        yield StagedPlugin(source, folder, manifest)


MAX_PLUGIN_BYTES: Final = 50 * 1024 * 1024
"""The most bytes a plugin's files may hold to be installed (``.git`` and bytecode left out)."""
MAX_PLUGIN_FILES: Final = 10_000
"""The most files a plugin may have to be installed."""


def _check_size(folder: Path) -> None:
    """Refuse a plugin folder past :data:`MAX_PLUGIN_BYTES` or :data:`MAX_PLUGIN_FILES`, from
    the sizes its files say (a sparse file counts at its full size), before anything is copied.

    :raises InstallError: it is too large.
    """
    total = files = 0
    for root, dirs, names in os.walk(folder):
        dirs[:] = [d for d in dirs if d not in (".git", "__pycache__")]
        for name in names:
            if name.endswith(".pyc"):
                continue
            files += 1
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(root, name)).st_size
            if total > MAX_PLUGIN_BYTES or files > MAX_PLUGIN_FILES:
                raise InstallError(
                    f"{folder}: expected a plugin of at most {MAX_PLUGIN_BYTES} bytes in "
                    f"{MAX_PLUGIN_FILES} files, found more (at {os.path.join(root, name)}); "
                    f"not installed"
                )


_STAGING_MARK: Final = ".install-"
_TRASH_MARK: Final = ".remove-"
_FETCH_PREFIX: Final = ".fetch-"
"""A git clone being checked, kept under the plugins folder so that its leftovers are swept."""
_OWNER_FILE: Final = ".owner"
LEFTOVER_AGE: Final = 3600.0
"""Seconds after which a staging or trash folder is surely not an install in progress."""


def _claim(folder: Path) -> None:
    """Write this process's id into a work folder, so a later sweep can tell it is orphaned."""
    with contextlib.suppress(OSError):
        (folder / _OWNER_FILE).write_text(str(os.getpid()), encoding="ascii")


def _orphaned(folder: Path) -> bool:
    """Whether the process that made ``folder`` is gone (killed before it could clean up).

    Unknown (no owner file, not POSIX, or the process is someone else's) counts as not gone:
    such a folder is swept only once it is older than :data:`LEFTOVER_AGE`.
    """
    if os.name != "posix":  # os.kill(pid, 0) is no probe on Windows
        return False
    try:
        pid = int((folder / _OWNER_FILE).read_text(encoding="ascii").strip())
    except (OSError, ValueError):
        return False
    if pid <= 0 or pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False


_AT_FDCWD: Final = -100
_RENAME_EXCHANGE: Final = 2
_NO_EXCHANGE: Final = frozenset({errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EXDEV})


def exchange_paths(first: Path, second: Path) -> bool:
    """Swap two existing paths in one step (``renameat2(RENAME_EXCHANGE)``).

    :returns: ``False`` when this system or file system cannot (not Linux, an old kernel or
        libc, a file system without the flag); the paths are untouched then.
    :raises OSError: the swap failed for another reason.
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_uint,
    ]
    renameat2.restype = ctypes.c_int
    done = renameat2(
        _AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second), _RENAME_EXCHANGE
    )
    if done == 0:
        return True
    code = ctypes.get_errno()
    if code in _NO_EXCHANGE:
        return False
    raise OSError(code, os.strerror(code), str(first), None, str(second))


def _staging_name(name: str) -> str:
    return f".{name}{_STAGING_MARK}"


def recover_interrupted_installs(plugins_dir: Path) -> list[str]:
    """Finish what an install or removal killed half-way left behind; return what it restored.

    A staging folder whose plugin is missing from its place gives its ``previous`` copy back
    (the plugin as it was before the interrupted ``--force``). Leftover staging, trash and
    fetch (git clone) folders are deleted as soon as the process that made them is gone (a
    killed install), and any of them older than :data:`LEFTOVER_AGE`; younger ones whose
    owner still runs belong to an install in progress and are left alone.
    """
    restored: list[str] = []
    if not plugins_dir.is_dir():
        return restored
    now = time.time()
    for leftover in sorted(plugins_dir.glob(".*")):
        name, mark, _ = leftover.name[1:].partition(_STAGING_MARK)
        fetch = leftover.name.startswith(_FETCH_PREFIX)
        if not mark and _TRASH_MARK not in leftover.name and not fetch:
            continue
        if mark and is_valid_plugin_name(name):
            previous = leftover / "previous"
            target = plugins_dir / name
            if previous.is_dir() and not os.path.lexists(target):
                with contextlib.suppress(OSError):
                    os.rename(previous, target)
                    restored.append(name)
        with contextlib.suppress(OSError):
            old = now - leftover.lstat().st_mtime > LEFTOVER_AGE
            if old or restored[-1:] == [name] or _orphaned(leftover):
                shutil.rmtree(leftover, ignore_errors=True)
    return restored


def publish(staged: StagedPlugin, plugins_dir: Path, *, force: bool = False) -> Path:
    """Copy a staged plugin to ``plugins_dir/<name>`` atomically and return that folder.

    :param force: replace an installed plugin of the same name.
    :raises InstallError: the name is unsafe, or a plugin of that name exists and not *force*.
    """
    plugins_dir.mkdir(parents=True, exist_ok=True)
    target = plugin_target(plugins_dir, staged.name)
    if os.path.lexists(target) and not force:
        raise InstallError(
            f"Plugin {staged.name!r} is already installed in {target}; use --force to replace it"
        )
    staging = Path(tempfile.mkdtemp(prefix=_staging_name(staged.name), dir=plugins_dir))
    _claim(staging)
    try:
        new = staging / "plugin"
        shutil.copytree(staged.folder, new, symlinks=True, ignore=_IGNORED)
        old = staging / "previous"
        if os.path.lexists(target) and exchange_paths(new, target):
            return target  # the old plugin is in staging now, deleted below
        if os.path.lexists(target):
            os.rename(target, old)  # killed from here to the next rename: recovered later
        try:
            os.rename(new, target)
        except OSError:
            if os.path.lexists(old):
                os.rename(old, target)
            raise
    except OSError as exc:
        raise InstallError(f"cannot install {staged.name!r} into {target}: {exc}") from exc
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def remove_plugin(plugins_dir: Path, candidate: Candidate) -> Path:
    """Delete the folder of user plugin *candidate* (only a symlink itself, if it is one).

    :raises InstallError: the plugin is not a user plugin in *plugins_dir* (bundled, project
        or pip plugins are not removed here), or its folder cannot be deleted.
    """
    key = candidate.key
    if candidate.source == "bundled":
        raise InstallError(
            f"Plugin {key!r} is bundled with hermes-hooks and cannot be removed; "
            f"use 'hermes plugins disable {key}'"
        )
    if candidate.source == "entrypoint":
        dist = candidate.distribution or "its package"
        raise InstallError(
            f"Plugin {key!r} was installed with pip; remove it with 'pip uninstall {dist}'"
        )
    path = candidate.path
    root = plugins_dir.resolve()
    if candidate.source != "user" or path is None or not _inside(path.parent.resolve(), root):
        raise InstallError(f"Plugin {key!r} ({path}) is not in {plugins_dir}; remove it yourself")
    if path.is_symlink():
        path.unlink()
        return path
    if path.resolve() == root or not _inside(path.resolve(), root):
        raise InstallError(f"Plugin {key!r}: {path} resolves outside {plugins_dir}; refusing")
    trash = Path(tempfile.mkdtemp(prefix=f".{path.name}{_TRASH_MARK}", dir=path.parent))
    _claim(trash)
    try:
        os.rename(path, trash / "plugin")
        shutil.rmtree(trash)
    except OSError as exc:
        raise InstallError(f"cannot remove {path}: {exc}") from exc
    return path


def _requirement_name(requirement: str) -> str:
    match = _REQUIREMENT_NAME.match(requirement)
    return match.group(0) if match else requirement


def _is_installed(requirement: str) -> bool:
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        distribution(_requirement_name(requirement))
    except PackageNotFoundError:
        return False
    return True


def missing_pip_dependencies(manifest: PluginManifest) -> list[str]:
    """Return the manifest's ``pip_dependencies`` and ``python_dependencies`` (manifest v2's
    name for them) whose distribution is not installed, each once."""
    wanted = dict.fromkeys((*manifest.pip_dependencies, *manifest.python_dependencies))
    return [r for r in wanted if not _is_installed(r)]


def missing_env(manifest: PluginManifest, home: Path) -> list[EnvRequirement]:
    """Return the ``requires_env`` entries set neither in the environment nor in ``.env``."""
    stored = read_env_file(home)
    return [
        e for e in manifest.requires_env if not os.environ.get(e.name) and not stored.get(e.name)
    ]


def run_pip(requirements: Sequence[str], *, force: bool = False) -> None:
    """Install *requirements* into the running environment with ``sys.executable -m pip``.

    Only call this after the person agreed to it.

    :raises InstallError: a requirement looks like an option, or pip fails (its last line).
    """
    for requirement in requirements:
        if not _REQUIREMENT.match(requirement):
            raise InstallError(f"pip requirement {requirement!r} is refused: not a package spec")
    extra = ["--force-reinstall"] if force else []
    command = [sys.executable, "-m", "pip", "install", "--disable-pip-version-check", *extra]
    try:
        result = subprocess.run(
            [*command, "--", *requirements],
            capture_output=True,
            text=True,
            timeout=PIP_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise InstallError(f"pip install timed out after {PIP_TIMEOUT:.0f} s") from exc
    if result.returncode != 0:
        lines = (result.stderr or result.stdout).strip().splitlines()
        detail = lines[-1] if lines else f"exit code {result.returncode}"
        raise InstallError(f"pip install {' '.join(requirements)} failed: {detail}")
    importlib.invalidate_caches()


def find_pip_plugins(requirement: str) -> list[Candidate]:
    """Return the entry-point plugins of the distribution *requirement* names."""
    wanted = re.sub(r"[-_.]+", "-", _requirement_name(requirement)).lower()
    return [
        c
        for c in discover_entry_points()
        if c.distribution and re.sub(r"[-_.]+", "-", c.distribution).lower() == wanted
    ]


def user_candidates(home: Path) -> list[Candidate]:
    """Return the plugins installed in ``$HERMES_HOME/plugins`` (manifests only)."""
    return scan_directory(home / "plugins", "user")


__all__ += ["user_candidates"]


_NOT_SEARCHED: Final = frozenset({".git", "__pycache__", "node_modules", ".venv", "venv", ".tox"})


def find_plugin_folders(root: Path, depth: int = 3) -> list[Path]:
    """Return the plugin folders (``plugin.yaml`` and ``__init__.py``) under *root*, sorted."""
    found: list[Path] = []
    if depth < 0 or not root.is_dir():
        return found
    for child in sorted(root.iterdir()):
        if child.name in _NOT_SEARCHED or child.name.startswith(".") or not child.is_dir():
            continue
        if child.is_symlink():
            continue
        if find_manifest(child) is not None and (child / "__init__.py").is_file():
            found.append(child)
        else:
            found.extend(find_plugin_folders(child, depth - 1))
    return found


def plugin_folder_in(root: Path, source: Source) -> Path:
    """Return the one plugin folder a project root holds in a subfolder (a package's root
    with the plugin in ``src/name/``, say).

    :raises InstallError: it holds none, or several: the message names the exact source of
        each (``PATH/sub`` for a folder, ``URL#sub`` for a repository).
    """
    found = find_plugin_folders(root)
    if len(found) == 1:
        return found[0]
    if not found:
        raise InstallError(f"{root}: no plugin.yaml here or in its subfolders; not a plugin")
    if source.kind == "git":
        base = source.location + "#" + (source.subdir + "/" if source.subdir else "")
        choices = [base + str(f.relative_to(root)) for f in found]
    else:
        choices = [str(f) for f in found]
    listed = "\n".join(f"    hermes plugins install {choice}" for choice in choices)
    raise InstallError(f"{root} holds {len(found)} plugins; install one of them:\n{listed}")


ORIGINS_FILE: Final = ".origins.json"
"""In the plugins folder: the source each installed plugin came from (``plugins update``)."""


def _origins(plugins_dir: Path) -> dict[str, str]:
    import json

    try:
        data = json.loads((plugins_dir / ORIGINS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): v for k, v in data.items() if isinstance(v, str)}


def write_origin(plugins_dir: Path, name: str, source: str) -> None:
    """Record that plugin *name* was installed from *source* (atomically)."""
    import json

    origins = _origins(plugins_dir)
    origins[name] = source
    fd, tmp = tempfile.mkstemp(prefix=".origins-", dir=plugins_dir)
    with os.fdopen(fd, "w", encoding="utf-8") as stream:
        json.dump(origins, stream, indent=2, sort_keys=True)
    os.replace(tmp, plugins_dir / ORIGINS_FILE)


def read_origin(plugins_dir: Path, name: str) -> str | None:
    """Return the source plugin *name* was installed from, or ``None`` when not recorded."""
    return _origins(plugins_dir).get(name)


def link(folder: Path, plugins_dir: Path, name: str, *, force: bool = False) -> Path:
    """Install the plugin *folder* as a symlink ``plugins_dir/<name>`` (a plugin under
    development: edits show at the next load); return the link.

    :raises InstallError: the name is unsafe, or a plugin of that name exists and not *force*.
    """
    plugins_dir.mkdir(parents=True, exist_ok=True)
    target = plugin_target(plugins_dir, name)
    if os.path.lexists(target) and not force:
        raise InstallError(
            f"Plugin {name!r} is already installed in {target}; use --force to replace it"
        )
    staging = plugins_dir / f"{_staging_name(name)}link"
    with contextlib.suppress(FileNotFoundError):
        staging.unlink()
    try:
        staging.symlink_to(folder.resolve(), target_is_directory=True)
        if target.is_symlink() or target.is_file():
            target.unlink()
        elif target.exists():
            shutil.rmtree(target)
        os.rename(staging, target)
    except OSError as exc:
        raise InstallError(f"cannot link {name!r} into {target}: {exc}") from exc
    return target
