"""``brainmigrate check --fix`` / ``--diff`` (brainmigrate.fix) on real git histories.

One repository is built with real commits: a file renamed, renamed twice, moved across
folders, renamed and then edited (git's similarity), deleted, moved next to another file
of the same name, moved by a delete and a later add (no rename git sees: the content
proves it), moved and changed that way (only --unsafe-fixes applies it), and a name with a
space. The notes are CRLF with a BOM, hold an invalid byte and cite the files in every
form ``check`` reads. The expected notes are kept below as exact bytes.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import stat
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from clirun import cli
from trees import git

from brainmigrate import check, fix, importer
from brainmigrate.cli import main
from brainmigrate.hints import MoveHints
from brainmigrate.merge.rule import path_edits
from brainmigrate.read.files import notes_files
from brainmigrate.read.run import ImportOptions

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def mv(repo: Path, old: str, new: str) -> None:
    (repo / new).parent.mkdir(parents=True, exist_ok=True)
    git(repo, "mv", old, new)


def put(repo: Path, rel: str, text: str) -> None:
    p = repo / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")


def body(name: str) -> str:
    return "".join(f"def {name}_{i}():\n    return {i}\n\n" for i in range(12))


@pytest.fixture
def repo(tmp_path: Path, monkeypatch) -> Path:
    """``tmp_path/repo`` with the history the module docstring tells; cwd is tmp_path."""
    r = tmp_path / "repo"
    r.mkdir()
    git(r, "init", "-q")
    files = {
        "src/rename_me.py": body("a"),
        "src/first.py": body("b"),
        "old/pkg/mover.py": body("c"),
        "src/edited.py": body("d"),
        "src/deleted.py": body("e"),
        "lib/util.py": body("f"),
        "other/util.py": body("g"),
        "docs/guide.md": "# Guide\n\nstep one\n",
        "tools/run.sh": "echo one\n",
        "docs/my notes.md": "notes\n",
        "src/kept.py": body("h"),
    }
    for rel, text in files.items():
        put(r, rel, text)
    git(r, "add", "-A")
    git(r, "commit", "-qm", "start")
    mv(r, "src/rename_me.py", "src/renamed.py")
    mv(r, "src/first.py", "src/second.py")
    mv(r, "old/pkg/mover.py", "new/place/mover.py")
    mv(r, "src/edited.py", "src/edited_new.py")
    mv(r, "lib/util.py", "core/util.py")
    mv(r, "docs/my notes.md", "docs/our notes.md")
    git(r, "rm", "-q", "src/deleted.py", "docs/guide.md", "tools/run.sh")
    put(r, "src/edited_new.py", body("d") + "def more():\n    return 99\n")  # renamed, edited
    git(r, "add", "-A")
    git(r, "commit", "-qm", "move")
    mv(r, "src/second.py", "src/third.py")
    put(r, "src/edited_new.py", body("d") + "def more():\n    return 100\n")
    git(r, "add", "-A")
    git(r, "commit", "-qm", "rename again, edit")
    put(r, "manual/guide.md", "# Guide\n\nstep one\n")  # same content: proven by git
    put(r, "bin/run.sh", "echo two\n")  # same name, other content: not proven
    git(r, "add", "-A")
    git(r, "commit", "-qm", "re-add elsewhere")
    monkeypatch.chdir(tmp_path)
    return r


#: The notes (CRLF, BOM, an invalid byte 0xFF, no line end at the end); ``@ROOT@`` is the
#: repository's absolute path.
NOTES = (
    b"\xef\xbb\xbf+ entry in src/rename_me.py:88 and `./src/rename_me.py#L10-L20`\r\n"
    b"+ twice: [loader](src/first.py#setup) and src\\first.py \xff raw byte kept\r\n"
    b"- + moved across folders: @ROOT@/old/pkg/mover.py, then .\\old\\pkg\\mover.py\r\n"
    b"~ edited after its rename: [[src/edited.py|the editor]] (see src/edited.py::test_x)\r\n"
    b"! deleted for good: src/deleted.py\r\n"
    b"\r\n"
    b"= utils: lib/util.py stays one file of two named util.py\r\n"
    b"+ guide at docs/guide.md, runner tools/run.sh, notes [n](docs/my%20notes.md)\r\n"
    b"+ untouched src/kept.py:3 <!-- 2026-11-30 09:00 -->"
)
FIXED = (
    b"\xef\xbb\xbf+ entry in src/renamed.py:88 and `./src/renamed.py#L10-L20`\r\n"
    b"+ twice: [loader](src/third.py#setup) and src\\third.py \xff raw byte kept\r\n"
    b"- + moved across folders: @ROOT@/new/place/mover.py, then .\\new\\place\\mover.py\r\n"
    b"~ edited after its rename: [[src/edited_new.py|the editor]] (see"
    b" src/edited_new.py::test_x)\r\n"
    b"! deleted for good: src/deleted.py\r\n"
    b"\r\n"
    b"= utils: core/util.py stays one file of two named util.py\r\n"
    b"+ guide at manual/guide.md, runner tools/run.sh, notes [n](docs/our%20notes.md)\r\n"
    b"+ untouched src/kept.py:3 <!-- 2026-11-30 09:00 -->"
)
#: What --unsafe-fixes changes on top of FIXED.
UNSAFE = FIXED.replace(b"runner tools/run.sh", b"runner bin/run.sh")


def notes_bytes(repo: Path, template: bytes) -> bytes:
    return template.replace(b"@ROOT@", os.fsencode(repo))


@pytest.fixture
def notes(repo: Path) -> Path:
    p = repo.parent / "notes" / "team.md"
    p.parent.mkdir()
    p.write_bytes(notes_bytes(repo, NOTES))
    p.chmod(0o640)
    return p


def gone(result) -> list[str]:
    return sorted(
        f"{f.line}:{f.subject}" for f in result.findings if f.code == "BM101" and not f.suppressed
    )


def test_fix_rewrites_only_the_paths_byte_for_byte(repo, notes):
    r = cli("check", "notes", "--root", "repo", "--fix", "--isolated")
    assert notes.read_bytes() == notes_bytes(repo, FIXED)
    assert stat.S_IMODE(notes.stat().st_mode) == 0o640
    # what could not be fixed is what the check after the fix reports, and it fails
    assert r.exit_code == 1, r.output
    assert "Fixed 11 citations in 1 file; 2 left" in r.stderr
    assert "notes/team.md:1:12: src/rename_me.py -> src/renamed.py (renamed in git" in r.stderr
    assert "left src/deleted.py: no new place is known" in r.stderr
    assert "left tools/run.sh: the only file of that name is bin/run.sh, but git" in r.stderr
    assert "left lib/util.py" not in r.stderr  # git knows where it went
    findings = [ln for ln in r.stdout.splitlines() if " BM101 " in ln]
    assert len(findings) == 2, r.stdout
    assert "src/deleted.py" in findings[0] and "tools/run.sh" in findings[1]
    after = check.run_check(["notes"], ImportOptions(roots=["repo"]))
    assert gone(after) == ["5:src/deleted.py", "8:tools/run.sh"]


def test_fix_twice_changes_nothing_the_second_time(repo, notes):
    cli("check", "notes", "--root", "repo", "--fix", "--isolated")
    first = notes.read_bytes()
    inode = notes.stat().st_ino
    r = cli("check", "notes", "--root", "repo", "--fix", "--isolated")
    assert notes.read_bytes() == first
    assert notes.stat().st_ino == inode  # not even written again
    assert "Fixed 0 citations in 0 files; 2 left" in r.stderr


def test_unsafe_fixes_apply_the_same_name_without_content_proof(repo, notes):
    r = cli("check", "notes", "--root", "repo", "--fix", "--unsafe-fixes", "--isolated")
    assert notes.read_bytes() == notes_bytes(repo, UNSAFE)
    assert "tools/run.sh -> bin/run.sh (the only file of that name (unsafe" in r.stderr


def test_diff_writes_nothing_and_applies_with_patch(repo, notes, tmp_path):
    before = notes.read_bytes()
    r = CliRunner().invoke(main, ["check", "notes", "--root", "repo", "--diff", "--isolated"])
    assert r.exit_code == 1
    assert notes.read_bytes() == before
    diff = r.stdout_bytes
    assert diff.startswith(b"--- a/notes/team.md\n+++ b/notes/team.md\n@@ -1,9 +1,9 @@\n")
    assert b"\\ No newline at end of file\n" in diff
    assert "Would fix 11 citations in 1 file; 2 left" in r.stderr
    both = CliRunner().invoke(main, ["check", "notes", "--root", "repo", "--diff", "--fix"])
    assert both.exit_code == 1 and both.stdout_bytes == diff  # --diff wins: nothing written
    assert notes.read_bytes() == before
    if shutil.which("patch") is None:
        pytest.skip("needs patch")
    copy = tmp_path / "copy"
    (copy / "notes").mkdir(parents=True)
    (copy / "notes" / "team.md").write_bytes(before)
    done = subprocess.run(["patch", "-p1"], cwd=copy, input=diff, capture_output=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (copy / "notes" / "team.md").read_bytes() == notes_bytes(repo, FIXED)


def test_diff_with_nothing_to_fix_exits_0_and_prints_nothing(repo, notes):
    cli("check", "notes", "--root", "repo", "--fix", "--isolated")
    r = cli("check", "notes", "--root", "repo", "--diff", "--isolated")
    assert r.exit_code == 0
    assert r.stdout == ""


def test_fix_exit_0_when_everything_was_fixed(repo, tmp_path):
    p = tmp_path / "one.md"
    p.write_bytes(b"+ see src/first.py\n")
    r = cli("check", "one.md", "--root", "repo", "--fix", "--isolated")
    assert r.exit_code == 0, r.output
    assert p.read_bytes() == b"+ see src/third.py\n"


def test_a_file_changed_on_disk_since_it_was_read_is_left_alone(repo, notes):
    roots = importer.make_roots(["repo"])
    first = check.run_check(["notes"], ImportOptions(roots=["repo"]))
    files = dict(notes_files(["notes"]))
    planned = fix.plan_fixes(first.findings, files, roots, MoveHints(roots))
    assert planned.edits
    notes.write_bytes(notes.read_bytes() + b"\r\n+ a line added meanwhile")
    fix.apply(planned)
    assert notes.read_bytes().endswith(b"+ a line added meanwhile")
    assert planned.written == [] and planned.fixes == []
    assert planned.notes == [
        "notes/team.md: changed on disk since it was read; left alone, run --fix again"
    ]


def test_utf16_notes_are_left_with_a_message(repo, tmp_path):
    p = tmp_path / "wide.md"
    p.write_bytes("+ see src/first.py\r\n".encode("utf-16"))
    before = p.read_bytes()
    r = cli("check", "wide.md", "--root", "repo", "--fix", "--isolated")
    assert p.read_bytes() == before
    assert "wide.md: UTF-16 or UTF-32 notes are not rewritten" in r.stderr
    assert r.exit_code == 1


def test_a_symlinked_notes_file_is_written_through_its_link(repo, tmp_path):
    real = tmp_path / "real.md"
    real.write_bytes(b"+ see src/first.py\n")
    (tmp_path / "link.md").symlink_to(real)
    cli("check", "link.md", "--root", "repo", "--fix", "--isolated")
    assert (tmp_path / "link.md").is_symlink()
    assert real.read_bytes() == b"+ see src/third.py\n"


def test_usage_errors():
    r = cli("check", "x.md", "--unsafe-fixes")
    assert r.exit_code == 2 and "--unsafe-fixes applies with --fix or --diff" in r.stderr
    r = cli("check", "-", "--fix")
    assert r.exit_code == 2 and "not standard input" in r.stderr
    r = cli("check", "x.md", "--diff", "--format", "json")
    assert r.exit_code == 2 and "--diff prints only the diff" in r.stderr


@pytest.mark.parametrize(
    ("written", "old", "new", "expected"),
    [
        ("src/a.py", "src/a.py", "lib/b.py", "lib/b.py"),
        ("./src/a.py", "src/a.py", "lib/b.py", "./lib/b.py"),
        ("src\\a.py", "src/a.py", "lib/b.py", "lib\\b.py"),
        (".\\src\\a.py", "src/a.py", "lib/b.py", ".\\lib\\b.py"),
        ("/abs/root/src/a.py", "src/a.py", "lib/b.py", "/abs/root/lib/b.py"),
        ("~/w/src/a.py", "src/a.py", "lib/b.py", "~/w/lib/b.py"),
        ("docs/my%20a.md", "docs/my a.md", "docs/our a.md", "docs/our%20a.md"),
        ("src//a.py", "src/a.py", "lib/b.py", None),
    ],
)
def test_rewritten_keeps_the_form(written, old, new, expected):
    assert fix.rewritten(written, old, new) == expected


def test_path_edits_is_exact():
    a = "entry in src/rename_me.py:88 per TER-5"
    assert path_edits(a, "entry in src/renamed.py:88 per TER-5") == [
        ("src/rename_me.py", "src/renamed.py")
    ]
    assert path_edits(a, a) is None
    assert path_edits(a, "entry in src/renamed.py:89 per TER-5") is None  # line form too
    assert path_edits(a, "entry in src/renamed.py:88 per TER-6") is None
    assert path_edits(a, "entry in src/renamed.py:88") is None
    assert path_edits("no path here", "no path there") is None
    assert path_edits("see ./a/b.py", "see .\\c\\d.py") == [("a/b.py", "c/d.py")]


def store_rows(db: Path):
    con = sqlite3.connect(db)
    try:
        facts = con.execute("SELECT id, text FROM facts ORDER BY id").fetchall()
        anchors = con.execute("SELECT fact_id, path FROM anchors ORDER BY fact_id, path").fetchall()
        gone_rows = con.execute("SELECT fact_id, path FROM citations ORDER BY fact_id").fetchall()
        prov = con.execute("SELECT fact_id, file, line FROM provenance ORDER BY rowid").fetchall()
    finally:
        con.close()
    return facts, anchors, gone_rows, prov


def test_reimport_after_fix_updates_the_same_fact(repo, tmp_path):
    """Imported while the file existed (an anchor), then renamed with digits in the new
    path (a new number: another merge block, the repeat rule alone would add a fact);
    --fix; a re-import updates k1 in place: anchor replaced, gone citation cleared."""
    put(repo, "api/handler.py", body("x"))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "handler")
    notes = tmp_path / "api.md"
    notes.write_bytes(b"+ retries live in api/handler.py#L3 (TER-7)\n+ other fact src/kept.py\n")
    opts = ImportOptions(roots=["repo"])
    db = tmp_path / "know.db"
    importer.import_notes([str(notes)], opts, db)
    mv(repo, "api/handler.py", "api/v2/handler_v2.py")
    git(repo, "commit", "-qm", "v2")
    importer.import_notes([str(notes)], opts, db)  # the path is gone now: a gone citation
    facts, anchors, gone_rows, _ = store_rows(db)
    assert (1, "api/handler.py") in anchors and gone_rows == [(1, "api/handler.py")]
    r = cli("check", str(notes), "--root", "repo", "--fix", "--isolated")
    assert r.exit_code == 0, r.output
    assert notes.read_bytes().startswith(b"+ retries live in api/v2/handler_v2.py#L3 (TER-7)\n")
    result = importer.import_notes([str(notes)], opts, db)
    facts, anchors, gone_rows, prov = store_rows(db)
    assert facts == [
        (1, "retries live in api/v2/handler_v2.py#L3 (TER-7)"),
        (2, "other fact src/kept.py"),
    ]
    assert anchors == [(1, "api/v2/handler_v2.py"), (2, "src/kept.py")]
    assert gone_rows == []
    # provenance keeps the line before and after the fix (two fingerprints, one fact)
    assert prov.count((1, str(notes), 1)) == 2
    assert [r.action() for r in result.facts] == ["updated", "unchanged"]
    fed = {(m["into"], m["line"]): m for m in result.merged}
    assert fed["k1", 1]["paths"] is True and fed["k1", 1]["known"] is False
    assert fed["k2", 2]["paths"] is False and fed["k2", 2]["known"] is True
    # and the next import knows the line by its new line key: nothing changes
    again = importer.import_notes([str(notes)], opts, db)
    assert [r.action() for r in again.facts] == ["unchanged", "unchanged"]
    assert store_rows(db)[0] == facts


def test_a_line_edited_beyond_its_paths_follows_the_repeat_rule(repo, tmp_path):
    """Only a path change updates in place; other words changed make a new fact when
    the repeat rule says so (the rule is exact, not a similarity)."""
    notes = tmp_path / "api.md"
    notes.write_bytes(b"+ retries in src/kept.py\n")
    opts = ImportOptions(roots=["repo"])
    db = tmp_path / "know.db"
    importer.import_notes([str(notes)], opts, db)
    notes.write_bytes(b"+ timeouts in src/renamed.py\n")
    importer.import_notes([str(notes)], opts, db)
    facts, anchors, _, _ = store_rows(db)
    assert [f[0] for f in facts] == [1, 2]
    assert (1, "src/kept.py") in anchors


def test_link_targets_are_fixed_as_check_reads_them(repo):
    """Notes inside the checkout: a link target is read relative to the roots first, then
    relative to the notes file's own folder; each is rewritten in the reading it had."""
    put(repo, "docs/adr/0021-ledger.md", "# ledger\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "adr")
    mv(repo, "docs/adr/0021-ledger.md", "docs/adr/0021-ledger-v2.md")
    git(repo, "commit", "-qm", "adr renamed")
    notes = repo / "docs" / "adr" / "0001-index.md"
    notes.write_bytes(
        b"+ see [ledger](0021-ledger.md), [runner](../../src/first.py),"
        b" [r](src/first.py) and [w](..\\..\\src\\first.py)\n"
    )
    r = cli("check", str(notes), "--root", "repo", "--fix", "--isolated")
    assert r.exit_code == 0, r.output
    assert notes.read_bytes() == (
        b"+ see [ledger](0021-ledger-v2.md), [runner](../../src/third.py),"
        b" [r](src/third.py) and [w](..\\..\\src\\third.py)\n"
    )


def test_without_git_only_unsafe_fixes_apply_the_same_name(tmp_path, monkeypatch):
    """A root outside git: no rename, and no content proof; two files of one name are
    never a fix, not even an unsafe one."""
    plain = tmp_path / "plain"
    put(plain, "one/only.py", "x = 1\n")
    put(plain, "a/twice.py", "x = 2\n")
    put(plain, "b/twice.py", "x = 3\n")
    notes = tmp_path / "n.md"
    notes.write_bytes(b"+ see one/gone/only.py and a/old/twice.py\n")
    monkeypatch.chdir(tmp_path)
    r = cli("check", "n.md", "--root", "plain", "--fix", "--isolated")
    assert r.exit_code == 1
    assert notes.read_bytes() == b"+ see one/gone/only.py and a/old/twice.py\n"
    assert "left one/gone/only.py: the only file of that name is one/only.py" in r.stderr
    r = cli("check", "n.md", "--root", "plain", "--fix", "--unsafe-fixes", "--isolated")
    assert notes.read_bytes() == b"+ see one/only.py and a/old/twice.py\n"
    assert "left a/old/twice.py: no new place is known" in r.stderr
    assert r.exit_code == 1


def test_suppressed_and_unselected_citations_are_left_as_they_are(repo, tmp_path):
    p = tmp_path / "s.md"
    text = b"+ kept on purpose src/first.py <!-- brainmigrate: allow-gone -->\n"
    p.write_bytes(text)
    r = cli("check", "s.md", "--root", "repo", "--fix", "--isolated")
    assert p.read_bytes() == text and r.exit_code == 0
    p.write_bytes(b"+ see src/first.py\n")
    cli("check", "s.md", "--root", "repo", "--fix", "--ignore", "BM101", "--isolated")
    assert p.read_bytes() == b"+ see src/first.py\n"


def test_invalid_bytes_and_nul_before_the_path_keep_the_columns_right(repo, tmp_path):
    """Columns count code points of the line as check decoded it (an invalid sequence is
    one U+FFFD, whatever its length); the bytes around the path stay as they were."""
    p = tmp_path / "bad.md"
    text = (
        b"+ \xe2\x82 two bad, \xff\xfe, a NUL \x00 and \xc3\xa9 then src/first.py:2 \xf0\x9f\x98\n"
    )
    p.write_bytes(text)
    r = cli("check", "bad.md", "--root", "repo", "--fix", "--isolated")
    assert r.exit_code == 0, r.output
    assert p.read_bytes() == text.replace(b"src/first.py", b"src/third.py")


def test_a_rename_not_yet_committed_is_hinted_and_fixed(repo, tmp_path):
    """What a pre-commit hook sees: `git mv` staged (and one moved in the work tree and
    added), nothing committed. check hints the new name; --fix writes it."""
    git(repo, "mv", "src/kept.py", "src/keeper.py")
    mv(repo, "src/renamed.py", "src/final_name.py")
    git(repo, "add", "-A")
    notes = tmp_path / "staged.md"
    notes.write_text("+ kept in src/kept.py:3\n+ entry in src/renamed.py\n", encoding="utf-8")
    r = cli("check", "staged.md", "--root", "repo", "--isolated")
    assert r.exit_code == 1
    assert "cites src/kept.py, which no root holds; moved? src/keeper.py (renamed in git" in (
        r.stdout
    )
    assert "moved? src/final_name.py (renamed in git history)" in r.stdout
    r = cli("check", "staged.md", "--root", "repo", "--isolated", "--fix")
    assert notes.read_text(encoding="utf-8") == (
        "+ kept in src/keeper.py:3\n+ entry in src/final_name.py\n"
    )
    assert r.exit_code == 0, r.output


def test_a_new_name_with_a_line_break_is_shown_on_one_line_and_not_written(repo, tmp_path):
    """A file renamed to a name holding a newline (and text that looks like a finding):
    check prints one line per finding, and --fix leaves the citation instead of cutting
    the fact line in two."""
    forged = "src/new\nfake.md:99:1: BM101 error injected.py"
    mv(repo, "src/kept.py", forged)
    git(repo, "commit", "-qm", "a name with a newline")
    notes = tmp_path / "odd.md"
    notes.write_text("+ kept in src/kept.py now\n", encoding="utf-8")
    r = cli("check", "odd.md", "--root", "repo", "--isolated")
    finding = [ln for ln in r.stdout.splitlines() if "BM101" in ln]
    assert finding == [
        "odd.md:1:11: BM101 error cites src/kept.py, which no root holds; moved? "
        "src/new\ufffdfake.md:99:1: BM101 error injected.py (renamed in git history)"
    ]
    r = cli("check", "odd.md", "--root", "repo", "--isolated", "--fix")
    assert notes.read_text(encoding="utf-8") == "+ kept in src/kept.py now\n"
    assert r.exit_code == 1
    [left] = [ln for ln in r.stderr.splitlines() if " left " in ln]
    assert "\t" not in left and "cannot stand in a citation" in left


def test_an_interrupt_after_a_file_was_fixed_names_it(repo, notes, monkeypatch):
    """Ctrl-C after ``--fix`` rewrote a notes file: exit 130, and the line names the file
    already written whole (the run holds no store to speak of)."""
    from brainmigrate import writers

    real = writers.land

    def then_interrupted(dir_fd, tmp, name, shown_as):
        real(dir_fd, tmp, name, shown_as)
        if shown_as is not None:  # a notes file, not a cache
            raise KeyboardInterrupt

    monkeypatch.setattr(writers, "land", then_interrupted)
    r = cli("check", "notes", "--root", "repo", "--fix", "--isolated")
    assert r.exit_code == 130
    assert r.stderr == (
        "brainmigrate: interrupted after notes/team.md was written whole; the rest of the"
        " run was cut short\n"
    )
    assert notes.read_bytes() == notes_bytes(repo, FIXED)
    assert [p.name for p in notes.parent.iterdir()] == ["team.md"]  # no temporary file


def test_a_reference_style_link_is_fixed_at_its_definition(tmp_path, monkeypatch):
    """``[the entry][r]`` is reported at the reference (SPEC.md §Anchors) but its path is
    written in ``[r]: src/old.py``: --fix rewrites the definition, where it said "the notes
    file changed since it was read" and left a BM101 error."""
    from trees import renamed

    monkeypatch.chdir(tmp_path)
    renamed(tmp_path / "repo", "x = 1\n")
    notes = tmp_path / "repo" / "CLAUDE.md"
    notes.write_text("# Rules\n\n- See [the entry][r] for the start.\n\n[r]: src/old.py\n")
    monkeypatch.chdir(tmp_path / "repo")
    done = cli("check", "CLAUDE.md", "--fix", "--isolated")
    assert (done.exit_code, done.stderr) == (
        0,
        "CLAUDE.md:5:6: src/old.py -> src/new.py (renamed in git history)\n"
        "Fixed 1 citation in 1 file; 0 left\n",
    )
    assert notes.read_text() == (
        "# Rules\n\n- See [the entry][r] for the start.\n\n[r]: src/new.py\n"
    )


def test_a_json_store_file_is_left_alone_by_fix_saying_why(tmp_path, monkeypatch):
    """``check`` reads a jsonl export as import does and finds its gone citation; --fix
    does not rewrite JSON lines, and says so (it said the file changed since it was
    read)."""
    from trees import renamed

    renamed(tmp_path / "repo", "x = 1\n")
    facts = tmp_path / "repo" / "facts.jsonl"
    line = '{"id":"k1","scope":"area:a","kind":"decision","text":"the entry is src/old.py"}\n'
    facts.write_text(line, encoding="utf-8")
    monkeypatch.chdir(tmp_path / "repo")
    done = cli("check", "facts.jsonl", "--fix", "--isolated")
    col = line.index("src/old.py") + 1
    assert (done.exit_code, done.stderr) == (
        1,
        f"facts.jsonl:1:{col}: left src/old.py: a JSON store file is not rewritten; fix its"
        " line by hand\nFixed 0 citations in 0 files; 1 left\n",
    )
    assert facts.read_text(encoding="utf-8") == line
    # by what detection says too: an .ndjson export was rewritten (a " in the new path
    # would break its JSON)
    other = tmp_path / "repo" / "facts.ndjson"
    other.write_text(line, encoding="utf-8")
    done = cli("check", "facts.ndjson", "--fix", "--isolated")
    assert done.exit_code == 1 and "a JSON store file is not rewritten" in done.stderr
    assert other.read_text(encoding="utf-8") == line
