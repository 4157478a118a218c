"""V4A patches: the ``patch`` tool's ``mode: "patch"`` (Hermes' ``tools/patch_parser.py``, the
format of Codex and Cline).

A patch is wrapped in ``*** Begin Patch`` / ``*** End Patch`` (optional) and holds
operations, each starting on a marker line:

- ``*** Update File: <path>`` then hunks: ``@@ <hint> @@`` starts one (the hint, a line of
  the file near the change, narrows where it applies), then lines `` context``, ``-removed``,
  ``+added`` (a line without a prefix is context; ``\\ No newline...`` is skipped);
- ``*** Add File: <path>`` then ``+`` lines: a new file (an existing one is refused);
- ``*** Delete File: <path>``;
- ``*** Move File: <from> -> <to>`` (an existing destination is refused).

Applying is two-phase, as Hermes does: every operation is first simulated on the files as
they are (later hunks see what earlier ones made); if any fails, nothing is written and the
errors are listed; otherwise the results are written, each file atomically. A hunk whose
change is there already is a no-op; a patch with no change at all is refused.
"""

from __future__ import annotations

import difflib
import enum
import re
from collections.abc import Callable
from pathlib import Path
from typing import Final

import attrs

__all__ = ["Hunk", "Operation", "PatchOutcome", "apply_patch", "parse_patch"]

_BEGIN: Final = re.compile(r"^\*\*\*\s*Begin\s+Patch\s*$")
_END: Final = re.compile(r"^\*\*\*\s*End\s+Patch\s*$")
_EOF: Final = re.compile(r"^\*\*\*\s*End\s+of\s+File\s*$")
_HINT: Final = re.compile(r"@@\s*(.+?)\s*@@")


class Kind(enum.Enum):
    """What an operation does."""

    UPDATE = "update"
    ADD = "add"
    DELETE = "delete"
    MOVE = "move"


_MARKERS: Final = (
    (Kind.UPDATE, re.compile(r"^\*\*\*\s*Update\s+File:\s*(.+)$")),
    (Kind.ADD, re.compile(r"^\*\*\*\s*Add\s+File:\s*(.+)$")),
    (Kind.DELETE, re.compile(r"^\*\*\*\s*Delete\s+File:\s*(.+)$")),
    (Kind.MOVE, re.compile(r"^\*\*\*\s*Move\s+File:\s*(.+?)\s*->\s*(.+)$")),
)


@attrs.define
class Hunk:
    """One change: its hint and its lines, each ``(prefix, text)`` with prefix `` ``, ``-``
    or ``+``."""

    hint: str | None = None
    lines: list[tuple[str, str]] = attrs.Factory(list)

    def search(self) -> list[str]:
        """The lines the file has now (context and removed)."""
        return [text for prefix, text in self.lines if prefix != "+"]

    def replace(self) -> list[str]:
        """The lines it has after (context and added)."""
        return [text for prefix, text in self.lines if prefix != "-"]


@attrs.define
class Operation:
    """One operation of a patch."""

    kind: Kind
    path: str
    new_path: str | None = None
    hunks: list[Hunk] = attrs.Factory(list)


def parse_patch(text: str) -> tuple[list[Operation], list[str]]:
    """Parse a V4A patch: its operations, or the errors that make it unusable."""
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    start, end = -1, len(lines)
    for index, line in enumerate(lines):
        if _BEGIN.match(line):
            start = index
        elif _END.match(line):
            end = index
            break
    operations: list[Operation] = []
    errors: list[str] = []
    current: Operation | None = None
    hunk: Hunk | None = None

    def flush_hunk() -> None:
        if current is not None and hunk is not None and hunk.lines:
            current.hunks.append(hunk)

    for line in lines[start + 1 : end]:
        marker = next(((kind, m) for kind, rx in _MARKERS if (m := rx.match(line))), None)
        if marker is not None:
            kind, match = marker
            flush_hunk()
            if current is not None:
                operations.append(current)
            current = Operation(
                kind,
                match.group(1).strip(),
                match.group(2).strip() if kind is Kind.MOVE else None,
            )
            hunk = Hunk() if kind is Kind.ADD else None
            if kind in (Kind.DELETE, Kind.MOVE):
                operations.append(current)
                current = None
            continue
        if _EOF.match(line) or current is None:
            continue
        if line.startswith("@@"):
            flush_hunk()
            found = _HINT.match(line)
            hunk = Hunk(hint=found.group(1) if found else None)
            continue
        if not line:
            continue
        if hunk is None:
            hunk = Hunk()
        if line[0] in "+- ":
            hunk.lines.append((line[0], line[1:]))
        elif line[0] != "\\":
            hunk.lines.append((" ", line))
    flush_hunk()
    if current is not None:
        operations.append(current)
    for op in operations:
        if not op.path:
            errors.append("an operation has an empty file path")
        if op.kind is Kind.UPDATE and not op.hunks:
            errors.append(f"Update File {op.path!r}: no hunks found")
    if not operations and not errors:
        errors.append("no operations found (expected '*** Update File: <path>' and the like)")
    return operations, errors


def _occurrences(content: str, pattern: str) -> list[int]:
    found, at = [], content.find(pattern)
    while at != -1:
        found.append(at)
        at = content.find(pattern, at + 1)
    return found


def _loose_span(content: str, search: list[str]) -> list[tuple[int, int]]:
    """Where ``search`` matches whole lines of ``content`` ignoring trailing whitespace."""
    lines = content.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    wanted = [s.rstrip() for s in search]
    spans = []
    for index in range(len(lines) - len(wanted) + 1):
        if [line.rstrip() for line in lines[index : index + len(wanted)]] == wanted:
            spans.append((offsets[index], offsets[index + len(wanted)] - 1))
    return spans


def _apply_hunk(content: str, hunk: Hunk, where: str) -> tuple[str, str | None]:
    """Return ``content`` with ``hunk`` applied, or the error."""
    search, replace = hunk.search(), hunk.replace()
    if search == replace:
        return content, None  # a context-only anchor: inert
    insert = "\n".join(replace)
    if not search:  # addition only: after the hint's line, else at the end
        if hunk.hint:
            hits = _occurrences(content, hunk.hint)
            if len(hits) > 1:
                return (
                    content,
                    f"{where}: context hint {hunk.hint!r} is ambiguous ({len(hits)} occurrences)",
                )
            if not hits:
                return content, f"{where}: context hint {hunk.hint!r} not found"
            eol = content.find("\n", hits[0])
            if eol == -1:
                return content + "\n" + insert, None
            return content[: eol + 1] + insert + "\n" + content[eol + 1 :], None
        return content.rstrip("\n") + "\n" + insert + "\n", None
    pattern = "\n".join(search)
    spans = [(at, at + len(pattern)) for at in _occurrences(content, pattern)]
    if not spans:
        spans = _loose_span(content, search)
    if len(spans) > 1 and hunk.hint:
        hinted = content.find(hunk.hint)
        if hinted != -1:
            spans = [s for s in spans if s[0] >= hinted][:1] or spans
    if not spans:
        if insert and insert in content:
            return content, None  # applied already
        label = repr(hunk.hint) if hunk.hint else "(no hint)"
        first = search[0].strip() if search else ""
        return content, f"{where}: hunk {label} not found (its first line: {first!r})"
    if len(spans) > 1:
        return content, (
            f"{where}: hunk matches {len(spans)} places; add context lines or an '@@ hint @@'"
        )
    begin, stop = spans[0]
    return content[:begin] + insert + content[stop:], None


@attrs.frozen
class PatchOutcome:
    """What applying a patch did (Hermes' ``PatchResult``)."""

    success: bool
    diff: str = ""
    files_modified: tuple[str, ...] = ()
    files_created: tuple[str, ...] = ()
    files_deleted: tuple[str, ...] = ()
    error: str | None = None
    changed: tuple[Path, ...] = ()


def _diff(name: str, old: str | None, new: str | None) -> str:
    return "".join(
        difflib.unified_diff(
            (old or "").splitlines(keepends=True),
            (new or "").splitlines(keepends=True),
            fromfile="/dev/null" if old is None else f"a/{name}",
            tofile="/dev/null" if new is None else f"b/{name}",
        )
    )


class _Simulation:
    """The patch's operations played on an in-memory copy of the files they touch."""

    def __init__(self, resolve: Callable[[str], Path]) -> None:
        self.resolve = resolve
        self.state: dict[Path, str | None] = {}  # the simulated files: None is absent
        self.before: dict[Path, str | None] = {}
        self.modified: list[str] = []
        self.created: list[str] = []
        self.deleted: list[str] = []
        self.errors: list[str] = []
        self.changes = 0

    def read(self, path: Path) -> str | None:
        if path in self.state:
            content = self.state[path]
        else:
            try:
                content = path.read_text(encoding="utf-8")
            except FileNotFoundError:
                content = None
            except (OSError, UnicodeDecodeError) as exc:
                raise ValueError(f"cannot read it: {exc}") from exc
        self.before.setdefault(path, content)
        return content

    def play(self, op: Operation) -> None:
        target = self.resolve(op.path)
        try:
            content = self.read(target)
            if op.kind is Kind.UPDATE:
                self.update(op, target, content)
            elif op.kind is Kind.ADD:
                self.add(op, target, content)
            elif op.kind is Kind.DELETE:
                self.delete(op, target, content)
            else:
                self.move(op, target, content)
        except ValueError as exc:
            self.errors.append(f"{op.path}: {exc}")

    def update(self, op: Operation, target: Path, content: str | None) -> None:
        if content is None:
            self.errors.append(f"{op.path}: file not found")
            return
        updated = content
        for index, hunk in enumerate(op.hunks, start=1):
            updated, error = _apply_hunk(updated, hunk, f"{op.path} hunk {index}")
            if error:
                self.errors.append(error)
        self.changes += updated != content
        self.state[target] = updated
        self.modified.append(op.path)

    def add(self, op: Operation, target: Path, content: str | None) -> None:
        if content is not None:
            self.errors.append(f"{op.path}: file already exists; use Update File, not Add File")
            return
        self.state[target] = "\n".join(  # its '+' lines, as Hermes takes them
            t for hunk in op.hunks for prefix, t in hunk.lines if prefix == "+"
        )
        self.created.append(op.path)
        self.changes += 1

    def delete(self, op: Operation, target: Path, content: str | None) -> None:
        if content is None:
            self.errors.append(f"{op.path}: file not found for deletion")
            return
        self.state[target] = None
        self.deleted.append(op.path)
        self.changes += 1

    def move(self, op: Operation, target: Path, content: str | None) -> None:
        destination = self.resolve(op.new_path or "")
        if content is None:
            self.errors.append(f"{op.path}: source file not found for move")
            return
        if self.read(destination) is not None:
            self.errors.append(f"{op.new_path}: destination already exists; move would overwrite")
            return
        self.state[destination], self.state[target] = content, None
        self.modified.append(f"{op.path} -> {op.new_path}")
        self.changes += 1

    def commit(self, write: Callable[[Path, str], None]) -> PatchOutcome:
        """Write the simulated files that changed; the outcome with their diffs."""
        diffs: list[str] = []
        changed: list[Path] = []
        for path, content in self.state.items():
            old = self.before.get(path)
            if content == old:
                continue
            if content is None:
                path.unlink()
            else:
                write(path, content)
            changed.append(path)
            diffs.append(_diff(str(path.name), old, content))
        return PatchOutcome(
            True,
            diff="\n".join(d for d in diffs if d),
            files_modified=tuple(self.modified),
            files_created=tuple(self.created),
            files_deleted=tuple(self.deleted),
            changed=tuple(changed),
        )


def apply_patch(
    text: str, resolve: Callable[[str], Path], write: Callable[[Path, str], None]
) -> PatchOutcome:
    """Parse and apply a V4A patch: all of it, or nothing (see the module's docstring).

    :param resolve: turns a patch's path into the file (relative to the working folder).
    :param write: writes one file atomically.
    """
    operations, errors = parse_patch(text)
    if errors:
        return PatchOutcome(False, error="Parse error: " + "; ".join(errors))
    simulation = _Simulation(resolve)
    for op in operations:
        simulation.play(op)
    errors = simulation.errors
    if not errors and simulation.changes == 0:
        errors.append("the patch makes no change (only context lines, or applied already)")
    if errors:
        bullets = "\n".join(f"  • {e}" for e in errors)
        return PatchOutcome(
            False, error=f"Patch validation failed (no files were modified):\n{bullets}"
        )
    return simulation.commit(write)
