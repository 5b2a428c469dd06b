"""What the roots know comes first (SPEC.md §Anchors 1, 2, 4): folders and extensionless
files, readings relative to the notes file, absolute checkout paths, links into the root's
own repository, aliases and workspace packages, git-ignored paths, the nearest bare name,
module paths, and lines and fragments checked."""

from __future__ import annotations

import pytest
from trees import git, write

from brainmigrate import importer
from brainmigrate.anchors import Resolver
from brainmigrate.codeindex import CodeIndex
from brainmigrate.paths import PathResolver
from brainmigrate.read.facts import TaskIds, build_fact
from brainmigrate.read.lines import Line
from brainmigrate.read.run import ImportOptions
from brainmigrate.roots import Root


def commit_all(root, message="c"):
    git(root, "add", "-A")
    git(root, "commit", "-qm", message)


def at(text, sub):
    """The column ``sub`` starts at in ``text`` written as ``scan`` writes it."""
    return text.index(sub) + 3


def scan(roots, text, notes=None, cache=None):
    """``text`` as one fact of notes file ``notes`` (a path, default: outside every root)
    resolved against ``roots``: (anchors, citations, diagnostics), each as tuples."""
    made = [Root.of(i, r) for i, r in enumerate(roots)]
    index_cache = (cache or roots[0].parent / "cache") / "index"
    res = Resolver(made, lambda: CodeIndex(made[0].path, cache_dir=index_cache), cache)
    lines = [Line(1, "fact", marker="+", text=" " + text, col=2)]
    fact = build_fact("n.md", lines, "area:n", "environment", TaskIds(), [])
    diags = []
    out = res.scan(fact, diags, str(notes.parent) if notes is not None else None)
    res.finish()
    out = res.complete(out)
    return (
        [(a.kind, a.path, a.lines, a.how) for a in out.anchors],
        [(c.state, c.name, c.col) for c in out.citations],
        [(d.code, d.message, d.col) for d in diags],
    )


# ------------------------------------------------------------------------------ folders


@pytest.fixture
def app(tmp_path):
    """A git work tree with scripts, folders, a history and ignored runtime files."""
    root = tmp_path / "shelfwise"
    write(
        root,
        {
            "bin/dev": "#!/bin/sh\n",
            "bin/seed-demo": "#!/bin/sh\n",
            ".husky/pre-push": "npm test\n",
            "tools/legacy-import/run.py": "print()\n",
            "pkg/ui/popup/index.ts": "export {}\n",
            "app/Http/X.php": "<?php\n",
            "src/x.py": "one\ntwo\n",
            "docs/runbook.md": "# Runbook\n\n## Rollback steps\n",
            ".gitignore": "tmp/\nlog/\n/dist/\n",
        },
    )
    git(root, "init", "-q")
    commit_all(root, "one")
    git(root, "rm", "-q", "bin/seed-demo")
    git(root, "rm", "-q", "-r", "tools/legacy-import")
    write(root, {"tools/keep.txt": "x"})
    commit_all(root, "two")
    write(root, {"tmp/pids/server.pid": "42\n"})
    return root


def test_folders_and_extensionless_files_a_root_holds_are_anchors(app):
    anchors, citations, _ = scan(
        [app], "run bin/dev and .husky/pre-push; see pkg/ui/popup and tools/ and `bin/`"
    )
    assert anchors == [
        ("file", "bin/dev", None, "cited"),
        ("file", ".husky/pre-push", None, "cited"),
        ("folder", "pkg/ui/popup", None, "cited"),
        ("folder", "tools", None, "cited"),
        ("folder", "bin", None, "cited"),
    ]
    assert citations == []


def test_what_only_the_history_held_is_gone_and_the_rest_no_citation(app):
    anchors, citations, _ = scan(
        [app],
        "bin/seed-demo, tools/legacy-import/ and and/or origin/main text/html 11/29/2026",
    )
    assert anchors == []
    assert citations == [("gone", "bin/seed-demo", 3), ("gone", "tools/legacy-import/", 18)]


def test_a_folder_no_root_holds_is_gone_or_unresolved_as_a_file_is(app):
    text = "docs/adr/ and bin/old/ and vendor/thing/"
    _, citations, _ = scan([app], text)
    assert citations == [
        ("gone", "docs/adr/", 3),  # its first folder is there
        ("gone", "bin/old/", at(text, "bin/old")),
        ("unresolved", "vendor/thing/", at(text, "vendor")),
    ]


def test_a_maybe_token_is_looked_up_without_walking_the_tree(app):
    paths = PathResolver([Root.of(0, app)])
    assert paths.resolve("bin/dev", kind="maybe") == ("found", 0, "bin/dev", "file")
    assert paths.resolve("pkg/ui", kind="maybe") == ("found", 0, "pkg/ui", "folder")
    assert paths.resolve("tools/legacy-import", kind="maybe") == ("gone", "tools/legacy-import")
    assert paths.resolve("and/or", kind="maybe") is None
    assert paths.resolve("tools/legacy-import/", kind="folder") == ("gone", "tools/legacy-import/")
    assert paths.resolve("tools/", kind="folder") == ("found", 0, "tools", "folder")


# ------------------------------------------------------------------------------ ignored


def test_git_ignored_paths_are_ignored_whether_or_not_they_exist(app):
    text = "pid in tmp/pids/server.pid, logs in log/development.log, built dist/app.js"
    anchors, citations, _ = scan([app], text)
    assert anchors == []
    assert citations == [
        ("ignored", "tmp/pids/server.pid", at(text, "tmp/")),
        ("ignored", "log/development.log", at(text, "log/")),
        ("ignored", "dist/app.js", at(text, "dist/")),
    ]


def test_an_ignored_folder_and_a_tracked_file_under_an_ignore_rule(app):
    write(app, {"log/keep.md": "x"})
    git(app, "add", "-f", "log/keep.md")
    anchors, citations, _ = scan([app], "log/keep.md and tmp/ and log/other.md")
    assert anchors == [("file", "log/keep.md", None, "cited")]
    assert citations == [("ignored", "tmp", 19), ("ignored", "log/other.md", 28)]


def test_a_notes_folder_ignored_past_its_own_file_does_not_hide_a_gone_path(tmp_path):
    """``w/*`` then ``!w/keep.md``: keep.md's ``src/Gone.kt`` read in its own folder is
    ignored, but the roots' top knows ``src/``, so that reading judges it: gone (BM101),
    not ignored (BM105, exit 0)."""
    repo = tmp_path / "repo"
    write(repo, {"src/A.kt": "class A", "notes/.gitignore": "w/*\n!w/keep.md\n"})
    write(repo, {"notes/w/keep.md": "+ see src/Gone.kt for it\n"})
    git(repo, "init", "-q")
    commit_all(repo)
    text = "see src/Gone.kt and ./run.log"
    _, citations, _ = scan([repo], text, notes=repo / "notes" / "w" / "keep.md")
    gone, ignored = ("gone", "src/Gone.kt", at(text, "src/")), at(text, "./run")
    assert citations == [gone, ("ignored", "notes/w/run.log", ignored)]


def test_a_file_once_tracked_past_its_ignore_rule_is_gone_not_ignored(tmp_path):
    """``git add -f config/app.yml`` under ``config/*.yml``, then ``git rm``: the history
    held it, so it was a file of the repository, not a runtime file: gone (BM101), while a
    never-tracked ``config/local.yml`` stays ignored."""
    repo = tmp_path / "repo"
    write(repo, {"src/x.py": "x", "config/app.yml": "a", ".gitignore": "config/*.yml\n"})
    git(repo, "init", "-q")
    commit_all(repo)
    git(repo, "add", "-f", "config/app.yml")
    git(repo, "commit", "-qm", "tracked past the rule")
    git(repo, "rm", "-q", "config/app.yml")
    git(repo, "commit", "-qm", "dropped")
    text = "config/app.yml and config/local.yml"
    _, citations, _ = scan([repo], text)
    assert citations == [("gone", "config/app.yml", 3), ("ignored", "config/local.yml", 22)]


# ------------------------------------------------------------------------------ readings


@pytest.fixture
def monorepo(tmp_path):
    root = tmp_path / "mono"
    write(
        root,
        {
            "apps/web/CLAUDE.md": "+ notes\n",
            "apps/web/src/lib/navigation.ts": "export {}\n",
            "apps/web/package.json": '{"name": "web"}',
            "apps/api/package.json": '{"name": "api"}',
            "package.json": '{"name": "mono"}',
            "src/x.py": "x\n",
            "src/shared.ts": "root copy\n",
            "apps/web/src/shared.ts": "package copy\n",
            ".claude/notes/n.md": "+ notes\n",
            "app-shared/index.ts": "x\n",
            "apps/web/editors/a.ts": "x\n",
        },
    )
    return root


def test_a_package_notes_file_reads_package_relative_paths(monorepo):
    notes = monorepo / "apps/web/CLAUDE.md"
    anchors, citations, _ = scan([monorepo], "see src/lib/navigation.ts", notes)
    assert anchors == [("file", "apps/web/src/lib/navigation.ts", None, "cited")]
    assert citations == []


def test_a_plain_path_reads_the_roots_top_first_and_dot_slash_the_notes_folder(monorepo):
    notes = monorepo / "apps/web/CLAUDE.md"
    anchors, _, _ = scan([monorepo], "src/shared.ts and ./src/shared.ts", notes)
    assert anchors == [
        ("file", "src/shared.ts", None, "cited"),
        ("file", "apps/web/src/shared.ts", None, "cited"),
    ]


def test_dot_dot_from_a_nested_notes_folder(monorepo):
    notes = monorepo / ".claude/notes/n.md"
    anchors, citations, _ = scan([monorepo], "../../src/x.py and ../../../up.py", notes)
    assert anchors == [("file", "src/x.py", None, "cited")]
    assert citations == [("outside", "../../../up.py", 22)]


def test_a_path_no_reading_finds_is_judged_under_the_first_with_a_known_first_segment(
    monorepo,
):
    notes = monorepo / "apps/web/CLAUDE.md"
    # "lib" is held by no root's top, but "src" of apps/web is: gone, named as written
    text = "src/lib/gone.ts and nothing/here.ts and ./nothing/else.ts"
    _, citations, _ = scan([monorepo], text, notes)
    assert citations == [
        ("gone", "src/lib/gone.ts", 3),
        ("unresolved", "nothing/here.ts", at(text, "nothing/here")),
        ("unresolved", "nothing/else.ts", at(text, "./nothing")),
    ]


def test_the_nearest_of_several_files_of_one_name_wins(monorepo):
    notes = monorepo / "apps/web/CLAUDE.md"
    anchors, citations, _ = scan([monorepo], "package.json", notes)
    assert anchors == [("file", "apps/web/package.json", None, "bare-name")]
    anchors, citations, _ = scan([monorepo], "package.json", monorepo / "CLAUDE.md")
    assert anchors == [("file", "package.json", None, "bare-name")]
    anchors, citations, _ = scan([monorepo], "package.json")  # notes outside the root
    assert anchors == []
    assert citations == [("ambiguous", "package.json", 3)]


def test_listed_file_names_are_bare_names(tmp_path):
    write(tmp_path / "r", {"Makefile": "all:\n", "docker/Dockerfile": "FROM x\n"})
    anchors, _, _ = scan([tmp_path / "r"], "run Makefile then Dockerfile")
    assert anchors == [
        ("file", "Makefile", None, "bare-name"),
        ("file", "docker/Dockerfile", None, "bare-name"),
    ]


def test_a_backticked_folder_name_is_a_folder_anchor(monorepo):
    """The token layer marks backtick spans and link targets; a name without ``/`` and
    without an extension held as a folder at a root's top or in the notes file's folder
    is a folder anchor."""
    from brainmigrate.anchors import Resolved
    from brainmigrate.read.tokens import Token

    res = Resolver([Root.of(0, monorepo)])
    folder = str(monorepo / "apps/web")
    out = Resolved()
    for name in ("app-shared", "editors", "nothing", "apps"):
        res._folder_name(out, Token(name, 1, 1), set(), folder)
    assert [(a.kind, a.path, a.how) for a in out.anchors] == [
        ("folder", "app-shared", "bare-name"),
        ("folder", "apps/web/editors", "bare-name"),
        ("folder", "apps", "bare-name"),
    ]


# ------------------------------------------------------------------------------ absolute


def test_absolute_paths_into_the_authors_own_checkout(app, tmp_path):
    anchors, citations, _ = scan(
        [app],
        "D:/dev/shelfwise/app/Http/X.php and /D:/dev/shelfwise/src/x.py and"
        " C:/Users/me/elsewhere/x.php and /home/me/shelfwise/app/Http/Gone.php",
    )
    assert anchors == [
        ("file", "app/Http/X.php", None, "cited"),
        ("file", "src/x.py", None, "cited"),
    ]
    assert citations == [
        ("outside", "C:/Users/me/elsewhere/x.php", 70),
        ("gone", "/home/me/shelfwise/app/Http/Gone.php", 102),
    ]


def test_an_absolute_path_names_a_checkout_by_its_remotes_repository_name(app):
    git(app, "remote", "add", "origin", "git@github.com:acme/Shelf-API.git")
    anchors, _, _ = scan([app], "D:\\work\\shelf-api\\app\\Http\\X.php")
    assert anchors == [("file", "app/Http/X.php", None, "cited")]


def test_dots_and_slashes_alone_name_nothing(monorepo):
    """``../`` and ``../..`` (whose trailing dot a token drops) hold no segment to look up:
    no citation, from a notes file inside a root or outside every root."""
    text = "cd ../.. then ../ and ./ and / and ./../ here"
    for notes in (monorepo / ".claude/notes/n.md", None):
        assert scan([monorepo], text, notes) == ([], [], [])
    anchors, _, _ = scan([monorepo], "but ../notes/ is", monorepo / ".claude/notes/n.md")
    assert anchors == [("folder", ".claude/notes", None, "cited")]  # a segment to look up


def test_an_absolute_path_without_an_extension_under_no_root_is_no_citation(app):
    """``/api/v2`` is a route, not a file: a ``maybe`` nothing knows is no citation, absolute
    or not; with an extension, or ending in ``/``, it is outside as before."""
    text = "GET /api/v2 and //host/share and ~nobody_x/bin and /etc/ssl/ and /etc/x.pem"
    anchors, citations, _ = scan([app], text)
    assert anchors == []
    assert citations == [
        ("outside", "/etc/ssl", at(text, "/etc/ssl")),
        ("outside", "/etc/x.pem", at(text, "/etc/x.pem")),
    ]
    paths = PathResolver([Root.of(0, app)])
    assert paths.resolve("/api/v2", kind="maybe") is None
    assert paths.resolve("D:/srv/api/v2", kind="maybe") is None
    assert paths.resolve("/home/me/shelfwise/bin/dev", kind="maybe") == (
        "found",
        0,
        "bin/dev",
        "file",
    )
    assert paths.resolve("/home/me/shelfwise/bin/seed-demo", kind="maybe") == (
        "gone",
        "/home/me/shelfwise/bin/seed-demo",
    )


# ------------------------------------------------------------------------------ own repo


def test_links_into_the_roots_own_repository(app):
    git(app, "remote", "add", "origin", "https://github.com/o/r.git")
    anchors, citations, _ = scan(
        [app],
        "https://github.com/o/r/blob/main/src/x.py#L2"
        " https://github.com/O/R/tree/v1/pkg/ui"
        " https://raw.githubusercontent.com/o/r/0a1b/bin/dev"
        " https://github.com/o/r/blob/main/src/gone.py"
        " https://github.com/other/r/blob/main/src/x.py"
        " https://github.com/o/r/issues/3",
    )
    assert anchors == [
        ("file", "src/x.py", (2, 2), "cited"),
        ("folder", "pkg/ui", None, "cited"),
        ("file", "bin/dev", None, "cited"),
    ]
    assert citations == [("gone", "src/gone.py", 137)]


# ------------------------------------------------------------------------------ aliases


@pytest.fixture
def web(tmp_path):
    root = tmp_path / "tallyfin"
    write(
        root,
        {
            "tsconfig.json": """{
              // the app's aliases
              "compilerOptions": {
                "baseUrl": ".",
                "paths": { "@/*": ["./src/*"], },
              },
            }""",
            "src/lib/date.ts": "export {}\n",
            "packages/tokens/package.json": '{"name": "@tallyfin/tokens"}',
            "packages/tokens/src/colors.ts": "export {}\n",
            "node_modules/@types/node/package.json": '{"name": "@types/node"}',
            "docs/x.md": "x",
        },
    )
    return root


def test_aliases_and_workspace_packages(web):
    text = (
        "@/lib/date.ts @tallyfin/tokens/src/colors.ts @/lib/gone.ts"
        " @tallyfin/tokens/src/gone.ts @types/node/index.d.ts @docs/x.md @nope/x.md"
    )
    anchors, citations, _ = scan([web], text)
    assert anchors == [
        ("file", "src/lib/date.ts", None, "cited"),
        ("file", "packages/tokens/src/colors.ts", None, "cited"),
        ("file", "docs/x.md", None, "cited"),
    ]
    assert citations == [
        ("gone", "@/lib/gone.ts", at(text, "/lib/gone")),
        ("gone", "@tallyfin/tokens/src/gone.ts", at(text, "tallyfin/tokens/src/gone")),
    ]


# ------------------------------------------------------------------------------ modules


@pytest.fixture
def pyroot(tmp_path):
    root = tmp_path / "py"
    write(
        root,
        {
            "parsers/__init__.py": "",
            "parsers/jobs/__init__.py": "",
            "parsers/jobs/reindex.py": "def main(): pass\n",
            "billing/__init__.py": "",
            "billing/models.py": "class Invoice: pass\n",
            "config/settings/test.py": "X = 1\n",
            "app/__init__.py": "",
        },
    )
    git(root, "init", "-q")
    write(root, {"parsers/jobs/old.py": "x"})
    commit_all(root, "one")
    git(root, "rm", "-q", "parsers/jobs/old.py")
    commit_all(root, "two")
    return root


def test_module_paths_in_a_module_context(pyroot):
    text = (
        "python -m parsers.jobs.reindex; DJANGO_SETTINGS_MODULE=config.settings.test;"
        " python -m parsers.jobs.old; from parsers.jobs.missing import x;"
        " import nothing.here"
    )
    anchors, citations, _ = scan([pyroot], text)
    assert anchors == [
        ("file", "parsers/jobs/reindex.py", None, "module"),
        ("file", "config/settings/test.py", None, "module"),
    ]
    assert citations == [
        ("gone", "parsers/jobs/old.py", at(text, "parsers.jobs.old")),  # the history held it
        ("gone", "parsers/jobs/missing.py", at(text, "parsers.jobs.missing")),  # package held
    ]


def test_module_paths_elsewhere_anchor_the_longest_held_prefix(pyroot):
    anchors, citations, _ = scan(
        [pyroot], "billing.models.Invoice.total and parsers.jobs:main and app.state.db"
    )
    assert anchors == [
        ("file", "billing/models.py", None, "module"),
        ("file", "parsers/jobs/__init__.py", None, "module"),
    ]
    assert citations == []


def test_a_module_candidate_passed_in(pyroot):
    """``Resolver._module`` takes the candidates the token layer finds."""
    from brainmigrate.anchors import Resolved
    from brainmigrate.read.tokens import Token

    res = Resolver([Root.of(0, pyroot)])
    out = Resolved()
    tok = Token("parsers.jobs.reindex", 1, 5)
    assert res._module("parsers.jobs.reindex", True, tok, out, set(), None)
    assert [(a.path, a.how) for a in out.anchors] == [("parsers/jobs/reindex.py", "module")]
    out = Resolved()
    assert not res._module("nothing.here", True, tok, out, set(), None)
    assert res._module("billing.gone", True, tok, out, set(), None)
    assert [(c.state, c.name, c.how) for c in out.citations] == [
        ("gone", "billing/gone.py", "module")
    ]


# ------------------------------------------------------------------------------ checked


def test_a_line_past_the_end_and_a_missing_heading_are_warned(app):
    text = (
        "src/x.py:2 src/x.py:3 src/x.py#L9-L12 docs/runbook.md#rollback-steps"
        " docs/runbook.md#runbook docs/runbook.md#nope [x](docs/runbook.md#Rollback-Steps)"
    )
    anchors, citations, diags = scan([app], text)
    assert [a[1] for a in anchors] == ["src/x.py", "docs/runbook.md"]
    assert citations == []
    assert diags == [
        ("BM204", "line 3 is past the end of src/x.py (2 lines)", 14),
        ("BM204", "line 9 is past the end of src/x.py (2 lines)", 25),
        ("BM205", "no heading #nope in docs/runbook.md", at(text, "docs/runbook.md#nope")),
    ]


# ------------------------------------------------------------------------------ import


def test_import_reads_the_new_kinds_from_a_nested_notes_file(monorepo, tmp_path):
    write(
        monorepo,
        {
            "apps/web/CLAUDE.md": (
                "+ see src/lib/navigation.ts and the editors/ folder\n"
                "+ scripts live in ../../src/ and apps/api/\n"
            )
        },
    )
    options = ImportOptions(roots=[str(monorepo)], cache_dir=tmp_path / "cache")
    notes = importer.read_notes([str(monorepo / "apps/web/CLAUDE.md")], options)
    facts = [(f.line, [(a.kind, a.path) for a in r.anchors]) for f, r in notes.facts]
    assert facts == [
        (1, [("file", "apps/web/src/lib/navigation.ts"), ("folder", "apps/web/editors")]),
        (2, [("folder", "src"), ("folder", "apps/api")]),
    ]


# ------------------------------------------------------------------------------ stored


def test_a_folder_anchor_is_stored_and_read_again_for_existence_only(tmp_path):
    """SPEC.md §Staleness "Folder anchor": fresh while a root holds the folder, else
    ``STALE: folder gone: path`` (state ``file gone``); verify takes no digest of it."""
    from click.testing import CliRunner

    from brainmigrate import stores as store
    from brainmigrate.cli import main

    root = tmp_path / "root"
    write(root, {"app/util/a.kt": "x\n", "notes.md": "+ helpers live in app/util/\n"})
    db = tmp_path / "k.db"
    args = ["--store", str(db), "--root", str(root)]
    runner = CliRunner()
    done = runner.invoke(main, ["import", str(root / "notes.md"), *args])
    assert done.exit_code == 0, done.output
    with store.reader(db) as r:
        [fact] = r.fetch([1]).values()
    assert [(a.kind, a.path, a.symbol, a.lines) for a in fact.anchors] == [
        ("folder", "app/util", None, None)
    ]
    fresh = runner.invoke(main, ["stale", *args])
    assert (fresh.exit_code, fresh.output) == (0, "OK: checked 1, stale 0, unreachable 0\n")
    verified = runner.invoke(main, ["verify", "--all", *args])
    assert verified.exit_code == 0, verified.output
    with store.reader(db) as r:
        [fact] = r.fetch([1]).values()
    assert fact.anchors[0].body_digest is None and fact.anchors[0].verified_at is not None
    (root / "app/util/a.kt").unlink()
    (root / "app/util").rmdir()
    gone = runner.invoke(main, ["stale", *args])
    assert gone.exit_code == 1
    assert "STALE: folder gone: app/util" in gone.output


def test_a_bare_name_with_a_line_past_the_end_or_a_missing_heading(monorepo):
    write(monorepo, {"docs/guide.md": "# Guide\n"})
    text = "package.json:9 guide.md#guide guide.md#nope shared.ts"
    anchors, citations, diags = scan([monorepo], text, monorepo / "apps/web/CLAUDE.md")
    assert anchors == [
        ("file", "apps/web/package.json", (9, 9), "bare-name"),
        ("file", "docs/guide.md", None, "bare-name"),
    ]
    # src/shared.ts and apps/web/src/shared.ts: neither in a folder on the way up
    assert citations == [("ambiguous", "shared.ts", at(text, "shared"))]
    assert diags == [
        ("BM204", "line 9 is past the end of apps/web/package.json (1 line)", 3),
        ("BM205", "no heading #nope in docs/guide.md", at(text, "guide.md#nope")),
    ]


def test_a_path_no_file_system_can_hold_is_judged_without_a_traceback(app):
    paths = PathResolver([Root.of(0, app)])
    assert paths.resolve("bin/a\0b.py") == ("gone", "bin/a\0b.py")
    assert paths.resolve("zz/a\0b", kind="maybe") is None
    assert paths.resolve("x" * 5000 + "/a.py") == ("unresolved", "x" * 5000 + "/a.py")


def test_an_alias_with_several_targets_reads_the_first_a_root_holds(tmp_path):
    root = tmp_path / "r"
    write(
        root,
        {
            "jsconfig.json": '{"compilerOptions": {"paths": {"~/*": ["gen/*", "lib/*"]}}}',
            "lib/a.js": "x\n",
            "gen/b.js": "x\n",
        },
    )
    paths = PathResolver([Root.of(0, root)])
    assert paths.resolve("~/a.js") == ("found", 0, "lib/a.js", "file")
    assert paths.resolve("~/b.js") == ("found", 0, "gen/b.js", "file")
    assert paths.resolve("~/c.js") == ("gone", "~/c.js")  # judged under gen/c.js


def test_a_folder_of_the_second_root_and_an_absolute_path_under_it(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    write(a, {"src/x.py": "x"})
    write(b, {"deploy/k8s/app.yaml": "x"})
    paths = PathResolver([Root.of(0, a), Root.of(1, b)])
    assert paths.resolve("deploy/k8s/") == ("found", 1, "deploy/k8s", "folder")
    assert paths.resolve(f"{b}/deploy/") == ("found", 1, "deploy", "folder")
    assert paths.resolve(f"{b}/src/x.py") == ("gone", f"{b}/src/x.py")  # b only


def test_the_roots_own_folder_is_no_citation(app, tmp_path):
    paths = PathResolver([Root.of(0, app)])
    assert paths.resolve(f"{app}/") is None
    assert paths.resolve(f"{app}", kind="maybe") is None
    assert paths.resolve("./", kind="folder") is None
    assert paths.resolve("D:/dev/shelfwise/", kind="folder") is None
    anchors, citations, _ = scan([app], f"the checkout is {app}/ and {app}/bin/dev")
    assert anchors == [("file", "bin/dev", None, "cited")]
    assert citations == []


def test_a_link_target_is_a_citation_whatever_its_shape(tmp_path):
    """SPEC.md §Anchors 1: a Markdown link target without a scheme is a cited path even
    without ``/`` or an extension, and gone when no reading finds it; a plain ``/`` token
    without an extension stays no path unless a root knows it."""
    root = tmp_path / "repo"
    write(root, {"docs/setup.md": "# Setup\n", "editors/a.txt": "a\n"})
    text = (
        "see [setup](docs/setup) and [ed](editors) and [guide](docs/old-guide) and"
        " [top](repo-gone); docs/old-guide and [here](#usage) and [m](mailto:a@b.c)"
    )
    anchors, citations, diags = scan([root], text)
    assert anchors == [("folder", "editors", None, "cited")]
    assert citations == [
        ("gone", "docs/setup", at(text, "docs/setup")),
        ("gone", "docs/old-guide", at(text, "docs/old-guide")),
        ("gone", "repo-gone", at(text, "repo-gone")),
    ]
    assert diags == []


def test_a_path_no_reading_finds_is_judged_under_its_first_reading(tmp_path):
    """SPEC.md §Anchors 1: when no reading's first segment is held, the path is judged
    under the first reading alone; what the history held under a later reading
    (``docs/installation/``, read from ``docs/vocs/``) does not make it gone."""
    root = tmp_path / "repo"
    write(root, {"docs/installation/README.md": "old\n"})
    git(root, "init", "-q")
    commit_all(root, "old book")
    git(root, "rm", "-q", "-r", "docs/installation")
    write(root, {"docs/vocs/docs/pages/installation/index.md": "# Install\n"})
    commit_all(root, "new book")
    notes = root / "docs/vocs/CLAUDE.md"
    notes.write_text("x\n")
    text = "`installation/` and `exex/`: guides"
    _, citations, _ = scan([root], text, notes=notes, cache=tmp_path / "cache")
    assert citations == [
        ("unresolved", "installation/", at(text, "installation")),
        ("unresolved", "exex/", at(text, "exex")),
    ]


def test_a_path_without_extension_nothing_held_is_no_citation_even_where_git_ignores(tmp_path):
    """SPEC.md §Anchors 1: a ``/`` token without an extension that no root holds and no
    history held stays no path, with no report, also under an ignored folder."""
    root = tmp_path / "repo"
    write(root, {".gitignore": "tmp\n", "src/a.py": "a = 1\n"})
    git(root, "init", "-q")
    commit_all(root)
    text = "run `git diff origin/tmp/feature` with `--user-data-dir=/tmp/vscode-userdata`"
    anchors, citations, diags = scan([root], text, cache=tmp_path / "cache")
    assert (anchors, citations, diags) == ([], [], [])


def test_a_path_without_extension_under_an_ignored_folder_is_ignored_on_every_machine(tmp_path):
    """``vendor/bin/pint`` with ``/vendor`` ignored is ignored whether or not the vendor
    folder is installed here; ``origin/tmp/feature`` (``tmp`` ignored at any depth, but its
    first segment is no ignored folder) stays no path."""
    root = tmp_path / "repo"
    write(root, {".gitignore": "/vendor\ntmp\n", "src/a.py": "a = 1\n"})
    git(root, "init", "-q")
    commit_all(root)
    text = "run vendor/bin/pint, not origin/tmp/feature"
    want = ([], [("ignored", "vendor/bin/pint", at(text, "vendor"))], [])
    assert scan([root], text, cache=tmp_path / "cache") == want
    write(root, {"vendor/bin/pint": "#!/bin/sh\n"})  # installed: the same answer
    assert scan([root], text, cache=tmp_path / "cache2") == want


def test_shapes_a_new_user_wrote_give_no_false_alarm(tmp_path):
    """What a trial as a new user found check failing on, every file of it held: names
    joined by "/" under a file, Markdown escapes, names joined by "," or "|", a code
    span's link, an escaped link, a data: URI, a declaration after its file, placeholders
    and a reference definition naming a label."""
    root = tmp_path / "repo"
    write(
        root,
        {
            "package.json": "{}\n",
            "package-lock.json": "{}\n",
            "README.md": "x\n",
            "src/keep.py": "x = 1\n",
            "src/my_file.py": "x = 1\n",
            "src/lib/date.ts": "x\n",
        },
    )
    git(root, "init", "-q")
    commit_all(root)
    text = (
        "update package.json/package-lock.json and README.md/CLAUDE.md;"
        r" src/my\_file.py and src/keep.py\. and src/keep.py,src/lib/date.ts and"
        r" `[code](not/path)` and \[esc\](not/link) and"
        " ![i](data:image/png;base64,iVBO/AA=) and src/keep.py:Foo.bar and src/%s.py"
        " and src/:id.py"
    )
    anchors, citations, diags = scan([root], text, cache=tmp_path / "cache")
    assert anchors == [
        ("file", "src/my_file.py", None, "cited"),
        ("file", "src/keep.py", None, "cited"),
        ("file", "src/lib/date.ts", None, "cited"),
    ]
    assert (citations, diags) == ([], [])


def test_a_blob_url_whose_branch_holds_a_slash(tmp_path):
    """``…/blob/feature/login/src/keep.py``: SPEC.md §Anchors 1 reads REF as one segment;
    when that path is not held, a path that starts one or two segments later and is held
    is the citation. A deleted one stays gone under the first reading."""
    root = tmp_path / "repo"
    write(root, {"src/keep.py": "x = 1\n"})
    git(root, "init", "-q")
    git(root, "remote", "add", "origin", "git@github.com:acme/shelf.git")
    commit_all(root)
    url = "https://github.com/acme/shelf/blob/"
    text = f"see {url}feature/login/src/keep.py#L1 and {url}main/src/gone.py"
    anchors, citations, _ = scan([root], text, cache=tmp_path / "cache")
    assert anchors == [("file", "src/keep.py", (1, 1), "cited")]
    assert citations == [("gone", "src/gone.py", at(text, f"{url}main"))]


def test_an_alias_that_finds_nothing_leaves_the_path_to_its_readings(tmp_path):
    """A ``tsconfig.json`` alias ``lib/*`` → ``src/lib/*`` with no ``src/lib/util.ts``:
    ``lib/util.ts``, which the root holds, is that file, not gone through the alias."""
    root = tmp_path / "repo"
    write(
        root,
        {
            "tsconfig.json": '{"compilerOptions": {"paths": {"lib/*": ["src/lib/*"]}}}',
            "lib/util.ts": "x\n",
            "src/lib/date.ts": "x\n",
        },
    )
    text = "see lib/util.ts and lib/date.ts and lib/gone.ts"
    anchors, citations, _ = scan([root], text, cache=tmp_path / "cache")
    assert anchors == [
        ("file", "lib/util.ts", None, "cited"),
        ("file", "src/lib/date.ts", None, "cited"),
    ]
    assert citations == [("gone", "lib/gone.ts", at(text, "lib/gone.ts"))]


def test_from_a_roots_top_dot_dot_reaches_a_sibling_root(tmp_path):
    """SPEC.md §Anchors 1: read relative to the notes file's own folder, also at a root's
    top: ``../o/b.py`` from ``one/CLAUDE.md`` is ``b.py`` of the root ``o`` beside it."""
    one, other = tmp_path / "one", tmp_path / "o"
    write(one, {"CLAUDE.md": "x\n"})
    write(other, {"b.py": "x = 1\n"})
    made = [Root.of(0, one), Root.of(1, other)]
    res = Resolver(made, None, tmp_path / "cache")
    lines = [Line(1, "fact", marker="+", text=" see ../o/b.py", col=2)]
    fact = build_fact("CLAUDE.md", lines, "area:n", "environment", TaskIds(), [])
    out = res.scan(fact, [], str(one))
    assert [(a.root, a.path) for a in out.anchors] == [(made[1].label, "b.py")]
    assert out.citations == []
