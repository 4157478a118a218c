"""Install sources and the atomic copy, without the CLI."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_support import clean_env

from hermes_hooks.admin.install import (
    LEFTOVER_AGE,
    Source,
    exchange_paths,
    parse_source,
    publish,
    recover_interrupted_installs,
    stage,
)
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


# --- a --force install killed at the swap ------------------------------------------------------

KILLER = """\
import os, signal, sys
from pathlib import Path

from hermes_hooks.admin import install
from hermes_hooks.admin.install import Source, publish, stage

plugins, source, mode = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
if mode == "no-exchange":
    install.exchange_paths = lambda first, second: False  # a system without RENAME_EXCHANGE
renames = []

def kill_at_the_swap(event, args):
    if event == "os.rename":
        renames.append(args)
        if len(renames) == 2:  # the second rename: the old plugin is out, the new not in
            os.kill(os.getpid(), signal.SIGKILL)
    elif event == "ctypes.dlsym" and args[1] == "renameat2" and mode == "exchange":
        os.kill(os.getpid(), signal.SIGKILL)  # at the one-step swap: no step comes between

with stage(Source("folder", source)) as staged:
    sys.addaudithook(kill_at_the_swap)
    publish(staged, plugins, force=True)
print("not killed")
"""


@pytest.mark.parametrize("mode", ["exchange", "no-exchange"])
def test_a_force_install_killed_at_the_swap_never_leaves_no_plugin(
    tmp_path: Path, mode: str
) -> None:
    plugins = tmp_path / "plugins"
    with stage(Source("folder", str(make_plugin(tmp_path / "v1")))) as staged:
        installed = publish(staged, plugins)
    (installed / "version").write_text("1")
    new = make_plugin(tmp_path / "v2")
    (new / "version").write_text("2")
    script = tmp_path / "killer.py"
    script.write_text(KILLER)
    done = subprocess.run(
        [sys.executable, str(script), str(plugins), str(new), mode],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "TMPDIR": str(tmp_path)},  # the killed stage's folder stays in here
    )
    assert done.returncode == -signal.SIGKILL, done.stdout + done.stderr
    if mode == "exchange":  # killed before the swap: the old plugin is in place
        assert (installed / "version").read_text() == "1"
    else:  # killed between the renames: the next start puts the old one back
        assert not installed.exists()
        assert recover_interrupted_installs(plugins) == ["demo"]
        assert (installed / "version").read_text() == "1"
    assert [p.name for p in plugins.iterdir() if not p.name.startswith(".")] == ["demo"]


def test_every_hermes_command_recovers_an_interrupted_install(tmp_path: Path) -> None:
    home = tmp_path / "home"
    staging = home / "plugins" / ".demo.install-abc123"
    make_plugin(staging / "previous")
    (staging / "plugin").mkdir()
    listed = subprocess.run(
        [sys.executable, "-m", "hermes_hooks", "plugins", "list"],
        env={**clean_env(home)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert listed.returncode == 0, listed.stderr
    assert "plugin 'demo' was restored from an install that did not finish" in listed.stderr
    assert listed.stdout.splitlines()[1].split()[0] == "demo"
    assert not staging.exists()


def test_recovery_leaves_a_young_install_in_progress_alone(tmp_path: Path) -> None:
    plugins = tmp_path / "plugins"
    in_progress = plugins / ".demo.install-xyz"
    (in_progress / "plugin").mkdir(parents=True)
    assert recover_interrupted_installs(plugins) == []
    assert in_progress.exists()
    old = time.time() - 2 * LEFTOVER_AGE
    os.utime(in_progress, (old, old))
    assert recover_interrupted_installs(plugins) == []
    assert not in_progress.exists()


def test_exchange_paths_swaps_two_folders(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    (first / "x").write_text("a")
    (second / "x").write_text("b")
    if not exchange_paths(first, second):
        pytest.skip("this file system has no RENAME_EXCHANGE")
    assert ((first / "x").read_text(), (second / "x").read_text()) == ("b", "a")


def _dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    return int(done.stdout)


@pytest.mark.skipif(os.name != "posix", reason="owner probes are POSIX")
def test_a_killed_installs_folders_are_swept_by_the_next_command_however_young(
    tmp_path: Path,
) -> None:
    plugins = tmp_path / "plugins"
    dead = str(_dead_pid())
    killed_staging = plugins / ".demo.install-abc"
    (killed_staging / "plugin").mkdir(parents=True)
    (killed_staging / ".owner").write_text(dead, encoding="ascii")
    killed_clone = plugins / ".fetch-xyz"
    (killed_clone / "clone").mkdir(parents=True)
    (killed_clone / ".owner").write_text(dead, encoding="ascii")
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]) as alive:
        try:
            running = plugins / ".other.install-def"
            (running / "plugin").mkdir(parents=True)
            (running / ".owner").write_text(str(alive.pid), encoding="ascii")
            assert recover_interrupted_installs(plugins) == []
            assert not killed_staging.exists()  # its owner is gone: no hour's wait
            assert not killed_clone.exists()
            assert running.exists()  # an install in progress elsewhere is left alone
        finally:
            alive.kill()


def test_a_git_clone_is_made_under_the_work_folder_and_claimed(tmp_path: Path) -> None:
    plugins = tmp_path / "plugins"
    source = tmp_path / "src" / "demo"
    source.mkdir(parents=True)
    (source / "plugin.yaml").write_text("name: demo\nversion: 1.0.0\n", encoding="utf-8")
    (source / "__init__.py").write_text("", encoding="utf-8")
    with stage(parse_source(str(source)), work_dir=plugins) as staged:
        work = [p for p in plugins.iterdir() if p.name.startswith(".fetch-")]
        assert len(work) == 1
        assert (work[0] / ".owner").read_text(encoding="ascii") == str(os.getpid())
        assert staged.name == "demo"
    assert list(plugins.iterdir()) == []  # nothing left once staged
