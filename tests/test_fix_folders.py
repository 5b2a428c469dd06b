"""``check --fix`` and the "moved?" hint for a gone folder citation, on a real git history:
a folder renamed with ``git mv`` (every file under ``old/`` now under ``new/``), one
moved by a copy and a delete (the only folder of its name, holding the same files), and
the cases that are no certain move (a file of it deleted, its files split over two
folders, a folder of that name missing a file).

The gone folder citations come from the real resolver; the rewrite itself reads the
notes' bytes as ``--fix`` always does.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from trees import git, write

from brainmigrate import check, fix, importer, rules
from brainmigrate.cli import main
from brainmigrate.hints import Move, MoveHints
from brainmigrate.read.run import ImportOptions
from brainmigrate.reports import fix as fix_report
from brainmigrate.roots import Root

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


@pytest.fixture
def repo(tmp_path, monkeypatch) -> Path:
    """``repo/``: ``tools/legacy-import/`` renamed to ``tools/importers/legacy/`` (git
    mv, committed); ``etl/`` deleted and ``jobs/etl/`` written anew with files of the same
    names in one commit (their content too new for git to see renames); ``old-docs/`` whose
    ``a.md`` was deleted and ``b.md`` renamed; ``split/`` whose two files went to two
    folders. The current folder is ``tmp_path``."""
    root = tmp_path / "repo"
    write(
        root,
        {
            "tools/legacy-import/run.py": "def run():\n    return 1\n",
            "tools/legacy-import/parse/rows.py": "def rows():\n    return []\n",
            "etl/load.py": "def load():\n    return 'a'\n",
            "etl/clean.py": "def clean():\n    return 'b'\n",
            "old-docs/a.md": "# A\n",
            "old-docs/b.md": "# B\n\nkeep\n",
            "split/x.py": "x = 1\n",
            "split/y.py": "y = 2\n",
            "README.md": "# repo\n",
        },
    )
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "one")
    (root / "tools/importers").mkdir()
    git(root, "mv", "tools/legacy-import", "tools/importers/legacy")
    git(root, "rm", "-q", "old-docs/a.md")
    (root / "docs").mkdir()
    git(root, "mv", "old-docs/b.md", "docs/b.md")
    (root / "lib/one").mkdir(parents=True)
    (root / "lib/two").mkdir(parents=True)
    git(root, "mv", "split/x.py", "lib/one/x.py")
    git(root, "mv", "split/y.py", "lib/two/y.py")
    git(root, "commit", "-qm", "two: move folders")
    write(
        root,
        {
            "jobs/etl/load.py": "import json\n\n\nLOADERS = {'csv': 1, 'tsv': 2}\n",
            "jobs/etl/clean.py": "import re\n\n\nBLANK = re.compile('x')\n",
        },
    )
    git(root, "rm", "-rq", "etl")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "three: etl by hand")
    monkeypatch.chdir(tmp_path)
    return root


def hints_of(repo: Path) -> MoveHints:
    return MoveHints([Root.of(0, repo)])


def test_a_folder_renamed_in_git_is_located(repo):
    root = Root.of(0, repo)
    hints = MoveHints([root])
    assert hints.locate("tools/legacy-import/") == Move(
        root, "tools/legacy-import", "tools/importers/legacy", "git-rename", "folder"
    )
    assert hints.locate("tools/legacy-import") == Move(
        root, "tools/legacy-import", "tools/importers/legacy", "git-rename", "folder"
    )
    assert hints.hint("tools/legacy-import/") == rules.Hint("tools/importers/legacy/", "git-rename")
    assert hints.hint("tools/legacy-import/").describe() == (
        "moved? tools/importers/legacy/ (renamed in git history)"
    )


def test_a_folder_moved_by_hand_is_the_only_one_of_its_name(repo):
    root = Root.of(0, repo)
    assert hints_of(repo).locate("etl/") == Move(root, "etl", "jobs/etl", "same-folder", "folder")
    assert hints_of(repo).hint("etl/").describe() == (
        "moved? jobs/etl/ (the only folder of that name)"
    )
    # without its '/', a path git moved nothing out of is not taken for a folder: git is
    # not asked what it held (a history walk), and no folder is hinted
    assert hints_of(repo).locate("etl") is None


def test_no_folder_move_when_its_files_did_not_all_go_to_one_folder(repo):
    hints = hints_of(repo)
    assert hints.locate("old-docs/") is None  # a.md was deleted, b.md renamed
    assert hints.locate("split/") is None  # x.py and y.py went to two folders
    assert hints.locate("never/") is None
    # a file of a renamed folder moved as a file
    assert hints.locate("tools/legacy-import/run.py") == Move(
        Root.of(0, repo),
        "tools/legacy-import/run.py",
        "tools/importers/legacy/run.py",
        "git-rename",
    )
    write(repo, {"misc/etl": "a file named like the folder\n"})
    assert hints_of(repo).locate("etl/").path == "jobs/etl"


def test_certain_moves_of_folders(repo):
    hints = hints_of(repo)
    move, how = fix.certain_move("tools/legacy-import/", hints, unsafe=False)
    assert (move.path, how) == ("tools/importers/legacy", "git-rename")
    move, how = fix.certain_move("etl/", hints, unsafe=False)
    assert (move.path, how) == ("jobs/etl", "same-files")
    (repo / "jobs/etl/clean.py").unlink()
    hints = hints_of(repo)
    assert fix.certain_move("etl/", hints, unsafe=False) == (
        "the only folder of that name is jobs/etl/, but it does not hold every file git"
        " shows the old folder held (--unsafe-fixes applies it)"
    )
    move, how = fix.certain_move("etl/", hints, unsafe=True)
    assert (move.path, how) == ("jobs/etl", "same-folder")


NOTES = (
    "+ importers live in tools/legacy-import/ (see tools/legacy-import/run.py)\r\n"
    "+ the [importer](tools/legacy-import/) and `etl/` by hand\r\n"
    "+ old-docs/ stays\r\n"
)
FIXED = (
    b"+ importers live in tools/importers/legacy/ (see tools/legacy-import/run.py)\r\n"
    b"+ the [importer](tools/importers/legacy/) and `jobs/etl/` by hand\r\n"
    b"+ old-docs/ stays\r\n"
)


def folder_findings(notes: Path) -> list[rules.Finding]:
    """BM101 findings of the folder citations in ``NOTES``, as check gives them."""
    out = []
    for line, text in enumerate(notes.read_text().splitlines(), 1):
        for cited in ("tools/legacy-import/", "etl/", "old-docs/"):
            at = text.find(cited)
            if at >= 0 and not text[at - 1 : at].isalnum() and text[at - 1 : at] != "/":
                subject = cited.rstrip("/")
                out.append(
                    rules.Finding(
                        "BM101", "error", "notes/a.md", line, at + 1, f"cites {subject}", subject
                    )
                )
    return out


def test_fix_rewrites_folder_citations_byte_for_byte(repo, tmp_path):
    notes = tmp_path / "notes/a.md"
    notes.parent.mkdir()
    notes.write_bytes(NOTES.encode())
    findings = folder_findings(notes)
    assert [(f.line, f.col, f.subject) for f in findings] == [
        (1, 21, "tools/legacy-import"),
        (2, 18, "tools/legacy-import"),
        (2, 45, "etl"),
        (3, 3, "old-docs"),
    ]
    result = fix.plan_fixes(
        findings, {"notes/a.md": notes}, [Root.of(0, repo)], hints_of(repo), unsafe=False
    )
    assert [(f.line, f.col, f.old, f.new, f.how) for f in result.fixes] == [
        (1, 21, "tools/legacy-import/", "tools/importers/legacy/", "git-rename"),
        (2, 18, "tools/legacy-import/", "tools/importers/legacy/", "git-rename"),
        (2, 45, "etl/", "jobs/etl/", "same-files"),
    ]
    assert [(left.line, left.path, left.reason) for left in result.left] == [
        (3, "old-docs", "no new place is known")
    ]
    assert fix_report.describe(result.fixes[2]) == (
        "notes/a.md:2:45: etl/ -> jobs/etl/ (the only folder of that name, holding every"
        " file the old one held in git)"
    )
    fix.apply(result)
    assert notes.read_bytes() == FIXED


@pytest.mark.parametrize(
    ("written", "old", "new", "expected"),
    [
        ("tools/legacy-import/", "tools/legacy-import", "tools/importers/legacy", None),
        ("./tools/legacy-import/", "tools/legacy-import", "a/b", "./a/b/"),
        ("tools\\legacy-import\\", "tools/legacy-import", "a/b", "a\\b\\"),
    ],
)
def test_rewritten_keeps_a_folders_trailing_slash(written, old, new, expected):
    if expected is None:
        expected = "tools/importers/legacy/"
    assert fix.rewritten(written, old, new) == expected


def test_check_fix_rewrites_a_gone_folder_end_to_end(repo, tmp_path, monkeypatch):
    """Through the CLI: check hints the gone folder, --fix rewrites it, the check after
    the fix passes."""
    notes = tmp_path / "notes/a.md"
    notes.parent.mkdir()
    notes.write_bytes(b"+ importers live in tools/legacy-import/ now\n")
    result = check.run_check(["notes"], ImportOptions(roots=["repo"]))
    assert [(f.code, f.where, f.full_message) for f in result.findings] == [
        (
            "BM101",
            "notes/a.md:1:21",
            "cites tools/legacy-import/, which no root holds; moved? tools/importers/legacy/"
            " (renamed in git history)",
        )
    ]
    done = CliRunner().invoke(main, ["check", "notes", "--root", "repo", "--fix"])
    assert done.exit_code == 0, done.output
    assert notes.read_bytes() == b"+ importers live in tools/importers/legacy/ now\n"
    assert (
        "notes/a.md:1:21: tools/legacy-import/ -> tools/importers/legacy/ (renamed in git history)"
    ) in done.stderr
    assert "Fixed 1 citation in 1 file; 0 left" in done.stderr


def test_a_folder_moved_but_not_committed_is_fixed(repo, tmp_path):
    (repo / "pkg").mkdir()
    git(repo, "mv", "tools/importers/legacy", "pkg/importer")
    root = Root.of(0, repo)
    assert MoveHints([root]).locate("tools/importers/legacy/") == Move(
        root, "tools/importers/legacy", "pkg/importer", "git-rename", "folder"
    )
    # the path first cited is followed through both renames
    assert MoveHints([root]).locate("tools/legacy-import/").path == "pkg/importer"


def test_reimport_after_a_folder_fix_updates_the_same_fact(repo, tmp_path, monkeypatch):
    """Imported while the folder was there (a folder anchor), then gone (a gone citation),
    then fixed: a re-import updates k1 in place, the old anchor and the gone citation
    dropped, the new folder anchored."""
    notes = tmp_path / "notes/a.md"
    notes.parent.mkdir()
    notes.write_bytes(b"+ importers live in tools/importers/legacy/ now\n")
    opts = ImportOptions(roots=["repo"])
    db = tmp_path / "know.db"
    importer.import_notes(["notes"], opts, db)
    (repo / "pkg").mkdir()
    git(repo, "mv", "tools/importers/legacy", "pkg/importer")
    git(repo, "commit", "-qm", "four")
    importer.import_notes(["notes"], opts, db)
    assert rows(db) == (
        [(1, "folder", "tools/importers/legacy")],
        [(1, "tools/importers/legacy/")],
    )
    done = CliRunner().invoke(main, ["check", "notes", "--root", "repo", "--fix"])
    assert done.exit_code == 0, done.output
    assert notes.read_bytes() == b"+ importers live in pkg/importer/ now\n"
    result = importer.import_notes(["notes"], opts, db)
    assert [(r.key, r.action(), r.text) for r in result.facts] == [
        ("k1", "updated", "importers live in pkg/importer/ now")
    ]
    assert rows(db) == ([(1, "folder", "pkg/importer")], [])


def rows(db: Path) -> tuple[list, list]:
    import sqlite3

    con = sqlite3.connect(db)
    try:
        anchors = con.execute("SELECT fact_id, kind, path FROM anchors ORDER BY path").fetchall()
        gone_rows = con.execute("SELECT fact_id, path FROM citations ORDER BY path").fetchall()
    finally:
        con.close()
    return anchors, gone_rows


def test_a_folder_cited_without_its_slash_is_rewritten_without_one(repo, tmp_path):
    """A folder the history knows, cited without a trailing ``/`` (``cd
    tools/legacy-import``): the new path is written as the old one was."""
    notes = tmp_path / "notes/a.md"
    notes.parent.mkdir()
    notes.write_bytes(b"+ cd tools/legacy-import and run it\n")
    finding = rules.Finding(
        "BM101", "error", "notes/a.md", 1, 6, "cites tools/legacy-import", "tools/legacy-import"
    )
    result = fix.plan_fixes(
        [finding], {"notes/a.md": notes}, [Root.of(0, repo)], hints_of(repo), unsafe=False
    )
    assert [(f.old, f.new, f.how) for f in result.fixes] == [
        ("tools/legacy-import", "tools/importers/legacy", "git-rename")
    ]


def test_a_folder_named_like_a_glob_is_read_literally(tmp_path):
    """Next.js route folders: ``app/[slug]/`` renamed to ``app/[post]/``; a sibling
    ``app/s/`` that the glob ``[slug]`` would match is not the folder."""
    root = tmp_path / "web"
    write(root, {"app/[slug]/page.tsx": "export default 1\n", "app/s/page.tsx": "x\n"})
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "one")
    git(root, "mv", "app/[slug]", "app/[post]")
    git(root, "commit", "-qm", "two")
    r = Root.of(0, root)
    assert MoveHints([r]).locate("app/[slug]/") == Move(
        r, "app/[slug]", "app/[post]", "git-rename", "folder"
    )
    assert fix.rewritten("app/[slug]/", "app/[slug]", "app/[post]") == "app/[post]/"
