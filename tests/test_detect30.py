"""Which reader reads each file, for ``import`` and ``check`` alike (issue 30; docs/migrate.md
"Detection"): store files are checked as the import reads them, folders get one reader,
brain notes are never taken for a vault, and the store readers split lines at ``\\n``
only. Every case is a real file written in ``tmp_path``, read by the real command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clirun import cli


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A checkout holding ``src/here.py`` only."""
    write(tmp_path / "root" / "src" / "here.py", "x = 1\n")
    return tmp_path / "root"


def check(*args) -> tuple[int, list[tuple]]:
    """``check ARGS --format json --isolated``: its exit code and each finding as
    ``(file name, line, col, code)``."""
    done = cli("check", *args, "--format", "json", "--isolated")
    assert done.exit_code in (0, 1), done.output
    found = json.loads(done.stdout)["findings"]
    return done.exit_code, [(Path(f["file"]).name, f["line"], f["col"], f["code"]) for f in found]


def dry_run(*args) -> dict:
    """``import ARGS --dry-run --format json --isolated``'s report."""
    done = cli("import", *args, "--dry-run", "--format", "json", "--isolated")
    assert done.exit_code in (0, 1), done.output
    return json.loads(done.stdout)


# ---------------------------------------------------------------- 1. check reads stores


BASIC = "---\ntitle: C\npermalink: c\n---\n- [decision] the parser lives in src/gone.py\n"


def test_check_fails_on_a_basic_memory_note_citing_a_gone_file(tmp_path, root):
    note = write(tmp_path / "v2" / "c.md", BASIC)
    assert check(note.parent, "--root", root) == (1, [("c.md", 5, 34, "BM101")])
    assert check("--from", "basic-memory", note, "--root", root) == (
        1,
        [("c.md", 5, 34, "BM101")],
    )
    # read as notes, when asked: nothing fails, and BM313 says which reader reads it
    code, found = check("--from", "brain", note, "--root", root)
    assert (code, found) == (0, [("c.md", None, None, "BM313")])


def test_check_fails_on_mcp_memory_and_jsonl_exports_citing_gone_files(tmp_path, root):
    mcp = write(
        tmp_path / "memory.jsonl",
        '{"type": "entity", "name": "Parser", "entityType": "decision",'
        ' "observations": ["lives in src/gone.py", "tested in src/here.py"]}\n',
    )
    export = write(
        tmp_path / "facts.jsonl",
        '{"id": "k1", "scope": "area:x", "kind": "decision", "text": "see src/gone.py"}\n',
    )
    assert check(mcp, "--root", root) == (1, [("memory.jsonl", 1, 91, "BM101")])
    for args in ((export,), ("--from", "jsonl", export)):
        code, found = check(*args, "--root", root)
        assert (code, [(f[0], f[1], f[3]) for f in found]) == (1, [("facts.jsonl", 1, "BM101")])


def test_check_fails_on_a_claude_code_memory_folder_citing_a_gone_file(tmp_path, root):
    folder = tmp_path / "memory"
    write(folder / "MEMORY.md", "- [Debugging](debugging.md): what was found\n")
    write(folder / "debugging.md", "- The flaky test is in `src/test_upload.py`.\n")
    # the index's link to its topic file is no citation; the topic's fact is checked
    assert check(folder, "--root", root) == (1, [("debugging.md", 1, 25, "BM101")])


def test_check_refuses_from_and_notation_that_disagree(tmp_path):
    note = write(tmp_path / "c.md", BASIC)
    done = cli("check", "--from", "markdown", "--notation", "brain", note, "--isolated")
    assert done.exit_code == 2
    assert done.stderr == (
        "brainmigrate: error: --from markdown and --notation brain disagree; pass one of them\n"
    )


def test_add_ignore_leaves_a_store_file_alone_and_says_why(tmp_path, root):
    note = write(tmp_path / "v2" / "c.md", BASIC)
    done = cli("check", note.parent, "--root", root, "--add-ignore", "--isolated")
    assert done.exit_code == 0
    assert note.read_text(encoding="utf-8") == BASIC
    assert done.stderr == (
        f"brainmigrate: warning: {note}: read by the basic-memory reader, which keeps no"
        " suppression comment; left alone (fix the facts, or record them with --baseline)\n"
        "Added 0 suppressions to 0 files\n"
    )
