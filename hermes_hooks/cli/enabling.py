"""Enabling a plugin from the command line: the config change, its pip dependencies, and the
tool-override question.

Shared by ``hermes plugins enable`` and ``hermes plugins install --enable``. Missing
``pip_dependencies`` are offered here, after the person agrees (or ``--yes``), never when
plugins load. A project plugin is shown first for what trusting it means (its files and their
digests, what it would replace, its pip dependencies) and enabled only when the person agrees
on a terminal, or passed ``--yes``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from hermes_hooks.cli.common import confirm, get_home, is_terminal, warn

if TYPE_CHECKING:
    from hermes_hooks.plugins.discovery import Candidate

__all__ = [
    "consent_to_capabilities",
    "consent_to_pip",
    "enable_candidate",
    "offer_pip_dependencies",
    "review_project_plugin",
]

_SHOWN_FILES = 40


def consent_to_pip(what: str, yes: bool) -> tuple[bool, str]:
    """Return whether pip may install *what*, and why not."""
    if yes:
        return True, ""
    if not is_terminal():
        return False, "no terminal to ask; pass --yes to agree"
    if confirm(f"Install {what} into {sys.executable} with pip?"):
        return True, ""
    return False, "you declined"


def consent_to_capabilities(home: Path, candidate: Candidate, yes: bool) -> list[str] | None:
    """Show the capabilities *candidate*'s manifest declares and ask to grant them (``--yes``
    grants them); the answer is stored with the hash of the declared set, so a changed set is
    asked about again, and an unchanged one is not.

    :returns: the capabilities granted after this, or ``None`` when nothing was asked.
    """
    from hermes_hooks.plugins.capabilities import (
        CAPABILITIES,
        consent_needed,
        known,
        record_consent as record,
    )
    from hermes_hooks.plugins.config import PluginsConfig

    manifest = candidate.manifest
    declared = list(manifest.capabilities) if manifest is not None else []
    unknown = [c for c in declared if c not in CAPABILITIES]
    if unknown:
        warn(
            f"{candidate.key!r} declares capabilities this version does not know, which are "
            f"never granted: {', '.join(unknown)} (known: {', '.join(sorted(CAPABILITIES))})"
        )
    entry = PluginsConfig.from_home(home).entry(candidate.key)
    pending = consent_needed(entry, declared)
    if not pending:
        return None
    click.echo(f"Plugin {candidate.key!r} asks for capabilities:")
    for capability in pending:
        click.echo(f"  {capability}: {CAPABILITIES[capability].description}")
    if yes:
        granted = pending
    elif not is_terminal():
        click.echo(
            f"Not granted: no terminal to ask. Run 'hermes plugins enable {candidate.key} "
            f"--yes' to grant them."
        )
        return []
    else:
        granted = pending if confirm("Grant these capabilities?") else []
    now = record(home, candidate.key, granted, known(declared))
    if granted:
        click.echo(f"Granted {', '.join(granted)} to {candidate.key!r} (plugins.entries).")
    else:
        click.echo(f"{candidate.key!r} runs without {', '.join(pending)}.")
    return now


def offer_pip_dependencies(candidate: Candidate, yes: bool) -> bool:
    """Install *candidate*'s missing ``pip_dependencies`` if the person agrees; return whether
    nothing is missing now."""
    from hermes_hooks.admin import install as installer

    manifest = candidate.manifest
    missing = installer.missing_pip_dependencies(manifest) if manifest is not None else []
    if not missing:
        return True
    click.echo(f"Plugin {candidate.key!r} needs pip packages: {', '.join(missing)}.")
    agreed, why = consent_to_pip("them", yes)
    if not agreed:
        warn(
            f"not installing them ({why}): {candidate.key!r} will fail to import until they "
            f"are installed ('hermes plugins enable {candidate.key} --yes', or pip install)"
        )
        return False
    installer.run_pip(missing)
    click.echo(f"Installed {', '.join(missing)}.")
    return True


def review_project_plugin(home: Path, candidate: Candidate, yes: bool) -> tuple[bool, str | None]:
    """Show what enabling a project plugin would trust; return whether the person agrees, and
    the hash of the files shown (``None`` for a plugin that is not a project plugin): only
    exactly those bytes may then be trusted.

    Nothing is shown when its files are trusted already as they are. ``yes`` agrees; without
    a terminal and without ``yes`` the answer is no.

    :raises PluginTrustError: its folder cannot be read to be trusted.
    """
    from hermes_hooks.errors import ConfigError
    from hermes_hooks.plugins.config import PluginsConfig
    from hermes_hooks.plugins.replacing import describe_place
    from hermes_hooks.plugins.trust import TRUSTED_FILES_FIELD, TRUSTED_HASH_FIELD, read_content

    if candidate.source != "project" or candidate.path is None:
        return True, None
    content = read_content(candidate.path)
    shown = content.hash
    try:
        entry = PluginsConfig.from_home(home).entry(candidate.key)
    except ConfigError:
        entry = {}
    if entry.get(TRUSTED_HASH_FIELD) == content.hash and entry.get(TRUSTED_FILES_FIELD) == dict(
        content.digests
    ):
        return True, shown
    key = candidate.key
    click.echo(
        f"Project plugin {key!r} comes with this repository ({candidate.path}). Enabling it "
        f"runs its code in every hermes command here, as its files are now:"
    )
    for relative, digest in list(content.digests.items())[:_SHOWN_FILES]:
        why = content.refused.get(relative)
        click.echo(f"  sha256:{digest[:16]}  {relative}" + (f"  (never run: {why})" if why else ""))
    if len(content.digests) > _SHOWN_FILES:
        click.echo(f"  ... and {len(content.digests) - _SHOWN_FILES} more files")
    if candidate.displaces is not None:
        click.echo(f"It would replace {describe_place(candidate.displaces)}, which stops loading.")
    manifest = candidate.manifest
    if manifest is not None and manifest.pip_dependencies:
        click.echo(f"It asks for pip packages: {', '.join(manifest.pip_dependencies)}.")
    if yes:
        return True, shown
    if not is_terminal():
        warn(
            f"{key!r} not enabled: no terminal to ask; review the files above, then run "
            f"'hermes plugins enable {key} --yes' to trust them"
        )
        return False, shown
    if confirm(f"Trust these files and enable {key!r}?"):
        return True, shown
    warn(f"{key!r} not enabled: you declined")
    return False, shown


def _load_timeout(home: Path) -> float | None:
    """The operator's ``plugins.load_timeout``, or ``None`` (the default) when unreadable."""
    from hermes_hooks.errors import ConfigError
    from hermes_hooks.plugins.config import PluginsConfig

    try:
        return PluginsConfig.from_home(home).load_timeout
    except ConfigError:
        return None


def _grant_tool_override(home: Path, candidate: Candidate, answer: bool | None) -> None:
    """Ask (once) whether a non-bundled plugin may replace host tools, and record the answer."""
    from hermes_hooks.admin.actions import (
        get_tool_override_grant,
        probe_tool_overrides,
        set_tool_override,
    )

    key = candidate.key
    if answer is None:
        if candidate.source == "bundled" or candidate.error is not None:
            return  # bundled plugins are trusted; a broken one registers nothing
        if get_tool_override_grant(home, key) is not None:
            return  # asked before: the recorded answer stands (flags change it)
        probe = probe_tool_overrides(candidate, load_timeout=_load_timeout(home))
        if probe.error is not None:
            warn(f"could not load {key!r} to check whether it replaces host tools: {probe.error}")
            return
        if not probe.tools:
            return
        click.echo(f"Plugin {key!r} asks to replace host tools: {', '.join(probe.tools)}.")
        if not is_terminal():
            click.echo(
                f"Not allowed: no terminal to ask. Run 'hermes plugins enable {key} "
                f"--allow-tool-override' to allow it."
            )
            return
        answer = confirm("Allow it to replace host tools? It sees every call to them")
    set_tool_override(home, key, answer)
    if answer:
        click.echo(f"Allowed {key!r} to replace host tools (plugins.entries.{key}).")
    else:
        click.echo(
            f"{key!r} may not replace host tools; 'hermes plugins enable {key} "
            f"--allow-tool-override' allows it later."
        )


def enable_candidate(
    ctx: click.Context,
    candidate: Candidate,
    allow: bool | None,
    *,
    yes: bool = False,
    offer_pip: bool = True,
) -> None:
    """Enable *candidate* in config, offer its missing pip dependencies (``--yes`` agrees), and
    settle its tool-override grant; say what happened.

    :param offer_pip: ask about missing pip dependencies (``install`` asked already).
    """
    from hermes_hooks.admin.actions import set_enabled

    home = get_home(ctx)
    key = candidate.key
    agreed, shown = review_project_plugin(home, candidate, yes)
    if not agreed:
        ctx.exit(1)
    if set_enabled(home, candidate, True, shown=shown):
        click.echo(f"Plugin {key!r} enabled.")
    else:
        click.echo(f"Plugin {key!r} is already enabled.")
    if candidate.error is None:
        consent_to_capabilities(home, candidate, yes)
    if candidate.error is not None:
        warn(f"{key!r} cannot load as it is: {candidate.error}")
    elif offer_pip and not offer_pip_dependencies(candidate, yes):
        return  # the override probe would only import it and fail
    if _say_family(candidate):
        _grant_tool_override(home, candidate, allow)


def _say_family(candidate: Candidate) -> bool:
    """Say when a provider family, not plugins.enabled, decides whether the plugin loads.

    :returns: whether the plugin can load here at all (a family-served kind without its
        family is listed, never imported, so there is nothing to probe).
    """
    from hermes_hooks.plugins import extensions
    from hermes_hooks.plugins.kinds import FAMILY_KINDS

    if candidate.kind not in FAMILY_KINDS:
        return True
    what, hermes_key = FAMILY_KINDS[candidate.kind]
    family = extensions.find_kind_family(candidate.kind)
    leaf = candidate.key.rsplit("/", 1)[-1]
    if family is None:
        warn(
            f"{candidate.key!r} is a {what} plugin: Hermes serves it through {hermes_key}, not "
            f"plugins.enabled, and this version has no {what} family yet, so it is listed, "
            f"not loaded"
        )
        return False
    from hermes_hooks.plugins.kinds import LOADED_ON_LOOKUP

    if candidate.kind in LOADED_ON_LOOKUP:
        needed = (
            "plugins.enabled lets it load"
            if candidate.source in ("project", "entrypoint")
            else "it needs no plugins.enabled"
        )
        click.echo(
            f"{candidate.key!r} is a {what} plugin: it is imported on the first profile lookup "
            f"({needed}); 'hermes models' lists its profiles and 'hermes models use NAME' "
            f"chooses one."
        )
        return True
    cli_name = getattr(family, "cli_name", None)
    how = (
        f"'hermes tools {cli_name} --provider {leaf}'"
        if cli_name
        else f"set {family.selection_key}: {leaf} in config.yaml"
    )
    click.echo(
        f"{candidate.key!r} is a {what} plugin: it loads when {family.selection_key} "
        f"names it ({how})."
    )
    return True
