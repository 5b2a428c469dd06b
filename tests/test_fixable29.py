"""Fixable findings (issue 29, "Fixes"): a gone citation ``--fix`` would rewrite is
marked ``[*]`` in the text report and counted on stderr, its edit is the JSON ``fix`` and
SARIF's ``fixes``; ``--show-fixes``, ``--fix-only``, ``--exit-non-zero-on-fix``.

One real git checkout: ``src/old.py`` renamed to ``src/new.py``, ``src/gone.py`` deleted;
the notes cite both, so one finding is fixable and one is not.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from clirun import cli
from trees import committed, git

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

NOTES = "+ the parser lives in src/old.py (x)\n+ the lexer was src/gone.py\n"
#: The SARIF 2.1.0 schema in ``shared/data`` beside the clone (or beside its worktrees).
SARIF_SCHEMA = next(
    (
        p / "shared" / "data" / "sarif-schema-2.1.0.json"
        for p in Path(__file__).resolve().parents[1:4]
        if (p / "shared" / "data" / "sarif-schema-2.1.0.json").is_file()
    ),
    None,
)


@pytest.fixture
def project(tmp_path: Path, monkeypatch) -> Path:
    """``tmp_path`` holding ``repo`` (old.py renamed, gone.py deleted) and ``notes.md``."""
    repo = committed(tmp_path / "repo", {"src/old.py": "a = 1\n", "src/gone.py": "b = 2\n"})
    git(repo, "mv", "src/old.py", "src/new.py")
    git(repo, "rm", "-q", "src/gone.py")
    git(repo, "commit", "-qm", "move")
    (tmp_path / "notes.md").write_text(NOTES, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def check(*args: str):
    return cli("check", "notes.md", "--root", "repo", "--isolated", "--no-progress", *args)


def test_text_marks_the_fixable_finding_and_counts_it(project):
    r = check()
    assert r.exit_code == 1
    lines = r.stdout.splitlines()
    assert (
        lines[0] == "notes.md:1:23: BM101 [*] error cites src/old.py, which no root holds;"
        " moved? src/new.py (renamed in git history)"
    )
    assert lines[1].startswith("notes.md:2:17: BM101 error cites src/gone.py")
    assert r.stderr.splitlines()[-1] == "[*] 1 fixable with --fix"
    assert "fixable" not in check("-q").stderr


def test_json_gives_the_edit_fix_makes(project):
    found = json.loads(check("--format", "json").stdout)["findings"]
    assert found[0]["fix"] == {
        "replacement": "src/new.py",
        "start": {"line": 1, "col": 23},
        "end": {"line": 1, "col": 33},
    }
    assert found[0]["end_col"] == 33
    assert found[1]["fix"] is None and found[1]["end_col"] is None
    # the edit is the one --fix makes
    start, end = found[0]["fix"]["start"]["col"], found[0]["fix"]["end"]["col"]
    line = NOTES.splitlines()[0]
    assert check("--fix").exit_code == 1
    assert (project / "notes.md").read_text().splitlines()[0] == (
        line[: start - 1] + "src/new.py" + line[end - 1 :]
    )


def test_sarif_gives_fixes_and_validates(project):
    if SARIF_SCHEMA is None:
        pytest.skip("SARIF schema not found in shared/data beside the clone")
    import jsonschema

    data = json.loads(check("--format", "sarif").stdout)
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    jsonschema.validators.validator_for(schema)(schema).validate(data)
    first, second = data["runs"][0]["results"]
    change = first["fixes"][0]["artifactChanges"][0]
    assert change["artifactLocation"]["uri"] == "notes.md"
    assert change["replacements"] == [
        {
            "deletedRegion": {"startLine": 1, "startColumn": 23, "endLine": 1, "endColumn": 33},
            "insertedContent": {"text": "src/new.py"},
        }
    ]
    assert first["locations"][0]["physicalLocation"]["region"]["endColumn"] == 33
    assert "fixes" not in second


def test_show_fixes_lists_per_file(project):
    r = check("--show-fixes")
    assert r.exit_code == 1
    listed = ["Would fix 1 citation in 1 file:", "- notes.md:",
              "    1:23: src/old.py -> src/new.py (renamed in git history)"]  # fmt: skip
    assert r.stderr.splitlines()[:3] == listed
    assert (project / "notes.md").read_text() == NOTES
    r = check("--fix", "--show-fixes")
    assert r.stderr.splitlines()[:3] == ["Fixed 1 citation in 1 file:", *listed[1:]]
    assert "src/new.py" in (project / "notes.md").read_text()


def test_fix_only_reports_nothing_else_and_exits_0(project):
    r = check("--fix-only")
    assert r.exit_code == 0
    assert r.stdout == ""
    assert "src/new.py" in (project / "notes.md").read_text()
    assert check("--fix-only").exit_code == 0  # nothing left to fix, the gone one stays
    r = check("--fix-only", "--format", "json")
    assert r.exit_code == 2 and "--fix-only reports nothing: leave out --format" in r.stderr


def test_exit_non_zero_on_fix(project):
    (project / "notes.md").write_text(NOTES.splitlines()[0] + "\n", encoding="utf-8")
    r = check("--fix", "--exit-non-zero-on-fix")
    assert r.exit_code == 1  # fixed, nothing left
    assert "OK:" in r.stdout
    assert check("--fix", "--exit-non-zero-on-fix").exit_code == 0  # nothing changed now
    assert check("--fix-only", "--exit-non-zero-on-fix").exit_code == 0
    r = check("--exit-non-zero-on-fix")
    assert r.exit_code == 2 and "applies with --fix or --fix-only" in r.stderr


# ------------------------------------------------------------------------------ rule docs


def test_every_code_has_its_documentation():
    from brainmigrate.codes import CODES, DOCS

    assert list(DOCS) == list(CODES)
    assert all(all(part.strip() for part in doc) for doc in DOCS.values())


def test_rule_prints_the_documentation_and_check_explain_the_same():
    r = cli("rule", "bm204")
    assert r.exit_code == 0
    lines = r.stdout.splitlines()
    head = ["BM204 line-past-end (warning)", "", "A line form points past a file's last line."]
    assert lines[:3] == head
    assert "Example:" in lines and "How to fix: Cite the lines where the code is now," in r.stdout
    assert "<!-- brainmigrate: ignore BM204 -->" in r.stdout
    assert cli("check", "--explain", "BM204").stdout == r.stdout
    bad = cli("rule", "BM999")
    assert bad.exit_code == 2
    assert bad.stderr.startswith("brainmigrate: error: BM999: no such finding code; codes: BM101,")
    assert cli("check", "--explain", "BM999").exit_code == 2
    assert cli("rule").exit_code == 2


def test_rule_all_lists_every_code():
    from brainmigrate.codes import CODES

    lines = cli("rule", "--all").stdout.splitlines()
    assert [line.split()[0] for line in lines] == list(CODES)
    assert lines[0].split()[1:3] == ["gone-path", "error"]


def test_sarif_rules_carry_the_documentation(project):
    from brainmigrate.codes import DOCS

    rules = json.loads(check("--format", "sarif").stdout)["runs"][0]["tool"]["driver"]["rules"]
    first = rules[0]
    assert first["fullDescription"] == {"text": DOCS["BM101"].finds}
    assert first["help"]["text"].startswith(DOCS["BM101"].why + " Example: ")
    assert all("fullDescription" in r and "help" in r for r in rules)


def test_a_file_fix_would_leave_alone_is_not_marked_fixable(project, tmp_path):
    """A read-only notes file, and a symlink leading out of the PATHS: ``--fix`` leaves
    both alone, so neither is marked, nor counted, nor given a JSON ``fix``."""
    (project / "notes.md").chmod(0o444)
    try:
        r = check()
        assert r.stdout.splitlines()[0].startswith("notes.md:1:23: BM101 error cites")
        assert "fixable" not in r.stderr
        assert json.loads(check("--format", "json").stdout)["findings"][0]["fix"] is None
    finally:
        (project / "notes.md").chmod(0o644)
    outside = tmp_path.parent / f"{tmp_path.name}-outside.md"
    outside.write_text(NOTES, encoding="utf-8")
    (project / "notes").mkdir()
    (project / "notes/link.md").symlink_to(outside)
    r = cli("check", "notes", "--root", "repo", "--isolated", "--no-progress")
    assert "[*]" not in r.stdout and "fixable" not in r.stderr, r.output
