"""The agent's skills: the ``skill_view`` tool, and what ``/skills`` and ``hermes skills`` list.

As in Hermes, a skill is a Markdown file (``SKILL.md``, with YAML frontmatter) in a folder that
may hold ``references/``, ``templates/``, ``assets/`` and ``scripts/``. Two kinds:

- **plugin skills**, registered with ``ctx.register_skill(name, path)`` and named
  ``plugin:skill``; they are explicit loads: the model asks for one by its qualified name;
- **local skills**, ``$HERMES_HOME/skills/[category/]name/SKILL.md``, named by their
  frontmatter's ``name`` (else the folder's).

``skill_view(name, file_path?)`` answers with Hermes' JSON: ``success``, ``name``,
``description``, ``content`` (a plugin skill's content starts with a banner naming its
plugin and sibling skills), ``linked_files`` by folder, ``skill_dir``; with ``file_path``, that
linked file's content. A name that escapes its folder (``..``, an absolute path) is refused.
"""

from __future__ import annotations

import collections
import json
import logging
import weakref
from collections.abc import Iterator
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import TYPE_CHECKING, Any, Final

import attrs

from hermes_hooks.plugins.safe_yaml import YAMLLoadError, safe_load_yaml
from hermes_hooks.registries.base import HOST
from hermes_hooks.spec.hookspecs import TELEMETRY_SCHEMA_VERSION

if TYPE_CHECKING:
    from hermes_hooks.plugins.manager import PluginManager

__all__ = [
    "SKILL_VIEW_SCHEMA",
    "SkillSummary",
    "install_skill_view",
    "list_skills",
    "local_skills_dir",
    "view_skill",
]

logger = logging.getLogger(__name__)

SUPPORT_DIRS: Final = ("references", "templates", "assets", "scripts")
MAX_DESCRIPTION: Final = 1024
MAX_SKILL_BYTES: Final = 1_000_000
_INJECTION: Final = (
    "ignore previous instructions",
    "ignore all previous",
    "disregard your",
    "forget your instructions",
    "system prompt:",
    "<system>",
)

SKILL_VIEW_SCHEMA: Final[dict[str, Any]] = {
    "name": "skill_view",
    "description": (
        "Load a skill: instructions for a task or workflow, with its references, templates "
        "and scripts. The first call returns the skill's content and its 'linked_files'; call "
        "again with file_path to read one of them."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "name": {
                "type": "string",
                "description": (
                    "The skill's name; for a plugin's skill the qualified form "
                    "'plugin:skill' (e.g. 'my-plugin:my-workflow')."
                ),
            },
            "file_path": {
                "type": "string",
                "description": (
                    "A linked file of the skill, e.g. 'references/api.md'. Omit it for the "
                    "skill itself."
                ),
            },
        },
        "required": ["name"],
    },
}


@attrs.frozen
class SkillSummary:
    """One skill as the listings show it.

    :param name: ``plugin:skill`` or a local skill's name.
    :param source: the plugin's key, or ``"local"``.
    :param path: the skill's file.
    """

    name: str
    description: str
    source: str
    path: Path

    def to_dict(self) -> dict[str, str]:
        """Return the summary as JSON data."""
        return {
            "name": self.name,
            "description": self.description,
            "source": self.source,
            "path": str(self.path),
        }


def local_skills_dir(pm: PluginManager) -> Path:
    """Return where local skills live: ``$HERMES_HOME/skills``."""
    return pm.hermes_home / "skills"


def _json(payload: dict[str, Any]) -> str:
    return json.dumps(payload, ensure_ascii=False)


def _fail(error: str, **extra: Any) -> str:
    return _json({"success": False, "error": error, **extra})


def _read(path: Path) -> str:
    with path.open("rb") as handle:
        data = handle.read(MAX_SKILL_BYTES + 1)
    if len(data) > MAX_SKILL_BYTES:
        raise ValueError(f"{path} is larger than {MAX_SKILL_BYTES} bytes")
    return data.decode("utf-8-sig", errors="replace")


def split_frontmatter(text: str, source: str) -> tuple[dict[str, Any], str]:
    """Return ``(frontmatter, body)`` of a skill file; no or broken frontmatter gives ``{}``."""
    if not text.startswith("---"):
        return {}, text
    head, sep, body = text[3:].partition("\n---")
    if not sep:
        return {}, text
    try:
        data = safe_load_yaml(head, source=source)
    except YAMLLoadError as exc:
        logger.debug("skill %s: frontmatter ignored: %s", source, exc)
        return {}, body.lstrip("-\n")
    return (data if isinstance(data, dict) else {}), body.partition("\n")[2]


def _description(frontmatter: dict[str, Any], body: str, fallback: str = "") -> str:
    text = frontmatter.get("description") or fallback
    if not text:
        text = next(
            (line for line in map(str.strip, body.splitlines()) if line and line[0] != "#"), ""
        )
    text = str(text)
    return text if len(text) <= MAX_DESCRIPTION else text[: MAX_DESCRIPTION - 3] + "..."


def _iter_local(root: Path) -> Iterator[tuple[str, Path]]:
    """Yield ``(name, SKILL.md)`` of every local skill, one or two folders deep, by name."""
    if not root.is_dir():
        return
    seen: set[str] = set()
    for skill_md in sorted([*root.glob("*/SKILL.md"), *root.glob("*/*/SKILL.md")]):
        if any(part.startswith(".") for part in skill_md.relative_to(root).parts):
            continue
        try:
            frontmatter, _ = split_frontmatter(_read(skill_md)[:4000], str(skill_md))
        except (OSError, ValueError):
            continue
        name = str(frontmatter.get("name") or skill_md.parent.name)
        if name not in seen:
            seen.add(name)
            yield name, skill_md


def list_skills(pm: PluginManager) -> list[SkillSummary]:
    """Return every skill the agent can load: the plugins' (by plugin), then the local ones."""
    found = []
    for entry in pm.skills.entries():
        skill = entry.value
        description = skill.description
        if not description:
            try:
                frontmatter, body = split_frontmatter(_read(skill.path), str(skill.path))
                description = _description(frontmatter, body)
            except (OSError, ValueError):
                description = ""
        found.append(SkillSummary(skill.name, description, skill.owner, skill.path))
    for name, skill_md in _iter_local(local_skills_dir(pm)):
        try:
            frontmatter, body = split_frontmatter(_read(skill_md), str(skill_md))
        except (OSError, ValueError):
            continue
        found.append(SkillSummary(name, _description(frontmatter, body), "local", skill_md))
    return found


def _path_error(name: str, *, qualified: bool = False) -> str | None:
    """Why ``name`` is not a name but a path, or ``None``.

    :param qualified: ``name`` may be ``plugin:skill``, which Windows reads as relative to a
        drive when the plugin's key is one letter (``k:wf``): only an absolute path is refused.
    """
    windows = PureWindowsPath(name)
    drive = windows.drive and not qualified
    if PurePosixPath(name).is_absolute() or windows.is_absolute() or drive:
        return "a skill name is a name, not a path: give 'plugin:skill' or a skill's name"
    if ".." in PurePosixPath(name.replace("\\", "/")).parts:
        return "a skill name cannot contain '..'"
    return None


def _linked_files(folder: Path) -> dict[str, list[str]] | None:
    linked: dict[str, list[str]] = {}
    root = folder.resolve()
    for category in SUPPORT_DIRS:
        files = sorted(
            path.relative_to(folder).as_posix()
            for path in (folder / category).rglob("*")
            if path.is_file() and path.resolve().is_relative_to(root)
        )
        if files:
            linked[category] = files
    return linked or None


def _serve_file(folder: Path, file_path: str, label: str) -> str:
    if _path_error(file_path) is not None or PurePosixPath(file_path).is_absolute():
        return _fail(f"file_path {file_path!r} must be a relative path inside skill {label!r}")
    target = (folder / file_path).resolve()
    if not target.is_relative_to(folder.resolve()):
        return _fail(f"file_path {file_path!r} leaves the folder of skill {label!r}")
    if not target.is_file():
        return _fail(
            f"file {file_path!r} not found in skill {label!r}",
            available_files=_linked_files(folder),
        )
    try:
        data = target.read_bytes()[: MAX_SKILL_BYTES + 1]
        content = data.decode("utf-8")
    except UnicodeDecodeError:
        size = target.stat().st_size
        return _json(
            {
                "success": True,
                "name": label,
                "file": file_path,
                "is_binary": True,
                "content": f"[Binary file: {target.name}, size: {size} bytes]",
            }
        )
    except OSError as exc:
        return _fail(f"cannot read {file_path!r} of skill {label!r}: {exc}")
    return _json(
        {
            "success": True,
            "name": label,
            "file": file_path,
            "content": content,
            "file_type": target.suffix,
        }
    )


def _warn_injection(label: str, content: str) -> None:
    lowered = content.lower()
    if any(pattern in lowered for pattern in _INJECTION):
        logger.warning("skill %r contains text that may be a prompt injection", label)


def view_skill(pm: PluginManager, name: object, file_path: object = None) -> str:
    """Answer one ``skill_view`` call as Hermes does: JSON, ``success`` true or false; never raises.

    :param name: ``plugin:skill``, or a local skill's name.
    :param file_path: a linked file of the skill, relative to its folder.
    """
    if not isinstance(name, str) or not name.strip():
        return _fail("name is required: the skill's name, 'plugin:skill' for a plugin's skill")
    name = name.strip()
    error = _path_error(name, qualified=True)
    if error is not None:
        return _fail(error)
    wanted = file_path.strip() if isinstance(file_path, str) and file_path.strip() else None
    if ":" in name:
        return _view_plugin_skill(pm, name, wanted)
    for local_name, skill_md in _iter_local(local_skills_dir(pm)):
        if local_name == name:
            return _view_local_skill(name, skill_md, wanted)
    close = [s.name for s in list_skills(pm) if s.name.split(":")[-1] == name]
    hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
    return _fail(
        f"no skill {name!r}{hint} (a plugin's skill is named 'plugin:skill'; /skills lists them)"
    )


def _view_plugin_skill(pm: PluginManager, name: str, file_path: str | None) -> str:
    namespace, _, bare = name.partition(":")
    skill = pm.skills.get(name)
    if skill is None:
        siblings = [n for n in pm.skills.names() if n.startswith(f"{namespace}:")]
        if siblings:
            return _fail(
                f"skill {bare!r} not found in plugin {namespace!r}",
                available_skills=siblings,
                hint=f"the {namespace!r} plugin provides {len(siblings)} skill(s)",
            )
        return _fail(
            f"no plugin {namespace!r} provides skills (loaded plugins' skills: "
            f"{', '.join(pm.skills.names()) or 'none'})"
        )
    if not skill.path.exists():
        return _fail(f"skill {name!r}: its file {skill.path} no longer exists")
    folder = skill.path.parent if skill.path.is_file() else skill.path
    if file_path is not None:
        return _serve_file(folder, file_path, name)
    source = skill.path if skill.path.is_file() else skill.path / "SKILL.md"
    try:
        content = _read(source)
    except (OSError, ValueError) as exc:
        return _fail(f"cannot read skill {name!r}: {exc}")
    _warn_injection(name, content)
    frontmatter, body = split_frontmatter(content, str(source))
    siblings = [n.partition(":")[2] for n in pm.skills.names() if n.startswith(f"{namespace}:")]
    others = [s for s in siblings if s != bare]
    banner = f"[Bundle context: This skill is part of the '{namespace}' plugin."
    if others:
        banner += (
            f"\nSibling skills: {', '.join(others)}.\nUse the qualified form to load a "
            f"sibling (e.g. {namespace}:{others[0]})."
        )
    return _json(
        {
            "success": True,
            "name": name,
            "description": _description(frontmatter, body, skill.description),
            "content": banner + "]\n\n" + content,
            "linked_files": _linked_files(folder),
            "skill_dir": str(folder),
        }
    )


def _view_local_skill(name: str, skill_md: Path, file_path: str | None) -> str:
    folder = skill_md.parent
    if file_path is not None:
        return _serve_file(folder, file_path, name)
    try:
        content = _read(skill_md)
    except (OSError, ValueError) as exc:
        return _fail(f"cannot read skill {name!r}: {exc}")
    _warn_injection(name, content)
    frontmatter, body = split_frontmatter(content, str(skill_md))
    linked = _linked_files(folder)
    tags = frontmatter.get("tags")
    return _json(
        {
            "success": True,
            "name": name,
            "description": _description(frontmatter, body),
            "tags": [str(t) for t in tags] if isinstance(tags, list) else [],
            "content": content,
            "skill_dir": str(folder),
            "linked_files": linked,
            "usage_hint": (
                "To read a linked file, call skill_view(name, file_path) with file_path such "
                "as 'references/api.md'"
                if linked
                else None
            ),
        }
    )


_USES: weakref.WeakKeyDictionary[PluginManager, collections.Counter[str]] = (
    weakref.WeakKeyDictionary()
)


def _note_loaded(pm: PluginManager, name: object, result: str) -> None:
    """Fire ``on_skill_lifecycle`` with ``action="loaded"`` after a skill loaded whole."""
    if not isinstance(name, str) or not json.loads(result).get("success"):
        return
    from hermes_hooks.calling.facade import Hooks
    from hermes_hooks.host.tools import current_session

    uses = _USES.setdefault(pm, collections.Counter())
    uses[name] += 1
    session = current_session.get()
    hooks = session.hooks if session is not None else Hooks(pm)
    turn = session.turn if session is not None else None
    hooks.on_skill_lifecycle(
        telemetry_schema_version=TELEMETRY_SCHEMA_VERSION,
        action="loaded",
        skill_name=name,
        provenance="plugin" if ":" in name else "local",
        task_id=turn.task_id if turn is not None else "",
        session_id=session.session_id if session is not None else "",
        use_count=uses[name],
        reused=uses[name] > 1,
        reuse_after_patch=False,
    )


def install_skill_view(pm: PluginManager) -> None:
    """Register ``skill_view`` as a host tool of ``pm``, offered while there is a skill to load."""
    if pm.tools.owner_of("skill_view") == HOST:
        return

    def skill_view(args: dict[str, Any], **kwargs: Any) -> str:
        result = view_skill(pm, args.get("name"), args.get("file_path"))
        if not args.get("file_path"):
            _note_loaded(pm, args.get("name"), result)
        return result

    def has_skills() -> bool:
        """Offered while a plugin has registered a skill or $HERMES_HOME/skills holds one."""
        return len(pm.skills) > 0 or any(True for _ in _iter_local(local_skills_dir(pm)))

    pm.tools.register_tool(
        "skill_view",
        "skills",
        SKILL_VIEW_SCHEMA,
        skill_view,
        check_fn=has_skills,
        description=SKILL_VIEW_SCHEMA["description"],
        emoji="📚",
        owner=HOST,
    )
