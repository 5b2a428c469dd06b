"""The import and index commands as a user runs them: output, exit codes, messages."""

from __future__ import annotations

import html
import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from clirun import invoker

from brainmigrate import __version__
from brainmigrate.cli import main
from brainmigrate.fsutil import printable
from brainmigrate.read.run import ImportOptions

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
ROOT_ARGS = ["--root", str(SAMPLES / "roots/app"), "--root", str(SAMPLES / "roots/infra")]
INVARIANTS = Path(__file__).resolve().parents[2] / "shared" / "tools" / "report-invariants"
NOTES_FIX = "pass notes files, or folders that hold *.md notes files"


cli = invoker(catch_exceptions=False)


def test_version():
    r = cli("--version")
    assert r.exit_code == 0 and r.output == f"brainmigrate, version {__version__}\n"


def test_dry_run_text_report(tmp_path):
    r = cli("import", SAMPLES / "notes", *ROOT_ARGS, "--dry-run", "--store", tmp_path / "k.db")
    assert r.exit_code == 0
    assert r.output.startswith(
        f"Dry run: nothing written; an import into {tmp_path / 'k.db'} would add 29 and update"
        " 0 facts\n  files 4, lines 57: fact lines 32, continuations 5, blank 7, skipped 13\n"
        "  facts 29 (29 new, 0 updated, 0 unchanged); repeats merged 3; superseded 1\n"
    )
    assert f"{SAMPLES / 'notes' / 'docker.md'}:7: docker/certs/dev.pem (k9)" in r.output
    assert not (tmp_path / "k.db").exists()


def test_json_report_holds_the_invariants(tmp_path):
    out = tmp_path / "r.json"
    r = cli(
        "import",
        SAMPLES / "notes",
        *ROOT_ARGS,
        "--dry-run",
        "--format",
        "json",
        "--output",
        out,
        "--store",
        tmp_path / "k.db",
    )
    assert r.exit_code == 0 and r.output == ""
    data = json.loads(out.read_text())
    assert data["totals"]["facts"] == 29
    if INVARIANTS.exists():
        done = subprocess.run(
            [sys.executable, INVARIANTS, out, "--fresh-store"], capture_output=True, text=True
        )
        assert done.returncode == 0, done.stdout


def test_import_then_again(tmp_path):
    db = tmp_path / "k.db"
    first = cli("import", SAMPLES / "notes", *ROOT_ARGS, "--store", db, "--format", "json")
    second = cli("import", SAMPLES / "notes", *ROOT_ARGS, "--store", db, "--format", "json")
    assert json.loads(first.output)["totals"]["added"] == 29
    assert json.loads(second.output)["totals"]["added"] == 0


def test_reimport_text_report_counts_lines_already_imported(tmp_path):
    """A re-import's text report counts the lines the store already holds instead of
    listing each (issue 14); the JSON report keeps them, and new repeats are listed."""
    db, notes = tmp_path / "k.db", tmp_path / "notes.md"
    notes.write_text("+ webhook retries back off exponentially\n+ the ledger is append only\n")
    cli("import", notes, "--root", tmp_path, "--store", db)
    with notes.open("a") as f:
        f.write("+ webhook retries backs off exponentially\n")
    text = cli("import", notes, "--root", tmp_path, "--store", db, "--dry-run").output
    assert "repeats merged 1, lines already imported 2;" in text
    assert text.endswith(
        f"\nMerged repeats\n  {printable(str(notes))}:3: into k1 (similarity 1.00)\n"
    )
    cli("import", notes, "--root", tmp_path, "--store", db)
    text = cli("import", notes, "--root", tmp_path, "--store", db).output
    assert "repeats merged 0, lines already imported 3;" in text
    assert "Merged repeats" not in text and "already imported)" not in text
    data = json.loads(
        cli("import", notes, "--root", tmp_path, "--store", db, "--format", "json").output
    )
    assert [(m["line"], m["into"], m["known"]) for m in data["merged"]] == [
        (1, "k1", True),
        (2, "k2", True),
        (3, "k1", True),
    ]


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["missing.md"],
            "brainmigrate: error: missing.md: no such file or folder; check the path\n",
        ),
        (
            ["empty"],
            "brainmigrate: error: empty: no *.md notes files in this folder; " + NOTES_FIX + "\n",
        ),
        (
            ["n.md", "--root", "nope"],
            "brainmigrate: error: --root nope: no such folder; pass --root with the folder of a"
            " checkout\n",
        ),
        (
            ["n.md", "--root", "n.md"],
            "brainmigrate: error: --root n.md: is not a folder; pass --root with the folder of a"
            " checkout\n",
        ),
        (
            ["n.md", "--task-pattern", "("],
            "brainmigrate: error: --task-pattern: not a valid regular expression "
            "(missing ), unterminated subpattern at position 0); fix it\n",
        ),
        (
            ["n.md", "--store", "sub/k.db"],
            "brainmigrate: error: sub/k.db: folder sub does not exist; create it or pass --store\n",
        ),
    ],
)
def test_bad_input_exits_2_with_one_line(tmp_path, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty").mkdir()
    (tmp_path / "n.md").write_text("+ fact\n")
    r = CliRunner().invoke(main, ["import", *args])
    assert r.exit_code == 2
    assert r.stderr == message
    assert not (tmp_path / "know.db").exists()


def test_corrupt_store_is_left_untouched(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "n.md").write_text("+ fact\n")
    (tmp_path / "know.db").write_bytes(b"garbage")
    r = CliRunner().invoke(main, ["import", "n.md"])
    assert r.exit_code == 2
    assert "know.db is not a brainmigrate store" in r.stderr
    assert (tmp_path / "know.db").read_bytes() == b"garbage"


def test_unreadable_notes_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d.md").mkdir()
    (tmp_path / "fifo.md").symlink_to("/dev/null")
    r = CliRunner().invoke(main, ["import", "fifo.md", "--dry-run"])
    assert (
        r.exit_code == 2
        and r.stderr
        == f"brainmigrate: error: fifo.md: not a regular file or a folder; {NOTES_FIX}\n"
    )


def test_big_line_and_big_file_import_with_warnings(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "n.md").write_text("+ " + "word " * 250_000 + "TER-9\n")
    r = CliRunner().invoke(main, ["import", "n.md", "--dry-run", "--format", "json"])
    assert r.exit_code == 0
    data = json.loads(r.stdout)
    assert data["facts"][0]["task"] == "TER-9"
    assert data["warnings"][0]["code"] == "BM302"
    assert data["warnings"][0]["message"] == "text cut to 1999 of 1250005 characters"


def test_index_command(tmp_path):
    r = cli(
        "index",
        "--root",
        SAMPLES / "roots/app",
        "--name",
        "PaymentGateway",
        "--format",
        "json",
        "--cache-dir",
        tmp_path,
    )
    assert r.exit_code == 0
    data = json.loads(r.output)
    assert data["by_language"]["kotlin"]["files"] == 6
    name = data["names"]["PaymentGateway"]
    assert name["anchor"] == "unique"
    assert (
        name["declarations"][0]["path"] == "src/main/kotlin/com/example/payments/PaymentGateway.kt"
    )
    warm = json.loads(
        cli(
            "index", "--root", SAMPLES / "roots/app", "--format", "json", "--cache-dir", tmp_path
        ).output
    )
    assert (warm["parsed"], warm["cache_hits"]) == (0, 6)


@pytest.mark.parametrize(
    ("given", "what"), [("nope", "no such folder"), ("f.md", "is not a folder")]
)
def test_index_of_a_root_that_is_no_folder(tmp_path, monkeypatch, given, what):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "f.md").write_text("+ a fact\n")
    r = CliRunner().invoke(main, ["index", "--root", given])
    assert (r.exit_code, r.stdout) == (2, "")
    assert r.stderr == (
        f"brainmigrate: error: --root {given}: {what}; pass --root with the folder of a checkout\n"
    )


def test_module_entry_point():
    done = subprocess.run(
        [sys.executable, "-m", "brainmigrate", "--version"], capture_output=True, text=True
    )
    assert done.stdout == f"brainmigrate, version {__version__}\n"


@pytest.mark.parametrize("fmt", ["text", "json", "markdown", "html"])
def test_every_import_format_renders(fmt, tmp_path):
    from brainmigrate.reports import FORMATS

    assert fmt in FORMATS
    r = cli(
        "import",
        SAMPLES / "notes",
        *ROOT_ARGS,
        "--dry-run",
        "--format",
        fmt,
        "--store",
        tmp_path / "k.db",
    )
    assert r.exit_code == 0
    # the HTML page writes a path as one span per folder, a <wbr> after each "/"
    assert "docker/certs/dev.pem" in re.sub(r"</?span>|<wbr>", "", r.output)
    # streamed from the run's temporary files, the output is the report rendered whole
    from brainmigrate import importer, reports

    options = ImportOptions(roots=[SAMPLES / "roots/app", SAMPLES / "roots/infra"])
    result = importer.import_notes([SAMPLES / "notes"], options, tmp_path / "k.db", dry_run=True)
    whole = reports.report(result)
    if fmt == "json":  # one fact or entry a line: the same JSON, laid out otherwise
        assert json.loads(r.output) == whole
        return
    hints = reports.gone_hints(result)
    page = None
    if fmt == "html":  # the page's header names the run: its time and command line
        from brainmigrate.reports.page import page as page_of

        said = re.search(r'<time datetime="([^"]+)">.*?<code>(.*?)</code>', r.output, re.S)
        page = {**page_of(result, None), "time": said[1], "command": html.unescape(said[2])}
    assert r.output == "".join(reports.render_chunks(whole, fmt, hints, page))


def test_formats_list_is_exhaustive():
    from brainmigrate.reports import FORMATS

    templates = Path(__file__).resolve().parent.parent / "brainmigrate/reports/templates"
    rendered = {p.stem for p in templates.glob("*.j2")} | {"json"}
    assert set(FORMATS) <= rendered


@pytest.mark.parametrize(
    "args, message",
    [
        (  # (import without PATHS reads the current folder's notes: issue 29)
            ["show"],
            "brainmigrate: error: Missing argument 'FACT_ID'; see 'brainmigrate show --help'\n",
        ),
        (
            ["import", "x.md", "--zzzz"],
            "brainmigrate: error: No such option '--zzzz'; see 'brainmigrate import --help'\n",
        ),
        (["nosuch"], "brainmigrate: error: No such command 'nosuch'; see 'brainmigrate --help'\n"),
    ],
)
def test_usage_errors_are_one_line(args, message):
    r = CliRunner().invoke(main, args)
    assert (r.exit_code, r.stderr, r.stdout) == (2, message, "")


def test_a_notes_file_name_that_is_not_utf8(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes").mkdir()
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.txt").write_text("x")
    with open(b"notes/caf\xe9.md", "wb") as f:
        f.write(b"+ cites src/a.txt and src/x.kt\n")
    r = CliRunner().invoke(main, ["import", "notes", "--format", "json"])
    assert r.exit_code == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["files"][0]["path"] == "notes/caf\ufffd.md"
    assert data["facts"][0]["scope"] == "area:caf\ufffd"
    assert data["gone"][0]["file"] == "notes/caf\ufffd.md"
    again = CliRunner().invoke(main, ["import", "notes", "--format", "json"])
    assert json.loads(again.stdout)["totals"]["added"] == 0


def test_odd_entries_of_a_notes_folder_are_skipped_and_reported(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.md").write_text("+ a fact\n")
    os.mkfifo(tmp_path / "notes" / "fifo.md")
    (tmp_path / "notes" / "zero.md").symlink_to("/dev/zero")
    (tmp_path / "notes" / "dangling.md").symlink_to(tmp_path / "nope")
    r = CliRunner().invoke(main, ["import", "notes", "--dry-run", "--format", "json"])
    assert r.exit_code == 0, r.stderr
    data = json.loads(r.stdout)
    assert [f["path"] for f in data["files"]] == ["notes/a.md"]
    assert [(w["file"], w["code"]) for w in data["warnings"]] == [
        ("notes/dangling.md", "BM307"),
        ("notes/fifo.md", "BM307"),
        ("notes/zero.md", "BM307"),
    ]
    text = CliRunner().invoke(main, ["import", "notes", "--store", "k.db"])
    assert text.exit_code == 0, text.stderr
    assert "  notes/fifo.md: BM307 not a regular file; skipped\n" in text.stdout
    (tmp_path / "notes" / "a.md").unlink()
    r = CliRunner().invoke(main, ["import", "notes", "--dry-run"])
    assert (r.exit_code, r.stderr) == (
        2,
        "brainmigrate: error: notes: no readable *.md notes files in this folder "
        f"(dangling.md is not a regular file); {NOTES_FIX}\n",
    )


def test_text_outputs_never_print_control_characters(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "n\x1b[2J.md").write_text("+ bad \x01\x1b[31m red app/Gone\x1b.kt TER-1\n")
    for args in (
        ["import", "n\x1b[2J.md", "--store", "k.db"],
        ["check", "n\x1b[2J.md"],
        ["search", "red", "--store", "k.db"],
        ["show", "k1", "--store", "k.db"],
    ):
        r = CliRunner().invoke(main, args)
        assert r.exit_code in (0, 1), (args, r.stderr)
        assert "\x1b" not in r.stdout and "\x01" not in r.stdout, args
        assert "\ufffd" in r.stdout, args


def test_streamed_json_report_equals_the_report_dict(tmp_path):
    from brainmigrate import importer, reports

    options = ImportOptions(roots=[SAMPLES / "roots/app", SAMPLES / "roots/infra"])
    result = importer.import_notes([SAMPLES / "notes"], options, tmp_path / "k.db", dry_run=True)
    text = "".join(reports.json_chunks(result))
    assert json.loads(text) == reports.report(result)
    assert text.count('\n    {"id": "k') == 29  # one fact per line
    empty = tmp_path / "e.md"
    empty.write_text("# nothing\n")
    none = importer.import_notes([empty], options, tmp_path / "k.db", dry_run=True)
    assert json.loads("".join(reports.json_chunks(none))) == reports.report(none)


def test_failed_output_leaves_no_file(tmp_path, monkeypatch):
    from brainmigrate import reports

    def boom(result):
        yield "{"
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(reports, "json_chunks", boom)
    out = tmp_path / "r.json"
    out.write_text("old")
    r = CliRunner().invoke(
        main,
        [
            "import",
            str(SAMPLES / "notes"),
            *ROOT_ARGS,
            "--dry-run",
            "--format",
            "json",
            "--output",
            str(out),
            "--store",
            str(tmp_path / "k.db"),
        ],
    )
    assert r.exit_code == 2
    assert out.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]


def test_json_outputs_escape_every_control_character(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "n\x7f.md").write_text("+ odd \x7f and \x9b and \x1b[31m in app/G\x9bone.kt\n")
    for args in (
        ["import", "n\x7f.md", "--store", "k.db", "--format", "json"],
        ["check", "n\x7f.md", "--format", "json"],
        ["check", "n\x7f.md", "--format", "sarif"],
        ["search", "odd", "--store", "k.db", "--format", "json"],
        ["show", "k1", "--store", "k.db", "--format", "json"],
    ):
        r = CliRunner().invoke(main, args)
        assert r.exit_code in (0, 1), (args, r.stderr)
        assert not any(c in r.stdout for c in "\x7f\x9b\x1b"), args
        assert json.loads(r.stdout)


def test_github_annotations_print_no_control_characters(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "e\x1bvil\x01.md").write_text("+ cites gone/\x1b[2Jx.kt\n")
    (tmp_path / "gone").mkdir()  # known to the root: the citation is gone, not unresolved
    r = CliRunner().invoke(main, ["check", "e\x1bvil\x01.md", "--format", "github"])
    assert r.exit_code == 1
    assert r.stdout.startswith("::error file=e\ufffdvil\ufffd.md,line=1,col=9,")
    assert "gone/\ufffd[2Jx.kt" in r.stdout
    assert not any(c in r.stdout for c in "\x01\x1b")


def test_multi_line_usage_messages_are_one_line():
    r = CliRunner().invoke(main, ["export", "--output", "x"])
    assert r.exit_code == 2
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("brainmigrate: error: Missing option")


def test_an_unwritable_temporary_folder_is_one_line_and_writes_no_store(tmp_path, monkeypatch):
    from brainmigrate import spill

    monkeypatch.setattr(spill, "BATCH", 1)  # the first fact read goes to a temporary file
    monkeypatch.setenv("TMPDIR", str(tmp_path / "no-such-tmp"))
    r = CliRunner().invoke(
        main, ["import", str(SAMPLES / "notes"), *ROOT_ARGS, "--store", str(tmp_path / "k.db")]
    )
    assert r.exit_code == 2
    assert r.output == (
        f"brainmigrate: error: cannot write a temporary file in {tmp_path / 'no-such-tmp'}:"
        " no such folder; set TMPDIR to a writable folder with free space\n"
    )
    assert not (tmp_path / "k.db").exists()


@pytest.mark.parametrize("unbuffered", ["1", ""])
@pytest.mark.parametrize("exit_zero", [[], ["--exit-zero"]])
def test_a_check_report_cut_short_by_its_reader_exits_141(tmp_path, unbuffered, exit_zero):
    """``check … | head -1``: the text report (200 KB, written in one piece) is cut short by
    the reader, so the command exits 141 whether or not stdout is unbuffered
    (``PYTHONUNBUFFERED``, which many CI images set), and with ``--exit-zero`` too: a CI
    step must not take a truncated report for a whole one."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "keep.kt").write_text("x")
    notes = tmp_path / "many.md"
    notes.write_text("".join(f"+ fact {i} cites src/gone{i}.kt and more\n" for i in range(3000)))
    cmd = [sys.executable, "-m", "brainmigrate", "check", str(notes), "--root", str(tmp_path)]
    cmd += ["--isolated", "--cache-dir", str(tmp_path / "cache"), *exit_zero]
    env = {**os.environ, "PYTHONUNBUFFERED": unbuffered}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert proc.stdout.readline().endswith(
        b"many.md:1:16: BM101 error cites src/gone0.kt, which no root holds\n"
    )
    proc.stdout.close()  # like `| head -1`
    err = proc.stderr.read()
    assert proc.wait(timeout=60) == 141
    assert err == b""


def test_a_reader_that_goes_away_stops_the_report_quietly(tmp_path):
    notes = tmp_path / "many.md"
    notes.write_text("".join(f"+ fact number {i} about the webhook retries\n" for i in range(3000)))
    cmd = [sys.executable, "-m", "brainmigrate", "import", str(notes), "--root", str(tmp_path)]
    cmd += ["--dry-run", "--format", "json", "--store", str(tmp_path / "k.db")]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout.read(100).startswith(b"{")
    proc.stdout.close()  # like `| head -c 100`
    err = proc.stderr.read()
    assert proc.wait(timeout=60) == 141  # as a tool killed by SIGPIPE
    assert err == b""


@pytest.mark.parametrize("where", ["no-such-folder/report.json", "."])
def test_an_output_that_cannot_be_written_stops_the_import_before_the_store(tmp_path, where):
    output = tmp_path / where
    db = tmp_path / "k.db"
    r = cli("import", SAMPLES / "notes", *ROOT_ARGS, "--store", db, "--output", output)
    assert r.exit_code == 2
    why = "is a folder; pass a file name" if where == "." else f"folder {output.parent} does"
    assert r.output.startswith(f"brainmigrate: error: --output {output}: {why}")
    assert not db.exists()


@pytest.mark.parametrize("given", ["nodir/", "afile/", ""])
def test_an_output_that_names_no_file_is_refused(tmp_path, given, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("keep me")
    r = cli("import", SAMPLES / "notes", *ROOT_ARGS, "--dry-run", "--output", given)
    assert r.exit_code == 2
    why = f"--output {given!r}: not a file name; pass a file name"
    if not given:  # refused as the option is read, as every blank path is
        why = "Invalid value for '--output': empty or blank; give a value or leave the option"
        why += " out; see 'brainmigrate import --help'"
    assert r.output == f"brainmigrate: error: {why}\n"
    assert (tmp_path / "afile").read_text() == "keep me"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


def test_an_output_folder_that_takes_no_file_stops_the_import_first(tmp_path):
    db = tmp_path / "k.db"
    r = cli("import", SAMPLES / "notes", *ROOT_ARGS, "--store", db, "--output", "/proc/report.txt")
    assert r.exit_code == 2
    assert r.output.startswith(
        "brainmigrate: error: --output /proc/report.txt: cannot write in /proc"
    )
    assert not db.exists()


# ------------------------------------------------------------------ outputs never overwrite inputs

CLASH_CASES = [
    # (command line, message after "brainmigrate: error: ")
    (
        ["export", "--store", "s.db", "--to", "jsonl", "--output", "s.db"],
        "--output s.db would be written over the store s.db, which this command reads;"
        " pass --output another path",
    ),
    (
        ["export", "--store", "link.db", "--to", "jsonl", "--output", "s.db"],
        "--output s.db would be written over the store link.db, which this command reads;"
        " pass --output another path",
    ),
    (
        ["import", "p.md", "--store", "s.db", "--format", "json", "--output", "s.db"],
        "--output s.db would be written over the store s.db, which this command reads;"
        " pass --output another path",
    ),
    (
        ["import", "p.md", "--store", "s.db", "--format", "json", "--output", "p.md"],
        "--output p.md would be written over the notes file p.md, which this command reads;"
        " pass --output another path",
    ),
    (
        ["import", "notes", "--store", "s.db", "--dry-run", "--output", "notes/q.md"],
        "--output notes/q.md would be written over the notes file notes/q.md, which this"
        " command reads; pass --output another path",
    ),
    (  # SQLite removes what it finds there on the next open
        ["import", "p.md", "--store", "s.db", "--output", "s.db-journal"],
        "--output s.db-journal would be written over the store's journal s.db-journal, which"
        " this command reads; pass --output another path",
    ),
    (
        ["stale", "--store", "link.db", "--output", "s.db-wal"],
        "--output s.db-wal would be written over the store's journal s.db-wal, which"
        " this command reads; pass --output another path",
    ),
    (
        ["import", "p.md", "--store", "new.db", "--output", "new.db"],
        "--output new.db would be written over the store new.db, which this command reads;"
        " pass --output another path",
    ),
    (
        ["import", "empty.md", "--store", "empty.md"],
        "--store empty.md would be written over the notes file empty.md, which this command"
        " reads; pass --store another path",
    ),
    (
        ["check", "p.md", "--format", "text", "--output", "r.txt", "--format", "json"]
        + ["--output", "r.txt"],
        "--format text --output r.txt and --format json --output r.txt are one file, and the"
        " first would be lost; give each its own file",
    ),
    (
        ["check", "p.md", "--output", "b.json", "--baseline", "b.json"],
        "--format text --output b.json would be written over the baseline b.json, which this"
        " command reads; pass --output another path",
    ),
    (
        ["check", "p.md", "--output", "b.json", "--baseline", "b.json", "--update-baseline"],
        "--baseline b.json and --format text --output b.json are one file, and the first"
        " would be lost; give each its own file",
    ),
    (
        ["check", "p.md", "--baseline", "p.md", "--update-baseline"],
        "--baseline p.md would be written over the notes file p.md, which this command reads;"
        " pass --baseline another path",
    ),
    (
        ["check", "p.md", "--output", "pyproject.toml"],
        "--format text --output pyproject.toml would be written over the configuration"
        " pyproject.toml, which this command reads; pass --output another path",
    ),
]


@pytest.mark.parametrize(("args", "message"), CLASH_CASES)
def test_an_output_never_overwrites_what_the_run_reads(tmp_path, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.md").write_text("+ the cache holds 5 entries TER-1\n")
    (tmp_path / "empty.md").write_text("")
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "q.md").write_text("+ the queue drains nightly TER-2\n")
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    assert cli("import", "p.md", "--store", "s.db").exit_code == 0
    os.symlink("s.db", tmp_path / "link.db")
    assert cli("check", "p.md", "--baseline", "b.json", "--update-baseline").exit_code == 0
    before = {p.name: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    r = CliRunner().invoke(main, args)
    assert (r.exit_code, r.stdout, r.stderr) == (2, "", f"brainmigrate: error: {message}\n")
    after = {p.name: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    assert after == before


def test_a_folder_export_never_writes_over_its_store(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (tmp_path / "p.md").write_text("+ the cache holds 5 entries TER-1\n")
    assert cli("import", tmp_path / "p.md", "--store", out / "p.md").exit_code == 0
    before = (out / "p.md").read_bytes()
    r = CliRunner().invoke(
        main, ["export", "--store", str(out / "p.md"), "--to", "brain", "--output", str(out)]
    )
    assert r.exit_code == 2
    assert r.stderr == (
        f"brainmigrate: error: --output {out / 'p.md'} would be written over the store"
        f" {out / 'p.md'}, which this command reads; pass --output another path\n"
    )
    assert (out / "p.md").read_bytes() == before


def test_a_report_name_near_255_bytes_is_written(tmp_path):
    out = tmp_path / ("r" * 250 + ".txt")  # its temporary names are cut to fit 255 bytes
    r = cli("import", SAMPLES / "notes", *ROOT_ARGS, "--dry-run", "--output", out)
    assert (r.exit_code, r.output) == (0, "")
    assert out.read_text().startswith("Dry run: nothing written")
    assert sorted(p.name for p in tmp_path.iterdir()) == [out.name]


def test_an_index_report_never_overwrites_its_cache(tmp_path):
    from brainmigrate.codeindex import cache

    (tmp_path / "root").mkdir()
    (tmp_path / "root" / "a.py").write_text("class Alpha:\n    pass\n")
    assert cli("index", "--root", tmp_path / "root", "--cache-dir", tmp_path).exit_code == 0
    path = cache.cache_file(tmp_path, (tmp_path / "root").resolve())
    before = path.read_bytes()
    r = CliRunner().invoke(
        main,
        ["index", "--root", str(tmp_path / "root"), "--cache-dir", str(tmp_path)]
        + ["--output", str(path)],
    )
    assert (r.exit_code, r.stderr) == (
        2,
        f"brainmigrate: error: --output {path} would be written over the declaration index"
        f" cache {path}, which this command reads; pass --output another path\n",
    )
    assert path.read_bytes() == before


def test_notes_from_standard_input_are_imported_into_a_store(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(
        main, ["import", "-", "--stdin-filename", "notes/ops.md", "--store", "k.db"],
        input="+ the deploy runs nightly\n",
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith("Imported into k.db: 1 fact added, 0 updated")
    shown = CliRunner().invoke(main, ["show", "k1", "--store", "k.db", "--format", "json"])
    assert json.loads(shown.stdout)["scope"] == "area:ops"


@pytest.mark.parametrize(
    "option",
    [
        "--select=",
        "--ignore=",
        "--extend-select=",
        "--select=,",
        "--exclude=",
        "--extend-exclude=",
        "--baseline=",
        "--stdin-filename=",
        "--cache-dir=",
        "--root=",
    ],
)
def test_a_blank_check_option_is_a_usage_error(tmp_path, monkeypatch, option):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "n.md").write_text("+ a fact\n")
    r = CliRunner().invoke(main, ["check", "n.md", option])
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith("brainmigrate: error: ") and r.stderr.count("\n") == 1
    assert "empty or blank; give a value or leave the option out" in r.stderr


def test_an_output_that_is_a_fifo_a_device_or_a_symlink_is_written_through(tmp_path):
    """--output of a FIFO or a device is written in place, as a shell's > would (renaming a
    file over /dev/stdout once made it a plain file); a symlink stays a link and the file
    it points at gets the report."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE)
    args = ["check", str(SAMPLES / "notes"), *ROOT_ARGS, "--format", "json", "--output"]
    r = cli(*args, fifo)
    assert r.exit_code == 1, r.output
    got, _ = reader.communicate(timeout=30)
    assert json.loads(got)["tool"] == "brainmigrate check"
    assert fifo.is_fifo()

    r = cli(*args, "/dev/null")
    assert r.exit_code == 1 and Path("/dev/null").is_char_device()

    real = tmp_path / "real.json"
    real.write_text("old\n", encoding="utf-8")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    r = cli(*args, link)
    assert r.exit_code == 1
    assert link.is_symlink() and json.loads(real.read_text(encoding="utf-8"))["findings"]


def test_ctrl_c_after_the_commit_says_the_store_is_whole(tmp_path, monkeypatch):
    """An interrupt while the report is written comes after the import's commit: the line
    says the store holds the whole import, not that it may be as it was."""
    from brainmigrate import reports

    def interrupted(*a, **k):
        raise KeyboardInterrupt
        yield  # a generator, as the report's chunks are

    monkeypatch.setattr(reports, "json_chunks", interrupted)
    db = tmp_path / "k.db"
    r = CliRunner().invoke(
        main, ["import", str(SAMPLES / "notes"), *ROOT_ARGS, "--store", str(db), "--format", "json"]
    )
    assert r.exit_code == 130
    assert r.stderr == (
        f"brainmigrate: interrupted after the store was written ({db} holds the whole import;"
        " only the report was cut short)\n"
    )
    assert sqlite3.connect(db).execute("SELECT count(*) FROM facts").fetchone() == (29,)
    r = CliRunner().invoke(main, ["import", str(SAMPLES / "notes"), *ROOT_ARGS, "--dry-run"])
    assert r.exit_code == 0, r.stderr  # the next command line starts afresh


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["import", str(SAMPLES / "notes"), *ROOT_ARGS, "--store", "-"],
            "--store -: a store is a file, not standard input or output; pass --store with a"
            " file path",
        ),
        (
            ["show", "k1", "--store", "-"],
            "--store -: a store is a file, not standard input or output; pass --store with a"
            " file path",
        ),
        (
            ["export", "--store", "{db}", "--to", "brain", "--output", "-"],
            "--output -: this format writes a folder, not standard output; pass --output with"
            " a folder path",
        ),
    ],
)
def test_a_dash_is_no_store_and_no_folder(tmp_path, monkeypatch, args, message):
    """``-`` is standard input or output elsewhere: as a store or an export folder it is a
    usage error, not a file or folder named ``-``."""
    monkeypatch.chdir(tmp_path)
    db = tmp_path / "k.db"
    CliRunner().invoke(main, ["import", str(SAMPLES / "notes"), *ROOT_ARGS, "--store", str(db)])
    r = CliRunner().invoke(main, [a.replace("{db}", str(db)) for a in args])
    assert (r.exit_code, r.stderr) == (2, f"brainmigrate: error: {message}\n")
    assert not (tmp_path / "-").exists()


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_a_file_name_with_a_line_break_forges_no_report_line(tmp_path, fmt):
    """A notes file named ``a<newline>b.md`` (its scope holds the newline too): the text
    and Markdown reports, read a line per record, show the break as U+FFFD instead of
    starting a line ``b.md:1: …`` of their own."""
    notes = tmp_path / "odd"
    notes.mkdir()
    (notes / "a\nb.md").write_text("+ x src/gone/T.kt\n\t+ y\n")
    r = CliRunner().invoke(
        main, ["import", str(notes), *ROOT_ARGS, "--dry-run", "--format", fmt, "--store",
               str(tmp_path / "k.db")],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    assert not any(line.startswith("b.md") for line in r.stdout.splitlines())
    shown = "\ufffd" if fmt == "text" else " "  # (a Markdown cell folds it to a space)
    assert f"a{shown}b.md" in r.stdout and f"area:a{shown}b" in r.stdout


def test_each_command_line_starts_with_a_fresh_run_state(tmp_path):
    """What one command line wrote and committed (``runstate.state``, which an interrupt
    reports) is not carried into the next one run in the same process."""
    from brainmigrate.runstate import state

    store, report = tmp_path / "k.db", tmp_path / "r.json"
    args = ("--store", store, "--format", "json", "--output", report)
    r = cli("import", SAMPLES / "notes", *ROOT_ARGS, *args)
    assert r.exit_code == 0
    assert (state.committed, state.written) == (str(store), [str(report)])
    r = cli("import", SAMPLES / "notes", *ROOT_ARGS, "--dry-run", "--store", store)
    assert r.exit_code == 0
    assert (state.committed, state.written, state.terminated) == (None, [], False)


def test_the_format_choices_are_the_formats_the_reports_render():
    """``--format`` choices are named in ``cli.options`` (``--help`` loads no report)."""
    from brainmigrate.cli.options import CHECK_FORMATS, STALE_FORMATS
    from brainmigrate.reports import ci, stale

    assert [f.value for f in ci.Format] == CHECK_FORMATS
    assert [f.value for f in stale.Format] == STALE_FORMATS


def test_the_fail_on_choices_are_the_severity_levels():
    from brainmigrate import codes
    from brainmigrate.cli.options import LEVELS

    assert tuple(LEVELS) == codes.LEVELS
