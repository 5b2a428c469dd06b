"""What a user reads: help on every command, errors in one shape, honest summaries, Ctrl-C
(issue 11, "Honest reports and messages")."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from brainmigrate.cli import main


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.mark.parametrize("command", sorted(main.commands))
@pytest.mark.parametrize("flag", ["-h", "--help"])
def test_every_command_takes_h_for_help(command, flag):
    got = cli(command, flag)
    assert (got.exit_code, got.stderr) == (0, "")
    assert got.stdout.startswith(f"Usage: brainmigrate {command} [OPTIONS]")
    assert "  -h, --help " in got.stdout


def test_search_for_h_after_a_double_dash(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "n.md").write_text("+ the -h flag of the tool prints help\n")
    assert cli("import", "n.md", "--store", "k.db").exit_code == 0
    got = cli("search", "--store", "k.db", "--", "-h")
    assert (got.exit_code, got.stdout) == (
        0,
        "k1 environment area:n  the -h flag of the tool prints help\n",
    )
