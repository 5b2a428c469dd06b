"""Name lookup parses only files holding a declaration shape of a name (issue 14).

The prefilter (``languages.DECLARATION_SHAPES``) must let through every file tree-sitter
finds a type or function declaration of the name in: then what a name anchors to is what
parsing every file that mentions it gives. Checked declaration by declaration on the
hand-written samples of every language and on real trees (the venv's own packages; the Go
standard library when Debian's ``golang-src`` is installed), and end to end on lookups.
"""

from __future__ import annotations

import glob
import re
from pathlib import Path

import click
import jinja2
import lark
import pytest

from brainmigrate.codeindex import CodeIndex, resolve_symbol
from brainmigrate.codeindex.extract import extract
from brainmigrate.codeindex.languages import declaration_shape, language_for
from brainmigrate.codeindex.model import category_of

CASES = Path(__file__).resolve().parent / "codeindex_cases"
PACKAGES = [Path(m.__file__).resolve().parent for m in (lark, click, jinja2)]
GO_SRC = sorted(glob.glob("/usr/share/go-*/src/net"))  # apt-get install golang-src
CAMEL = re.compile(rb"\b[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*\b")


def misses(files: list[tuple[Path, str]]) -> list[tuple[str, str, str]]:
    """(file, kind, name) of each type or function declaration no shape lets through."""
    out = []
    for path, language in files:
        data = path.read_bytes()
        for row in extract(data, language)[1]:
            name, kind = row[0], row[1]
            if category_of(kind) == "other":
                continue
            shape = declaration_shape(language, name)
            if shape is not None and not shape(data):
                out.append((str(path), kind, name))
    return out


def sources(root: Path) -> list[tuple[Path, str]]:
    found = []
    for path in sorted(root.rglob("*")):
        language = language_for(path.name, True) if path.is_file() else None
        if language is not None:
            found.append((path, language))
    return found


def test_every_sample_declaration_has_its_shape():
    files = sources(CASES)
    assert len({lang for _, lang in files}) == 15
    assert misses(files) == []


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.name)
def test_every_declaration_of_a_real_python_package_has_its_shape(package):
    assert misses(sources(package)) == []


@pytest.mark.skipif(not GO_SRC, reason="Go sources missing: apt-get install golang-src")
def test_every_declaration_of_go_net_has_its_shape():
    files = sources(Path(GO_SRC[-1]))
    assert len(files) > 250
    assert misses(files) == []


def lookups(root: Path, tmp_path: Path) -> None:
    """Every CamelCase word of the tree (at most 300): the same anchors with the shapes
    and with every mentioning file parsed, and fewer files parsed."""
    words: set[str] = set()
    for path, _ in sources(root):
        words.update(w.decode() for w in CAMEL.findall(path.read_bytes()))
    names = sorted(words)[:: max(1, len(words) // 300)]
    shaped = CodeIndex(root, cache_dir=tmp_path / "a")
    every = CodeIndex(root, cache_dir=tmp_path / "b")
    every.shapes = False
    got, want = shaped.declarations_of(names), every.declarations_of(names)
    for name in names:
        assert resolve_symbol(got.get(name, [])) == resolve_symbol(want.get(name, [])), name
    assert shaped.parse_count < every.parse_count
    assert shaped.shape_skips > 0


def test_lookups_on_a_real_python_tree(tmp_path):
    lookups(PACKAGES[0], tmp_path)


@pytest.mark.skipif(not GO_SRC, reason="Go sources missing: apt-get install golang-src")
def test_lookups_on_go_net(tmp_path):
    lookups(Path(GO_SRC[-1]), tmp_path)


def test_implied_names_are_the_index_default_names():
    from brainmigrate.codeindex.extract import _DEFAULT_NAMES
    from brainmigrate.codeindex.languages import IMPLIED_NAMES

    assert set(_DEFAULT_NAMES.values()) == IMPLIED_NAMES


def test_a_large_go_const_block_is_extracted_as_before():
    """Each spec of a grouped const keeps its own lines; a lone spec takes the keyword's
    (the count of specs is made once per block, not once per spec)."""
    specs = "".join(f"\tErrCode{i} = {i}\n" for i in range(3000))
    src = f"package p\n\nconst (\n{specs})\n\nconst Lone = 1\n".encode()
    rows = extract(src, "go")[1]
    assert len(rows) == 3001
    assert [(r[0], r[1], r[3], r[4]) for r in rows[:2]] == [
        ("ErrCode0", "constant", 4, 4),
        ("ErrCode1", "constant", 5, 5),
    ]
    assert (rows[-1][0], rows[-1][3], rows[-1][5]) == ("Lone", 3006, 3006)
