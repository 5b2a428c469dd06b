"""Configuration of ``check``: ``.brainmigrate.toml`` or ``[tool.brainmigrate]`` in
``pyproject.toml``; command-line options override it; bad keys and values exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

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


def cli(*args: str):
    return CliRunner().invoke(main, ["check", *args])


def test_no_file_gives_defaults(tmp_path):
    assert config.load(tmp_path) == config.Settings()
    assert config.Settings().fail_on == "error"


def test_brainmigrate_toml(tmp_path):
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
    )


def test_pyproject_table(tmp_path):
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
        "notes/main.md:2:11: BM102 cites /etc/hosts.conf, outside every root "
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
    assert "notes/drafts/wip.md:1:7: BM101 cites app/Two.kt" in got.output


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
