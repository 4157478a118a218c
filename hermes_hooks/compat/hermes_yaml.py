"""Hermes' ``hermes_yaml``: its one YAML policy (YAML 1.1 safe load and dump), on PyYAML.

Hermes reads and writes config, manifests and frontmatter through it (on ruamel.yaml); PyYAML,
a core dependency here, is a YAML 1.1 library already: bare ``yes``/``no``/``on``/``off`` are
booleans and a dot-less ``123e45`` stays a string, as Hermes' policy makes ruamel read them.
"""

from __future__ import annotations

from typing import IO, Any

import yaml
from yaml import YAMLError

__all__ = ["YAMLError", "safe_dump", "safe_load"]


def safe_load(stream: str | bytes | IO[str] | IO[bytes]) -> Any:
    """Read one YAML document with the safe loader (YAML 1.1 scalars).

    :raises YAMLError: the document is not valid YAML.
    """
    document = stream if isinstance(stream, (str, bytes)) else stream.read()
    return yaml.safe_load(document)


class _IndentedDumper(yaml.SafeDumper):
    """Block lists indented under their key, as Hermes writes them."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def safe_dump(
    data: Any,
    stream: IO[str] | None = None,
    *,
    default_flow_style: bool = False,
    sort_keys: bool = True,
    allow_unicode: bool = True,
    width: int = 80,
) -> str | None:
    """Write ``data`` as block YAML with readable Unicode; return it when ``stream`` is None."""
    text: str = yaml.dump(
        data,
        Dumper=_IndentedDumper,
        default_flow_style=default_flow_style,
        sort_keys=sort_keys,
        allow_unicode=allow_unicode,
        width=width,
    )
    if stream is not None:
        stream.write(text)
        return None
    return text
