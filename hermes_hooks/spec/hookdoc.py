"""Generate ``docs/reference/hooks.md`` from the hookspecs: ``python -m hermes_hooks.spec.hookdoc``.

Each hook's section is its hookspec's docstring: the opening paragraphs, one table row per
``:param name:`` (the type from the signature, or a ``:type name:`` field where a plain
annotation says too little), ``:returns:`` as **Returns.**, the ``Error policy:`` paragraph,
then whatever follows (examples as fenced code). The summary table comes from each hook's
contract. The prose that is about every hook is :data:`INTRO` and :data:`OBSERVER_SCHEMA`,
here and nowhere else. ``tests/test_hookdoc.py`` fails when the page is out of date, so a new
hook is documented by writing its hookspec, as pytest documents its hooks.
"""

from __future__ import annotations

import inspect
import re
import sys
from collections.abc import Iterator
from typing import Final

import attrs

from hermes_hooks.spec import hookspecs
from hermes_hooks.spec.contract import HookContract, Mode, Policy, get_contract

__all__ = ["HookDoc", "hook_docs", "parse_docstring", "render", "render_annotation"]

_FIELD: Final = re.compile(r"^:(param|type) (\w+):\s?(.*)$|^:(returns):\s?(.*)$")
_LITERAL: Final = re.compile(r"^Literal\[(.*)\]$")


@attrs.frozen
class HookDoc:
    """One hook's documentation, read off its hookspec's docstring."""

    name: str
    opening: str
    params: tuple[tuple[str, str, str], ...]
    """``(argument, type, description)`` in signature order."""
    returns: str
    policy: str
    rest: str


def render_annotation(annotation: str) -> str:
    """Write a hookspec's annotation as the reference shows it: ``Literal["a", "b"]`` as
    ``"a" | "b"``, everything in backticks."""
    text = annotation.strip().strip("'\"") if annotation[:1] in "'\"" else annotation.strip()
    literal = _LITERAL.match(text)
    if literal:
        text = " | ".join(part.strip() for part in literal.group(1).split(","))
    return f"`{text}`"


def _fields(lines: list[str]) -> Iterator[tuple[str, str, str]]:
    """Yield ``(field, name, text)`` for each ``:param:``/``:type:``/``:returns:`` field; the
    text runs on over indented and blank lines, dedented by four."""
    current: list[str] | None = None
    key = ("", "")
    for line in [*lines, "<end>"]:
        match = _FIELD.match(line)
        if current is not None and (match or (line and not line.startswith("    "))):
            yield key[0], key[1], "\n".join(current).strip()
            current = None
        if match:
            if match.group(1):
                key, current = (match.group(1), match.group(2)), [match.group(3)]
            else:
                key, current = ("returns", ""), [match.group(5)]
        elif current is not None:
            current.append(line[4:])


def _markdown(text: str) -> str:
    """reST's inline literals (double backticks) as Markdown's."""
    return text.replace("``", "`")


def _joined(text: str) -> str:
    """A table cell: the lines of a field joined into one, ``|`` escaped."""
    return " ".join(_markdown(text).split()).replace("|", "\\|")


def parse_docstring(name: str, doc: str, annotations: dict[str, str]) -> HookDoc:
    """Read one hookspec docstring (see the module's docstring for its shape)."""
    lines = doc.splitlines()
    first_field = next(i for i, line in enumerate(lines) if _FIELD.match(line))
    end_fields = next(
        (i for i, line in enumerate(lines) if i > first_field and line.startswith("Error policy:")),
        len(lines),
    )
    found = list(_fields(lines[first_field:end_fields]))
    types = {n: text for field, n, text in found if field == "type"}
    params = tuple(
        (n, types.get(n) or render_annotation(annotations[n]), text)
        for field, n, text in found
        if field == "param"
    )
    returns = next((text for field, _n, text in found if field == "returns"), "")
    tail = "\n".join(lines[end_fields:]).strip()
    policy, _, rest = tail.partition("\n\n")
    return HookDoc(
        name=name,
        opening="\n".join(lines[:first_field]).strip(),
        params=params,
        returns=returns,
        policy=policy.removeprefix("Error policy:").strip(),
        rest=rest.strip(),
    )


def hook_docs() -> list[HookDoc]:
    """Every hook's documentation, in the order of ``hookspecs.py``."""
    docs = []
    for name, spec in vars(hookspecs).items():
        if name in hookspecs.VALID_HOOKS and callable(spec):
            annotations = {
                p.name: str(p.annotation) for p in inspect.signature(spec).parameters.values()
            }
            docs.append(parse_docstring(name, inspect.getdoc(spec) or "", annotations))
    return docs


_MODES: Final[dict[Mode, str]] = {
    Mode.OBSERVE: "observe",
    Mode.FIRST_RESULT: "first result",
    Mode.COLLECT: "collect",
}


def _summary_row(doc: HookDoc, contract: HookContract) -> str:
    fits = "ignored" if contract.mode is Mode.OBSERVE else _joined(contract.expects)
    policy = "closed" if contract.policy is Policy.CLOSED else "open"
    bounded = "yes" if contract.timeout else "no"
    mode = _MODES[contract.mode]
    return f"| [`{doc.name}`](#{doc.name}) | {mode} | {fits} | {policy} | {bounded} |"


def _section(doc: HookDoc) -> list[str]:
    out = [f"## `{doc.name}`", "", _markdown(doc.opening), ""]
    out += ["| argument | type | description |", "| --- | --- | --- |"]
    out += [f"| `{n}` | {_joined(t)} | {_joined(d)} |" for n, t, d in doc.params]
    out += ["", f"**Returns.** {_markdown(doc.returns)}", ""]
    out.append(f"**Error policy.** {_markdown(doc.policy)}")
    if doc.rest:
        out += ["", doc.rest]
    return [*out, ""]


def render() -> str:
    """The whole of ``docs/reference/hooks.md``."""
    docs = hook_docs()
    out = [GENERATED, "", INTRO.strip(), "", "## Summary", ""]
    out += [
        "| hook | mode | fitting return | on error | bounded |",
        "| --- | --- | --- | --- | --- |",
    ]
    for doc in docs:
        out.append(_summary_row(doc, get_contract(getattr(hookspecs, doc.name))))
    out += ["", OBSERVER_SCHEMA.strip(), ""]
    for doc in docs:
        out += _section(doc)
    return "\n".join(out).rstrip() + "\n"


GENERATED: Final = (
    "<!-- Generated from hermes_hooks/spec/hookspecs.py by `python -m hermes_hooks.spec.hookdoc"
    " > docs/reference/hooks.md`: edit the hookspecs, not this page. -->"
)

INTRO: Final = """\
# Hook reference

Every hook a hermes-hooks host fires, with the keyword arguments it passes, what a fitting return
value looks like, and what happens when an implementation raises. The hooks, their names and
their argument names are those of the Hermes Agent plugin contract, so a plugin written for
Hermes runs unchanged. This page is generated from `hermes_hooks/spec/hookspecs.py`.

## Implementing a hook

There are two ways, and both end up as ordinary pluggy hook implementations owned by your plugin.

**pluggy-native.** Mark a module-level function (or a method of a registered object) with
`@hookimpl` and give it the hook's name. Name only the arguments you need; pluggy passes just
those. Naming an argument the hook does not have is an error when the plugin is registered, and
`**kwargs` receives nothing in a pluggy-native implementation.

```python
from hermes_hooks import hookimpl


@hookimpl
def post_tool_call(tool_name, duration_ms, status):
    print(f"{tool_name} took {duration_ms} ms ({status})")


@hookimpl(tryfirst=True)
def pre_tool_call(tool_name, args):
    if tool_name == "terminal" and "rm -rf /" in args.get("command", ""):
        return {"action": "block", "message": "rm -rf / is not allowed here"}
    return None
```

All pluggy options work: `tryfirst`, `trylast`, `wrapper=True`, `hookwrapper=True`, `specname`,
`optionalhook`.

**Hermes-style.** In the plugin's `register(ctx)`, call `ctx.register_hook(name, callback)`. The
callback receives only the keyword arguments its signature names, or all of them if it takes
`**kwargs` (recommended: hooks gain arguments over time, and a `**kwargs` callback keeps
working). A hook name the host does not know is kept and warned about once, so a newer plugin
still loads on an older host.

```python
def log_tool(tool_name, duration_ms=0, **kwargs):
    print(f"{tool_name}: {duration_ms} ms")


def register(ctx):
    ctx.register_hook("post_tool_call", log_tool)
```

**Order.** Order is pluggy's: implementations registered later run first, and `tryfirst` /
`trylast` move an implementation to the front or the back. Plugins load bundled, then user, then
project, then pip entry points, alphabetically within a source, so a user's plugin runs before a
bundled one. `hermes hooks` prints the resolved order of every hook.

**The contract.** Every hook carries a contract, read by the manager to guard each
implementation:

- its **mode**: *observe* (every implementation runs, returns are ignored), *first result*
  (implementations run until one returns a fitting value) or *collect* (every implementation runs
  and the fitting values are combined into one answer);
- its **result check**: a non-`None` return that does not fit is logged as that plugin's error and
  treated as `None`, so a first-result hook moves on to the next implementation;
- its **error policy**: *open* (a raising implementation is logged, counted on its plugin and
  skipped) or *closed* (a raising implementation turns into the hook's safe decision; for
  `pre_tool_call`, a block naming the plugin).

Most hooks also bound each callback by `plugins.hook_callback_timeout` (30 s by default): past
it, the callback is skipped or, for `pre_tool_call`, blocks the call; the sections below say
which hooks are not bounded, and [async hooks and timeouts](../explanation/async-and-timeouts.md)
explains the rules, and how `async def` implementations run.

What one implementation may return is bounded too, by `plugins.max_hook_result_bytes` (16 MiB
by default; `0`: no bound): text counts its UTF-8 bytes, bytes theirs, and a dict or list its
items, nested. A result past it (a 200 MB string from a transform, a decision whose message is
huge) is that plugin's error, named in its status and the log (`returned str of 209715200
bytes, more than plugins.max_hook_result_bytes (16777216 bytes) allows`), and is treated as the
hook's error policy says: skipped, or for `pre_tool_call` a block naming the plugin. A wrapper
that puts a result past the bound in place of the inner one is undone and reported.

```yaml
plugins:
  max_hook_result_bytes: 16777216   # the default
```

In **strict** mode (the test fixtures, or `HERMES_PLUGINS_STRICT=1`) a raising
implementation or an unfitting return re-raises instead, so mistakes fail the test that made them.

A failure's traceback shows your frames, not the framework's way to them: the facade, the call
plan, pluggy's loop, the guard and the bounded call's worker are cut from the tracebacks the
framework logs (at `DEBUG` for an open hook, `--debug` on the command line) and hidden from
pytest's report of a failing test. Only frames *before* a frame of yours are cut, so an error of
the framework itself keeps all of them; `HERMES_FULL_TRACEBACKS=1` (or pytest's `--full-trace`)
keeps every frame ([`calling/tracebacks.py`](../../hermes_hooks/calling/tracebacks.py)).
"""

OBSERVER_SCHEMA: Final = """\
Identifiers such as `task_id`, `turn_id`, `api_request_id` and `tool_call_id` are opaque strings,
`""` when the host has none. Arguments that carry user content (messages, tool arguments and
results, commands) may contain secrets: treat them accordingly.

### The observer schema

Every hook also passes `telemetry_schema_version`, the version of the payload's shape:
`"hermes.observer.v1"` today, as Hermes' `invoke_hook` stamps it on every call. The reference
host passes it at every fire site, `pm.invoke_hook(...)` adds it when the caller leaves it out,
and the facade (`Hooks(pm)`) defaults to it. A `**kwargs` callback receives it like any other
argument; an implementation that names it can refuse a payload it does not understand:

```python
from hermes_hooks import hookimpl


@hookimpl
def post_tool_call(tool_name, status, telemetry_schema_version):
    if telemetry_schema_version != "hermes.observer.v1":
        return None  # a newer payload: this exporter does not know its fields
    print(f"{tool_name}: {status}")
```
"""


if __name__ == "__main__":
    sys.stdout.write(render())
