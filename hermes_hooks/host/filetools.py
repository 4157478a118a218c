"""The host's file tools beside ``read_file``: ``write_file``, ``patch`` and ``search_files``.

Their arguments are Hermes' (``tools/file_tools.py``), so a ``pre_tool_call`` guard written for
Hermes matches them: ``write_file(path, content)``, ``patch(mode="replace", path, old_string,
new_string, replace_all)`` or ``patch(mode="patch", patch)`` (a V4A patch,
:mod:`hermes_hooks.host.v4a`), ``search_files(pattern, target="content"|"files", path,
file_glob, limit)``. A relative path is taken in the session's folder. The two that edit
record the path they changed (:func:`~hermes_hooks.host.tools.record_changed_path`), so
``pre_verify`` fires at the end of a turn that edited files. A file is written atomically: a
temporary file beside it, then renamed over it.
"""

from __future__ import annotations

import contextlib
import fnmatch
import os
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from hermes_hooks.backends.models.base import dumps

__all__ = ["FILE_TOOL_SCHEMAS", "patch", "search_files", "write_file"]

MAX_WRITE_BYTES: Final = 10_000_000
SEARCH_LIMIT: Final = 50
_SKIPPED_DIRS: Final = frozenset({".git", "__pycache__", "node_modules", ".venv", ".tox"})


def _error(message: str) -> str:
    return dumps({"error": message})


def _resolve(path: object, tool: str) -> Path | str:
    """Return the target path, or the error text for a missing or empty ``path``."""
    from hermes_hooks.host.tools import current_session

    if not isinstance(path, str) or not path.strip():
        return f"{tool} needs a 'path' (a file name, relative to the working folder)"
    target = Path(path).expanduser()
    if not target.is_absolute():
        session = current_session.get()
        target = (session.cwd if session is not None else Path.cwd()) / target
    return target


def _write_atomically(target: Path, text: str) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    mode = target.stat().st_mode & 0o777 if target.exists() else None
    fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as out:
            out.write(text)
        if mode is not None:
            os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def write_file(args: Mapping[str, Any], **kwargs: Any) -> str:
    """Write ``content`` to ``path`` (made with its folders; replaced whole when it exists)."""
    from hermes_hooks.host.tools import record_changed_path

    target = _resolve(args.get("path"), "write_file")
    if isinstance(target, str):
        return _error(target)
    content = args.get("content")
    if not isinstance(content, str):
        return _error(f"write_file needs 'content' as a string, found {type(content).__name__}")
    if len(content.encode("utf-8")) > MAX_WRITE_BYTES:
        return _error(f"write_file: content over {MAX_WRITE_BYTES} bytes is refused")
    if target.is_dir():
        return _error(f"write_file: {args['path']!r} is a folder")
    created = not target.exists()
    try:
        _write_atomically(target, content)
    except OSError as exc:
        return _error(f"write_file: cannot write {args['path']!r}: {exc.strerror or exc}")
    record_changed_path(str(target))
    return dumps(
        {
            "path": args["path"],
            "bytes_written": len(content.encode("utf-8")),
            "created": created,
        }
    )


def patch(args: Mapping[str, Any], **kwargs: Any) -> str:
    """Replace ``old_string`` by ``new_string`` in ``path`` (``mode="replace"``).

    ``old_string`` must occur exactly once, or ``replace_all`` must be true.
    """
    from hermes_hooks.host.tools import record_changed_path

    mode = args.get("mode", "replace")
    if mode == "patch":
        return _patch_v4a(args)
    if mode != "replace":
        return _error(
            f"patch: mode must be 'replace' (old_string, new_string) or 'patch' (a V4A patch "
            f"in 'patch'), found {mode!r}"
        )
    target = _resolve(args.get("path"), "patch")
    if isinstance(target, str):
        return _error(target)
    old, new = args.get("old_string"), args.get("new_string")
    if not isinstance(old, str) or not old:
        return _error("patch needs 'old_string': the exact text to replace, not empty")
    if not isinstance(new, str):
        return _error("patch needs 'new_string' as a string (empty to delete)")
    replace_all = args.get("replace_all", False) is True
    try:
        text = target.read_text(encoding="utf-8")
    except FileNotFoundError:
        return _error(f"patch: {args['path']!r} not found")
    except (OSError, UnicodeDecodeError) as exc:
        return _error(f"patch: cannot read {args['path']!r}: {exc}")
    count = text.count(old)
    if count == 0:
        return _error(f"patch: old_string not found in {args['path']!r}; read_file shows it")
    if count > 1 and not replace_all:
        return _error(
            f"patch: old_string occurs {count} times in {args['path']!r}; give more context "
            "to make it unique, or replace_all: true"
        )
    try:
        _write_atomically(
            target, text.replace(old, new) if replace_all else text.replace(old, new, 1)
        )
    except OSError as exc:
        return _error(f"patch: cannot write {args['path']!r}: {exc.strerror or exc}")
    record_changed_path(str(target))
    return dumps({"path": args["path"], "replacements": count if replace_all else 1})


def _patch_v4a(args: Mapping[str, Any]) -> str:
    """``mode="patch"``: apply the V4A patch in ``patch`` (:mod:`hermes_hooks.host.v4a`)."""
    from hermes_hooks.host.tools import record_changed_path
    from hermes_hooks.host.v4a import apply_patch

    text = args.get("patch")
    if not isinstance(text, str) or not text.strip():
        return _error(
            "patch with mode 'patch' needs 'patch': a V4A patch ('*** Begin Patch', "
            "'*** Update File: <path>', hunks, '*** End Patch')"
        )

    def resolve(path: str) -> Path:
        found = _resolve(path, "patch")
        if isinstance(found, str):
            raise ValueError(found)
        return found

    try:
        outcome = apply_patch(text, resolve, _write_atomically)
    except (ValueError, OSError) as exc:
        return _error(f"patch: {exc}")
    for path in outcome.changed:
        record_changed_path(str(path))
    if not outcome.success:
        return dumps({"success": False, "error": outcome.error})
    return dumps(
        {
            "success": True,
            "diff": outcome.diff,
            "files_modified": list(outcome.files_modified),
            "files_created": list(outcome.files_created),
            "files_deleted": list(outcome.files_deleted),
        }
    )


def _walk(root: Path) -> list[Path]:
    found: list[Path] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS)
        found.extend(Path(folder) / name for name in sorted(files))
    return found


def search_files(args: Mapping[str, Any], **kwargs: Any) -> str:
    """Search file contents for a regex (``target="content"``) or file names for a glob
    (``target="files"``) under ``path`` (the working folder by default)."""
    pattern = args.get("pattern")
    if not isinstance(pattern, str) or not pattern:
        return _error("search_files needs a 'pattern' (a regex, or a glob with target 'files')")
    target = args.get("target", "content")
    if target not in ("content", "files"):
        return _error(f"search_files: target must be 'content' or 'files', found {target!r}")
    root = _resolve(args.get("path") or ".", "search_files")
    if isinstance(root, str):
        return _error(root)
    if not root.is_dir():
        return _error(f"search_files: {args.get('path')!r} is not a folder")
    limit = args.get("limit", SEARCH_LIMIT)
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        return _error(f"search_files: limit must be a positive number, found {limit!r}")
    glob = args.get("file_glob")
    if glob is not None and not isinstance(glob, str):
        return _error("search_files: file_glob must be a glob string such as '*.py'")
    files = [p for p in _walk(root) if glob is None or fnmatch.fnmatch(p.name, glob)]
    if target == "files":
        names = [str(p.relative_to(root)) for p in files if fnmatch.fnmatch(p.name, pattern)]
        return dumps({"files": names[:limit], "total": len(names), "truncated": len(names) > limit})
    try:
        regex = re.compile(pattern)
    except re.error as exc:
        return _error(f"search_files: pattern {pattern!r} is not a valid regex: {exc}")
    matches: list[dict[str, Any]] = []
    total = 0
    for path in files:
        try:
            with path.open(encoding="utf-8") as handle:
                for number, line in enumerate(handle, 1):
                    if regex.search(line):
                        total += 1
                        if len(matches) < limit:
                            matches.append(
                                {
                                    "path": str(path.relative_to(root)),
                                    "line": number,
                                    "content": line.rstrip("\n")[:500],
                                }
                            )
        except (OSError, UnicodeDecodeError):
            continue  # a binary or unreadable file has no text matches
    return dumps({"matches": matches, "total": total, "truncated": total > limit})


FILE_TOOL_SCHEMAS: Final[dict[str, dict[str, Any]]] = {
    "write_file": {
        "description": "Write a text file, replacing it whole if it exists (folders are made).",
        "parameters": {
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "The file, relative or absolute."},
                "content": {"type": "string", "description": "The file's whole new content."},
            },
            "required": ["path", "content"],
        },
    },
    "patch": {
        "description": "Edit files. mode 'replace' (default): old_string (unique, or "
        "replace_all) becomes new_string in path. mode 'patch': apply a V4A patch ('*** Begin "
        "Patch', '*** Update File: p' with '@@ hint @@' hunks of ' ', '-', '+' lines, '*** Add "
        "File: p', '*** Delete File: p', '*** Move File: a -> b', '*** End Patch'), all or "
        "nothing.",
        "parameters": {
            "type": "object",
            "properties": {
                "mode": {"type": "string", "enum": ["replace", "patch"], "default": "replace"},
                "path": {"type": "string", "description": "The file to edit (replace mode)."},
                "old_string": {"type": "string", "description": "The exact text to replace."},
                "new_string": {"type": "string", "description": "The text to put instead."},
                "replace_all": {"type": "boolean", "description": "Replace every occurrence."},
                "patch": {"type": "string", "description": "The V4A patch (patch mode)."},
            },
            "required": [],
        },
    },
    "search_files": {
        "description": "Search file contents with a regex, or file names with a glob.",
        "parameters": {
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "A regex (content) or glob (files)."},
                "target": {"type": "string", "enum": ["content", "files"], "default": "content"},
                "path": {"type": "string", "description": "The folder to search (default .)."},
                "file_glob": {"type": "string", "description": "Only files matching, e.g. *.py."},
                "limit": {"type": "integer", "description": "At most this many results."},
            },
            "required": ["pattern"],
        },
    },
}
"""Their JSON schemas, as the model sees them."""
