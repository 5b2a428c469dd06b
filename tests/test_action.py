"""The GitHub Action (action.yml and its run step, action/run.py) and the pre-commit hook
(.pre-commit-hooks.yaml), run as CI runs them: the real script, the real command."""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from brainmigrate.cli import main

REPO = Path(__file__).resolve().parent.parent
RUN = REPO / "action" / "run.py"
_spec = importlib.util.spec_from_file_location("brainmigrate_action_run", RUN)
action_run = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(action_run)


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    """``repo/app/Main.kt``; ``notes/a.md`` cites it and the gone ``app/Old.kt``."""
    (tmp_path / "repo/app").mkdir(parents=True)
    (tmp_path / "repo/app/Main.kt").write_text("class Main\n")
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes/a.md").write_text("+ gone app/Old.kt\n+ here app/Main.kt\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run_action(project: Path, **inputs: str) -> tuple[subprocess.CompletedProcess, str]:
    """Run action/run.py as the action's step does; the process and what it wrote to
    ``$GITHUB_OUTPUT``."""
    outputs = project / "github_output"
    outputs.write_text("")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BM_", "GITHUB_"))}
    env.update({f"BM_{k.upper()}": v for k, v in inputs.items()})
    env["GITHUB_OUTPUT"] = str(outputs)
    env["RUNNER_TEMP"] = str(project)
    done = subprocess.run(
        [sys.executable, str(RUN)], cwd=project, env=env, capture_output=True, text=True
    )
    return done, outputs.read_text()


def test_the_actions_reports_come_first_and_args_split_with_shell_rules():
    env = {
        "BM_PATHS": "notes/\nmore.md",
        "BM_ROOTS": ". ../infra",
        "BM_FAIL_ON": "warning",
        "BM_SARIF": "out.sarif",
        "BM_ARGS": "--format markdown --output 'my report.md' --select \"BM1\" --scope a\\ b",
    }
    assert action_run.command(env, "/t/check.json") == [
        sys.executable,
        "-m",
        "brainmigrate",
        "check",
        "notes/",
        "more.md",
        "--root",
        ".",
        "--root",
        "../infra",
        "--fail-on",
        "warning",
        "--format",
        "github",
        "--output",
        "-",
        "--format",
        "sarif",
        "--output",
        "out.sarif",
        "--format",
        "json",
        "--output",
        "/t/check.json",
        "--format",
        "markdown",
        "--output",
        "my report.md",
        "--select",
        "BM1",
        "--scope",
        "a b",
    ]


def test_a_user_format_and_output_keep_the_annotations_on_stdout(project):
    done, outputs = run_action(
        project,
        paths="notes",
        roots="repo",
        args="--format markdown --output 'my report.md'",
    )
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith("::error file=notes/a.md,line=1,col=8,")
    assert (project / "my report.md").read_text().startswith("## brainmigrate check: 1 failing")
    assert outputs == "findings=1\nexit-code=1\n"


def test_outputs_of_a_clean_run_and_of_a_run_that_could_not_run(project):
    done, outputs = run_action(project, paths="notes", roots="repo", args="--select BM2")
    assert (done.returncode, outputs) == (0, "findings=0\nexit-code=0\n")
    done, outputs = run_action(project, paths="notes", roots="repo", args="--format json")
    assert done.returncode == 2
    assert "would all go to stdout" in done.stderr
    assert outputs == "findings=\nexit-code=2\n"


def test_args_with_an_unclosed_quote_exit_2(project):
    done, outputs = run_action(project, paths="notes", args="--scope 'a b")
    assert (done.returncode, done.stderr) == (
        2,
        "brainmigrate action: error: args: No closing quotation\n",
    )


def test_action_yml_wires_inputs_outputs_python_and_the_pip_cache():
    action = yaml.safe_load((REPO / "action.yml").read_text())
    steps = action["runs"]["steps"]
    setup = next(s for s in steps if s.get("uses", "").startswith("actions/setup-python"))
    assert setup["if"] == "inputs.install-python == 'true'"
    cache = next(s for s in steps if s.get("uses", "").startswith("actions/cache"))
    assert cache["with"]["path"] == "${{ steps.pip-cache.outputs.dir }}"
    check = next(s for s in steps if s.get("id") == "check")
    assert check["run"] == 'python "$GITHUB_ACTION_PATH/action/run.py"'
    used = {name: value for name, value in check["env"].items()}
    assert used == {
        "BM_PATHS": "${{ inputs.paths }}",
        "BM_ROOTS": "${{ inputs.roots }}",
        "BM_FAIL_ON": "${{ inputs.fail-on }}",
        "BM_BASELINE": "${{ inputs.baseline }}",
        "BM_SARIF": "${{ inputs.sarif-file }}",
        "BM_ARGS": "${{ inputs.args }}",
    }
    script = RUN.read_text()
    assert all(name in script for name in used)
    assert {k: v["value"] for k, v in action["outputs"].items()} == {
        "findings": "${{ steps.check.outputs.findings }}",
        "exit-code": "${{ steps.check.outputs.exit-code }}",
    }
    assert set(action["inputs"]) >= {"install-python", "cache", "args"}


def hooks() -> dict[str, dict]:
    return {h["id"]: h for h in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())}


def test_pre_commit_fix_hook_runs_check_fix_on_the_staged_notes_and_is_documented():
    hook = hooks()["brainmigrate-fix"]
    # --force-exclude: the config's exclude drops the staged files pre-commit names (issue 29)
    assert shlex.split(hook["entry"])[1:] == ["check", "--fix", "--force-exclude"]
    assert "args" not in hook
    assert (
        hook["pass_filenames"] is True and hook["files"] == hooks()["brainmigrate-check"]["files"]
    )
    assert "id: brainmigrate-fix" in (REPO / "docs" / "check.md").read_text(encoding="utf-8")


NOTES_FILES = [
    "CLAUDE.md",
    "sub/AGENTS.md",
    "GEMINI.md",
    "MEMORY.md",
    ".cursorrules",
    ".windsurfrules",
    ".cursor/rules/style.mdc",
    "a/.cursor/rules/x.mdc",
    ".clinerules",
    ".clinerules/db.md",
    ".github/copilot-instructions.md",
    ".github/instructions/py.md",
    "notes/docker.md",
    "team/brain/2026/a.md",
    "facts.md",
    "docker-facts.md",
    "memory/x.mdc",
]
NOT_NOTES = ["README.md", "docs/guide.md", "src/app.py", "notesy/x.md", "CHANGELOG.md"]


@pytest.mark.parametrize("path", NOTES_FILES + NOT_NOTES)
def test_the_hooks_take_the_notes_files_a_commit_stages(path):
    files = re.compile(hooks()["brainmigrate-check"]["files"])
    assert bool(files.search(path)) is (path in NOTES_FILES)


def test_pre_commit_runs_the_hook_on_the_staged_notes_only(tmp_path):
    """pre-commit itself (``try-repo`` of this checkout) runs ``brainmigrate-check`` on a
    repository whose CLAUDE.md cites a gone file and whose README quotes one: only the
    note fails the commit."""
    pre_commit = shutil.which("pre-commit") or str(Path(sys.executable).with_name("pre-commit"))
    if not Path(pre_commit).exists():
        pytest.skip("pre-commit is not installed (the test extra installs it)")
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src/Foo.kt").write_text("class Foo\n")
    (repo / "CLAUDE.md").write_text("- see src/Foo.kt\n- see src/Gone.kt\n")
    (repo / "README.md").write_text("> the old src/Nope.kt\n")
    for args in (["init", "-q"], ["add", "-A"]):
        subprocess.run(["git", *args], cwd=repo, check=True)
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "home"), "GIT_AUTHOR_NAME": "t"}
    done = subprocess.run(
        [pre_commit, "try-repo", str(REPO), "brainmigrate-check", "--all-files"],
        cwd=repo, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    if done.returncode != 0 and "BM101" not in done.stdout and "pip" in done.stdout:
        pytest.skip(f"pre-commit could not install the hook: {done.stdout[-300:]}")
    assert done.returncode == 1, done.stdout
    assert "CLAUDE.md:2:7: BM101 error cites src/Gone.kt, which no root holds" in done.stdout
    assert "README.md" not in done.stdout.split("=====")[-1]


def test_pre_commit_check_all_hook_works_without_args(project):
    hook = hooks()["brainmigrate-check-all"]
    assert hook["pass_filenames"] is False
    argv = shlex.split(hook["entry"])[1:] + hook.get("args", [])
    # no args: the include notes, not every *.md (a README quoting a path: issue 29)
    assert argv == ["check"]
    (project / "README.md").write_text("> the old loader was gone/Loader.kt\n")
    (project / ".venv/lib/site-packages/pkg").mkdir(parents=True)
    (project / ".venv/lib/site-packages/pkg/README.md").write_text("+ see gone/File.kt\n")
    (project / "repo/app/Old.kt").write_text("class Old\n")
    got = CliRunner().invoke(main, [*argv, "--root", "repo"])
    assert got.exit_code == 0, got.output
    assert got.stdout.startswith("OK: 1 file, 2 fact lines: 0 findings")
