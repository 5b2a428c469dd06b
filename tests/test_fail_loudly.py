"""A ``--root`` typo never turns a run green: ``stale``, ``verify``, ``search`` and ``show``
exit 2 for a root that does not exist (as ``import`` and ``check`` do), and ``stale`` exits
2 when no anchor it read could be read; the store is left as it was."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from clirun import cli
from trees import write

MISSING = "--root nowhere: no such folder; pass --root with the folder of a checkout"


@pytest.fixture
def store(tmp_path: Path, monkeypatch) -> Path:
    """``know.db`` with two facts anchored in ``repo`` (cwd: tmp_path)."""
    monkeypatch.chdir(tmp_path)
    write(tmp_path, {"repo/src/app.py": "def run():\n    return 1\n", "repo/README.md": "hi\n"})
    write(tmp_path, {"notes/app.md": "+ run lives in src/app.py\n+ see README.md\n"})
    r = cli("import", "notes/app.md", "--root", "repo", "--verify", "--isolated")
    assert r.exit_code == 0, r.output
    return tmp_path / "know.db"


@pytest.mark.parametrize(
    "args",
    [
        ["stale"],
        ["stale", "--format", "json"],
        ["stale", "--dry-run"],
        ["verify", "--all"],
        ["search", "run"],
        ["show", "k1"],
    ],
)
def test_a_root_that_does_not_exist_exits_2(store, args):
    before = store.read_bytes()
    r = cli(*args, "--root", "nowhere")
    assert r.exit_code == 2, r.output
    assert r.stderr.strip().splitlines()[-1].endswith(MISSING)
    assert "Traceback" not in r.output
    assert store.read_bytes() == before


def test_a_root_that_is_a_file_exits_2(store):
    r = cli("stale", "--root", "notes/app.md")
    assert r.exit_code == 2, r.output
    assert "--root notes/app.md: is not a folder" in r.stderr


def test_stale_exits_2_when_no_anchor_could_be_read(store, tmp_path):
    before = store.read_bytes()
    shutil.move(tmp_path / "repo", tmp_path / "elsewhere")
    # the root as the store records it: relative to the store's folder
    for fmt in ("text", "json", "github"):
        r = cli("stale", "--format", fmt)
        assert r.exit_code == 2, r.output
        assert (
            r.stderr.strip()
            .splitlines()[-1]
            .endswith(
                "no anchor could be read in the roots recorded with them (repo):"
                " 2 anchored facts unreachable; check --root"
            )
        )
        assert r.stdout == ""
    assert store.read_bytes() == before
    # the checkout named: read there
    r = cli("stale", "--root", "elsewhere")
    assert r.exit_code == 0, r.output
    # a folder that exists but holds none of the files is not "unreachable": gone
    (tmp_path / "empty").mkdir()
    r = cli("stale", "--root", "empty", "--dry-run")
    assert r.exit_code == 1, r.output


def test_search_and_show_read_the_anchors_in_the_root_given(store, tmp_path):
    shutil.move(tmp_path / "repo", tmp_path / "elsewhere")
    (tmp_path / "elsewhere/src/app.py").write_text("def run():\n    return 2\n")
    r = cli("show", "k1", "--root", "elsewhere", "--format", "json")
    assert r.exit_code == 0, r.output
    assert '"status": "stale"' in r.stdout
    r = cli("search", "run", "--root", "elsewhere")
    assert r.exit_code == 0, r.output
    assert "STALE" in r.stdout
