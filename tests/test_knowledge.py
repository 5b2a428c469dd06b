"""Root knowledge: what a root holds and held, its remotes, aliases, packages, ignore rules,
line counts and heading anchors (SPEC.md §Anchors 1)."""

from __future__ import annotations

import json
import subprocess

import pytest
from trees import git as run
from trees import write

from brainmigrate import git, knowledge, roottables
from brainmigrate.knowledge import RootKnowledge, git_history
from brainmigrate.read import links
from brainmigrate.roots import Root

# ------------------------------------------------------------------------------ tables


def test_loose_json_reads_comments_and_trailing_commas():
    text = '{\n  // a comment\n  "a": [1, 2,], /* block */ "b": "x // not a comment",\n}\n'
    assert roottables.loose_json(text) == {"a": [1, 2], "b": "x // not a comment"}
    assert roottables.loose_json("{ nope") is None


def test_aliases_of_a_tsconfig_with_comments_and_base_url():
    text = """{
      // paths as a Next.js app writes them
      "compilerOptions": {
        "baseUrl": ".",
        "paths": {
          "@/*": ["./src/*"],
          "~lib/*": ["lib/*", "vendor/lib/*",],
          "exact": ["./src/exact.ts"],
          "@up/*": ["../outside/*"],
        },
      },
    }"""
    assert roottables.aliases(text) == [
        ("~lib/", "", (("lib/", ""), ("vendor/lib/", ""))),
        ("@/", "", (("src/", ""),)),
    ]
    nested = '{"compilerOptions": {"baseUrl": "web", "paths": {"#/*": ["app/*.ts"]}}}'
    assert roottables.aliases(nested) == [("#/", "", (("web/app/", ".ts"),))]
    assert roottables.aliases('{"compilerOptions": {}}') == []


@pytest.mark.parametrize(
    "remote, parts",
    [
        ("https://github.com/O/R.git", ("github.com", "o", "r")),
        ("git@github.com:o/r.git", ("github.com", "o", "r")),
        ("ssh://git@gitlab.example.org:2222/group/sub/r", ("gitlab.example.org", "group/sub", "r")),
        ("https://user@bitbucket.org/team/repo", ("bitbucket.org", "team", "repo")),
        ("/srv/git/r.git", None),
        ("file:///srv/git/r.git", None),
    ],
)
def test_remote_parts(remote, parts):
    assert links.remote_parts(remote) == parts


@pytest.mark.parametrize(
    "url, path",
    [
        ("https://github.com/o/r/blob/main/src/x.py", "src/x.py"),
        ("https://github.com/O/R/tree/v1.2/docs", "docs"),
        ("https://github.com/o/r/raw/0a1b2c/bin/dev", "bin/dev"),
        ("https://gitlab.com/o/r/-/blob/main/app/X.php", "app/X.php"),
        ("https://raw.githubusercontent.com/o/r/main/README.md", "README.md"),
        ("https://github.com/o/r/issues/12", None),
        ("https://github.com/o/r/blob/main", None),
        ("https://github.com/other/r/blob/main/src/x.py", None),
    ],
)
def test_own_url_path(url, path):
    parts = links.repo_url_parts(url)
    own = parts is not None and (parts.owner, parts.repo) == ("o", "r")
    assert (parts.path if own else None) == path


def test_heading_anchors_are_githubs_slugs_and_explicit_ids():
    lines = [
        "# Rollback steps",
        "## Rollback steps",
        "## Rollback steps",
        "### `cache` and [the guide](x.md) — v2.0!",
        "Setext title",
        "============",
        "```",
        "# not a heading",
        "```",
        "## Custom {#my-id}",
        '<a name="old-anchor"></a> and <h2 id=raw-id>',
        "- a list item",
        "---",
        "## Choosing a task [![Join the chat](https://badges.example/x.svg)](https://chat.example)",
        "## ![logo](logo.png) Logo",
    ]
    assert roottables.heading_anchors(lines) == frozenset(
        {
            "choosing-a-task-",  # jabref's CONTRIBUTING.md: the badge leaves its space
            "-logo",
            "rollback-steps",
            "rollback-steps-1",
            "rollback-steps-2",
            "cache-and-the-guide--v20",
            "setext-title",
            "my-id",
            "custom",
            "old-anchor",
            "raw-id",
        }
    )


# ------------------------------------------------------------------------------ a root


@pytest.fixture
def repo(tmp_path):
    """A git work tree: tracked files, an untracked one, ignored ones, a deleted folder."""
    root = tmp_path / "shelfwise"
    write(
        root,
        {
            "bin/dev": "#!/bin/sh\n",
            "src/lib/date.ts": "export {}\n",
            "old/gone/flow.md": "x\n",
            ".gitignore": "tmp/\n*.log\n!keep.log\n",
            "apps/web/.gitignore": "dist/\n",
            "apps/web/package.json": '{"name": "@tallyfin/web"}',
            "packages/tokens/package.json": '{"name": "@tallyfin/tokens", }',
            "node_modules/left-pad/package.json": '{"name": "left-pad"}',
            "docs/runbook.md": "# Runbook\n\n## Rollback steps\ntext",
        },
    )
    run(root, "init", "-q")
    run(root, "add", "-A")
    run(root, "commit", "-qm", "one")
    run(root, "rm", "-q", "-r", "old")
    run(root, "commit", "-qm", "two")
    write(root, {"notes/draft.md": "x\n", "tmp/pids/server.pid": "1\n", "keep.log": "k\n"})
    (root / ".git/info/exclude").write_text("secret.txt\n")
    return root


def test_files_folders_and_names_from_gits_listing(repo):
    k = RootKnowledge(Root.of(0, repo))
    assert k.is_git()
    assert "bin/dev" in k.files and "notes/draft.md" in k.files and "keep.log" in k.files
    assert "tmp/pids/server.pid" not in k.files  # ignored: git lists it nowhere
    assert {"bin", "src", "src/lib", "apps", "apps/web", "docs"} <= k.folders
    assert "tmp" not in k.folders and "old" not in k.folders
    assert k.named("package.json") == [
        "apps/web/package.json",
        "node_modules/left-pad/package.json",
        "packages/tokens/package.json",
    ]
    assert k.packages() == {"@tallyfin/web": "apps/web", "@tallyfin/tokens": "packages/tokens"}


def test_ignore_rules_as_git_reads_them(repo):
    k = RootKnowledge(Root.of(0, repo))
    assert k.ignored("tmp/pids/server.pid")  # exists, ignored by its folder
    assert k.ignored("log/development.log")  # need not exist
    assert k.ignored("apps/web/dist/app.js")  # a nested .gitignore
    assert k.ignored("secret.txt")  # .git/info/exclude
    assert k.ignored("tmp", folder=True)
    assert not k.ignored("keep.log")  # re-included, and listed
    assert not k.ignored("src/gone.ts")
    assert not k.ignored("dist/app.js")  # apps/web's rule holds under apps/web only


def test_a_root_that_is_no_git_work_tree_reads_its_gitignore_files(tmp_path):
    write(tmp_path / "r", {".gitignore": "build/\n", "src/a.py": "x\n", "build/out.js": "x"})
    k = RootKnowledge(Root.of(0, tmp_path / "r"))
    assert not k.is_git()
    assert k.files == frozenset({".gitignore", "src/a.py"})
    assert k.ignored("build/out.js") and k.ignored("build/other.js")
    assert not k.ignored("src/b.py")


def test_history_holds_deleted_paths_and_their_folders_and_is_cached_by_head(
    repo, tmp_path, monkeypatch
):
    cache = tmp_path / "cache"
    history = git_history(Root.of(0, repo), cache)
    assert "old/gone/flow.md" in history.paths
    assert {"old", "old/gone", "bin", "src/lib"} <= history.folders
    assert "old" in history.firsts and history.unavailable == ""
    [kept] = cache.glob("githistory-*.bin")
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True).stdout
    header = json.loads(kept.read_bytes().split(b"\n", 1)[0])
    assert (header["format"], header["head"], header["shallow"]) == (4, head.strip().decode(), "")
    assert list(header["parts"]) == ["gone"]
    # a second run at the same HEAD runs no git at all
    real = git.run_git
    calls = []

    def spy(folder, *args, **kw):
        calls.append(args[0])
        return real(folder, *args, **kw)

    monkeypatch.setattr(git, "run_git", spy)
    again = git_history(Root.of(0, repo), cache)
    assert again == history
    assert calls == []
    # a new commit is a new HEAD: read again
    write(repo, {"new.md": "x"})
    run(repo, "add", "new.md")
    run(repo, "commit", "-qm", "three")
    calls.clear()
    third = git_history(Root.of(0, repo), cache)
    assert "log" in calls and "new.md" in third.paths


def test_held_says_a_file_or_a_folder_the_history_held(repo):
    k = RootKnowledge(Root.of(0, repo))
    assert k.held("old/gone/flow.md") and k.held("old/gone") and k.held("old")
    assert not k.held("old/other") and not k.held("never")


def test_remotes_origin_first(repo):
    run(repo, "remote", "add", "backup", "git@gitlab.com:me/mirror.git")
    run(repo, "remote", "add", "origin", "https://github.com/o/r.git")
    k = RootKnowledge(Root.of(0, repo))
    assert k.remotes() == [("github.com", "o", "r"), ("gitlab.com", "me", "mirror")]
    assert k.folder_names() == frozenset({"shelfwise", "r", "mirror"})


def test_aliases_and_line_counts_and_headings_of_a_root(tmp_path):
    write(
        tmp_path / "r",
        {
            "tsconfig.json": '{"compilerOptions": {/* c */ "paths": {"@/*": ["./src/*"],}}}',
            "src/a.ts": "one\ntwo\nthree",
            "docs/x.md": "# Title\n\n## Title\n",
        },
    )
    k = RootKnowledge(Root.of(0, tmp_path / "r"))
    assert k.aliases() == [("@/", "", (("src/", ""),))]
    assert k.line_count("src/a.ts") == 3
    assert k.line_count("docs/x.md") == 3
    assert k.line_count("src/none.ts") is None
    assert k.heading_anchors("docs/x.md") == frozenset({"title", "title-1"})


def test_a_listing_is_taken_once(tmp_path):
    write(tmp_path / "r", {"a/b.py": "x"})
    calls = []

    def listing():
        calls.append(1)
        return "scandir", ["a/b.py"]

    k = RootKnowledge(Root.of(0, tmp_path / "r"), listing)
    assert k.files == frozenset({"a/b.py"}) and k.folders == frozenset({"a"})
    assert k.named("b.py") == ["a/b.py"] and k.tops == frozenset({"a"})
    assert calls == [1]


def test_folders_of():
    assert knowledge.folders_of(["a/b/c.py", "a/d.py", "e"]) == {"a", "a/b"}


def test_ignore_rules_agree_with_git_check_ignore(tmp_path):
    """Paths no root lists are ignored exactly when ``git check-ignore`` says so."""
    root = tmp_path / "r"
    write(
        root,
        {
            ".gitignore": (
                "*.log\n!important.log\n/build\nnode_modules/\ndocs/**/tmp\n"
                "cache/*\n!cache/keep.txt\n# a comment\n\\#hash.txt\n*.py[co]\n"
            ),
            "sub/.gitignore": "*.tmp\n/local/\n",
            "src/a.py": "x",
        },
    )
    run(root, "init", "-q")
    run(root, "add", "-A")
    run(root, "commit", "-qm", "one")
    k = RootKnowledge(Root.of(0, root))
    paths = [
        "x.log",
        "deep/x.log",
        "important.log",
        "build/out.js",
        "src/build/out.js",
        "node_modules/a/b.js",
        "web/node_modules/a.js",
        "docs/a/b/tmp/x.md",
        "docs/tmp/x.md",
        "cache/x.bin",
        "cache/keep.txt",
        "#hash.txt",
        "src/b.pyc",
        "sub/a.tmp",
        "a.tmp",
        "sub/local/x.md",
        "local/x.md",
        "src/new.py",
    ]
    said = subprocess.run(
        ["git", "check-ignore", "--stdin"],
        cwd=root,
        input="\n".join(paths) + "\n",
        capture_output=True,
        text=True,
    ).stdout.split()
    assert [p for p in paths if k.ignored(p)] == said
    assert said == [
        "x.log",
        "deep/x.log",
        "build/out.js",
        "node_modules/a/b.js",
        "web/node_modules/a.js",
        "docs/a/b/tmp/x.md",
        "docs/tmp/x.md",
        "cache/x.bin",
        "#hash.txt",
        "src/b.pyc",
        "sub/a.tmp",
        "sub/local/x.md",
    ]
