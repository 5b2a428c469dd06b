"""A root's knowledge cached (``codeindex/rootcache.py``): the listing and the tables taken
from the cache file while its key holds, and the answer following every change that key
is made of; bad cache files rebuilt; an unwritable cache folder still answering."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from trees import committed, write
from trees import git as run

from brainmigrate.codeindex import rootcache
from brainmigrate.codeindex.listing import list_files
from brainmigrate.knowledge import RootKnowledge
from brainmigrate.roots import Root


def settled(*trees: Path, back: int = 60) -> None:
    """Every file and folder under ``trees`` (``.git`` too) made ``back`` seconds old: no
    mtime is then within the racy window of the next listing, so its cache is written."""
    for tree in trees:
        for folder, dirs, files in os.walk(tree, topdown=False):
            for name in files + dirs:
                path = os.path.join(folder, name)
                st = os.lstat(path)
                os.utime(
                    path, ns=(st.st_atime_ns, st.st_mtime_ns - back * 10**9), follow_symlinks=False
                )
        st = os.stat(tree)
        os.utime(tree, ns=(st.st_atime_ns, st.st_mtime_ns - back * 10**9))


def paths(root: Path, cache: Path | None) -> tuple[str, list[str]]:
    way, files = list_files(root, cache)
    return way, [f.path for f in files]


def from_cache(root: Path, cache: Path) -> list[str] | None:
    """The paths the cache file gives for ``root`` now (None: its key no longer holds)."""
    real = os.path.realpath(root)
    hit = rootcache.cached_listing(cache, str(root), real)
    return None if hit is None else [f[0] for f in hit[1]]


@pytest.fixture()
def gitroot(tmp_path):
    root = committed(
        tmp_path / "g",
        {
            ".gitignore": "*.log\nbuild/\n",
            "src/a.py": "a = 1\n",
            "docs/guide.md": "# Guide\n\n## Setup\n",
            "logs/keep.txt": "k\n",
        },
    )
    write(root, {"logs/x.log": "1\n", "build/out.js": "x\n", "untracked.md": "u\n"})
    (root / "empty").mkdir()
    (root / "logs/keep.txt").unlink()  # logs/ now holds only an ignored file
    run(root, "rm", "-q", "--cached", "logs/keep.txt")
    run(root, "commit", "-qm", "drop keep")
    settled(root)
    return root


@pytest.fixture()
def plainroot(tmp_path):
    root = tmp_path / "p"
    write(root, {".gitignore": "build/\n", "src/a.py": "a = 1\n", "build/out.js": "x\n"})
    (root / "empty").mkdir()
    settled(root)
    return root


def test_warm_listing_is_the_cold_one_in_a_git_tree_and_a_plain_one(gitroot, plainroot, tmp_path):
    cache = tmp_path / "cache"
    for root in (gitroot, plainroot):
        cold = paths(root, None)
        assert paths(root, cache) == cold  # made, and written
        assert from_cache(root, cache) == cold[1]
        rootcache._READ.clear()  # as a new process reads it
        assert paths(root, cache) == cold
    assert paths(gitroot, None) == (
        "git",
        [".gitignore", "docs/guide.md", "src/a.py", "untracked.md"],
    )
    assert paths(plainroot, None) == ("scandir", [".gitignore", "src/a.py"])


@pytest.mark.parametrize("kind", ["git", "plain"])
@pytest.mark.parametrize(
    "change, listed",
    [
        ("add", "src/b.py"),
        ("remove", None),
        ("rename", "src/c.py"),
        ("add in a folder of ignored files", "logs/new.txt"),
        ("add in an empty folder", "empty/new.txt"),
        ("add a new folder", "fresh/deep/new.txt"),
    ],
)
def test_the_listing_follows_uncommitted_changes(
    gitroot, plainroot, tmp_path, kind, change, listed
):
    root = gitroot if kind == "git" else plainroot
    cache = tmp_path / "cache"
    before = paths(root, cache)[1]
    assert from_cache(root, cache) == before
    if change == "remove":
        (root / "src/a.py").unlink()
    elif change == "rename":
        (root / "src/a.py").rename(root / "src/c.py")
    else:
        (root / listed).parent.mkdir(parents=True, exist_ok=True)
        (root / listed).write_text("new\n")
    assert from_cache(root, cache) is None  # the key says it changed
    after = paths(root, cache)[1]
    assert after == paths(root, None)[1]
    assert ("src/a.py" in after) == (change not in ("remove", "rename"))
    if listed is not None:
        assert listed in after


def test_the_listing_follows_a_commit_and_an_index_change(gitroot, tmp_path):
    cache = tmp_path / "cache"
    paths(gitroot, cache)
    run(gitroot, "rm", "-q", "--cached", ".gitignore")  # untracked, still listed
    (gitroot / "more.log").write_text("x\n")
    assert from_cache(gitroot, cache) is None
    run(gitroot, "commit", "-qm", "untrack")
    assert paths(gitroot, cache) == paths(gitroot, None)
    settled(gitroot)
    assert from_cache(gitroot, cache) is None  # mtimes moved: made again
    paths(gitroot, cache)
    assert from_cache(gitroot, cache) == paths(gitroot, None)[1]
    run(gitroot, "commit", "-q", "--allow-empty", "-m", "empty")  # HEAD moved alone
    assert from_cache(gitroot, cache) is None


def test_a_gitignore_edited_in_place_is_followed(gitroot, plainroot, tmp_path):
    cache = tmp_path / "cache"
    for root, rule, gone in (
        (gitroot, "*.md\n", "untracked.md"),
        (plainroot, "src/\n", "src/a.py"),
    ):
        paths(root, cache)
        gi = root / ".gitignore"
        st = gi.stat()
        with open(gi, "a", encoding="utf-8") as fh:
            fh.write(rule)
        os.utime(gi, ns=(st.st_atime_ns, st.st_mtime_ns + 1))  # the folder's mtime stays
        assert from_cache(root, cache) is None
        assert gone not in paths(root, cache)[1]
        assert paths(root, cache) == paths(root, None)


def test_a_plain_tree_that_a_git_init_above_takes_in_is_listed_by_git(tmp_path):
    outer = tmp_path / "outer"
    write(outer, {"root/a.py": "a\n", "root/b.log": "b\n", ".gitignore": "*.log\n"})
    settled(outer)
    cache = tmp_path / "cache"
    root = outer / "root"
    assert paths(root, cache) == ("scandir", ["a.py", "b.log"])
    run(outer, "init", "-q")
    run(outer, "add", "-A")
    run(outer, "commit", "-qm", "x")
    assert from_cache(root, cache) is None
    assert paths(root, cache) == ("git", ["a.py"])


def test_a_racy_listing_is_not_written(tmp_path):
    root = tmp_path / "r"
    write(root, {"a.py": "a\n"})  # its folder changed just now
    cache = tmp_path / "cache"
    assert paths(root, cache) == ("scandir", ["a.py"])
    assert from_cache(root, cache) is None


@pytest.mark.parametrize(
    "bad",
    [b"", b"garbage", rootcache.MAGIC + b"\0" * 16 + b"x", b"BMRK0\n" + b"\0" * 40],
    ids=["empty", "corrupt", "checksum", "older format"],
)
def test_bad_cache_files_are_rebuilt(plainroot, tmp_path, bad):
    cache = tmp_path / "cache"
    cache.mkdir()
    target = rootcache.cache_file(cache, os.path.realpath(plainroot))
    target.write_bytes(bad)
    assert paths(plainroot, cache) == paths(plainroot, None)
    assert from_cache(plainroot, cache) == paths(plainroot, None)[1]  # written again


def test_a_truncated_cache_file_and_one_of_another_root_are_rebuilt(plainroot, tmp_path):
    cache = tmp_path / "cache"
    paths(plainroot, cache)
    target = rootcache.cache_file(cache, os.path.realpath(plainroot))
    whole = target.read_bytes()
    target.write_bytes(whole[: len(whole) // 2])
    rootcache._READ.clear()
    assert from_cache(plainroot, cache) is None
    assert paths(plainroot, cache) == paths(plainroot, None)
    other = tmp_path / "other"
    shutil.copytree(plainroot, other)
    settled(other)
    paths(other, cache)
    shutil.copyfile(rootcache.cache_file(cache, os.path.realpath(other)), target)
    rootcache._READ.clear()
    assert from_cache(plainroot, cache) is None  # another root's file: not trusted
    assert paths(plainroot, cache) == paths(plainroot, None)


def test_an_unwritable_cache_folder_still_answers(plainroot, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder\n")
    cache = blocker / "cache"
    assert paths(plainroot, cache) == paths(plainroot, None)
    k = RootKnowledge(Root.of(0, plainroot), cache_dir=cache)
    assert k.line_count("src/a.py") == 1
    k.save()  # nothing written, nothing raised


# ----------------------------------------------------------------------------- tables


def knowledge(root: Path, cache: Path) -> RootKnowledge:
    rootcache._READ.clear()  # each as a new run
    return RootKnowledge(Root.of(0, root), cache_dir=cache)


def test_line_counts_and_heading_anchors_are_kept_and_follow_an_edit(gitroot, tmp_path):
    cache = tmp_path / "cache"
    k = knowledge(gitroot, cache)
    assert k.line_count("docs/guide.md") == 3
    assert k.heading_anchors("docs/guide.md") == frozenset({"guide", "setup"})
    k.save()
    warm = knowledge(gitroot, cache)
    sig = (rootcache.stat_of(str(gitroot / "docs/guide.md")),)
    assert warm.kept().get("lines", "docs/guide.md", sig) == 3
    assert warm.kept().get("anchors", "docs/guide.md", sig) == ("guide", "setup")
    assert warm.line_count("docs/guide.md") == 3
    assert warm.heading_anchors("docs/guide.md") == frozenset({"guide", "setup"})
    (gitroot / "docs/guide.md").write_text("# Guide\n\n## Install\n\nmore\n")
    edited = knowledge(gitroot, cache)
    assert edited.line_count("docs/guide.md") == 5
    assert edited.heading_anchors("docs/guide.md") == frozenset({"guide", "install"})


def test_aliases_and_packages_follow_their_files(plainroot, tmp_path):
    cache = tmp_path / "cache"
    write(
        plainroot,
        {
            "tsconfig.json": '{"compilerOptions": {"paths": {"@/*": ["./src/*"]}}}',
            "web/package.json": '{"name": "@x/web"}',
        },
    )
    settled(plainroot)
    k = knowledge(plainroot, cache)
    assert k.aliases() == [("@/", "", (("src/", ""),))]
    assert k.packages() == {"@x/web": "web"}
    k.save()
    warm = knowledge(plainroot, cache)
    assert warm.aliases() == [("@/", "", (("src/", ""),))]
    assert warm.packages() == {"@x/web": "web"}
    assert warm.kept().get(
        "packages", "web/package.json", (rootcache.stat_of(str(plainroot / "web/package.json")),)
    ) == {"@x/web": "web"}
    (plainroot / "tsconfig.json").write_text('{"compilerOptions": {"paths": {"~/*": ["lib/*"]}}}')
    (plainroot / "web/package.json").write_text('{"name": "@x/site"}')
    edited = knowledge(plainroot, cache)
    assert edited.aliases() == [("~/", "", (("lib/", ""),))]
    assert edited.packages() == {"@x/site": "web"}


def test_remotes_follow_a_changed_remote(gitroot, tmp_path):
    cache = tmp_path / "cache"
    run(gitroot, "remote", "add", "origin", "https://github.com/o/first.git")
    settled(gitroot)
    k = knowledge(gitroot, cache)
    assert k.remotes() == [("github.com", "o", "first")]
    assert rootcache.trusted_remotes(os.path.realpath(gitroot)) is None  # listed cold
    warm = knowledge(gitroot, cache)
    assert warm.remotes() == [("github.com", "o", "first")]
    assert rootcache.trusted_remotes(os.path.realpath(gitroot)) == (
        ("remote.origin.url", "https://github.com/o/first.git"),
    )
    run(gitroot, "remote", "set-url", "origin", "https://github.com/o/second.git")
    assert knowledge(gitroot, cache).remotes() == [("github.com", "o", "second")]


# ------------------------------------------------------------------ whole runs, any seed


def _check(root: Path, notes: Path, cache: Path, seed: str) -> bytes:
    env = {**os.environ, "PYTHONHASHSEED": seed, "BRAINMIGRATE_CACHE_DIR": str(cache)}
    env.pop("CI", None)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "brainmigrate",
            "check",
            "--isolated",
            "--no-progress",
            "--format",
            "json",
            "--root",
            str(root),
            str(notes),
        ],
        capture_output=True,
        env=env,
        cwd=root.parent,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr
    return done.stdout


def test_check_outputs_are_byte_identical_across_hash_seeds_cold_and_warm(tmp_path):
    root = committed(
        tmp_path / "app",
        {
            "src/Widget.ts": "export class Widget {}\nexport function makeWidget() {}\n",
            "src/Other.ts": "export class Other {}\n",
            "docs/guide.md": "# Guide\n\n## Setup\n",
            "package.json": '{"name": "@app/root"}',
            "tsconfig.json": '{"compilerOptions": {"paths": {"@/*": ["./src/*"]}}}',
        },
    )
    notes = tmp_path / "CLAUDE.md"
    notes.write_text(
        "# Notes\n\n- `Widget` and `makeWidget` live in `src/Widget.ts`; see `@/Other.ts`.\n"
        "- Gone: `src/Gone.ts`, `docs/guide.md#setup`, `docs/guide.md#nope`, `docs/guide.md:9`.\n"
        "- `Missing` and `Other` are names.\n"
    )
    settled(root)
    outputs = set()
    for seed in ("0", "1"):
        cache = tmp_path / f"cache{seed}"
        cold = _check(root, notes, cache, seed)
        warm = _check(root, notes, cache, seed)
        assert cold == warm
        outputs.add(cold)
    assert len(outputs) == 1
    assert b"src/Gone.ts" in outputs.pop()


# ------------------------------------------------ name lookups' misses (declaration cache)


def _lookup(root: Path, cache: Path, names: set[str]):
    from brainmigrate.codeindex import CodeIndex

    index = CodeIndex(root, cache_dir=cache)
    found = index.declarations_of(names)
    return index, {n: [(d.path, d.name_line) for d in ds] for n, ds in found.items()}


def test_files_a_lookup_found_no_declaration_in_are_not_read_again_while_unchanged(tmp_path):
    from brainmigrate.codeindex import scan as scan_module

    root = tmp_path / "r"
    write(
        root,
        {
            "a.py": "class Alpha:\n    pass\n",
            "uses.py": "from a import Alpha\nx = Alpha()\n",  # mentions, declares not
            "other.py": "y = 1\n",
        },
    )
    settled(root)
    cache = tmp_path / "cache"
    index, cold = _lookup(root, cache, {"Alpha", "Beta"})
    assert cold == {"Alpha": [("a.py", 1)]}
    assert index.shape_skips == 1
    kept = index._entries[scan_module.MISSES]
    assert kept == (
        True,
        ("Alpha", "Beta"),
        {
            "uses.py": (32, os.stat(root / "uses.py").st_mtime_ns, "python"),
            "other.py": (6, os.stat(root / "other.py").st_mtime_ns, "python"),
        },
    )
    warm, again = _lookup(root, cache, {"Alpha"})  # fewer names: the misses hold
    assert again == cold and warm.shape_skips == 0
    (root / "uses.py").write_text("class Beta:\n    pass\n")  # edited: read again
    edited, now = _lookup(root, cache, {"Alpha", "Beta"})
    assert now == {"Alpha": [("a.py", 1)], "Beta": [("uses.py", 1)]}
    (root / "other.py").write_text("class Gamma:\n    pass\n")
    settled(root)
    wider, more = _lookup(root, cache, {"Alpha", "Gamma"})  # a new name: all read again
    assert more == {"Alpha": [("a.py", 1)], "Gamma": [("other.py", 1)]}


# ------------------------------------------------------------ ignore rules, combined


def test_combined_ignore_rules_answer_as_the_rules_one_by_one():
    from brainmigrate.codeindex.listing import IgnoreRules, parse_gitignore

    top = "*.log\n!keep.log\nbuild/\n/dist\ndocs/**/draft.md\n**/tmp\na[!x]b\n*.py[co]\n**\n"
    rules = IgnoreRules(
        tuple(parse_gitignore(top.replace("**\n", ""), ""))
        + tuple(parse_gitignore("*.gen.ts\n!important.gen.ts\nout/\n", "web"))
    )
    every = IgnoreRules(tuple(parse_gitignore("**\n!src/\n", "")))

    def one_by_one(r: IgnoreRules, path: str, is_dir: bool) -> bool:
        result = False
        for rule in r.rules:
            if rule.dir_only and not is_dir:
                continue
            if rule.base and not path.startswith(rule.base + "/"):
                continue
            if rule.regex.match(path[len(rule.base) + 1 :] if rule.base else path):
                result = not rule.negate
        return result

    paths = [
        "a.log",
        "x/keep.log",
        "keep.log",
        "build",
        "x/build",
        "dist",
        "x/dist",
        "docs/draft.md",
        "docs/a/b/draft.md",
        "tmp",
        "x/y/tmp",
        "a/b",
        "aab",
        "axb",
        "m.pyc",
        "m.py",
        "web/a.gen.ts",
        "web/important.gen.ts",
        "a.gen.ts",
        "web/out",
        "out",
        "src",
        "src/x.py",
        "name with space",
        "ünï/cødé.log",
    ]
    combined = [IgnoreRules(r.rules, True) for r in (rules, every)]
    for r in (rules, every, *combined):
        for path in paths:
            for is_dir in (False, True):
                assert r.ignored(path, is_dir) == one_by_one(r, path, is_dir), (path, is_dir)
    assert rules.ignored("a.log", False) and not rules.ignored("x/keep.log", False)
    assert rules.ignored("web/a.gen.ts", False) and not rules.ignored("a.gen.ts", False)


def test_info_exclude_edited_is_followed_by_the_listing_and_the_ignore_rules(gitroot, tmp_path):
    cache = tmp_path / "cache"
    (gitroot / "secret.txt").write_text("s\n")
    settled(gitroot)
    assert "secret.txt" in knowledge(gitroot, cache).files
    warm = knowledge(gitroot, cache)
    assert "secret.txt" in warm.files and not warm.ignored("other/secret.txt")
    assert rootcache.trusted_exclude(os.path.realpath(gitroot)) == (
        "",
        os.path.join(os.path.realpath(gitroot), ".git/info/exclude"),
    )
    with open(gitroot / ".git/info/exclude", "a", encoding="utf-8") as fh:
        fh.write("secret.txt\n")
    edited = knowledge(gitroot, cache)
    assert "secret.txt" not in edited.files
    assert edited.ignored("secret.txt") and edited.ignored("other/secret.txt")


def test_misses_of_a_narrower_lookup_are_kept_for_its_names_only(tmp_path):
    # a file read for Alpha alone says nothing of Beta: kept under the wider set, a later
    # lookup of Beta trusted it and missed the class it now declares
    root = tmp_path / "r"
    write(root, {"y.py": "z = 1\n"})
    settled(root)
    cache = tmp_path / "cache"
    assert _lookup(root, cache, {"Alpha", "Beta"})[1] == {}
    (root / "y.py").write_text("class Beta:\n    pass\n")
    settled(root)
    assert _lookup(root, cache, {"Alpha"})[1] == {}
    assert _lookup(root, cache, {"Beta"})[1] == {"Beta": [("y.py", 1)]}
    assert _lookup(root, tmp_path / "cold", {"Beta"})[1] == {"Beta": [("y.py", 1)]}


def test_a_miss_read_as_c_is_read_again_as_cpp(tmp_path):
    # a .h file is C until the root holds a C++ file: its miss as C says nothing of C++
    import json

    from clirun import cli

    root = tmp_path / "r"
    write(root, {"widget.h": "class FooBar {\npublic:\n  int x;\n};\n"})
    (tmp_path / "n.md").write_text("~ the `FooBar` widget\n", encoding="utf-8")
    settled(root)

    def anchors(cache):
        args = ["import", "--dry-run", "--isolated", "--no-progress", "--notation", "brain"]
        args += ["--root", root, "--cache-dir", cache, "--format", "json", tmp_path / "n.md"]
        done = cli(*args)
        [fact] = json.loads(done.output)["facts"]
        return [(a["kind"], a.get("symbol")) for a in fact.get("anchors", [])]

    assert anchors(tmp_path / "cache") == []
    write(root, {"main.cpp": "int main() { return 0; }\n"})
    old = os.stat(root / "widget.h").st_mtime_ns  # widget.h itself unchanged
    for path in (root / "main.cpp", root):
        os.utime(path, ns=(old, old))
    assert anchors(tmp_path / "cache") == anchors(tmp_path / "cold") == [("symbol", "FooBar")]


def _anchors(root, notes, cache, env=None):
    import json

    from clirun import cli

    args = ["import", "--dry-run", "--isolated", "--no-progress", "--notation", "brain"]
    done = cli(*args, "--root", root, "--cache-dir", cache, "--format", "json", notes, env=env)
    return [
        [(a["kind"], a.get("path") or a.get("symbol")) for a in f.get("anchors", [])]
        for f in json.loads(done.output)["facts"]
    ]


def test_a_dangling_link_whose_target_appears_in_an_ignored_folder_is_listed(tmp_path):
    # build/ is ignored whole, so no folder of the key changed when build/out.txt was made
    root = tmp_path / "root"
    write(root, {"build/keep.txt": "keep\n"})
    (root / "link.txt").symlink_to("build/out.txt")
    committed(root, {".gitignore": "build/\n"})
    notes = tmp_path / "n.md"
    notes.write_text("~ see `link.txt` for the output\n", encoding="utf-8")
    settled(root)
    cache = tmp_path / "cache"
    assert _anchors(root, notes, cache) == [[]]
    (root / "build" / "out.txt").write_text("hello\n")
    settled(root / "build")
    assert _anchors(root, notes, cache) == _anchors(root, notes, tmp_path / "cold")
    assert _anchors(root, notes, cache) == [[("file", "link.txt")]]


def test_a_git_configuration_file_made_after_the_listing_is_read(tmp_path):
    # the global configuration did not exist when the listing was kept: only the files git
    # named were keyed, so an excludesFile set there later was not seen
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "GIT_CONFIG_NOSYSTEM": "1"}
    root = tmp_path / "root"
    committed(root, {"kept.txt": "y\n"})
    write(root, {"scratch.txt": "x\n"})  # untracked, not ignored
    notes = tmp_path / "n.md"
    notes.write_text("~ see `scratch.txt` for the output\n", encoding="utf-8")
    settled(root)
    cache = tmp_path / "cache"
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        assert _anchors(root, notes, cache) == [[("file", "scratch.txt")]]
        (home / ".config" / "git").mkdir(parents=True)
        (home / ".config" / "git" / "config").write_text(
            f"[core]\n\texcludesFile = {home / 'myignore'}\n"
        )
        (home / "myignore").write_text("scratch.txt\n")
        assert _anchors(root, notes, cache) == _anchors(root, notes, tmp_path / "cold") == [[]]
    finally:
        for k, v in old.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)


def test_a_line_count_follows_a_link_turned_to_a_file_of_the_same_size_and_time(tmp_path):
    from clirun import cli

    root = tmp_path / "root"
    write(root, {"x.md": "a\nb\nc\nd\ne\nf\n", "y.md": "aaaaa\nbbbbb\n"})  # 12 bytes each
    t = 1577836800 * 10**9
    for name in ("x.md", "y.md"):
        os.utime(root / name, ns=(t, t))
    (root / "link.md").symlink_to("x.md")
    settled(root)
    notes = tmp_path / "n.md"
    notes.write_text("~ the steps are in `link.md#L5`\n", encoding="utf-8")
    args = ["check", "--isolated", "--no-progress", "--notation", "brain", "--root", root, notes]
    assert "0 findings" in cli(*args, "--cache-dir", tmp_path / "cache").output
    (root / "link.md").unlink()
    (root / "link.md").symlink_to("y.md")
    settled(root)
    warm = cli(*args, "--cache-dir", tmp_path / "cache").output
    assert warm == cli(*args, "--cache-dir", tmp_path / "cold").output
    assert "BM204 warning line 5 is past the end of link.md (2 lines)" in warm
    # a kept table's signature holds the file's identity: two files written in one clock
    # tick with one size and mtime differ by inode
    from brainmigrate.codeindex.rootcache import stat_of

    x, y = os.stat(root / "x.md"), os.stat(root / "link.md")
    assert stat_of(str(root / "link.md")) == (12, y.st_mtime_ns, y.st_ctime_ns, y.st_ino, y.st_dev)
    assert stat_of(str(root / "link.md")) != stat_of(str(root / "x.md"))
    assert x.st_size == y.st_size


def test_a_kept_table_of_another_shape_is_built_again(tmp_path):
    from clirun import cli

    from brainmigrate.codeindex import rootcache

    root = tmp_path / "root"
    write(
        root,
        {
            "tsconfig.json": '{"compilerOptions": {"paths": {"@app/*": ["src/*"]}}}',
            "src/a.ts": "export const a = 1\n",
        },
    )
    settled(root)
    notes = tmp_path / "n.md"
    notes.write_text("~ see `@app/a.ts`\n", encoding="utf-8")
    cache = tmp_path / "cache"
    args = ["check", "--isolated", "--no-progress", "--notation", "brain", "--root", root, notes]
    first = cli(*args, "--cache-dir", cache)
    real = os.path.realpath(root)
    path = rootcache.cache_file(cache, real)
    data = rootcache.load(path, real)
    sig = data["tables"]["aliases"]["tsconfig.json"][0]
    data["tables"]["aliases"] = {"tsconfig.json": (sig, 7)}  # the same key, a number
    rootcache.save(path, data)
    again = cli(*args, "--cache-dir", cache)
    assert (again.exit_code, again.output) == (first.exit_code, first.output)


def test_an_included_configuration_file_that_was_empty_is_keyed(tmp_path):
    # [include] path = extra.cfg named a file with no entries yet: git named no entry from
    # it, so an excludesFile written there later was not seen
    root = tmp_path / "root"
    committed(root, {"kept.txt": "y\n"})
    write(root, {"scratch.txt": "x\n"})
    extra = tmp_path / "extra.cfg"
    extra.write_text("")
    run(root, "config", "include.path", str(extra))
    notes = tmp_path / "n.md"
    notes.write_text("~ see `scratch.txt` for the output\n", encoding="utf-8")
    settled(root)
    cache = tmp_path / "cache"
    assert _anchors(root, notes, cache) == [[("file", "scratch.txt")]]
    (tmp_path / "ignore").write_text("scratch.txt\n")
    extra.write_text(f"[core]\n\texcludesFile = {tmp_path / 'ignore'}\n")
    assert _anchors(root, notes, cache) == _anchors(root, notes, tmp_path / "cold") == [[]]
