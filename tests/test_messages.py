"""What a user reads: help on every command, errors in one shape, honest summaries, Ctrl-C
(issue 11, "Honest reports and messages")."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from clirun import cli

from brainmigrate.cli import main


@pytest.mark.parametrize("command", sorted(main.commands))
@pytest.mark.parametrize("flag", ["-h", "--help"])
def test_every_command_takes_h_for_help(command, flag):
    got = cli(command, flag)
    assert (got.exit_code, got.stderr) == (0, "")
    assert got.stdout.startswith(f"Usage: brainmigrate {command} [OPTIONS]")
    assert "  -h, --help " in got.stdout


def test_search_for_h_after_a_double_dash(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "n.md").write_text("+ the -h flag of the tool prints help\n")
    assert cli("import", "n.md", "--store", "k.db").exit_code == 0
    got = cli("search", "--store", "k.db", "--", "-h")
    assert (got.exit_code, got.stdout) == (
        0,
        "k1 environment area:n  the -h flag of the tool prints help\n",
    )


# ------------------------------------------------------------------------------ Ctrl-C

INTERRUPTED = (
    "brainmigrate: interrupted (a store and every output are written whole or not at all)\n"
)


def big_notes(path: Path, count: int) -> Path:
    path.write_text(
        "".join(
            f"+ fact number {i} about queue {i * 7} and cache {i % 13} TER-{i}\n"
            for i in range(count)
        )
    )
    return path


def start_import(notes: Path, db: Path) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "brainmigrate", "import", str(notes), "--store", str(db)]
    cmd += ["--root", str(notes.parent)]
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def wait_until(ready, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + 120
    while not ready():
        assert proc.poll() is None, "the import ended before it could be interrupted"
        assert time.monotonic() < deadline
        time.sleep(0.005)


def is_reading(proc: subprocess.Popen, path: Path) -> bool:
    with contextlib.suppress(OSError):
        for fd in os.listdir(f"/proc/{proc.pid}/fd"):
            with contextlib.suppress(OSError):
                if os.readlink(f"/proc/{proc.pid}/fd/{fd}") == str(path):
                    return True
    return False


def facts_in(db: Path) -> int:
    con = sqlite3.connect(db)
    try:
        return con.execute("SELECT count(*) FROM facts").fetchone()[0]
    finally:
        con.close()


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")
def test_ctrl_c_while_the_notes_are_read_exits_130_leaving_the_store(tmp_path):
    db = tmp_path / "know.db"
    small = big_notes(tmp_path / "small.md", 20)
    assert start_import(small, db).wait(timeout=60) == 0
    before = db.read_bytes()
    notes = big_notes(tmp_path / "big.md", 60_000)
    proc = start_import(notes, db)
    wait_until(lambda: is_reading(proc, notes), proc)
    proc.send_signal(signal.SIGINT)
    assert (proc.wait(timeout=60), proc.stderr.read()) == (130, INTERRUPTED)
    assert db.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.md", "know.db", "small.md"]


def test_ctrl_c_while_the_store_is_written_exits_130_and_rolls_back(tmp_path):
    db = tmp_path / "know.db"
    journal = tmp_path / "know.db-journal"
    notes = big_notes(tmp_path / "big.md", 40_000)
    proc = start_import(notes, db)
    wait_until(journal.exists, proc)  # the transaction has begun writing the new store
    proc.send_signal(signal.SIGINT)
    assert (proc.wait(timeout=60), proc.stderr.read()) == (130, INTERRUPTED)
    left = sorted(p.name for p in tmp_path.iterdir())
    if left == ["big.md", "know.db"]:  # interrupted after its commit, while it reported
        assert facts_in(db) == 40_000
    else:  # rolled back: the store this run began is removed again
        assert left == ["big.md"]


# ------------------------------------------------------------------------------ summaries

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
ROOTS = ["--root", SAMPLES / "roots/app", "--root", SAMPLES / "roots/infra"]


def test_importing_a_brain_export_into_its_store_says_what_it_adds(tmp_path):
    db = tmp_path / "k.db"
    assert cli("import", SAMPLES / "notes", *ROOTS, "--store", db).exit_code == 0
    assert cli("export", "--store", db, "--to", "brain", "--output", tmp_path / "b").exit_code == 0
    before = db.read_bytes()
    dry = cli("import", tmp_path / "b", *ROOTS, "--store", db, "--dry-run")
    assert dry.stdout.splitlines()[0] == (
        f"Dry run: nothing written; an import into {db} would add 0 and update 0 facts, and"
        " add 29 provenance rows (files and lines that fed facts already there)"
    )
    assert db.read_bytes() == before
    got = cli("import", tmp_path / "b", *ROOTS, "--store", db)
    assert (got.exit_code, got.stdout.splitlines()[0]) == (
        0,
        f"Imported into {db}: no fact added or updated; 29 provenance rows added (files and"
        " lines that fed facts already there)",
    )
    assert db.read_bytes() != before
    again = cli("import", tmp_path / "b", *ROOTS, "--store", db, "--format", "json")
    totals = json.loads(again.stdout)["totals"]
    assert (totals["added"], totals["updated"], totals["provenance_added"]) == (0, 0, 0)
    text = cli("import", tmp_path / "b", *ROOTS, "--store", db)
    assert text.stdout.splitlines()[0] == (
        f"Imported into {db}: nothing changed, every fact was already there"
    )
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "prose.md").write_text("just prose\n", encoding="utf-8")
    # a run that reads no fact fails and writes nothing, so it says nothing was imported
    failed = cli("import", tmp_path / "empty", *ROOTS, "--store", tmp_path / "new.db")
    assert (failed.exit_code, failed.stdout) == (1, "")
    assert not (tmp_path / "new.db").exists()
    args = ("--store", tmp_path / "new.db", "--allow-empty")
    text = cli("import", tmp_path / "empty", *ROOTS, *args)
    assert text.stdout.splitlines()[0] == (
        f"Imported into {tmp_path / 'new.db'}: the notes hold no fact; nothing to add"
    )


# ------------------------------------------------------------------------------ errors

ROOT_FIX = "pass --root with the folder of a checkout"
OUTPUT_FIX = "create it or pass --output with another path"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["import", "nonexistent/"], "nonexistent/: no such file or folder; check the path"),
        (["check", "nonexistent/"], "nonexistent/: no such file or folder; check the path"),
        (
            ["index", "--root", ".", "--output", "nofolder/x.json"],
            f"--output nofolder/x.json: folder nofolder does not exist; {OUTPUT_FIX}",
        ),
        (
            ["import", "n.md", "--output", "nofolder/x.json"],
            f"--output nofolder/x.json: folder nofolder does not exist; {OUTPUT_FIX}",
        ),
        (
            ["export", "--store", "k.db", "--to", "jsonl", "--output", "nofolder/x.jsonl"],
            f"--output nofolder/x.jsonl: folder nofolder does not exist; {OUTPUT_FIX}",
        ),
        (
            ["import", "n.md", "--root", "README.md"],
            f"--root README.md: is not a folder; {ROOT_FIX}",
        ),
        (
            ["check", "n.md", "--root", "README.md"],
            f"--root README.md: is not a folder; {ROOT_FIX}",
        ),
        (["index", "--root", "README.md"], f"--root README.md: is not a folder; {ROOT_FIX}"),
        (["index", "--root", "nofolder"], f"--root nofolder: no such folder; {ROOT_FIX}"),
        (
            ["import", "README.md/n.md"],
            "README.md/n.md: no such file or folder; check the path",
        ),
    ],
)
def test_errors_say_what_and_how_to_fix(tmp_path, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "README.md").write_text("# a file\n")
    (tmp_path / "n.md").write_text("+ a fact\n")
    cli("import", "n.md", "--store", "k.db")
    before = sorted(p.name for p in tmp_path.iterdir())
    got = cli(*args)
    assert (got.exit_code, got.stderr, got.stdout) == (2, f"brainmigrate: error: {message}\n", "")
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_every_error_has_the_readme_shape(tmp_path, monkeypatch):
    """``brainmigrate: error: <what>; <how to fix>``, one line, for each kind of failure."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "n.md").write_text("+ a fact in src/gone.py\n")
    (tmp_path / "empty").mkdir()
    (tmp_path / "bad.db").write_bytes(b"not sqlite")
    (tmp_path / "bl.json").write_text("[]")
    cli("import", "n.md", "--store", "k.db")
    failing = [
        ["import", "missing.md"],
        ["import", "empty"],
        ["import", "/dev/null"],
        ["import", "n.md", "--root", "n.md"],
        ["import", "n.md", "--task-pattern", "("],
        ["import", "n.md", "--store", "bad.db"],
        ["import", "n.md", "--store", "empty"],
        ["import", "n.md", "--store", "sub/k.db"],
        ["import", "n.md", "--output", "empty"],
        ["import", "n.md", "--output", "sub/r.txt"],
        ["import", "n.md", "--bogus"],
        ["check", "n.md", "--baseline", "none.json"],
        ["check", "n.md", "--baseline", "bl.json"],
        ["check", "n.md", "--format", "json", "--format", "sarif"],
        ["index", "--root", "n.md"],
        ["export", "--store", "none.db", "--to", "jsonl", "--output", "-"],
        ["export", "--store", "k.db", "--to", "brain", "--output", "n.md"],
        ["export", "--store", "k.db", "--to", "jsonl", "--output", "-", "--scope", "area:x"],
        ["search", "fact", "--store", "bad.db"],
        ["show", "kx", "--store", "k.db"],
        ["show", "k9", "--store", "k.db"],
    ]
    odd = []
    for args in failing:
        got = cli(*args)
        if got.exit_code != 2 or not SHAPE.fullmatch(got.stderr):
            odd.append((args, got.exit_code, got.stderr))
    for config in (
        'fail-on = "fatal"\n',
        "roots = []\n",
        "color = 1\n",
        "x = \n",
        'exclude = ""\n',
    ):
        (tmp_path / ".brainmigrate.toml").write_text(config)
        got = cli("check", "n.md")
        if got.exit_code != 2 or not SHAPE.fullmatch(got.stderr):
            odd.append((config, got.exit_code, got.stderr))
    assert odd == []


SHAPE = re.compile(r"brainmigrate: error: [^\n]+; [^\n]+\n")
