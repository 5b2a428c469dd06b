"""Which notes files ``check`` and ``import`` read (issue 29, "Which files"): ``include``
and no PATH, quoted globs, ``--force-exclude`` as ruff has it, ``respect-gitignore``;
each surprise of the issue is a test here, on real files in a real git checkout."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clirun import cli
from trees import committed, write

#: A repository whose notes cite one gone file each, beside a README that quotes one.
FILES = {
    "src/Foo.kt": "class Foo\n",
    "CLAUDE.md": "- see src/Foo.kt\n- see src/Gone.kt\n",
    "notes/docker.md": "+ the image is built from src/Dockerfile\n",
    "team/brain/deploy.md": "+ deploy reads src/Deploy.kt\n",
    "ops-facts.md": "+ ops read src/Ops.kt\n",
    ".cursorrules": "- style lives in src/Style.kt\n",
    "README.md": "> the old src/Nope.kt\n",
    "docs/guide.md": "+ see src/Guide.kt\n",
}


@pytest.fixture
def repo(tmp_path, monkeypatch) -> Path:
    repo = committed(tmp_path / "repo", FILES)
    monkeypatch.chdir(repo)
    return repo


def files_read(*args) -> list[str]:
    got = cli("check", *args, "--format", "json")
    assert got.exit_code in (0, 1), got.output
    return json.loads(got.stdout)["files"]


# ---------------------------------------------------------------- `check` needs PATHS


def test_check_without_paths_reads_the_include_notes_of_the_current_folder(repo):
    # before: "Missing argument 'PATHS...'"; the README and docs are no notes files
    assert files_read() == [
        ".cursorrules",
        "CLAUDE.md",
        "notes/docker.md",
        "ops-facts.md",
        "team/brain/deploy.md",
    ]
    got = cli("check")
    assert got.exit_code == 1
    assert "README.md" not in got.output and "docs/guide.md" not in got.output
    assert "CLAUDE.md:2:7: BM101 error cites src/Gone.kt, which no root holds" in got.stdout


def test_the_include_key_replaces_the_default_and_applies_to_walked_folders(repo):
    (repo / ".brainmigrate.toml").write_text('include = ["docs/*.md", "CLAUDE.md"]\n')
    assert files_read() == ["CLAUDE.md", "docs/guide.md"]
    assert files_read("docs") == ["docs/guide.md"]
    (repo / ".brainmigrate.toml").write_text("")
    # without include, a walked folder still gives each *.md file, as before
    assert files_read("docs", "team") == ["docs/guide.md", "team/brain/deploy.md"]


def test_import_without_paths_reads_the_include_notes_too(repo):
    got = cli("import", "--dry-run", "--format", "json")
    assert got.exit_code == 0, got.output
    assert [f["path"] for f in json.loads(got.stdout)["files"]] == [
        ".cursorrules",
        "CLAUDE.md",
        "notes/docker.md",
        "ops-facts.md",
        "team/brain/deploy.md",
    ]


def test_no_include_file_under_the_current_folder_passes_check_and_fails_import(
    tmp_path, monkeypatch
):
    """``check`` with no PATH (the check-all hook) in a checkout that keeps no notes has
    nothing to flag: one warning, exit 0 (it exited 2 on every commit); ``import`` with
    no PATH reads nothing, one error line."""
    write(tmp_path, {"README.md": "> src/Nope.kt\n"})
    monkeypatch.chdir(tmp_path)
    got = cli("check")
    assert (got.exit_code, got.stdout, got.stderr) == (
        0,
        "",
        "brainmigrate: warning: no notes files under the current folder; nothing checked\n",
    )
    got = cli("import", "--dry-run")
    assert (got.exit_code, got.stdout) == (2, "")
    assert got.stderr == (
        "brainmigrate: error: .: no notes files the include globs match in this folder;"
        " pass notes files, or folders that hold *.md notes files\n"
    )


def test_help_says_what_no_path_reads():
    got = cli("check", "--help")
    assert "with no PATH, the notes files under the current folder" in " ".join(got.stdout.split())


# ---------------------------------------------------------------- quoted globs


def test_a_quoted_glob_is_expanded(repo):
    # before: "notes/**/*.md: no such file or folder"
    write(repo, {"notes/deep/er/old.md": "+ see src/Old.kt\n", "notes/.hidden.md": "+ x\n"})
    assert files_read("notes/**/*.md") == [
        "notes/.hidden.md",
        "notes/deep/er/old.md",
        "notes/docker.md",
    ]
    assert files_read("*.md") == ["CLAUDE.md", "README.md", "ops-facts.md"]


def test_a_glob_leaves_the_skipped_folders_out_unless_it_names_them(repo):
    write(repo, {".venv/lib/pkg/notes.md": "+ see gone/Pkg.kt\n"})
    assert ".venv/lib/pkg/notes.md" not in files_read("**/*.md")
    assert files_read(".venv/**/*.md") == [".venv/lib/pkg/notes.md"]


def test_a_glob_matching_nothing_is_one_error_line(repo):
    got = cli("check", "nowhere/**/*.md")
    assert (got.exit_code, got.stdout) == (2, "")
    assert got.stderr == (
        "brainmigrate: error: no notes file matches nowhere/**/*.md; check the glob (quote"
        " it, so that brainmigrate expands it)\n"
    )


def test_a_path_that_exists_is_never_read_as_a_glob(repo):
    write(repo, {"a[1].md": "+ see src/Bracket.kt\n", "a1.md": "+ see src/One.kt\n"})
    assert files_read("a[1].md") == ["a[1].md"]
    assert files_read("a[0-9].md") == ["a1.md"]


# ---------------------------------------------------------------- --force-exclude


def test_exclude_drops_a_named_file_only_with_force_exclude(repo):
    # before: --exclude dropped CLAUDE.md though it was named on the command line
    assert files_read("CLAUDE.md", "notes", "--exclude", "CLAUDE.md") == [
        "CLAUDE.md",
        "notes/docker.md",
    ]
    assert files_read("CLAUDE.md", "notes", "--exclude", "*.md", "--force-exclude") == []
    # a walked folder's files are excluded either way
    assert files_read("CLAUDE.md", "notes", "--extend-exclude", "docker.md") == ["CLAUDE.md"]


def test_the_force_exclude_key_is_read_from_the_configuration(repo):
    (repo / ".brainmigrate.toml").write_text('exclude = ["CLAUDE.md"]\nforce-exclude = true\n')
    got = cli("check", "CLAUDE.md", "notes/docker.md")
    assert got.exit_code == 1
    assert got.stdout.splitlines()[-2:] == [
        "Excluded: CLAUDE.md",
        "FAILED: 1 file, 1 fact line: 1 finding (1 error, 0 warning, 0 info); 1 failing at"
        " --fail-on error; 0 suppressed; 0 in the baseline",
    ]
    (repo / ".brainmigrate.toml").write_text('force-exclude = "yes"\n')
    got = cli("check", "CLAUDE.md")
    assert (got.exit_code, got.stderr) == (
        2,
        "brainmigrate: error: .brainmigrate.toml: key 'force-exclude' is 'yes'; give true or"
        " false\n",
    )


def test_the_pre_commit_hook_entry_drops_excluded_staged_files(repo):
    """pre-commit names the staged files: the hook's own arguments must exclude them."""
    import shlex

    import yaml

    hooks = yaml.safe_load((Path(__file__).parent.parent / ".pre-commit-hooks.yaml").read_text())
    entry = {h["id"]: shlex.split(h["entry"])[1:] for h in hooks}["brainmigrate-check"]
    (repo / ".brainmigrate.toml").write_text('exclude = ["CLAUDE.md"]\n')
    got = cli(*entry, "CLAUDE.md", "notes/docker.md")
    assert got.exit_code == 1
    assert "CLAUDE.md:2:7" not in got.stdout and "Excluded: CLAUDE.md" in got.stdout


# ---------------------------------------------------------------- respect-gitignore


def test_git_ignored_notes_of_a_walked_folder_are_read_only_when_asked(repo):
    write(repo, {".gitignore": "scratch.md\n", "notes/scratch.md": "+ see src/Scratch.kt\n"})
    assert files_read("notes") == ["notes/docker.md"]
    assert files_read() == [
        ".cursorrules",
        "CLAUDE.md",
        "notes/docker.md",
        "ops-facts.md",
        "team/brain/deploy.md",
    ]
    assert files_read("notes", "--no-respect-gitignore") == ["notes/docker.md", "notes/scratch.md"]
    (repo / ".brainmigrate.toml").write_text("respect-gitignore = false\n")
    assert files_read("notes") == ["notes/docker.md", "notes/scratch.md"]
    assert files_read("notes", "--respect-gitignore") == ["notes/docker.md"]


def test_a_git_ignored_file_named_on_the_command_line_is_read(repo):
    write(repo, {".gitignore": "scratch.md\n", "notes/scratch.md": "+ see src/Scratch.kt\n"})
    assert files_read("notes/scratch.md") == ["notes/scratch.md"]
    assert files_read("notes/scratch*.md") == ["notes/scratch.md"]


def test_a_folder_of_git_ignored_notes_only_is_read_with_no_respect_gitignore(repo):
    write(repo, {".gitignore": "drafts/\n", "drafts/a.md": "+ see src/Foo.kt\n"})
    got = cli("check", "drafts")
    assert (got.exit_code, got.stderr) == (
        2,
        "brainmigrate: error: drafts: every *.md notes file in this folder is git-ignored;"
        " name the files to read them\n",
    )
    assert files_read("drafts", "--no-respect-gitignore") == ["drafts/a.md"]


def test_no_path_reads_every_notes_file_the_hooks_take_and_nothing_else(tmp_path, monkeypatch):
    """The default ``include`` is the hooks' ``files:`` pattern, but for a ``.clinerules``
    file (the Markdown notes globs of SPEC.md name only the ``.clinerules/`` folder)."""
    from test_action import NOT_NOTES, NOTES_FILES

    notes = [p for p in NOTES_FILES if p != ".clinerules"]
    write(tmp_path, {p: "+ see src/Gone.kt\n" for p in notes + NOT_NOTES})
    monkeypatch.chdir(tmp_path)
    assert files_read() == sorted(notes)


def test_an_include_glob_that_is_none_is_one_error_line(repo):
    (repo / ".brainmigrate.toml").write_text('include = ["[z-a].md"]\n')
    got = cli("check")
    assert (got.exit_code, got.stdout) == (2, "")
    assert got.stderr.startswith("brainmigrate: error: include: '[z-a].md' is no glob (")
    assert got.stderr.endswith("; fix the glob in the configuration\n")
    assert got.stderr.count("\n") == 1


def test_no_path_respects_the_excludes(repo):
    (repo / ".brainmigrate.toml").write_text('exclude = ["ops-facts.md", "brain/*"]\n')
    got = cli("check", "--format", "json")
    data = json.loads(got.stdout)
    assert data["files"] == [".cursorrules", "CLAUDE.md", "notes/docker.md"]
    assert data["excluded"] == ["ops-facts.md", "team/brain/deploy.md"]


def test_include_globs_match_below_the_configuration_not_the_path_as_typed(tmp_path):
    """``notes/**/*.md`` holds for the notes below the configuration's folder only: a
    checkout that lies in a folder named ``notes`` gives the same files whether it is
    walked as ``.``, by its absolute path, or from a subfolder as ``../``."""
    proj = tmp_path / "notes" / "proj"
    write(proj, {"notes/n.md": "+ real cites a/b.py\n", "docs/readme.md": "+ readme c/d.py\n"})
    write(proj, {".brainmigrate.toml": 'include = ["notes/**/*.md"]\n'})
    import os

    here = os.getcwd()
    try:
        os.chdir(proj)
        assert files_read(".") == ["notes/n.md"]
        assert files_read(str(proj)) == [f"{proj.as_posix()}/notes/n.md"]
        os.chdir(proj / "docs")
        assert files_read("../") == ["../notes/n.md"]
    finally:
        os.chdir(here)
