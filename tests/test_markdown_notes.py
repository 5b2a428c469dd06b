"""Markdown notes (SPEC.md §Notation, "Markdown notes"): CLAUDE.md, AGENTS.md and Cursor
rules read as plain Markdown; which files are, and the report's ``notation``."""

from __future__ import annotations

import codecs
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from brainmigrate import anchors, importer, reports
from brainmigrate.cli import main
from brainmigrate.read import lines, markdown_notes, notation, references
from brainmigrate.read.files import InputError
from brainmigrate.read.markdown_notes import MarkdownGlobs
from brainmigrate.read.run import ImportOptions

FAST = notation.classifier("fast")
LARK = notation.classifier("lark")

CLAUDE = """\
---
description: how we work here
---
# Project notes

The service runs on `app/server.py`.
It wraps to a second line.

## Rules
- ! flaky upload in `app/upload.py`
- [ ] ~ decide the pool size
  indented continuation
  - nested item
    nested continuation
1. first step
+ plus item, no marker
- [x] done is text

| file | what |
|------|:----:|
| app/server.py | entry |

> quoted advice
> [!NOTE]

```bash
- not an item
```
"""


def lines_of(data: str, classify=FAST) -> tuple[list[tuple], list]:
    diags: list = []
    out = [
        (ln.number, ln.cls, ln.reason, ln.marker, ln.text, ln.col)
        for ln in markdown_notes.scan_file(io.BytesIO(data.encode()), "CLAUDE.md", diags, classify)
    ]
    return out, diags


@pytest.mark.parametrize("classify", [FAST, LARK], ids=["fast", "lark"])
def test_a_claude_md_line_by_line(classify):
    out, diags = lines_of(CLAUDE, classify)
    assert out == [
        (1, "skipped", "front-matter", "", "", 1),
        (2, "skipped", "front-matter", "", "", 1),
        (3, "skipped", "front-matter", "", "", 1),
        (4, "skipped", "heading", "", "", 1),
        (5, "blank", "", "", "", 1),
        (6, "fact", "", "-", "The service runs on `app/server.py`.", 1),
        (7, "continuation", "", "", "It wraps to a second line.", 1),
        (8, "blank", "", "", "", 1),
        (9, "skipped", "heading", "", "", 1),
        (10, "fact", "", "!", " flaky upload in `app/upload.py`", 4),
        (11, "fact", "", "~", " decide the pool size", 8),
        (12, "continuation", "", "", "  indented continuation", 1),
        (13, "fact", "", "-", "nested item", 5),
        (14, "continuation", "", "", "    nested continuation", 1),
        (15, "fact", "", "-", "first step", 4),
        (16, "fact", "", "-", "plus item, no marker", 3),
        (17, "fact", "", "-", "done is text", 7),
        (18, "blank", "", "", "", 1),
        (19, "fact", "", "-", "| file | what |", 1),
        (20, "skipped", "table", "", "", 1),
        (21, "fact", "", "-", "| app/server.py | entry |", 1),
        (22, "blank", "", "", "", 1),
        (23, "fact", "", "-", "quoted advice", 3),
        (24, "skipped", "callout", "", "", 1),
        (25, "blank", "", "", "", 1),
        (26, "skipped", "code", "", "", 1),
        (27, "skipped", "code", "", "", 1),
        (28, "skipped", "code", "", "", 1),
    ]
    assert diags == []


@pytest.mark.parametrize(
    "text, expected",
    [
        # a Setext heading: the paragraph line and its underline
        (
            "Title\n=====\nText\n---\n",
            [(1, "skipped", "heading"), (2, "skipped", "heading")] * 1
            + [(3, "skipped", "heading"), (4, "skipped", "heading")],
        ),
        # thematic breaks, empty items and quote lines
        (
            "***\n- \n- [ ]\n>\n",
            [
                (1, "skipped", "empty"),
                (2, "skipped", "empty"),
                (3, "skipped", "empty"),
                (4, "skipped", "empty"),
            ],
        ),
        # a table without a leading pipe: the header is a paragraph, each row a fact
        (
            "a | b\n--- | ---\n1 | 2\n3 | 4\nafter\n",
            [
                (1, "fact", ""),
                (2, "skipped", "table"),
                (3, "fact", ""),
                (4, "fact", ""),
                (5, "continuation", ""),
            ],
        ),
        # '@' and '%' are not special; an indented fence and comment, a link definition
        (
            "@ ctx\n% st\n  ```\n  + code\n  ```\n  <!-- a\n  b -->\n[x]: docs/x.md\n",
            [
                (1, "fact", ""),
                (2, "continuation", ""),
                (3, "skipped", "code"),
                (4, "skipped", "code"),
                (5, "skipped", "code"),
                (6, "skipped", "comment"),
                (7, "skipped", "comment"),
                (8, "skipped", "link-definition"),
            ],
        ),
        # front matter never closed is a thematic break, and the lines after it are read
        ("---\nnot: closed\n", [(1, "skipped", "empty"), (2, "fact", "")]),
        # '---' after line 1 is no front matter
        (
            "text\n\n---\na: b\n---\n",
            [
                (1, "fact", ""),
                (2, "blank", ""),
                (3, "skipped", "empty"),
                (4, "skipped", "heading"),
                (5, "skipped", "heading"),
            ],
        ),
    ],
)
def test_markdown_line_classes(text, expected):
    out, _ = lines_of(text)
    assert [(n, c, r) for n, c, r, *_ in out] == expected
    assert [(n, c, r) for n, c, r, *_ in lines_of(text, LARK)[0]] == expected


def test_a_brain_marker_after_the_list_marker_sets_the_kind():
    out, _ = lines_of("- ! flaky upload\n- ~ pool of 8\n* !P3 login\n- x\n- + env\n\n! no list\n")
    assert [(n, m, t) for n, c, _, m, t, _ in out if c == "fact"] == [
        (1, "!", " flaky upload"),
        (2, "~", " pool of 8"),
        (3, "!", "P3 login"),
        (4, "-", "x"),  # a marker with no text after it is the item's text
        (5, "+", " env"),
        (7, "-", "! no list"),  # a paragraph: no list marker, so no brain marker
    ]


def test_a_merge_conflict_in_markdown_notes():
    out, diags = lines_of("- before\n<<<<<<< HEAD\n- ours\n=======\n- theirs\n>>>>>>> b\n")
    assert [(n, c, r) for n, c, r, *_ in out] == [
        (1, "fact", ""),
        (2, "skipped", "conflict"),
        (3, "fact", ""),
        (4, "skipped", "conflict"),
        (5, "fact", ""),
        (6, "skipped", "conflict"),
    ]
    assert [(d.line, d.code, d.message) for d in diags] == [
        (2, "BM311", "unresolved merge conflict (lines 2-6); resolve it")
    ]


def test_an_unclosed_fence_warns_as_in_brain_notation():
    out, diags = lines_of("- a\n  ```\n  b\n")
    assert [(n, c, r) for n, c, r, *_ in out] == [
        (1, "fact", ""),
        (2, "skipped", "code"),
        (3, "skipped", "code"),
    ]
    assert [(d.line, d.code) for d in diags] == [(2, "BM303")]


def test_an_unclosed_comment_is_its_line_alone_and_the_rest_is_read():
    out, diags = lines_of("- a\n<!-- never closed\n- b\n  <!-- again\n")
    assert [(n, c, r) for n, c, r, *_ in out] == [
        (1, "fact", ""),
        (2, "skipped", "comment"),
        (3, "fact", ""),
        (4, "skipped", "comment"),
    ]
    assert [(d.line, d.code) for d in diags] == [(2, "BM304"), (4, "BM304")]


def test_a_utf16_claude_md_is_read_as_markdown_notes():
    data = codecs.BOM_UTF16_LE + "---\nx: 1\n---\n- pool of 8\r\n".encode("utf-16-le")
    diags: list = []
    out = [
        (ln.number, ln.cls, ln.reason, ln.marker, ln.text)
        for ln in markdown_notes.scan_file(io.BytesIO(data), "CLAUDE.md", diags)
    ]
    assert out == [
        (1, "skipped", "front-matter", "", ""),
        (2, "skipped", "front-matter", "", ""),
        (3, "skipped", "front-matter", "", ""),
        (4, "fact", "", "-", "pool of 8"),
    ]
    assert [d.code for d in diags] == ["BM310"]


PIECES = [
    "- ",
    "* ",
    "+ ",
    "1. ",
    "[ ] ",
    "[x] ",
    "! ",
    "~ ",
    "x ",
    "> ",
    "| ",
    "|---|",
    "---",
    "===",
    "# ",
    "```",
    "<!--",
    "-->",
    "<<<<<<<",
    "=======",
    ">>>>>>>",
    "|||||||",
    "[a]: b",
    "  ",
    "\t",
    "text",
    "`p/q.md`",
    "\n",
    "\n",
    "\n",
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=40).map("".join))
def test_markdown_notes_read_the_same_with_either_classifier(text):
    fast, fast_diags = lines_of(text, FAST)
    lark, lark_diags = lines_of(text, LARK)
    assert fast == lark
    assert fast_diags == lark_diags
    assert len(fast) == text.count("\n") + (not text.endswith("\n") and text != "")


@pytest.mark.parametrize(
    "path, markdown",
    [
        ("CLAUDE.md", True),
        ("./apps/web/CLAUDE.md", True),
        ("/abs/repo/AGENTS.md", True),
        ("GEMINI.md", True),
        ("memory/MEMORY.md", True),
        (".cursorrules", True),
        ("x/.windsurfrules", True),
        (".cursor/rules/models.mdc", True),
        ("pkg/.cursor/rules/models.mdc", True),
        (".cursor/rules/sub/models.mdc", False),
        (".clinerules/style.md", True),
        ("a/.clinerules/b/c.md", True),
        (".github/copilot-instructions.md", True),
        ("repo/.github/instructions/py.md", True),
        (".github/instructions/deep/py.md", False),
        ("claude.md", False),
        ("brain/facts/docker.md", False),
        ("CLAUDE.mdx", False),
    ],
)
def test_the_default_markdown_globs(path, markdown):
    assert MarkdownGlobs()(path) is markdown


def test_markdown_globs_given():
    globs = MarkdownGlobs(["notes/*.md", "**/rules/**", "x?.md", "[ab].md"])
    assert [
        globs(p) for p in ("notes/a.md", "notes/d/c.md", "rules/a/b.md", "xy.md", "b.md", "c.md")
    ] == [True, False, True, True, True, False]
    assert MarkdownGlobs([])("CLAUDE.md") is False


# ------------------------------------------------------------------ import, check, report


def write(base: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (base / rel).parent.mkdir(parents=True, exist_ok=True)
        (base / rel).write_text(text, encoding="utf-8")


MDC = """\
---
description: models
globs: app/**
alwaysApply: false
---
- Models live in `app/Account.php`
- ! never edit `app/Gone.php`
"""


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    write(
        tmp_path,
        {
            "CLAUDE.md": CLAUDE,
            ".cursor/rules/models.mdc": MDC,
            "notes/brain.md": "+ the server is app/server.py\n- plain bullet prose\n",
            "app/server.py": "x = 1\n",
            "app/upload.py": "y = 2\n",
            "app/Account.php": "<?php\n",
        },
    )
    monkeypatch.chdir(tmp_path)
    return tmp_path


def invoke(*args: str):
    return CliRunner().invoke(main, list(args))


def assert_invariants(report: dict) -> None:
    """SPEC.md §Report: per file and in total lines == fact_lines + continuations + blank +
    skipped, skipped_by_reason sums to skipped, by_marker and by_kind sum to facts."""
    keys = ("fact_lines", "continuations", "blank", "skipped")
    for entry in [*report["files"], report["totals"]]:
        assert entry["lines"] == sum(entry[k] for k in keys), entry
        assert sum(entry["skipped_by_reason"].values()) == entry["skipped"], entry
    totals = report["totals"]
    assert sum(totals["by_marker"].values()) == totals["facts"]
    assert sum(totals["by_kind"].values()) == totals["facts"]
    for key in ("lines", *keys):
        assert totals[key] == sum(f[key] for f in report["files"])


def import_json(*args: str) -> dict:
    result = invoke("import", *args, "--dry-run", "--format", "json", "--isolated")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert_invariants(report)
    return report


def test_import_dot_reads_cursor_rules_and_says_which_notation(project):
    report = import_json(".")
    assert [(f["path"], f["notation"]) for f in report["files"]] == [
        (".cursor/rules/models.mdc", "markdown"),
        ("CLAUDE.md", "markdown"),
        ("notes/brain.md", "brain"),
    ]
    mdc = report["files"][0]
    assert {k: v for k, v in mdc["skipped_by_reason"].items() if v} == {"front-matter": 5}
    assert (mdc["lines"], mdc["fact_lines"], mdc["continuations"], mdc["blank"]) == (7, 2, 0, 0)
    claude = report["files"][1]
    assert {k: v for k, v in claude["skipped_by_reason"].items() if v} == {
        "front-matter": 3,
        "heading": 2,
        "table": 1,
        "callout": 1,
        "code": 3,
    }
    assert (claude["fact_lines"], claude["continuations"], claude["blank"]) == (10, 3, 5)
    facts = [
        (f["origin"]["file"], f["origin"]["line"], f["marker"], f["kind"], f["text"])
        for f in report["facts"]
    ]
    assert facts == [
        (".cursor/rules/models.mdc", 6, "-", "other", "Models live in `app/Account.php`"),
        (".cursor/rules/models.mdc", 7, "!", "blocker", "never edit `app/Gone.php`"),
        (
            "CLAUDE.md",
            6,
            "-",
            "other",
            "The service runs on `app/server.py`. It wraps to a second line.",
        ),
        ("CLAUDE.md", 10, "!", "blocker", "flaky upload in `app/upload.py`"),
        ("CLAUDE.md", 11, "~", "decision", "decide the pool size indented continuation"),
        ("CLAUDE.md", 13, "-", "other", "nested item nested continuation"),
        ("CLAUDE.md", 15, "-", "other", "first step"),
        ("CLAUDE.md", 16, "-", "other", "plus item, no marker"),
        ("CLAUDE.md", 17, "-", "other", "done is text"),
        ("CLAUDE.md", 19, "-", "other", "| file | what |"),
        ("CLAUDE.md", 21, "-", "other", "| app/server.py | entry |"),
        ("CLAUDE.md", 23, "-", "other", "quoted advice"),
        ("notes/brain.md", 1, "+", "environment", "the server is app/server.py"),
    ]
    assert report["totals"]["by_marker"] == {
        "+": 1,
        "!": 2,
        "~": 1,
        "=": 0,
        "?": 0,
        ">": 0,
        "->": 0,
        "x": 0,
        "-": 9,
    }
    anchored = {(f["origin"]["line"], a["path"]) for f in report["facts"] for a in f["anchors"]}
    assert (6, "app/Account.php") in anchored
    assert (10, "app/upload.py") in anchored


def test_check_dot_reads_cursor_rules(project):
    result = invoke("check", ".", "--isolated")
    assert result.exit_code == 1
    assert result.output.splitlines()[0] == (
        ".cursor/rules/models.mdc:7:17: BM101 error cites app/Gone.php, which no root holds"
    )


def test_notation_brain_reads_every_file_as_brain_notation(project):
    report = import_json("CLAUDE.md", ".cursor/rules/models.mdc", "--notation", "brain")
    assert [(f["path"], f["notation"]) for f in report["files"]] == [
        ("CLAUDE.md", "brain"),
        (".cursor/rules/models.mdc", "brain"),
    ]
    # in brain notation only the lines a marker starts are facts ("1. first step" is not)
    assert [(f["origin"]["line"], f["marker"]) for f in report["facts"]] == [
        (10, "!"),
        (11, "~"),
        (16, "+"),
        (23, ">"),
        (7, "!"),
    ]
    assert report["files"][0]["skipped_by_reason"]["front-matter"] == 0


def test_notation_markdown_reads_every_file_as_markdown_notes(project):
    report = import_json("notes/brain.md", "--notation", "markdown")
    assert report["files"][0]["notation"] == "markdown"
    assert [(f["marker"], f["kind"], f["text"]) for f in report["facts"]] == [
        ("-", "other", "the server is app/server.py"),  # "+" is a list item
        ("-", "other", "plain bullet prose"),
    ]


def test_config_markdown_globs_choose_the_files(project):
    (project / ".brainmigrate.toml").write_text('markdown = ["notes/*.md"]\n')
    result = invoke("import", ".", "--dry-run", "--format", "json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert_invariants(report)
    assert [(f["path"], f["notation"]) for f in report["files"]] == [
        (".cursor/rules/models.mdc", "brain"),
        ("CLAUDE.md", "brain"),
        ("notes/brain.md", "markdown"),
    ]
    (project / ".brainmigrate.toml").write_text("markdown = []\n")
    report = json.loads(invoke("import", ".", "--dry-run", "--format", "json").output)
    assert {f["notation"] for f in report["files"]} == {"brain"}
    (project / ".brainmigrate.toml").write_text('markdown = "CLAUDE.md"\n')
    result = invoke("import", ".", "--dry-run")
    assert result.exit_code == 2
    assert "key 'markdown' is 'CLAUDE.md'; give a list of non-blank strings" in result.output


def test_a_package_claude_md_at_any_depth(project):
    write(project, {"apps/web/CLAUDE.md": "- uses `app/server.py`\n"})
    report = import_json("apps")
    assert [(f["path"], f["notation"]) for f in report["files"]] == [
        ("apps/web/CLAUDE.md", "markdown")
    ]


# ------------------------------------------------------------------ link definitions


def test_definitions_first_wins_and_code_holds_none(tmp_path):
    notes = tmp_path / "n.md"
    notes.write_text(
        "+ see [the ADR][ADR 4] and [runbook]\n"
        "```\n[code]: not/a/definition.md\n```\n"
        "[adr  4]: docs/adr/0004-cache.md\n"
        "[ADR 4]: docs/second.md\n"
        '[Runbook]: <docs/run book.md> "how to"\n'
    )
    assert references.of_file(notes, "n.md", lines.scan) == {
        "adr 4": "docs/adr/0004-cache.md",
        "runbook": "docs/run book.md",
    }
    plain = tmp_path / "plain.md"
    plain.write_text("+ no definition [here]\n")
    assert references.may_define(plain) is False
    assert references.of_file(plain, "plain.md", lines.scan) == {}
    assert references.may_define(notes) is True


def test_a_definition_split_across_read_chunks_is_found(tmp_path, monkeypatch):
    monkeypatch.setattr(references, "CHUNK", 3)
    notes = tmp_path / "n.md"
    notes.write_bytes(b"+ a\n[x]: y.md\n")  # "]" and ":" in two chunks
    assert references.may_define(notes) is True


def test_each_fact_is_resolved_with_the_whole_files_definitions(tmp_path, monkeypatch):
    seen = []
    original = anchors.Resolver.scan

    def spy(self, fact, diags=None, folder=None, references=None):
        seen.append((fact.file, fact.line, dict(references or {})))
        return original(self, fact, diags, folder, references=references)

    monkeypatch.setattr(anchors.Resolver, "scan", spy)
    write(
        tmp_path,
        {
            "CLAUDE.md": "- see [the ADR][adr]\n\n[adr]: docs/adr.md\n",
            "notes/b.md": "+ nothing defined here [adr]\n",
        },
    )
    monkeypatch.chdir(tmp_path)
    importer.read_notes(["CLAUDE.md", "notes/b.md"], ImportOptions())
    assert seen == [("CLAUDE.md", 1, {"adr": "docs/adr.md"}), ("notes/b.md", 1, {})]


def test_the_report_entry_of_a_file_names_its_notation(tmp_path, monkeypatch):
    write(tmp_path, {"AGENTS.md": "Run `make test` before a commit.\n"})
    monkeypatch.chdir(tmp_path)
    result = importer.import_notes(
        ["AGENTS.md"], ImportOptions(), store=tmp_path / "k.db", dry_run=True
    )
    entry = reports.report(result)["files"][0]
    assert (entry["path"], entry["scope"], entry["notation"]) == (
        "AGENTS.md",
        "area:agents",
        "markdown",
    )


def test_notes_from_standard_input_named_claude_md_are_markdown_notes(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(
        main,
        ["import", "-", "--stdin-filename", "CLAUDE.md", "--dry-run", "--format", "json"],
        input="- run the tests\n",
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert [(f["path"], f["notation"]) for f in report["files"]] == [("CLAUDE.md", "markdown")]
    assert [(f["marker"], f["text"]) for f in report["facts"]] == [("-", "run the tests")]


def test_check_fix_rewrites_a_moved_path_in_markdown_notes(tmp_path, monkeypatch):
    write(
        tmp_path,
        {
            "app/new/x.py": "x = 1\n",
            "CLAUDE.md": "---\nd: 1\n---\n- run `app/old/x.py` first\n  then [x](app/old/x.py)\n",
        },
    )
    monkeypatch.chdir(tmp_path)
    result = invoke("check", "CLAUDE.md", "--fix", "--unsafe-fixes", "--isolated")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "CLAUDE.md").read_text() == (
        "---\nd: 1\n---\n- run `app/new/x.py` first\n  then [x](app/new/x.py)\n"
    )


def test_markdown_facts_are_stored_and_exported_as_brain_notation(tmp_path, monkeypatch):
    from brainmigrate import exports, stores

    write(tmp_path, {"CLAUDE.md": "# Rules\n- run the tests\n- ! flaky upload\n"})
    monkeypatch.chdir(tmp_path)
    store = tmp_path / "know.db"
    importer.import_notes(["CLAUDE.md"], ImportOptions(), store)
    facts = sorted(stores.load(store).facts.values(), key=lambda r: r.id)
    assert [(r.marker, r.kind, r.text) for r in facts] == [
        ("-", "other", "run the tests"),
        ("!", "blocker", "flaky upload"),
    ]
    exports.export(store, "brain", tmp_path / "brain")
    # brain notation has no "-" marker: a fact of kind other is written with "?"
    assert (tmp_path / "brain" / "claude.md").read_text().splitlines()[-2:] == [
        "? run the tests",
        "! flaky upload",
    ]


def test_an_unknown_notation_is_an_input_error(tmp_path):
    (tmp_path / "n.md").write_text("+ a\n")
    with pytest.raises(InputError, match="^--notation rst: must be one of brain, markdown$"):
        importer.read_notes([tmp_path / "n.md"], ImportOptions(notation="rst"))


@pytest.mark.parametrize("glob", ["[z-a].md", "[!].md"])
def test_a_markdown_glob_that_is_no_glob_is_one_line_exit_2(tmp_path, monkeypatch, glob):
    """A bad ``markdown`` glob in the configuration is a usage error naming it, never an
    internal error."""
    from brainmigrate.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text(f'[tool.brainmigrate]\nmarkdown = ["{glob}"]\n')
    (tmp_path / "n.md").write_text("+ x\n")
    done = CliRunner().invoke(main, ["check", "n.md"])
    assert done.exit_code == 2
    assert f"brainmigrate: error: markdown: {glob!r} is no glob (" in done.output
