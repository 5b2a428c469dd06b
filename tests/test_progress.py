"""Progress on stderr: the status line, its ETA, and when import, check and index draw it."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from click.testing import CliRunner

from brainmigrate import progress
from brainmigrate.cli import main

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_eta_is_measured_from_the_stages_first_count():
    out, clock = io.StringIO(), Clock()
    bar = progress.Progress(out, clock)
    bar.show("indexing: listing files", force=True)
    clock.now += 25  # listing a big tree; then 40,000 cache hits arrive at once
    bar.count("indexing", 40_000, 50_000)
    clock.now += 2
    bar.count("indexing", 40_100, 50_000)
    assert out.getvalue().split("\r")[1:] == [
        "indexing: listing files",
        "indexing: 40,000/50,000 files (80 %)",
        "indexing: 40,100/50,000 files (80 %), ETA 3:18",  # 9,900 left at 50 a second
    ]


def test_no_eta_before_a_second_and_redraws_are_throttled():
    out, clock = io.StringIO(), Clock()
    bar = progress.Progress(out, clock)
    bar.count("reading notes", 0, 10, extra="0 lines")
    clock.now += 0.05
    bar.count("reading notes", 1, 10, extra="10 lines")  # within 1/10 s: not drawn
    clock.now += 0.5
    bar.count("reading notes", 2, 10, extra="20 lines")
    clock.now += 0.01
    bar.count("reading notes", 10, 10, extra="99 lines")  # the last count is always drawn
    bar.close()
    assert out.getvalue().split("\r")[1:] == [
        "reading notes: 0/10 files (0 %), 0 lines",
        "reading notes: 2/10 files (20 %), 20 lines",
        "reading notes: 10/10 files (100 %), 99 lines",
        " " * 44,
        "",
    ]


@pytest.mark.parametrize(
    ("seconds", "shown"), [(0, "0:00"), (59.6, "1:00"), (3599, "59:59"), (3600 * 50, "50:00:00")]
)
def test_duration(seconds, shown):
    assert progress.duration(seconds) == shown


def test_drawn_only_on_a_terminal_without_ci_unless_turned_off(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    assert progress.enabled(Tty()) is True
    assert progress.enabled(io.StringIO()) is False
    assert progress.enabled(Tty(), asked=False) is False
    monkeypatch.setenv("CI", "true")
    assert progress.enabled(Tty()) is False


@pytest.fixture
def terminal(monkeypatch):
    """stderr counts as a terminal (CliRunner's is not)."""
    monkeypatch.setattr(progress, "enabled", lambda stream, asked=True: asked)


def notes(tmp_path: Path) -> Path:
    (tmp_path / "n.md").write_text("+ one fact\n+ another fact\n\n")
    return tmp_path / "n.md"


def test_import_shows_files_and_lines_read_then_the_merge(tmp_path, terminal):
    store = tmp_path / "k.db"
    got = CliRunner().invoke(main, ["import", str(notes(tmp_path)), "--store", str(store)])
    assert got.exit_code == 0, got.output
    assert [line.rstrip() for line in got.stderr.split("\r")[1:4]] == [
        "reading notes: 1/1 files (100 %), 3 lines",
        "merging 2 fact lines (3 lines read)",
        "writing the store: 2 fact lines (3 lines read)",
    ]
    got = CliRunner().invoke(
        main, ["import", str(notes(tmp_path)), "--store", str(store), "--no-progress"]
    )
    assert got.stderr == ""


def test_check_shows_reading_then_checking(tmp_path, terminal, monkeypatch):
    monkeypatch.chdir(tmp_path)
    got = CliRunner().invoke(main, ["check", str(notes(tmp_path))])
    assert [line.rstrip() for line in got.stderr.split("\r")[1:3]] == [
        "reading notes: 1/1 files (100 %), 3 lines",
        "checking 2 fact lines (3 lines read)",
    ]
    assert CliRunner().invoke(main, ["check", str(notes(tmp_path)), "--no-progress"]).stderr == ""
    assert CliRunner().invoke(main, ["check", str(notes(tmp_path)), "-q"]).stderr == ""


def test_index_counts_files(tmp_path, terminal):
    args = ["index", "--root", str(SAMPLES / "roots/app"), "--cache-dir", str(tmp_path)]
    got = CliRunner().invoke(main, args)
    assert got.exit_code == 0, got.output
    drawn = [line.rstrip() for line in got.stderr.split("\r")[1:]]
    assert drawn[0] == "indexing: listing files"
    assert drawn[-3:] == ["indexing: 6/6 files (100 %)", "", ""]  # then the line is cleared
    assert CliRunner().invoke(main, [*args, "--no-progress"]).stderr == ""
