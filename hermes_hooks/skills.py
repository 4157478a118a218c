"""Skills that plugins ship: ``plugin:skill`` names mapped to files inside the plugin folder."""

from __future__ import annotations

from pathlib import Path

import attrs

from hermes_hooks.errors import RegistrationError
from hermes_hooks.registries import Handle, Registry

__all__ = ["Skill", "SkillRegistry"]


@attrs.frozen
class Skill:
    """A skill: its qualified name ``plugin:skill``, its file and what it is for."""

    name: str
    path: Path
    description: str
    owner: str


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
        owner: str,
    ) -> Handle:
        """Register skill ``name`` of plugin ``namespace``.

        :param root: the plugin folder; a relative ``path`` is taken from it, and the resolved
            path (symlinks followed) must stay inside it.
        :raises ValueError: ``name`` contains ``:`` (it is added by the namespace).
        :raises RegistrationError: the path does not exist or leaves the plugin folder.
        """
        if not isinstance(name, str) or not name:
            raise ValueError(f"skill name must be a non-empty string, found {name!r}")
        if ":" in name:
            raise ValueError(
                f"skill name {name!r} of plugin {owner!r} must not contain ':'; the "
                f"'{namespace}:' prefix is added for you"
            )
        candidate = Path(path)
        if not candidate.is_absolute() and root is not None:
            candidate = root / candidate
        resolved = candidate.resolve()
        if root is not None and not resolved.is_relative_to(root.resolve()):
            raise RegistrationError(
                f"skill {name!r} of plugin {owner!r}: path {str(path)!r} resolves to "
                f"{resolved}, outside the plugin folder {root}"
            )
        if not resolved.exists():
            raise RegistrationError(
                f"skill {name!r} of plugin {owner!r}: path {resolved} does not exist"
            )
        qualified = f"{namespace}:{name}"
        skill = Skill(qualified, resolved, description, owner)
        return self.register(qualified, skill, owner=owner)

    def find(self, qualified_name: str) -> Path | None:
        """Return the file of skill ``plugin:skill``, or ``None`` when there is none."""
        skill = self.get(qualified_name)
        return skill.path if skill is not None else None
