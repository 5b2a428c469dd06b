"""Imports against real trees not written for the tests: this checkout and lark's package."""

from __future__ import annotations

from pathlib import Path

import lark

from brainmigrate import importer, reports
from brainmigrate.read.run import ImportOptions

REPO = Path(__file__).resolve().parent.parent
LARK = Path(lark.__file__).resolve().parent


def line_of(path: Path, needle: str) -> int:
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if needle in line:
            return n
    raise AssertionError(f"{needle!r} not in {path}")


def test_notes_about_this_checkout_and_an_installed_package(tmp_path):
    notes = tmp_path / "parser.md"
    fast_line = line_of(REPO / "brainmigrate" / "read" / "notation.py", "class FastClassifier")
    notes.write_text(
        "+ the grammar lives in grammar/notation.lark and ships in the wheel TER-1\n"
        "~ FastClassifier composes one regex from the grammar's terminals, see\n"
        "  brainmigrate/read/notation.py:100-140\n"
        "= lark's LALR parser is parsers/lalr_parser.py in the second root\n"
        "! the old parser brainmigrate/old_parser.py is gone\n"
        "+ every package has an __init__.py; __main__.py is the thin shell\n",
        encoding="utf-8",
    )
    options = ImportOptions(roots=[REPO, LARK], cache_dir=tmp_path / "cache")
    data = reports.report(importer.import_notes([notes], options, tmp_path / "k.db", dry_run=True))
    anchors = {
        f["id"]: [(a["path"], a["root"], a["lines"], a["symbol"], a["how"]) for a in f["anchors"]]
        for f in data["facts"]
    }
    assert anchors == {
        "k1": [("grammar/notation.lark", 0, None, None, "cited")],
        "k2": [
            ("brainmigrate/read/notation.py", 0, [100, 140], None, "cited"),
            (
                "brainmigrate/read/notation.py",
                0,
                [fast_line, _end_of_class(fast_line)],
                "FastClassifier",
                "camelcase",
            ),
        ],
        "k3": [("parsers/lalr_parser.py", 1, None, None, "cited")],
        "k4": [],
        "k5": [("brainmigrate/__main__.py", 0, None, None, "bare-name")],
    }
    assert [(g["fact"], g["path"], g["line"], g["col"]) for g in data["gone"]] == [
        ("k4", "brainmigrate/old_parser.py", 5, 18)
    ]
    (amb,) = data["ambiguous"]
    assert amb["name"] == "__init__.py" and "brainmigrate/__init__.py" in amb["candidates"]


def _end_of_class(first: int) -> int:
    lines = (REPO / "brainmigrate" / "read" / "notation.py").read_text().splitlines()
    last = first
    for n in range(first, len(lines)):
        text = lines[n]
        if text and not text.startswith((" ", "\t")):
            break
        if text.strip():
            last = n + 1
    return last
