"""A check over some notes files meets the baseline entries of those files only: the
others' entries are kept by ``--update-baseline`` and never reported as no longer
occurring (docs/check.md, "Baseline")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clirun import cli
from trees import write


def entries(path: Path) -> list[tuple]:
    data = json.loads(path.read_text())
    return [(e["file"], e["path"], e["count"]) for e in data["entries"]]


@pytest.fixture
def notes(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    write(tmp_path, {"repo/src/app.py": "X = 1\n"})
    write(
        tmp_path,
        {
            "notes/one.md": "+ one cites src/gone_one.py\n",
            "notes/two.md": "+ two cites src/gone_two.py\n+ two also src/gone_three.py\n",
        },
    )
    r = cli("check", "notes", "--root", "repo", "--isolated", "--baseline", "bl.json",
            "--update-baseline")  # fmt: skip
    assert r.exit_code == 0, r.output
    return tmp_path


def test_a_partial_update_keeps_the_other_files_entries(notes):
    assert entries(notes / "bl.json") == [
        ("notes/one.md", "src/gone_one.py", 1),
        ("notes/two.md", "src/gone_three.py", 1),
        ("notes/two.md", "src/gone_two.py", 1),
    ]
    write(notes, {"notes/one.md": "+ one cites src/app.py\n"})  # fixed
    r = cli("check", "notes/one.md", "--root", "repo", "--isolated", "--baseline", "bl.json",
            "--update-baseline")  # fmt: skip
    assert r.exit_code == 0, r.output
    assert entries(notes / "bl.json") == [
        ("notes/two.md", "src/gone_three.py", 1),
        ("notes/two.md", "src/gone_two.py", 1),
    ]
    r = cli("check", "notes", "--root", "repo", "--isolated", "--baseline", "bl.json")
    assert r.exit_code == 0, r.output
    assert "no longer" not in r.output


def test_a_partial_update_from_another_folder_keeps_the_other_files_entries(notes, monkeypatch):
    """Run from inside ``notes/``: ``notes/two.md`` is there from the folder above, so its
    entries are not a deleted file's and stay."""
    monkeypatch.chdir(notes / "notes")
    r = cli("check", "one.md", "--root", "../repo", "--isolated", "--baseline", "../bl.json",
            "--update-baseline")  # fmt: skip
    assert r.exit_code == 0, r.output
    assert entries(notes / "bl.json") == [
        ("one.md", "src/gone_one.py", 1),
        ("notes/two.md", "src/gone_three.py", 1),
        ("notes/two.md", "src/gone_two.py", 1),
    ]


def test_a_partial_run_reports_only_its_files_entries_as_gone(notes):
    write(notes, {"notes/one.md": "+ one cites src/app.py\n"})
    r = cli("check", "notes/two.md", "--root", "repo", "--isolated", "--baseline", "bl.json",
            "--format", "json")  # fmt: skip
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["baseline"]["vanished"] == []
    assert data["totals"]["baselined"] == 2
    r = cli("check", "notes/one.md", "--root", "repo", "--isolated", "--baseline", "bl.json")
    assert r.exit_code == 0, r.output
    assert "Baseline bl.json: 1 entry no longer occurs" in r.stdout.splitlines()
    assert "gone_two" not in r.stdout


def test_an_entry_of_a_deleted_file_is_every_runs(notes):
    (notes / "notes/one.md").unlink()
    r = cli("check", "notes/two.md", "--root", "repo", "--isolated", "--baseline", "bl.json",
            "--update-baseline")  # fmt: skip
    assert r.exit_code == 0, r.output
    assert [e[0] for e in entries(notes / "bl.json")] == ["notes/two.md", "notes/two.md"]


def test_a_baseline_without_files_is_met_by_scope(notes):
    data = json.loads((notes / "bl.json").read_text())
    for e in data["entries"]:
        del e["file"]
    (notes / "bl.json").write_text(json.dumps(data))
    r = cli("check", "notes/two.md", "--root", "repo", "--isolated", "--baseline", "bl.json",
            "--update-baseline")  # fmt: skip
    assert r.exit_code == 0, r.output
    assert entries(notes / "bl.json") == [
        ("", "src/gone_one.py", 1),  # area:one: a file this run did not read
        ("notes/two.md", "src/gone_three.py", 1),
        ("notes/two.md", "src/gone_two.py", 1),
    ]


def test_an_update_over_a_baseline_it_cannot_read_writes_nothing(notes):
    """An entry the reader refuses (a code that is no finding code) made the update start
    from nothing: a run over ``one.md`` rewrote the baseline with its own entries only and
    dropped ``two.md``'s, exit 0. The baseline must be read to keep them: exit 2, as it was."""
    data = json.loads((notes / "bl.json").read_text())
    data["entries"][0]["code"] = "<img src=x>"
    (notes / "bl.json").write_text(json.dumps(data))
    before = (notes / "bl.json").read_bytes()
    r = cli("check", "notes/one.md", "--root", "repo", "--isolated", "--baseline", "bl.json",
            "--update-baseline")  # fmt: skip
    assert (r.exit_code, r.stderr) == (
        2,
        'brainmigrate: error: --baseline bl.json: entry 1: code is "<img src=x>", not a finding'
        ' code (docs/check.md, "Finding codes"); fix it, or remove it and write a new one with'
        " --update-baseline\n",
    )
    assert (notes / "bl.json").read_bytes() == before
