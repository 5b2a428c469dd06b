"""Staleness on histories with branches and merges (SPEC.md §Staleness, issue 25): a file
renamed by a merge commit reads moved, ``check --fix`` rewrites its citation and its hint
says "moved?"; a folder anchor whose folder git deleted or renamed reads "folder gone"
(folder anchors are checked for existence only).

Each test builds a git repository of small Rust, Go and Python files with real branches
merged by ``git merge --no-ff``. Commits made in one second are ordered by their parents,
as git lists them with ``--date-order``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from clirun import cli
from trees import git, write

from brainmigrate.git import RenameTrail, history_events

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

PARSE = (
    "pub fn alpha() -> u32 {\n    1\n}\n\npub fn beta() -> u32 {\n    2\n}\n\n"
    "pub fn gamma(x: u32) -> u32 {\n    x + 3\n}\n"
)
SERVER = (
    "package server\n\nfunc Start(port int) error {\n\treturn nil\n}\n\n"
    "func Stop() {\n}\n\nfunc Restart(port int) error {\n\tStop()\n\treturn Start(port)\n}\n"
)


def facts(args=()) -> list[tuple[str, str, str | None]]:
    r = cli("stale", "--root", "repo", "--format", "json", *args)
    assert r.exit_code in (0, 1), r.output
    return [(f["id"], f["state"], f["reason"]) for f in json.loads(r.stdout)["facts"]]


def merge_side(repo: Path, message: str = "merge side") -> None:
    git(repo, "checkout", "-q", "main")
    write(repo, {"CHANGES.md": "main moved on\n"})
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "main moves on")
    git(repo, "merge", "-q", "--no-ff", "side", "-m", message)


@pytest.fixture
def tree(tmp_path: Path, monkeypatch) -> Path:
    """``repo/`` (one commit on ``main``: a Rust file, a Go file, a byte-identical copy of
    the Rust file elsewhere so no same-digest search can tell a move, a Python tool
    folder) and ``notes/n.md`` citing the files and the folder, imported with --verify;
    a branch ``side`` is checked out. The current folder is ``tmp_path``."""
    monkeypatch.chdir(tmp_path)
    repo = tmp_path / "repo"
    write(
        repo,
        {
            "src/parse.rs": PARSE,
            "vendor/parse_copy.rs": PARSE,
            "cmd/server.go": SERVER,
            "tools/legacy/run.py": "def run():\n    return 1\n",
            "README.md": "a tree\n",
        },
    )
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "one")
    write(
        tmp_path,
        {
            "notes/n.md": (
                "+ src/parse.rs holds the parsers\n"
                "+ cmd/server.go restarts by stopping first\n"
                "+ old importers live in tools/legacy/\n"
            )
        },
    )
    r = cli("import", "notes/n.md", "--root", "repo", "--verify", "--isolated")
    assert r.exit_code == 0, r.output
    git(repo, "checkout", "-q", "-b", "side")
    return tmp_path


def delete_then_add(repo: Path, old: str, new: str, text: str) -> None:
    """On the current branch: ``old`` deleted in one commit, ``text`` added at ``new`` in
    the next (no commit of the branch shows a rename)."""
    git(repo, "rm", "-q", old)
    git(repo, "commit", "-qm", f"drop {old}")
    write(repo, {new: text})
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", f"add {new}")


def test_a_rename_only_a_merge_shows_reads_moved(tree):
    repo = tree / "repo"
    delete_then_add(repo, "src/parse.rs", "lib/parsers.rs", PARSE)
    merge_side(repo)
    assert facts() == [
        ("k1", "moved", "STALE: moved: src/parse.rs → lib/parsers.rs"),
        ("k2", "fresh", None),
        ("k3", "fresh", None),
    ]


def test_a_rename_a_merge_shows_and_a_change_read_the_change_at_the_new_path(tree):
    repo = tree / "repo"
    changed = SERVER.replace("\tStop()\n", "\tStop()\n\tlog()\n")
    delete_then_add(repo, "cmd/server.go", "internal/serve/serve.go", changed)
    merge_side(repo)
    assert facts()[1] == (
        "k2",
        "body changed",
        "STALE: body changed: internal/serve/serve.go (moved from cmd/server.go)",
    )


def test_a_rename_made_by_a_merge_resolution_reads_moved(tree):
    repo = tree / "repo"
    write(repo, {"src/parse.rs": PARSE.replace("x + 3", "x + 4")})
    git(repo, "commit", "-qam", "side edits the parser")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "--no-commit", "side")
    (repo / "lib").mkdir()
    git(repo, "mv", "src/parse.rs", "lib/parsers.rs")
    git(repo, "commit", "-qm", "merge side, the parsers moved to lib/")
    assert facts()[0] == (
        "k1",
        "body changed",
        "STALE: body changed: lib/parsers.rs (moved from src/parse.rs)",
    )


def test_check_hints_and_fixes_a_rename_only_a_merge_shows(tree):
    repo = tree / "repo"
    delete_then_add(repo, "src/parse.rs", "lib/parsers.rs", PARSE)
    merge_side(repo)
    r = cli("check", "notes/n.md", "--root", "repo", "--isolated")
    assert r.exit_code == 1, r.output
    assert r.output.splitlines()[0] == (
        "notes/n.md:1:3: BM101 error cites src/parse.rs, which no root holds;"
        " moved? lib/parsers.rs (renamed in git history)"
    )
    r = cli("check", "notes/n.md", "--root", "repo", "--fix", "--isolated")
    assert r.exit_code == 0, r.output
    assert (tree / "notes/n.md").read_text().splitlines()[0] == (
        "+ lib/parsers.rs holds the parsers"
    )


def test_a_merge_of_a_branch_that_renamed_the_file_reads_moved_once(tree):
    """The branch's own rename and the merge's (against main) are one move."""
    repo = tree / "repo"
    (repo / "lib").mkdir()
    git(repo, "mv", "src/parse.rs", "lib/parsers.rs")
    git(repo, "commit", "-qm", "move the parsers")
    git(repo, "mv", "lib/parsers.rs", "lib/parse_all.rs")
    git(repo, "commit", "-qm", "and rename them")
    merge_side(repo)
    assert facts()[0] == ("k1", "moved", "STALE: moved: src/parse.rs → lib/parse_all.rs")


def test_a_file_deleted_on_a_branch_and_added_again_later_is_the_later_file(tree):
    """A delete, an add at the same path, then the merge: the path holds a file again, so
    nothing moved (the fingerprint is compared there)."""
    repo = tree / "repo"
    git(repo, "rm", "-q", "src/parse.rs")
    git(repo, "commit", "-qm", "drop the parser")
    write(repo, {"src/parse.rs": PARSE})
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "bring it back")
    merge_side(repo)
    assert facts()[0] == ("k1", "fresh", None)


def test_the_trail_takes_a_branch_delete_and_the_merge_rename_as_one_rename():
    events = [
        ("A", "src/a.rs", ""),
        ("D", "src/a.rs", ""),  # the branch drops it
        ("A", "lib/b.rs", ""),  # and adds it anew
        ("R", "src/a.rs", "lib/b.rs"),  # the merge, against main: a rename
    ]
    trail = RenameTrail(events)
    assert trail.follow("src/a.rs", from_start=True) == "lib/b.rs"
    assert trail.follow("src/a.rs") == "lib/b.rs"
    # an add between makes the delete and the rename two removals: the first one is the
    # fingerprinted file's, a delete
    events.insert(2, ("A", "src/a.rs", ""))
    trail = RenameTrail(events)
    assert trail.follow("src/a.rs", from_start=True) is None
    assert trail.follow("src/a.rs") == "lib/b.rs"


def test_history_events_list_a_merge_after_its_branch(tree):
    repo = tree / "repo"
    delete_then_add(repo, "src/parse.rs", "lib/parsers.rs", PARSE)
    merge_side(repo)
    assert history_events(repo) == [
        ("A", "src/parse.rs", ""),
        ("D", "src/parse.rs", ""),
        ("A", "lib/parsers.rs", ""),
        ("R", "src/parse.rs", "lib/parsers.rs"),
    ]


def test_kept_histories_of_the_older_format_are_read_again(tree, tmp_path):
    from brainmigrate import hints

    repo = tree / "repo"
    delete_then_add(repo, "src/parse.rs", "lib/parsers.rs", PARSE)
    merge_side(repo)
    cache = tmp_path / "cache"
    events = hints.history_at_head(repo, cache)
    assert events[-1] == ("R", "src/parse.rs", "lib/parsers.rs")
    [kept] = cache.glob("git-renames-*.json")
    data = json.loads(kept.read_text())
    assert data["format"] == hints.HISTORY_FORMAT == 2
    del data["format"]  # as a run before merges were read kept it
    data["events"] = events[:-1]
    kept.write_text(json.dumps(data))
    assert hints.history_at_head(repo, cache) == events


# ------------------------------------------------------------------------------ folders


def test_a_folder_git_deleted_reads_folder_gone(tree):
    repo = tree / "repo"
    git(repo, "checkout", "-q", "main")
    git(repo, "rm", "-q", "-r", "tools/legacy")
    git(repo, "commit", "-qm", "drop the old importers")
    assert facts()[2] == ("k3", "file gone", "STALE: folder gone: tools/legacy")
    r = cli("stale", "--root", "repo")
    assert r.exit_code == 1
    assert r.output.splitlines()[0] == (
        "notes/n.md:3: k3 environment area:n STALE: folder gone: tools/legacy"
        "  old importers live in tools/legacy/"
    )


def test_a_folder_git_renamed_reads_folder_gone(tree):
    """Folder anchors are checked for existence only: a folder renamed is gone from its
    path (``check`` hints where it went)."""
    repo = tree / "repo"
    git(repo, "checkout", "-q", "main")
    git(repo, "mv", "tools/legacy", "tools/importers")
    git(repo, "commit", "-qm", "rename the folder")
    assert facts()[2] == ("k3", "file gone", "STALE: folder gone: tools/legacy")
    git(repo, "mv", "tools/importers", "tools/legacy")
    git(repo, "commit", "-qm", "and back")
    assert facts()[2] == ("k3", "fresh", None)


def test_a_folder_git_renamed_is_hinted_fixed_and_fresh_at_its_new_path(tree):
    repo = tree / "repo"
    git(repo, "checkout", "-q", "main")
    git(repo, "mv", "tools/legacy", "tools/importers")
    git(repo, "commit", "-qm", "rename the folder")
    r = cli("check", "notes/n.md", "--root", "repo", "--isolated")
    assert r.output.splitlines()[0] == (
        "notes/n.md:3:25: BM101 error cites tools/legacy/, which no root holds;"
        " moved? tools/importers/ (renamed in git history)"
    )
    assert cli("check", "notes/n.md", "--root", "repo", "--fix", "--isolated").exit_code == 0
    assert cli("import", "notes/n.md", "--root", "repo", "--isolated").exit_code == 0
    r = cli("stale", "--root", "repo", "--format", "json")
    [fact] = [f for f in json.loads(r.stdout)["facts"] if f["id"] == "k3"]
    assert (fact["state"], fact["reason"]) == ("fresh", None)
    assert [(a["kind"], a["path"], a["fingerprinted"]) for a in fact["anchors"]] == [
        ("folder", "tools/importers", True)
    ]


def test_a_folder_renamed_on_a_branch_and_merged_reads_folder_gone(tree):
    repo = tree / "repo"
    git(repo, "mv", "tools/legacy", "tools/importers")
    git(repo, "commit", "-qm", "rename the folder")
    merge_side(repo)
    assert facts()[2] == ("k3", "file gone", "STALE: folder gone: tools/legacy")
