"""How a run ends when something happens around it: reads while an import commits, an
``--output`` that fails after the store or the notes were changed, Ctrl-C while the
program is still starting, and paths or names the system refuses."""

from __future__ import annotations

import errno
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from clirun import cli
from trees import committed, renamed

from brainmigrate import exports, fix, importer, search, stale, writers
from brainmigrate.cli.options import PATH_MAX
from brainmigrate.stores import StoreError

IMPORT = [sys.executable, "-m", "brainmigrate", "import"]


def notes(path: Path, count: int) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        f"+ fact number {i} about queue {i * 7} and cache {i % 13} TER-{i}" for i in range(count)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


#: Facts each import of the growing notes adds.
STEP = 150


def test_reads_during_imports_see_one_committed_state(tmp_path):
    """``export``, ``search`` and ``show`` read the store in one read transaction: while
    imports of growing notes commit beside them, each read sees one committed state (an
    export holds the facts of one of the imports), never "the store is inconsistent"
    (each read was several queries, and an import committed between them)."""
    db = tmp_path / "know.db"
    md = notes(tmp_path / "n" / "notes.md", STEP)
    subprocess.run([*IMPORT, str(md), "--store", str(db), "--root", str(tmp_path)], check=True)
    states = {STEP * k for k in range(1, 22)}
    script = (
        "import subprocess, sys\n"
        "for k in range(2, 22):\n"
        f"    open({str(md)!r}, 'a').write(''.join(\n"
        f"        f'+ more fact {{k}} {{i}} TER-{{k * 1000 + i}}\\n' for i in range({STEP})))\n"
        f"    subprocess.run({IMPORT!r} + [{str(md)!r}, '--store', {str(db)!r},"
        f" '--root', {str(tmp_path)!r}], check=True, stdout=subprocess.DEVNULL)\n"
    )
    env = {**os.environ, "BRAINMIGRATE_BUSY_TIMEOUT": "120"}
    writer = subprocess.Popen([sys.executable, "-c", script], env=env)
    os.environ["BRAINMIGRATE_BUSY_TIMEOUT"] = "120"
    tries = seen = 0
    try:
        while writer.poll() is None or tries < 30:
            tries += 1
            text = exports.export(db, "jsonl", "-").text
            count = len(text.splitlines())
            assert count in states, count
            seen += 1
            hits = search.search(db, "fact queue", limit=30, recheck=False)
            assert hits
            assert search.show(db, "k1", recheck=False)["id"] == "k1"
            assert stale.stale(db, dry_run=True).checked == 0  # (no fact cites code)
            if tries > 400:
                break
    except StoreError as exc:
        raise AssertionError(f"after {tries} reads: {exc}") from None
    finally:
        os.environ.pop("BRAINMIGRATE_BUSY_TIMEOUT")
        writer.wait(timeout=600)
    assert writer.returncode == 0
    assert tries >= 30


def _startup(err: str) -> bool:
    """Whether ``err`` is the traceback of an interrupt in Python's own start-up, before
    the program's first line runs (``site``, ``runpy``, the standard modules they import,
    and the import hook setuptools' ``.pth`` file puts in place, ``_distutils_hack``, as
    runpy looks the package up): Python says so ("init_import_site": the ``.pth`` files of
    site-packages run there), or no frame in it is of the brainmigrate package or of a
    library it imports."""
    if err.startswith("Fatal Python error: init_import_site:"):
        return True
    files = [line for line in err.splitlines() if line.lstrip().startswith('File "')]
    package = str(Path(__file__).resolve().parent.parent / "brainmigrate")
    return err.endswith("KeyboardInterrupt\n") and not any(
        package in line or ("site-packages" in line and "/_distutils_hack/" not in line)
        for line in files
    )


def test_ctrl_c_while_the_program_starts_is_one_line(tmp_path):
    """Ctrl-C in the first 80 ms (while the command line library and the command are
    imported) ends the run with the one interrupt line and exit 130, never a traceback:
    the handler is in place before anything slow is imported. (Before the program's first
    line, Python itself is starting: a Ctrl-C there kills it silently, or is its own
    traceback, of its own files only.)"""
    md = notes(tmp_path / "n" / "notes.md", 5)
    line = "brainmigrate: interrupted (a store and every output are written whole or not at all)\n"
    ends = []
    # 0 to 80 ms in 2 ms steps; then on in 10 ms steps while fewer than 10 interrupts have
    # landed in the program (a loaded machine starts Python slower)
    delays = [step * 0.002 for step in range(41)] + [0.09 + step * 0.01 for step in range(60)]
    for delay in delays:
        if delay > 0.08 and sum(1 for _, code, _ in ends if code == 130) >= 10:
            break
        proc = subprocess.Popen(
            [sys.executable, "-m", "brainmigrate", "check", str(md), "--root", str(tmp_path)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        ends.append((delay, proc.returncode, err))
    ours = [(delay, code, err) for delay, code, err in ends if not _startup(err)]
    for delay, code, err in ours:
        assert (code, err) in ((-signal.SIGINT, ""), (130, line), (0, "")), (delay, code, err)
    assert sum(1 for _, code, err in ours if (code, err) == (130, line)) >= 10


def test_an_interrupt_past_the_commands_handlers_still_names_what_was_written():
    """An interrupt that reaches ``__main__.run`` itself after the run wrote a file (past
    every handler of the command) names that file, as the command's own handler would,
    rather than saying nothing was written."""
    code = (
        "import sys\n"
        "sys.argv = ['brainmigrate', 'check', 'n.md']\n"
        "from brainmigrate import cli\n"
        "from brainmigrate.runstate import state\n"
        "def main():\n"
        "    state.written.append('out.json')\n"
        "    raise KeyboardInterrupt\n"
        "cli.main = main\n"
        "from brainmigrate.__main__ import run\n"
        "run()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert (done.returncode, done.stderr) == (
        130,
        "brainmigrate: interrupted after out.json was written whole; the rest of the run was"
        " cut short\n",
    )


# ------------------------------------------------------- a report that fails after a change


def _gone(folder: Path):
    """A stand-in for a hook that removes the report's ``folder`` once ``func`` ran."""

    def wrap(func):
        def run(*args, **kwargs):
            done = func(*args, **kwargs)
            shutil.rmtree(folder)
            return done

        return run

    return wrap


def _full(*args, **kwargs):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_import_whose_report_cannot_be_written_says_the_store_was_written(tmp_path, monkeypatch):
    """An import that committed and then could not write its ``--output`` (the folder
    removed meanwhile) says the store holds the whole import, exit 2: never only "cannot
    write", which reads as a run that changed nothing."""
    md = notes(tmp_path / "n" / "notes.md", 3)
    db, out = tmp_path / "know.db", tmp_path / "out" / "r.json"
    out.parent.mkdir()
    monkeypatch.setattr(importer, "import_notes", _gone(out.parent)(importer.import_notes))
    r = cli("import", md, "--store", db, "--root", tmp_path, "--format", "json", "--output", out)
    assert (r.exit_code, r.stdout) == (2, "")
    assert r.stderr == (
        f"brainmigrate: error: the store {db} was written (the whole import: 3 facts added,"
        f" 0 updated); the report could not be written to --output {out} (No such file or"
        " directory): free space or pass --output with another path (what was written stays)\n"
    )
    assert stored(db) == 3


def test_a_report_that_fails_before_any_change_says_only_that(tmp_path, monkeypatch):
    """A dry run changes nothing: its failed report is the plain one-line error."""
    md = notes(tmp_path / "n" / "notes.md", 3)
    db, out = tmp_path / "know.db", tmp_path / "out.txt"
    monkeypatch.setattr(writers, "write_file", _full)
    r = cli("import", md, "--store", db, "--root", tmp_path, "--dry-run", "--output", out)
    assert (r.exit_code, r.stderr) == (
        2,
        f"brainmigrate: error: --output {out}: cannot write (No space left on device); free"
        " space or pass --output with another path\n",
    )
    assert not db.exists()


def stored(db: Path) -> int:
    con = sqlite3.connect(db)
    try:
        return con.execute("SELECT count(*) FROM facts").fetchone()[0]
    finally:
        con.close()


def test_stale_whose_report_cannot_be_written_says_what_it_recorded(tmp_path, monkeypatch):
    """``stale`` recorded a status, then the disk was full for its report: the line says
    the status is recorded (exit 2), and the store keeps it."""
    repo = committed(tmp_path / "repo", {"src/a.py": "def go():\n    return 1\n"})
    md = tmp_path / "n" / "notes.md"
    md.parent.mkdir()
    md.write_text("+ go returns one in src/a.py:1-2\n")
    db, out = tmp_path / "know.db", tmp_path / "stale.json"
    r = cli("import", md, "--store", db, "--root", repo, "--verify")
    assert r.exit_code == 0, r.stderr
    (repo / "src/a.py").write_text("def go():\n    return 2\n")
    monkeypatch.setattr(writers, "write_file", _full)
    r = cli("stale", "--store", db, "--root", repo, "--format", "json", "--output", out)
    assert (r.exit_code, r.stdout) == (2, "")
    assert r.stderr == (
        f"brainmigrate: error: the store {db} was updated (1 status recorded); the report"
        f" could not be written to --output {out} (No space left on device): free space or"
        " pass --output with another path (what was written stays)\n"
    )
    con = sqlite3.connect(db)
    assert con.execute("SELECT status FROM facts").fetchall() == [("stale",)]
    con.close()
    assert not out.exists()


def test_fix_whose_report_cannot_be_written_names_the_notes_it_rewrote(tmp_path, monkeypatch):
    """``check --fix`` rewrote the notes, then its ``--output`` folder was removed: the
    line names the notes file written (exit 2), which keeps the fix."""
    repo = renamed(tmp_path / "repo", "def go():\n    return 1\n")
    md = tmp_path / "n" / "notes.md"
    md.parent.mkdir()
    md.write_text("+ go lives in src/old.py\n")
    out = tmp_path / "out" / "check.json"
    out.parent.mkdir()
    monkeypatch.setattr(fix, "run_fix", _gone(out.parent)(fix.run_fix))
    r = cli("check", md, "--root", repo, "--fix", "--format", "json", "--output", out)
    assert md.read_text() == "+ go lives in src/new.py\n"
    assert r.exit_code == 2
    assert r.stderr.splitlines()[-1] == (
        f"brainmigrate: error: {md} was written; the report could not be written to --output"
        f" {out} (No such file or directory): free space or pass --output with another path"
        " (what was written stays)"
    )


# ------------------------------------------------ paths and names the system refuses

#: A path of 5,101 bytes (every name in it short): past the system's PATH_MAX.
LONG = "ab/" * 1700 + "x"


@pytest.mark.parametrize(
    ("command", "option", "args"),
    [
        ("check", "[PATHS]...", [LONG]),  # optional since issue 29
        ("check", "--root", ["n.md", "--root", LONG]),
        ("check", "--baseline", ["n.md", "--baseline", LONG]),
        ("check", "--config", ["n.md", "--config", LONG]),
        ("check", "--output", ["n.md", "--output", LONG]),
        ("import", "--store", ["n.md", "--store", LONG]),
        ("import", "--output", ["n.md", "--output", LONG]),
        ("stale", "--output", ["--output", LONG]),
        ("export", "--output", ["--to", "brain", "--output", LONG]),
        ("index", "--root", ["--root", LONG]),
    ],
)
def test_a_path_longer_than_the_system_takes_is_one_line(
    tmp_path, monkeypatch, command, option, args
):
    """A 5000-character path in any path option or argument is a usage error naming the
    option, exit 2 (``--output``, ``--config`` and others were "internal error: OSError:
    File name too long": ``pathlib``'s ``is_dir`` raises it)."""
    monkeypatch.chdir(tmp_path)
    notes(tmp_path / "n.md", 2)
    r = cli(command, *args)
    assert (r.exit_code, r.stdout) == (2, "")
    assert r.stderr == (
        f"brainmigrate: error: Invalid value for '{option}': a path of {len(LONG)} bytes,"
        f" longer than the system takes ({PATH_MAX - 1}); pass a shorter one; see"
        f" 'brainmigrate {command} --help'\n"
    )


@pytest.mark.parametrize(
    ("command", "option", "args", "reason"),
    [
        ("check", "--config", ["n.md", "--config", "b" * 300], "name"),
        ("check", "--baseline", ["n.md", "--baseline", "x/" + "b" * 300], "name"),
        ("check", "--output", ["n.md", "--output", " "], "blank"),
        ("import", "--store", ["n.md", "--store", "  "], "blank"),
        ("check", "[PATHS]...", [""], "blank"),  # optional since issue 29
    ],
)
def test_a_name_too_long_or_a_blank_path_is_one_line(
    tmp_path, monkeypatch, command, option, args, reason
):
    """A name of 300 bytes (under PATH_MAX, over what a file system takes) in ``--config``
    was "internal error: File name too long"; a blank ``--output`` or ``--store`` wrote a
    file named by spaces."""
    monkeypatch.chdir(tmp_path)
    notes(tmp_path / "n.md", 2)
    r = cli(command, *args)
    why = (
        "a name of 300 bytes in it, longer than file systems take (255); pass a shorter one"
        if reason == "name"
        else "empty or blank; give a value or leave the option out"
    )
    assert (r.exit_code, r.stdout, r.stderr) == (
        2,
        "",
        f"brainmigrate: error: Invalid value for '{option}': {why}; see"
        f" 'brainmigrate {command} --help'\n",
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["n.md"]


@pytest.mark.parametrize("key", ["baseline", "cache-dir"])
def test_a_nul_in_a_configured_path_is_one_line(tmp_path, monkeypatch, key):
    """A configured ``baseline`` holding NUL was "internal error: embedded null byte"."""
    monkeypatch.chdir(tmp_path)
    notes(tmp_path / "n.md", 2)
    (tmp_path / "pyproject.toml").write_text(f'[tool.brainmigrate]\n{key} = "a\\u0000b"\n')
    r = cli("check", "n.md")
    assert (r.exit_code, r.stderr) == (
        2,
        f"brainmigrate: error: pyproject.toml [tool.brainmigrate]: key {key!r}: holds a NUL"
        " character, which no file name can; fix the file\n",
    )


def test_a_root_in_an_unknown_users_home_is_one_line(tmp_path, monkeypatch):
    """``--root '~nouser/x'`` (a user the system does not know; the shell leaves it as it
    is) says so in one line; a folder of that very name is read as it is (``index`` ended
    in "internal error: RuntimeError: Could not determine home directory")."""
    monkeypatch.chdir(tmp_path)
    given = f"~{NO_USER}/x"
    for command in (["index"], ["check", notes(tmp_path / "n.md", 2)]):
        r = cli(*command, "--root", given)
        assert (r.exit_code, r.stderr) == (
            2,
            f"brainmigrate: error: --root {given}: no such user {NO_USER!r}; pass --root with"
            " the folder of a checkout\n",
        )
    (tmp_path / given).mkdir(parents=True)
    r = cli("index", "--root", given, "--cache-dir", tmp_path / "cache")
    assert (r.exit_code, r.stderr) == (0, "")
    assert r.stdout.startswith(f"Indexed {tmp_path / given} ")


#: A user name no system has.
NO_USER = "brainmigrate-no-such-user"


@pytest.mark.parametrize(
    ("value", "said"),
    [
        (
            os.fsdecode(b"/tmp/cache-\xff"),
            "/tmp/cache-\\xff: not a UTF-8 path; set"
            " BRAINMIGRATE_CACHE_DIR to a folder whose name is UTF-8, or unset it",
        ),
        (
            f"~{NO_USER}/c",
            f"~{NO_USER}/c: no such user {NO_USER!r}; set BRAINMIGRATE_CACHE_DIR"
            " to a folder path, or unset it",
        ),
    ],
)
@pytest.mark.parametrize("command", [["check", "n.md"], ["show", "k1"]])
def test_a_cache_folder_the_environment_names_wrongly_is_one_line(tmp_path, value, said, command):
    """``BRAINMIGRATE_CACHE_DIR`` of bytes that are no UTF-8 (Python holds them as
    surrogates, which the grammar cache could not name a file with) or in an unknown
    user's home folder is one line naming the variable, exit 2 (both were "internal
    error": ``UnicodeEncodeError``, ``RuntimeError``)."""
    notes(tmp_path / "n.md", 2)
    env = {**os.environ, "BRAINMIGRATE_CACHE_DIR": value}
    done = subprocess.run(
        [sys.executable, "-m", "brainmigrate", *command],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"brainmigrate: error: BRAINMIGRATE_CACHE_DIR={said}\n"


def test_a_configured_path_in_an_unknown_users_home_is_one_line(tmp_path, monkeypatch):
    """``cache-dir = "~nouser/c"`` in a configuration file names the file, the key and the
    unknown user, exit 2 (it made a folder ``~nouser`` beside the file, or, in a file of
    the current folder, was not expanded at all)."""
    monkeypatch.chdir(tmp_path)
    notes(tmp_path / "n.md", 2)
    (tmp_path / ".brainmigrate.toml").write_text(f'cache-dir = "~{NO_USER}/c"\n')
    r = cli("check", "n.md")
    assert (r.exit_code, r.stdout) == (2, "")
    assert r.stderr == (
        f"brainmigrate: error: .brainmigrate.toml: key 'cache-dir': ~{NO_USER}/c: no such"
        f" user {NO_USER!r}; fix the file\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == [".brainmigrate.toml", "n.md"]
