"""``brainmigrate check`` options that behave as ruff's and flake8's do: rule selection,
inline ``ignore`` comments, statistics, severity in the text, colour, quiet and verbose."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from clirun import invoker

from brainmigrate import __version__, rules
from brainmigrate.cli import main
from brainmigrate.cli.runtime import use_color

NOTES = """\
+ gone app/Old.kt
+ outside /etc/hosts.conf
~ ambiguous Config.kt
"""


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    """``repo/`` holds two Config.kt; ``notes/a.md`` cites a gone, an outside and an
    ambiguous name (BM101, BM102, BM201)."""
    for rel in ("repo/app/Main.kt", "repo/lib/a/Config.kt", "repo/lib/b/Config.kt"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("class X\n")
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes/a.md").write_text(NOTES)
    monkeypatch.chdir(tmp_path)
    return tmp_path


cli = invoker("check", "notes", "--root", "repo")


def codes(result) -> list[str]:
    return [line.split()[1] for line in result.stdout.splitlines() if ": BM" in line]


# ------------------------------------------------------------------------------ selection


def test_selection_prefers_the_longest_prefix_and_ignore_on_a_tie():
    sel = rules.Selection(select=("BM1",), ignore=("BM10",), extend_select=("BM101",))
    assert [c for c in ("BM101", "BM102", "BM103", "BM201") if sel.enabled(c)] == ["BM101"]
    assert not rules.Selection(select=("BM1",), ignore=("BM1",)).enabled("BM101")
    assert rules.Selection().codes() == [c for c in rules.RULES if c not in rules.STALE_CODES]


def test_select_ignore_and_extend_select_on_the_command_line(project):
    assert codes(cli()) == ["BM101", "BM102", "BM201"]
    assert codes(cli("--select", "BM1")) == ["BM101", "BM102"]
    assert codes(cli("--select", "BM2,BM101")) == ["BM101", "BM201"]
    assert codes(cli("--ignore", "BM102")) == ["BM101", "BM201"]
    assert codes(cli("--select", "BM2", "--extend-select", "BM102")) == ["BM102", "BM201"]
    got = cli("--ignore", "BM101")
    assert got.exit_code == 0  # the one error is not reported, so nothing fails
    assert got.stdout.splitlines()[-1] == (
        "OK: 1 file, 3 fact lines: 2 findings (0 error, 1 warning, 1 info); "
        "0 failing at --fail-on error; 0 suppressed; 0 in the baseline"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--select", "BM9"], "--select BM9: matches no finding code"),
        (["--ignore", "E501"], "--ignore: 'E501' is not a finding code or prefix"),
    ],
)
def test_a_code_that_is_none_exits_2(project, args, message):
    got = cli(*args)
    assert got.exit_code == 2
    assert got.stderr.startswith(f"brainmigrate: error: {message}")


def test_selection_in_the_configuration(project):
    (project / ".brainmigrate.toml").write_text('select = ["BM1"]\nignore = ["BM101"]\n')
    assert codes(cli()) == ["BM102"]
    assert codes(cli("--select", "BM")) == ["BM102", "BM201"]  # ignore still applies
    assert codes(cli("--extend-select", "BM201")) == ["BM102", "BM201"]


# ------------------------------------------------------------------------------ inline ignore


def test_inline_ignore_suppresses_the_codes_it_names(project):
    (project / "notes/a.md").write_text(
        "+ gone app/Old.kt and /etc/hosts.conf <!-- brainmigrate: ignore BM101, BM102 -->\n"
        "~ ambiguous Config.kt\n"
        "  and app/Gone.kt <!-- brainmigrate: ignore BM2 -->\n"
    )
    got = cli("--fail-on", "info")
    assert got.stdout.splitlines() == [
        "notes/a.md:1:8: BM101 error cites app/Old.kt, which no root holds [suppressed]",
        "notes/a.md:1:23: BM102 warning cites /etc/hosts.conf, outside every root "
        "(absolute path under no root) [suppressed]",
        "notes/a.md:2:13: BM201 info Config.kt names 2 files: lib/a/Config.kt, lib/b/Config.kt "
        "[suppressed]",
        "notes/a.md:3:7: BM101 error cites app/Gone.kt, which no root holds",
        "FAILED: 1 file, 2 fact lines: 4 findings (2 error, 1 warning, 1 info); "
        "1 failing at --fail-on info; 3 suppressed; 0 in the baseline",
    ]


def test_an_unused_suppression_is_reported(project):
    (project / "notes/a.md").write_text(
        "+ fine Config.kt <!-- brainmigrate: ignore BM102 -->\n"
        "+ nothing gone here <!-- brainmigrate: allow-gone -->\n"
    )
    got = cli("--select", "BM4")
    assert got.exit_code == 0
    assert got.stdout.splitlines()[:2] == [
        "notes/a.md:1: BM401 info unused suppression 'ignore BM102': the fact has no BM102 finding",
        "notes/a.md:2: BM401 info unused suppression 'allow-gone': the fact has no gone path",
    ]
    assert cli("--fail-on", "info", "--ignore", "BM401").exit_code == 1  # BM201 still fails


def test_sarif_names_the_comment_that_suppressed(project):
    (project / "notes/a.md").write_text("+ see /etc/hosts.conf <!-- brainmigrate: ignore BM1 -->\n")
    got = cli("--format", "sarif")
    result = json.loads(got.stdout)["runs"][0]["results"][0]
    assert result["suppressions"] == [
        {"kind": "inSource", "justification": "<!-- brainmigrate: ignore BM1 -->"}
    ]


# ------------------------------------------------------------------------------ statistics


def test_statistics_counts_per_code(project):
    (project / "notes/b.md").write_text("+ also gone app/Older.kt\n")
    got = cli("--statistics")
    assert got.exit_code == 1
    assert got.stdout == (
        "2 BM101 error gone-path\n"
        "1 BM102 warning outside-root\n"
        "1 BM201 info ambiguous-name\n"
        "FAILED: 2 files, 4 fact lines: 4 findings (2 error, 1 warning, 1 info); "
        "2 failing at --fail-on error; 0 suppressed; 0 in the baseline\n"
    )
    got = cli("--statistics", "-q")
    assert got.stdout.splitlines() == [
        "2 BM101 error gone-path",
        "1 BM102 warning outside-root",
        "1 BM201 info ambiguous-name",
    ]


def test_statistics_go_to_stderr_when_stdout_holds_another_format(project):
    got = cli("--statistics", "--format", "json")
    assert json.loads(got.stdout)["totals"]["findings"] == 3
    assert got.stderr.startswith("1 BM101 error gone-path\n1 BM102 warning outside-root\n")


# ------------------------------------------------------------------------------ text, colour


def test_text_names_the_severity(project):
    assert cli().stdout.splitlines()[0] == (
        "notes/a.md:1:8: BM101 error cites app/Old.kt, which no root holds"
    )


def test_color_always_paints_the_text_report(project):
    got = cli("--color", "always", "--select", "BM101")
    assert got.stdout.splitlines() == [
        "\x1b[1mnotes/a.md:1:8\x1b[0m: \x1b[1mBM101\x1b[0m \x1b[31m\x1b[1merror\x1b[0m "
        "cites app/Old.kt, which no root holds",
        "\x1b[31m\x1b[1mFAILED\x1b[0m: 1 file, 3 fact lines: 1 finding (1 error, 0 warning, "
        "0 info); 1 failing at --fail-on error; 0 suppressed; 0 in the baseline",
    ]


@pytest.mark.parametrize(
    ("args", "env"),
    [
        ([], {}),  # CliRunner's stdout is no terminal
        (["--color", "never"], {"FORCE_COLOR": "1"}),
        ([], {"NO_COLOR": "1", "FORCE_COLOR": "1"}),
    ],
)
def test_no_color_when_not_a_terminal_or_asked_not_to(project, args, env):
    got = cli(*args, env=env)
    assert "\x1b[" not in got.stdout
    assert got.stdout.startswith("notes/a.md:1:8: BM101 error")


def test_force_color_colours_without_a_terminal(project):
    assert "\x1b[31m" in cli(env={"FORCE_COLOR": "1"}).stdout


def test_color_is_never_written_to_a_file(project):
    cli("--color", "always", "--output", "r.txt")
    assert (project / "r.txt").read_text().startswith("notes/a.md:1:8: BM101 error")


class Tty:
    def __init__(self, tty: bool) -> None:
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def test_auto_colours_a_terminal_unless_no_color(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    assert use_color("auto", Tty(True)) is True
    assert use_color("auto", Tty(False)) is False
    monkeypatch.setenv("NO_COLOR", "1")
    assert use_color("auto", Tty(True)) is False
    assert use_color("always", Tty(False)) is True
    monkeypatch.delenv("NO_COLOR")
    monkeypatch.setenv("FORCE_COLOR", "0")
    assert use_color("auto", Tty(False)) is False


# ------------------------------------------------------------------------------ -q, -v, -V


def test_quiet_prints_the_findings_only(project):
    (project / ".brainmigrate.toml").write_text('exclude = ["b.md"]\n')
    (project / "pyproject.toml").write_text("[tool.brainmigrate]\n")
    got = cli("-q", "--select", "BM10")
    assert got.stdout == (
        "notes/a.md:1:8: BM101 error cites app/Old.kt, which no root holds\n"
        "notes/a.md:2:11: BM102 warning cites /etc/hosts.conf, outside every root "
        "(absolute path under no root)\n"
    )
    assert got.stderr == ""  # no note on which configuration file is used
    assert cli("--quiet").exit_code == 1


def test_verbose_says_which_configuration_roots_and_codes(project):
    (project / ".brainmigrate.toml").write_text('ignore = ["BM2", "BM3", "BM4"]\n')
    got = cli("-v")
    assert got.stderr == (
        "brainmigrate: configuration: .brainmigrate.toml\n"
        "brainmigrate: roots: repo\n"
        "brainmigrate: codes: BM101, BM102, BM103, BM104, BM105\n"
    )
    assert cli("--verbose", "--isolated").stderr.startswith("brainmigrate: configuration: none\n")


def test_short_version_option():
    got = CliRunner().invoke(main, ["-V"])
    assert (got.exit_code, got.output) == (0, f"brainmigrate, version {__version__}\n")


# ------------------------------------------------------------------------------ stdin


def test_notes_from_standard_input_take_the_stdin_filename(project):
    text = "+ gone app/Old.kt\n"
    run = CliRunner().invoke
    args = ["check", "-", "--root", "repo", "--stdin-filename", "notes/Draft.md"]
    got = run(main, [*args, "--format", "json"], input=text)
    assert got.exit_code == 1
    finding = json.loads(got.stdout)["findings"][0]
    assert (finding["file"], finding["line"], finding["col"], finding["scope"]) == (
        "notes/Draft.md",
        1,
        8,
        "area:draft",
    )
    got = run(main, ["check", "-", "--root", "repo"], input=text)
    assert got.stdout.splitlines()[0] == "-:1:8: BM101 error cites app/Old.kt, which no root holds"
    # named on the command line, the notes are excluded only with --force-exclude (ruff's rule)
    got = run(main, [*args, "--exclude", "Draft.md"], input=text)
    assert got.exit_code == 1
    got = run(main, [*args, "--exclude", "Draft.md", "--force-exclude"], input=text)
    assert (got.exit_code, got.stdout.splitlines()[-2]) == (0, "Excluded: notes/Draft.md")


def test_import_reads_standard_input_too(project):
    got = CliRunner().invoke(
        main,
        ["import", "-", "--stdin-filename", "ops.md", "--dry-run", "--format", "json"],
        input="= deploys on Fridays\n",
    )
    assert got.exit_code == 0, got.output
    data = json.loads(got.stdout)
    assert [f["path"] for f in data["files"]] == ["ops.md"]
    assert (data["facts"][0]["scope"], data["facts"][0]["origin"]) == (
        "area:ops",
        {"file": "ops.md", "line": 1},
    )


def test_stdin_filename_without_dash_is_a_usage_error(project):
    got = cli("--stdin-filename", "x.md")
    assert got.exit_code == 2
    assert "--stdin-filename names the notes of '-': add - as a PATH" in got.stderr


def test_select_all_is_every_code_and_a_stale_code_is_refused(project):
    assert codes(cli("--select", "ALL")) == codes(cli())
    assert codes(cli("--select", "all", "--ignore", "BM102")) == [
        c for c in codes(cli()) if c != "BM102"
    ]
    got = cli("--select", "BM501")
    assert got.exit_code == 2
    assert "--select BM501: 'brainmigrate stale' reports it, check never does" in got.output
