"""Configuration found per notes file, as ruff finds its own (issue 29, "Configuration"):
the nearest ``.brainmigrate.toml`` or ``pyproject.toml`` with ``[tool.brainmigrate]`` at
or above each notes file, whatever the current folder; ``extend``; ``per-file-ignores``."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from clirun import cli
from trees import committed, renamed, write

from brainmigrate import config
from brainmigrate.cli import main

#: A checkout whose configuration fails on warnings and whose notes cite one file it
#: holds, one it lost and a spelling that warns (BM2: a Windows path).
REPO = {
    "pyproject.toml": '[project]\nname = "app"\n\n[tool.brainmigrate]\nfail-on = "warning"\n',
    "src/App.kt": "class App\n",
    "src/Main.kt": "class Main\n",
    "notes/a.md": "+ the app is src/App.kt\n+ start in src/Main.kt\n+ gone src/Gone.kt\n",
}


def _findings(stdout: str, prefix: str = "") -> list[dict]:
    return [{**f, "file": f["file"].removeprefix(prefix)} for f in json.loads(stdout)["findings"]]


def test_checking_from_above_the_checkout_uses_its_configuration(tmp_path, monkeypatch):
    committed(tmp_path / "repo", REPO)
    monkeypatch.chdir(tmp_path / "repo")
    inside = cli("check", "--format", "json", "notes")
    monkeypatch.chdir(tmp_path)
    above = cli("check", "--format", "json", "repo/notes")
    text = cli("check", "repo/notes")
    assert (inside.exit_code, above.exit_code) == (1, 1)
    assert [(f["code"], f["line"]) for f in _findings(inside.stdout)] == [("BM101", 3)]
    assert _findings(above.stdout, "repo/") == _findings(inside.stdout)
    assert json.loads(above.stdout)["fail_on"] == "warning"
    assert text.stdout == (
        "repo/notes/a.md:3:8: BM101 error cites src/Gone.kt, which no root holds\n"
        "FAILED: 1 file, 3 fact lines: 1 finding (1 error, 0 warning, 0 info); 1 failing at"
        " --fail-on warning; 0 suppressed; 0 in the baseline\n"
    )


def test_a_file_without_configuration_above_falls_back_to_the_current_folders(
    tmp_path, monkeypatch
):
    write(tmp_path, {".brainmigrate.toml": 'ignore = ["BM1"]\n', "free/a.md": "+ x src/Gone.kt\n"})
    committed(tmp_path / "other", {"notes/b.md": "+ y src/Gone.kt\n"})
    monkeypatch.chdir(tmp_path)
    r = cli("check", "free", "other/notes")
    assert (r.exit_code, r.stdout.splitlines()[-1]) == (
        0,
        "OK: 2 files, 2 fact lines: 0 findings (0 error, 0 warning, 0 info);"
        " 0 failing at --fail-on error; 0 suppressed; 0 in the baseline",
    )


def _two_packages(tmp_path):
    """Packages ``a`` (ignores BM101, fails on errors) and ``b`` (reports every code), each
    with its own configuration and a notes file citing one file it holds, one it lost."""
    write(
        tmp_path,
        {
            "a/.brainmigrate.toml": 'ignore = ["BM101"]\n',
            "a/src/One.kt": "class One\n",
            "a/notes/a.md": "+ one src/One.kt\n+ gone src/Lost.kt\n",
            "b/pyproject.toml": '[tool.brainmigrate]\nfail-on = "error"\n',
            "b/src/Two.kt": "class Two\n",
            "b/notes/b.md": "+ two src/Two.kt\n+ gone src/Away.kt\n",
        },
    )


def test_two_packages_are_checked_each_with_its_own_configuration(tmp_path, monkeypatch):
    _two_packages(tmp_path)
    monkeypatch.chdir(tmp_path)
    r = cli("check", "a/notes", "b/notes")
    assert r.exit_code == 1
    assert r.stdout == (
        "b/notes/b.md:2:8: BM101 error cites src/Away.kt, which no root holds\n"
        "FAILED: 2 files, 4 fact lines: 1 finding (1 error, 0 warning, 0 info); 1 failing at"
        " --fail-on error; 0 suppressed; 0 in the baseline\n"
    )
    report = json.loads(cli("check", "--format", "json", "a/notes", "b/notes").stdout)
    assert (report["totals"]["files"], report["totals"]["facts"]) == (2, 4)
    # the command line overrides every group's file
    r = cli("check", "--root", "a", "--format", "json", "b/notes", "a/notes")
    assert [(f["file"], f["line"]) for f in json.loads(r.stdout)["findings"]] == [
        ("b/notes/b.md", 1),
        ("b/notes/b.md", 2),
    ]
    assert cli("check", "--ignore", "BM1", "a/notes", "b/notes").exit_code == 0


def test_verbose_says_the_configuration_of_each_group(tmp_path, monkeypatch):
    _two_packages(tmp_path)
    monkeypatch.chdir(tmp_path)
    r = cli("check", "-v", "--select", "BM1", "a/notes", "b/notes")
    assert r.stderr.splitlines() == [
        "brainmigrate: configuration: a/.brainmigrate.toml (for a/notes)",
        "brainmigrate: roots: a",
        "brainmigrate: codes: BM102, BM103, BM104, BM105",
        "brainmigrate: configuration: b/pyproject.toml [tool.brainmigrate] (for b/notes)",
        "brainmigrate: roots: b",
        "brainmigrate: codes: BM101, BM102, BM103, BM104, BM105",
    ]


def test_groups_with_another_fail_on_are_refused_in_one_line(tmp_path, monkeypatch):
    _two_packages(tmp_path)
    (tmp_path / "a/.brainmigrate.toml").write_text('fail-on = "info"\n')
    monkeypatch.chdir(tmp_path)
    r = cli("check", "a/notes", "b/notes")
    assert (r.exit_code, r.stdout, r.stderr) == (
        2,
        "",
        "brainmigrate: error: notes under a/ and b/ have different fail-on"
        " (a/.brainmigrate.toml, b/pyproject.toml); check them apart or pass --fail-on\n",
    )
    assert cli("check", "--fail-on", "info", "a/notes", "b/notes").exit_code == 1


def test_one_import_of_notes_under_other_roots_is_refused(tmp_path, monkeypatch):
    _two_packages(tmp_path)
    monkeypatch.chdir(tmp_path)
    r = cli("import", "--dry-run", "a/notes", "b/notes")
    assert (r.exit_code, r.stdout, r.stderr) == (
        2,
        "",
        "brainmigrate: error: notes under a/ and b/ have different roots"
        " (a/.brainmigrate.toml, b/pyproject.toml); import them apart or pass --root\n",
    )
    assert not (tmp_path / "know.db").exists()
    r = cli("import", "--root", "a", "--root", "b", "--format", "json", "a/notes", "b/notes")
    assert r.exit_code == 0, r.stderr
    report = json.loads(r.stdout)
    assert (report["totals"]["added"], report["totals"]["gone"]) == (4, 2)


def test_extend_takes_the_keys_of_a_chain_of_files_its_own_winning(tmp_path, monkeypatch):
    write(
        tmp_path,
        {
            "base/pyproject.toml": '[tool.brainmigrate]\nroots = ["shared"]\nfail-on = "info"\n'
            'exclude = ["old/*"]\nignore = ["BM104"]\n',
            "team/.brainmigrate.toml": 'extend = "../base/pyproject.toml"\nfail-on = "warning"\n'
            'extend-exclude = ["wip/*"]\n',
            "repo/.brainmigrate.toml": 'extend = "../team/.brainmigrate.toml"\n'
            'extend-exclude = ["tmp/*"]\nbaseline = "bl.json"\n',
        },
    )
    monkeypatch.chdir(tmp_path)
    got = config.load("repo")
    assert (got.roots, got.fail_on, got.exclude, got.extend_exclude, got.ignore) == (
        ("base/shared",),
        "warning",
        ("old/*",),
        ("wip/*", "tmp/*"),
        ("BM104",),
    )
    assert (got.baseline, got.source) == ("repo/bl.json", "repo/.brainmigrate.toml")


def test_a_cycle_of_extend_is_one_line_naming_the_files(tmp_path, monkeypatch):
    write(
        tmp_path,
        {
            ".brainmigrate.toml": 'extend = "conf/a.toml"\n',
            "conf/a.toml": 'extend = "b.toml"\n',
            "conf/b.toml": 'extend = "a.toml"\n',
            "notes/a.md": "+ x\n",
        },
    )
    monkeypatch.chdir(tmp_path)
    r = cli("check", "notes")
    assert (r.exit_code, r.stdout, r.stderr) == (
        2,
        "",
        "brainmigrate: error: conf/b.toml: key 'extend': a cycle (.brainmigrate.toml ->"
        " conf/a.toml -> conf/b.toml -> conf/a.toml); remove one extend\n",
    )


def test_extend_of_a_missing_file_or_a_bad_value_there_names_the_file(tmp_path, monkeypatch):
    write(tmp_path, {".brainmigrate.toml": 'extend = "base.toml"\n', "notes/a.md": "+ x\n"})
    monkeypatch.chdir(tmp_path)
    r = cli("check", "notes")
    assert (r.exit_code, r.stderr) == (
        2,
        "brainmigrate: error: .brainmigrate.toml: key 'extend': base.toml: no such file (a path"
        " there is relative to the file's folder); fix the path\n",
    )
    (tmp_path / "base.toml").write_text('fail-on = "loud"\n')
    assert cli("check", "notes").stderr == (
        "brainmigrate: error: base.toml: key 'fail-on' is 'loud'; give one of error, warning,"
        " info\n"
    )


def test_per_file_ignores_leave_out_the_codes_of_the_files_they_match(tmp_path, monkeypatch):
    committed(
        tmp_path / "repo",
        {
            ".brainmigrate.toml": 'extend = "base.toml"\nextend-per-file-ignores = '
            '{ "legacy.md" = ["BM1"] }\n',
            "base.toml": 'per-file-ignores = { "notes/old/*.md" = ["BM101"] }\n',
            "src/App.kt": "class App\n",
            "notes/new.md": "+ gone src/Gone.kt\n",
            "notes/old/a.md": "+ gone src/Lost.kt\n+ kept src/App.kt\n",
            "notes/legacy.md": "+ gone src/Away.kt\n",
        },
    )
    monkeypatch.chdir(tmp_path)  # the globs match from the configuration's folder
    r = cli("check", "--format", "json", "repo/notes")
    assert r.exit_code == 1
    report = json.loads(r.stdout)
    assert [(f["file"], f["code"]) for f in report["findings"]] == [("repo/notes/new.md", "BM101")]
    totals = report["totals"]
    assert (totals["files"], totals["findings"], totals["by_code"], totals["suppressed"]) == (
        3,
        1,
        {"BM101": 1},
        0,
    )
    monkeypatch.chdir(tmp_path / "repo")
    assert cli("check", "notes/old", "notes/legacy.md").stdout == (
        "OK: 2 files, 3 fact lines: 0 findings (0 error, 0 warning, 0 info);"
        " 0 failing at --fail-on error; 0 suppressed; 0 in the baseline\n"
    )


def test_a_per_file_ignores_value_that_is_no_table_of_codes_is_refused(tmp_path):
    bad = tmp_path / ".brainmigrate.toml"
    bad.write_text('per-file-ignores = { "a.md" = ["BMX"] }\n')
    with pytest.raises(config.ConfigError) as err:
        config.load(tmp_path)
    assert str(err.value).endswith(
        ": key 'per-file-ignores': 'BMX' is not a finding code or prefix (BM101, BM1, BM)"
    )
    bad.write_text('per-file-ignores = ["a.md"]\n')
    with pytest.raises(config.ConfigError, match="give a table of globs to lists of codes"):
        config.load(tmp_path)


def test_a_folder_holding_a_nearer_configuration_is_checked_file_by_file(tmp_path, monkeypatch):
    committed(
        tmp_path,
        {
            "src/App.kt": "class App\n",
            "notes/a.md": "+ gone src/Gone.kt\n",
            "notes/sub/.brainmigrate.toml": 'ignore = ["BM101"]\nroots = ["../.."]\n',
            "notes/sub/b.md": "+ gone src/Lost.kt\n+ kept src/App.kt\n",
        },
    )
    monkeypatch.chdir(tmp_path)
    r = cli("check", "notes")
    assert (r.exit_code, r.stdout) == (
        1,
        "notes/a.md:1:8: BM101 error cites src/Gone.kt, which no root holds\n"
        "FAILED: 2 files, 3 fact lines: 1 finding (1 error, 0 warning, 0 info); 1 failing at"
        " --fail-on error; 0 suppressed; 0 in the baseline\n",
    )


def test_config_names_one_file_of_either_form_for_every_notes_file(tmp_path, monkeypatch):
    _two_packages(tmp_path)
    write(tmp_path, {"alt.toml": '[tool.brainmigrate]\nextend = "a/.brainmigrate.toml"\n'})
    monkeypatch.chdir(tmp_path)
    r = cli("check", "--config", "alt.toml", "-v", "a/notes", "b/notes")
    assert r.stderr.splitlines()[:2] == [
        "brainmigrate: configuration: alt.toml [tool.brainmigrate]",
        "brainmigrate: roots: .",
    ]
    assert (r.exit_code, r.stdout) == (  # BM101 ignored everywhere, extended from a/
        0,
        "OK: 2 files, 4 fact lines: 0 findings (0 error, 0 warning, 0 info); 0 failing at"
        " --fail-on error; 0 suppressed; 0 in the baseline\n",
    )
    assert cli("check", "--isolated", "a/notes", "b/notes").exit_code == 1


def test_fix_and_baseline_work_across_groups(tmp_path, monkeypatch):
    for name in ("a", "b"):
        renamed(tmp_path / name, "def f():\n    return 1\n")
        write(
            tmp_path / name,
            {".brainmigrate.toml": 'exclude = ["skip*"]\n', "notes/n.md": "+ see src/old.py\n"},
        )
    monkeypatch.chdir(tmp_path)
    r = cli("check", "--baseline", "bl.json", "--update-baseline", "a/notes", "b/notes")
    assert r.exit_code == 0, r.stderr
    stored = json.loads((tmp_path / "bl.json").read_text())
    assert sorted(e["file"] for e in stored["entries"]) == ["a/notes/n.md", "b/notes/n.md"]
    r = cli("check", "--baseline", "bl.json", "a/notes", "b/notes")
    assert (r.exit_code, r.stdout.splitlines()[-1]) == (
        0,
        "OK: 2 files, 2 fact lines: 2 findings (2 error, 0 warning, 0 info); 0 failing at"
        " --fail-on error; 0 suppressed; 2 in the baseline",
    )
    r = cli("check", "--fix", "a/notes", "b/notes")
    assert r.exit_code == 0, r.stderr
    for name in ("a", "b"):
        assert (tmp_path / name / "notes/n.md").read_text() == "+ see src/new.py\n"


def test_a_report_is_never_written_over_a_configuration_the_run_found(tmp_path, monkeypatch):
    _two_packages(tmp_path)
    monkeypatch.chdir(tmp_path)
    before = (tmp_path / "b/pyproject.toml").read_bytes()
    r = cli("check", "--format", "json", "--output", "b/pyproject.toml", "a/notes", "b/notes")
    assert (r.exit_code, r.stderr) == (
        2,
        "brainmigrate: error: --format json --output b/pyproject.toml would be written over"
        " the configuration b/pyproject.toml, which this command reads; pass --output another"
        " path\n",
    )
    r = cli("import", "--root", ".", "--dry-run", "--output", "a/.brainmigrate.toml", "a/notes")
    assert r.exit_code == 2
    assert (tmp_path / "b/pyproject.toml").read_bytes() == before
    assert (tmp_path / "a/.brainmigrate.toml").read_text() == 'ignore = ["BM101"]\n'


def test_standard_input_takes_the_configuration_of_its_stdin_filename(tmp_path, monkeypatch):
    _two_packages(tmp_path)
    monkeypatch.chdir(tmp_path)
    notes = "+ gone src/Lost.kt\n"
    r = CliRunner().invoke(main, ["check", "--stdin-filename", "a/notes/new.md", "-"], notes)
    assert (r.exit_code, r.stdout.splitlines()[-1]) == (
        0,
        "OK: 1 file, 1 fact line: 0 findings (0 error, 0 warning, 0 info); 0 failing at"
        " --fail-on error; 0 suppressed; 0 in the baseline",
    )
    r = CliRunner().invoke(main, ["check", "--stdin-filename", "b/notes/new.md", "-"], notes)
    assert (r.exit_code, r.stdout.splitlines()[0]) == (
        1,
        "b/notes/new.md:1:8: BM101 error cites src/Lost.kt, which no root holds",
    )
