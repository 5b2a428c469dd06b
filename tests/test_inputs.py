"""Files a user path names are read bounded (issue 26, "Unbounded"): a FIFO, a device or
a file too large for its kind is a one-line error, exit 2, before a byte of it is read; a
file swapped for a FIFO after it was listed is refused the same way, never waited on;
5000-deep nesting and 5000-digit numbers in a baseline or configuration file are an error
at their line and column, not an internal error. Each run has an alarm: a hang fails the
test instead of holding the suite."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from clirun import cli
from trees import renamed

from brainmigrate import inputs


class Hung(Exception):
    """The run blocked (on a FIFO) past the test's alarm."""


@pytest.fixture(autouse=True)
def alarm():
    """Fail (raise ``Hung`` in the blocked call) a test that runs over 90 seconds: a hang
    never ends, while hashing 48 MiB under tracemalloc took over 20 s on a loaded machine."""

    def ring(signum, frame):
        raise Hung("blocked")

    before = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, 90)
    yield
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, before)


@pytest.fixture
def notes(tmp_path, monkeypatch) -> Path:
    """A folder with one notes file, ``n.md``, citing ``x.py`` (there), as the cwd."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x.py").write_text("def f():\n    return 1\n")
    (tmp_path / "n.md").write_text("+ f is in x.py\n")
    return tmp_path


def one_line_error(r, message: str) -> None:
    assert (r.exit_code, r.stdout, r.stderr) == (2, "", f"brainmigrate: error: {message}\n")


# --- the reader itself


def test_the_reader_refuses_what_is_not_a_regular_file(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    cases = [
        (tmp_path / "fifo", "is a FIFO"),
        ("/dev/zero", "is a character device"),
        (tmp_path, "is a folder"),
    ]
    for path, what in cases:
        with pytest.raises(inputs.NotAFile) as caught:
            inputs.read_bounded(path, 10, "a thing")
        assert (caught.value.strerror, caught.value.filename) == (what, os.fspath(path))
        assert isinstance(caught.value, OSError)


def test_the_reader_bounds_the_size_before_and_while_reading(tmp_path):
    big = tmp_path / "big"
    big.write_bytes(b"")
    os.truncate(big, 24 << 30)  # sparse: no disk, no time
    with pytest.raises(inputs.TooLarge) as caught:
        inputs.read_bounded(big, inputs.SMALL_FILE_MAX, "a baseline")
    assert caught.value.strerror == "is 24 GB; a baseline is at most 16 MB"
    small = tmp_path / "small"
    small.write_bytes(b"12345")
    assert inputs.read_bounded(small, 5, "a thing") == b"12345"
    with pytest.raises(inputs.TooLarge) as caught:
        inputs.read_bounded(small, 4, "a thing")
    assert caught.value.strerror == "is 5 bytes; a thing is at most 4 bytes"


def test_the_descriptor_blocks_again_once_it_is_a_file(tmp_path):
    (tmp_path / "f").write_bytes(b"x")
    fd, st = inputs.open_fd(tmp_path / "f")
    try:
        assert os.get_blocking(fd) and st.st_size == 1
    finally:
        os.close(fd)


def test_structure_faults_are_found_with_their_line_and_column():
    deep = "[" * 5000 + "]" * 5000
    assert inputs.structure_fault(deep, "json") == (
        1,
        257,
        "too deeply nested (more than 256 levels)",
    )
    assert inputs.structure_fault('{"a": [1, 2]}', "json") is None
    long = '{"n":\n  ' + "9" * 5000 + "}"
    assert inputs.structure_fault(long, "json", numbers=True) == (2, 3, "a number of 5000 digits")
    # digits in a string, or a float, convert: no fault
    assert inputs.structure_fault('{"n": "' + "9" * 5000 + '"}', "json", numbers=True) is None
    assert inputs.structure_fault('{"n": 1.' + "9" * 5000 + "}", "json", numbers=True) is None
    toml = "# [[[[\nx = '[[[['\nn = 1_" + "0" * 4999 + "\n"
    assert inputs.structure_fault(toml, "toml", numbers=True) == (3, 5, "a number of 5000 digits")


# --- the baseline


def test_a_baseline_that_is_a_device_or_fifo_is_refused_unread(notes):
    os.mkfifo(notes / "bl.json")
    fix = "pass --baseline with a baseline file"
    r = cli("check", "--baseline", "/dev/zero", "n.md")
    one_line_error(r, f"--baseline /dev/zero: is a character device, not a file; {fix}")
    r = cli("check", "--baseline", "bl.json", "n.md")
    one_line_error(r, f"--baseline bl.json: is a FIFO, not a file; {fix}")


def test_a_baseline_named_in_pyproject_that_is_a_device_is_refused(notes):
    (notes / "pyproject.toml").write_text('[tool.brainmigrate]\nbaseline = "/dev/zero"\n')
    r = cli("check", "n.md")
    one_line_error(
        r,
        "--baseline /dev/zero: is a character device, not a file; pass --baseline with a"
        " baseline file",
    )


def test_a_baseline_over_the_bound_is_refused_with_its_size(notes):
    (notes / "bl.json").write_bytes(b"")
    os.truncate(notes / "bl.json", 24 << 30)
    r = cli("check", "--baseline", "bl.json", "n.md")
    one_line_error(
        r,
        "--baseline bl.json: is 24 GB; a baseline is at most 16 MB; fix it, or remove it and"
        " write a new one with --update-baseline",
    )


@pytest.mark.parametrize(
    ("text", "where", "reason"),
    [
        ("[" * 5000 + "]" * 5000, "1:257", "too deeply nested (more than 256 levels)"),
        (
            '{"entries": [], "schema_version":\n 1' + "0" * 4999 + "}",
            "2:2",
            "a number of 5000 digits",
        ),
        ('{"entries": [{"count": ' + "7" * 5000 + "}]}", "1:24", "a number of 5000 digits"),
    ],
)
def test_deep_nesting_and_long_numbers_in_a_baseline(notes, text, where, reason):
    (notes / "bl.json").write_text(text)
    r = cli("check", "--baseline", "bl.json", "n.md")
    one_line_error(
        r,
        f"--baseline bl.json:{where}: {reason}; fix it, or remove it and write a new one with"
        " --update-baseline",
    )


# --- the configuration


def test_a_configuration_file_that_is_a_fifo_is_refused_not_skipped(notes):
    os.mkfifo(notes / ".brainmigrate.toml")
    r = cli("check", "n.md")
    one_line_error(
        r,
        ".brainmigrate.toml: is a FIFO, not a file; replace it with a configuration"
        " file or pass --isolated",
    )
    r = cli("check", "--config", ".brainmigrate.toml", "n.md")
    one_line_error(
        r,
        ".brainmigrate.toml: is a FIFO, not a file; replace it with a configuration"
        " file or pass --config with a file",
    )
    assert cli("check", "--isolated", "n.md").exit_code == 0


def test_a_pyproject_that_is_a_fifo_is_refused(notes):
    os.mkfifo(notes / "pyproject.toml")
    r = cli("check", "n.md")
    one_line_error(
        r,
        "pyproject.toml: is a FIFO, not a file; replace it with a configuration"
        " file or pass --isolated",
    )


def test_a_configuration_file_over_the_bound_is_refused(notes):
    (notes / ".brainmigrate.toml").write_bytes(b"")
    os.truncate(notes / ".brainmigrate.toml", 17 << 20)
    r = cli("check", "n.md")
    one_line_error(
        r, ".brainmigrate.toml: is 17 MB; a configuration file is at most 16 MB; fix the file"
    )


@pytest.mark.parametrize(
    ("name", "text", "where", "reason"),
    [
        (
            ".brainmigrate.toml",
            "x = " + "[" * 5000,
            "1:261",
            "too deeply nested (more than 256 levels)",
        ),
        (
            ".brainmigrate.toml",
            "x = " + "{a = " * 5000,
            "1:1285",
            "too deeply nested (more than 256 levels)",
        ),
        (".brainmigrate.toml", "fail-on = " + "9" * 5000, "1:11", "a number of 5000 digits"),
        (
            "pyproject.toml",
            "[tool.brainmigrate]\njobs = -" + "1" * 5000,
            "2:8",
            "a number of 5000 digits",
        ),
    ],
)
def test_deep_nesting_and_long_numbers_in_a_configuration_file(notes, name, text, where, reason):
    (notes / name).write_text(text + "\n")
    r = cli("check", "n.md")
    one_line_error(r, f"{name}:{where}: {reason}; fix the file")


# --- notes


def test_notes_that_are_a_fifo_are_refused(notes):
    os.mkfifo(notes / "fifo.md")
    r = cli("check", "fifo.md")
    one_line_error(
        r,
        "fifo.md: not a regular file or a folder; pass notes files, or folders that hold *.md"
        " notes files",
    )


def test_a_notes_file_swapped_for_a_fifo_after_listing_is_refused(notes, monkeypatch):
    real = inputs.open_binary

    def swapped(path):
        os.remove(path)
        os.mkfifo(path)
        return real(path)

    monkeypatch.setattr(inputs, "open_binary", swapped)
    r = cli("check", "n.md")
    one_line_error(r, "n.md: cannot read it (is a FIFO); make it readable or leave it out")


# --- checkouts: the index, anchored files


def test_a_source_file_swapped_for_a_fifo_after_listing_is_a_skipped_file(tmp_path, monkeypatch):
    from brainmigrate.codeindex import CodeIndex
    from brainmigrate.codeindex import index as index_module

    (tmp_path / "a.py").write_text("def f():\n    return 1\n")
    (tmp_path / "b.py").write_text("def g():\n    return 2\n")
    real = index_module.list_files

    def listed_then_swapped(*args, **kwargs):
        files = real(*args, **kwargs)
        os.remove(tmp_path / "b.py")
        os.mkfifo(tmp_path / "b.py")
        return files

    monkeypatch.setattr(index_module, "list_files", listed_then_swapped)
    summary = CodeIndex(tmp_path, cache_dir=tmp_path / "cache").build()
    assert [(s.path, s.reason) for s in summary.skipped] == [("b.py", "unreadable: is a FIFO")]
    assert summary.parsed == 1


@pytest.fixture
def anchored(tmp_path, monkeypatch):
    """A git checkout ``repo`` (``src/shop.py`` with class ``ShoppingCart``, ``b.txt``) and
    a store imported with --verify of notes anchoring the class, lines 2-3 of its file and
    ``b.txt``."""
    from trees import committed

    monkeypatch.chdir(tmp_path)
    committed(
        tmp_path / "repo",
        {
            "src/shop.py": "class ShoppingCart:\n    def total(self):\n        return 0\n",
            "b.txt": "hello\n",
        },
    )
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "n.md").write_text(
        "+ ShoppingCart sums the lines\n"
        "+ the total is in src/shop.py:2-3\n"
        "+ the greeting is in b.txt\n"
    )
    r = cli("import", "notes", "--root", "repo", "--store", "k.db", "--verify")
    assert r.exit_code == 0, r.output
    return tmp_path


def unopenable(monkeypatch, *names: str) -> None:
    """``inputs.open_fd`` raises PermissionError for files named ``names`` (as a file of
    mode 000 does for a user other than root)."""
    real = inputs.open_fd

    def refused(path, **kwargs):
        if os.path.basename(path) in names:
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real(path, **kwargs)

    monkeypatch.setattr(inputs, "open_fd", refused)


def test_an_anchored_file_that_cannot_be_read_is_unreachable_not_gone(anchored, monkeypatch):
    unopenable(monkeypatch, "shop.py")
    r = cli("stale", "--store", "k.db", "--dry-run")
    assert (r.exit_code, r.stdout) == (
        0,
        "notes/n.md:1: k1 unreachable: file cannot be read: src/shop.py (Permission denied)\n"
        "notes/n.md:2: k2 unreachable: file cannot be read: src/shop.py (Permission denied)\n"
        "OK: checked 3, stale 0, unreachable 2 (dry run: nothing recorded)\n",
    )
    r = cli("verify", "k1", "--store", "k.db")
    assert (r.exit_code, r.stdout, r.stderr) == (
        1,
        "k1 refused: file cannot be read: src/shop.py (Permission denied)\n",
        "verified 0, refused 1\n",
    )


def test_an_anchored_file_swapped_for_a_fifo_when_read_is_unreachable(anchored, monkeypatch):
    from brainmigrate import checkouts

    real = checkouts.CheckoutFiles.is_file

    def then_swapped(self, root, rel):
        found = real(self, root, rel)
        if rel == "b.txt" and found and not os.path.exists(anchored / "gone"):
            (anchored / "gone").write_text("")
            os.remove(os.path.join(root, rel))
            os.mkfifo(os.path.join(root, rel))
        return found

    monkeypatch.setattr(checkouts.CheckoutFiles, "is_file", then_swapped)
    r = cli("stale", "--store", "k.db", "--dry-run")
    assert r.stdout.splitlines()[-2:] == [
        "notes/n.md:3: k3 unreachable: file cannot be read: b.txt (is a FIFO)",
        "OK: checked 3, stale 0, unreachable 1 (dry run: nothing recorded)",
    ]


def test_a_large_anchored_file_is_hashed_in_chunks_never_held_whole(tmp_path):
    import tracemalloc

    from brainmigrate.checkouts import STREAMED_OVER, CheckoutFiles
    from brainmigrate.codeindex.extract import digest, normalise_source

    line = b"\xef\xbb\xbf" + b"log line\r\n  with  spaces\t\n" * 40
    data = line * (STREAMED_OVER // len(line) * 3)  # 48 MiB
    (tmp_path / "big.log").write_bytes(data)
    files = CheckoutFiles()
    tracemalloc.start()
    try:
        got = (
            files.content_hash(str(tmp_path), "big.log"),
            files.file_digest(str(tmp_path), "big.log"),
            files.sketch(str(tmp_path), "big.log"),
        )
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    import hashlib

    assert got == (
        hashlib.blake2b(data, digest_size=16).hexdigest(),
        digest(normalise_source(data)),
        None,  # a file this large takes no sketch
    )
    assert peak < 4 * inputs.CHUNK


def test_a_huge_sparse_anchored_file_is_hashed_a_chunk_at_a_time(tmp_path, monkeypatch):
    from brainmigrate.checkouts import CheckoutFiles

    (tmp_path / "huge.bin").write_bytes(b"")
    os.truncate(tmp_path / "huge.bin", 3 << 30)
    sizes: list[int] = []
    real = inputs.chunks

    def counted(handle, size=inputs.CHUNK):
        for n, chunk in enumerate(real(handle, size)):
            sizes.append(len(chunk))
            if n == 2:
                return  # enough to see each read is one chunk
            yield chunk

    monkeypatch.setattr(inputs, "chunks", counted)
    files = CheckoutFiles()
    assert files.content_hash(str(tmp_path), "huge.bin") is not None
    assert files.file_digest(str(tmp_path), "huge.bin") is not None
    assert sizes == [inputs.CHUNK] * 6


def test_notes_swapped_for_a_fifo_before_fix_reads_them_are_refused_unread(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    renamed(tmp_path / "repo", "def f():\n    return 1\n")
    (tmp_path / "n.md").write_text("+ f is in src/old.py\n")
    real = inputs.read_bounded

    def swapped(path, *args):
        if os.path.basename(path) == "n.md":
            os.remove(path)
            os.mkfifo(path)
        return real(path, *args)

    monkeypatch.setattr(inputs, "read_bounded", swapped)
    r = cli("check", "n.md", "--root", "repo", "--fix", "--isolated")
    # the plan refuses the FIFO unread (never waits on it); the check after the fix then
    # finds notes that are no file
    one_line_error(
        r,
        "n.md: not a regular file or a folder; pass notes files, or folders that hold *.md"
        " notes files",
    )
    assert stat.S_ISFIFO(os.lstat(tmp_path / "n.md").st_mode)  # left as it was


def test_a_baseline_read_from_standard_input_is_refused_as_a_fifo(notes):
    import subprocess
    import sys

    r = subprocess.run(
        [sys.executable, "-m", "brainmigrate", "check", "--baseline", "/dev/stdin", "n.md"],
        input=b'{"schema_version": 1, "entries": []}',
        capture_output=True,
        timeout=60,
    )
    assert (r.returncode, r.stdout, r.stderr) == (
        2,
        b"",
        b"brainmigrate: error: --baseline /dev/stdin: is a FIFO, not a file; pass --baseline"
        b" with a baseline file\n",
    )


def test_a_declaration_cache_that_is_a_fifo_is_discarded_not_waited_on(tmp_path):
    from brainmigrate.codeindex import cache

    os.mkfifo(tmp_path / "codeindex-0.bin")
    assert cache.load(tmp_path / "codeindex-0.bin", "x" * 32, tmp_path) == (
        None,
        "discarded: unreadable (is a FIFO)",
    )


def test_a_socket_and_a_file_just_over_the_bound_are_named_as_they_are(tmp_path):
    import socket

    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(tmp_path / "s"))
        with pytest.raises(inputs.NotAFile) as caught:
            inputs.read_bounded(tmp_path / "s", 10, "a thing")
    assert caught.value.strerror == "is a socket"
    (tmp_path / "f").write_bytes(b"")
    os.truncate(tmp_path / "f", inputs.SMALL_FILE_MAX + 1)
    with pytest.raises(inputs.TooLarge) as caught:
        inputs.read_bounded(tmp_path / "f", inputs.SMALL_FILE_MAX, "a baseline")
    assert caught.value.strerror == "is over 16 MB; a baseline is at most 16 MB"


def test_lines_cited_in_a_file_over_the_bound_are_unreachable_not_read(anchored, monkeypatch):
    from brainmigrate import checkouts

    (anchored / "repo" / "src" / "shop.py").write_text(
        "class ShoppingCart:\n    def total(self):\n        return 1\n" + "#\n" * 2000
    )
    monkeypatch.setattr(checkouts, "LINES_READ_MAX", 2048)
    read: list[str] = []
    real = inputs.read_whole

    def whole(path):
        read.append(os.path.basename(path))
        return real(path)

    monkeypatch.setattr(inputs, "read_whole", whole)
    r = cli("stale", "--store", "k.db", "--dry-run")
    reason = "file cannot be read: src/shop.py (is 4 KB; lines are read in files of at most 2 KB)"
    assert (r.exit_code, r.stdout) == (
        0,
        f"notes/n.md:1: k1 unreachable: {reason}\n"
        f"notes/n.md:2: k2 unreachable: {reason}\n"
        "OK: checked 3, stale 0, unreachable 2 (dry run: nothing recorded)\n",
    )
    assert "shop.py" not in read


@pytest.mark.parametrize("cache", ["grammar/*.terminals.json", "templates/*"])
def test_a_fifo_in_the_cache_folder_is_a_miss_never_waited_on(notes, tmp_path, monkeypatch, cache):
    """The grammar's terminals and the templates' bytecode are read from the user cache
    folder on every run: a FIFO there (the declaration cache was refused already) hung
    every run, or every Markdown report."""
    folder = tmp_path / "own-cache"
    env = {**os.environ, "BRAINMIGRATE_CACHE_DIR": str(folder)}
    args = [sys.executable, "-m", "brainmigrate", "check", "n.md", "--root", ".", "--isolated"]
    args += ["--format", "markdown"]
    first = subprocess.run(args, env=env, capture_output=True, timeout=60)
    assert first.returncode == 0
    (found,) = folder.glob(cache)
    found.unlink()
    os.mkfifo(found)
    again = subprocess.run(args, env=env, capture_output=True, timeout=15)
    assert (again.returncode, again.stderr, again.stdout) == (0, b"", first.stdout)


def test_grep_skips_a_file_swapped_for_a_fifo_after_listing(tmp_path):
    """The name scan hands listed files to ``grep -lF``, which read a FIFO put in place of
    one of them and waited for a writer forever."""
    from brainmigrate.codeindex.scan import grep_holders

    for i in range(3):
        (tmp_path / f"f{i}.py").write_text("def loader(): pass\n")
    (tmp_path / "f1.py").unlink()
    os.mkfifo(tmp_path / "f1.py")
    assert grep_holders(str(tmp_path), ["f0.py", "f1.py", "f2.py"], {"loader"}) == {
        "f0.py",
        "f2.py",
    }


def test_standard_input_is_copied_in_chunks_never_held_whole(monkeypatch):
    """``check -`` read standard input whole into memory (``check - < /dev/zero`` grew
    until the kernel killed it): it is copied to its temporary file a chunk at a time."""
    import io

    from brainmigrate.cli.reading import stdin_notes

    class Stream(io.RawIOBase):
        def __init__(self):
            self.left = [b"+ one fact\n"] * 3

        def readable(self):
            return True

        def read(self, size=-1):
            assert size is not None and size > 0, "standard input read whole"
            return self.left.pop() if self.left else b""

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(Stream()))
    with stdin_notes(("-",), None) as (paths, names):
        assert Path(paths[0]).read_bytes() == b"+ one fact\n" * 3
        assert names == {paths[0]: "-"}


def test_a_notes_file_over_the_fix_bound_is_left_with_a_note(tmp_path, monkeypatch):
    """``--fix`` and ``--diff`` read a notes file whole, with its lines and edits (a 1 GB
    file took 6.3 GB): one over ``fix.FIX_MAX`` is left alone with a note, checked still."""
    from brainmigrate import fix

    monkeypatch.chdir(tmp_path)
    renamed(tmp_path, "X = 1\n")
    notes = tmp_path / "n.md"
    notes.write_text("+ X lives in src/old.py\n" + "+ padding fact\n" * 40)
    monkeypatch.setattr(fix, "FIX_MAX", 100)
    r = cli("check", "n.md", "--root", ".", "--isolated", "--diff")
    assert (r.exit_code, r.stdout) == (0, "")
    assert r.stderr == (
        "n.md:1:14: left src/old.py: the notes file is too large to rewrite\n"
        "brainmigrate: note: n.md: is 624 bytes; a notes file --fix rewrites is at most 100"
        " bytes; left alone (fix it by hand)\n"
        "Would fix 0 citations in 0 files; 1 left\n"
    )


def test_a_walked_folder_skips_what_git_ignores(tmp_path, monkeypatch):
    from trees import git

    (tmp_path / "notes/scratch").mkdir(parents=True)
    (tmp_path / "notes/.gitignore").write_text("scratch/*.md\n")
    (tmp_path / "notes/a.md").write_text("+ a fact\n")
    (tmp_path / "notes/scratch/x.md").write_text("+ see src/Gone.kt\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src/Here.kt").write_text("class Here\n")
    git(tmp_path, "init", "-q")
    monkeypatch.chdir(tmp_path)
    r = cli("check", "notes", "--root", ".", "--format", "json")
    assert r.exit_code == 0, r.output
    import json

    assert json.loads(r.stdout)["files"] == ["notes/a.md"]
    named = cli("check", "notes/scratch/x.md", "--root", ".")  # named: read
    assert named.exit_code == 1 and "BM101" in named.stdout
    folder = cli("check", "notes/scratch", "--root", ".")
    assert folder.exit_code == 2
    assert folder.stderr == (
        "brainmigrate: error: notes/scratch: every *.md notes file in this folder is"
        " git-ignored; name the files to read them\n"
    )
