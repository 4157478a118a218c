"""Manifest fuzzing: whatever a ``plugin.yaml`` holds, reading it raises ``ManifestError`` or
gives a manifest; alias bombs, deep nesting and oversized files are refused quickly within a
small memory bound; names that could escape a folder or pass for another plugin are refused.

Examples per test: ``HERMES_FUZZ_EXAMPLES`` (75 by default, 150 with ``--full``). The runs are
derandomized, so CI sees the same inputs every time; set ``HERMES_FUZZ_SEEDED=0`` for fresh
random inputs.
"""

from __future__ import annotations

import contextlib
import functools
import os
import string
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

import pytest
import reliability_figures
import suite_size
import yaml
from hypothesis import HealthCheck, Phase, given, settings, strategies as st
from plugin_builders import isolate_environment

from hermes_hooks.errors import ManifestError
from hermes_hooks.plugins.discovery import discover_candidates
from hermes_hooks.plugins.manifest import KNOWN_FIELDS, PluginManifest, is_valid_plugin_name
from hermes_hooks.plugins.safe_yaml import (
    MAX_YAML_BYTES,
    MAX_YAML_NODES,
    YAMLLoadError,
    safe_load_yaml,
)

pytestmark = pytest.mark.slow

EXAMPLES: Final = suite_size.count("HERMES_FUZZ_EXAMPLES", quick=75, full_size=150)
FUZZ: Final = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=os.environ.get("HERMES_FUZZ_SEEDED", "1") != "0",
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    # Not Phase.explain: it imports what warns, and filterwarnings=error hides the failure.
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
)

QUICK_SECONDS: Final = 2.0
""""Refused quickly": generous for a loaded CI machine; the real figure is about a millisecond."""
MEMORY_BOUND: Final = 4 * 1024 * 1024
"""Most Python memory (tracemalloc peak) one refused manifest may cost."""


@pytest.fixture
def manifest_file(tmp_path: Path) -> Path:
    folder = tmp_path / "fuzzed"
    folder.mkdir()
    return folder / "plugin.yaml"


def _read(path: Path, data: bytes) -> PluginManifest | None:
    """Write ``data`` as the manifest and read it; anything but ManifestError fails the test."""
    path.write_bytes(data)
    try:
        return PluginManifest.from_path(path)
    except ManifestError:
        return None


def _count(kind: str) -> None:
    """Count one input of ``kind`` for docs/reliability.md."""
    reliability_figures.add("manifest fuzzing", kind)
    reliability_figures.add("manifest fuzzing", "inputs", 1)


# -- arbitrary documents --------------------------------------------------------------------------

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True)
    | st.text(max_size=30)
    | st.binary(max_size=10)
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=10), inner),
    max_leaves=20,
)
#: Manifests that use the real field names, so the fuzzing reaches every field check.
manifest_like = st.dictionaries(
    st.sampled_from(sorted(KNOWN_FIELDS)) | st.text(max_size=12), values, max_size=8
)


@FUZZ
@given(document=manifest_like | values, flow=st.booleans())
def test_any_yaml_document_gives_a_manifest_or_a_manifest_error(
    manifest_file: Path, document: Any, flow: bool
) -> None:
    _count("yaml documents")
    text = yaml.safe_dump(document, default_flow_style=flow, allow_unicode=True)
    manifest = _read(manifest_file, text.encode("utf-8"))
    if manifest is not None:
        assert is_valid_plugin_name(manifest.name)


@FUZZ
@given(data=st.binary(max_size=4096))
def test_any_bytes_give_a_manifest_or_a_manifest_error(manifest_file: Path, data: bytes) -> None:
    _count("byte strings")
    _read(manifest_file, data)


#: Pieces of YAML syntax, tags included, that random text rarely hits on its own.
YAML_TOKENS: Final = [
    *"\n\t :-?,[]{}#&*!|>'\"%@`",
    "name: ",
    "version: ",
    "requires_env: ",
    "- ",
    "&a ",
    "*a",
    "<<: *a",
    "!!python/object/apply:os.system ['true']",
    "!!python/name:os.system",
    "!!binary aGk=",
    "!!set {a, b}",
    "!!timestamp 2001-12-14",
    "!!omap [a: 1]",
    "!custom ",
    "%YAML 1.1\n---\n",
    "---\n",
    "...\n",
    "\ufeff",
    "\x00",
    "\\0",
    "\ud800",
    "1.10",
    "0x1F",
    "~",
    ".nan",
    "yes",
    "нет",
]


@FUZZ
@given(pieces=st.lists(st.sampled_from(YAML_TOKENS) | st.text(max_size=5), max_size=40))
def test_yaml_syntax_soup_gives_a_manifest_or_a_manifest_error(
    manifest_file: Path, pieces: list[str]
) -> None:
    _count("YAML token soups")
    _read(manifest_file, "".join(pieces).encode("utf-8", "surrogatepass"))


VALID: Final = b"""name: demo
version: "1.2"
description: A plugin
requires_env:
  - name: DEMO_KEY
    secret: true
provides_tools: [demo_tool]
config_schema:
  endpoint: {type: string, default: "http://127.0.0.1"}
"""


@FUZZ
@given(
    edits=st.lists(
        st.tuples(st.integers(0, len(VALID)), st.integers(0, 3), st.binary(max_size=4)),
        min_size=1,
        max_size=6,
    )
)
def test_a_mangled_valid_manifest_gives_a_manifest_or_a_manifest_error(
    manifest_file: Path, edits: list[tuple[int, int, bytes]]
) -> None:
    _count("mangled manifests")
    data = VALID
    for at, cut, insert in edits:
        data = data[:at] + insert + data[at + cut :]
    _read(manifest_file, data)


@FUZZ
@given(document=manifest_like)
def test_from_mapping_with_any_values_gives_a_manifest_or_a_manifest_error(
    document: dict[str, Any],
) -> None:
    _count("parsed mappings")
    with contextlib.suppress(ManifestError):
        PluginManifest.from_mapping(document, default_name="fallback")


# -- bombs, depth, size: refused quickly and within a memory bound ---------------------------------


def _measured(function: Callable[[], object]) -> tuple[BaseException | None, float, int]:
    """Call ``function``; return what it raised, the seconds it took and its memory peak."""
    tracemalloc.start()
    started = time.perf_counter()
    raised: BaseException | None = None
    try:
        function()
    except Exception as exc:
        raised = exc
    elapsed = time.perf_counter() - started
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return raised, elapsed, peak


def _alias_bomb(width: int, depth: int) -> bytes:
    lines = ["name: bomb", 'version: "1"', "l0: &l0 [" + ", ".join(['"lol"'] * width) + "]"]
    for level in range(1, depth):
        lines.append(f"l{level}: &l{level} [" + ", ".join([f"*l{level - 1}"] * width) + "]")
    return ("\n".join(lines) + "\n").encode()


@FUZZ
@given(
    width=st.integers(2, 40),
    depth=st.integers(2, 40),
    style=st.sampled_from(["flow", "merge"]),
)
def test_alias_bombs_are_refused_quickly_in_little_memory(
    manifest_file: Path, width: int, depth: int, style: str
) -> None:
    while width**depth <= MAX_YAML_NODES:
        depth += 1  # make every example a bomb: expanded past the node bound
    data = _alias_bomb(width, depth) if style == "flow" else _merge_bomb(width, depth)
    if len(data) > MAX_YAML_BYTES:
        return  # refused for its size: another test
    _count("alias bombs")
    manifest_file.write_bytes(data)
    raised, elapsed, peak = _measured(lambda: PluginManifest.from_path(manifest_file))
    assert isinstance(raised, ManifestError), raised
    assert "alias" in str(raised)
    assert elapsed < QUICK_SECONDS
    assert peak < MEMORY_BOUND


def _merge_bomb(width: int, depth: int) -> bytes:
    """A bomb through ``<<`` merge keys rather than sequences."""
    lines = ["name: bomb", "m0: &m0 {" + ", ".join(f"k{i}: v" for i in range(width)) + "}"]
    for level in range(1, depth):
        refs = ", ".join(f"f{i}: *m{level - 1}" for i in range(width))
        lines.append(f"m{level}: &m{level} {{<<: *m{level - 1}, {refs}}}")
    return ("\n".join(lines) + "\n").encode()


@pytest.mark.parametrize(
    "text",
    [
        "[" * 200_000,
        "{a: " * 60_000,
        "- " * 100_000 + "x",
        "a:\n" + "".join("  " * i + f"k{i}:\n" for i in range(1, 400)),
    ],
    ids=["flow-sequences", "flow-mappings", "block-sequences", "block-mappings"],
)
def test_deep_nesting_is_refused_quickly_in_little_memory(manifest_file: Path, text: str) -> None:
    manifest_file.write_text(text, encoding="utf-8")
    raised, elapsed, peak = _measured(lambda: PluginManifest.from_path(manifest_file))
    assert isinstance(raised, ManifestError), raised
    assert elapsed < QUICK_SECONDS
    assert peak < MEMORY_BOUND


def test_an_oversized_manifest_is_refused_before_it_is_read(manifest_file: Path) -> None:
    with manifest_file.open("wb") as stream:
        stream.truncate(2**40)  # a sparse terabyte: costs no disk, and must cost no memory
    raised, elapsed, peak = _measured(lambda: PluginManifest.from_path(manifest_file))
    assert isinstance(raised, ManifestError)
    assert "expected at most 262144 bytes, found 1099511627776 bytes" in str(raised)
    assert elapsed < QUICK_SECONDS
    assert peak < 64 * 1024


def test_oversized_data_is_refused_by_the_reader_too() -> None:
    for data in (b"a" * (MAX_YAML_BYTES + 1), "é" * (MAX_YAML_BYTES // 2 + 1)):
        raised, elapsed, peak = _measured(functools.partial(safe_load_yaml, data, source="x"))
        assert isinstance(raised, YAMLLoadError)
        assert elapsed < QUICK_SECONDS
        assert peak < MEMORY_BOUND


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_or_device_manifest_is_refused_without_reading(manifest_file: Path) -> None:
    os.mkfifo(manifest_file)  # reading it would block forever
    raised, elapsed, _ = _measured(lambda: PluginManifest.from_path(manifest_file))
    assert isinstance(raised, ManifestError)
    assert "regular file" in str(raised)
    manifest_file.unlink()
    manifest_file.symlink_to("/dev/zero")  # reading it would never end
    raised, elapsed, _ = _measured(lambda: PluginManifest.from_path(manifest_file))
    assert isinstance(raised, ManifestError)
    assert elapsed < QUICK_SECONDS


# -- names ---------------------------------------------------------------------------------------

#: Letters that look like ASCII ones: Cyrillic, Greek, fullwidth, dotless i, a combining mark...
LOOK_ALIKES: Final = "".join(chr(c) for c in (
    0x0430, 0x0435, 0x043E, 0x0440, 0x0441, 0x0443, 0x0445, 0x0456, 0x0458, 0x0455, 0x0501,
    0x03BF, 0x03B1, 0x03BD, 0xFF4E, 0xFF4F, 0x0131, 0x0301, 0x200B, 0x00A0,
))  # fmt: skip
BAD_FRAGMENTS: Final = st.sampled_from(
    ["..", "/", "\\", "\x00", "\n", " ", "../", "/etc", "A", *LOOK_ALIKES]
)
plain = st.text(alphabet=string.ascii_lowercase + string.digits + "-_", min_size=1, max_size=10)


@FUZZ
@given(head=plain, bad=BAD_FRAGMENTS, tail=st.text(string.ascii_lowercase, max_size=5))
def test_names_that_escape_or_look_alike_are_refused(
    manifest_file: Path, head: str, bad: str, tail: str
) -> None:
    _count("bad names")
    name = head + bad + tail
    data = yaml.safe_dump({"name": name, "version": "1"}, allow_unicode=True).encode("utf-8")
    manifest_file.write_bytes(data)
    with pytest.raises(ManifestError) as refused:
        PluginManifest.from_path(manifest_file)
    assert refused.value.field == "name"
    assert not is_valid_plugin_name(name)


@pytest.fixture
def plugins_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    isolate_environment(monkeypatch, tmp_path)
    root = tmp_path / "home" / "plugins"
    root.mkdir(parents=True)
    return root


@FUZZ
@given(head=plain, alike=st.sampled_from(LOOK_ALIKES), nested=st.booleans())
def test_a_plugin_folder_named_with_look_alikes_is_refused_unread(
    plugins_root: Path, head: str, alike: str, nested: bool
) -> None:
    """The manifest inside claims a good name; the folder's name is what gives it away."""
    _count("look-alike folders")
    key = head + alike
    folder = plugins_root / ("category" if nested else "") / key
    folder.mkdir(parents=True)
    (folder / "plugin.yaml").write_text("name: no-rm\nversion: '1'\n", encoding="utf-8")
    (folder / "__init__.py").write_text("raise SystemExit('never imported')\n", encoding="utf-8")
    try:
        found = discover_candidates(hermes_home=plugins_root.parent, include_entry_points=False)
        [candidate] = found
        assert candidate.error is not None
        assert "printable ASCII" in candidate.error
        assert candidate.manifest is None
    finally:
        for path in sorted(plugins_root.rglob("*"), reverse=True):
            path.rmdir() if path.is_dir() else path.unlink()
