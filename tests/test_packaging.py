"""The wheel ships the grammar and the tree-sitter queries; the loader finds them."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from brainmigrate.read import notation

REPO = Path(__file__).resolve().parent.parent


def test_grammar_loads_from_the_checkout_in_an_editable_install():
    assert notation.grammar_text() == (REPO / "grammar" / "notation.lark").read_text()


def test_wheel_contains_grammar_and_queries(tmp_path):
    pytest.importorskip("build")
    done = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(tmp_path)],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    (wheel,) = tmp_path.glob("brainmigrate-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "brainmigrate/grammar/notation.lark" in names
    assert "brainmigrate/codeindex/queries/kotlin.scm" in names
    assert "brainmigrate/reports/templates/text.j2" in names
    grammar = zipfile.ZipFile(wheel).read("brainmigrate/grammar/notation.lark").decode()
    assert grammar == (REPO / "grammar" / "notation.lark").read_text()
