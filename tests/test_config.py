"""Configuration of ``check``: ``.brainmigrate.toml`` or ``[tool.brainmigrate]`` in
``pyproject.toml``; command-line options override it; bad keys and values exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from clirun import invoker

from brainmigrate import config
from brainmigrate.cli import main


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    """Two checkouts (``a`` holds app/One.kt, ``b`` holds app/Two.kt) and notes citing both."""
    for rel in ("a/app/One.kt", "b/app/Two.kt"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("class X\n")
    (tmp_path / "notes/drafts").mkdir(parents=True)
    (tmp_path / "notes/main.md").write_text("+ one app/One.kt\n+ outside /etc/hosts.conf\n")
    (tmp_path / "notes/drafts/wip.md").write_text("+ two app/Two.kt\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


cli = invoker("check")


def test_no_file_gives_defaults(tmp_path):
    assert config.load(tmp_path) == config.Settings()
    assert config.Settings().fail_on == "error"


def test_brainmigrate_toml(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".brainmigrate.toml").write_text(
        'roots = ["a", "b"]\ntask-pattern = "[A-Z]+-[0-9]+"\nplus-kind = "decision"\n'
        'fail-on = "warning"\nexclude = ["drafts/*"]\nbaseline = "bl.json"\n'
    )
    assert config.load(tmp_path) == config.Settings(
        roots=("a", "b"),
        task_pattern="[A-Z]+-[0-9]+",
        plus_kind="decision",
        fail_on="warning",
        exclude=("drafts/*",),
        baseline="bl.json",
        source=".brainmigrate.toml",
        roots_from=".brainmigrate.toml",
    )


def test_pyproject_table(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.brainmigrate]\nroots = ["a"]\nfail-on = "info"\n'
    )
    got = config.load(tmp_path)
    assert (got.roots, got.fail_on, got.source) == (
        ("a",),
        "info",
        "pyproject.toml [tool.brainmigrate]",
    )


def test_pyproject_without_the_table_gives_defaults(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n[tool.ruff]\nline-length = 9\n'
    )
    assert config.load(tmp_path) == config.Settings()


def test_brainmigrate_toml_wins_over_pyproject(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.brainmigrate]\nfail-on = "info"\n')
    (tmp_path / ".brainmigrate.toml").write_text('fail-on = "warning"\n')
    assert config.load(tmp_path).fail_on == "warning"


def test_command_line_overrides_settings():
    base = config.Settings(roots=("a",), fail_on="info", baseline="x.json", exclude=("d/*",))
    got = base.override(roots=("b",), fail_on="error", baseline=None, plus_kind="other")
    assert got == config.Settings(
        roots=("b",), fail_on="error", baseline="x.json", exclude=("d/*",), plus_kind="other"
    )
    assert base.override() == base


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ('fail_on = "error"\n', "unknown key 'fail_on'"),
        ("color = true\n", "unknown key 'color'"),
        ('fail-on = "fatal"\n', "key 'fail-on' is 'fatal'; give one of error, warning, info"),
        (
            'plus-kind = "fact"\n',
            "key 'plus-kind' is 'fact'; give one of decision, pattern, blocker",
        ),
        ('roots = "a"\n', "key 'roots' is 'a'; give a list of non-blank strings"),
        ('roots = [" "]\n', "key 'roots' is [' ']; give a list of non-blank strings"),
        ("roots = []\n", "key 'roots' is []; name at least one folder"),
        ("exclude = [1]\n", "key 'exclude' is [1]; give a list of non-blank strings"),
        ("baseline = 3\n", "key 'baseline' is 3; give a non-blank string"),
        ('task-pattern = ""\n', "key 'task-pattern' is ''; give a non-blank string"),
        ('task-pattern = "(["\n', "key 'task-pattern' is not a valid regular expression ("),
        ("fail-on = \n", "not valid TOML"),
    ],
)
def test_bad_configuration_exits_2_naming_the_key(project, toml, message):
    (project / ".brainmigrate.toml").write_text(toml)
    with pytest.raises(config.ConfigError) as err:
        config.load(project)
    assert message in str(err.value)
    got = cli("notes")
    assert got.exit_code == 2
    assert got.output.startswith("brainmigrate: error: .brainmigrate.toml: ")
    assert message in got.output


def test_bad_pyproject_key_names_the_table(project):
    (project / "pyproject.toml").write_text('[tool.brainmigrate]\nroot = ["a"]\n')
    got = cli("notes")
    assert got.exit_code == 2
    assert "pyproject.toml [tool.brainmigrate]: unknown key 'root'" in got.output


def test_config_roots_and_exclude_apply(project):
    # Without configuration the current folder is the root: both citations are gone.
    assert cli("notes").exit_code == 1
    (project / ".brainmigrate.toml").write_text('roots = ["a"]\nexclude = ["drafts/*"]\n')
    got = cli("notes")
    assert got.exit_code == 0, got.output
    assert got.output.splitlines() == [
        "notes/main.md:2:11: BM102 warning cites /etc/hosts.conf, outside every root "
        "(absolute path under no root)",
        "Excluded: notes/drafts/wip.md",
        "OK: 1 file, 2 fact lines: 1 finding (0 error, 1 warning, 0 info); "
        "0 failing at --fail-on error; 0 suppressed; 0 in the baseline",
    ]


def test_command_line_roots_override_config_roots(project):
    (project / ".brainmigrate.toml").write_text('roots = ["a", "b"]\n')
    assert cli("notes").exit_code == 0
    got = cli("notes", "--root", "a")
    assert got.exit_code == 1
    assert "notes/drafts/wip.md:1:7: BM101 error cites app/Two.kt" in got.output


def test_a_config_root_that_is_no_folder_names_the_file(project, monkeypatch):
    (project / ".brainmigrate.toml").write_text('roots = ["a", "nope"]\n')
    monkeypatch.chdir(project / "notes")  # paths in the file are relative to its folder
    got = CliRunner().invoke(main, ["check", "."])
    assert got.exit_code == 2
    assert got.output == (
        "brainmigrate: error: ../.brainmigrate.toml: key 'roots': ../nope: no such folder"
        " (a path there is relative to the file's folder); fix the file or pass --root\n"
    )
    assert CliRunner().invoke(main, ["check", ".", "--root", "../a"]).exit_code == 1  # ran


def test_command_line_fail_on_overrides_config(project):
    (project / ".brainmigrate.toml").write_text('roots = ["a", "b"]\nfail-on = "warning"\n')
    assert cli("notes").exit_code == 1  # the outside path is a warning
    assert cli("notes", "--fail-on", "error").exit_code == 0


def test_config_baseline_is_used_and_overridden(project):
    (project / ".brainmigrate.toml").write_text('roots = ["a"]\nbaseline = "bl.json"\n')
    assert cli("notes", "--update-baseline").exit_code == 0
    assert (project / "bl.json").is_file()
    assert cli("notes").exit_code == 0
    got = cli("notes", "--baseline", "other.json")
    assert got.exit_code == 2
    assert "--baseline other.json: no such file" in got.output


# ------------------------------------------------------------------------------ discovery


def test_found_in_a_parent_folder_with_paths_relative_to_it(project, monkeypatch):
    (project / ".git").mkdir()
    (project / ".brainmigrate.toml").write_text(
        'roots = ["a"]\nbaseline = "bl.json"\ncache-dir = "cache"\n'
    )
    sub = project / "notes" / "drafts"
    got = config.load(sub)
    assert (got.roots, got.baseline, got.cache_dir, got.source) == (
        ("a",),
        "bl.json",
        "cache",
        ".brainmigrate.toml",
    )
    monkeypatch.chdir(sub)
    got = config.load()
    assert (got.roots, got.baseline, got.cache_dir, got.source) == (
        ("../../a",),
        "../../bl.json",
        "../../cache",
        "../../.brainmigrate.toml",
    )
    run = CliRunner().invoke(main, ["check", ".", "--update-baseline"])
    assert run.exit_code == 0, run.output
    assert run.stdout.startswith("wip.md:1:7: BM101 error cites app/Two.kt")  # not in a/
    assert (project / "bl.json").is_file()


def test_search_stops_at_the_repository_root(project):
    (project / ".brainmigrate.toml").write_text('roots = ["a"]\n')
    (project / "notes" / ".git").mkdir()
    assert config.load(project / "notes" / "drafts") == config.Settings()
    assert config.load(project / "notes" / "drafts", isolated=True) == config.Settings()


def test_a_pyproject_without_the_table_is_passed_over(project):
    (project / ".brainmigrate.toml").write_text('fail-on = "info"\n')
    (project / "notes" / "pyproject.toml").write_text('[project]\nname = "x"\n')
    assert config.load(project / "notes").fail_on == "info"


def test_when_one_folder_holds_both_files_the_run_says_which_is_used(project):
    (project / "pyproject.toml").write_text('[tool.brainmigrate]\nroots = ["b"]\n')
    (project / ".brainmigrate.toml").write_text('roots = ["a", "b"]\n')
    got = CliRunner().invoke(main, ["check", "notes"])
    assert got.exit_code == 0
    assert got.stderr == (
        "brainmigrate: note: .brainmigrate.toml is used; [tool.brainmigrate] in "
        "pyproject.toml is ignored (one folder holds both)\n"
    )
    (project / "pyproject.toml").write_text('[project]\nname = "x"\n')
    assert CliRunner().invoke(main, ["check", "notes"]).stderr == ""


def test_config_file_option_and_isolated(project, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("conf")
    (elsewhere / "bm.toml").write_text(f'roots = ["{project / "a"}", "{project / "b"}"]\n')
    (project / ".brainmigrate.toml").write_text('roots = ["a"]\n')
    assert cli("notes").exit_code == 1  # app/Two.kt is gone from a
    assert cli("notes", "--config", str(elsewhere / "bm.toml")).exit_code == 0
    (project / ".brainmigrate.toml").write_text('roots = ["a", "b"]\n')
    assert cli("notes").exit_code == 0
    assert cli("notes", "--isolated").exit_code == 1  # the current folder is the root
    got = cli("notes", "--config", "nope.toml")
    assert (got.exit_code, got.stderr) == (
        2,
        "brainmigrate: error: --config nope.toml: no such file; check the path\n",
    )
    got = cli("notes", "--config", "x.toml", "--isolated")
    assert got.exit_code == 2
    assert "--config and --isolated exclude each other" in got.stderr


def test_config_file_option_reads_the_table_of_a_pyproject(project):
    (project / "sub").mkdir()
    (project / "sub" / "pyproject.toml").write_text(
        '[tool.brainmigrate]\nroots = ["../a", "../b"]\n'
    )
    assert cli("notes", "--config", "sub/pyproject.toml").exit_code == 0
    (project / "sub" / "pyproject.toml").write_text('[project]\nname = "x"\n')
    got = cli("notes", "--config", "sub/pyproject.toml")
    assert got.exit_code == 2
    assert "--config sub/pyproject.toml: has no [tool.brainmigrate] table" in got.stderr


def test_new_keys_parse():
    got = config.parse({"scope": "area:x", "cache-dir": "c", "extend-exclude": ["old/*"]})
    assert (got.scope, got.cache_dir, got.excludes) == ("area:x", "c", ("old/*",))


def test_exclude_and_extend_exclude_on_the_command_line(project):
    (project / ".brainmigrate.toml").write_text('roots = ["a"]\nexclude = ["main.md"]\n')
    got = cli("notes")
    assert "Excluded: notes/main.md" in got.output
    got = cli("notes", "--exclude", "drafts/*")
    assert "Excluded: notes/drafts/wip.md\n" in got.output
    got = cli("notes", "--extend-exclude", "drafts/*")
    assert "Excluded: notes/drafts/wip.md, notes/main.md\n" in got.output


def test_import_and_index_read_the_configuration(project, tmp_path_factory, monkeypatch):
    monkeypatch.delenv("BRAINMIGRATE_CACHE_DIR")  # it would win over the config
    cache = tmp_path_factory.mktemp("cache")
    (project / ".brainmigrate.toml").write_text(
        f'roots = ["a", "b"]\nscope = "area:cfg"\nexclude = ["drafts/*"]\ncache-dir = "{cache}"\n'
    )
    got = CliRunner().invoke(main, ["import", "notes", "--dry-run", "--format", "json"])
    assert got.exit_code == 0, got.output
    data = json.loads(got.stdout)
    assert [f["path"] for f in data["files"]] == ["notes/main.md"]
    assert {f["scope"] for f in data["facts"]} == {"area:cfg"}
    assert data["facts"][0]["anchors"][0]["path"] == "app/One.kt"
    got = CliRunner().invoke(
        main, ["import", "notes", "--dry-run", "--format", "json", "--isolated"]
    )
    assert [f["path"] for f in json.loads(got.stdout)["files"]] == [
        "notes/drafts/wip.md",
        "notes/main.md",
    ]
    got = CliRunner().invoke(main, ["index", "--format", "json"])
    assert got.exit_code == 0, got.output
    assert json.loads(got.stdout)["files"] == 1  # a/app/One.kt, the first root
    assert any(cache.iterdir())  # the config's cache-dir


def test_notes_files_match_md_in_any_case(project):
    (project / "notes" / "NOTES.MD").write_text("+ three app/Three.kt\n")
    got = cli("notes", "--root", "a", "--root", "b")
    assert "notes/NOTES.MD:1:9: BM101 error cites app/Three.kt" in got.output


def test_import_takes_config_exclude_and_extend_exclude_options(project, tmp_path_factory):
    other = tmp_path_factory.mktemp("other")
    (other / "bm.toml").write_text(f'scope = "area:other"\nroots = ["{project / "a"}"]\n')
    (project / ".brainmigrate.toml").write_text('exclude = ["main.md"]\n')

    def imported(*args: str) -> dict:
        got = CliRunner().invoke(main, ["import", "notes", "--dry-run", "--format", "json", *args])
        assert got.exit_code == 0, got.output
        data = json.loads(got.stdout)
        return {f["path"]: f["scope"] for f in data["files"]}

    assert imported() == {"notes/drafts/wip.md": "area:wip"}
    assert imported("--exclude", "wip.md") == {"notes/main.md": "area:main"}
    # every file excluded: no fact read, which exits 1 unless --allow-empty (issue 30)
    assert imported("--extend-exclude", "drafts/*", "--allow-empty") == {}
    assert imported("--config", str(other / "bm.toml")) == {
        "notes/drafts/wip.md": "area:other",
        "notes/main.md": "area:other",
    }


def test_index_takes_config_and_isolated(project, monkeypatch):
    monkeypatch.chdir(project / "b")
    (project / "b" / "bm.toml").write_text('roots = ["../a"]\n')

    def indexed(*args: str) -> str:
        got = CliRunner().invoke(main, ["index", "--format", "json", *args])
        assert got.exit_code == 0, got.output
        return json.loads(got.stdout)["root"]

    assert indexed("--config", "bm.toml") == str(project / "a")
    (project / "b" / ".brainmigrate.toml").write_text('roots = ["../a"]\n')
    assert indexed() == str(project / "a")
    assert indexed("--isolated") == str(project / "b")


@pytest.mark.parametrize(
    "text", ['ignore = ["BM101"]\n', '[tool.brainmigrate]\nignore = ["BM101"]\n']
)
def test_a_config_file_of_any_name_takes_either_table_form(tmp_path, text):
    (tmp_path / "alt.toml").write_text(text)
    settings = config.load(config_file=tmp_path / "alt.toml")
    assert settings.ignore == ("BM101",)


def test_a_config_file_with_both_forms_is_refused(tmp_path):
    (tmp_path / "alt.toml").write_text('fail-on = "warning"\n[tool.brainmigrate]\nignore = []\n')
    with pytest.raises(config.ConfigError) as caught:
        config.load(config_file=tmp_path / "alt.toml")
    assert str(caught.value) == (
        f"--config {tmp_path / 'alt.toml'}: holds [tool.brainmigrate] and settings at its top"
        " level (fail-on); keep one of them"
    )


def test_a_copy_of_pyproject_toml_is_a_config_file_of_any_name(tmp_path):
    (tmp_path / "copy.toml").write_text(
        '[project]\nname = "x"\n[tool.ruff]\nline-length = 1\n'
        '[tool.brainmigrate]\nignore = ["BM101"]\n'
    )
    assert config.load(config_file=tmp_path / "copy.toml").ignore == ("BM101",)


def test_a_config_file_whose_tool_table_lacks_ours_says_so(tmp_path):
    (tmp_path / "alt.toml").write_text('[tool.brainmigrat]\nignore = ["BM101"]\n')
    with pytest.raises(config.ConfigError) as caught:
        config.load(config_file=tmp_path / "alt.toml")
    assert str(caught.value) == (
        f"--config {tmp_path / 'alt.toml'}: has no [tool.brainmigrate] table; add one or name"
        " another file"
    )
