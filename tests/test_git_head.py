"""``git.head_state``: HEAD's commit and whether the clone is shallow, read from the
repository's files where that is exact, always what ``git rev-parse
--is-shallow-repository HEAD`` says (issue 14: one git process fewer per check)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from brainmigrate import git as gitmod

pytestmark = pytest.mark.skipif(os.name != "posix", reason="the files are read on POSIX only")


def git(repo: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.org",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.org",
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
    )
    done = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, env=env, check=True
    )
    return done.stdout


def asked(top: Path) -> tuple[str, bool] | None:
    """What git itself says."""
    out = gitmod.run_git(top, "rev-parse", "--is-shallow-repository", "HEAD")
    words = out.decode().split() if out else []
    return (words[1], words[0] == "true") if len(words) == 2 else None


def repo_with_commits(path: Path, n: int = 2) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    for i in range(n):
        (path / f"f{i}.txt").write_text(f"{i}\n", encoding="utf-8")
        git(path, "add", "-A")
        git(path, "commit", "-qm", f"c{i}")
    return path


def same(top: Path, *, read: bool = True) -> tuple[str, bool] | None:
    """head_state(top), checked against git; ``read``: the files alone answered."""
    real = os.path.realpath(top)
    answer = gitmod.head_state(real)
    assert answer == asked(top)
    assert (gitmod._head_from_files(real) is not None) == read
    return answer


def test_loose_and_packed_refs_and_a_detached_head(tmp_path):
    repo = repo_with_commits(tmp_path / "r")
    head = git(repo, "rev-parse", "HEAD").strip()
    assert same(repo) == (head, False)
    git(repo, "pack-refs", "--all")
    assert not (repo / ".git/refs/heads/main").exists()
    assert same(repo) == (head, False)
    git(repo, "checkout", "-q", "--detach", "HEAD~1")
    assert same(repo) == (git(repo, "rev-parse", "HEAD").strip(), False)
    git(repo, "checkout", "-q", "main")
    git(repo, "commit", "-q", "--allow-empty", "-m", "loose again over a packed ref")
    assert same(repo) == (git(repo, "rev-parse", "HEAD").strip(), False)


def test_an_unborn_branch_has_no_commit(tmp_path):
    repo = tmp_path / "empty"
    repo.mkdir()
    git(repo, "init", "-q")
    assert same(repo) is None
    git(repo, "pack-refs", "--all")
    assert same(repo) is None


def test_a_linked_worktree_and_a_git_file(tmp_path):
    repo = repo_with_commits(tmp_path / "r")
    git(repo, "branch", "side", "HEAD~1")
    git(repo, "pack-refs", "--all")
    linked = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", str(linked), "side")
    assert (linked / ".git").is_file()
    assert same(linked) == (git(repo, "rev-parse", "side").strip(), False)
    git(linked, "commit", "-q", "--allow-empty", "-m", "on side")
    assert same(linked) == (git(repo, "rev-parse", "side").strip(), False)
    assert same(repo) == (git(repo, "rev-parse", "main").strip(), False)
    # a .git file with a relative path (a submodule's kind)
    moved = tmp_path / "separate.git"
    other = repo_with_commits(tmp_path / "other")
    (other / ".git").rename(moved)
    (other / ".git").write_text("gitdir: ../separate.git\n", encoding="utf-8")
    assert same(other) == (git(other, "rev-parse", "HEAD").strip(), False)


def test_a_shallow_clone(tmp_path):
    repo = repo_with_commits(tmp_path / "r", 3)
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{repo}", str(clone))
    assert same(clone) == (git(repo, "rev-parse", "HEAD").strip(), True)


def test_what_the_files_do_not_settle_is_asked_of_git(tmp_path):
    repo = repo_with_commits(tmp_path / "r")
    head = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "config", "extensions.someday", "true")  # extensions: git decides
    assert same(repo, read=False) == (head, False)
    git(repo, "config", "--unset", "extensions.someday")
    assert same(repo) == (head, False)
    # a symbolic ref in a loose ref file
    git(repo, "symbolic-ref", "refs/heads/alias", "refs/heads/main")
    git(repo, "symbolic-ref", "HEAD", "refs/heads/alias")
    assert same(repo, read=False) == (head, False)
    git(repo, "symbolic-ref", "HEAD", "refs/heads/main")
    # a .git folder git does not take for a repository: git looks further up
    inner = repo / "inner"
    (inner / ".git").mkdir(parents=True)
    assert same(inner, read=False) == (head, False)
    # a .git file naming no repository
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / ".git").write_text("gitdir: nowhere\n", encoding="utf-8")
    assert same(broken, read=False) is None


def test_a_repository_of_another_owner_is_left_to_git(tmp_path, monkeypatch):
    repo = repo_with_commits(tmp_path / "r")
    monkeypatch.setattr(gitmod.os, "geteuid", lambda: os.getuid() + 1)
    assert gitmod._head_from_files(str(repo)) is None


def test_uncommitted_renames_of_every_root_are_followed(tmp_path):
    """Each root's ``git diff`` (run side by side) gives its own uncommitted renames."""
    from brainmigrate import importer
    from brainmigrate.hints import MoveHints

    repo = tmp_path / "r"
    for rel in ("a/old_a.py", "b/old_b.py", "c/keep.py"):
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(f"# {rel}\nprint(1)\n", encoding="utf-8")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "first")
    git(repo, "mv", "a/old_a.py", "a/new_a.py")
    git(repo, "mv", "b/old_b.py", "b/new_b.py")
    roots = importer.make_roots([repo / "a", repo / "b", repo / "c"])
    hints = MoveHints(roots, tmp_path / "cache")
    assert hints.locate("old_b.py").path == "new_b.py"
    assert hints.locate("old_a.py").path == "new_a.py"
    assert hints.locate("gone.py") is None
    got = [(m.root.index, m.how) for m in (hints.locate("old_a.py"), hints.locate("old_b.py"))]
    assert got == [(0, "git-rename"), (1, "git-rename")]
