"""A root's git history read once per HEAD and kept in one file per root
(``brainmigrate/githistory.py``): warm answers are the cold ones, a HEAD that moved forward
extends the kept gone paths to what a read from scratch gives, any other move (a reset to
an unrelated commit) or a spoiled file reads git again, and a warm check starts no git
process for the history."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess

import pytest
from clirun import cli
from trees import git, write

from brainmigrate import git as gitmodule
from brainmigrate import githistory
from brainmigrate.knowledge import git_history
from brainmigrate.roots import Root

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def history_repo(repo):
    """A checkout whose history renames, deletes and merges; its notes cite the gone
    paths."""
    write(
        repo,
        {
            "src/old.py": "def old():\n    return 1\n" * 5,
            "src/gone.py": "x = 1\n",
            "lib/keep.py": "y = 2\n" * 8,
            "docs/guide.md": "# Guide\n",
        },
    )
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "one")
    git(repo, "mv", "src/old.py", "src/new.py")
    git(repo, "rm", "-q", "src/gone.py")
    git(repo, "commit", "-qm", "rename and delete")
    git(repo, "checkout", "-q", "-b", "side")
    git(repo, "mv", "lib/keep.py", "lib/kept.py")
    git(repo, "commit", "-qm", "side rename")
    git(repo, "checkout", "-q", "main")
    write(repo, {"docs/more.md": "# More\n"})
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "main moves on")
    git(repo, "merge", "-q", "--no-edit", "side")
    notes = repo / "CLAUDE.md"
    notes.write_text(
        "# Notes\n\n- `src/old.py` is the old one.\n- `src/gone.py` went.\n"
        "- `lib/keep.py` moved on a branch.\n- `docs/guide.md` is here.\n",
        encoding="utf-8",
    )
    return repo


def counting_git(tmp_path):
    """A ``git`` first on PATH that logs each call's arguments, and its log file."""
    real = shutil.which("git")
    folder = tmp_path / "bin"
    folder.mkdir()
    log = tmp_path / "git-calls.log"
    wrapper = folder / "git"
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexec "{real}" "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    return f"{folder}{os.pathsep}{os.environ.get('PATH', '')}", log


def calls(log) -> list[str]:
    if not log.exists():
        return []
    words = [line.split() for line in log.read_text().splitlines()]
    # the subcommand: the first word after the -C folder and the -c settings
    out = []
    for w in words:
        i = 2
        while i < len(w) and w[i] == "-c":
            i += 2
        out.append(w[i] if i < len(w) else "")
    return out


def test_a_warm_check_answers_as_the_cold_one_and_starts_no_git_for_history(tmp_path):
    repo = history_repo(tmp_path / "repo")
    path, log = counting_git(tmp_path)
    cache = tmp_path / "cache"
    args = ["check", "--isolated", "--no-progress", "--cache-dir", cache, "--root", repo]
    cold = cli(*args, repo / "CLAUDE.md", env={"PATH": path})
    cold_calls = calls(log)
    log.unlink()
    warm = cli(*args, repo / "CLAUDE.md", env={"PATH": path})
    assert (warm.exit_code, warm.output) == (cold.exit_code, cold.output) == (1, cold.output)
    assert "moved? src/new.py" in cold.output and "moved? lib/kept.py" in cold.output
    # the renames: one whole log, the first-parent line's cut from it by its commits
    assert (cold_calls.count("log"), cold_calls.count("rev-list")) == (1, 1)
    # warm: what the cold run asked but the history (the listing, its cache key, the ignore
    # rules and what is not committed are asked again: the files were written within the
    # listing cache's racy window, so it is not kept)
    history = ("log", "rev-list")
    assert sorted(calls(log)) == sorted(c for c in cold_calls if c not in history)
    [kept] = cache.glob("githistory-*.bin")
    parts = json.loads(kept.read_bytes().split(b"\n")[0])["parts"]
    assert sorted(parts) == ["every", "every-log", "every-modern", "first", "first-log"]


def test_head_moved_forward_extends_the_gone_paths_to_a_rebuilds(tmp_path, monkeypatch):
    repo = history_repo(tmp_path / "repo")
    cache = tmp_path / "cache"
    root = Root.of(0, repo)
    before = git_history(root, cache)
    assert {"src/old.py", "src/gone.py", "lib/keep.py"} <= before.paths
    git(repo, "rm", "-q", "docs/more.md")
    git(repo, "commit", "-qm", "drop more")
    git(repo, "checkout", "-q", "-b", "other", "HEAD~1")
    write(repo, {"tmp/scratch.md": "x\n"})
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "scratch")
    git(repo, "rm", "-q", "tmp/scratch.md")
    git(repo, "commit", "-qm", "no scratch")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-edit", "other")
    from brainmigrate import git as gitmod

    seen = []
    real = gitmod.run_git

    def spy(folder, *args, **kw):
        seen.append(args)
        return real(folder, *args, **kw)

    monkeypatch.setattr(gitmod, "run_git", spy)
    extended = git_history(root, cache)
    monkeypatch.undo()
    logs = [a for a in seen if a[0] == "log"]
    assert [a[0] for a in seen] == ["merge-base", "log", "ls-tree"]
    assert logs[0][-2].endswith(".." + logs[0][-2].split("..")[1])  # old..new only
    rebuilt = git_history(root, None)  # no cache: from scratch
    assert extended == rebuilt
    assert {"docs/more.md", "tmp/scratch.md"} <= extended.paths


def test_head_reset_to_an_unrelated_commit_reads_the_whole_history(tmp_path, monkeypatch):
    repo = history_repo(tmp_path / "repo")
    cache = tmp_path / "cache"
    root = Root.of(0, repo)
    git_history(root, cache)
    git(repo, "checkout", "-q", "--orphan", "fresh")
    git(repo, "rm", "-q", "-r", "--cached", ".")
    write(repo, {"only/this.md": "x\n"})
    git(repo, "add", "only/this.md")
    git(repo, "commit", "-qm", "unrelated")
    got = git_history(root, cache)
    assert got == git_history(root, None)
    assert "src/gone.py" not in got.paths and "only/this.md" in got.paths
    [kept] = cache.glob("githistory-*.bin")
    head = json.loads(kept.read_bytes().split(b"\n")[0])["head"]
    assert len(head) == 40 and got.paths == git_history(root, cache).paths


@pytest.mark.parametrize(
    "spoil",
    [
        lambda data: b"",
        lambda data: data[: len(data) // 2],
        lambda data: b"not json\n" + data,
        lambda data: data.replace(b'"format": 4', b'"format": 3'),
        lambda data: data.replace(b'"magic": "brainmigrate-githistory"', b'"magic": "x"'),
    ],
    ids=["empty", "truncated", "corrupt", "older-format", "foreign"],
)
def test_a_spoiled_history_file_is_read_again(tmp_path, spoil):
    repo = history_repo(tmp_path / "repo")
    cache = tmp_path / "cache"
    root = Root.of(0, repo)
    cold = git_history(root, cache)
    [kept] = cache.glob("githistory-*.bin")
    kept.write_bytes(spoil(kept.read_bytes()))
    assert git_history(root, cache) == cold
    assert githistory._load(kept) is not None  # written again whole


def test_another_roots_file_under_this_name_is_not_trusted(tmp_path):
    repo = history_repo(tmp_path / "repo")
    other = history_repo(tmp_path / "other")
    git(other, "rm", "-q", "docs/guide.md")
    git(other, "commit", "-qm", "other root")
    cache = tmp_path / "cache"
    mine = git_history(Root.of(0, repo), cache)
    [kept] = cache.glob("githistory-*.bin")
    theirs_cache = tmp_path / "cache2"
    git_history(Root.of(0, other), theirs_cache)
    [theirs] = theirs_cache.glob("githistory-*.bin")
    shutil.copy(theirs, kept)  # the other root's file where this root's is looked for
    assert git_history(Root.of(0, repo), cache) == mine


def test_an_unwritable_cache_folder_still_answers(tmp_path):
    repo = history_repo(tmp_path / "repo")
    blocked = tmp_path / "blocked"
    blocked.write_text("a file, not a folder", encoding="utf-8")
    root = Root.of(0, repo)
    assert git_history(root, blocked / "cache") == git_history(root, None)


def test_a_failed_rename_log_is_kept_until_the_objects_change(tmp_path, monkeypatch):
    from brainmigrate import hints

    repo = history_repo(tmp_path / "repo")
    cache = tmp_path / "cache"
    monkeypatch.setattr(gitmodule, "log_output", _failing("fatal: unable to read 3f2a9c1e"))
    assert hints.history_at_head(repo, cache) == []
    monkeypatch.setattr(gitmodule, "log_output", lambda *a, **k: pytest.fail("asked again"))
    assert hints.history_at_head(repo, cache) == []  # same HEAD, same objects
    monkeypatch.undo()
    pack = repo / ".git" / "objects" / "pack"
    st = pack.stat()
    os.utime(pack, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # a fetch brought a pack
    assert ("R", "src/old.py", "src/new.py") in hints.history_at_head(repo, cache)


def _failing(said: str):
    """A ``git.log_output`` whose git failed saying ``said``."""

    def log_output(*args, errors=None, **kwargs):
        if errors is not None:
            errors.append(said)
        return None

    return log_output


@pytest.mark.parametrize(
    "said", ["fatal: simulated transient failure", "git timed out after 120 s", "git exited -9"]
)
def test_a_rename_log_that_failed_for_another_reason_is_asked_again(tmp_path, monkeypatch, said):
    # only missing objects fail the same way again: a timeout, a kill or a promisor remote
    # out of reach kept as failed left every later run without its "moved?" hints
    from brainmigrate import hints

    repo = history_repo(tmp_path / "repo")
    cache = tmp_path / "cache"
    monkeypatch.setattr(gitmodule, "log_output", _failing(said))
    assert hints.history_at_head(repo, cache) == []
    monkeypatch.undo()
    assert ("R", "src/old.py", "src/new.py") in hints.history_at_head(repo, cache)


def test_a_second_stale_reads_the_renames_and_parents_kept(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    repo = tmp_path / "repo"
    write(repo, {"src/part.rs": "pub fn part() -> u32 {\n    1\n}\n", "README.md": "0\n"})
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "one")
    write(tmp_path, {"notes/n.md": "+ src/part.rs holds a part\n"})
    assert cli("import", "notes/n.md", "--root", "repo", "--verify", "--isolated").exit_code == 0
    git(repo, "mv", "src", "lib")
    git(repo, "commit", "-qm", "src is lib now")
    path, log = counting_git(tmp_path)
    first = cli("stale", "--root", "repo", "--dry-run", env={"PATH": path})
    assert "log" in calls(log) and "rev-list" in calls(log)
    log.unlink()
    second = cli("stale", "--root", "repo", "--dry-run", env={"PATH": path})
    assert (second.exit_code, second.output) == (first.exit_code, first.output)
    assert "moved: src/part.rs → lib/part.rs" in first.output
    assert "log" not in calls(log) and "rev-list" not in calls(log)


def spied(monkeypatch):
    """The arguments of each git run from now on."""
    real = gitmodule.run_git
    seen: list[tuple] = []

    def spy(folder, *args, **kw):
        seen.append(args)
        return real(folder, *args, **kw)

    monkeypatch.setattr(gitmodule, "run_git", spy)
    return seen


@pytest.mark.parametrize("merged", [False, True], ids=["linear", "merge"])
def test_head_moved_forward_extends_the_renames_to_a_rebuilds(tmp_path, monkeypatch, merged):
    repo = history_repo(tmp_path / "repo")
    cache = tmp_path / "cache"
    for fp in (True, False):
        githistory.kept_events(repo, cache, first_parent=fp)
    old = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True)
    if merged:
        git(repo, "checkout", "-q", "-b", "later")
        git(repo, "mv", "src/new.py", "src/newer.py")
        git(repo, "commit", "-qm", "branch rename")
        git(repo, "checkout", "-q", "main")
        git(repo, "rm", "-q", "docs/more.md")
        git(repo, "commit", "-qm", "main deletes")
        git(repo, "merge", "-q", "--no-edit", "later")
    else:
        git(repo, "mv", "src/new.py", "src/newer.py")
        git(repo, "commit", "-qm", "rename again")
        git(repo, "mv", "lib/kept.py", "lib/final.py")
        git(repo, "commit", "-qm", "and again")
    seen = spied(monkeypatch)
    extended = {fp: githistory.kept_events(repo, cache, first_parent=fp) for fp in (True, False)}
    monkeypatch.undo()
    ranges = [a for a in seen if a[0] == "log" and any(".." in w for w in a)]
    since = f"{old.stdout.strip()}.."
    assert [any(w.startswith(since) for w in a) for a in ranges] == [True] * len(ranges)
    # the first-parent line continues either way; the whole history only without a merge
    assert len(ranges) == (1 if merged else 2)
    rebuilt = {
        fp: githistory.kept_events(repo, tmp_path / "fresh", first_parent=fp)
        for fp in (True, False)
    }
    assert extended == rebuilt
    assert ("R", "src/new.py", "src/newer.py") in [e[1:] for e in extended[True]]
    # and a warm run after the extension reads the same without git
    seen = spied(monkeypatch)
    again = {fp: githistory.kept_events(repo, cache, first_parent=fp) for fp in (True, False)}
    assert again == extended and [a[0] for a in seen] == []


def test_renames_after_a_reset_to_an_unrelated_commit_are_read_whole(tmp_path, monkeypatch):
    repo = history_repo(tmp_path / "repo")
    cache = tmp_path / "cache"
    githistory.kept_events(repo, cache, first_parent=True)
    git(repo, "checkout", "-q", "--orphan", "fresh")
    git(repo, "rm", "-q", "-r", "--cached", ".")
    write(repo, {"only/this.md": "x\n"})
    git(repo, "add", "only/this.md")
    git(repo, "commit", "-qm", "unrelated")
    git(repo, "mv", "only/this.md", "only/that.md")
    git(repo, "commit", "-qm", "renamed")
    seen = spied(monkeypatch)
    got = githistory.kept_events(repo, cache, first_parent=True)
    assert not [a for a in seen if a[0] == "log" and any(".." in w for w in a)]
    assert [e[1:] for e in got] == [
        ("A", "only/this.md", ""),
        ("R", "only/this.md", "only/that.md"),
    ]


def test_a_spoiled_kept_log_is_read_again(tmp_path):
    repo = history_repo(tmp_path / "repo")
    cache = tmp_path / "cache"
    cold = githistory.kept_events(repo, cache, first_parent=True)
    [kept] = cache.glob("githistory-*.bin")
    line, _, body = kept.read_bytes().partition(b"\n")
    header = json.loads(line)
    a, b = header["parts"]["first-log"]
    spoiled = body[:a] + b"\0" * (b - a) + body[b:]  # not zlib: the log part is read again
    del header["parts"]["first"]
    kept.write_bytes(json.dumps(header).encode() + b"\n" + spoiled)
    assert githistory.kept_events(repo, cache, first_parent=True) == cold


def test_a_repository_only_git_can_read_is_asked_and_still_kept(tmp_path, monkeypatch):
    """A config with ``extensions`` (here ``worktreeConfig``): HEAD is asked of git, and
    the history is kept the same way."""
    repo = history_repo(tmp_path / "repo")
    git(repo, "config", "extensions.worktreeConfig", "true")
    assert gitmodule.head_key(str(repo), files_only=True) is None
    cache = tmp_path / "cache"
    root = Root.of(0, repo)
    cold = git_history(root, cache)
    seen = spied(monkeypatch)
    assert git_history(root, cache) == cold
    assert [a[0] for a in seen] == ["rev-parse", "rev-parse"]  # no log
    monkeypatch.undo()
    assert cold == git_history(root, None) and "src/gone.py" in cold.paths


def test_the_first_parent_line_cut_from_the_whole_log_is_gits_own(tmp_path):
    repo = history_repo(tmp_path / "repo")
    git(repo, "checkout", "-q", "-b", "two")
    git(repo, "mv", "src/new.py", "src/two.py")
    git(repo, "commit", "-qm", "two renames")
    git(repo, "checkout", "-q", "main")
    git(repo, "rm", "-q", "docs/guide.md")
    git(repo, "commit", "-qm", "main drops the guide")
    git(repo, "merge", "-q", "--no-edit", "two")
    cut = githistory.kept_events(repo, tmp_path / "cache", first_parent=True)
    assert cut == gitmodule.log_events(repo, first_parent=True)
    assert githistory.kept_events(repo, tmp_path / "cache") == gitmodule.log_events(repo)
    assert ("R", "src/new.py", "src/two.py") in [e[1:] for e in cut]


def test_a_spoiled_parents_part_is_read_again(tmp_path):
    # one flipped byte made an empty line: unpacking it raised instead of reading git again
    repo = history_repo(tmp_path / "repo")
    cache = tmp_path / "cache"
    first = githistory.kept_parents(repo, cache)
    [path] = cache.glob("githistory-*.bin")
    head, _, body = path.read_bytes().partition(b"\n")
    start, end = json.loads(head)["parts"]["parents"]
    part = body[start:end]
    spoiled = part.replace(b"\n", b"\n\n", 1)[: len(part)]  # the same length, a line empty
    path.write_bytes(head + b"\n" + body[:start] + spoiled + body[end:])
    githistory._PARSED.clear()
    assert githistory.kept_parents(repo, cache) == first
    assert len(first) >= 3 and all(len(c) == 40 for c in first)


@pytest.mark.parametrize("how", ["replace", "grafts"])
def test_history_is_read_as_committed_whatever_replace_refs_or_grafts_say(tmp_path, how):
    # `git replace --graft HEAD` (or a grafts file) made HEAD parentless while HEAD stayed:
    # a warm run kept the old history, a cold one read the new; both now read the commits
    repo = tmp_path / "repo"
    write(repo, {"legacy/tool.py": "x = 1\n", "README.md": "r\n"})
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "one")
    git(repo, "rm", "-q", "-r", "legacy")
    git(repo, "commit", "-qm", "legacy gone")
    write(repo, {"README.md": "r2\n"})
    git(repo, "commit", "-qam", "more")
    notes = tmp_path / "facts.md"
    notes.write_text("+ the tool is `legacy/tool.py`\n", encoding="utf-8")
    args = ["check", "--isolated", "--no-progress", "--root", repo, notes]
    before = cli(*args, "--cache-dir", tmp_path / "cache")
    assert "BM101 error cites legacy/tool.py, which no root holds" in before.output
    head = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    if how == "replace":
        git(repo, "replace", "--graft", head)
    else:
        (repo / ".git" / "info").mkdir(exist_ok=True)
        (repo / ".git" / "info" / "grafts").write_text(head + "\n")
    warm = cli(*args, "--cache-dir", tmp_path / "cache")
    cold = cli(*args, "--cache-dir", tmp_path / "cold")
    assert (warm.exit_code, warm.output) == (cold.exit_code, cold.output)
    assert (cold.exit_code, cold.output) == (before.exit_code, before.output)


def test_the_renames_kept_do_not_follow_the_users_rename_limit(tmp_path):
    # diff.renameLimit set after the history was kept left the kept renames as they were
    # while a cold run read fewer: a warm --fix rewrote notes a cold one would not
    repo = tmp_path / "repo"
    write(
        repo,
        {
            "src/a1.py": "".join(f"alpha line {i}\n" for i in range(30)),
            "src/b1.py": "".join(f"beta line {i}\n" for i in range(30)),
        },
    )
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "ab")
    git(repo, "mv", "src/a1.py", "src/a2.py")
    git(repo, "mv", "src/b1.py", "src/b2.py")
    for name in ("a2", "b2"):
        with (repo / "src" / f"{name}.py").open("a") as fh:
            fh.write("extra\n")
    git(repo, "commit", "-qam", "both renamed and edited")
    notes = tmp_path / "facts.md"
    notes.write_text("+ files `src/a1.py` and `src/b1.py`\n", encoding="utf-8")
    args = ["check", "--isolated", "--no-progress", "--root", repo, notes]
    warm = cli(*args, "--cache-dir", tmp_path / "cache")
    git(repo, "config", "diff.renameLimit", "1")
    again = cli(*args, "--cache-dir", tmp_path / "cache")
    cold = cli(*args, "--cache-dir", tmp_path / "cold")
    assert again.output == cold.output == warm.output
    assert "moved? src/a2.py (renamed in git history)" in cold.output
