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
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from clirun import cli
from trees import GIT, git, write

from brainmigrate import git as git_module
from brainmigrate.git import history_events
from brainmigrate.trails import RenameTrail

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
        "notes/n.md:1:3: BM101 [*] error cites src/parse.rs, which no root holds;"  # fixable
        " moved? lib/parsers.rs (renamed in git history)"
    )
    r = cli("check", "notes/n.md", "--root", "repo", "--fix", "--isolated")
    assert r.exit_code == 0, r.output
    assert (tree / "notes/n.md").read_text().splitlines()[0] == (
        "+ lib/parsers.rs holds the parsers"
    )


def at(monkeypatch, seconds: int) -> None:
    """The next commits are made ``seconds`` into 2030 (their order by date)."""
    monkeypatch.setenv("GIT_COMMITTER_DATE", f"2030-01-01T00:00:{seconds:02d}+0000")


def renamed_apart(repo: Path, monkeypatch) -> None:
    """``main`` renames src/parse.rs to src/parsers.rs and edits it; later, ``side``
    renames it to src/parse_side.rs; ``main`` merges ``side`` keeping its own rename
    (the conflict resolved by dropping src/parse_side.rs)."""
    git(repo, "checkout", "-q", "main")
    at(monkeypatch, 1)
    git(repo, "mv", "src/parse.rs", "src/parsers.rs")
    write(repo, {"src/parsers.rs": PARSE.replace("x + 3", "x + 4")})
    git(repo, "commit", "-qam", "main renames and edits the parsers")
    git(repo, "checkout", "-q", "side")
    at(monkeypatch, 2)
    git(repo, "mv", "src/parse.rs", "src/parse_side.rs")
    git(repo, "commit", "-qm", "side renames them otherwise")
    git(repo, "checkout", "-q", "main")
    at(monkeypatch, 3)
    merge = subprocess.run([*GIT, "merge", "-q", "--no-ff", "side", "-m", "merge"], cwd=repo)
    assert merge.returncode == 1  # the rename/rename conflict
    git(repo, "rm", "-q", "--cached", "src/parse_side.rs")
    (repo / "src/parse_side.rs").unlink()
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "merge side, keeping main's name")


def test_a_rename_the_merge_threw_away_does_not_win_over_the_kept_one(tree, monkeypatch):
    repo = tree / "repo"
    renamed_apart(repo, monkeypatch)
    assert history_events(repo) == [  # by date, the thrown-away rename is the later
        ("A", "src/parse.rs", ""),
        ("R", "src/parse.rs", "src/parsers.rs"),
        ("R", "src/parse.rs", "src/parse_side.rs"),
    ]
    assert facts()[0] == (
        "k1",
        "body changed",
        "STALE: body changed: src/parsers.rs (moved from src/parse.rs)",
    )
    r = cli("check", "notes/n.md", "--root", "repo", "--isolated")
    assert r.output.splitlines()[0] == (
        "notes/n.md:1:3: BM101 [*] error cites src/parse.rs, which no root holds;"  # fixable
        " moved? src/parsers.rs (renamed in git history)"
    )


def test_a_branch_that_renamed_then_rewrote_a_file_is_followed_through_its_commits(tree):
    """The merge against main shows a delete and an add (too little is the same for a
    rename): the first-parent trail ends in a delete, the branch's commits tell."""
    repo = tree / "repo"
    git(repo, "mv", "cmd/server.go", "cmd/serve.go")
    git(repo, "commit", "-qm", "rename the server")
    rewritten = SERVER.replace("package server", "package serve") + "".join(
        f"\nfunc Extra{i}() int {{\n\treturn {i}\n}}\n" for i in range(30)
    )
    write(repo, {"cmd/serve.go": rewritten})
    git(repo, "commit", "-qam", "grow it")
    merge_side(repo)
    assert git_module.log_events(repo, first_parent=True) == []  # no rename on main's line
    assert facts()[1] == (
        "k2",
        "body changed",
        "STALE: body changed: cmd/serve.go (moved from cmd/server.go)",
    )


def test_renames_on_both_sides_of_a_criss_cross_merge_read_moved(tree, monkeypatch):
    """``side`` renames the parsers, ``main`` the server; each merges the other, then
    ``main`` merges ``side`` again: both renames hold, from either branch."""
    repo = tree / "repo"
    at(monkeypatch, 1)
    (repo / "lib").mkdir()
    git(repo, "mv", "src/parse.rs", "lib/parsers.rs")
    git(repo, "commit", "-qm", "side moves the parsers")
    git(repo, "checkout", "-q", "main")
    git(repo, "mv", "cmd/server.go", "cmd/serve.go")
    git(repo, "commit", "-qm", "main renames the server")
    main_tip = subprocess.run([*GIT, "rev-parse", "HEAD"], cwd=repo, capture_output=True)
    at(monkeypatch, 2)
    git(repo, "merge", "-q", "--no-ff", "side", "-m", "main takes side")
    git(repo, "checkout", "-q", "side")
    git(repo, "merge", "-q", "--no-ff", main_tip.stdout.decode().strip(), "-m", "side takes main")
    moved = [
        ("k1", "moved", "STALE: moved: src/parse.rs → lib/parsers.rs"),
        ("k2", "moved", "STALE: moved: cmd/server.go → cmd/serve.go"),
        ("k3", "fresh", None),
    ]
    assert facts() == moved
    git(repo, "checkout", "-q", "main")
    at(monkeypatch, 3)
    git(repo, "merge", "-q", "--no-ff", "side", "-m", "main takes side again")
    assert facts() == moved


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
    from brainmigrate import githistory, hints

    repo = tree / "repo"
    delete_then_add(repo, "src/parse.rs", "lib/parsers.rs", PARSE)
    merge_side(repo)
    cache = tmp_path / "cache"
    events = hints.history_at_head(repo, cache)
    assert events[-1] == ("R", "src/parse.rs", "lib/parsers.rs")
    [kept] = cache.glob("githistory-*.bin")
    line, _, body = kept.read_bytes().partition(b"\n")
    header = json.loads(line)
    assert header["format"] == githistory.FORMAT == 4
    older = json.dumps(events[:-1]).encode()  # as a run of an older format kept it
    header["format"], header["parts"] = 2, {"every": [0, len(older)]}
    kept.write_bytes(json.dumps(header).encode() + b"\n" + older)
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
        "notes/n.md:3:25: BM101 [*] error cites tools/legacy/, which no root holds;"
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


# ------------------------------------------------------------------------- older git


@pytest.fixture
def old_git(tmp_path: Path, monkeypatch) -> Path:
    """``git`` on PATH refuses ``--diff-merges=`` as git before 2.31 does (the real git
    runs everything else); returns the file each refused command line is logged to."""
    real = shutil.which("git")
    bin_dir, log = tmp_path / "old-git", tmp_path / "refused.log"
    bin_dir.mkdir()
    script = bin_dir / "git"
    script.write_text(
        "#!/bin/sh\n"
        'for a in "$@"; do case "$a" in --diff-merges=*)\n'
        f'  echo "$*" >> {log}\n'
        '  echo "fatal: unrecognized argument: $a" >&2; exit 128;;\n'
        "esac; done\n"
        f'exec {real} "$@"\n'
    )
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return log


def test_on_git_that_refuses_diff_merges_a_rename_only_a_merge_shows_is_read(tree, old_git):
    repo = tree / "repo"
    delete_then_add(repo, "src/parse.rs", "lib/parsers.rs", PARSE)
    merge_side(repo)
    assert history_events(repo, first_parent=True) == [
        ("A", "src/parse.rs", ""),
        ("R", "src/parse.rs", "lib/parsers.rs"),
    ]
    assert old_git.read_text().count("--diff-merges=first-parent") == 1
    assert facts()[0] == ("k1", "moved", "STALE: moved: src/parse.rs → lib/parsers.rs")
    r = cli("check", "notes/n.md", "--root", "repo", "--isolated")
    assert r.output.splitlines()[0] == (
        "notes/n.md:1:3: BM101 [*] error cites src/parse.rs, which no root holds;"  # fixable
        " moved? lib/parsers.rs (renamed in git history)"
    )


def test_on_git_that_refuses_diff_merges_a_branchs_rename_is_read(tree, old_git):
    repo = tree / "repo"
    git(repo, "mv", "cmd/server.go", "cmd/serve.go")
    git(repo, "commit", "-qm", "rename the server")
    write(repo, {"cmd/serve.go": SERVER.replace("\tStop()\n", "\tStop()\n\tlog()\n")})
    git(repo, "commit", "-qam", "and log")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "side", "-m", "merge side")
    assert facts()[1] == (
        "k2",
        "body changed",
        "STALE: body changed: cmd/serve.go (moved from cmd/server.go)",
    )


def test_renames_from_many_fingerprint_commits_read_the_history_once(tmp_path, monkeypatch):
    """Five files fingerprinted at five commits, all renamed since: one ``git log``, one
    ``git rev-list`` and one ``git diff`` for the root, however many commits."""
    monkeypatch.chdir(tmp_path)
    repo = tmp_path / "repo"
    names = [f"src/part{i}.rs" for i in range(1, 6)]
    write(repo, {p: f"pub fn part{i}() -> u32 {{\n    {i}\n}}\n" for i, p in enumerate(names, 1)})
    write(repo, {"README.md": "0\n"})
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "one")
    write(tmp_path, {"notes/n.md": "".join(f"+ {p} holds a part\n" for p in names)})
    assert cli("import", "notes/n.md", "--root", "repo", "--verify", "--isolated").exit_code == 0
    for i in range(2, 6):
        write(repo, {"README.md": f"{i}\n"})
        git(repo, "commit", "-qam", f"readme {i}")
        assert cli("verify", f"k{i}", "--root", "repo").exit_code == 0
    git(repo, "mv", "src", "lib")
    git(repo, "commit", "-qm", "src is lib now")
    calls: list[str] = []
    real = git_module.run_git

    def counted(folder, *args, **kw):
        calls.append(args[0])
        return real(folder, *args, **kw)

    monkeypatch.setattr(git_module, "run_git", counted)
    assert facts() == [
        (f"k{i}", "moved", f"STALE: moved: src/part{i}.rs → lib/part{i}.rs") for i in range(1, 6)
    ]
    assert sorted(c for c in calls if c != "rev-parse") == ["diff", "log", "rev-list"]


# ---------------------------------------------------------------------- what changed


def anchor_json(fact: str) -> dict:
    r = cli("stale", "--root", "repo", "--format", "json")
    [found] = [f for f in json.loads(r.stdout)["facts"] if f["id"] == fact]
    return found["anchors"][0]


def test_what_changed_for_a_fingerprint_carried_to_a_new_path_diffs_from_the_old(tree):
    """``check --fix`` and a re-import carry the fingerprint to the new path; its commit
    holds the file at the old one, so a plain diff would show a new file."""
    repo = tree / "repo"
    git(repo, "checkout", "-q", "main")
    [commit] = {a["commit"] for a in [anchor_json("k1")]}
    (repo / "lib").mkdir()
    git(repo, "mv", "src/parse.rs", "lib/parsers.rs")
    git(repo, "commit", "-qm", "the parsers move to lib/")
    assert cli("check", "notes/n.md", "--root", "repo", "--fix", "--isolated").exit_code == 0
    assert cli("import", "notes/n.md", "--root", "repo", "--isolated").exit_code == 0
    assert anchor_json("k1")["state"] == "fresh"
    write(repo, {"lib/parsers.rs": PARSE.replace("x + 3", "x + 4")})
    anchor = anchor_json("k1")
    assert (anchor["path"], anchor["commit"], anchor["state"]) == (
        "lib/parsers.rs",
        commit,
        "body changed",
    )
    assert anchor["diff"] == f"git -C repo diff -M {commit} -- src/parse.rs lib/parsers.rs"
    shown = subprocess.run(anchor["diff"], shell=True, capture_output=True, text=True)
    assert shown.stdout.splitlines()[:3] == [
        "diff --git a/src/parse.rs b/lib/parsers.rs",
        "similarity index 90%",
        "rename from src/parse.rs",
    ]


def test_a_rename_on_main_dated_before_a_fingerprint_taken_on_a_branch_reads_moved(
    tmp_path, monkeypatch
):
    """Fingerprinted on ``feature`` (a commit dated later) while ``main`` renamed the file
    (dated earlier); ``feature`` merged into ``main``: the rename is after the fingerprint
    on the line the checkout holds, though earlier by date (the history is sliced by what
    the fingerprinted commit holds, not by date)."""
    monkeypatch.chdir(tmp_path)
    repo = tmp_path / "repo"
    at(monkeypatch, 1)
    write(repo, {"src/a.py": "def f():\n    return 1\n\n\ndef g():\n    return 2\n"})
    write(repo, {"other.txt": "x\n"})
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    git(repo, "checkout", "-q", "-b", "feature")
    at(monkeypatch, 3)
    write(repo, {"other.txt": "x\ny\n"})
    git(repo, "commit", "-qam", "feature work")
    git(repo, "checkout", "-q", "main")
    at(monkeypatch, 2)
    git(repo, "mv", "src/a.py", "src/c.py")
    git(repo, "commit", "-qm", "main renames a.py")
    git(repo, "checkout", "-q", "feature")
    write(tmp_path, {"notes/n.md": "+ src/a.py holds f and g\n"})
    r = cli("import", "notes/n.md", "--root", "repo", "--verify", "--isolated")
    assert r.exit_code == 0, r.output
    git(repo, "checkout", "-q", "main")
    at(monkeypatch, 4)
    git(repo, "merge", "-q", "--no-ff", "feature", "-m", "merge feature")
    write(repo, {"src/c.py": "def f():\n    return 1\n\n\ndef g():\n    return 3\n"})
    git(repo, "commit", "-qam", "edit")
    assert facts() == [
        ("k1", "body changed", "STALE: body changed: src/c.py (moved from src/a.py)")
    ]


def test_held_by_says_which_marked_commits_each_commit_holds():
    """``git.held_by`` over a history with a merge (topological order from HEAD):
    ``m`` merges ``b`` (a side commit) into ``a``; ``c`` is after it."""
    from brainmigrate.git import held_by

    parents = {"c": ("m",), "m": ("a", "b"), "b": ("root",), "a": ("root",), "root": ()}
    held = held_by(parents, ["a", "b", "c"])
    assert {k: bin(v) for k, v in held.items()} == {
        "root": "0b0",
        "a": "0b1",
        "b": "0b10",
        "m": "0b11",
        "c": "0b111",
    }
