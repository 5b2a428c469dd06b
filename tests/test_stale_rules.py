"""The rules of SPEC.md §Staleness, one test each, on git trees the tests build from small
Rust, Go, Python and TypeScript files: every row of the states table and the worst-of rule,
text searched again when no declaration encloses cited lines, a function that became a
method (docs/staleness.md), and the command that shows what changed. Each asserts the exact
state and reason in ``stale --format json`` and the exact ``stale`` text."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from clirun import invoker
from trees import git, write

cli = invoker(catch_exceptions=False)

RUST = """\
/// Where the settings come from.
pub struct ConfigLoader {
    path: String,
}

impl ConfigLoader {
    pub fn load(&self) -> String {
        std::fs::read_to_string(&self.path).unwrap_or_default()
    }
}
"""
GO = """\
package cfg

import "strings"

// ParseConfig splits a line into its key and value.
func ParseConfig(line string) (string, string) {
	key, value, _ := strings.Cut(line, "=")
	return strings.TrimSpace(key), strings.TrimSpace(value)
}
"""
PYTHON = """\
import sys


def report(rows):
    total = sum(r["amount"] for r in rows)
    print(f"total: {total}", file=sys.stderr)
    return total
"""
TYPESCRIPT = """\
export class HttpClient {
  constructor(private readonly base: string) {}

  async get(path: string): Promise<Response> {
    return fetch(this.base + path);
  }
}
"""
SETUP = "# Set-up\n\n1. `make up`\n2. open the app\n"
NOTES = (
    "+ ConfigLoader reads its file once TER-1\n"
    "+ ParseConfig trims the key and the value TER-2\n"
    "+ the report prints its total to stderr, tools/report.py:6 TER-3\n"
    "+ HttpClient never retries TER-4\n"
    "+ the set-up steps are in docs/setup.md TER-5\n"
    "+ the schema lives in db/migrations/ TER-6\n"
)
#: The text of each fact after its id, kind and scope in a ``stale`` line.
TEXTS = {f"k{i}": line[2:] for i, line in enumerate(NOTES.splitlines(), 1)}
FRESH = {f"k{i}": ("fresh", None) for i in range(1, 7)}


@dataclass
class Tree:
    """A git checkout ``repo`` of the sources above, notes citing them, a store made by
    ``import --verify``; the test runs in the folder above ``repo``."""

    repo: Path
    store: Path
    head: str

    def json(self, *args) -> dict:
        r = cli("stale", "--store", self.store, "--format", "json", "--dry-run", *args)
        assert r.exit_code in (0, 1), r.output
        return json.loads(r.stdout)

    def states(self, *args) -> dict[str, tuple[str, str | None]]:
        return {f["id"]: (f["state"], f["reason"]) for f in self.json(*args)["facts"]}

    def anchors(self, fid: str) -> list[dict]:
        return next(f for f in self.json()["facts"] if f["id"] == fid)["anchors"]

    def text(self, *args) -> tuple[int, list[str]]:
        r = cli("stale", "--store", self.store, *args)
        return r.exit_code, r.stdout.splitlines()

    def line(self, fid: str, reason: str, origin: int | None = None) -> str:
        """The ``stale`` text line of fact ``fid`` with ``reason`` (its notes line is its
        number unless given)."""
        n = origin or int(fid[1:])
        return f"notes/code.md:{n}: {fid} environment area:code {reason}  {TEXTS[fid]}"

    def diff(self, *paths: str, moved: bool = False) -> str:
        """The indented command under a stale line."""
        flag = "-M " if moved else ""
        return f"    git -C repo diff {flag}{self.head} -- {' '.join(paths)}"

    def edit(self, rel: str, old: str, new: str) -> None:
        path = self.repo / rel
        text = path.read_text(encoding="utf-8")
        assert text.count(old) == 1, old
        path.write_text(text.replace(old, new), encoding="utf-8")

    def rows(self, sql: str) -> list:
        con = sqlite3.connect(self.store)
        try:
            return con.execute(sql).fetchall()
        finally:
            con.close()


def make_tree(base: Path, sources: dict[str, str], notes: str) -> Tree:
    repo = base / "repo"
    write(repo, sources)
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "sources")
    write(base / "notes", {"code.md": notes})
    store = base / "know.db"
    r = cli("import", "notes", "--root", "repo", "--store", store, "--verify")
    assert r.exit_code == 0, r.output
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, check=True, text=True
    ).stdout.strip()
    return Tree(repo, store, head)


SOURCES = {
    "src/config.rs": RUST,
    "cfg/parse.go": GO,
    "tools/report.py": PYTHON,
    "web/client.ts": TYPESCRIPT,
    "docs/setup.md": SETUP,
    "db/migrations/0001_init.sql": "create table t (id int);\n",
}


@pytest.fixture
def tree(tmp_path, monkeypatch) -> Tree:
    monkeypatch.chdir(tmp_path)
    return make_tree(tmp_path, SOURCES, NOTES)


DRY = "(dry run: nothing recorded)"


# ------------------------------------------------------------------ the states table


def test_fresh_when_the_digests_are_equal_though_the_bytes_changed(tree):
    assert tree.states() == FRESH
    tree.edit("cfg/parse.go", "package cfg\n", "// Package cfg reads settings.\npackage cfg\n\n")
    tree.edit("src/config.rs", "    path: String,", "        path:   String,")
    assert tree.states() == FRESH
    assert tree.text("--dry-run") == (0, [f"OK: checked 6, stale 0, unreachable 0 {DRY}"])


def test_signature_changed(tree):
    tree.edit("cfg/parse.go", "(line string) (", "(line string, sep string) (")
    reason = "STALE: signature changed: cfg/parse.go#ParseConfig"
    assert tree.states() == {**FRESH, "k2": ("signature changed", reason)}
    assert tree.text("--dry-run") == (
        1,
        [tree.line("k2", reason), tree.diff("cfg/parse.go"), f"STALE: checked 6, stale 1, "
         f"unreachable 0 {DRY}"],
    )  # fmt: skip


def test_body_changed_of_a_type_and_of_the_function_cited_lines_are_in(tree):
    tree.edit("src/config.rs", "    path: String,", "    path: std::path::PathBuf,")
    tree.edit("tools/report.py", 'f"total: {total}"', 'f"sum: {total}"')
    k1 = "STALE: body changed: src/config.rs#ConfigLoader"
    k3 = "STALE: body changed: tools/report.py#report"
    assert tree.states() == {**FRESH, "k1": ("body changed", k1), "k3": ("body changed", k3)}
    assert tree.text() == (
        1,
        [
            tree.line("k1", k1),
            tree.diff("src/config.rs"),
            tree.line("k3", k3),
            tree.diff("tools/report.py"),
            "STALE: checked 6, stale 2, unreachable 0",
        ],
    )
    assert tree.rows("SELECT id, status, status_reason FROM facts WHERE status='stale'") == [
        (1, "stale", k1.removeprefix("STALE: ")),
        (3, "stale", k3.removeprefix("STALE: ")),
    ]


def test_moved_unchanged(tree):
    (tree.repo / "web/http").mkdir()
    git(tree.repo, "mv", "web/client.ts", "web/http/client.ts")
    reason = "STALE: moved: web/client.ts → web/http/client.ts#HttpClient"
    assert tree.states() == {**FRESH, "k4": ("moved", reason)}
    [anchor] = tree.anchors("k4")
    assert (anchor["state"], anchor["moved_to"]) == ("moved", "web/http/client.ts")
    assert anchor["diff"] == tree.diff("web/client.ts", "web/http/client.ts", moved=True)[4:]
    assert tree.text("--dry-run") == (
        1,
        [
            tree.line("k4", reason),
            tree.diff("web/client.ts", "web/http/client.ts", moved=True),
            f"STALE: checked 6, stale 1, unreachable 0 {DRY}",
        ],
    )


def test_moved_and_changed_counts_as_its_change_for_a_body_and_for_a_signature(tree):
    (tree.repo / "web/http").mkdir()
    git(tree.repo, "mv", "web/client.ts", "web/http/client.ts")
    tree.edit("web/http/client.ts", "this.base + path", "this.base + '/' + path")
    (tree.repo / "cmd").mkdir()
    shutil.move(tree.repo / "cfg/parse.go", tree.repo / "cmd/parse.go")  # no git mv
    tree.edit("cmd/parse.go", "(line string) (", "(line string, sep string) (")
    k2 = "STALE: signature changed: cmd/parse.go#ParseConfig (moved from cfg/parse.go)"
    k4 = "STALE: body changed: web/http/client.ts#HttpClient (moved from web/client.ts)"
    assert tree.states() == {
        **FRESH,
        "k2": ("signature changed", k2),
        "k4": ("body changed", k4),
    }
    assert [a["moved_to"] for a in tree.anchors("k2")] == ["cmd/parse.go"]
    assert tree.text("--dry-run") == (
        1,
        [
            tree.line("k2", k2),
            tree.diff("cfg/parse.go", "cmd/parse.go", moved=True),
            tree.line("k4", k4),
            tree.diff("web/client.ts", "web/http/client.ts", moved=True),
            f"STALE: checked 6, stale 2, unreachable 0 {DRY}",
        ],
    )


def test_declaration_gone(tree):
    (tree.repo / "cfg/parse.go").write_text("package cfg\n", encoding="utf-8")
    reason = "STALE: declaration gone: cfg/parse.go#ParseConfig"
    assert tree.states() == {**FRESH, "k2": ("declaration gone", reason)}
    assert tree.text("--dry-run") == (
        1,
        [tree.line("k2", reason), tree.diff("cfg/parse.go"), f"STALE: checked 6, stale 1, "
         f"unreachable 0 {DRY}"],
    )  # fmt: skip


def test_file_gone_and_folder_gone(tree):
    (tree.repo / "docs/setup.md").unlink()
    shutil.rmtree(tree.repo / "db/migrations")
    k5 = "STALE: file gone: docs/setup.md"
    k6 = "STALE: folder gone: db/migrations"
    assert tree.states() == {**FRESH, "k5": ("file gone", k5), "k6": ("file gone", k6)}
    assert tree.text("--dry-run") == (
        1,
        [
            tree.line("k5", k5),
            tree.diff("docs/setup.md"),
            tree.line("k6", k6),
            tree.diff("db/migrations"),
            f"STALE: checked 6, stale 2, unreachable 0 {DRY}",
        ],
    )


def test_an_unreachable_root_is_counted_not_stale_and_its_anchors_do_not_count(
    tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "other", {"lib/util.py": "def helper():\n    return 1\n"})
    write(tmp_path / "repo", SOURCES)
    git(tmp_path / "repo", "init", "-q")
    git(tmp_path / "repo", "add", ".")
    git(tmp_path / "repo", "commit", "-qm", "sources")
    write(
        tmp_path / "notes",
        {
            "code.md": "+ lib/util.py helps TER-7\n"
            "+ lib/util.py and docs/setup.md go together TER-8\n"
        },
    )
    store = tmp_path / "know.db"
    roots = ("--root", "repo", "--root", "other")
    r = cli("import", "notes", *roots, "--store", store, "--verify")
    assert r.exit_code == 0, r.output
    shutil.rmtree(tmp_path / "other")
    r = cli("stale", "--store", store, "--format", "json", "--dry-run")
    assert r.exit_code == 0
    data = json.loads(r.stdout)
    assert (data["checked"], data["stale"], data["unreachable"]) == (2, 0, 1)
    assert [(f["id"], f["state"], f["reason"]) for f in data["facts"]] == [
        ("k1", "unreachable", None),
        ("k2", "fresh", None),  # its unreachable anchor does not count
    ]
    assert [a["state"] for a in data["facts"][1]["anchors"]] == ["unreachable", "fresh"]
    assert [a["diff"] for a in data["facts"][1]["anchors"]] == [None, None]
    r = cli("stale", "--store", store)
    other = os.path.join(os.path.realpath(tmp_path), "other")
    assert (r.exit_code, r.stdout.splitlines()) == (
        0,
        [
            f"notes/code.md:1: k1 unreachable: root cannot be read: {other}",
            "OK: checked 2, stale 0, unreachable 1",
        ],
    )
    con = sqlite3.connect(store)
    assert con.execute("SELECT status FROM facts ORDER BY id").fetchall() == [("active",)] * 2
    con.close()


def test_a_fact_takes_the_worst_state_of_its_anchors(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    notes = "+ ConfigLoader feeds ParseConfig, HttpClient and docs/setup.md TER-9\n"
    tree = make_tree(tmp_path, SOURCES, notes)
    TEXTS["k1"] = notes[2:].rstrip("\n")
    try:
        steps = [
            (
                lambda: (
                    (tree.repo / "web/http").mkdir(),
                    git(tree.repo, "mv", "web/client.ts", "web/http/client.ts"),
                ),
                "moved",
                "moved: web/client.ts → web/http/client.ts#HttpClient",
            ),
            (
                lambda: tree.edit("src/config.rs", "path: String,", "path: Vec<u8>,"),
                "body changed",
                "body changed: src/config.rs#ConfigLoader",
            ),
            (
                lambda: tree.edit("cfg/parse.go", "(line string) (", "(line, sep string) ("),
                "signature changed",
                "signature changed: cfg/parse.go#ParseConfig",
            ),
            (
                lambda: (tree.repo / "cfg/parse.go").write_text("package cfg\n", "utf-8"),
                "declaration gone",
                "declaration gone: cfg/parse.go#ParseConfig",
            ),
            (
                lambda: (tree.repo / "docs/setup.md").unlink(),
                "file gone",
                "file gone: docs/setup.md",
            ),
        ]
        for change, state, reason in steps:
            change()
            assert tree.states() == {"k1": (state, f"STALE: {reason}")}
            code, lines = tree.text("--dry-run")
            assert (code, lines[0]) == (1, tree.line("k1", f"STALE: {reason}"))
        # every stale anchor's command, one line each, in the anchors' order
        assert [a["path"] for a in tree.anchors("k1")] == [
            "docs/setup.md",
            "src/config.rs",
            "cfg/parse.go",
            "web/client.ts",
        ]
        assert lines[1:] == [
            tree.diff("docs/setup.md"),
            tree.diff("src/config.rs"),
            tree.diff("cfg/parse.go"),
            tree.diff("web/client.ts", "web/http/client.ts", moved=True),
            f"STALE: checked 1, stale 1, unreachable 0 {DRY}",
        ]
    finally:
        TEXTS["k1"] = NOTES.splitlines()[0][2:]


# ------------------------------------------------------------------ lines no declaration encloses

REGISTRY = """\
from app import routes


def index():
    return "index"


def health():
    return "ok"


routes.add("/", index)
routes.add("/health", health)
routes.add("/health/live", health)
"""
GUIDE = "".join(f"Paragraph {i} of the guide.\n\n" for i in range(1, 5)) + (
    "1. `make up`\n2. `make seed`\n3. open the app\n"
)
FILLER = "".join(f"filler_{i} = {i}\n" for i in range(222))
FILLER_MD = "".join(f"- filler {i}\n" for i in range(222))


@pytest.fixture
def lines_tree(tmp_path, monkeypatch) -> Tree:
    monkeypatch.chdir(tmp_path)
    sources = {"app/registry.py": REGISTRY, "docs/guide.md": GUIDE}
    notes = (
        "+ the health routes are registered last, app/registry.py:12-14 TER-10\n"
        "+ the set-up seeds the database, docs/guide.md:9-11 TER-11\n"
    )
    tree = make_tree(tmp_path, sources, notes)
    assert tree.rows("SELECT fact_id, target_kind, line_first, line_last FROM anchors") == [
        (1, "lines", 12, 14),
        (2, "lines", 9, 11),
    ]
    return tree


def _lines_of(tree: Tree) -> list[tuple]:
    return tree.rows("SELECT fact_id, line_first, line_last FROM anchors ORDER BY fact_id")


def test_cited_lines_moved_down_unchanged_are_fresh_and_their_new_lines_are_recorded(
    lines_tree,
):
    tree = lines_tree
    tree.edit("app/registry.py", "\n\nroutes.add(", "\n\n" + FILLER + "\nroutes.add(")
    tree.edit("docs/guide.md", "1. `make up`", FILLER_MD + "1. `make up`")
    assert tree.states() == {"k1": ("fresh", None), "k2": ("fresh", None)}
    r = cli("search", "routes", "--store", tree.store)  # reads them again, records nothing
    assert (r.exit_code, r.stdout) == (
        0,
        "k1 environment area:code  the health routes are registered last,"
        " app/registry.py:12-14 TER-10\n",
    )
    assert _lines_of(tree) == [(1, 12, 14), (2, 9, 11)]  # a dry run records nothing
    assert tree.text() == (0, ["OK: checked 2, stale 0, unreachable 0"])
    assert _lines_of(tree) == [(1, 235, 237), (2, 231, 233)]
    (digests,) = {r for r in tree.rows("SELECT DISTINCT verified_commit FROM anchors")}
    assert digests == (tree.head,)  # the fingerprint's commit stays: nothing was verified
    assert tree.states() == {"k1": ("fresh", None), "k2": ("fresh", None)}
    # edited now: named at the lines recorded last
    tree.edit("app/registry.py", 'routes.add("/health/live"', 'routes.add("/live"')
    reason = "STALE: body changed: app/registry.py:235-237"
    assert tree.states()["k1"] == ("body changed", reason)


TWO_FUNCS = """\
package routes

func Index() string {
	return "index"
}

func Health() string {
	return "ok"
}
"""


def test_two_functions_cited_together_moved_222_lines_down_are_fresh(tmp_path, monkeypatch):
    """The trial's case: a range over two functions (no one declaration encloses it), moved
    down by code added above it, unchanged."""
    monkeypatch.chdir(tmp_path)
    notes = "+ both handlers answer with a constant, routes/handlers.go:3-9 TER-12\n"
    tree = make_tree(tmp_path, {"routes/handlers.go": TWO_FUNCS}, notes)
    assert tree.rows("SELECT target_kind, line_first, line_last FROM anchors") == [("lines", 3, 9)]
    added = "".join(f"const Limit{i} = {i}\n" for i in range(220))
    tree.edit("routes/handlers.go", "package routes\n", "package routes\n\n" + added + "\n")
    assert tree.states() == {"k1": ("fresh", None)}
    assert tree.text() == (0, ["OK: checked 1, stale 0, unreachable 0"])
    assert _lines_of(tree) == [(1, 225, 231)]
    tree.edit("routes/handlers.go", 'return "ok"', 'return "healthy"')
    assert tree.states() == {
        "k1": ("body changed", "STALE: body changed: routes/handlers.go:225-231")
    }


def test_cited_lines_moved_and_edited_are_body_changed_at_their_recorded_lines(lines_tree):
    tree = lines_tree
    tree.edit("app/registry.py", "\n\nroutes.add(", "\n\n" + FILLER + "\nroutes.add(")
    tree.edit("app/registry.py", 'routes.add("/health/live"', 'routes.add("/live"')
    tree.edit("docs/guide.md", "1. `make up`", FILLER_MD + "1. `make up`")
    tree.edit("docs/guide.md", "`make seed`", "`make seed-all`")
    k1 = "STALE: body changed: app/registry.py:12-14"
    k2 = "STALE: body changed: docs/guide.md:9-11"
    assert tree.states() == {"k1": ("body changed", k1), "k2": ("body changed", k2)}
    assert tree.text() == (
        1,
        [
            f"notes/code.md:1: k1 environment area:code {k1}  the health routes are"
            " registered last, app/registry.py:12-14 TER-10",
            tree.diff("app/registry.py"),
            f"notes/code.md:2: k2 environment area:code {k2}  the set-up seeds the"
            " database, docs/guide.md:9-11 TER-11",
            tree.diff("docs/guide.md"),
            "STALE: checked 2, stale 2, unreachable 0",
        ],
    )
    assert _lines_of(tree) == [(1, 12, 14), (2, 9, 11)]


def test_the_occurrence_nearest_the_recorded_lines_wins(lines_tree):
    tree = lines_tree
    steps = "1. `make up`\n2. `make seed`\n3. open the app\n"
    # a copy 2 lines above (the original is pushed down 8), another one far below
    tree.edit("docs/guide.md", "Paragraph 4", steps + "\nParagraph 4")
    path = tree.repo / "docs/guide.md"
    path.write_text(path.read_text("utf-8") + FILLER_MD + steps, "utf-8")
    assert tree.text() == (0, ["OK: checked 2, stale 0, unreachable 0"])
    assert _lines_of(tree)[1] == (2, 7, 9)


def test_verify_fingerprints_the_lines_the_text_was_found_at(lines_tree):
    tree = lines_tree
    tree.edit("docs/guide.md", "1. `make up`", FILLER_MD + "1. `make up`")
    r = cli("verify", "k2", "--store", tree.store)
    assert (r.exit_code, r.stdout) == (0, "k2 verified: 1 anchor fingerprinted\n")
    assert _lines_of(tree)[1] == (2, 231, 233)
    tree.edit("docs/guide.md", "`make seed`", "`make seed-all`")
    assert tree.states()["k2"] == ("body changed", "STALE: body changed: docs/guide.md:231-233")


def test_import_verify_fingerprints_the_text_where_it_moved_not_what_took_its_lines(lines_tree):
    tree = lines_tree
    tree.edit("docs/guide.md", "1. `make up`", FILLER_MD + "1. `make up`")
    r = cli("import", "notes", "--root", "repo", "--store", tree.store, "--verify")
    assert r.exit_code == 0, r.output
    assert _lines_of(tree) == [(1, 12, 14), (2, 231, 233)]
    tree.edit("docs/guide.md", "`make seed`", "`make seed-all`")
    assert tree.states() == {
        "k1": ("fresh", None),
        "k2": ("body changed", "STALE: body changed: docs/guide.md:231-233"),
    }


# ------------------------------------------------------------------ a function that became a method


PY_METHOD = """\
import sys


class Report:
    def report(self, rows):
        total = sum(r["amount"] for r in rows)
        print(f"total: {total}", file=sys.stderr)
        return total
"""
GO_METHOD = """\
package cfg

import "strings"

type Parser struct{ strict bool }

// ParseConfig splits a line into its key and value.
func (p *Parser) ParseConfig(line string) (string, string) {
	key, value, _ := strings.Cut(line, "=")
	return strings.TrimSpace(key), strings.TrimSpace(value)
}
"""


def test_a_function_that_became_a_method_in_its_file_is_signature_changed(tree):
    (tree.repo / "tools/report.py").write_text(PY_METHOD, encoding="utf-8")
    (tree.repo / "cfg/parse.go").write_text(GO_METHOD, encoding="utf-8")
    k2 = "STALE: signature changed: cfg/parse.go#Parser.ParseConfig (was cfg/parse.go#ParseConfig)"
    k3 = "STALE: signature changed: tools/report.py#Report.report (was tools/report.py#report)"
    assert tree.states() == {
        **FRESH,
        "k2": ("signature changed", k2),
        "k3": ("signature changed", k3),
    }
    assert [a["moved_to"] for a in tree.anchors("k2")] == [None]
    assert tree.text() == (
        1,
        [
            tree.line("k2", k2),
            tree.diff("cfg/parse.go"),
            tree.line("k3", k3),
            tree.diff("tools/report.py"),
            "STALE: checked 6, stale 2, unreachable 0",
        ],
    )
    # it still exists: verify takes it where it is now, and the fact holds again
    r = cli("verify", "k2", "k3", "--store", tree.store)
    assert r.exit_code == 0, r.output
    assert tree.rows(
        "SELECT fact_id, target_kind, target_container, target_name FROM anchors"
        " WHERE fact_id IN (2, 3) ORDER BY fact_id"
    ) == [(2, "function", "Parser", "ParseConfig"), (3, "function", "Report", "report")]
    assert tree.states() == FRESH


def test_a_function_that_became_a_method_in_another_file_is_found_in_the_root(tree):
    (tree.repo / "cfg/parse.go").write_text("package cfg\n", encoding="utf-8")
    (tree.repo / "cfg/parser.go").write_text(GO_METHOD, encoding="utf-8")
    k2 = "STALE: signature changed: cfg/parser.go#Parser.ParseConfig (was cfg/parse.go#ParseConfig)"
    assert tree.states() == {**FRESH, "k2": ("signature changed", k2)}
    [anchor] = tree.anchors("k2")
    assert anchor["moved_to"] == "cfg/parser.go"
    assert anchor["diff"] == tree.diff("cfg/parse.go", "cfg/parser.go", moved=True)[4:]


def test_a_method_that_became_a_function_and_two_candidates(tree):
    (tree.repo / "cfg/parse.go").write_text(GO_METHOD, encoding="utf-8")
    git(tree.repo, "commit", "-qam", "ParseConfig is a method")  # the commit tells what is new
    assert cli("verify", "k2", "--store", tree.store).exit_code == 0
    (tree.repo / "cfg/parse.go").write_text(GO, encoding="utf-8")  # a function again
    k2 = "STALE: signature changed: cfg/parse.go#ParseConfig (was cfg/parse.go#Parser.ParseConfig)"
    assert tree.states()["k2"] == ("signature changed", k2)
    # two methods of that name now, of other types: which one it became is unknown
    two = (
        "package cfg\n\ntype Loose struct{}\n\ntype Strict struct{}\n\n"
        "func (l Loose) ParseConfig(line string) (string, string) { return line, line }\n\n"
        "func (s Strict) ParseConfig(line string) (string, string) { return line, line }\n"
    )
    (tree.repo / "cfg/parse.go").write_text(two, encoding="utf-8")
    assert tree.states()["k2"] == (
        "declaration gone",
        "STALE: declaration gone: cfg/parse.go#Parser.ParseConfig",
    )


# ------------------------------------------------------------------ what changed


def test_no_command_without_a_commit(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "repo", {"cfg/parse.go": GO})  # no git: the fingerprint has no commit
    write(tmp_path / "notes", {"code.md": NOTES.splitlines()[1] + "\n"})
    store = tmp_path / "know.db"
    assert cli("import", "notes", "--root", "repo", "--store", store, "--verify").exit_code == 0
    (tmp_path / "repo/cfg/parse.go").write_text(GO.replace("line string)", "l string)"))
    r = cli("stale", "--store", store, "--format", "json", "--dry-run")
    [anchor] = json.loads(r.stdout)["facts"][0]["anchors"]
    assert (anchor["state"], anchor["commit"], anchor["diff"]) == ("signature changed", None, None)
    r = cli("stale", "--store", store, "--dry-run")
    assert r.stdout.splitlines() == [
        "notes/code.md:1: k1 environment area:code STALE: signature changed:"
        " cfg/parse.go#ParseConfig  ParseConfig trims the key and the value TER-2",
        f"STALE: checked 1, stale 1, unreachable 0 {DRY}",
    ]


def test_the_command_is_shell_quoted_and_shows_the_change(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    notes = "+ the set-up steps are in `docs/set up.md` TER-5\n"
    tree = make_tree(tmp_path, {"docs/set up.md": SETUP}, notes)
    tree.edit("docs/set up.md", "`make up`", "`make start`")
    [anchor] = tree.anchors("k1")
    assert anchor["diff"] == f"git -C repo diff {tree.head} -- 'docs/set up.md'"
    shown = subprocess.run(anchor["diff"], shell=True, capture_output=True, text=True)
    assert shown.stdout.splitlines()[4:] == [
        "@@ -1,4 +1,4 @@",
        " # Set-up",
        " ",
        "-1. `make up`",
        "+1. `make start`",
        " 2. open the app",
    ]


# ------------------------------------------------------------ values enclose cited lines

FEE_TABLE = """\
package billing

class FeeTable {
    private val rates = mapOf("eu" to 3, "us" to 2)

    fun fee(region: String): Int = rates[region] ?: 0
}
"""


def test_a_cited_property_line_is_fingerprinted_on_the_property_not_its_class(
    tmp_path, monkeypatch
):
    """SPEC.md §Staleness "File anchor with lines": `FeeTable.kt:4` on `private val rates`
    is fingerprinted on `rates`; an edit elsewhere in the class leaves it fresh, its value
    changed is a body change, its type a signature change."""
    monkeypatch.chdir(tmp_path)
    tree = make_tree(
        tmp_path,
        {"src/FeeTable.kt": FEE_TABLE},
        "+ the EU rate is 3, src/FeeTable.kt:4 TER-7\n",
    )
    [anchor] = tree.anchors("k1")
    assert (anchor["path"], anchor["symbol"], anchor["state"]) == ("src/FeeTable.kt", None, "fresh")
    tree.edit("src/FeeTable.kt", "?: 0", "?: 1")
    assert tree.states() == {"k1": ("fresh", None)}
    tree.edit("src/FeeTable.kt", '"eu" to 3', '"eu" to 4')
    body = "STALE: body changed: src/FeeTable.kt#FeeTable.rates"
    assert tree.states() == {"k1": ("body changed", body)}
    tree.edit("src/FeeTable.kt", "private val rates =", "private val rates: Map<String, Int> =")
    signature = "STALE: signature changed: src/FeeTable.kt#FeeTable.rates"
    assert tree.states() == {"k1": ("signature changed", signature)}


VALIDATOR = """\
class Validator:
    def new(self, cmd):
        return cmd


class Conflicts:
    def new(self, cmd):
        return [cmd]
"""


def test_a_removed_method_is_gone_though_another_type_had_a_method_of_its_name(
    tmp_path, monkeypatch
):
    """clap's `Conflicts::new` was removed while `Validator::new` was there all along: that
    is no method that moved to another type, so it is "declaration gone" (a declaration
    counts as the one it became only when the fingerprinted commit did not hold it)."""
    monkeypatch.chdir(tmp_path)
    tree = make_tree(
        tmp_path,
        {"src/validator.py": VALIDATOR},
        "+ conflicts start empty, src/validator.py:7-8 TER-8\n",
    )
    tree.edit(
        "src/validator.py", "class Conflicts:\n    def new(self, cmd):\n        return [cmd]\n", ""
    )
    gone = "STALE: declaration gone: src/validator.py#Conflicts.new"
    assert tree.states() == {"k1": ("declaration gone", gone)}
    # committed, and then a new type with that method: it is the one the method became
    git(tree.repo, "commit", "-qam", "drop Conflicts")
    tree.edit(
        "src/validator.py",
        "        return cmd\n",
        "        return cmd\n\n\nclass Clashes:\n    def new(self, cmd):\n        return [cmd]\n",
    )
    became = (
        "STALE: signature changed: src/validator.py#Clashes.new"
        " (was src/validator.py#Conflicts.new)"
    )
    assert tree.states() == {"k1": ("signature changed", became)}


CLI_PY = '''\
import argparse
parser = argparse.ArgumentParser()
parser.add_argument("--x", help="""
    the x option
    defaults to 5 seconds
""")
# TODO: the retry limit is 3 (see ops runbook)
run(parser)
'''


def test_cited_lines_that_hold_no_token_are_digested_over_their_text(tmp_path, monkeypatch):
    """Lines of code that hold no token (the inside of a multi-line string, a comment) are
    digested over their raw text, comments too, as a file that declares nothing: digested
    over their (empty) tokens they could never go stale, and were "found" at any blank
    line."""
    monkeypatch.chdir(tmp_path)
    tree = make_tree(
        tmp_path,
        {"cli.py": CLI_PY, "conf.yaml": "a: 1\rb: 2\rc: 3\r"},
        "+ x defaults to 5 seconds: cli.py:4-5 TER-1\n"
        "+ the retry limit is 3: cli.py:7 TER-2\n"
        "+ b is 2, conf.yaml:2 TER-3\n",
    )
    fresh = {"k1": ("fresh", None), "k2": ("fresh", None), "k3": ("fresh", None)}
    assert tree.states() == fresh
    tree.edit("cli.py", "# TODO: the", "#   TODO:   the")  # a re-indent of the comment
    (tree.repo / "conf.yaml").write_bytes(b"a: 1\nb: 2\nc: 3\n")  # CR -> LF
    assert tree.states() == fresh
    tree.edit("cli.py", "5 seconds", "50 seconds")
    tree.edit("cli.py", "limit is 3", "limit is 7")
    (tree.repo / "conf.yaml").write_bytes(b"a: 1\nb: 20\nc: 3\n")
    assert tree.states() == {
        "k1": ("body changed", "STALE: body changed: cli.py:4-5"),
        "k2": ("body changed", "STALE: body changed: cli.py:7"),
        "k3": ("body changed", "STALE: body changed: conf.yaml:2"),
    }


WITH_OTHER = (
    "def parse(text):\n    return text\n\n\n"
    "class Other:\n    def parse(self, s):\n        return s\n"
)


def checkout_of(tmp_path: Path, files: dict[str, str], notes: str) -> Tree:
    """``make_tree`` for a checkout whose ``.gitattributes`` may ask for CRLF: checked
    out again after the commit, so the working files are as git writes them."""
    repo = tmp_path / "repo"
    write(repo, files)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "sources")
    for rel in files:
        if rel.endswith(".py"):
            (repo / rel).unlink()
            git(repo, "checkout", "--", rel)
    write(tmp_path / "notes", {"code.md": notes})
    r = cli("import", "notes", "--root", "repo", "--store", "know.db", "--verify")
    assert r.exit_code == 0, r.output
    return Tree(repo, tmp_path / "know.db", "")


def test_without_evidence_a_removed_function_is_gone_not_another_types_method(
    tmp_path, monkeypatch
):
    """``_new_since`` has no evidence when the fingerprint was taken on bytes its commit
    does not hold (a dirty tree): no candidate counts then, the function is "declaration
    gone" and verify refuses, instead of the method ``Other.parse`` that was there all
    along."""
    monkeypatch.chdir(tmp_path)
    repo = tmp_path / "repo"
    write(repo, {"w.py": WITH_OTHER})
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "w")
    (repo / "w.py").write_text(WITH_OTHER + "\n# dirty\n", encoding="utf-8")
    write(tmp_path / "notes", {"code.md": "+ parse keeps the text, w.py:2 TER-1\n"})
    assert cli("import", "notes", "--root", "repo", "--store", "know.db", "--verify").exit_code == 0
    tree = Tree(repo, tmp_path / "know.db", "")
    tree.edit("w.py", "def parse(text):", "def parsed(text):")
    assert tree.states() == {"k1": ("declaration gone", "STALE: declaration gone: w.py#parse")}
    assert cli("verify", "k1", "--store", tree.store).exit_code == 1


def test_a_crlf_checkout_is_evidence_like_any_other(tmp_path, monkeypatch):
    """In a checkout git writes with CRLF (``eol=crlf``), the fingerprinted commit's bytes
    are read as the checkout writes them, so they are the bytes fingerprinted: a function
    that became a method is found (its LF blob would have been no evidence)."""
    monkeypatch.chdir(tmp_path)
    files = {
        "p.py": "def parse(text):\n    return text\n",
        ".gitattributes": "*.py text eol=crlf\n",
    }
    tree = checkout_of(tmp_path, files, "+ parse keeps the text, p.py:2 TER-1\n")
    assert b"\r\n" in (tree.repo / "p.py").read_bytes()
    (tree.repo / "p.py").write_bytes(
        b"class Parser:\r\n    def parse(self, text):\r\n        return text\r\n"
    )
    became = "STALE: signature changed: p.py#Parser.parse (was p.py#parse)"
    assert tree.states() == {"k1": ("signature changed", became)}


def test_a_file_that_declares_nothing_goes_stale_when_its_comments_change(tmp_path, monkeypatch):
    """A source file of comments only (a licence header, a `doc.go`) is digested whole,
    comments too: before, its digest left the comments out and it could never go stale."""
    monkeypatch.chdir(tmp_path)
    doc = "// Package cfg reads settings.\n//\n// Keys are case-sensitive.\npackage cfg\n"
    tree = make_tree(
        tmp_path,
        {"cfg/doc.go": doc, "NOTICE.rs": "// Licensed under MIT.\n// Copyright the authors.\n"},
        "+ keys are case-sensitive, see cfg/doc.go TER-1\n+ the licence is in NOTICE.rs TER-2\n",
    )
    assert tree.states() == {"k1": ("fresh", None), "k2": ("fresh", None)}
    tree.edit("cfg/doc.go", "// Keys are", "//   Keys   are")  # a re-flow of the comment
    assert tree.states() == {"k1": ("fresh", None), "k2": ("fresh", None)}
    tree.edit("cfg/doc.go", "case-sensitive", "case-insensitive")
    tree.edit("NOTICE.rs", "MIT", "Apache-2.0")
    assert tree.states() == {
        "k1": ("body changed", "STALE: body changed: cfg/doc.go"),
        "k2": ("body changed", "STALE: body changed: NOTICE.rs"),
    }


def test_in_a_moved_file_the_evidence_is_the_file_it_moved_from(tmp_path, monkeypatch):
    """clap moved `src/parser/validator.rs` to `clap_builder/src/parser/validator.rs` and
    removed `Conflicts::new` there; `Validator::new` was in the file before the move, so it
    is not the one the method became: the fingerprinted commit's copy of the file at its
    old path is the evidence."""
    monkeypatch.chdir(tmp_path)
    tree = make_tree(
        tmp_path,
        {"src/validator.py": VALIDATOR},
        "+ conflicts start empty, src/validator.py:7-8 TER-8\n",
    )
    (tree.repo / "lib").mkdir()
    git(tree.repo, "mv", "src/validator.py", "lib/validator.py")
    tree.edit(
        "lib/validator.py", "class Conflicts:\n    def new(self, cmd):\n        return [cmd]\n", ""
    )
    git(tree.repo, "commit", "-qam", "move the validator, drop Conflicts")
    gone = "STALE: declaration gone: lib/validator.py#Conflicts.new"
    assert tree.states() == {"k1": ("declaration gone", gone)}


MODELS = """\
class Response:
    status = 200

    @property
    def ok(self):
        return self.status < 400

    def raise_for_status(self):
        return None
"""


def test_blank_lines_at_the_edges_of_cited_lines_do_not_widen_the_declaration(
    tmp_path, monkeypatch
):
    """requests' `models.py:692-706` was the `ok` property and the blank line after it:
    fingerprinted on the class `Response`, its reason named the class. Blank lines at
    either end of cited lines choose no declaration."""
    monkeypatch.chdir(tmp_path)
    tree = make_tree(tmp_path, {"models.py": MODELS}, "+ ok means below 400, models.py:3-7 TER-9\n")
    tree.edit("models.py", "return None", "return 1")  # elsewhere in the class
    assert tree.states() == {"k1": ("fresh", None)}
    tree.edit("models.py", "< 400", "< 300")
    assert tree.states() == {"k1": ("body changed", "STALE: body changed: models.py#Response.ok")}


STEPS = "# Guide\n\nStep one: build.\nStep two: test.\nStep three: ship.\n\n## More\n"


def test_cited_text_found_over_another_number_of_lines_is_fresh_at_its_new_lines(
    tmp_path, monkeypatch
):
    """The cited text moved down and a blank line came inside it (clap's doc attributes
    turned into `///` lines did that to a cited range): the same text over another number
    of lines is found, when git holds the fingerprinted file, and its new lines are
    recorded."""
    monkeypatch.chdir(tmp_path)
    tree = make_tree(tmp_path, {"docs/guide.md": STEPS}, "+ three steps, docs/guide.md:3-5 TER-1\n")
    moved = STEPS.replace("# Guide\n\n", "# Guide\n\nIntro.\n\n").replace(
        "Step two: test.\n", "Step two: test.\n\n"
    )
    (tree.repo / "docs/guide.md").write_text(moved, encoding="utf-8")
    assert tree.states() == {"k1": ("fresh", None)}
    assert cli("stale", "--store", tree.store).exit_code == 0
    assert tree.rows("SELECT line_first, line_last FROM anchors") == [(5, 8)]
    tree.edit("docs/guide.md", "Step three: ship.", "Step three: release.")
    assert tree.states() == {"k1": ("body changed", "STALE: body changed: docs/guide.md:5-8")}
