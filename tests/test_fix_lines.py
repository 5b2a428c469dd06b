"""``check --fix`` of a cited path with lines whose file moved and changed (docs/check.md
"Fixing moved paths"): the line form is rewritten to where the cited text stands in the
file at its new place, so the note does not point at other code; text found nowhere, and
line forms other than ``:N``, ``:N-M`` and their ``#LN`` fragments, are left as written.
Found on requests' history: ``src/requests/utils.py:37`` kept after the move became a
blank line."""

from __future__ import annotations

from pathlib import Path

import pytest
from clirun import cli
from trees import committed, git

UTILS = "".join(f"VALUE_{i} = {i}\n" for i in range(1, 11))


@pytest.fixture
def moved(tmp_path: Path, monkeypatch) -> Path:
    """``repo/src/utils.py`` moved to ``repo/src/requests/utils.py`` with three lines put
    on top (one commit each); the current folder is ``tmp_path``."""
    monkeypatch.chdir(tmp_path)
    repo = committed(tmp_path / "repo", {"src/utils.py": UTILS})
    (repo / "src/requests").mkdir()
    git(repo, "mv", "src/utils.py", "src/requests/utils.py")
    git(repo, "commit", "-qm", "move")
    path = repo / "src/requests/utils.py"
    path.write_text('"""Utilities."""\n\nimport os\n' + UTILS, encoding="utf-8")
    git(repo, "commit", "-qam", "header")
    return tmp_path


def fixed(base: Path, notes: str) -> tuple[int, str]:
    (base / "notes").mkdir(exist_ok=True)
    (base / "notes/n.md").write_bytes(notes.encode("utf-8"))
    r = cli("check", "notes", "--root", "repo", "--fix", "--isolated")
    return r.exit_code, (base / "notes/n.md").read_text(encoding="utf-8")


def test_the_cited_lines_follow_their_text_into_the_moved_file(moved):
    notes = (
        "+ VALUE_5 is 5, src/utils.py:5 TER-1\n"
        "+ the middle values are in src/utils.py:4-6 TER-2\n"
        "+ a range written with an en dash, src/utils.py:4\u20136 TER-3\n"
    )
    assert fixed(moved, notes) == (
        0,
        "+ VALUE_5 is 5, src/requests/utils.py:8 TER-1\n"
        "+ the middle values are in src/requests/utils.py:7-9 TER-2\n"
        "+ a range written with an en dash, src/requests/utils.py:7\u20139 TER-3\n",
    )


def test_lines_whose_text_is_gone_or_in_another_form_are_left_as_written(moved):
    repo = moved / "repo"
    path = repo / "src/requests/utils.py"
    path.write_text(path.read_text(encoding="utf-8").replace("VALUE_2 = 2", "VALUE_2 = 20"))
    git(repo, "commit", "-qam", "VALUE_2 changed")
    notes = (
        "+ VALUE_2 is 2, src/utils.py:2 TER-1\n"
        "+ see [the values](src/utils.py#L5C3) TER-2\n"
        "+ several ranges, src/utils.py:1-2,5 TER-3\n"
    )
    assert fixed(moved, notes) == (
        0,
        "+ VALUE_2 is 2, src/requests/utils.py:2 TER-1\n"
        "+ see [the values](src/requests/utils.py#L5C3) TER-2\n"
        "+ several ranges, src/requests/utils.py:1-2,5 TER-3\n",
    )


def test_a_line_fragment_follows_its_text_in_its_own_style(moved):
    """``#L5``, ``#L4-L6`` (GitHub) and ``#L4-6`` (GitLab) move with the text as ``:5``
    does: left as written they pointed at other code, and the check passed."""
    notes = (
        "+ see [the value](src/utils.py#L5) TER-1\n"
        "+ see [the values](src/utils.py#L4-L6) TER-2\n"
        "+ see src/utils.py#L4-6 TER-3\n"
    )
    assert fixed(moved, notes) == (
        0,
        "+ see [the value](src/requests/utils.py#L8) TER-1\n"
        "+ see [the values](src/requests/utils.py#L7-L9) TER-2\n"
        "+ see src/requests/utils.py#L7-9 TER-3\n",
    )


def test_a_rename_that_kept_the_lines_leaves_them(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    repo = committed(tmp_path / "repo", {"src/utils.py": UTILS})
    git(repo, "mv", "src/utils.py", "src/helpers.py")
    git(repo, "commit", "-qm", "rename")
    r = fixed(tmp_path, "+ VALUE_5 is 5, src/utils.py:5 TER-1\n")
    assert r == (0, "+ VALUE_5 is 5, src/helpers.py:5 TER-1\n")
    diff = cli("check", "notes", "--root", "repo", "--isolated")
    assert diff.exit_code == 0, diff.output
