"""The tutorial and the fixtures reference say what the code does.

Every code block of the tutorial is a file of ``docs/tutorial/first-plugin/`` (whose tests
``test_testing_pytester.py`` runs), and its ``console test`` transcripts are run here, command
by command; the packaging step runs on a simulated installation of the tutorial's
``pyproject.toml``. The reference's ``python`` blocks run in ``test_testing_pytester.py``.
"""

from __future__ import annotations

import inspect
import re
import shlex
import shutil
import sys
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml
from plugin_builders import write_distribution

import hermes_hooks.testing
from hermes_hooks.backends.models.scripted import ScriptedModel, ScriptMismatchError, tool_call
from hermes_hooks.testing import CliOutcome, HermesHome

pytest_plugins = ["hermes_hooks.testing"]

DOCS = Path(__file__).resolve().parent.parent / "docs"
TUTORIAL = DOCS / "tutorial" / "first-plugin.md"
FILES = DOCS / "tutorial" / "first-plugin"
REFERENCE = DOCS / "reference" / "fixtures.md"

_BLOCK = re.compile(r"^```(?P<info>[^\n]*)\n(?P<body>.*?)^```$", re.MULTILINE | re.DOTALL)
_TITLE = re.compile(r'title="(?P<path>[^"]+)"')


def code_blocks(page: Path) -> list[tuple[str, str]]:
    """Return ``(info string, body)`` of every fenced block of ``page``, in order."""
    text = page.read_text(encoding="utf-8")
    return [(m["info"].strip(), m["body"]) for m in _BLOCK.finditer(text)]


def transcript(body: str) -> list[tuple[str, str]]:
    """Split a console block into ``(command, expected output)`` pairs."""
    steps: list[tuple[str, str]] = []
    for line in body.splitlines(keepends=True):
        if line.startswith("$ "):
            steps.append((line[2:].strip(), ""))
        else:
            command, output = steps[-1]
            steps[-1] = (command, output + line)
    return steps


def tutorial_files() -> list[str]:
    return sorted(
        p.relative_to(FILES).as_posix()
        for p in FILES.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    )


def test_every_code_block_of_the_tutorial_is_the_file_it_names() -> None:
    shown = []
    for info, body in code_blocks(TUTORIAL):
        title = _TITLE.search(info)
        if title is None:
            # Transcripts run as commands; the config block is checked against what they wrote.
            assert info.startswith("console") or info == "yaml config", (
                f"a block names no file: {info!r}\n{body}"
            )
            continue
        path = FILES / title["path"]
        assert path.is_file(), f"the tutorial shows {title['path']}, which is not in {FILES}"
        assert body == path.read_text(encoding="utf-8"), f"{title['path']} differs from the page"
        shown.append(title["path"])
    assert sorted(shown) == tutorial_files(), "every file of the folder is on the page, once"


@pytest.fixture
def tutorial_folder(hermes_home: HermesHome) -> Path:
    """Step 1: the folder ``no_rm`` in the current folder, as the reader wrote it."""
    folder = hermes_home.workdir / "no_rm"
    shutil.copytree(FILES / "no_rm", folder, ignore=shutil.ignore_patterns("__pycache__"))
    return folder


def run_transcript(
    body: str, hermes_cli: Callable[..., CliOutcome], hermes_home: HermesHome
) -> None:
    for command, expected in transcript(body):
        if not command.startswith("hermes "):
            continue  # rm, pip: the packaging test simulates them
        outcome = hermes_cli(*shlex.split(command)[1:])
        assert outcome.exit_code == 0, outcome
        # The reader's home is ~/.hermes; the test's is a temporary folder.
        shown = outcome.stdout.replace(str(hermes_home.path), "~/.hermes")
        assert shown == expected, f"$ {command}\n{outcome}"


def test_the_tutorial_transcripts_are_what_the_commands_print(
    tutorial_folder: Path, hermes_home: HermesHome, hermes_cli: Callable[..., CliOutcome]
) -> None:
    """A fresh home (no plugins folder yet) and the folder of step 1: every command runs."""
    shutil.rmtree(hermes_home.path / "plugins", ignore_errors=True)
    blocks = [body for info, body in code_blocks(TUTORIAL) if info == "console test"]
    assert len(blocks) == 2
    commands = [command for body in blocks for command, _ in transcript(body)]
    assert all(command.startswith("hermes ") for command in commands), commands
    for body in blocks:
        run_transcript(body, hermes_cli, hermes_home)
    (config,) = [body for info, body in code_blocks(TUTORIAL) if info == "yaml config"]
    written = yaml.safe_load((hermes_home.path / "config.yaml").read_text(encoding="utf-8"))
    assert written["plugins"]["enabled"] == yaml.safe_load(config)["plugins"]["enabled"]


@pytest.fixture
def tutorial_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """``pip install .`` of the tutorial's project, simulated: its metadata and entry points
    from ``pyproject.toml`` in a site folder, its package importable from the docs folder."""
    project = tomllib.loads((FILES / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    site = tmp_path / "site-packages"
    write_distribution(
        site,
        project["name"],
        project["entry-points"]["hermes_agent.plugins"],
        {},
        version=project["version"],
        summary=project["description"],
    )
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.syspath_prepend(str(FILES))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)  # no __pycache__ in docs/
    yield
    for name in [m for m in sys.modules if m == "no_rm" or m.startswith("no_rm.")]:
        del sys.modules[name]


@pytest.mark.hermes(entry_points=True)
def test_the_packaged_plugin_is_found_through_its_entry_point(
    tutorial_installed: None, hermes_home: HermesHome, hermes_cli: Callable[..., CliOutcome]
) -> None:
    hermes_home.enable("no-rm")
    (packaging,) = [body for _, body in code_blocks(TUTORIAL) if "$ pip install ." in body]
    run_transcript(packaging, hermes_cli, hermes_home)
    outcome = hermes_cli("-z", "run `rm -rf build`")
    assert "no-rm: deleting build recursively is not allowed" in outcome.stdout, outcome


def test_the_reference_documents_every_fixture_and_marker_option() -> None:
    text = REFERENCE.read_text(encoding="utf-8")
    fixtures = [
        name
        for name, value in vars(hermes_hooks.testing).items()
        if name.startswith("hermes_") and callable(value)
    ]
    assert len(fixtures) == 7
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    for name in fixtures:
        assert any(f"`{name}`" in h for h in headings), f"{name} has no section"
    from hermes_hooks.testing import _DEFAULTS

    for option, default in _DEFAULTS.items():
        assert f"| `{option}` | `{default}` |" in text, f"marker option {option} undocumented"
    from hermes_hooks.testing.recorder import HookCall

    for field in ("name", "kwargs", "impl_results", "plugins", "result_of", "result", "error"):
        assert hasattr(HookCall, field) or field in inspect.signature(HookCall).parameters
        assert re.search(rf"\| `{field}[`(]", text), f"HookCall.{field} undocumented"


def test_the_reference_shows_the_real_mismatch_message() -> None:
    model = ScriptedModel(["hello", tool_call("terminal", command="ls")])
    model.complete([{"role": "user", "content": "hi"}])
    with pytest.raises(ScriptMismatchError) as failed:
        model.check(ended="text_response(stop)")
    shown = [body for info, body in code_blocks(REFERENCE) if info == "text"]
    assert shown == [str(failed.value) + "\n"]
