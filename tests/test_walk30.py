"""Which configuration and which files, on a walk (docs/check.md, "Configuration" and
"Which files are read"): a folder holding a nearer configuration stays a walk, each
configuration's files read with its own rules; globs match the path below the folder of
the configuration that holds them, never the path as typed."""

from __future__ import annotations

import json

from clirun import cli
from trees import committed, git, renamed, write

SUMMARY = (
    "{}: {} files, {} fact lines: {} findings ({} error, {} warning, 0 info); {} failing at"
    " --fail-on error; 0 suppressed; 0 in the baseline"
)


def _svc(repo) -> None:
    """A nested configuration ``svc/`` with its own notes (its roots: its folder)."""
    write(repo, {"svc/.brainmigrate.toml": 'roots = ["."]\n', "svc/notes/s.md": "+ ok\n"})


# ------------------------------------------------------------ a nested configuration


def test_root_files_keep_the_current_folders_rules_beside_a_nested_configuration(
    tmp_path, monkeypatch
):
    committed(tmp_path, {"src/x.py": "x\n", ".cursorrules": "- Use `src/handler.py`.\n"})
    _svc(tmp_path)
    monkeypatch.chdir(tmp_path)
    r = cli("check", "--format", "json")
    assert r.exit_code == 1
    report = json.loads(r.stdout)
    assert [(f["file"], f["code"]) for f in report["findings"]] == [(".cursorrules", "BM101")]
    assert sorted(report["files"]) == [".cursorrules", "svc/notes/s.md"]


def test_a_root_notes_folder_does_not_hide_cursorrules_beside_a_nested_configuration(
    tmp_path, monkeypatch
):
    committed(tmp_path, {"src/x.py": "x\n", ".cursorrules": "- Use `src/handler.py`.\n"})
    write(tmp_path, {"notes/ok.md": "+ ok\n"})
    _svc(tmp_path)
    monkeypatch.chdir(tmp_path)
    r = cli("check")
    assert r.exit_code == 1
    assert r.stdout.splitlines() == [
        ".cursorrules:1:8: BM101 error cites src/handler.py, which no root holds",
        SUMMARY.format("FAILED", 3, 3, 1, 1, 0, 1).replace("1 findings", "1 finding"),
    ]


def test_no_path_with_a_nested_configuration_reads_only_what_include_names(tmp_path, monkeypatch):
    note = "> Note: since v2 the entry point is no longer src/old.py.\n"
    renamed(tmp_path, "def main(): pass\n")
    write(tmp_path, {"README.md": note, "notes/a.md": "+ ok\n"})
    _svc(tmp_path)
    monkeypatch.chdir(tmp_path)
    checked = cli("check", "--format", "json")
    fixed = cli("check", "--fix")
    assert sorted(json.loads(checked.stdout)["files"]) == ["notes/a.md", "svc/notes/s.md"]
    assert fixed.exit_code == 0
    assert (tmp_path / "README.md").read_text(encoding="utf-8") == note


def _sub_tree(tmp_path) -> None:
    write(
        tmp_path,
        {
            "src/x.py": "x\n",
            "notes/a.md": "+ uses docs/gone.md\n",
            "sub/notes/b.md": "+ also cites src/gone.py\n",
            "sub/notes/skip.md": "+ skip cites x/y.py\n",
            "docs/readme.md": "# Readme\n\n+ old cites lib/nothere.py\n",
            "pyproject.toml": "[tool.brainmigrate]\n",
            "sub/.brainmigrate.toml": 'exclude = ["notes/skip.md"]\n',
        },
    )
    git(tmp_path, "init", "-q")


def test_a_nested_configurations_exclude_applies_to_its_walked_files(tmp_path, monkeypatch):
    _sub_tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    whole = cli("check")
    monkeypatch.chdir(tmp_path / "sub")
    inside = cli("check")
    assert whole.stdout.splitlines() == [
        "notes/a.md:1:8: BM101 error cites docs/gone.md, which no root holds",
        "sub/notes/b.md:1:14: BM103 warning cites src/gone.py, but nothing of it is in any"
        " root (no file citation?)",
        "Excluded: sub/notes/skip.md",
        SUMMARY.format("FAILED", 2, 2, 2, 1, 1, 1),
    ]
    assert inside.stdout.splitlines()[1:] == [
        "Excluded: notes/skip.md",
        SUMMARY.format("OK", 1, 1, 1, 0, 1, 0)
        .replace("1 files", "1 file")
        .replace("1 fact lines", "1 fact line")
        .replace("1 findings", "1 finding"),
    ]


def test_the_root_configurations_exclude_holds_beside_a_nested_configuration(tmp_path, monkeypatch):
    committed(tmp_path, {"src/x.py": "x\n"})
    write(
        tmp_path,
        {
            "pyproject.toml": '[tool.brainmigrate]\nexclude = ["notes/drafts/*"]\n',
            "notes/a.md": "+ fine\n",
            "notes/drafts/b.md": "+ cites src/gone.py\n",
        },
    )
    _svc(tmp_path)
    monkeypatch.chdir(tmp_path)
    walked, named = cli("check"), cli("check", "notes", "svc/notes")
    assert walked.stdout == named.stdout
    assert walked.exit_code == named.exit_code == 0
    assert walked.stdout.splitlines()[0] == "Excluded: notes/drafts/b.md"


# ------------------------------------------------- globs relative to their configuration


def _build(tmp_path, toml: str):
    repo = tmp_path / "x" / "build"
    committed(repo, {"src/x.py": "x\n", "notes/a.md": "+ cites src/gone.py\n"})
    write(repo, {"pyproject.toml": "[tool.brainmigrate]\n" + toml})
    return repo


def test_exclude_never_matches_a_folder_above_the_configuration(tmp_path, monkeypatch):
    repo = _build(tmp_path, 'exclude = ["build/*"]\n')
    monkeypatch.chdir(repo)
    runs = [
        cli("check", "notes"),
        cli("check", repo / "notes"),
        cli("check", f"{repo}/notes/**/*.md", "--force-exclude"),
    ]
    monkeypatch.chdir(tmp_path / "x")
    runs.append(cli("check", "build/notes"))
    assert [r.exit_code for r in runs] == [1, 1, 1, 1]
    assert ["Excluded" in r.stdout for r in runs] == [False] * 4


def test_exclude_matches_below_the_configuration_whatever_the_path_typed(tmp_path, monkeypatch):
    repo = _build(tmp_path, 'exclude = ["notes/*"]\n')
    monkeypatch.chdir(tmp_path)
    r = cli("check", f"{repo}/notes/a.md", "--force-exclude")
    assert r.stdout.splitlines()[0] == f"Excluded: {repo}/notes/a.md"


def test_per_file_ignores_never_match_a_folder_above_the_configuration(tmp_path, monkeypatch):
    _build(tmp_path, 'per-file-ignores = { "x/*" = ["BM101"] }\n')
    monkeypatch.chdir(tmp_path)
    r = cli("check", "x/build/notes")
    assert (r.exit_code, r.stdout.splitlines()[0]) == (
        1,
        "x/build/notes/a.md:1:9: BM101 error cites src/gone.py, which no root holds",
    )


def test_per_file_ignores_match_below_the_configuration_from_a_subfolder(tmp_path, monkeypatch):
    committed(tmp_path, {"app/src/x.py": "x\n"})
    write(
        tmp_path,
        {
            "app/.brainmigrate.toml": 'roots = ["."]\n'
            'per-file-ignores = { "notes/archive/*.md" = ["BM101"] }\n',
            "app/notes/archive/a.md": "+ cites src/gone.py\n",
        },
    )
    monkeypatch.chdir(tmp_path / "app")
    above = cli("check", "notes/archive/a.md")
    monkeypatch.chdir(tmp_path / "app" / "notes")
    below = cli("check", "archive/a.md")
    assert (above.exit_code, below.exit_code) == (0, 0)
    assert "BM101" not in above.stdout + below.stdout


# -------------------------------------------------- import lists each group's own files


def _two_groups(tmp_path) -> None:
    write(
        tmp_path,
        {
            "a/.brainmigrate.toml": 'include = ["notes/**/*.md"]\n',
            "b/.brainmigrate.toml": "exclude = []\n",
            "a/notes/n.md": "+ a fact\n",
            "a/README.md": "+ a readme fact\n",
            "b/docs/d.md": "+ b fact\n",
        },
    )
    git(tmp_path, "init", "-q")


def _imported(stdout: str) -> list[str]:
    return [line.split(" (")[0].strip() for line in stdout.split("\nFiles\n")[1].splitlines()]


def test_import_lists_each_groups_files_with_its_own_include(tmp_path, monkeypatch):
    _two_groups(tmp_path)
    monkeypatch.chdir(tmp_path)
    ab = cli("import", "--root", ".", "--store", "x.db", "--dry-run", "a", "b")
    ba = cli("import", "--root", ".", "--store", "x.db", "--dry-run", "b", "a")
    assert (ab.exit_code, ba.exit_code) == (0, 0)
    assert _imported(ab.stdout) == ["a/notes/n.md", "b/docs/d.md"]
    assert _imported(ba.stdout) == ["b/docs/d.md", "a/notes/n.md"]


# --------------------------------------- the hooks' files: regex and the default include

#: Paths on both sides of each rule: nested rule folders, tails, look-alikes.
HOOK_PROBES = [
    "CLAUDE.md",
    "a/b/AGENTS.md",
    "XCLAUDE.md",
    ".cursorrules",
    "sub/.windsurfrules",
    ".cursor/rules/a.mdc",
    "pkg/.cursor/rules/a.mdc",
    ".cursor/rules/sub/b.mdc",
    ".cursor/rules/a.md",
    ".clinerules/db.md",
    ".clinerules/x/y.md",
    ".github/copilot-instructions.md",
    ".github/instructions/a.md",
    ".github/instructions/sub/a.md",
    "app/.github/instructions/a.md",
    "notes/a.md",
    "notes/x/y/z.mdc",
    "a/notes/b.md",
    "notes.md",
    "notesy/a.md",
    "knowledge/k.md",
    "memory/m.txt",
    "facts.md",
    "x/ops-facts.md",
    "facts.mdx",
    "README.md",
]


def test_the_hooks_files_regex_takes_what_check_with_no_path_walks():
    """One rule: the ``brainmigrate-check`` hook's ``files:`` takes a staged path exactly
    when the default ``include`` takes it on a walk (but for the ``.clinerules`` file,
    which the Markdown notes globs of SPEC.md do not name)."""
    import re
    from pathlib import Path

    import yaml

    from brainmigrate.read.files import _matcher, default_include

    hooks = yaml.safe_load((Path(__file__).parent.parent / ".pre-commit-hooks.yaml").read_text())
    files = re.compile({h["id"]: h for h in hooks}["brainmigrate-check"]["files"])
    walked = _matcher(default_include())
    assert [p for p in HOOK_PROBES if bool(files.search(p)) != walked(p)] == []


# ------------------------------------------------------------ a baseline per configuration


def _baselined(tmp_path, svc_toml: str) -> None:
    committed(tmp_path, {"src/x.py": "x\n", "svc/src/y.py": "y\n"})
    write(
        tmp_path,
        {
            "pyproject.toml": '[tool.brainmigrate]\nbaseline = "base.json"\n',
            "notes/a.md": "+ cites src/gone.py\n",
            "svc/notes/s.md": "+ cites src/gone2.py\n",
            "svc/.brainmigrate.toml": svc_toml,
        },
    )


def test_a_nested_configuration_naming_no_baseline_meets_none(tmp_path, monkeypatch):
    _baselined(tmp_path, 'roots = ["."]\n')
    monkeypatch.chdir(tmp_path)
    updated = cli("check", "--update-baseline")
    again = cli("check")
    assert (updated.exit_code, again.exit_code) == (1, 1)
    assert again.stdout.splitlines() == [
        "notes/a.md:1:9: BM101 error cites src/gone.py, which no root holds [baseline]",
        "svc/notes/s.md:1:9: BM101 error cites src/gone2.py, which no root holds",
        SUMMARY.format("FAILED", 2, 2, 2, 2, 0, 1).replace(
            "0 in the baseline", "1 in the baseline"
        ),
    ]
    assert not (tmp_path / "svc" / "base.json").exists()


def test_each_configuration_meets_its_own_baseline_in_one_report(tmp_path, monkeypatch):
    _baselined(tmp_path, 'roots = ["."]\nbaseline = "sb.json"\n')
    monkeypatch.chdir(tmp_path)
    updated = cli("check", "--update-baseline")
    assert (updated.exit_code, updated.stdout.splitlines()[-2]) == (
        0,
        "Baseline base.json, svc/sb.json written: 2 findings",
    )
    stored = [
        json.loads((tmp_path / p).read_text())["entries"] for p in ("base.json", "svc/sb.json")
    ]
    assert [[e["text"] for e in entries] for entries in stored] == [
        ["cites src/gone.py"],
        ["cites src/gone2.py"],
    ]
    (tmp_path / "svc/notes/s.md").write_text("+ cites src/gone2.py\n+ cites src/gone3.py\n")
    again = cli("check")
    assert again.exit_code == 1
    assert again.stdout.splitlines()[1:] == [
        "svc/notes/s.md:1:9: BM101 error cites src/gone2.py, which no root holds [baseline]",
        "svc/notes/s.md:2:9: BM101 error cites src/gone3.py, which no root holds",
        SUMMARY.format("FAILED", 2, 3, 3, 3, 0, 1).replace(
            "0 in the baseline", "2 in the baseline"
        ),
    ]


# ------------------------------------------------------------------- small faults (6)


def test_no_force_exclude_overrides_the_configurations_force_exclude(tmp_path, monkeypatch):
    committed(tmp_path, {"src/x.py": "x\n", "notes/a.md": "+ cites src/gone.py\n"})
    write(tmp_path, {".brainmigrate.toml": 'force-exclude = true\nexclude = ["notes/a.md"]\n'})
    monkeypatch.chdir(tmp_path)
    forced, unforced = cli("check", "notes/a.md"), cli("check", "notes/a.md", "--no-force-exclude")
    assert (forced.exit_code, forced.stdout.splitlines()[0]) == (0, "Excluded: notes/a.md")
    assert (unforced.exit_code, unforced.stdout.splitlines()[0]) == (
        1,
        "notes/a.md:1:9: BM101 error cites src/gone.py, which no root holds",
    )


def test_extend_naming_a_folder_says_it_is_one(tmp_path, monkeypatch):
    write(tmp_path, {".brainmigrate.toml": 'extend = "shared"\n', "notes/a.md": "+ ok\n"})
    (tmp_path / "shared").mkdir()
    monkeypatch.chdir(tmp_path)
    r = cli("check", "notes")
    assert (r.exit_code, r.stderr) == (
        2,
        "brainmigrate: error: .brainmigrate.toml: key 'extend': shared: is a folder; name a"
        " configuration file in it (shared/.brainmigrate.toml or shared/pyproject.toml)\n",
    )


def test_per_file_ignores_refuse_a_code_that_matches_none_as_ignore_does(tmp_path, monkeypatch):
    write(tmp_path, {"notes/a.md": "+ ok\n"})
    monkeypatch.chdir(tmp_path)
    said = {}
    for code in ("BM999", "bm101"):
        (tmp_path / ".brainmigrate.toml").write_text(f'ignore = ["{code}"]\n')
        ignored = cli("check", "notes")
        (tmp_path / ".brainmigrate.toml").write_text(
            f'per-file-ignores = {{ "notes/*" = ["{code}"] }}\n'
        )
        per_file = cli("check", "notes")
        said[code] = (ignored.exit_code, per_file.exit_code, per_file.stderr)
    assert said == {
        "BM999": (
            2,
            2,
            "brainmigrate: error: .brainmigrate.toml: key 'per-file-ignores': 'BM999' matches"
            " no finding code; give one of BM101, BM102, BM103, BM104, BM105, BM201, BM202,"
            " BM203, BM204, BM205, BM301, BM302, BM303, BM304, BM305, BM306, BM307, BM308,"
            " BM309, BM310, BM311, BM312, BM313, BM401, BM501\n",
        ),
        "bm101": (
            2,
            2,
            "brainmigrate: error: .brainmigrate.toml: key 'per-file-ignores': 'bm101' is not a"
            " finding code or prefix (BM101, BM1, BM)\n",
        ),
    }


def test_fix_with_show_fixes_says_the_count_once(tmp_path, monkeypatch):
    renamed(tmp_path, "def main(): pass\n")
    write(tmp_path, {"notes/a.md": "+ see src/old.py\n"})
    monkeypatch.chdir(tmp_path)
    r = cli("check", "--fix", "--show-fixes")
    assert (r.exit_code, r.stderr.splitlines()) == (
        0,
        [
            "Fixed 1 citation in 1 file:",
            "- notes/a.md:",
            "    1:7: src/old.py -> src/new.py (renamed in git history)",
            "0 citations left",
        ],
    )


# ------------------------------------------------- the editor server's notes files (7)


def test_the_editor_server_takes_the_notes_files_check_reads(tmp_path):
    from brainmigrate import config
    from brainmigrate.serving.notesview import is_notes

    write(tmp_path, {"app/.brainmigrate.toml": 'exclude = ["notes/drafts/*"]\n'})
    app = tmp_path / "app"
    settings = config.load(app)
    taken = {
        rel: is_notes(str(app / rel), settings, str(tmp_path))
        for rel in (".cursorrules", ".windsurfrules", "notes/a.md", "notes/drafts/b.md", "x.py")
    }
    assert taken == {
        ".cursorrules": True,
        ".windsurfrules": True,
        "notes/a.md": True,
        "notes/drafts/b.md": False,
        "x.py": False,
    }
    (app / ".brainmigrate.toml").write_text('include = ["rules/*.txt"]\n')
    settings = config.load(app)
    assert [is_notes(str(app / rel), settings, None) for rel in ("rules/a.txt", "b.txt")] == [
        True,
        False,
    ]


def test_no_report_is_written_over_a_nested_configurations_notes(tmp_path, monkeypatch):
    committed(tmp_path, {"src/x.py": "x\n", ".cursorrules": "- Use `src/x.py`.\n"})
    _svc(tmp_path)
    monkeypatch.chdir(tmp_path)
    r = cli("check", "--format", "json", "--output", "svc/notes/s.md")
    assert (r.exit_code, r.stderr) == (
        2,
        "brainmigrate: error: --format json --output svc/notes/s.md would be written over the"
        " notes file svc/notes/s.md, which this command reads; pass --output another path\n",
    )
    assert (tmp_path / "svc/notes/s.md").read_text() == "+ ok\n"


def test_exclude_typed_on_the_command_line_is_from_the_current_folder(tmp_path, monkeypatch):
    """``--exclude`` globs are typed from the current folder, the configuration's globs
    from its own: both name the same file below a nested configuration."""
    write(
        tmp_path,
        {
            "app/.brainmigrate.toml": 'roots = ["."]\n',
            "app/notes/a.md": "+ a\n",
            "app/notes/drafts/b.md": "+ b\n",
        },
    )
    git(tmp_path, "init", "-q")
    monkeypatch.chdir(tmp_path)
    runs = [
        cli("check", "app/notes", "--exclude", "app/notes/drafts/*"),
        cli("check", "app/notes", "--extend-exclude", f"{tmp_path}/app/notes/drafts/b.md"),
        cli(
            "check",
            "app/notes",
            "--config",
            "app/.brainmigrate.toml",
            "--exclude",
            "app/notes/drafts/*",
        ),
    ]
    assert [r.stdout.splitlines()[0] for r in runs] == ["Excluded: app/notes/drafts/b.md"] * 3


def test_a_bad_include_glob_of_a_nested_configuration_is_one_error_line(tmp_path, monkeypatch):
    committed(tmp_path, {"src/x.py": "x\n", "notes/a.md": "+ ok\n"})
    write(tmp_path, {"svc/.brainmigrate.toml": 'include = ["[z-a].md"]\n', "svc/s.md": "+ s\n"})
    monkeypatch.chdir(tmp_path)
    r = cli("check")
    assert (r.exit_code, r.stdout) == (2, "")
    assert r.stderr.startswith("brainmigrate: error: include: '[z-a].md' is no glob (")
    assert r.stderr.count("\n") == 1
