"""Files a user path names are read bounded (issue 26, "Unbounded"): a FIFO, a device or
a file too large for its kind is a one-line error, exit 2, before a byte of it is read; a
file swapped for a FIFO after it was listed is refused the same way, never waited on;
5000-deep nesting and 5000-digit numbers in a baseline or configuration file are an error
at their line and column, not an internal error. Each run has an alarm: a hang fails the
test instead of holding the suite."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from clirun import cli

from brainmigrate import inputs


class Hung(Exception):
    """The run blocked (on a FIFO) past the test's alarm."""


@pytest.fixture(autouse=True)
def alarm():
    """Fail (raise ``Hung`` in the blocked call) a test that runs over 20 seconds."""

    def ring(signum, frame):
        raise Hung("blocked")

    before = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, 20)
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
        "--baseline bl.json: is 24 GB; a baseline is at most 16 MB; fix it, or write it again"
        " with --update-baseline",
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
        r, f"--baseline bl.json:{where}: {reason}; fix it, or write it again with --update-baseline"
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
