"""Install sources and the atomic copy, without the CLI."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_hooks.admin.install import Source, parse_source, publish, stage
from hermes_hooks.errors import InstallError


def make_plugin(folder: Path, name: str = "demo") -> Path:
    folder.mkdir(parents=True)
    (folder / "plugin.yaml").write_text(f"name: {name}\n")
    (folder / "__init__.py").write_text("def register(ctx):\n    pass\n")
    return folder


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("pip:hermes-demo>=1.0", Source("pip", "hermes-demo>=1.0")),
        (
            "https://example.invalid/x.git#sub/dir/",
            Source("git", "https://example.invalid/x.git", "sub/dir"),
        ),
        ("git+ssh://host/x", Source("git", "ssh://host/x")),
        ("git@host:me/x.git", Source("git", "git@host:me/x.git")),
        ("file:///srv/repo", Source("git", "file:///srv/repo")),
    ],
)
def test_parse_source_kinds(text: str, expected: Source) -> None:
    assert parse_source(text) == expected


def test_parse_local_paths(tmp_path: Path) -> None:
    make_plugin(tmp_path / "folder")
    assert parse_source("folder", cwd=tmp_path) == Source("folder", str(tmp_path / "folder"))
    assert parse_source("folder#", cwd=tmp_path) == Source("git", str(tmp_path / "folder"))
    assert parse_source("folder#a", cwd=tmp_path) == Source("git", str(tmp_path / "folder"), "a")
    with pytest.raises(InstallError, match="is not a folder, a git repository or pip:NAME"):
        parse_source("nowhere", cwd=tmp_path)
    (tmp_path / "file").write_text("")
    with pytest.raises(InstallError, match="found a file"):
        parse_source("file", cwd=tmp_path)
    for bad in ("pip:", "pip:--index-url=http://x", "pip:a b"):
        with pytest.raises(InstallError, match="expected pip:NAME"):
            parse_source(bad)


def test_stage_needs_a_manifest_and_an_init(tmp_path: Path) -> None:
    folder = tmp_path / "bare"
    folder.mkdir()
    with (
        pytest.raises(InstallError, match=r"no plugin\.yaml"),
        stage(Source("folder", str(folder))),
    ):
        pass
    (folder / "plugin.yaml").write_text("name: bare\n")
    with (
        pytest.raises(InstallError, match=r"no __init__\.py"),
        stage(Source("folder", str(folder))),
    ):
        pass


def test_publish_replaces_atomically_and_leaves_no_staging(tmp_path: Path) -> None:
    plugins = tmp_path / "plugins"
    source = make_plugin(tmp_path / "src")
    with stage(Source("folder", str(source))) as staged:
        first = publish(staged, plugins)
    (first / "marker").write_text("old")
    with stage(Source("folder", str(source))) as staged:
        with pytest.raises(InstallError, match="already installed"):
            publish(staged, plugins)
        assert publish(staged, plugins, force=True) == first
    assert not (first / "marker").exists()
    assert [p.name for p in plugins.iterdir()] == ["demo"]
