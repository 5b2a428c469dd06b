"""Digests taken only where they are read: ``build`` and name lookups parse without them,
``read_files`` with them (and caches them, for names too)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clirun import invoker
from trees import git, write

from brainmigrate.codeindex import CodeIndex, parallel
from brainmigrate.codeindex import parse as parse_module
from brainmigrate.codeindex import scan as scan_module
from brainmigrate.codeindex.extract import extract_file, rows_to_declarations
from brainmigrate.codeindex.model import FileState

RUST = """\
/// A fee table.
#[derive(Debug, Clone)]
pub struct FeeTable {
    pub rate: u32,
}

impl FeeTable {
    pub fn charge(&self, amount: u32) -> u32 {
        amount * self.rate / 100
    }
}
"""
TYPESCRIPT = """\
export class ApiClient {
  @retry(3)
  get(path: string): string {
    return this.base + path;
  }
}
"""
GO = (
    "package pay\n\ntype Ledger struct {\n\tTotal int\n}\n\n"
    "func (l *Ledger) Add(n int) {\n\tl.Total += n\n}\n"
)
PYTHON = 'class Alpha:\n    """Doc."""\n\n    x = 1\n\n    def go(self):\n        return 2\n'
KOTLIN = "class Gateway(val key: String) {\n    fun charge(amount: Int): Int = amount * 2\n}\n"
FILES = {
    "src/fees.rs": RUST,
    "web/api.ts": TYPESCRIPT,
    "pay/ledger.go": GO,
    "pkg/alpha.py": PYTHON,
    "app/Gateway.kt": KOTLIN,
}
LANGUAGES = {
    "src/fees.rs": "rust",
    "web/api.ts": "typescript",
    "pay/ledger.go": "go",
    "pkg/alpha.py": "python",
    "app/Gateway.kt": "kotlin",
}


def state_of(root: Path, rel: str) -> FileState:
    """What ``extract_file`` with digests says of ``rel``: the state ``read_files`` gives."""
    _error, rows, digest = extract_file((root / rel).read_bytes(), LANGUAGES[rel])
    return FileState(tuple(rows_to_declarations(rows, rel, LANGUAGES[rel])), digest)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    write(root, FILES)
    return root


@pytest.mark.parametrize("rel", sorted(FILES))
def test_without_digests_the_rows_are_the_same_but_their_digests(rel):
    data = FILES[rel].encode()
    error, rows, digest = extract_file(data, LANGUAGES[rel])
    bare_error, bare, bare_digest = extract_file(data, LANGUAGES[rel], digests=False)
    assert (bare_error, bare_digest) == (error, None)
    assert [r[:6] for r in bare] == [r[:6] for r in rows]
    assert {r[6:] for r in bare} == {(None, None)}
    assert digest is not None and all(r[6] is not None for r in rows)


def test_attributes_and_decorators_start_a_declaration_without_digests_too():
    rust = extract_file(RUST.encode(), "rust", digests=False)[1]
    assert [r[:6] for r in rust] == [
        ("FeeTable", "struct", None, 2, 5, 3),
        ("rate", "field", "FeeTable", 4, 4, 4),
        ("FeeTable", "impl", None, 7, 11, 7),
        ("charge", "method", "FeeTable", 8, 10, 8),
    ]
    ts = extract_file(TYPESCRIPT.encode(), "typescript", digests=False)[1]
    assert [r[:6] for r in ts] == [
        ("ApiClient", "class", None, 1, 6, 1),
        ("get", "method", "ApiClient", 2, 5, 3),
    ]


def test_a_build_takes_no_digests_and_read_files_takes_them_once(root, tmp_path):
    cache = tmp_path / "cache"
    idx = CodeIndex(root, cache_dir=cache)
    assert idx.build().parsed == 5
    charge = idx.lookup("charge")
    assert [(d.path, d.lines, d.signature_digest, d.body_digest) for d in charge] == [
        ("app/Gateway.kt", (2, 2), None, None),
        ("src/fees.rs", (8, 10), None, None),
    ]
    got = idx.read_files(["src/fees.rs", "web/api.ts"])
    assert got == {rel: state_of(root, rel) for rel in ("src/fees.rs", "web/api.ts")}
    assert idx.parse_count == 5 + 2  # the two read parsed again, with digests, once
    assert idx.read_files(["src/fees.rs"]) == {"src/fees.rs": got["src/fees.rs"]}
    assert idx.parse_count == 7
    # a new object: the cache holds the digests now, and they serve names and builds too
    again = CodeIndex(root, cache_dir=cache)
    assert again.read_files(["src/fees.rs", "web/api.ts"]) == got
    assert again.parse_count == 0
    assert again.build().parsed == 0
    assert [d.body_digest is not None for d in again.lookup("charge")] == [False, True]
    everything = again.read_files(sorted(FILES))
    assert everything == {rel: state_of(root, rel) for rel in sorted(FILES)}
    assert again.parse_count == 3


def test_a_name_lookup_takes_no_digests_and_read_files_takes_them_once(root, tmp_path):
    cache = tmp_path / "cache"
    idx = CodeIndex(root, cache_dir=cache)
    [ledger] = idx.declarations_of(["Ledger"])["Ledger"]
    assert (ledger.path, ledger.signature_digest, ledger.body_digest) == (
        "pay/ledger.go",
        None,
        None,
    )
    assert idx.parse_count == 1
    assert idx.read_files(["pay/ledger.go"]) == {"pay/ledger.go": state_of(root, "pay/ledger.go")}
    assert idx.parse_count == 2
    again = CodeIndex(root, cache_dir=cache)
    [ledger] = again.declarations_of(["Ledger"])["Ledger"]
    assert ledger == state_of(root, "pay/ledger.go").declarations[0]
    assert again.read_files(["pay/ledger.go"])["pay/ledger.go"] == state_of(root, "pay/ledger.go")
    assert again.parse_count == 0


def test_the_pool_takes_digests_as_one_process_does(root, tmp_path, monkeypatch):
    monkeypatch.setattr(parse_module, "POOL_THRESHOLD", 1)
    monkeypatch.setattr(parallel, "usable_cpus", lambda: 2)
    idx = CodeIndex(root, cache_dir=tmp_path / "cache", workers=2)
    idx.build()
    assert {d.signature_digest for rel in FILES for d in idx.lookup("charge")} == {None}
    assert idx.read_files(sorted(FILES)) == {rel: state_of(root, rel) for rel in sorted(FILES)}
    assert idx.parse_count == 10


@pytest.mark.parametrize("pool", [False, True])
def test_lookups_take_digests_when_asked_in_the_pool_too(root, tmp_path, monkeypatch, pool):
    if pool:
        monkeypatch.setattr(scan_module, "SCAN_POOL_THRESHOLD", 1)
        monkeypatch.setattr(parallel, "usable_cpus", lambda: 2)
    idx = CodeIndex(root, cache_dir=tmp_path / "cache", workers=2)
    idx.lookup_digests = True
    found = idx.declarations_of(["FeeTable", "ApiClient"])
    assert found == {
        "ApiClient": [state_of(root, "web/api.ts").declarations[0]],
        "FeeTable": [d for d in state_of(root, "src/fees.rs").declarations if d.name == "FeeTable"],
    }
    assert [d.kind for d in found["FeeTable"]] == ["struct", "impl"]
    assert idx.parse_count == 2
    assert idx.read_files(["src/fees.rs", "web/api.ts"]) == {
        rel: state_of(root, rel) for rel in ("src/fees.rs", "web/api.ts")
    }
    assert idx.parse_count == 2


def test_read_files_without_the_cache_takes_digests_after_a_build(root, tmp_path):
    idx = CodeIndex(root, cache_dir=tmp_path / "cache")
    idx.build()
    got = idx.read_files(["src/fees.rs"], cached=False)
    assert got == {"src/fees.rs": state_of(root, "src/fees.rs")}


cli = invoker(catch_exceptions=False)


def test_stale_after_an_index_reads_digests_not_the_index_entries(tmp_path, monkeypatch):
    """``index`` caches the edited file without digests; ``stale`` over that cache must
    parse it again with them: a body edit is a body change, not a signature change."""
    repo = tmp_path / "repo"
    write(repo, FILES)
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "sources")
    notes = tmp_path / "notes.md"
    notes.write_text(
        "+ FeeTable holds the rate as a percentage TER-1\n"
        "+ ApiClient adds the path to its base TER-2\n"
        "+ the fee rules live in src/fees.rs TER-3\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    cache = tmp_path / "cache"
    store = tmp_path / "know.db"
    r = cli("import", "notes.md", "--root", "repo", "--store", store, "--verify")
    assert r.exit_code == 0, r.output
    path = repo / "src/fees.rs"
    path.write_text(RUST.replace("rate: u32", "rate: u64"), encoding="utf-8")
    r = cli("index", "--root", repo, "--cache-dir", cache, "--no-progress")
    assert r.exit_code == 0, r.output
    r = cli("stale", "--store", store, "--cache-dir", cache, "--format", "json", "--dry-run")
    states = {f["id"]: (f["state"], f["reason"]) for f in json.loads(r.output)["facts"]}
    assert states == {
        "k1": ("body changed", "STALE: body changed: src/fees.rs#FeeTable"),
        "k2": ("fresh", None),
        "k3": ("body changed", "STALE: body changed: src/fees.rs"),
    }


def test_import_verify_parses_each_file_it_looks_names_up_in_once(tmp_path, monkeypatch):
    """The lookups of ``import --verify`` take the digests its fingerprints read next; a
    plain import's lookups take none (then ``read_files`` parses the file again)."""
    repo = tmp_path / "repo"
    write(repo, FILES)
    (tmp_path / "notes.md").write_text(
        "+ FeeTable holds the rate as a percentage TER-1\n"
        "+ ApiClient adds the path to its base TER-2\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    real = parse_module.extract_file
    parsed: list[tuple[bytes, bool]] = []

    def counted(data: bytes, language: str, **options):
        parsed.append((data.split(b"\n")[0], options.get("digests", True)))
        return real(data, language, **options)

    monkeypatch.setattr(parse_module, "extract_file", counted)
    rust, ts = b"/// A fee table.", b"export class ApiClient {"
    for verify, cache, digests in ((["--verify"], "c1", True), ([], "c2", False)):
        parsed.clear()
        store = tmp_path / f"{cache}.db"
        args = ("import", "notes.md", "--root", "repo", "--store", store, "--cache-dir", cache)
        r = cli(*args, *verify)
        assert r.exit_code == 0, r.output
        assert sorted(parsed) == [(rust, digests), (ts, digests)]
        parsed.clear()
        idx = CodeIndex(repo, cache_dir=tmp_path / cache)
        assert idx.read_files(["src/fees.rs"]) == {"src/fees.rs": state_of(repo, "src/fees.rs")}
        assert idx.parse_count == (0 if digests else 1)
