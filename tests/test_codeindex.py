"""The declaration index: listing, cache, lazy lookups, full builds, resolve_symbol."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import unicodedata
from pathlib import Path

import click
import lark
import pytest

import brainmigrate.codeindex.parse as parse_module
import brainmigrate.codeindex.scan as scan_module
from brainmigrate import importer, inputs, reports
from brainmigrate.codeindex import CodeIndex, Declaration, RootError, resolve_symbol
from brainmigrate.codeindex.cache import MAGIC, cache_file, default_cache_dir
from brainmigrate.codeindex.listing import IgnoreRules, parse_gitignore
from brainmigrate.read.run import ImportOptions


def write(root: Path, rel: str, text: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=Test", "-c", "user.email=test@example.com", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


@pytest.fixture
def cache_dir(tmp_path: Path) -> Path:
    return tmp_path / "cache"


@pytest.fixture
def plain(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty folder that git does not see as a work tree."""
    root = tmp_path / "tree"
    root.mkdir()
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    return root


def line_of(path: Path, pattern: str) -> int:
    """The 1-based line of the single line of ``path`` that matches ``pattern`` at its start."""
    lines = path.read_text(encoding="utf-8").splitlines()
    (hit,) = [i for i, line in enumerate(lines, 1) if re.match(pattern, line)]
    return hit


# --- real packages ----------------------------------------------------------------------


def test_click_package_full_build(cache_dir: Path) -> None:
    root = Path(click.__file__).parent
    idx = CodeIndex(root, cache_dir=cache_dir)
    summary = idx.build()
    py_files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.py"))
    assert summary.by_language["python"].files == len(py_files)
    assert summary.parsed == len(py_files) and summary.cache_hits == 0
    assert summary.cache_status == "created"

    (command,) = [d for d in idx.lookup("Command") if d.category == "type"]
    assert (command.path, command.kind, command.container) == ("core.py", "class", None)
    assert command.name_line == line_of(root / "core.py", r"class Command[(:]")
    assert command.lines[0] == command.name_line and command.lines[1] > command.lines[0] + 100
    invoke = [d for d in idx.lookup("invoke") if d.container == "Command"]
    assert [(d.kind, d.path) for d in invoke] == [("method", "core.py")]
    assert resolve_symbol([d for d in idx.lookup("Group")])[0] == "unique"

    warm = CodeIndex(root, cache_dir=cache_dir).build()
    assert (warm.parsed, warm.cache_hits, warm.cache_status) == (0, len(py_files), "used")
    assert warm.declarations == summary.declarations


def test_lark_package_lazy_lookup(cache_dir: Path) -> None:
    root = Path(lark.__file__).parent
    idx = CodeIndex(root, cache_dir=cache_dir)
    found = idx.declarations_of(["Lark", "LarkOptions"])
    status, (decl,) = resolve_symbol(found["Lark"])
    assert status == "unique"
    assert (decl.path, decl.kind, decl.category) == ("lark.py", "class", "type")
    assert decl.name_line == line_of(root / "lark.py", r"class Lark[(:]")
    assert resolve_symbol(found["LarkOptions"])[1][0].path == "lark.py"
    # only files declaring a name (class Lark..., def Lark...) were parsed: lark.py
    assert idx.parse_count == 1
    mentioning = [
        p for p in idx.files() if p.endswith((".py", ".pyi")) and b"Lark" in (root / p).read_bytes()
    ]
    assert idx.shape_skips == len(mentioning) - 1
    # without the declaration shapes every file naming one is parsed: the same anchors
    every = CodeIndex(root, use_cache=False)
    every.shapes = False
    all_found = every.declarations_of(["Lark", "LarkOptions"])
    assert every.parse_count == len(mentioning) < len([p for p in idx.files() if p.endswith(".py")])
    for name in ("Lark", "LarkOptions"):
        assert resolve_symbol(found[name]) == resolve_symbol(all_found[name])


# --- lazy lookups -----------------------------------------------------------------------


def test_many_names_find_what_few_names_find(plain: Path, tmp_path: Path) -> None:
    # more than FEW_NAMES names: files are matched on their words, not name by name
    write(plain, "pkg/gateway.py", "class PaymentGateway:\n    def charge(self):\n        pass\n")
    write(plain, "pkg/ledger.kt", "class LedgerRepository {\n  fun post() {}\n}\n")
    write(plain, "pkg/other.py", "GW = PaymentGatewayFactory()\nclass Ünïcode:\n    pass\n")
    names = ["PaymentGateway", "LedgerRepository", "charge", "Ünïcode"]
    names += [f"Unused{i}Name" for i in range(40)]
    few = {}
    for name in names[:4]:
        few.update(CodeIndex(plain, cache_dir=tmp_path / f"few-{name}").declarations_of([name]))
    many_idx = CodeIndex(plain, cache_dir=tmp_path / "many")
    many = many_idx.declarations_of(names)
    assert many == few and sorted(many) == [
        "LedgerRepository",
        "PaymentGateway",
        "charge",
        "Ünïcode",
    ]
    assert many_idx.parse_count == 3


def test_declarations_of_parses_only_candidates(plain: Path, cache_dir: Path) -> None:
    for i in range(48):
        write(plain, f"pkg/mod{i:02}.py", f"def helper_{i}():\n    return {i}\n")
    write(plain, "pkg/gateway.py", "class PaymentGateway:\n    def charge(self):\n        pass\n")
    write(plain, "pkg/use.py", "from .gateway import PaymentGateway\n\nGW = PaymentGateway()\n")
    write(plain, "notes.md", "PaymentGateway is described here\n")
    idx = CodeIndex(plain, cache_dir=cache_dir)
    found = idx.declarations_of(["PaymentGateway", "Nowhere"])
    # use.py names PaymentGateway but declares no type or function of that name: not parsed
    assert (idx.parse_count, idx.shape_skips) == (1, 1)
    assert "Nowhere" not in found
    (decl,) = found["PaymentGateway"]
    assert (decl.path, decl.kind, decl.lines, decl.name_line) == (
        "pkg/gateway.py",
        "class",
        (1, 3),
        1,
    )
    # asking again parses nothing; a name no file holds parses nothing either
    idx.declarations_of(["PaymentGateway", "charge", "AlsoNowhere"])
    assert idx.parse_count == 1
    assert idx.lookup("charge")[0].container == "PaymentGateway"
    # the parsed files went to the cache: a new index answers without parsing
    again = CodeIndex(plain, cache_dir=cache_dir)
    assert [d.path for d in again.declarations_of(["PaymentGateway"])["PaymentGateway"]] == [
        "pkg/gateway.py"
    ]
    assert again.parse_count == 0
    # and a full build then only parses the other 49
    assert again.build().parsed == 49


# --- cache ------------------------------------------------------------------------------


def small_tree(root: Path) -> None:
    write(root, "a.py", "class Alpha:\n    pass\n")
    write(root, "b.py", "def beta():\n    return 1\n")
    write(root, "src/c.go", "package c\n\ntype Gamma struct{}\n")


def test_warm_run_and_touched_file(plain: Path, cache_dir: Path) -> None:
    small_tree(plain)
    first = CodeIndex(plain, cache_dir=cache_dir).build()
    assert (first.parsed, first.cache_hits) == (3, 0)
    assert Path(first.cache_path or "").parent == cache_dir
    warm = CodeIndex(plain, cache_dir=cache_dir).build()
    assert (warm.parsed, warm.cache_hits, warm.cache_status) == (0, 3, "used")
    st = (plain / "b.py").stat()
    os.utime(plain / "b.py", ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    touched = CodeIndex(plain, cache_dir=cache_dir).build()
    assert (touched.parsed, touched.cache_hits) == (1, 2)


def test_same_size_same_mtime_edit_is_noticed(plain: Path, cache_dir: Path) -> None:
    small_tree(plain)
    CodeIndex(plain, cache_dir=cache_dir).build()
    path = plain / "a.py"
    st = path.stat()
    path.write_text("class Delta:\n    pass\n", encoding="utf-8")  # same size
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    idx = CodeIndex(plain, cache_dir=cache_dir)
    assert idx.build().parsed == 1
    assert [d.name for d in idx.lookup("Delta")] == ["Delta"] and idx.lookup("Alpha") == []


@pytest.mark.parametrize(
    ("damage", "status"),
    [
        (lambda b: b"garbage" * 10, "discarded: not a cache file or truncated; rebuilt"),
        (
            lambda b: b[: len(b) // 2],
            "discarded: checksum mismatch (corrupt or truncated); rebuilt",
        ),
        (
            lambda b: b[:-1] + bytes([b[-1] ^ 1]),
            "discarded: checksum mismatch (corrupt or truncated); rebuilt",
        ),
        (lambda b: MAGIC + b"0" * 32 + b[len(MAGIC) + 32 :], "discarded: other version; rebuilt"),
        (lambda b: b"", "discarded: not a cache file or truncated; rebuilt"),
    ],
    ids=["garbage", "truncated", "flipped-bit", "other-version", "empty"],
)
def test_bad_cache_is_discarded_and_rebuilt(
    plain: Path, cache_dir: Path, damage, status: str
) -> None:
    small_tree(plain)
    first = CodeIndex(plain, cache_dir=cache_dir).build()
    path = Path(first.cache_path or "")
    path.write_bytes(damage(path.read_bytes()))
    rebuilt = CodeIndex(plain, cache_dir=cache_dir).build()
    assert (rebuilt.parsed, rebuilt.cache_hits, rebuilt.cache_status) == (3, 0, status)
    assert rebuilt.declarations == first.declarations
    after = CodeIndex(plain, cache_dir=cache_dir).build()
    assert (after.parsed, after.cache_status) == (0, "used")


def test_cache_of_another_root_is_not_trusted(plain: Path, cache_dir: Path, tmp_path: Path) -> None:
    small_tree(plain)
    other = tmp_path / "other"
    small_tree(other)
    CodeIndex(other, cache_dir=cache_dir).build()
    os.replace(cache_file(cache_dir, other.resolve()), cache_file(cache_dir, plain.resolve()))
    summary = CodeIndex(plain, cache_dir=cache_dir).build()
    assert (summary.parsed, summary.cache_status) == (3, "discarded: unexpected content; rebuilt")


def test_unwritable_cache_dir_still_works(plain: Path, tmp_path: Path) -> None:
    small_tree(plain)
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where the cache folder should go\n")
    idx = CodeIndex(plain, cache_dir=blocker / "cache")
    summary = idx.build()
    assert summary.parsed == 3 and summary.declarations == 3
    assert summary.cache_status.startswith("disabled: cannot write")
    assert summary.cache_path is None
    assert [d.path for d in idx.lookup("Gamma")] == ["src/c.go"]


def test_default_cache_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("BRAINMIGRATE_CACHE_DIR", str(tmp_path / "explicit"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "explicit"
    monkeypatch.delenv("BRAINMIGRATE_CACHE_DIR")
    assert default_cache_dir() == tmp_path / "xdg" / "brainmigrate"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_cache_dir() == tmp_path / "home" / ".cache" / "brainmigrate"


def test_env_cache_dir_is_used_and_argument_overrides(
    plain: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    small_tree(plain)
    monkeypatch.setenv("BRAINMIGRATE_CACHE_DIR", str(tmp_path / "envcache"))
    assert Path(CodeIndex(plain).build().cache_path or "").parent == tmp_path / "envcache"
    explicit = CodeIndex(plain, cache_dir=tmp_path / "arg").build()
    assert Path(explicit.cache_path or "").parent == tmp_path / "arg"
    assert CodeIndex(plain, use_cache=False).build().cache_status == "disabled: off"


# --- full build -------------------------------------------------------------------------


def test_build_summary_skips_and_progress(
    plain: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    small_tree(plain)
    write(plain, "bin.py", b"x = 1\0\1\2")
    write(plain, "big.js", "var x = 1;\n" * 200)  # 2200 bytes
    write(plain, "locked.rs", "fn f() {}\n")
    write(plain, "broken.py", "class Ok:\n    pass\n\ndef broken(:\n")
    write(plain, "README.md", "not a source file\n")
    real_open = inputs.open_fd

    def fake_open(path, *args, **kwargs):
        if str(path).endswith("locked.rs"):
            raise PermissionError(13, "Permission denied")
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(inputs, "open_fd", fake_open)
    calls: list[tuple[int, int]] = []
    idx = CodeIndex(plain, cache_dir=cache_dir, max_bytes=1000)
    summary = idx.build(progress=lambda done, total: calls.append((done, total)))
    assert summary.files == 8 and summary.listing == "scandir"
    assert [(s.path, s.reason) for s in summary.skipped] == [
        ("big.js", "too large (2200 bytes > 1000)"),
        ("bin.py", "binary"),
        ("locked.rs", "unreadable: Permission denied"),
    ]
    assert summary.to_dict()["by_language"] == {
        "go": {"files": 1, "declarations": 1, "errors": 0},
        "python": {"files": 3, "declarations": 4, "errors": 1},  # broken() is kept
    }
    assert summary.error_files == ("broken.py",)
    assert idx.has_error("broken.py") is True and idx.has_error("a.py") is False
    assert summary.parsed == 4 and summary.cache_hits == 0
    assert calls[0] == (0, 7) and calls[-1] == (7, 7)
    assert json.loads(json.dumps(idx.summary_dict()))["skipped"][1] == {
        "path": "bin.py",
        "reason": "binary",
    }
    # skips are cached too; the unreadable file is tried again. A cached skip is a skip,
    # not a cache hit: parsed + cache hits + skipped is the 7 source files, cold and warm
    assert summary.parsed + summary.cache_hits + len(summary.skipped) == 7
    warm_calls: list[tuple[int, int]] = []
    warm = CodeIndex(plain, cache_dir=cache_dir, max_bytes=1000).build(
        progress=lambda done, total: warm_calls.append((done, total))
    )
    assert (warm.parsed, warm.cache_hits) == (0, 4)
    assert [s.path for s in warm.skipped] == ["big.js", "bin.py", "locked.rs"]
    assert warm.parsed + warm.cache_hits + len(warm.skipped) == 7
    assert warm_calls[0] == (6, 7) and warm_calls[-1] == (7, 7)


def test_pool_build_matches_in_process_build(
    plain: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(12):
        write(plain, f"m{i}.py", f"class C{i}:\n    def m(self):\n        return {i}\n")
        write(plain, f"k{i}.kt", f"class K{i} {{\n    fun m() = {i}\n}}\n")
    serial = CodeIndex(plain, use_cache=False)
    serial.build()
    monkeypatch.setattr(parse_module, "POOL_THRESHOLD", 4)
    pooled = CodeIndex(plain, cache_dir=tmp_path / "c")
    summary = pooled.build()
    assert summary.parsed == 24
    assert summary.by_language["kotlin"].declarations == 24
    for name in ("C3", "K7", "m"):
        assert pooled.lookup(name) == serial.lookup(name)
    assert len(pooled.lookup("m")) == 24


def test_pool_lookup_matches_in_process_lookup(
    plain: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(30):
        write(plain, f"m{i:02}.py", f"class C{i}:\n    def m(self):\n        return C{i + 1}\n")
    write(plain, "use.py", "from m01 import C1\n\nX = C1()\n")
    write(plain, "again.py", "class C5:\n    pass\n")
    names = ["C1", "C5", "C17", "Nowhere"]
    serial = CodeIndex(plain, use_cache=False)
    expected = serial.declarations_of(names)
    monkeypatch.setattr(scan_module, "SCAN_POOL_THRESHOLD", 4)
    pooled = CodeIndex(plain, cache_dir=tmp_path / "c")
    assert pooled.declarations_of(names) == expected
    assert (pooled.parse_count, pooled.shape_skips) == (serial.parse_count, serial.shape_skips)
    assert pooled.parse_count == 4 and pooled.shape_skips > 0
    assert [d.path for d in expected["C5"]] == ["again.py", "m05.py"]
    again = CodeIndex(plain, cache_dir=tmp_path / "c")
    assert again.declarations_of(names) == expected and again.parse_count == 0


def test_h_is_cpp_only_next_to_cpp_sources(plain: Path, tmp_path: Path) -> None:
    write(plain, "inc/x.h", "class Widget { int w; };\n")
    write(plain, "src/y.cc", "int main() { return 0; }\n")
    assert CodeIndex(plain, use_cache=False).build().by_language.keys() == {"cpp"}
    c_root = tmp_path / "c_only"
    write(c_root, "inc/x.h", "struct widget { int w; };\n")
    write(c_root, "src/y.c", "int main(void) { return 0; }\n")
    assert CodeIndex(c_root, use_cache=False).build().by_language.keys() == {"c"}


# --- listing ----------------------------------------------------------------------------


def test_git_listing(tmp_path: Path, cache_dir: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    write(repo, ".gitignore", "*.log\nsecret/\n")
    write(repo, "tracked.py", "def tracked():\n    pass\n")
    write(repo, "build/gen.py", "class Generated:\n    pass\n")
    write(repo, "sub/inner.py", "class Inner:\n    pass\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "start")
    write(repo, "untracked.py", "class Untracked:\n    pass\n")
    write(repo, "debug.log", "ignored\n")
    write(repo, "secret/key.py", "KEY = 1\n")
    write(repo, "outside_target.py", "x = 1\n").rename(tmp_path / "elsewhere.py")
    (repo / "escape.py").symlink_to(tmp_path / "elsewhere.py")
    (repo / "alias.py").symlink_to("tracked.py")
    (repo / "dirlink").symlink_to("sub", target_is_directory=True)
    idx = CodeIndex(repo, cache_dir=cache_dir)
    assert idx.listing_way == "git"
    assert idx.files() == [
        ".gitignore",
        "alias.py",
        "build/gen.py",
        "sub/inner.py",
        "tracked.py",
        "untracked.py",
    ]
    assert [d.path for d in idx.lookup("Untracked")] == ["untracked.py"]
    # a sub-folder of the work tree as root: paths relative to it
    sub = CodeIndex(repo / "sub", cache_dir=cache_dir)
    assert (sub.listing_way, sub.files()) == ("git", ["inner.py"])
    assert [(d.path, d.name_line) for d in sub.lookup("Inner")] == [("inner.py", 1)]


def test_git_listing_includes_submodules_and_nested_repositories(
    tmp_path: Path, cache_dir: Path
) -> None:
    # A class declared only in a submodule, or in an untracked nested repository, is found
    # in a git work tree as it is in the same tree without .git; ignored files stay out.
    lib = tmp_path / "ledger-lib"
    lib.mkdir()
    git(lib, "init", "-q")
    write(lib, ".gitignore", "*.gen.kt\n")
    write(lib, "src/LedgerVault.kt", "package lib\n\nclass LedgerVault {\n  fun post() {}\n}\n")
    write(lib, "vault.py", "class VaultIndex:\n    pass\n")
    git(lib, "add", ".")
    git(lib, "commit", "-q", "-m", "lib")
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    write(repo, "app/Main.kt", "class MainApp\n")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "sub")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "app with submodule")
    write(repo, "sub/Local.gen.kt", "class GeneratedOnly\n")  # ignored by the submodule
    write(repo, "sub/untracked.py", "class SubUntracked:\n    pass\n")
    nested = repo / "vendor" / "tool"
    nested.mkdir(parents=True)
    git(nested, "init", "-q")
    write(nested, ".gitignore", "out/\n")
    write(nested, "Tool.kt", "class ToolThing\n")
    write(nested, "out/Built.kt", "class BuiltThing\n")

    idx = CodeIndex(repo, cache_dir=cache_dir)
    assert idx.listing_way == "git"
    assert idx.files() == [
        ".gitmodules",
        "app/Main.kt",
        "sub/.gitignore",
        "sub/src/LedgerVault.kt",
        "sub/untracked.py",
        "sub/vault.py",
        "vendor/tool/.gitignore",
        "vendor/tool/Tool.kt",
    ]
    names = ["LedgerVault", "VaultIndex", "SubUntracked", "ToolThing", "GeneratedOnly"]
    found = idx.declarations_of(names)
    assert {n: [d.path for d in ds] for n, ds in found.items()} == {
        "LedgerVault": ["sub/src/LedgerVault.kt"],
        "VaultIndex": ["sub/vault.py"],
        "SubUntracked": ["sub/untracked.py"],
        "ToolThing": ["vendor/tool/Tool.kt"],
    }
    # the same tree without .git finds the same declarations
    plain = tmp_path / "plain"
    shutil.copytree(repo, plain, ignore=shutil.ignore_patterns(".git"))
    walked = CodeIndex(plain, cache_dir=cache_dir).declarations_of(names)
    assert {n: [d.path for d in ds] for n, ds in walked.items()} == {
        n: [d.path for d in ds] for n, ds in found.items()
    }

    # an import anchors the submodule's class, and check has nothing to say about it
    notes = tmp_path / "notes.md"
    notes.write_text("+ LedgerVault posts entries, see sub/src/LedgerVault.kt\n")
    options = ImportOptions(roots=[str(repo)], cache_dir=str(cache_dir))
    result = importer.import_notes([str(notes)], options, tmp_path / "k.db", dry_run=True)
    data = reports.report(result)
    (fact,) = data["facts"]
    assert [
        (a["kind"], a["path"], a.get("symbol"), a["lines"], a["how"]) for a in fact["anchors"]
    ] == [
        ("file", "sub/src/LedgerVault.kt", None, None, "cited"),
        ("symbol", "sub/src/LedgerVault.kt", "LedgerVault", [3, 5], "camelcase"),
    ]
    assert data["totals"]["gone"] == 0 and data["gone"] == []


def test_scandir_listing_with_gitignore(plain: Path) -> None:
    write(
        plain, ".gitignore", "# comment\n*.log\n!keep.log\n/top_only.txt\ntmp/\ndocs/**/draft.md\n"
    )
    for rel in [
        "a.py",
        "app.log",
        "keep.log",
        "top_only.txt",
        "deep/top_only.txt",
        "tmp/x.py",
        "deep/tmp/y.py",
        "build/gen.py",
        "dist/out.js",
        "docs/a/b/draft.md",
        "docs/draft.md",  # a/**/b also matches a/b
        "docs/final.md",
        "pkg/.gitignore",
        "pkg/local.py",
        "pkg/kept.py",
        ".hg/store",
        ".svn/entries",
        "real/x.py",
    ]:
        write(plain, rel, "x = 1\n")
    write(plain, "pkg/.gitignore", "local.py\n")
    (plain / "dirlink").symlink_to("real", target_is_directory=True)
    (plain / "alias.py").symlink_to("a.py")
    outside = plain.parent / "outside.py"
    outside.write_text("x = 1\n")
    (plain / "escape.py").symlink_to(outside)
    (plain / "dangling.py").symlink_to(plain / "missing.py")
    idx = CodeIndex(plain, use_cache=False)
    assert idx.listing_way == "scandir"
    assert idx.files() == [
        ".gitignore",
        "a.py",
        "alias.py",
        "build/gen.py",
        "deep/top_only.txt",
        "dist/out.js",
        "docs/final.md",
        "keep.log",
        "pkg/.gitignore",
        "pkg/kept.py",
        "real/x.py",
    ]


def test_gitignore_rules() -> None:
    rules = IgnoreRules().extended(parse_gitignore("a/**/b\n**/c\n[xy].txt\nd?\\!e\n", ""))
    assert rules.ignored("a/b", False) and rules.ignored("a/1/2/b", False)
    assert not rules.ignored("z/a/b", False)
    assert rules.ignored("c", False) and rules.ignored("q/r/c", True)
    assert rules.ignored("x.txt", False) and not rules.ignored("z.txt", False)
    assert rules.ignored("d1!e", False) and not rules.ignored("d12!e", False)


def test_files_named_compares_after_nfc(plain: Path) -> None:
    nfd = unicodedata.normalize("NFD", "café.py")
    write(plain, f"one/{nfd}", "x = 1\n")
    write(plain, "two/café.py", "x = 1\n")
    write(plain, "two/other.py", "x = 1\n")
    idx = CodeIndex(plain, use_cache=False)
    assert idx.files_named("café.py") == [f"one/{nfd}", "two/café.py"]
    assert idx.files_named(nfd) == [f"one/{nfd}", "two/café.py"]
    assert idx.files_named("missing.py") == []


def test_root_errors(tmp_path: Path) -> None:
    with pytest.raises(RootError, match="does not exist"):
        CodeIndex(tmp_path / "nope")
    write(tmp_path, "file.txt", "x\n")
    with pytest.raises(RootError, match="is not a folder"):
        CodeIndex(tmp_path / "file.txt")
    assert issubclass(RootError, ValueError)


def test_summary_before_build(plain: Path) -> None:
    with pytest.raises(RuntimeError, match="build"):
        CodeIndex(plain, use_cache=False).summary_dict()


# --- resolve_symbol ---------------------------------------------------------------------


def decl(
    path: str, kind: str, category: str, line: int, name: str = "PaymentGateway"
) -> Declaration:
    return Declaration(
        name=name,
        kind=kind,
        category=category,
        container=None,
        path=path,
        lines=(line, line + 3),
        name_line=line,
        language="kotlin",
        signature_digest="0" * 24,
        body_digest=None,
    )


def test_resolve_unique_picks_first_by_line() -> None:
    first = decl("a/Gateway.kt", "class", "type", 3)
    second = decl("a/Gateway.kt", "object", "type", 20)
    elsewhere_fn = decl("b/Util.kt", "function", "function", 5)
    assert resolve_symbol([second, first, elsewhere_fn]) == ("unique", [first])


def test_resolve_ambiguous_gives_one_per_file() -> None:
    a1 = decl("a.kt", "class", "type", 9)
    a2 = decl("a.kt", "typealias", "type", 2)
    b = decl("b.kt", "interface", "type", 4)
    assert resolve_symbol([b, a1, a2]) == ("ambiguous", [a2, b])


def test_resolve_types_before_functions() -> None:
    fn1 = decl("a.kt", "function", "function", 1)
    fn2 = decl("b.kt", "method", "function", 1)
    assert resolve_symbol([fn1, fn2]) == ("ambiguous", [fn1, fn2])
    ty = decl("c.kt", "class", "type", 7)
    assert resolve_symbol([fn1, ty, fn2]) == ("unique", [ty])


def test_resolve_none() -> None:
    assert resolve_symbol([]) == ("none", [])
    assert resolve_symbol([decl("a.kt", "property", "other", 1)]) == ("none", [])
    with pytest.raises(ValueError, match="single name"):
        resolve_symbol(
            [decl("a.kt", "class", "type", 1), decl("b.kt", "class", "type", 1, name="Other")]
        )


def test_root_ignored_by_its_enclosing_work_tree_is_walked(tmp_path: Path) -> None:
    # A package folder inside a git checkout's ignored .venv, named as a root: git would
    # list nothing there; the index walks it instead.
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text(".venv/\n")
    pkg = tmp_path / ".venv" / "lib" / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "core.py").write_text("class PaymentGateway:\n    pass\n")
    idx = CodeIndex(pkg, cache_dir=tmp_path / "cache")
    assert (idx.listing_way, idx.files()) == ("scandir", ["core.py"])
    assert [d.path for d in idx.declarations_of(["PaymentGateway"])["PaymentGateway"]] == [
        "core.py"
    ]


def test_read_files_gives_declarations_and_digest_cached_or_not(tmp_path):
    """Some files cached by an earlier lookup (without digests), one not: every one comes
    back, with digests (saving the cache takes the listing again, which must not lose the
    answers)."""
    from brainmigrate.codeindex.extract import digest

    root = tmp_path / "root"
    root.mkdir()
    (root / "a.py").write_text(
        '# a comment outside\nimport os\n\n\nclass Alpha:\n    """Doc."""\n\n    x = 1\n',
        encoding="utf-8",
    )
    (root / "b.py").write_text("def beta():\n    return 2\n", encoding="utf-8")
    (root / "c.md").write_text("# not source\n", encoding="utf-8")
    cache = tmp_path / "cache"
    CodeIndex(root, cache_dir=cache).declarations_of(["Alpha"])  # caches a.py only
    idx = CodeIndex(root, cache_dir=cache)
    got = idx.read_files(["a.py", "b.py", "c.md", "gone.py"])
    assert got["c.md"] is None and got["gone.py"] is None
    assert [(d.name, d.kind, d.lines) for d in got["a.py"].declarations] == [
        ("Alpha", "class", (5, 8)),
        ("x", "field", (8, 8)),
    ]
    assert [(d.name, d.lines) for d in got["b.py"].declarations] == [("beta", (1, 2))]
    # a.py was cached by the lookup without digests: parsed again with them, as b.py is
    assert idx.parse_count == 2
    assert CodeIndex(root, cache_dir=cache).read_files(["a.py", "b.py"]) == {
        "a.py": got["a.py"],
        "b.py": got["b.py"],
    }
    # digests are over tokens: the file digest leaves out the comment; the body digest
    # the docstring
    assert got["a.py"].digest == digest(b'import os class Alpha : """ Doc. """ x = 1')
    alpha = got["a.py"].declarations[0]
    assert alpha.body_digest == digest(b"class Alpha : x = 1")
    assert alpha.signature_digest == digest(b"class Alpha :")


def test_read_files_without_the_cache_gives_the_same(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    (root / "b.py").write_text("class Beta:\n    def go(self):\n        return 2\n", "utf-8")
    cache = tmp_path / "cache"
    cached = CodeIndex(root, cache_dir=cache).read_files(["b.py", "none.py"])
    plain = CodeIndex(root, cache_dir=tmp_path / "other").read_files(
        ["b.py", "none.py"], cached=False
    )
    assert plain == cached
    assert [d.qualname for d in plain["b.py"].declarations] == ["Beta", "Beta.go"]
    assert not (tmp_path / "other").exists()
