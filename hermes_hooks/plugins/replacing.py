"""Two plugins of one key: which one loads, and what its status says about the other.

A later source wins on a key (bundled < user < project < entry point, see
:mod:`hermes_hooks.plugins.discovery`), with one exception: an untrusted project plugin never
displaces a plugin the person already runs. With ``HERMES_ENABLE_PROJECT_PLUGINS=1`` a
repository that ships ``.hermes/plugins/no-rm/`` would otherwise switch off the user's enabled
``no-rm`` (the project copy refused for want of a hash, the user's gone too). So the user's
stays loaded, and its status says that a project plugin wants to replace it; ``hermes plugins
enable no-rm`` shows what trusting the project plugin would mean before it records anything.

An entry point still wins over a user plugin of the same key (the operator installed it), and
that is said too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from hermes_hooks.errors import PluginTrustError
from hermes_hooks.plugins.discovery import Candidate

__all__ = ["Replacement", "describe_place", "settle_replacement"]


@attrs.frozen
class Replacement:
    """The outcome for one key.

    :param candidate: the plugin to gate and load.
    :param note: what its status says about the other plugin of its key, or ``None``.
    :param checked: a project plugin's content as its trust check read it (a
        :class:`~hermes_hooks.plugins.trust.TrustedContent`), so it is not read twice.
    """

    candidate: Candidate
    note: str | None = None
    checked: Any = None


def describe_place(candidate: Candidate) -> str:
    """Say where a plugin comes from: ``the user plugin in PATH``, ``the entry point ...``."""
    if candidate.path is not None:
        return f"the {candidate.source} plugin in {candidate.path}"
    where = f" of {candidate.distribution}" if candidate.distribution else ""
    return f"the pip-installed entry point {candidate.key!r}{where}"


def settle_replacement(candidate: Candidate, entry: Mapping[str, object]) -> Replacement:
    """Decide between *candidate* and the plugin it displaces, if any.

    :param entry: ``plugins.entries.<key>`` from ``config.yaml`` (for a project plugin's trust).
    """
    earlier = candidate.displaces
    if earlier is None:
        return Replacement(candidate)
    if candidate.source == "project" and candidate.path is not None and earlier.error is None:
        from hermes_hooks.plugins.trust import verify_trusted  # hashlib: project plugins only

        try:
            checked = verify_trusted(candidate.path, candidate.key, entry)
        except PluginTrustError as exc:
            return Replacement(
                earlier,
                note=(
                    f"{describe_place(candidate)} wants to replace it and was refused, so this "
                    f"one stays: {exc}"
                ),
            )
        return Replacement(
            candidate,
            note=f"replaces {describe_place(earlier)} (trusted with 'hermes plugins enable')",
            checked=checked,
        )
    return Replacement(candidate, note=f"replaces {describe_place(earlier)}")
