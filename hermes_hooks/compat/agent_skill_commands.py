"""Hermes' ``agent.skill_commands``, the part plugins use: skills as slash commands.

``get_skill_commands()`` maps ``/slug`` to each local skill of the current home
(``skills/[category/]name/SKILL.md``; the slug is the frontmatter's ``name``, else the folder's,
lower case, hyphens for spaces and underscores, other characters dropped), leaving out the
names listed in ``skills.disabled`` and hidden folders, the first skill winning a slug.
``extract_user_instruction_from_skill_message`` recovers what the user typed from a turn that a
``/skill`` invocation expanded, so memory providers store that rather than the skill's body.
"""

from __future__ import annotations

import logging
import re
from typing import Any, Final

from hermes_hooks.compat import hermes_cli_config
from hermes_hooks.compat.current import current_home
from hermes_hooks.plugins.safe_yaml import YAMLLoadError, safe_load_yaml

__all__ = ["extract_user_instruction_from_skill_message", "get_skill_commands"]

logger = logging.getLogger(__name__)

_INVALID: Final = re.compile(r"[^a-z0-9-]")
_HYPHENS: Final = re.compile(r"-{2,}")
_SKILL_INVOCATION_PREFIX: Final = "[IMPORTANT: The user has invoked the "
_SINGLE_SKILL_MARKER: Final = "The full skill content is loaded below.]"
_SINGLE_SKILL_INSTRUCTION: Final = (
    "The user has provided the following instruction alongside the skill invocation: "
)
_RUNTIME_NOTE: Final = "\n\n[Runtime note:"
_BUNDLE_MARKER: Final = " skill bundle,"
_BUNDLE_USER_INSTRUCTION: Final = "\nUser instruction: "
_BUNDLE_FIRST_SKILL_BLOCK: Final = "\n\n[Loaded as part of the "


def extract_user_instruction_from_skill_message(content: Any) -> str | None:
    """Return what the user asked in a ``/skill``-expanded turn.

    A message that is not such scaffolding comes back unchanged; scaffolding with no
    instruction (a bare ``/skill``) and anything not a string give ``None``.
    """
    if not isinstance(content, str):
        return None
    if not content.startswith(_SKILL_INVOCATION_PREFIX):
        return content
    if _BUNDLE_MARKER in content:
        at = content.find(_BUNDLE_USER_INSTRUCTION)
        if at < 0:
            return None
        rest = content[at + len(_BUNDLE_USER_INSTRUCTION) :]
        end = rest.find(_BUNDLE_FIRST_SKILL_BLOCK)
        return (rest[:end] if end >= 0 else rest).strip() or None
    if _SINGLE_SKILL_MARKER in content:
        at = content.rfind(_SINGLE_SKILL_INSTRUCTION)  # the body may quote the marker
        if at < 0:
            return None
        rest = content[at + len(_SINGLE_SKILL_INSTRUCTION) :]
        end = rest.find(_RUNTIME_NOTE)
        return (rest[:end] if end >= 0 else rest).strip() or None
    return None


def _frontmatter(text: str, source: str) -> tuple[dict[str, Any], str]:
    if not text.startswith("---"):
        return {}, text
    head, sep, body = text[3:].partition("\n---")
    if not sep:
        return {}, text
    try:
        data = safe_load_yaml(head, source=source)
    except YAMLLoadError:
        return {}, body
    return (data if isinstance(data, dict) else {}), body.partition("\n")[2]


def _slug(name: str) -> str:
    slug = _INVALID.sub("", name.lower().replace(" ", "-").replace("_", "-"))
    return _HYPHENS.sub("-", slug).strip("-")


def _disabled() -> set[str]:
    skills = hermes_cli_config.load_config().get("skills")
    names = skills.get("disabled") if isinstance(skills, dict) else None
    return {str(n) for n in names} if isinstance(names, list) else set()


def get_skill_commands() -> dict[str, dict[str, Any]]:
    """Return ``{"/slug": {"name", "description", "skill_md_path", "skill_dir"}}``."""
    root = current_home() / "skills"
    found: dict[str, dict[str, Any]] = {}
    if not root.is_dir():
        return found
    disabled = _disabled()
    seen: set[str] = set()
    for skill_md in sorted([*root.glob("*/SKILL.md"), *root.glob("*/*/SKILL.md")]):
        if any(part.startswith(".") for part in skill_md.relative_to(root).parts):
            continue
        try:
            text = skill_md.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        meta, body = _frontmatter(text, str(skill_md))
        name = str(meta.get("name") or skill_md.parent.name)
        if name in seen or name in disabled:
            continue
        seen.add(name)
        slug = _slug(name)
        if not slug:
            continue
        key = f"/{slug}"
        if key in found:
            logger.warning(
                "Skill %r maps to slash command %s already claimed by %r; keeping the first",
                name,
                key,
                found[key]["name"],
            )
            continue
        description = str(meta.get("description") or "")
        if not description:
            lines = (line.strip() for line in body.strip().splitlines())
            description = next((line[:80] for line in lines if line and line[0] != "#"), "")
        found[key] = {
            "name": name,
            "description": description or f"Invoke the {name} skill",
            "skill_md_path": str(skill_md),
            "skill_dir": str(skill_md.parent),
        }
    return found
