"""The README documents every command and option, and its set-up commands stay true."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest

from brainmigrate.cli import main

REPO = Path(__file__).resolve().parent.parent
README = (REPO / "README.md").read_text(encoding="utf-8")
DOCS = README + "".join(p.read_text(encoding="utf-8") for p in sorted((REPO / "docs").glob("*.md")))
COMMANDS = sorted(main.commands)


def test_every_command_has_help_and_a_readme_section():
    for name in COMMANDS:
        cmd = main.commands[name]
        assert cmd.help, name
        assert f"brainmigrate {name}" in README, f"README has no section for {name}"


@pytest.mark.parametrize("name", COMMANDS)
def test_every_option_is_documented(name):
    cmd = main.commands[name]
    for param in cmd.params:
        if not isinstance(param, click.Option):
            continue
        for opt in param.opts:
            if opt.startswith("--") and opt != "--help":
                assert re.search(rf"`{re.escape(opt)}[` ]", DOCS), f"{name} {opt} undocumented"


def test_first_screen_has_the_two_setup_commands():
    first = README.split("\n---\n")[0]
    commands = re.findall(r"```sh\n(.+?)\n```", first)
    assert len(commands) == 2
    assert "pip install ." in commands[0] and "brainmigrate import samples/" in commands[0]
    assert "pip install -e '.[test]'" in commands[1] and commands[1].endswith("pytest")


def test_ci_runs_the_readme_test_command():
    test_command = re.findall(r"```sh\n(.+?)\n```", README)[1]
    assert test_command in (REPO / ".ci" / "run").read_text()


def test_exit_codes_documented():
    for code in ("| 0 |", "| 1 |", "| 2 |"):
        assert code in README


def test_the_agent_notes_example_is_what_check_prints(monkeypatch):
    """docs/check.md's worked example on samples/roots/shelf (Markdown notes, folders,
    scripts, aliases, git-ignored files) is what ``check`` prints, line for line."""
    from click.testing import CliRunner

    text = (REPO / "docs/check.md").read_text(encoding="utf-8")
    block = text.split("$ brainmigrate check samples/roots/shelf --root samples/roots/shelf\n")
    expected = block[1].split("\n```", 1)[0].splitlines()
    monkeypatch.chdir(REPO)
    done = CliRunner().invoke(
        main, ["check", "samples/roots/shelf", "--root", "samples/roots/shelf", "--isolated"]
    )
    assert done.exit_code == 1
    assert done.output.splitlines() == expected
