"""The declaration query skips what cannot hold a declaration (``languages.QUERY_PRUNING``):
the rows, error flags and file digests are those of a query over the whole tree, checked on
the hand-written samples, on crafted corners (local types, inline structs and interfaces,
syntax errors) and on the Go standard library when Debian's ``golang-src`` is installed."""

from __future__ import annotations

import glob
from pathlib import Path

import pytest

from brainmigrate.codeindex import extract as extract_module
from brainmigrate.codeindex.extract import extract_file
from brainmigrate.codeindex.languages import QUERY_PRUNING, language_for

CASES = Path(__file__).resolve().parent / "codeindex_cases"
GO_SRC = sorted(glob.glob("/usr/share/go-*/src"))  # apt-get install golang-src

CORNERS = {
    "go": [
        b"package p\n\nfunc f() {\n\ttype local struct{ A int }\n\tvar x struct {\n\t\tB string\n"
        b"\t}\n\t_ = x\n}\n",
        b"package p\n\nfunc g(v interface {\n\tM() int\n}) struct{ C int } {\n"
        b"\treturn struct{ C int }{}\n}\n",
        b"package p\n\nfunc h() {\n\tm := map[string]struct{}{}\n\tvar i interface{} = m\n"
        b"\tswitch i.(type) {\n\t}\n}\n",
        b"package p\n\nfunc broken( {\n\ttype T struct { X int }\n}\n\ntype U struct { Y int }\n",
        b"package p\n\nvar v = func() int {\n\ttype In interface{ Z() }\n\treturn 1\n}()\n",
        b"package p\n\nfunc f2() {\n\ttype local = int\n\ttype other []string\n}\n",
        b"package p\n\nfunc /* type */ k() { /* struct { */ }\n",
    ],
}


#: A function with nothing to declare: with it, a corner is mostly skipped by the query.
FILLER = {"go": b"\nfunc filler() {\n" + b"\tx := 1\n\t_ = x\n" * 40 + b"}\n"}


def unpruned(data: bytes, language: str, monkeypatch: pytest.MonkeyPatch):
    with monkeypatch.context() as m:
        m.setattr(extract_module, "query_pruning", lambda _language: None)
        return extract_file(data, language)


def sources(root: Path) -> list[tuple[Path, str]]:
    found = []
    for path in sorted(root.rglob("*")):
        language = language_for(path.name, False) if path.is_file() else None
        if language in QUERY_PRUNING and path.stat().st_size <= 1_000_000:
            found.append((path, language))
    return found


def test_every_pruned_language_has_corners():
    assert set(QUERY_PRUNING) <= set(CORNERS) & set(FILLER)


@pytest.mark.parametrize("filler", [False, True], ids=["alone", "with-filler"])
@pytest.mark.parametrize(
    ("language", "data"),
    [(lang, data) for lang, cases in CORNERS.items() for data in cases],
)
def test_pruning_keeps_the_rows_of_a_corner(language, data, filler, monkeypatch):
    if filler:
        data += FILLER[language]
    assert extract_file(data, language) == unpruned(data, language, monkeypatch)


def test_pruning_keeps_the_rows_of_the_samples(monkeypatch):
    files = sources(CASES)
    assert files
    for path, language in files:
        data = path.read_bytes()
        assert extract_file(data, language) == unpruned(data, language, monkeypatch), path


@pytest.mark.skipif(not GO_SRC, reason="Go sources missing: apt-get install golang-src")
@pytest.mark.parametrize("folder", ["cmd/compile/internal/types2", "net", "syscall"])
def test_pruning_keeps_the_rows_of_the_go_library(folder, monkeypatch):
    root = Path(GO_SRC[-1]) / folder
    files = sources(root)
    assert len(files) > 100
    different = [
        str(path)
        for path, language in files
        if extract_file(data := path.read_bytes(), language)
        != unpruned(data, language, monkeypatch)
    ]
    assert different == []
