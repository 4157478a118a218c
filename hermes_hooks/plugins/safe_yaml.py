"""Safe YAML for untrusted files: size-capped, UTF-8 checked, depth- and expansion-bounded.

:func:`safe_load_yaml` composes the node graph from parser events itself (libyaml's parser when
available) while counting, so that nesting beyond a bound or more nodes than a bound once every
alias is expanded is refused before any Python object is built: an alias bomb costs
microseconds, and deep nesting never reaches libyaml's recursive composer (which crashes the
process on ~100,000 nested brackets).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import AnyStr, Final

import yaml
from yaml.events import (
    AliasEvent,
    CollectionStartEvent,
    DocumentEndEvent,
    ScalarEvent,
    SequenceStartEvent,
    StreamEndEvent,
)
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

try:
    from yaml import CSafeLoader as _SafeLoader
except ImportError:  # PyYAML built without libyaml
    from yaml import SafeLoader as _SafeLoader  # type: ignore[assignment]

__all__ = ["MAX_YAML_BYTES", "MAX_YAML_DEPTH", "MAX_YAML_NODES", "YAMLLoadError", "safe_load_yaml"]

MAX_YAML_BYTES: Final = 256 * 1024
"""Default cap on the size of a document, in bytes."""

MAX_YAML_NODES: Final = 10_000
"""Most nodes a document may have once every alias is expanded (stops alias bombs)."""

MAX_YAML_DEPTH: Final = 64
"""Deepest nesting of collections a document may have (stops stack exhaustion)."""

_STR_TAG: Final = "tag:yaml.org,2002:str"
_NUMBER_TAGS: Final = frozenset({"tag:yaml.org,2002:int", "tag:yaml.org,2002:float"})


class YAMLLoadError(yaml.YAMLError, ValueError):
    """A YAML document could not be read safely: too big, not UTF-8, invalid, or too expanded.

    :param source: the file (or other origin) named in the message.
    :param reason: what was expected and what was found.
    :param line: 1-based line of the problem, when known.
    :param column: 1-based column of the problem, when known.
    """

    def __init__(
        self, source: str, reason: str, *, line: int | None = None, column: int | None = None
    ) -> None:
        self.source = source
        self.reason = reason
        self.line = line
        self.column = column
        super().__init__(f"{source}: {self.located_reason}")

    @property
    def located_reason(self) -> str:
        """The reason, prefixed with ``line L, column C`` when the position is known."""
        if self.line is None:
            return self.reason
        return f"line {self.line}, column {self.column}: {self.reason}"


def safe_load_yaml(
    data: bytes | str,
    *,
    source: str,
    max_bytes: int = MAX_YAML_BYTES,
    max_nodes: int = MAX_YAML_NODES,
    max_depth: int = MAX_YAML_DEPTH,
    verbatim_keys: frozenset[str] = frozenset(),
    unique_keys: bool = False,
    layout: list[tuple[str, int]] | None = None,
) -> object:
    """Parse one YAML document from untrusted text with the safe loader, within hard bounds.

    The node graph is composed from parser events (libyaml's when available) while counting:
    nesting beyond *max_depth* or more than *max_nodes* nodes with every alias expanded is
    refused before any Python object is built, so an alias bomb costs microseconds.

    :param data: UTF-8 bytes (a BOM is allowed) or text.
    :param source: names the origin in error messages, usually the file path.
    :param verbatim_keys: top-level keys whose number values keep their written text
        (``version: 1.10`` stays ``"1.10"``).
    :param unique_keys: refuse a mapping that has one key twice (YAML keeps the last silently),
        naming the line of both.
    :param layout: a list to fill with ``(key, line)`` (0-based) of each top-level key, when
        the document is a block mapping whose keys are all plain scalars (left empty otherwise).
    :returns: the document's data; ``None`` for an empty document.
    :raises YAMLLoadError: the data is too big, not UTF-8, not valid YAML, holds more than one
        document, or is too deep or too large once expanded.
    """
    return _load(data, source, max_bytes, max_nodes, max_depth, verbatim_keys, unique_keys, layout)


def _load(
    data: bytes | str,
    source: str,
    max_bytes: int,
    max_nodes: int,
    max_depth: int,
    verbatim_keys: frozenset[str],
    unique_keys: bool = False,
    layout: list[tuple[str, int]] | None = None,
) -> object:
    if isinstance(data, bytes):
        if len(data) > max_bytes:
            raise _too_big(source, max_bytes, len(data))
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            line, column = _position(data, exc.start, b"\n")
            raise YAMLLoadError(
                source,
                f"expected UTF-8 text, found byte 0x{data[exc.start]:02x}",
                line=line,
                column=column,
            ) from exc
    else:
        # Only encode (a copy) when the character count leaves the byte count in doubt.
        if len(data) > max_bytes or (
            len(data) * 4 > max_bytes and len(data.encode("utf-8", "surrogatepass")) > max_bytes
        ):
            raise _too_big(source, max_bytes, len(data.encode("utf-8", "surrogatepass")))
        text = data
    try:
        loader = _SafeLoader(text)  # the pure-Python reader checks the characters here
    except yaml.reader.ReaderError as exc:
        raise _reader_error(source, text, exc) from exc
    except UnicodeEncodeError as exc:  # libyaml takes UTF-8: a lone surrogate cannot be sent
        line, column = _position(text, exc.start, "\n")
        raise YAMLLoadError(
            source,
            f"expected UTF-8 text, found the lone surrogate U+{ord(text[exc.start]):04X}",
            line=line,
            column=column,
        ) from exc
    try:
        root = _compose(loader, source, max_nodes, max_depth, unique_keys)
        if root is None:
            return None
        if layout is not None and isinstance(root, MappingNode) and not root.flow_style:
            keys = [key for key, _ in root.value]
            if all(isinstance(key, ScalarNode) and key.tag == _STR_TAG for key in keys):
                layout.extend((key.value, key.start_mark.line) for key in keys)
        if verbatim_keys and isinstance(root, MappingNode):
            for key, value in root.value:
                if (
                    isinstance(key, ScalarNode)
                    and key.value in verbatim_keys
                    and isinstance(value, ScalarNode)
                    and value.tag in _NUMBER_TAGS
                ):
                    value.tag = _STR_TAG
        return loader.construct_document(root)
    except YAMLLoadError:
        raise
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or "invalid YAML"
        if exc.context and exc.problem:
            problem = f"{problem} ({exc.context})"
        if mark is None:
            raise YAMLLoadError(source, f"invalid YAML: {problem}") from exc
        raise YAMLLoadError(
            source, f"invalid YAML: {problem}", line=mark.line + 1, column=mark.column + 1
        ) from exc
    except yaml.reader.ReaderError as exc:
        raise _reader_error(source, text, exc) from exc
    except (yaml.YAMLError, UnicodeError) as exc:
        raise YAMLLoadError(source, f"invalid YAML: {exc}") from exc
    except RecursionError as exc:  # pragma: no cover - the bounds above should prevent it
        raise YAMLLoadError(source, "expected a shallower document, found one too deep") from exc
    finally:
        loader.dispose()


def _compose(
    loader: _SafeLoader, source: str, max_nodes: int, max_depth: int, unique_keys: bool = False
) -> Node | None:
    """Build the node graph from events, iteratively, refusing it as soon as it is too big.

    PyYAML's own composer recurses (libyaml's crashes the process past ~100,000 levels), and
    counts nothing; this one keeps an explicit stack and the running expanded size.
    """
    loader.get_event()  # StreamStartEvent
    if loader.check_event(StreamEndEvent):
        return None
    loader.get_event()  # DocumentStartEvent
    resolve: Callable[[type[Node], str | None, object], str] = loader.resolve
    # anchor -> (node, expanded size); size -1 while the anchored collection is still open.
    anchors: dict[str, tuple[Node, int]] = {}
    stack: list[_Frame] = []
    total = 0  # nodes so far, every alias counted at its anchor's expanded size
    root: Node | None = None
    while root is None:
        event = loader.get_event()
        if event is None:  # pragma: no cover - the parser ends every document properly
            raise YAMLLoadError(source, "invalid YAML: the document ended early")
        node: Node
        if isinstance(event, AliasEvent):
            anchor = event.anchor or ""
            if anchor not in anchors:
                raise _at(source, event, f"invalid YAML: found undefined alias {anchor!r}")
            node, size = anchors[anchor]
            if size < 0:
                raise _at(source, event, f"found alias {anchor!r} inside its own anchor")
            total += size
        elif isinstance(event, ScalarEvent):
            tag = event.tag
            if tag is None or tag == "!":
                tag = resolve(ScalarNode, event.value, event.implicit)
            node = ScalarNode(tag, event.value, event.start_mark, event.end_mark, event.style)  # type: ignore[arg-type]
            total += 1
            if event.anchor is not None:
                _define(anchors, event.anchor, node, 1, source, event)
        elif isinstance(event, CollectionStartEvent):
            if len(stack) >= max_depth:
                raise _at(
                    source, event, f"expected at most {max_depth} levels of nesting, found more"
                )
            node_type = SequenceNode if isinstance(event, SequenceStartEvent) else MappingNode
            tag = event.tag
            if tag is None or tag == "!":
                tag = resolve(node_type, None, event.implicit)
            collection = node_type(tag, [], event.start_mark, None, event.flow_style)  # type: ignore[arg-type]
            if event.anchor is not None:
                _define(anchors, event.anchor, collection, -1, source, event)
            stack.append(_Frame(collection, event.anchor, total))
            total += 1
            if total > max_nodes:
                raise _expanded(source, event, max_nodes)
            continue
        else:  # SequenceEndEvent or MappingEndEvent
            frame = stack.pop()
            node = frame.node
            node.end_mark = event.end_mark
            if frame.anchor is not None:
                anchors[frame.anchor] = (node, total - frame.opened_at)
        if total > max_nodes:
            raise _expanded(source, event, max_nodes)
        if not stack:
            root = node
            break
        _attach(stack[-1], node, source, unique_keys)
    event = loader.get_event()
    if not isinstance(event, DocumentEndEvent) or not loader.check_event(StreamEndEvent):
        raise _at(
            source,
            loader.peek_event() or event,
            "expected a single YAML document, found another one",
        )
    return root


def _attach(top: _Frame, node: Node, source: str, unique_keys: bool) -> None:
    """Add a finished ``node`` to the open collection ``top``: an item of a sequence, or a
    mapping's key, then its value (a key seen before refused with ``unique_keys``)."""
    if isinstance(top.node, SequenceNode):
        top.node.value.append(node)
    elif top.key is None:
        top.key = node
    else:
        if unique_keys and isinstance(top.key, ScalarNode):
            _check_unique(top, top.key, source)
        top.node.value.append((top.key, node))
        top.key = None


class _Frame:
    """A collection still open while composing: its node, anchor, and where it started."""

    __slots__ = ("anchor", "key", "node", "opened_at", "seen")

    def __init__(self, node: SequenceNode | MappingNode, anchor: str | None, opened_at: int):
        self.node = node
        self.anchor = anchor
        self.opened_at = opened_at
        self.key: Node | None = None  # a mapping's key waiting for its value
        self.seen: dict[tuple[str, str], int] | None = None  # key -> its line, when unique


def _check_unique(frame: _Frame, key: ScalarNode, source: str) -> None:
    """Refuse a key a mapping already has: YAML would keep the later value without a word."""
    if frame.seen is None:
        frame.seen = {}
    line = key.start_mark.line + 1
    identity = (key.tag, key.value)
    first = frame.seen.get(identity)
    if first is None:
        frame.seen[identity] = line
        return
    raise YAMLLoadError(
        source,
        f"found the key {key.value!r} twice in one mapping (first at line {first}); "
        f"YAML would keep only the last one: merge them into one",
        line=line,
        column=key.start_mark.column + 1,
    )


def _define(
    anchors: dict[str, tuple[Node, int]],
    anchor: str,
    node: Node,
    size: int,
    source: str,
    event: object,
) -> None:
    if anchor in anchors:
        raise _at(source, event, f"invalid YAML: found duplicate anchor {anchor!r}")
    anchors[anchor] = (node, size)


def _at(source: str, event: object, reason: str) -> YAMLLoadError:
    mark = getattr(event, "start_mark", None)
    if mark is None:
        return YAMLLoadError(source, reason)
    return YAMLLoadError(source, reason, line=mark.line + 1, column=mark.column + 1)


def _expanded(source: str, event: object, max_nodes: int) -> YAMLLoadError:
    return _at(
        source,
        event,
        f"expected at most {max_nodes} YAML nodes with aliases expanded, found more "
        "(an alias bomb?)",
    )


def _reader_error(source: str, text: str, exc: yaml.reader.ReaderError) -> YAMLLoadError:
    line, column = _position(text, exc.position, "\n")
    return YAMLLoadError(
        source,
        f"invalid YAML: {exc.reason} (character #x{exc.character:04x})",
        line=line,
        column=column,
    )


def _too_big(source: str, max_bytes: int, size: int) -> YAMLLoadError:
    return YAMLLoadError(source, f"expected at most {max_bytes} bytes, found {size} bytes")


def _position(text: AnyStr, offset: int, newline: AnyStr) -> tuple[int, int]:
    start = text.rfind(newline, 0, offset) + 1
    return text.count(newline, 0, offset) + 1, offset - start + 1
