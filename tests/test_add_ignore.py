"""``check --add-ignore`` (issue 29, "Fixes": ruff's ``--add-noqa``): suppressions written
for today's findings, merged into a fact's comment, idempotent, byte-safe, written as
``--fix`` writes (read-only files and symlinks leading out left alone); the check after
reports the findings as suppressed."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from clirun import cli
from trees import write

STAMP = "<!-- 2026-01-05 10:00 -->"


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    write(tmp_path, {"src/Foo.kt": "class Foo\n"})
    monkeypatch.chdir(tmp_path)
    return tmp_path


def add(*args):
    return cli("check", *args, "--add-ignore")


def findings(*args) -> list[tuple[str, int, str, bool]]:
    got = cli("check", *args, "--format", "json")
    return [
        (f["file"], f["line"], f["code"], f["suppressed"])
        for f in json.loads(got.stdout)["findings"]
    ]


def test_a_comment_per_fact_then_the_check_reports_them_suppressed(project):
    write(
        project,
        {
            "notes/a.md": (
                "+ see src/Foo.kt\n+ gone src/Old.kt and src/Older.kt\n= rule /etc/x.conf\n"
            ),
            "CLAUDE.md": "# Project\n\n- see src/Gone.kt\n",
        },
    )
    got = add("notes", "CLAUDE.md")
    assert (got.exit_code, got.stdout, got.stderr) == (0, "", "Added 3 suppressions to 2 files\n")
    assert (project / "notes/a.md").read_text() == (
        "+ see src/Foo.kt\n"
        "+ gone src/Old.kt and src/Older.kt <!-- brainmigrate: ignore BM101 -->\n"
        "= rule /etc/x.conf <!-- brainmigrate: ignore BM102 -->\n"
    )
    assert (project / "CLAUDE.md").read_text() == (
        "# Project\n\n- see src/Gone.kt <!-- brainmigrate: ignore BM101 -->\n"
    )
    assert findings("notes", "CLAUDE.md") == [
        ("notes/a.md", 2, "BM101", True),
        ("notes/a.md", 2, "BM101", True),
        ("notes/a.md", 3, "BM102", True),
        ("CLAUDE.md", 3, "BM101", True),
    ]
    assert cli("check", "notes", "CLAUDE.md").exit_code == 0


def test_a_second_run_changes_nothing(project):
    write(project, {"notes/a.md": "+ gone src/Old.kt\n  and src/Older.kt " + STAMP + "\n"})
    assert add("notes").stderr == "Added 1 suppression to 1 file\n"
    once = (project / "notes/a.md").read_bytes()
    stat = os.stat(project / "notes/a.md")
    got = add("notes")
    assert (got.exit_code, got.stderr) == (0, "Added 0 suppressions to 0 files\n")
    assert (project / "notes/a.md").read_bytes() == once
    assert os.stat(project / "notes/a.md").st_ino == stat.st_ino  # not even rewritten


def test_codes_are_merged_into_the_facts_existing_comment(project):
    write(
        project,
        {
            "notes/a.md": (
                "+ cites /etc/x.conf\n"
                "  and src/Gone.kt <!-- brainmigrate: ignore=BM102 -->\n"
                "+ cites src/Old.kt /etc/y.conf <!-- brainmigrate: ignore BM105 -->\n"
            )
        },
    )
    got = add("notes")
    assert got.stderr.splitlines()[-1] == "Added 3 suppressions to 1 file"
    assert (project / "notes/a.md").read_text() == (
        "+ cites /etc/x.conf\n"
        "  and src/Gone.kt <!-- brainmigrate: ignore=BM102, BM101 -->\n"
        "+ cites src/Old.kt /etc/y.conf <!-- brainmigrate: ignore BM105, BM101, BM102 -->\n"
    )
    # BM105 waives nothing there: an unused suppression is no finding a comment can take
    assert got.stderr.splitlines()[0] == (
        "brainmigrate: warning: notes/a.md:3: BM401: an unused suppression; remove it by hand"
    )
    assert {s for *_, s in findings("notes") if _[2] != "BM401"} == {True}


def test_a_continuation_lines_finding_goes_where_the_reader_looks(project):
    write(
        project,
        {
            "notes/a.md": (
                "+ the loader " + STAMP + "\n  lived in src/Gone.kt\n"
                "+ first line free\n  then src/Old.kt " + STAMP + "\n"
            )
        },
    )
    assert add("notes").exit_code == 0
    assert (project / "notes/a.md").read_text() == (
        "+ the loader " + STAMP + "\n"
        "  lived in src/Gone.kt <!-- brainmigrate: ignore BM101 -->\n"
        "+ first line free <!-- brainmigrate: ignore BM101 -->\n"
        "  then src/Old.kt " + STAMP + "\n"
    )
    assert findings("notes") == [("notes/a.md", 2, "BM101", True), ("notes/a.md", 4, "BM101", True)]


def test_a_fact_whose_lines_all_end_in_a_comment_is_named(project):
    write(project, {"notes/a.md": "+ gone src/Gone.kt " + STAMP + "\n"})
    got = add("notes")
    assert (got.exit_code, got.stderr) == (
        0,
        "brainmigrate: warning: notes/a.md:1: every line of the fact ends in another comment"
        " or a hard line break; add '<!-- brainmigrate: ignore BM101 -->' by hand\n"
        "Added 0 suppressions to 0 files\n",
    )


def test_only_the_comment_bytes_change_crlf_bom_and_bad_utf8_kept(project):
    before = b"\xef\xbb\xbf+ gone src/Gone.kt\r\n+ bad \xff byte src/Old.kt  \r\n+ see src/Foo.kt"
    (project / "notes").mkdir()
    (project / "notes/a.md").write_bytes(before)
    assert add("notes").exit_code == 0
    assert (project / "notes/a.md").read_bytes() == (
        b"\xef\xbb\xbf+ gone src/Gone.kt <!-- brainmigrate: ignore BM101 -->\r\n"
        # the bad byte is a finding of its fact too (BM305), waived with it
        # two trailing spaces (a Markdown hard line break) stay last, after the comment
        b"+ bad \xff byte src/Old.kt <!-- brainmigrate: ignore BM101, BM305 -->  \r\n"
        b"+ see src/Foo.kt"
    )
    assert {s for *_, s in findings("notes")} == {True}


def test_only_findings_left_after_select_ignore_and_baseline(project):
    write(project, {"notes/a.md": "+ gone src/Gone.kt\n+ outside /etc/x.conf\n+ src/Old.kt\n"})
    base = project / "base.json"
    done = cli("check", "notes", "--select", "BM101", "--baseline", base, "--update-baseline")
    assert done.exit_code == 0, done.output
    (project / "notes/a.md").write_text(
        "+ gone src/Gone.kt\n+ outside /etc/x.conf\n+ src/Old.kt\n+ new src/New.kt\n"
    )
    got = add("notes", "--ignore", "BM102", "--baseline", base)
    assert got.stderr == "Added 1 suppression to 1 file\n"
    assert (project / "notes/a.md").read_text() == (
        "+ gone src/Gone.kt\n+ outside /etc/x.conf\n+ src/Old.kt\n"
        "+ new src/New.kt <!-- brainmigrate: ignore BM101 -->\n"
    )


def test_read_only_files_and_symlinks_leading_out_are_left_alone(project):
    write(project, {"notes/ro.md": "+ gone src/Gone.kt\n", "elsewhere/x.md": "+ src/Old.kt\n"})
    os.chmod(project / "notes/ro.md", 0o444)
    os.symlink(project / "elsewhere/x.md", project / "notes/link.md")
    got = add("notes")
    assert got.exit_code == 2
    assert got.stderr.splitlines() == [
        f"brainmigrate: warning: notes/link.md: a symlink to {os.path.realpath('elsewhere/x.md')},"
        " outside the paths given; left alone (replace the symlink by the file, or pass its"
        " target as a PATH)",
        "brainmigrate: warning: notes/ro.md: read-only; left alone (chmod u+w to fix it)",
        "Added 0 suppressions to 0 files",
    ]
    assert (project / "notes/ro.md").read_text() == "+ gone src/Gone.kt\n"
    assert (project / "elsewhere/x.md").read_text() == "+ src/Old.kt\n"


@pytest.mark.parametrize(
    "extra", [["--fix"], ["--diff"], ["--fix-only"], ["--format", "json"], ["--statistics"]]
)
def test_add_ignore_writes_no_report_and_no_fix(project, extra):
    write(project, {"notes/a.md": "+ gone src/Gone.kt\n"})
    got = cli("check", "notes", "--add-ignore", *extra)
    assert (got.exit_code, got.stdout) == (2, "")
    assert got.stderr == (
        "brainmigrate: error: --add-ignore writes comments into notes files and reports"
        " nothing: leave out --fix, --diff, --fix-only, --format, --output, --statistics,"
        " --update-baseline and '-'; see 'brainmigrate check --help'\n"
    )
    assert (project / "notes/a.md").read_text() == "+ gone src/Gone.kt\n"


def test_markdown_notes_table_rows_quotes_and_paragraphs_take_the_comment(project):
    text = (
        "| what | where |\n| --- | --- |\n| loader | src/Gone.kt |\n\n"
        "> quoted src/Quote.kt\n\nA paragraph on\ntwo lines src/Para.kt\n"
    )
    write(project, {"AGENTS.md": text})
    assert add("AGENTS.md").stderr == "Added 3 suppressions to 1 file\n"
    assert (project / "AGENTS.md").read_text() == (
        "| what | where |\n| --- | --- |\n"
        "| loader | src/Gone.kt | <!-- brainmigrate: ignore BM101 -->\n\n"
        "> quoted src/Quote.kt <!-- brainmigrate: ignore BM101 -->\n\n"
        "A paragraph on <!-- brainmigrate: ignore BM101 -->\ntwo lines src/Para.kt\n"
    )
    assert {s for *_, s in findings("AGENTS.md")} == {True}
    assert add("AGENTS.md").stderr == "Added 0 suppressions to 0 files\n"


def test_a_hard_line_break_stays_a_hard_line_break(project):
    """A comment behind a Markdown hard break (two trailing spaces, or a backslash) would
    undo it: the spaces stay after the comment; a backslash line takes none, the next line
    of the paragraph does."""
    text = "A rule that cites src/Two.kt  \nand more\n\nA rule citing src/Back.kt\\\nsecond line\n"
    write(project, {"AGENTS.md": text})
    assert add("AGENTS.md").stderr == "Added 2 suppressions to 1 file\n"
    assert (project / "AGENTS.md").read_text() == (
        "A rule that cites src/Two.kt <!-- brainmigrate: ignore BM101 -->  \nand more\n\n"
        "A rule citing src/Back.kt\\\nsecond line <!-- brainmigrate: ignore BM101 -->\n"
    )
    assert {s for *_, s in findings("AGENTS.md")} == {True}
