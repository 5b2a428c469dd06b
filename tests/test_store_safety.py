"""Store safety with real processes: two imports at once, and an import killed midway."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

IMPORT = [sys.executable, "-m", "brainmigrate", "import"]


def notes(folder: Path, name: str, count: int, word: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    lines = [
        f"+ {word} fact number {i} about queue {i * 7} and cache {i % 13} TER-{i}"
        for i in range(count)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def rows(db: Path) -> list:
    con = sqlite3.connect(db)
    try:
        return con.execute("SELECT id, scope, text FROM facts ORDER BY id").fetchall()
    finally:
        con.close()


#: ``python killpoint.py POINT MARKER args...``: an import stopped at a known point of its
#: transaction (``tests/killpoint.py``), so a kill lands there, not after a guessed delay.
KILLPOINT = [sys.executable, str(Path(__file__).with_name("killpoint.py"))]
#: Seconds a run gets to reach its point; a miss fails the test, it is never skipped.
REACH = 60.0


def stopped(point: str, marker: Path, *args: str, env: dict | None = None) -> subprocess.Popen:
    """``brainmigrate *args`` started and waited for until it is at ``point``
    (``killpoint.POINTS``); fails the test, naming what the run said, if it ends first or
    does not get there within ``REACH`` seconds."""
    proc = subprocess.Popen(
        [*KILLPOINT, point, str(marker), *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    deadline = time.monotonic() + REACH
    while not marker.exists():
        if proc.poll() is not None:
            pytest.fail(
                f"the run ended (exit {proc.returncode}) before it was at {point!r}:"
                f" {proc.stderr.read()!r}"
            )
        if time.monotonic() > deadline:
            proc.kill()
            proc.wait()
            pytest.fail(f"the run was not at {point!r} after {REACH:.0f} s")
        time.sleep(0.005)
    return proc


def go_on(marker: Path) -> None:
    """Let the run stopped at ``marker`` go on."""
    marker.with_name(marker.name + ".go").touch()


def killed(proc: subprocess.Popen, sig: int = signal.SIGKILL) -> str:
    """Send ``sig`` to ``proc`` and wait for it to end; what it wrote to stderr."""
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=REACH)
    return err


@pytest.mark.parametrize("given", ["abc", "-5", "nan", "inf", "1e999"])
def test_a_busy_timeout_that_is_no_number_of_seconds_is_one_line(tmp_path, given):
    """``BRAINMIGRATE_BUSY_TIMEOUT`` is read when a store is opened: a value that is no
    number of seconds is a one-line error naming it (it was an internal error)."""
    a = notes(tmp_path / "a", "alpha.md", 3, "alpha")
    db = tmp_path / "know.db"
    subprocess.run([*IMPORT, str(a), "--store", str(db), "--root", str(tmp_path)], check=True)
    before = db.read_bytes()
    env = {**os.environ, "BRAINMIGRATE_BUSY_TIMEOUT": given}
    for args in (["show", "k1", "--store", str(db)], [str(a), "--store", str(db)]):
        cmd = (
            [sys.executable, "-m", "brainmigrate", *args] if args[0] == "show" else [*IMPORT, *args]
        )
        done = subprocess.run(cmd, capture_output=True, text=True, env=env)
        assert (done.returncode, done.stdout) == (2, ""), args
        assert done.stderr == (
            f"brainmigrate: error: BRAINMIGRATE_BUSY_TIMEOUT={given!r} is not a number of"
            " seconds (a number of 0 or more, like 30); set it to one or unset it\n"
        )
    assert db.read_bytes() == before
    ok = {**os.environ, "BRAINMIGRATE_BUSY_TIMEOUT": " 0.5 "}
    shown = subprocess.run(
        [sys.executable, "-m", "brainmigrate", "show", "k1", "--store", str(db)], env=ok
    )
    assert shown.returncode == 0


def test_two_imports_at_once_both_land(tmp_path):
    """The second import asks for the write lock while the first holds it, mid-write: it
    waits, then merges against what the first wrote."""
    a = notes(tmp_path / "a", "alpha.md", 2000, "alpha")
    b = notes(tmp_path / "b", "beta.md", 300, "beta")
    db = tmp_path / "know.db"
    env = {**os.environ, "BRAINMIGRATE_BUSY_TIMEOUT": "120"}
    import_a = ["import", str(a), "--store", str(db), "--root", str(tmp_path)]
    first = stopped("write", tmp_path / "first", *import_a, env=env)
    import_b = ["import", str(b), "--store", str(db), "--root", str(tmp_path)]
    second = stopped("lock", tmp_path / "second", *import_b, env=env)
    go_on(tmp_path / "first")
    _, err = first.communicate(timeout=300)
    assert (first.returncode, err) == (0, "")
    _, err = second.communicate(timeout=300)
    assert (second.returncode, err) == (0, "")
    got = rows(db)
    assert len(got) == 2300
    assert [i for i, _, _ in got] == list(range(1, 2301))
    assert {s for _, s, _ in got[:2000]} == {"area:alpha"}  # the first to hold the lock
    assert {s for _, s, _ in got[2000:]} == {"area:beta"}
    again = subprocess.run(
        [*IMPORT, str(a), str(b), "--store", str(db), "--format", "json", "--root", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert '"added": 0' in again.stdout


@pytest.mark.parametrize(
    ("point", "landed"),
    [("write", False), ("hot", False), ("committed", True)],
)
def test_killed_import_leaves_the_store_as_it_was(tmp_path, point, landed):
    """Killed mid-write (its journal beside the store, or hot: the store file already
    holds some of its pages), the store is as it was; killed after its commit (while it
    prints), all of it landed."""
    small = notes(tmp_path / "s", "small.md", 50, "small")
    big = notes(tmp_path / "b", "big.md", 3000, "big")
    db = tmp_path / "know.db"
    import_big = ["import", str(big), "--store", str(db), "--root", str(tmp_path)]
    subprocess.run([*IMPORT, str(small), "--store", str(db), "--root", str(tmp_path)], check=True)
    before = rows(db)
    killed(stopped(point, tmp_path / "at", *import_big))
    after = rows(db)  # a hot journal, if any, is rolled back on open
    if landed:
        assert len(after) == 3050 and after[:50] == before
    else:
        assert after == before
    done = subprocess.run([*IMPORT, *import_big[1:]], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert len(rows(db)) == 3050


def test_killed_first_import_leaves_no_store(tmp_path):
    big = notes(tmp_path / "b", "big.md", 3000, "big")
    db = tmp_path / "know.db"
    import_big = ["import", str(big), "--store", str(db), "--root", str(tmp_path)]
    killed(stopped("write", tmp_path / "at", *import_big))
    leftovers = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("know.db"))
    assert leftovers == ["know.db", "know.db-journal"]
    done = subprocess.run([*IMPORT, *import_big[1:]], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert len(rows(db)) == 3000


DIE_MID_WRITE = """
import os, sqlite3, sys
con = sqlite3.connect(sys.argv[1], isolation_level=None)
con.execute("PRAGMA cache_size = 1")  # spill pages into the file before any commit
con.execute("BEGIN IMMEDIATE")
if sys.argv[2] == "new":
    con.execute("CREATE TABLE t (x)")
    con.executemany("INSERT INTO t VALUES (?)", [("x" * 500,)] * 5000)
else:
    con.execute("UPDATE facts SET text = text || ' changed'")
    con.executemany("INSERT INTO facts_fts (rowid, words) VALUES (?, ?)",
                    [(100000 + i, "w " * 200) for i in range(2000)])
os._exit(9)  # killed mid-transaction: the journal stays beside the file
"""


def test_store_left_hot_by_a_killed_writer_is_recovered(tmp_path):
    small = notes(tmp_path / "s", "small.md", 50, "small")
    db = tmp_path / "know.db"
    subprocess.run([*IMPORT, str(small), "--store", str(db), "--root", str(tmp_path)], check=True)
    con = sqlite3.connect(db)
    before = con.execute("SELECT id, text FROM facts ORDER BY id").fetchall()
    con.close()
    subprocess.run([sys.executable, "-c", DIE_MID_WRITE, str(db), "old"], check=False)
    assert (tmp_path / "know.db-journal").exists()
    search = subprocess.run(
        [sys.executable, "-m", "brainmigrate", "search", "small", "--store", str(db)],
        capture_output=True,
        text=True,
    )
    assert search.returncode == 0, search.stderr
    con = sqlite3.connect(db)
    assert con.execute("SELECT id, text FROM facts ORDER BY id").fetchall() == before
    con.close()
    again = subprocess.run(
        [*IMPORT, str(small), "--store", str(db), "--format", "json", "--root", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert again.returncode == 0, again.stderr
    assert '"added": 0' in again.stdout


def test_new_store_left_half_written_by_a_killed_writer_is_recovered(tmp_path):
    small = notes(tmp_path / "s", "small.md", 50, "small")
    db = tmp_path / "know.db"
    subprocess.run([sys.executable, "-c", DIE_MID_WRITE, str(db), "new"], check=False)
    assert db.stat().st_size > 0 and (tmp_path / "know.db-journal").exists()
    done = subprocess.run(
        [*IMPORT, str(small), "--store", str(db), "--root", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert len(rows(db)) == 50


def test_second_import_waits_for_a_first_import_into_a_new_store(tmp_path):
    """The second import starts while the first is writing its new store (the file and
    its journal are there, the schema not yet committed): it waits for the lock."""
    big = notes(tmp_path / "b", "big.md", 3000, "big")
    small = notes(tmp_path / "s", "small.md", 50, "small")
    db = tmp_path / "know.db"
    import_big = ["import", str(big), "--store", str(db), "--root", str(tmp_path)]
    first = stopped("write", tmp_path / "first", *import_big)
    import_small = ["import", str(small), "--store", str(db), "--root", str(tmp_path)]
    second = stopped("lock", tmp_path / "second", *import_small)
    go_on(tmp_path / "first")
    _, err = first.communicate(timeout=300)
    assert first.returncode == 0, err
    _, err = second.communicate(timeout=300)
    assert (second.returncode, err) == (0, "")
    assert len(rows(db)) == 3050


def _file_limit(size: int):
    def limit():
        import resource

        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG)
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))

    return limit


def test_a_first_import_that_runs_out_of_space_leaves_no_store(tmp_path):
    a = notes(tmp_path / "a", "alpha.md", 3000, "alpha")
    db = tmp_path / "know.db"
    done = subprocess.run(
        [*IMPORT, str(a), "--store", str(db), "--root", str(tmp_path / "a")],
        capture_output=True,
        text=True,
        preexec_fn=_file_limit(400_000),  # the store outgrows it; the run's spill does not
    )
    assert (done.returncode, done.stderr) == (
        2,
        f"brainmigrate: error: {db}: cannot write the store (disk I/O error): the system"
        " refused a write (a file size limit such as 'ulimit -f', a quota, or a failing"
        " disk); lift it and run again (the store is as it was)\n",
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a"]
    # and an import that has the space works
    ok = subprocess.run([*IMPORT, str(a), "--store", str(db), "--root", str(tmp_path / "a")])
    assert ok.returncode == 0 and len(rows(db)) == 3000


def test_an_import_that_runs_out_of_space_leaves_the_store_as_it_was(tmp_path):
    a = notes(tmp_path / "a", "alpha.md", 300, "alpha")
    b = notes(tmp_path / "b", "beta.md", 3000, "beta")
    db = tmp_path / "know.db"
    subprocess.run([*IMPORT, str(a), "--store", str(db), "--root", str(tmp_path)], check=True)
    before, size = db.read_bytes(), db.stat().st_size
    done = subprocess.run(
        [*IMPORT, str(b), "--store", str(db), "--root", str(tmp_path)],
        capture_output=True,
        text=True,
        preexec_fn=_file_limit(size + 200_000),
    )
    assert done.returncode == 2 and "cannot write the store" in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b", "know.db"]  # no journal
    assert db.read_bytes() == before


DIE_BY_SIGKILL = DIE_MID_WRITE.replace("os._exit(9)", "os.kill(os.getpid(), 9)")


def test_a_store_reached_through_a_symlink_is_recovered_through_it(tmp_path):
    small = notes(tmp_path / "s", "small.md", 50, "small")
    real = tmp_path / "data" / "real.db"
    real.parent.mkdir()
    link = tmp_path / "link.db"
    link.symlink_to(real)
    subprocess.run([*IMPORT, str(small), "--store", str(link), "--root", str(tmp_path)], check=True)
    before = rows(real)
    killed = subprocess.run([sys.executable, "-c", DIE_BY_SIGKILL, str(link), "old"], check=False)
    assert killed.returncode == -signal.SIGKILL
    # SQLite put the journal beside the file the link leads to
    assert (tmp_path / "data" / "real.db-journal").exists()
    assert not (tmp_path / "link.db-journal").exists()
    for args in (
        ["search", "small", "--store", str(link)],
        ["show", "k1", "--store", str(link)],
        ["export", "--store", str(link), "--to", "jsonl", "--output", "-"],
        ["import", str(small), "--store", str(link), "--dry-run", "--root", str(tmp_path)],
    ):
        done = subprocess.run(
            [sys.executable, "-m", "brainmigrate", *args], capture_output=True, text=True
        )
        assert (done.returncode, done.stderr) == (0, ""), args
        assert not (tmp_path / "data" / "real.db-journal").exists()  # rolled back
        assert rows(real) == before
    again = subprocess.run(
        [*IMPORT, str(small), "--store", str(link), "--format", "json", "--root", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert again.returncode == 0, again.stderr
    assert '"added": 0' in again.stdout
    assert link.is_symlink() and rows(real) == before


def test_a_first_import_through_a_dangling_link_that_fails_removes_its_file(tmp_path):
    from brainmigrate import stores as store

    real = tmp_path / "real.db"
    link = tmp_path / "link.db"
    link.symlink_to(real)

    def fail(_stored):
        raise RuntimeError("stop")

    with pytest.raises(RuntimeError):
        store.transact(link, fail, lambda rec: "", "2026-11-30T00:00:00Z")
    assert link.is_symlink() and not real.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.db"]


def test_a_store_in_wal_mode_works_in_every_command(tmp_path):
    small = notes(tmp_path / "s", "small.md", 50, "small")
    more = notes(tmp_path / "m", "more.md", 20, "more")
    db = tmp_path / "know.db"
    subprocess.run([*IMPORT, str(small), "--store", str(db), "--root", str(tmp_path)], check=True)
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA journal_mode=WAL").fetchone() == ("wal",)  # another tool
    con.close()
    before = rows(db)
    run = [sys.executable, "-m", "brainmigrate"]
    for args in (
        ["import", str(more), "--store", str(db), "--dry-run", "--root", str(tmp_path)],
        ["search", "small", "--store", str(db)],
        ["show", "k1", "--store", str(db)],
        *(
            ["export", "--store", str(db), "--to", fmt, "--output", str(tmp_path / fmt)]
            for fmt in ("jsonl", "brain", "knowledge", "memory")
        ),
        ["check", str(small), "--root", str(tmp_path)],
    ):
        done = subprocess.run([*run, *args], capture_output=True, text=True)
        assert done.returncode == 0, (args, done.stderr)
        assert "disk" not in done.stderr
    assert (
        "would add 20 and update 0 facts"
        in subprocess.run(
            [*run, "import", str(more), "--store", str(db), "--dry-run", "--root", str(tmp_path)],
            capture_output=True,
            text=True,
        ).stdout
    )
    assert rows(db) == before
    done = subprocess.run(
        [*IMPORT, str(more), "--store", str(db), "--root", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert len(rows(db)) == 70
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA journal_mode").fetchone() == ("wal",)  # left as it was
    con.close()


def test_only_a_full_disk_is_blamed_on_the_disk(tmp_path):
    from brainmigrate.stores import connection as store

    con = sqlite3.connect(tmp_path / "x.db")
    con.execute("CREATE TABLE t (x)")
    con.execute("PRAGMA max_page_count = 2")
    with pytest.raises(sqlite3.Error) as full:
        con.executemany("INSERT INTO t VALUES (?)", [("x" * 1000,)] * 100)
    assert full.value.sqlite_errorcode == 13  # SQLITE_FULL
    path = Path("k.db")
    assert str(store._error(path, full.value, writing=True)) == (
        "k.db: cannot write the store (database or disk is full): the disk is full; free"
        " space and run again (the store is as it was)"
    )
    with pytest.raises(sqlite3.Error) as other:
        con.execute("SELECT x FROM t WHERE x = ?", ())
    assert str(store._error(path, other.value)) == (
        "k.db: store error (Incorrect number of bindings supplied. The current statement uses"
        " 1, and there are 0 supplied.); run again, or restore a backup, or pass --store with"
        " another path (the store is as it was)"
    )
    with pytest.raises(sqlite3.Error) as edited:  # a store edited by hand: no use running again
        con.execute("SELECT * FROM nothing_here")
    assert str(store._error(path, edited.value)) == (
        "k.db: the store is inconsistent (no such table: nothing_here); restore a backup, or"
        " import the notes into a new store"
    )
    con.close()


def test_an_import_killed_through_a_symlink_is_rolled_back_through_it(tmp_path):
    small = notes(tmp_path / "s", "small.md", 50, "small")
    big = notes(tmp_path / "b", "big.md", 3000, "big")
    real = tmp_path / "data" / "real.db"
    real.parent.mkdir()
    link = tmp_path / "link.db"
    link.symlink_to(real)
    subprocess.run([*IMPORT, str(small), "--store", str(link), "--root", str(tmp_path)], check=True)
    before = rows(real)
    import_big = ["import", str(big), "--store", str(link), "--root", str(tmp_path)]
    killed(stopped("hot", tmp_path / "at", *import_big))
    journal = tmp_path / "data" / "real.db-journal"
    assert journal.read_bytes()[:8].strip(b"\0")  # hot: the next open must roll it back
    assert not (tmp_path / "link.db-journal").exists()
    done = subprocess.run(
        [sys.executable, "-m", "brainmigrate", "search", "small", "--store", str(link)],
        capture_output=True,
        text=True,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert not journal.exists() and rows(real) == before


def test_sigterm_during_a_first_import_leaves_no_store(tmp_path):
    """SIGTERM (a cancelled CI job, ``kill``) cleans up as Ctrl-C does: the new store
    and its journal are removed, one line, exit 143."""
    big = notes(tmp_path / "b", "big.md", 3000, "big")
    db = tmp_path / "know.db"
    proc = stopped("write", tmp_path / "at", "import", str(big), "--store", str(db))
    err = killed(proc, signal.SIGTERM)
    assert proc.returncode == 143, err
    assert err == (
        "brainmigrate: terminated (a store and every output are written whole or not at all)\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("know.db")) == []


def test_an_interrupt_during_the_commit_comes_after_the_store_says_it_committed():
    """SIGINT or SIGTERM at the commit is held until ``committed`` names the store, so the
    line printed says the store is whole (a kill between the two used to say it might be
    as it was)."""
    from brainmigrate.stores import importing as store

    done = []
    with pytest.raises(KeyboardInterrupt), store.signals_held():
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)  # (delivered at once, were it not held)
        done.append("committed")
    assert done == ["committed"]
