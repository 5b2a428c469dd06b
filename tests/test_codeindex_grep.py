"""Name lookups narrowed by grep (issue 14): the files grep picks are the only ones read,
and the answer is the one reading every file gives; without grep, or when it fails, every
file is read as before."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import brainmigrate.codeindex.scan as scan_module
from brainmigrate.codeindex import CodeIndex

REPO = Path(__file__).resolve().parent.parent


def write(root: Path, rel: str, data: str | bytes) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data, encoding="utf-8")


@pytest.fixture(autouse=True)
def grep_for_any_count(monkeypatch: pytest.MonkeyPatch) -> None:
    """grep also for the few files of these trees (it starts for more than 100)."""
    monkeypatch.setattr(scan_module, "GREP_MIN_FILES", 0)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    write(root, "a.py", "class Widget:\n    pass\n\nclass Ünïcode:\n    pass\n")
    write(root, "b.py", "from a import Widget\n\nclass WidgetFactory(Widget):\n    pass\n")
    write(root, "c.kt", "class Gadget {\n    fun run() = 1\n}\n")
    write(root, "d.py", "x = 'no names here'\n")
    write(root, "-dash.py", "class Gadget:\n    pass\n")
    write(root, "bin.py", b"class Widget:\n\0\0\0 binary\n")
    write(root, "big.py", "# pad\n" * 300 + "class Widget:\n    pass\n")
    return root


def lookups(root: Path, cache: Path, names: list[str], *, max_bytes: int = 1000) -> tuple:
    idx = CodeIndex(root, cache_dir=cache, max_bytes=max_bytes)
    found = idx.declarations_of(names)
    return found, idx.parse_count, idx.shape_skips, idx.cache_path.read_bytes()


NAMES = ["Widget", "Gadget", "Ünïcode", "Nowhere", "-e", "Widget\nGadget"]


def test_grep_picked_lookup_equals_reading_every_file(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if shutil.which("grep") is None:
        pytest.skip("no grep on PATH")
    held = scan_module.grep_holders(
        str(tree), sorted(p.name for p in tree.iterdir()), {"Widget", "-e"}
    )
    assert held is not None and {"a.py", "b.py", "bin.py", "big.py"} <= held
    assert "d.py" not in held and "c.kt" not in held
    with_grep = lookups(tree, tmp_path / "g", NAMES)
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None)
    assert scan_module.grep_holders(str(tree), ["a.py"], {"Widget"}) is None
    without = lookups(tree, tmp_path / "n", NAMES)
    assert with_grep == without
    assert [d.path for d in with_grep[0]["Widget"]] == ["a.py"]


def test_many_names_with_grep_equal_reading_every_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """More names than FEW_NAMES (whole words) on a real tree: this project's sources."""
    names = [f"Name{i}" for i in range(40)] + ["CodeIndex", "Declaration", "main", "run"]
    root = REPO / "brainmigrate"
    with_grep = lookups(root, tmp_path / "g", names, max_bytes=1_000_000)
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None)
    assert lookups(root, tmp_path / "n", names, max_bytes=1_000_000) == with_grep
    assert with_grep[0]["CodeIndex"]


def test_a_failing_grep_means_every_file_is_read(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = tmp_path / "bin" / "grep"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho a.py\nexit 2\n")
    fake.chmod(0o755)
    expected = lookups(tree, tmp_path / "n", NAMES)
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: str(fake))
    assert scan_module.grep_holders(str(tree), ["a.py"], {"Widget"}) is None
    assert lookups(tree, tmp_path / "f", NAMES) == expected


def test_scan_pool_without_grep_matches_one_process(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(30):
        write(tree, f"m{i:02}.py", f"class C{i}:\n    def m(self):\n        return Widget\n")
    expected = lookups(tree, tmp_path / "one", NAMES + ["C7"])
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None)
    monkeypatch.setattr(scan_module, "SCAN_POOL_THRESHOLD", 4)
    from brainmigrate.codeindex import parallel

    monkeypatch.setattr(parallel, "usable_cpus", lambda: 2)
    assert lookups(tree, tmp_path / "pool", NAMES + ["C7"]) == expected


def test_a_small_tree_starts_no_grep(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scan_module, "GREP_MIN_FILES", 100)

    def no_grep(*args, **kwargs):
        raise AssertionError("grep started for a few files")

    monkeypatch.setattr(scan_module, "grep_holders", no_grep)
    assert lookups(tree, tmp_path / "c", NAMES)[0]["Widget"]


def test_scan_pool_of_grep_picked_files_matches_one_process(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if shutil.which("grep") is None:
        pytest.skip("no grep on PATH")
    for i in range(30):
        write(tree, f"m{i:02}.py", f"class C{i}:\n    def m(self):\n        return Widget\n")
    expected = lookups(tree, tmp_path / "one", NAMES + ["C7"])
    monkeypatch.setattr(scan_module, "SCAN_POOL_PICKED", 4)
    from brainmigrate.codeindex import parallel

    monkeypatch.setattr(parallel, "usable_cpus", lambda: 2)
    assert lookups(tree, tmp_path / "pool", NAMES + ["C7"]) == expected
