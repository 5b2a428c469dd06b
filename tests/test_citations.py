"""Citations as people write them (SPEC.md §Anchors): gone against unresolved, git history,
link targets beside the notes file, and one answer from ``check``, a dry run and an import.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import unicodedata

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from trees import git, write

from brainmigrate import check, importer
from brainmigrate.paths import PathResolver
from brainmigrate.read import tokens
from brainmigrate.read.run import ImportOptions
from brainmigrate.roots import Root


def dry_run(tmp_path, notes, roots, **kw):
    options = ImportOptions(roots=[str(r) for r in roots], cache_dir=tmp_path / "cache")
    return importer.import_notes(
        [str(notes)], options, store=tmp_path / "dry.db", dry_run=True, **kw
    )


def entries(spill, key="path"):
    return [(e["line"], e["col"], e[key]) for e in spill]


def test_cf_chars_are_exactly_unicode_format_characters():
    import re

    cf = re.compile(f"[{tokens.CF_CHARS}]")
    for c in range(0x110000):
        assert bool(cf.match(chr(c))) == (unicodedata.category(chr(c)) == "Cf"), hex(c)


@pytest.fixture
def history_root(tmp_path):
    """A git work tree whose history held ``old/flow.md`` and ``docs/legacy.md``; neither
    is there now, nor is the ``old`` folder."""
    root = tmp_path / "repo"
    write(root, {"docs/setup.md": "x", "old/flow.md": "x", "docs/legacy.md": "x"})
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "one")
    git(root, "rm", "-q", "-r", "old", "docs/legacy.md")
    git(root, "commit", "-qm", "two")
    return root


def shallow_clone(repo, to, depth=1):
    subprocess.run(
        ["git", "clone", "-q", "--depth", str(depth), f"file://{repo}", str(to)],
        check=True,
        capture_output=True,
    )
    return to


def test_gone_and_unresolved_by_what_a_root_and_its_history_know(history_root):
    paths = PathResolver([Root.of(0, history_root)])
    assert paths.lookup("docs/setup.md") == ("found", 0, "docs/setup.md")
    assert paths.lookup("docs/gone.md") == ("gone",)  # its first folder is there
    assert paths.lookup("else/setup.md") == ("gone",)  # a file of its name is there
    assert paths.lookup("old/flow.md") == ("gone",)  # the history held it
    assert paths.lookup("old/other.md") == ("gone",)  # the history held its first folder
    assert paths.lookup("net/http.Client") == ("unresolved",)
    assert paths.lookup("React/Next.js") == ("unresolved",)
    assert paths.lookup("React/Next.js", link=True) == ("gone",)
    assert paths.history_unavailable() == []


def test_the_history_of_a_sub_folder_root_is_its_own(history_root, tmp_path):
    # A root inside a work tree reads the history of its own folder, relative to it.
    paths = PathResolver([Root.of(0, history_root / "docs")])
    assert paths.lookup("legacy.md") == ("gone",)
    assert paths.lookup("old/flow.md") == ("unresolved",)


def test_a_shallow_clone_says_its_history_is_not_available(history_root, tmp_path):
    clone = shallow_clone(history_root, tmp_path / "clone")
    write(tmp_path, {"notes/n.md": "+ see old/flow.md and docs/gone.md\n"})
    result = dry_run(tmp_path, tmp_path / "notes/n.md", [clone])
    assert entries(result.unresolved) == [(1, 7, "old/flow.md")]
    assert entries(result.gone) == [(1, 23, "docs/gone.md")]
    [note] = [w for w in result.warnings if w.code == "BM104"]
    assert note.file == str(clone) and note.line is None and note.severity == "info"
    assert note.message.startswith("git history not available (a shallow clone)")


def test_a_shallow_clone_reads_the_history_it_fetched(history_root, tmp_path):
    """With two commits fetched, the deletion of ``old/flow.md`` is in the history read: the
    path is gone. The note still says the history is cut (older paths stay unresolved)."""
    clone = shallow_clone(history_root, tmp_path / "clone", depth=2)
    write(tmp_path, {"notes/n.md": "+ see old/flow.md and older/x.md\n"})
    result = dry_run(tmp_path, tmp_path / "notes/n.md", [clone])
    assert entries(result.gone) == [(1, 7, "old/flow.md")]
    assert entries(result.unresolved) == [(1, 23, "older/x.md")]
    [note] = [w for w in result.warnings if w.code == "BM104"]
    assert note.message.startswith(
        "git history not available (a shallow clone): a cited path only the commits not"
        " fetched know reads as unresolved, not gone"
    )


def test_a_shallow_clone_knows_what_head_holds(history_root, tmp_path):
    """A depth-1 clone (actions/checkout's default) still has HEAD: a folder deleted in the
    work tree and not committed yet (what a pre-commit hook sees) cites gone paths."""
    clone = shallow_clone(history_root, tmp_path / "clone")
    import shutil

    shutil.rmtree(clone / "docs")
    write(tmp_path, {"notes/n.md": "+ see docs/setup.md\n"})
    result = dry_run(tmp_path, tmp_path / "notes/n.md", [clone])
    assert entries(result.gone) == [(1, 7, "docs/setup.md")]
    assert entries(result.unresolved) == []


def test_no_history_note_when_nothing_needed_it(history_root, tmp_path):
    clone = shallow_clone(history_root, tmp_path / "clone")
    write(tmp_path, {"notes/n.md": "+ see docs/gone.md\n"})
    result = dry_run(tmp_path, tmp_path / "notes/n.md", [clone])
    assert [w.code for w in result.warnings] == []


def test_a_link_target_is_looked_up_beside_the_notes_file(tmp_path):
    root = tmp_path / "repo"
    write(
        root,
        {
            "docs/adr/0021-ledger.md": "# ADR 21\n",
            "docs/adr/0022-fees.md": (
                "+ fees follow [ADR-0021](0021-ledger.md), not [ADR-0009](0009-old.md)\n"
                "+ and [the guide](../setup.md) is gone\n"
                "+ a bare 0021-ledger.md is no link: not looked up beside\n"
            ),
        },
    )
    result = dry_run(tmp_path, root / "docs/adr/0022-fees.md", [root])
    facts = list(result.facts)
    assert [(a.path, a.how) for a in facts[0].anchors] == [("docs/adr/0021-ledger.md", "cited")]
    assert entries(result.gone) == [(1, 58, "0009-old.md"), (2, 19, "../setup.md")]
    assert list(result.unresolved) == []
    # the task id of the label is read; the link target is a path
    assert facts[0].task == "ADR-0021"


def test_check_finds_the_rows_of_the_issue_at_their_line_and_column(tmp_path):
    root = tmp_path / "root"
    write(
        root,
        {
            "docs/runbook.md": "x",
            "docs/setup.md": "x",
            "app/Ledger.kt": "class Ledger\n" + "\n" * 24,  # lines 10-20 are in it
        },
    )
    write(
        tmp_path,
        {
            "notes/n.md": (
                "+ the old guide docs/setup-legacy.md#prerequisites\n"
                "+ the cache app/LedgerCache.kt#L4C1-L9C2\n"
                "+ [[docs/old-flow.md|old flow]]\n"
                "+ range app/Ledger.kt#L10-20 was fixed under LDG-12\n"
                "+ share one net/http.Client and a React/Next.js app\n"
                "+ logs in %APPDATA%\\Ledgerly\\logs\\agent.log //proto/x:y.proto\n"
            )
        },
    )
    options = ImportOptions(roots=[str(root)], cache_dir=tmp_path / "cache")
    result = check.run_check([str(tmp_path / "notes")], options)
    got = [(f.line, f.col, f.code, f.severity, f.subject) for f in result.findings]
    assert got == [
        (1, 17, "BM101", "error", "docs/setup-legacy.md"),
        (2, 13, "BM101", "error", "app/LedgerCache.kt"),
        (3, 5, "BM101", "error", "docs/old-flow.md"),
        (5, 13, "BM103", "warning", "net/http.Client"),
        (5, 35, "BM103", "warning", "React/Next.js"),
    ]
    assert result.exit_code == 1


def test_a_line_number_no_column_holds_is_imported_as_the_dry_run_says(tmp_path):
    root = tmp_path / "root"
    write(root, {"app/Foo.kt": "class Foo\n\n\n"})  # line 3 is in it
    write(tmp_path, {"notes/n.md": "+ big app/Foo.kt:9223372036854775808 and app/Foo.kt#L3\n"})
    options = ImportOptions(roots=[str(root)], cache_dir=tmp_path / "cache")
    dry = importer.import_notes([str(tmp_path / "notes")], options, tmp_path / "k.db", True)
    [w] = dry.warnings
    assert (w.line, w.col, w.code) == (1, 7, "BM203")
    real = importer.import_notes([str(tmp_path / "notes")], options, tmp_path / "k.db")
    assert [w.code for w in real.warnings] == ["BM203"]
    with sqlite3.connect(tmp_path / "k.db") as db:
        rows = db.execute("SELECT path, line_first, line_last FROM anchors").fetchall()
    assert rows == [("app/Foo.kt", None, None)]


# ------------------------------------------------------------------------------ property

ROOT_FILES = {
    "docs/runbook.md": "x",
    "docs/Design Notes/overview.md": "x",
    "app/Ledger.kt": "class Ledger {\n  fun post() {}\n}\nclass PaymentGateway\n",
    "app/util/Ledger.kt": "class LedgerRow\n",
    "lib/Bar.py": "class LedgerStore:\n    pass\n",
    "bin/dev": "#!/bin/sh\n",
    ".gitignore": "tmp/\n",
}
PIECES = [
    "docs/",
    "`app/util/`",
    "bin/dev",
    "bin/gone/",
    "and/or",
    "tmp/pids/server.pid",
    "docs/runbook.md#nowhere",
    "app/Ledger.kt:400",
    "docs/runbook.md",
    "docs/runbook.md#rollback",
    "docs/gone.md?plain=1",
    "app/Ledger.kt#L10-20",
    "app/Gone.kt:12",
    "`docs/Design Notes/overview.md`",
    "[x](<docs/Design Notes/overview.md>)",
    "[[docs/old.md|old]]",
    "![[docs/runbook.md]]",
    "@docs/runbook.md",
    "net/http.Client",
    "React/Next.js",
    "Ledger.kt",
    "Bar.py:3",
    "PaymentGateway#charge",
    "LedgerStore",
    "../../etc/passwd.txt",
    "/etc/hosts.txt",
    "TER-12",
    "docs/TER-9.md",
    "配置见docs/runbook.md。",
    "“app/Gone.kt”",
    "x:99999999999",
    "word",
    "\u200bdocs/runbook.md",
]
LINE = st.lists(st.sampled_from(PIECES), min_size=1, max_size=5).map(" ".join)
NOTES = st.lists(
    st.tuples(st.sampled_from(["+ ", "! ", "  ", "- ~ ", "", "# "]), LINE),
    min_size=1,
    max_size=8,
).map(lambda rows: "".join(m + t + "\n" for m, t in rows))


@pytest.fixture(scope="module")
def prop_root(tmp_path_factory):
    base = tmp_path_factory.mktemp("prop")
    write(base / "root", ROOT_FILES)
    return base


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(text=NOTES)
def test_check_dry_run_and_import_agree(prop_root, text, tmp_path_factory):
    work = tmp_path_factory.mktemp("case")
    notes = work / "n.md"
    notes.write_text(text, encoding="utf-8")
    options = ImportOptions(roots=[str(prop_root / "root")], cache_dir=prop_root / "cache")
    dry = importer.import_notes([str(notes)], options, work / "k.db", dry_run=True)
    real = importer.import_notes([str(notes)], options, work / "k.db")
    found = check.run_check([str(notes)], options)

    def shape(result):
        return {
            "gone": entries(result.gone),
            "outside": entries(result.outside),
            "unresolved": entries(result.unresolved),
            "ignored": entries(result.ignored),
            "ambiguous": entries(result.ambiguous, "name"),
            "warnings": [(w.line, w.col, w.code) for w in result.warnings],
            "facts": [
                (r.id, r.text, r.task, tuple(r.anchors), tuple(r.gone)) for r in result.facts
            ],
        }

    assert shape(dry) == shape(real)
    by_code = {
        "BM101": "gone",
        "BM102": "outside",
        "BM103": "unresolved",
        "BM105": "ignored",
        "BM201": "ambiguous",
    }
    from_check = {k: [] for k in by_code.values()}
    for f in found.findings:
        if f.code in by_code:
            from_check[by_code[f.code]].append((f.line, f.col, f.subject))
    assert from_check == {k: shape(dry)[k] for k in by_code.values()}
    with sqlite3.connect(work / "k.db") as db:
        stored = db.execute("SELECT count(*) FROM facts").fetchone()[0]
    assert stored == len(real.facts)
    os.remove(work / "k.db")


# ------------------------------------------------------------------------------ found in trials


def test_a_file_deleted_but_not_committed_is_gone(history_root, tmp_path):
    # What a pre-commit hook sees: HEAD holds the file, the work tree (or index) does not.
    write(history_root, {"billing/v1/invoice_pdf.py": "x"})
    git(history_root, "add", "-A")
    git(history_root, "commit", "-qm", "three")
    git(history_root, "rm", "-q", "-r", "--cached", "billing")
    for p in sorted(history_root.joinpath("billing").rglob("*"), reverse=True):
        p.unlink() if p.is_file() else p.rmdir()
    history_root.joinpath("billing").rmdir()
    paths = PathResolver([Root.of(0, history_root)])
    assert paths.lookup("billing/v1/invoice_pdf.py") == ("gone",)
    assert paths.lookup("billing/v2/other.py") == ("gone",)


def test_a_percent_escaped_path_only_the_history_knows_is_gone(tmp_path):
    root = tmp_path / "repo"
    write(root, {"My Docs/setup guide.md": "x", "keep.md": "x"})
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "one")
    git(root, "rm", "-q", "-r", "My Docs")
    git(root, "commit", "-qm", "two")
    paths = PathResolver([Root.of(0, root)])
    assert paths.lookup("My%20Docs/setup%20guide.md") == ("gone",)


def test_a_repository_git_refuses_says_its_history_is_not_available(history_root, tmp_path):
    for p in [history_root, *history_root.rglob("*")]:
        os.lchown(p, 12345, 12345)
    probe = subprocess.run(
        ["git", "-C", str(history_root), "rev-parse", "--is-inside-work-tree"],
        capture_output=True,
    )
    if probe.returncode == 0:
        pytest.skip("this git reads a repository of another owner")
    write(tmp_path, {"notes/n.md": "+ see old/flow.md\n"})
    result = dry_run(tmp_path, tmp_path / "notes/n.md", [history_root])
    assert entries(result.unresolved) == [(1, 7, "old/flow.md")]
    [note] = [w for w in result.warnings if w.code == "BM104"]
    assert note.message.startswith("git history not available (git refused the repository: ")
    assert "safe.directory" in note.message


def test_urls_e_mail_and_hosts_are_no_paths_wherever_they_start(tmp_path):
    root = tmp_path / "root"
    write(root, {"api/openapi.yaml": "x", "index.html": "x"})
    write(
        tmp_path,
        {
            "notes/n.md": (
                "+ env API_SPEC=https://api.example.com/v1/openapi.yaml\n"
                "+ flag --spec-url=https://example.com/api/openapi.yaml\n"
                '+ href="https://cdn.example.com/index.html" see:https://example.com/index.html\n'
                "+ jdbc jdbc:postgresql://db.internal:5432/openapi.yaml\n"
                "+ site [home](www.example.com) and [me](me@example.com)\n"
            )
        },
    )
    result = dry_run(tmp_path, tmp_path / "notes/n.md", [root])
    assert [list(r) for r in (result.gone, result.unresolved, result.outside)] == [[], [], []]
    assert [r.anchors for r in result.facts] == [[]] * 5


def test_a_link_target_keeps_its_parentheses(tmp_path):
    root = tmp_path / "root"
    write(root, {"docs/guides/report(1).md": "x"})
    write(
        tmp_path,
        {"notes/n.md": "+ [gone](docs/guides/gone(1).md) and [report](docs/guides/report(1).md)\n"},
    )
    result = dry_run(tmp_path, tmp_path / "notes/n.md", [root])
    assert entries(result.gone) == [(1, 10, "docs/guides/gone(1).md")]
    [fact] = result.facts
    assert [a.path for a in fact.anchors] == ["docs/guides/report(1).md"]


def test_a_notes_file_reached_through_a_symlink_links_beside_itself(tmp_path):
    root = tmp_path / "root"
    write(
        root,
        {
            "docs/adr/0001-use-sqlite.md": "x",
            "docs/guides/setup.md": "x",
            "docs/adr/0003-retry.md": (
                "+ [ADR-1](0001-use-sqlite.md#context) and [setup](../guides/setup.md)\n"
            ),
        },
    )
    (tmp_path / "link").symlink_to(root)
    result = dry_run(tmp_path, tmp_path / "link/docs/adr/0003-retry.md", [root])
    [fact] = result.facts
    assert [a.path for a in fact.anchors] == ["docs/adr/0001-use-sqlite.md", "docs/guides/setup.md"]
    assert [list(result.gone), list(result.outside)] == [[], []]


def test_no_task_id_is_read_in_a_path_with_spaces(tmp_path):
    root = tmp_path / "root"
    write(root, {"docs/Design Notes/TER-5 plan.md": "x"})
    write(
        tmp_path,
        {
            "notes/n.md": (
                "+ h [[legacy/TER-92 notes.md]] for CL-1\n"
                "+ [x](<legacy/TER-78 notes.md>)\n"
                "+ `docs/Design Notes/TER-5 plan.md` is the plan\n"
                "+ a wiki note [[TER-7 retro]] names its task\n"
            )
        },
    )
    result = dry_run(tmp_path, tmp_path / "notes/n.md", [root])
    assert [r.task for r in result.facts] == ["CL-1", None, None, "TER-7"]


def test_a_line_range_written_backwards_is_the_same_range(tmp_path):
    from brainmigrate.model import Segment

    [tok] = tokens.tokens([Segment(1, 1, "legacy/a.kt:92-88")])
    assert (tok.text, tok.lines) == ("legacy/a.kt", (88, 92))


def test_a_repository_without_a_commit_has_no_history_and_says_nothing(tmp_path):
    root = tmp_path / "repo"
    write(root, {"docs/setup.md": "x"})
    git(root, "init", "-q")
    write(tmp_path, {"notes/n.md": "+ see old/flow.md and docs/gone.md\n"})
    result = dry_run(tmp_path, tmp_path / "notes/n.md", [root])
    assert entries(result.unresolved) == [(1, 7, "old/flow.md")]
    assert entries(result.gone) == [(1, 23, "docs/gone.md")]
    assert [w.code for w in result.warnings] == []


def test_a_path_only_a_merge_commit_deleted_is_gone(tmp_path):
    """A branch added ``feature/flag.py``; the merge that brought the branch in dropped it
    (a merge resolved by hand). Only the merge commit deletes it: git log shows a merge's
    changes only when asked (-m), and without them the path read as unresolved."""
    root = tmp_path / "repo"
    write(root, {"app/main.py": "x"})
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "one")
    git(root, "checkout", "-q", "-b", "feature")
    write(root, {"feature/flag.py": "x"})
    git(root, "add", "-A")
    git(root, "commit", "-qm", "flag")
    git(root, "checkout", "-q", "main")
    write(root, {"app/other.py": "x"})
    git(root, "add", "-A")
    git(root, "commit", "-qm", "other")
    git(root, "merge", "-q", "--no-ff", "--no-commit", "feature")
    git(root, "rm", "-q", "-r", "-f", "feature")
    git(root, "commit", "-qm", "merge without the flag")
    paths = PathResolver([Root.of(0, root)])
    assert paths.lookup("feature/flag.py") == ("gone",)
    assert paths.lookup("nowhere/flag2.py") == ("unresolved",)
    # a user's log.diffMerges=first-parent would hide it again: git runs with ours
    git(root, "config", "log.diffMerges", "first-parent")
    git(root, "config", "log.showSignature", "true")
    git(root, "config", "color.ui", "always")
    assert PathResolver([Root.of(0, root)]).lookup("feature/flag.py") == ("gone",)


def test_a_hooks_git_variables_do_not_point_every_root_at_its_repository(
    history_root, tmp_path, monkeypatch
):
    """A git hook inherits GIT_DIR (and GIT_INDEX_FILE, GIT_WORK_TREE): with them, every
    `git -C root` read the hook's repository, whatever the root."""
    other = tmp_path / "other"
    write(other, {"unrelated.md": "x"})
    git(other, "init", "-q")
    git(other, "add", "-A")
    git(other, "commit", "-qm", "other")
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(other))
    monkeypatch.setenv("GIT_INDEX_FILE", str(other / ".git" / "index"))
    paths = PathResolver([Root.of(0, history_root)])
    assert paths.lookup("old/flow.md") == ("gone",)
    assert paths.history_unavailable() == []
