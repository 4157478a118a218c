"""``hermes plugins install/remove``: folders, local git repositories, pip consent, safety."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest
from cli_support import GOOD, hermes, home, invoke, read_config
from plugin_builders import write_plugin

from hermes_hooks.admin import install as installer
from hermes_hooks.errors import InstallError

__all__ = ["home"]


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=Test", "-c", "user.email=test@example.invalid", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        env={**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(repo)},
    )


@pytest.fixture
def no_pip(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Record pip runs instead of making them; nothing ever reaches an index."""
    calls: list[list[str]] = []
    monkeypatch.setattr(installer, "run_pip", lambda reqs, force=False: calls.append(list(reqs)))
    return calls


def test_install_a_folder_atomically_and_enable_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    source = write_plugin(tmp_path / "src", "dev-folder", GOOD, manifest={"name": "no-rm"})
    (source / "__pycache__").mkdir()
    (source / "__pycache__" / "x.pyc").write_bytes(b"")
    (source / ".git").mkdir()
    result = hermes(home, "plugins", "install", str(source), "--enable")
    assert result.returncode == 0, result.stderr
    target = home / "plugins" / "no-rm"
    assert f"Installed plugin 'no-rm' in {target}." in result.stdout
    assert "Plugin 'no-rm' enabled." in result.stdout
    assert sorted(p.name for p in target.iterdir()) == ["__init__.py", "plugin.yaml"]
    # No staging left; the record of where it came from is for `hermes plugins update`.
    assert sorted(p.name for p in (home / "plugins").iterdir()) == [".origins.json", "no-rm"]
    listed = json.loads(hermes(home, "plugins", "list", "--json").stdout)
    assert [(i["key"], i["status"]) for i in listed] == [("no-rm", "enabled")]


def test_install_refuses_to_replace_without_force(home: Path, tmp_path: Path) -> None:
    source = write_plugin(tmp_path / "src", "p", GOOD, files={"old.txt": "old"})
    assert invoke("plugins", "install", str(source)).exit_code == 0
    again = invoke("plugins", "install", str(source))
    assert again.exit_code == 1
    assert "already installed" in again.stderr
    assert "--force" in again.stderr
    (source / "old.txt").unlink()
    assert invoke("plugins", "install", str(source), "--force").exit_code == 0
    assert not (home / "plugins" / "p" / "old.txt").exists()


def test_install_from_a_local_git_repository(home: Path, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    write_plugin(repo / "plugins", "from-git", GOOD)
    write_plugin(repo, "root-plugin", GOOD)
    (repo / "plugin.yaml").write_text("name: at-root\n")
    (repo / "__init__.py").write_text(GOOD)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "plugins")
    (repo / "plugins" / "from-git" / "untracked.txt").write_text("not committed")

    result = invoke("plugins", "install", f"{repo}#plugins/from-git")
    assert result.exit_code == 0, result.output
    installed = home / "plugins" / "from-git"
    assert sorted(p.name for p in installed.iterdir()) == ["__init__.py", "plugin.yaml"]

    assert invoke("plugins", "install", repo.as_uri()).exit_code == 0
    assert (home / "plugins" / "at-root" / "plugin.yaml").read_text() == "name: at-root\n"
    assert not (home / "plugins" / "at-root" / ".git").exists()

    escape = invoke("plugins", "install", f"{repo}#../elsewhere")
    assert escape.exit_code == 1
    assert "subdirectory '../elsewhere' is refused" in escape.stderr
    missing = invoke("plugins", "install", f"{repo}#nope")
    assert missing.exit_code == 1
    assert "not a folder in the repository" in missing.stderr
    bad_repo = invoke("plugins", "install", f"{tmp_path}#x")
    assert bad_repo.exit_code == 1
    assert "git clone failed" in bad_repo.stderr


def test_traversal_names_and_symlink_escapes_are_refused(home: Path, tmp_path: Path) -> None:
    evil = write_plugin(tmp_path / "src", "evil", GOOD, manifest="name: ../evil\n")
    result = invoke("plugins", "install", str(evil))
    assert result.exit_code == 1
    assert "'..' is not allowed" in result.stderr
    assert not (home / "evil").exists()
    assert not (home / "plugins").exists() or not any((home / "plugins").iterdir())

    leaky = write_plugin(tmp_path / "src", "leaky", GOOD)
    secret = tmp_path / "secret.txt"
    secret.write_text("secret")
    (leaky / "data").symlink_to(secret)
    refused = invoke("plugins", "install", str(leaky))
    assert refused.exit_code == 1
    assert "data is a symlink" in refused.stderr
    assert "points outside the plugin folder" in refused.stderr
    assert not (home / "plugins" / "leaky").exists()

    (leaky / "data").unlink()
    (leaky / "docs").mkdir()
    (leaky / "docs" / "README").write_text("inside")
    (leaky / "readme").symlink_to("docs/README")
    assert invoke("plugins", "install", str(leaky)).exit_code == 0
    installed = home / "plugins" / "leaky" / "readme"
    assert installed.is_symlink()
    assert installed.read_text() == "inside"


def test_plugin_target_refuses_names_and_links_leading_out(tmp_path: Path) -> None:
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    for name in (".", "..", "a/b", "a\\b", "x..y", "Upper", ""):
        with pytest.raises(InstallError, match="is refused"):
            installer.plugin_target(plugins, name)
    (plugins / "link").symlink_to(tmp_path)
    with pytest.raises(InstallError, match="outside"):
        installer.plugin_target(plugins, "link")
    assert installer.plugin_target(plugins, "fine") == plugins / "fine"


def test_pip_source_is_refused_without_a_terminal(home: Path, no_pip: list[list[str]]) -> None:
    result = invoke("plugins", "install", "pip:hermes-never-installed")
    assert result.exit_code == 1
    assert result.stderr == (
        "Error: Not installing 'hermes-never-installed' with pip: "
        "no terminal to ask; pass --yes to agree\n"
    )
    assert no_pip == []


def test_pip_source_is_refused_without_a_terminal_in_a_real_process(tmp_path: Path) -> None:
    # Even if the refusal failed, pip could reach no index: PIP_NO_INDEX is set.
    result = hermes(tmp_path / "home", "plugins", "install", "pip:hermes-nope", PIP_NO_INDEX="1")
    assert result.returncode == 1
    assert "no terminal to ask" in result.stderr
    assert "pip" not in result.stdout.lower()


def test_pip_dependencies_need_consent(home: Path, tmp_path: Path, no_pip: list[list[str]]) -> None:
    deps = {"pip_dependencies": ["hermes-test-missing-dist>=1"]}
    source = write_plugin(tmp_path / "src", "needy", GOOD, manifest=deps)
    refused = invoke("plugins", "install", str(source), "--enable")
    assert refused.exit_code == 1
    assert "needs pip packages: hermes-test-missing-dist>=1" in refused.stdout
    assert "Not installing its pip dependencies (no terminal to ask" in refused.stdout
    assert "installed but not enabled" in refused.stderr
    assert (home / "plugins" / "needy" / "plugin.yaml").exists()
    assert not (home / "config.yaml").exists()
    assert no_pip == []

    agreed = invoke("plugins", "install", str(source), "--force", "--yes", "--enable")
    assert agreed.exit_code == 0, agreed.output
    assert no_pip == [["hermes-test-missing-dist>=1"]]
    assert read_config(home) == {"plugins": {"enabled": ["needy"]}}


def test_enable_offers_missing_pip_dependencies(
    home: Path, no_pip: list[list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    deps = {"pip_dependencies": ["hermes-test-missing-dist>=1"]}
    write_plugin(home / "plugins", "needy", GOOD, manifest=deps)
    quiet = invoke("plugins", "enable", "needy")
    assert quiet.exit_code == 0, quiet.output
    assert "Plugin 'needy' enabled." in quiet.stdout
    assert "needs pip packages: hermes-test-missing-dist>=1" in quiet.stdout
    assert "not installing them (no terminal to ask; pass --yes to agree)" in quiet.stderr
    assert no_pip == []

    agreed = invoke("plugins", "enable", "needy", "--yes")
    assert agreed.exit_code == 0, agreed.output
    assert no_pip == [["hermes-test-missing-dist>=1"]]

    import hermes_hooks.cli.common
    import hermes_hooks.cli.enabling

    for module in (hermes_hooks.cli.common, hermes_hooks.cli.enabling):
        monkeypatch.setattr(module, "is_terminal", lambda: True)
    asked = invoke("plugins", "enable", "needy", input="y\n")
    assert "Install them into" in asked.stdout
    assert no_pip == [["hermes-test-missing-dist>=1"]] * 2


def test_requires_env_is_asked_on_a_terminal_and_saved_in_dot_env(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import hermes_hooks.cli.common
    import hermes_hooks.cli.install

    manifest = {"requires_env": [{"name": "HERMES_TEST_TOKEN", "secret": True}, "HERMES_TEST_X"]}
    source = write_plugin(tmp_path / "src", "needs-env", GOOD, manifest=manifest)
    quiet = invoke("plugins", "install", str(source))
    assert "needs HERMES_TEST_TOKEN, HERMES_TEST_X" in quiet.stdout
    assert not (home / ".env").exists()

    for module in (hermes_hooks.cli.common, hermes_hooks.cli.install):
        monkeypatch.setattr(module, "is_terminal", lambda: True)
    asked = invoke("plugins", "install", str(source), "--force", input="s3cr et\n\n")
    assert asked.exit_code == 0, asked.output
    assert (home / ".env").read_text() == 'HERMES_TEST_TOKEN="s3cr et"\n'
    assert stat.S_IMODE((home / ".env").stat().st_mode) == 0o600
    assert "s3cr et" not in asked.stdout  # a secret is not echoed


def test_remove_deletes_only_that_plugin(home: Path, tmp_path: Path) -> None:
    plugins = home / "plugins"
    write_plugin(plugins, "gone", GOOD)
    write_plugin(plugins, "kept", GOOD)
    outside = write_plugin(tmp_path / "dev", "linked", GOOD)
    (plugins / "linked").symlink_to(outside)
    result = invoke("plugins", "remove", "gone")
    assert result.exit_code == 0
    assert result.stdout == f"Removed plugin 'gone' ({plugins / 'gone'}).\n"
    assert sorted(p.name for p in plugins.iterdir()) == ["kept", "linked"]
    assert invoke("plugins", "remove", "linked").exit_code == 0
    assert (outside / "__init__.py").exists()  # only the link went
    unknown = invoke("plugins", "remove", "gone")
    assert unknown.exit_code == 1
    assert "Plugin 'gone' is not installed or bundled" in unknown.stderr


def test_remove_refuses_bundled_plugins(tmp_path: Path) -> None:
    result = hermes(tmp_path / "home", "plugins", "remove", "tool-log")
    assert result.returncode == 1
    assert "bundled with hermes-hooks and cannot be removed" in result.stderr


def test_installing_over_a_bundled_enabled_name_needs_force_and_never_inherits_enabled(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A repository whose manifest says ``name: command-guard`` (issue 26, item 4) does not
    silently replace the bundled, enabled blocker: it needs --force, says what it replaces,
    and the copy installed is not enabled because the bundled one was."""
    monkeypatch.delenv("HERMES_BUNDLED_PLUGINS")  # the shipped command-guard is discoverable
    from hermes_hooks.plugins.config import set_plugin_enabled

    set_plugin_enabled(home, "command-guard", True)
    source = write_plugin(tmp_path / "src", "evil", GOOD, manifest={"name": "command-guard"})
    refused = invoke("plugins", "install", str(source))
    assert refused.exit_code == 1
    assert "bundled" in refused.stderr
    assert "enabled" in refused.stderr
    assert "--force" in refused.stderr
    assert not (home / "plugins" / "command-guard").exists()
    forced = invoke("plugins", "install", str(source), "--force")
    assert forced.exit_code == 0, forced.output
    assert "replaces the bundled, enabled plugin 'command-guard'" in forced.stdout
    assert "not enabled" in forced.stdout
    config = read_config(home)
    assert isinstance(config, dict)
    assert "command-guard" not in config["plugins"].get("enabled", [])


def test_a_plugin_past_the_size_bound_is_refused_before_anything_is_copied(
    home: Path, tmp_path: Path
) -> None:
    """A 300 MB file installed (issue 26, item 13): the bound is checked first, from the sizes
    the files say (a sparse file here, so the test writes nothing)."""
    source = write_plugin(tmp_path / "src", "huge", GOOD)
    with (source / "blob.bin").open("wb") as blob:
        blob.truncate(installer.MAX_PLUGIN_BYTES + 1)
    refused = invoke("plugins", "install", str(source))
    assert refused.exit_code == 1
    assert f"at most {installer.MAX_PLUGIN_BYTES} bytes" in refused.stderr
    assert not (home / "plugins" / "huge").exists()
    assert [p.name for p in (home / "plugins").iterdir()] == []  # no staging left either
