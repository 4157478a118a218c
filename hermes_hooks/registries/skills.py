"""Skills that plugins ship: ``plugin:skill`` names mapped to files inside the plugin folder."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

import attrs

from hermes_hooks.errors import RegistrationError
from hermes_hooks.registries.base import Handle, Registry

__all__ = ["Skill", "SkillNotFoundError", "SkillRegistry"]

_VALID_SKILL_NAME: Final = re.compile(r"^[A-Za-z0-9_-]+$")
"""Hermes' rule for the part after ``plugin:``."""


class SkillNotFoundError(RegistrationError, FileNotFoundError):
    """A skill's path does not exist; a ``FileNotFoundError``, as Hermes raises."""


@attrs.frozen
class Skill:
    """A skill: its qualified name ``plugin:skill``, its file and what it is for."""

    name: str
    path: Path
    description: str
    owner: str
    frontmatter: Mapping[str, Any] = attrs.field(default=MappingProxyType({}), hash=False)


class SkillRegistry(Registry[Skill]):
    """Skills by qualified name ``<plugin name>:<skill name>``."""

    def __init__(self) -> None:
        super().__init__("skill")

    def register_skill(
        self,
        namespace: str,
        name: str,
        path: str | Path,
        *,
        root: Path | None,
        description: str = "",
        frontmatter: Mapping[str, Any] | None = None,
        owner: str,
    ) -> Handle:
        """Register skill ``name`` of plugin ``namespace``.

        :param root: the plugin folder; a relative ``path`` is taken from it, and the resolved
            path (symlinks followed) must stay inside it. Without a folder, ``path`` must be
            absolute.
        :raises ValueError: ``name`` contains ``:`` (the namespace is added for you) or other
            characters than ``[A-Za-z0-9_-]``.
        :raises RegistrationError: the path leaves the plugin folder, or the name is another
            plugin's.
        :raises SkillNotFoundError: the path does not exist (a ``RegistrationError`` and a
            ``FileNotFoundError``).
        """
        if not isinstance(name, str) or not name:
            raise ValueError(
                f"skill name of plugin {owner!r} must be a non-empty string, found {name!r}"
            )
        if ":" in name:
            raise ValueError(
                f"skill name {name!r} of plugin {owner!r} must not contain ':'; the "
                f"'{namespace}:' prefix is added for you"
            )
        if not _VALID_SKILL_NAME.match(name):
            raise ValueError(
                f"skill name {name!r} of plugin {owner!r} is invalid: expected letters, digits, "
                f"'_' or '-'"
            )
        candidate = Path(path)
        if not candidate.is_absolute():
            if root is None:
                raise RegistrationError(
                    f"skill {name!r} of plugin {owner!r}: relative path {str(path)!r} needs a "
                    f"plugin folder, and this plugin has none; pass an absolute path"
                )
            candidate = root / candidate
        # Resolve before the existence check, so nothing outside the folder is even probed.
        resolved = candidate.resolve()
        if root is not None and not resolved.is_relative_to(root.resolve()):
            raise RegistrationError(
                f"skill {name!r} of plugin {owner!r}: path {str(path)!r} resolves to "
                f"{resolved}, outside the plugin folder {root}"
            )
        if not resolved.exists():
            raise SkillNotFoundError(
                f"skill {name!r} of plugin {owner!r}: path {resolved} does not exist"
            )
        qualified = f"{namespace}:{name}"
        skill = Skill(
            name=qualified,
            path=resolved,
            description=description,
            owner=owner,
            frontmatter=MappingProxyType(dict(frontmatter or {})),
        )
        return self.register(qualified, skill, owner=owner)

    def find(self, qualified_name: str) -> Path | None:
        """Return the file of skill ``plugin:skill``, or ``None`` when there is none."""
        skill = self.get(qualified_name)
        return skill.path if skill is not None else None
