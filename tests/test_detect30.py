"""Which reader reads each file, for ``import`` and ``check`` alike (issue 30; docs/migrate.md
"Detection"): store files are checked as the import reads them, folders get one reader,
brain notes are never taken for a vault, and the store readers split lines at ``\\n``
only. Every case is a real file written in ``tmp_path``, read by the real command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clirun import cli
from stored import rows


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
        assert check(*args, "--root", root) == (1, [("facts.jsonl", 1, 66, "BM101")])


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


def files_of(report: dict) -> dict:
    """``{file name: (reader, lines, fact lines, continuations, blank, skipped)}``."""
    return {
        Path(f["path"]).name: (
            f["notation"], f["lines"], f["fact_lines"], f["continuations"], f["blank"],
            f["skipped"],
        )
        for f in report["files"]
    }  # fmt: skip


def warned(report: dict) -> list[tuple]:
    return [(Path(w["file"]).name, w["line"], w["code"], w["message"]) for w in report["warnings"]]


# ------------------------------------------------------- 2. a vault folder, one reader

A_NOTE = "---\ntitle: A\npermalink: a\n---\n- [decision] first\n"
B_NOTE = "---\ntitle: B\n---\n# B\nSome prose.\n- [decision] the only observation in B\n"


def test_a_vault_folder_is_read_whole_by_the_vault_reader(tmp_path):
    vault = tmp_path / "v"
    write(vault / "a.md", A_NOTE)
    write(vault / "b.md", B_NOTE)
    write(vault / "c.md", "- [decision] c one\n- [idea] c two\n")
    report = dry_run(vault, "--store", tmp_path / "k.db")
    assert {name: got[:3] for name, got in files_of(report).items()} == {
        "a.md": ("basic-memory", 5, 1),
        "b.md": ("basic-memory", 6, 1),  # one observation: the folder's reader reads it
        "c.md": ("basic-memory", 2, 2),
    }
    assert [w for w in warned(report) if w[2] == "BM313"] == []


def test_a_note_left_to_notes_that_yields_no_fact_line_names_the_vault_reader(tmp_path):
    folder = tmp_path / "v"
    write(folder / "a.md", A_NOTE)
    b = write(folder / "b.md", B_NOTE)  # 1 of 2 notes: no vault, b.md is left to notes
    broken = write(tmp_path / "broken.md", "---\ntitle: [unclosed\n---\n- [decision] x\n")
    report = dry_run(folder, broken, "--store", tmp_path / "k.db")
    assert files_of(report)["b.md"][:3] == ("brain", 6, 0)
    assert [w for w in warned(report) if w[2] == "BM313"] == [
        (
            "b.md",
            None,
            "BM313",
            f"0 fact lines in 6 lines of {b}: it looks like a Basic Memory note; pass"
            " --from basic-memory",
        ),
        (
            "broken.md",
            None,
            "BM313",
            f"0 fact lines in 4 lines of {broken}: it looks like a Basic Memory note; pass"
            " --from basic-memory",
        ),
    ]


# ------------------------------------------------ 3. brain notes are never a vault note


def test_brain_notes_with_a_jekyll_permalink_keep_their_facts(tmp_path):
    notes = write(
        tmp_path / "notes" / "p.md",
        "---\nlayout: page\npermalink: /notes/payments/\n---\n"
        "+ PaymentGateway retries twice\n! never log card numbers\n- [decision] x\n",
    )
    rfc = write(
        tmp_path / "notes" / "http.md",
        "# HTTP\n\n- Retries use backoff\n- [RFC 7231] says GET is safe\n"
        "- [RFC 7232] says ETags validate\n- Timeouts are 30 seconds\n+ use httpx\n",
    )
    report = dry_run(notes.parent, "--store", tmp_path / "k.db")
    assert {name: got[:3] for name, got in files_of(report).items()} == {
        "http.md": ("brain", 7, 1),
        "p.md": ("brain", 7, 2),
    }
    assert rfc.is_file()


def test_a_permalink_page_of_prose_is_no_note_but_one_with_observations_is(tmp_path):
    from brainmigrate.sources.basic_memory import BasicMemory

    page = write(tmp_path / "about.md", "---\npermalink: /about/\n---\nWho we are.\n")
    note = write(tmp_path / "n.md", "---\npermalink: n\n---\nWhy.\n- [decision] one\n")
    mostly = write(
        tmp_path / "list.md", "- [decision] one\n- [idea] two\n- three\n- four\n- five\n"
    )
    source = BasicMemory()
    assert [source.detect(p, p.read_text()) for p in (page, note, mostly)] == [
        False,
        True,
        False,  # observations are 2 of 5 list items: no majority
    ]


# ------------------------------------------- 4, 5. lines end at \n; the first line whole


def test_a_raw_u2028_neither_defeats_detection_nor_cuts_a_line(tmp_path):
    mcp = tmp_path / "memory.jsonl"
    mcp.write_text(
        '{"type": "entity", "name": "Parser", "entityType": "decision",'
        ' "observations": ["one\u2028two", "three\u0085four"]}\n'
        '{"type": "entity", "name": "Lexer", "observations": ["five\u2029six"]}\n',
        encoding="utf-8",
    )
    export = tmp_path / "facts.jsonl"
    export.write_text(
        '{"id": "k1", "scope": "area:x", "kind": "decision", "text": "a\u2028b"}\n'
        '{"id": "k2", "scope": "area:x", "kind": "pattern", "text": "c"}\n',
        encoding="utf-8",
    )
    for path, counts in (
        (mcp, ("mcp-memory", 3, 3, 0, 0, 0)),  # three observations on two lines
        (export, ("jsonl", 2, 2, 0, 0, 0)),
    ):
        report = dry_run(path, "--store", tmp_path / "k.db")
        assert files_of(report) == {path.name: counts}
        assert warned(report) == []


def test_a_first_line_longer_than_4_kib_is_detected(tmp_path):
    long = "x" * 6000
    export = write(
        tmp_path / "facts.jsonl",
        f'{{"id": "k1", "scope": "area:x", "kind": "decision", "text": "{long}"}}\n',
    )
    mcp = write(
        tmp_path / "memory.json",
        f'{{"name": "Parser", "observations": ["{long}"], "type": "entity"}}\n',
    )
    report = dry_run(export, mcp, "--store", tmp_path / "k.db")
    assert {name: got[:3] for name, got in files_of(report).items()} == {
        "facts.jsonl": ("jsonl", 1, 1),
        "memory.json": ("mcp-memory", 1, 1),
    }


# --------------------------------------- 6, 7. a Claude Code memory folder, one reader


def claude_memory(folder: Path) -> Path:
    write(
        folder / "MEMORY.md",
        "- [User role](user_role.md) — senior backend engineer\n"
        "- [Testing](feedback_testing.md) — integration tests\n",
    )
    write(
        folder / "user_role.md",
        "---\nname: User role\ndescription: who the user is\ntype: user\n---\n"
        "The user is a senior backend engineer who owns src/api.py.\n",
    )
    write(
        folder / "feedback_testing.md",
        "---\nname: Integration tests\ndescription: against a real database\n"
        "type: feedback\n---\nRun the integration tests against a real database.\n\n"
        "**Why:** a mocked test passed while src/migrate.py broke.\n"
        "**How to apply:** run `make itest` before every push.\n",
    )
    return folder


def test_a_claude_code_memory_folder_is_read_by_one_reader_bodies_whole(tmp_path):
    folder = claude_memory(tmp_path / "memory")
    report = dry_run(folder, "--store", tmp_path / "k.db")
    assert files_of(report) == {
        "MEMORY.md": ("memory", 2, 0, 0, 0, 2),
        "feedback_testing.md": ("memory", 9, 1, 2, 1, 5),
        "user_role.md": ("memory", 6, 1, 0, 0, 5),
    }
    assert warned(report) == []
    assert sorted(f["text"] for f in report["facts"]) == [
        "Run the integration tests against a real database. **Why:** a mocked test passed"
        " while src/migrate.py broke. **How to apply:** run `make itest` before every push.",
        "The user is a senior backend engineer who owns src/api.py.",
    ]


def test_a_cited_path_on_a_body_line_past_the_first_is_found_where_it_is(tmp_path, root):
    folder = claude_memory(tmp_path / "memory")
    assert check(folder, "--root", root) == (
        1,
        [("feedback_testing.md", 8, 37, "BM101"), ("user_role.md", 6, 48, "BM101")],
    )


def test_a_knowledge_entry_s_body_is_its_fact_up_to_the_export_s_lines(tmp_path):
    entry = write(
        tmp_path / "k" / "rule.md",
        "---\nname: rule\ndescription: d\ntype: project\n---\n\nFirst line of the rule,\n"
        "  and its second line.\n\nStatus: active\n\n## Provenance\n\n- notes.md:3\n",
    )
    report = dry_run("--from", "knowledge", entry, "--store", tmp_path / "k.db")
    assert [f["text"] for f in report["facts"]] == ["First line of the rule, and its second line."]
    assert files_of(report)["rule.md"] == ("knowledge", 14, 1, 1, 4, 8)


# --------------------------------------------------- 8. a [[Target|label]] relation


def test_a_labelled_relation_links_and_a_missing_target_is_warned_once(tmp_path):
    vault = tmp_path / "v"
    write(
        vault / "login.md",
        "---\ntitle: Login Flow\n---\n- [decision] sessions last a day\n"
        "- [decision] tokens rotate hourly\n- depends_on [[Authentication System|auth]]\n"
        "- uses [[Nowhere Note]]\n",
    )
    write(
        vault / "auth.md",
        "---\ntitle: Authentication System\n---\n- [decision] argon2 hashes\n- [idea] passkeys\n",
    )
    store = tmp_path / "k.db"
    done = cli("import", vault, "--store", store, "--format", "json", "--isolated")
    assert done.exit_code == 0, done.output
    report = json.loads(done.stdout)
    assert rows(store, "SELECT text, related FROM facts ORDER BY id") == [
        ("argon2 hashes", "[]"),
        ("[idea] passkeys", "[]"),
        ("sessions last a day", "[1]"),
        ("tokens rotate hourly", "[1]"),
    ]
    assert warned(report) == [
        (
            "login.md",
            7,
            "BM312",
            "related nowhere-note: no entry read holds it; the link is left out (import the"
            " file that holds it in the same run)",
        )
    ]


# ------------------------------------------------------------- 10. the wrong reader

MCP_LINE = (
    '{"type": "entity", "name": "Parser", "entityType": "decision",'
    ' "observations": ["lives in src/gone.py"]}\n'
)


@pytest.mark.parametrize("forced", [("--from", "markdown"), ("--notation", "markdown")])
def test_a_store_file_read_as_notes_on_request_says_whose_it_is(tmp_path, forced):
    mcp = write(tmp_path / "mem" / "memory.jsonl", MCP_LINE)
    report = dry_run(*forced, mcp, "--store", tmp_path / "k.db")
    assert files_of(report)["memory.jsonl"][:3] == ("markdown", 1, 1)
    assert warned(report) == [
        (
            "memory.jsonl",
            None,
            "BM313",
            f"{mcp} read as markdown notes (1 fact line): it looks like an MCP memory file;"
            " pass --from mcp-memory",
        )
    ]


def test_bm313_under_the_wrong_store_reader_names_the_right_one(tmp_path):
    mcp = write(tmp_path / "mem" / "memory.jsonl", MCP_LINE)
    done = cli("import", "--from", "jsonl", mcp, "--dry-run", "--format", "json", "--isolated")
    assert done.exit_code == 1
    assert warned(json.loads(done.stdout)) == [
        (
            "memory.jsonl",
            None,
            "BM313",
            f"0 fact lines in 1 lines of {mcp}: it looks like an MCP memory file; pass"
            " --from mcp-memory",
        ),
        ("memory.jsonl", 1, "BM312", "no 'text' field; line skipped"),
    ]


def test_from_mcp_memory_reads_a_folder_s_memory_jsonl(tmp_path):
    mcp = write(tmp_path / "mem" / "memory.jsonl", MCP_LINE)
    report = dry_run("--from", "mcp-memory", mcp.parent, "--store", tmp_path / "k.db")
    assert files_of(report) == {"memory.jsonl": ("mcp-memory", 1, 1, 0, 0, 0)}
    (tmp_path / "empty").mkdir()
    done = cli("import", "--from", "mcp-memory", tmp_path / "empty", "--dry-run", "--isolated")
    assert done.exit_code == 2
    assert done.stderr == (
        f"brainmigrate: error: {tmp_path / 'empty'}: no *.jsonl or *.json file in this"
        " folder; pass the server's memory.jsonl (or its folder)\n"
    )


# ------------------------------------------------------ 9. why store lines are skipped


def test_store_lines_skipped_are_named_as_notes_name_them(tmp_path):
    note = write(
        tmp_path / "n.md",
        "---\ntitle: N\npermalink: n\n---\n# N\n\nSome prose.\n```sh\nmake\n```\n"
        "- [decision] one\n- [idea] two\n",
    )
    report = dry_run(note, "--store", tmp_path / "k.db")
    (entry,) = report["files"]
    assert (entry["lines"], entry["fact_lines"], entry["blank"], entry["skipped"]) == (12, 2, 1, 9)
    assert {k: n for k, n in entry["skipped_by_reason"].items() if n} == {
        "front-matter": 4,
        "heading": 1,
        "code": 3,
        "prose": 1,
    }


def test_a_knowledge_entry_with_crlf_line_ends_is_detected(tmp_path):
    entry = tmp_path / "k" / "rule.md"
    entry.parent.mkdir()
    entry.write_bytes(
        b"---\r\nname: rule\r\ndescription: d\r\ntype: project\r\n---\r\n\r\nKeep it.\r\n"
    )
    report = dry_run(entry, "--store", tmp_path / "k.db")
    assert files_of(report) == {"rule.md": ("knowledge", 7, 1, 0, 1, 5)}
    assert [f["text"] for f in report["facts"]] == ["Keep it."]


# ------------------------------------------------------- brain notation facts stay notes


def test_a_memory_index_does_not_take_a_topic_file_of_brain_notation(tmp_path, root):
    """A ``MEMORY.md`` naming ``decisions.md`` made the memory reader read it, which
    keeps bullets only: its ``~`` fact citing a gone file was dropped and check passed."""
    notes = tmp_path / "notes"
    write(notes / "decisions.md", "~ keep the pool in src/gone.py\n+ the app is src/here.py\n")
    write(notes / "MEMORY.md", "# Index\n\n- see decisions.md\n")
    assert check(notes, "--root", root) == (1, [("decisions.md", 1, 20, "BM101")])


def test_a_brain_notation_file_in_a_vault_folder_stays_notes(tmp_path, root):
    """Three Basic Memory notes make the folder a vault; a file of brain notation facts
    beside them was read as a vault note: its errors became warnings and check passed."""
    notes = tmp_path / "notes"
    for name in "abc":
        write(
            notes / f"{name}.md",
            f"---\ntitle: {name}\npermalink: {name}\n---\n\n## Observations\n"
            "- [fact] the app is src/here.py\n- [tech] uses sqlite\n",
        )
    write(notes / "z.md", "~ keep the pool in src/gone.py\n! deploy needs src/gone2.py\n")
    code, found = check(notes, "--root", root)
    assert (code, [f for f in found if f[3] == "BM101"]) == (
        1,
        [("z.md", 1, 20, "BM101"), ("z.md", 2, 16, "BM101")],
    )


def test_a_jsonl_file_whose_first_line_is_broken_is_still_read_as_jsonl(tmp_path, root):
    """A broken first line made detection read the file as notes: 0 fact lines, no word,
    the second line's gone citation unseen."""
    good = '{"id": "k2", "scope": "area:x", "kind": "decision", "text": "pool in src/gone.py"}'
    bad = '{"id": "k1", "scope": "area:x", "kind": "decision", "text": "pool in src/g"one.py"}'
    facts = write(tmp_path / "e.jsonl", f"{bad}\n{good}\n")
    assert check(facts, "--root", root) == (
        1,
        [("e.jsonl", 1, 1, "BM312"), ("e.jsonl", 2, good.index("src/") + 1, "BM101")],
    )
