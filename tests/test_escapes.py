"""Text from input in every output (brainmigrate.escapes): a notes file whose name holds a
line break, a carriage return, a tab, an escape sequence, ``|``, ``<img src=x>``, an
@mention, ``# heading``, backticks, ``%0A`` and a byte that is not UTF-8, citing a file git
renamed, run through each output; and option values with line breaks in one-line errors.

Exact output for the line formats, structure (lines, headings, cells, what a patch changes)
for the rest.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from clirun import cli
from trees import git, renamed

from brainmigrate import escapes

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

#: The hostile notes file's name as bytes (a Linux file name may hold any byte but ``/``).
NAME = b"h\n# heading |<img src=x> @user `tick` %0A\r\t\x1b[31m\xff.md"
#: How one-line outputs show it: each control character, line break, tab and bad byte as
#: U+FFFD.
SHOWN = "notes/h\ufffd# heading |<img src=x> @user `tick` %0A\ufffd\ufffd\ufffd[31m\ufffd.md"
FACT = b"+ see src/old.py and @user <img src=x> | cell # h\n"
#: --fix rewrites it (a git rename): marked fixable, [*] (issue 29)
GONE = f"{SHOWN}:1:7: BM101 [*] error cites src/old.py, which no root holds; moved? src/new.py"
GONE += " (renamed in git history)"
HTML_GONE = f"{SHOWN}:1:37: BM101 error cites x, which no root holds"


@pytest.fixture
def project(tmp_path: Path, monkeypatch) -> Path:
    """``tmp_path`` (the cwd) with ``repo`` (``src/old.py`` renamed to ``src/new.py`` in
    git) and ``notes/`` holding one file named ``NAME`` that cites ``src/old.py``."""
    renamed(tmp_path / "repo", "def a():\n    return 1\n")
    (tmp_path / "notes").mkdir()
    with open(os.fsencode(tmp_path / "notes") + b"/" + NAME, "wb") as f:
        f.write(FACT)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def store(project: Path) -> Path:
    r = cli("import", "notes", "--root", "repo", "--store", "k.db", "--isolated")
    assert r.exit_code == 0, r.output
    return project / "k.db"


# ------------------------------------------------------------------------------ the functions


def test_terminal_keeps_lines_and_hides_controls():
    assert escapes.terminal("a\tb\nc\x1b[31m\x07\x9b") == "a\tb\nc\ufffd[31m\ufffd\ufffd"
    assert escapes.terminal(5) == "5"


def test_one_line_hides_line_breaks_tabs_and_overrides():
    assert (
        escapes.one_line("a\nb\rc\td\u2028e\u202ef\x1b")
        == "a\ufffdb\ufffdc\ufffdd\ufffde\ufffdf\ufffd"
    )
    assert escapes.one_line(None) is None and escapes.one_line(3) == 3


@pytest.mark.parametrize(
    ("name", "quoted"),
    [
        (b"notes/plain.md", b"a/notes/plain.md"),
        (b"notes/my notes.md", b"a/notes/my notes.md"),
        (b"x\n+++ b/evil\n@@ -1 +1 @@", b'"a/x\\n+++ b/evil\\n@@ -1 +1 @@"'),
        (b'q"\\\t\r\x1b\x7f', b'"a/q\\"\\\\\\t\\r\\033\\177"'),
        ("é".encode() + b"\xff", b'"a/\\303\\251\\377"'),
        (b"\x07\x08\x0b\x0c", b'"a/\\a\\b\\v\\f"'),
    ],
)
def test_diff_names_are_quoted_as_git_quotes_them(name, quoted, tmp_path):
    assert escapes.diff_name(b"a/", name) == quoted
    if b"/" in name or b"\x00" in name:
        return
    # git itself writes the same header for a file of that name
    (tmp_path / os.fsdecode(name)).write_bytes(b"one\n")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "one")
    (tmp_path / os.fsdecode(name)).write_bytes(b"two\n")
    out = subprocess.run(
        ["git", "-c", "core.quotePath=true", "diff"], cwd=tmp_path, capture_output=True, check=True
    ).stdout
    header = [line for line in out.split(b"\n") if line.startswith(b"--- ")]
    assert header == [b"--- " + quoted + (b"\t" if b" " in quoted else b"")]


def test_markdown_opens_nothing():
    hostile = "a\n# h |<img src=x> @user `x` &amp; [l](u) ![i](u) ~s~ _e_ \\ @ x@y.org \x1b\u202e"
    assert escapes.markdown(hostile) == (
        "a \\# h \\|&lt;img src=x&gt; @\u200buser \\`x\\` &amp;amp; \\[l\\](u) \\!\\[i\\](u)"
        " \\~s\\~ \\_e\\_ \\\\ @ x@y.org \ufffd\ufffd"
    )
    assert escapes.markdown(None) == "" and escapes.markdown("  a \r\n\t b ") == "a b"


def test_github_escapes_data_and_properties():
    assert escapes.github_data("100% a\r\nb %0A\x1b") == "100%25 a%0D%0Ab %250A\ufffd"
    assert escapes.github_property("a:b,c\n") == "a%3Ab%2Cc%0A"


# ------------------------------------------------------------------------------ --diff


def test_a_name_with_line_breaks_forges_no_hunk(tmp_path, monkeypatch):
    """The issue's trial: a notes folder named ``a\\n+++ b`` holding ``evil.md``: the raw
    header read ``+++ b/evil.md`` and ``patch -p1`` patched ``evil.md``, another file."""
    renamed(tmp_path / "repo", "def a():\n    return 1\n")
    notes = tmp_path / "notes" / "a\n+++ b"
    notes.mkdir(parents=True)
    (notes / "evil.md").write_bytes(b"+ see src/old.py for it\n")
    monkeypatch.chdir(tmp_path)
    r = cli("check", "notes", "--root", "repo", "--diff", "--isolated")
    assert r.exit_code == 1, r.stderr
    assert r.stdout_bytes == (
        b'--- "a/notes/a\\n+++ b/evil.md"\t\n'
        b'+++ "b/notes/a\\n+++ b/evil.md"\t\n'
        b"@@ -1 +1 @@\n"
        b"-+ see src/old.py for it\n"
        b"++ see src/new.py for it\n"
    )
    decoy = b"+ see src/old.py for it\n"
    for tool in (["git", "apply"], ["patch", "-p1", "--batch"]):
        if shutil.which(tool[0]) is None:
            continue
        copy = tmp_path / f"copy-{tool[0]}"
        shutil.copytree(tmp_path / "notes", copy / "notes")
        (copy / "evil.md").write_bytes(decoy)  # what the forged header named
        (copy / "b").mkdir()
        (copy / "b" / "evil.md").write_bytes(decoy)
        done = subprocess.run(tool, cwd=copy, input=r.stdout_bytes, capture_output=True)
        assert done.returncode == 0, done.stdout + done.stderr
        assert (copy / "notes" / "a\n+++ b" / "evil.md").read_bytes() == (
            b"+ see src/new.py for it\n"
        )
        assert (copy / "evil.md").read_bytes() == decoy
        assert (copy / "b" / "evil.md").read_bytes() == decoy


def test_the_hostile_name_is_quoted_in_the_diff_and_git_applies_it(project):
    r = cli("check", "notes", "--root", "repo", "--diff", "--isolated")
    assert r.exit_code == 1
    quoted = b'notes/h\\n# heading |<img src=x> @user `tick` %0A\\r\\t\\033[31m\\377.md"\t\n'
    assert r.stdout_bytes.startswith(b'--- "a/' + quoted + b'+++ "b/' + quoted + b"@@ -1 +1 @@\n")
    assert r.stderr.splitlines()[0] == (
        f"{SHOWN}:1:7: src/old.py -> src/new.py (renamed in git history)"
    )
    numstat = subprocess.run(
        ["git", "apply", "--numstat", "-z", "-"],
        cwd=project,
        input=r.stdout_bytes,
        capture_output=True,
        check=True,
    ).stdout
    assert numstat == b"1\t1\tnotes/" + NAME + b"\x00"


# ------------------------------------------------------------------------------ check


def test_check_text_is_one_line_per_finding(project):
    r = cli("check", "notes", "--root", "repo", "--isolated")
    assert r.exit_code == 1
    assert r.stdout.splitlines() == [
        GONE,
        HTML_GONE,
        "FAILED: 1 file, 1 fact line: 2 findings (2 error, 0 warning, 0 info); 2 failing at"
        " --fail-on error; 0 suppressed; 0 in the baseline",
    ]


def test_check_markdown_has_one_heading_and_whole_rows(project):
    r = cli("check", "notes", "--root", "repo", "--isolated", "--format", "markdown")
    lines = r.stdout.splitlines()
    assert [x for x in lines if x.startswith("#")] == ["## brainmigrate check: 2 failing"]
    rows = [x for x in lines if x.startswith("| notes/")]
    assert len(rows) == 2 and len(lines) == 8
    cell = (
        "notes/h \\# heading \\|&lt;img src=x&gt; @\u200buser \\`tick\\` %0A \ufffd\\[31m"
        "\ufffd.md:1:7"
    )
    assert rows[0].startswith(f"| {cell} | BM101 | error (fails) | ")
    assert all(len(re.findall(r"(?<!\\)\|", row)) == 5 for row in rows)
    assert "<img" not in r.stdout and "@user" not in r.stdout


def test_check_github_keeps_every_name_inside_its_command(project):
    r = cli("check", "notes", "--root", "repo", "--isolated", "--format", "github")
    lines = r.stdout.splitlines()
    prop = "notes/h%0A# heading |<img src=x> @user `tick` %250A%0D\t\ufffd[31m\ufffd.md"
    assert lines[0] == (
        f"::error file={prop},line=1,col=7,title=BM101 gone-path::cites src/old.py, which no"
        " root holds; moved? src/new.py (renamed in git history)"
    )
    assert len(lines) == 5 and lines[2].startswith("::stop-commands::")


#: The name as JSON holds it: every character but the byte that is not UTF-8, escaped.
REAL = "notes/h\n# heading |<img src=x> @user `tick` %0A\r\t\x1b[31m\ufffd.md"


@pytest.mark.parametrize(
    ("fmt", "where"),
    [
        ("json", lambda d: d["findings"][0]["file"]),
        ("gitlab", lambda d: d[0]["location"]["path"]),
        (
            "sarif",
            lambda d: d["runs"][0]["results"][0]["locations"][0]["physicalLocation"][
                "artifactLocation"
            ]["uri"],
        ),
    ],
)
def test_check_json_formats_hold_the_name_escaped(project, fmt, where):
    from urllib.parse import quote

    r = cli("check", "notes", "--root", "repo", "--isolated", "--format", fmt)
    assert not re.search(r"[\x00-\x09\x0b-\x1f\x7f]", r.stdout)  # newlines only between
    got = where(json.loads(r.stdout))
    assert got == (quote(REAL, safe="/") if fmt == "sarif" else REAL)


def test_check_junit_parses_and_holds_no_raw_control(project):
    r = cli("check", "notes", "--root", "repo", "--isolated", "--format", "junit")
    top = ET.fromstring(r.stdout)
    suite = top.find("testsuite")
    assert suite is not None and suite.get("name", "").startswith("notes/h")
    assert not re.search(r"[\x00-\x08\x0b\x0c\x0e-\x1f]", r.stdout)


def test_verbose_lines_and_errors_stay_one_line(project):
    (project / "r\nFAKE: line").mkdir()
    r = cli("check", "notes", "--root", "r\nFAKE: line", "--isolated", "-v")
    said = [x for x in r.stderr.splitlines() if x.startswith("brainmigrate: roots:")]
    assert said == ["brainmigrate: roots: r\ufffdFAKE: line"]
    assert not [x for x in r.stderr.splitlines() if x.startswith("FAKE")]


# ------------------------------------------------------------------------------ baseline


def _baseline(project: Path, entry: dict) -> Path:
    path = project / "bl.json"
    base = {"fingerprint": "f" * 16, "code": "BM101", "scope": "", "path": "", "text": ""}
    body = {"schema_version": 1, "tool": "brainmigrate check", "entries": [base | entry]}
    path.write_text(json.dumps(body), encoding="utf-8")
    return path


def test_a_baseline_code_that_is_no_finding_code_is_refused(project):
    code = "BM101\n## Forged <img src=x> @user"
    _baseline(project, {"code": code})
    r = cli("check", "notes", "--root", "repo", "--isolated", "--baseline", "bl.json")
    assert r.exit_code == 2
    assert r.stderr == (
        "brainmigrate: error: --baseline bl.json: entry 1: code is"
        ' "BM101\\n## Forged <img src=x> @user", not a finding code (docs/check.md,'
        ' "Finding codes"); fix it, or remove it and write a new one with --update-baseline\n'
    )


def test_vanished_baseline_entries_are_escaped_in_markdown_and_text(project):
    hostile = "x\n## Forged <img src=x> @user | `a"
    gone = "notes/gone.md"  # a file no run can read again: its entries are every run's
    _baseline(project, {"scope": hostile, "path": hostile, "text": hostile, "file": gone})
    args = ["check", "notes", "--root", "repo", "--isolated", "--baseline", "bl.json"]
    md = cli(*args, "--format", "markdown").stdout
    assert [x for x in md.splitlines() if x.startswith("#")] == ["## brainmigrate check: 2 failing"]
    item = "x \\#\\# Forged &lt;img src=x&gt; @\u200buser \\| \\`a"
    assert md.splitlines()[-1] == f"- BM101 {item} {item}: {item}"
    text = cli(*args).stdout.splitlines()
    shown = "x\ufffd## Forged <img src=x> @user | `a"
    assert text[3] == f"  BM101 {shown} {shown}: {shown}"
    assert len(text) == 5


# ------------------------------------------------------------------------------ import reports


def test_import_text_and_markdown_reports(project):
    r = cli("import", "notes", "--root", "repo", "--store", "k.db", "--isolated", "--dry-run")
    gone = [x for x in r.stdout.splitlines() if x.startswith("  notes/")]
    moved = "moved? src/new.py (renamed in git history)"  # the hint check gives
    assert gone[1:] == [f"  {SHOWN}:1: src/old.py (k1); {moved}", f"  {SHOWN}:1: x (k1)"]
    md = cli(
        *["import", "notes", "--root", "repo", "--store", "k.db", "--isolated"],
        "--dry-run",
        "--format",
        "markdown",
    ).stdout
    headings = [x for x in md.splitlines() if x.startswith("#")]
    assert headings == [
        "# brainmigrate import report",
        "## Files",
        "## Facts citing gone files",
        "## Facts",
    ]
    assert "<img" not in md and "@user" not in md
    rows = [x for x in md.splitlines() if x.startswith("| notes/")]
    assert len(rows) == 3
    assert all(not re.search(r"[\x00-\x1f]", row) for row in rows)


def test_import_html_escapes_the_name(project):
    r = cli(
        *["import", "notes", "--root", "repo", "--store", "k.db", "--isolated"],
        "--dry-run",
        "--format",
        "html",
    )
    assert "<img" not in r.stdout and "&lt;img src=x&gt;" in r.stdout
    assert "\x1b" not in r.stdout


# ------------------------------------------------------------------------------ show, search


def test_show_and_search_forge_no_line(store):
    scope = "area:h\ufffd# heading |<img src=x> @user `tick` %0a\ufffd\ufffd\ufffd[31m\ufffd"
    shown = cli("show", "--store", "k.db", "k1").stdout.splitlines()
    assert shown[0] == f"k1 environment {scope} (active)"
    assert f"origin: {SHOWN}:1" in shown
    assert shown[-1].startswith(f"  {SHOWN}:1 (imported ")
    assert len(shown) == 15
    found = cli("search", "--store", "k.db", "see").stdout.splitlines()
    assert found == [f"k1 environment {scope}  see src/old.py and @user <img src=x> | cell # h"]


# ------------------------------------------------------------------------------ exports


def test_knowledge_export_keeps_the_name_in_its_line(store):
    r = cli("export", "--store", "k.db", "--to", "knowledge", "--output", "out")
    assert r.exit_code == 0, r.stderr
    (entry,) = (store.parent / "out").glob("*-k1.md")
    text = entry.read_text(encoding="utf-8")
    front, body = text.split("\n---\n", 1)
    assert (
        'scope: "area:h\\n# heading |<img src=x> @user `tick` %0a\\u000d\\t\\u001b[31m\ufffd"'
        in (front.splitlines())
    )
    assert [x for x in body.splitlines() if x.startswith("#")] == ["## Provenance"]
    assert body.splitlines()[-1].startswith(f"- {SHOWN}:1 (imported ")


@pytest.mark.parametrize("target", ["memory", "brain"])
def test_memory_and_brain_exports_have_one_heading_a_topic(store, target):
    r = cli("export", "--store", "k.db", "--to", target, "--output", "out")
    assert r.exit_code == 0, r.stderr
    assert all(len(line) and "\n" not in line for line in r.stderr.splitlines())
    for f in (store.parent / "out").glob("*.md"):
        lines = f.read_text(encoding="utf-8").splitlines()
        if f.name == "MEMORY.md":
            assert len(lines) == 1 and lines[0].startswith("- area:h # heading")
            continue
        if target == "memory":  # a scope's ESC recoloured the terminal that showed the file
            assert lines[0].startswith("# area:h # heading") and "\x1b" not in lines[0]
        assert [x for x in lines if x.startswith("#")] == [lines[0]]


def test_export_summary_lines_stay_one_line(store):
    r = cli("export", "--store", "k.db", "--to", "brain", "--output", "out")
    note = [x for x in r.stderr.splitlines() if "cannot be told" in x]
    assert len(note) == 1 and not [x for x in r.stderr.splitlines() if x.startswith("#")]


# ------------------------------------------------------------------------------ one-line errors


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ["check", "no\nsuch"],
            "brainmigrate: error: no\ufffdsuch: no such file or folder; check the path",
        ),
        (
            ["check", "notes", "--format", "json", "--output", "gone\nfolder/r.json"],
            "brainmigrate: error: --output gone\ufffdfolder/r.json: folder gone\ufffdfolder"
            " does not exist; create it or pass --output with another path",
        ),
        (
            ["check", "notes", "--fail-on", "x\ny"],
            "brainmigrate: error: Invalid value for '--fail-on': 'x\\ny' is not one of 'error',"
            " 'warning', 'info'; see 'brainmigrate check --help'",
        ),
        (
            ["import", "notes", "--store", "a\nb/k.db"],
            "brainmigrate: error: a\ufffdb/k.db: folder a\ufffdb does not exist; create it or"
            " pass --store",
        ),
        (
            ["show", "--store", "k.db", "k\n1"],
            "brainmigrate: error: 'k\\n1' is not a fact id; give one like k17 or 17",
        ),
    ],
)
def test_a_line_break_in_an_option_value_splits_no_error(store, args, said):
    r = cli(*args)
    assert (r.exit_code, r.stderr) == (2, said + "\n")


@pytest.mark.parametrize(
    "args",
    [
        ["check", "notes", "--task-pattern", "(\n"],
        ["stale", "--store", "k.db", "--scope", "a\nb"],
        ["export", "--store", "k.db", "--to", "jsonl", "--scope", "a\nb", "--output", "o"],
        ["search", "--store", "k.db", "--scope", "a\nb", "--kind", "x\ny", "see"],
        ["check", "notes", "--select", "BM1\nBM2"],
        ["index", "--root", "no\nsuch"],
    ],
)
def test_every_error_with_a_line_break_in_a_value_is_one_line(store, args):
    r = cli(*args)
    assert r.exit_code == 2, r.output
    assert len(r.stderr.splitlines()) == 1 and r.stderr.startswith("brainmigrate: error: ")


def test_stale_lines_name_the_notes_file_on_one_line(project):
    with open(os.fsencode(project / "notes") + b"/" + NAME, "ab") as f:
        f.write(b"+ the runner is def a in src/new.py\n")
    r = cli("import", "notes", "--root", "repo", "--store", "k.db", "--isolated", "--verify")
    assert r.exit_code == 0, r.output
    (project / "repo" / "src" / "new.py").write_text("def a():\n    return 2\n")
    git(project / "repo", "commit", "-qam", "change")
    r = cli("stale", "--store", "k.db", "--dry-run")
    lines = r.stdout.splitlines()
    assert lines[0].startswith(f"{SHOWN}:2: k2 environment area:h\ufffd# heading ")
    assert [x for x in lines if not x.startswith((SHOWN, "    git -C "))] == [lines[-1]]
    assert lines[-1].startswith("STALE: checked ")


def test_the_step_summary_is_escaped_markdown(project):
    with open(os.fsencode(project / "notes") + b"/" + NAME, "ab") as f:
        f.write(b"".join(b"+ see src/old.py again %d\n" % i for i in range(11)))
    summary = project / "summary.md"
    r = cli(
        *["check", "notes", "--root", "repo", "--isolated", "--format", "github"],
        env={"GITHUB_STEP_SUMMARY": str(summary)},
    )
    assert r.exit_code == 1
    lines = summary.read_text(encoding="utf-8").splitlines()
    assert [x for x in lines if x.startswith("#")] == ["## brainmigrate check: 3 more findings"]
    rows = [x for x in lines if x.startswith("| notes/")]
    assert len(rows) == 3 and all(len(re.findall(r"(?<!\\)\|", row)) == 5 for row in rows)
    assert "<img" not in "".join(lines) and "@user" not in "".join(lines)
