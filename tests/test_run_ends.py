"""How a run ends when something happens around it: reads while an import commits, an
``--output`` that fails after the store or the notes were changed, Ctrl-C while the
program is still starting, and paths or names the system refuses."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from brainmigrate import exports, search
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
    states = {STEP * k for k in range(1, 40)}
    script = (
        "import subprocess, sys\n"
        "for k in range(2, 40):\n"
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
    the program's first line runs (``site``, ``runpy``, the standard modules they import):
    no frame in it is of the brainmigrate package or of a library it imports."""
    files = [line for line in err.splitlines() if line.lstrip().startswith('File "')]
    package = str(Path(__file__).resolve().parent.parent / "brainmigrate")
    return err.endswith("KeyboardInterrupt\n") and not any(
        package in line or "site-packages" in line for line in files
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
    for step in range(41):
        proc = subprocess.Popen(
            [sys.executable, "-m", "brainmigrate", "check", str(md), "--root", str(tmp_path)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        time.sleep(step * 0.002)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        ends.append((step, proc.returncode, err))
    ours = [(step, code, err) for step, code, err in ends if not _startup(err)]
    for step, code, err in ours:
        assert (code, err) in ((-signal.SIGINT, ""), (130, line), (0, "")), (step, code, err)
    assert sum(1 for _, code, err in ours if (code, err) == (130, line)) >= 10
