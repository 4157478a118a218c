"""``hermes skills``: the skills the agent can load with ``skill_view``, and one skill's text."""

from __future__ import annotations

import json

import click

from hermes_hooks.cli.common import build_manager, echo_json, fit_table, terminal_width

__all__ = ["skills"]


@click.group("skills", invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of skills.")
@click.pass_context
def skills(ctx: click.Context, as_json: bool) -> None:
    """List the skills the agent can load: the plugins' (plugin:skill) and the local ones.

    Local skills are $HERMES_HOME/skills/[category/]NAME/SKILL.md. The model loads one with
    the skill_view tool; in a chat, /skills lists them too.

    \b
    Examples:
      hermes skills
      hermes skills view my-plugin:my-workflow
    """
    if ctx.invoked_subcommand is not None:
        return
    from hermes_hooks.host.skills import list_skills

    found = list_skills(build_manager(ctx))
    if as_json:
        echo_json([skill.to_dict() for skill in found])
        return
    if not found:
        click.echo(
            "No skills: a plugin registers one with ctx.register_skill, or put one in "
            "$HERMES_HOME/skills/NAME/SKILL.md."
        )
        return
    rows = [[skill.name, skill.source, skill.description] for skill in found]
    for line in fit_table(["NAME", "SOURCE", "DESCRIPTION"], rows, terminal_width()):
        click.echo(line)


@skills.command("view")
@click.argument("name")
@click.option("--file", "file_path", metavar="PATH", help="A linked file of the skill.")
@click.option("--json", "as_json", is_flag=True, help="Print what skill_view returns.")
@click.pass_context
def view(ctx: click.Context, name: str, file_path: str | None, as_json: bool) -> None:
    """Show skill NAME as the model sees it through skill_view (exit 1 when there is none).

    \b
    Examples:
      hermes skills view my-plugin:my-workflow
      hermes skills view my-plugin:my-workflow --file references/api.md
    """
    from hermes_hooks.host.skills import view_skill

    answer = json.loads(view_skill(build_manager(ctx), name, file_path))
    if as_json:
        echo_json(answer)
    elif answer.get("success"):
        click.echo(answer["content"], nl=not str(answer["content"]).endswith("\n"))
        linked = answer.get("linked_files") or {}
        for folder, files in linked.items():
            click.echo(f"[{folder}] {', '.join(files)}", err=True)
    else:
        click.echo(f"Error: {answer['error']}", err=True)
        for key in ("available_skills", "available_files"):
            if answer.get(key):
                click.echo(f"  {key.replace('_', ' ')}: {answer[key]}", err=True)
    if not answer.get("success"):
        ctx.exit(1)
