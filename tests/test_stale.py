"""Staleness: schema version 2, fingerprints, ``verify``, ``stale`` (SPEC.md §Staleness)."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from brainmigrate import importer
from brainmigrate import stores as store
from brainmigrate.read.run import ImportOptions

REPO = Path(__file__).resolve().parent.parent
FIXTURE = REPO / "tests" / "fixtures" / "store-v1.db"
#: Python sources as checkouts hold them, frozen (``NAME.py.txt``: data, not code to lint or
#: collect), for the trees that staleness is tested on: copies of this package's own
#: ``merge/rule.py``, ``fsutil.py``, ``spill.py``, ``config.py`` and ``hints.py`` at one
#: commit, so a refactor of the package leaves the tests' edits and expected spans as they are.
SOURCES = REPO / "tests" / "fixtures" / "stale"
SAMPLES = REPO / "samples"


def table(db: Path, sql: str) -> list:
    con = sqlite3.connect(db)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def version(db: Path) -> int:
    return table(db, "PRAGMA user_version")[0][0]


# ------------------------------------------------------------------ schema version 2


def test_version_1_fixture_is_what_it_claims():
    assert version(FIXTURE) == 1
    columns = [r[1] for r in table(FIXTURE, "PRAGMA table_info(anchors)")]
    assert "verified_commit" not in columns and "verified_at" in columns


def test_read_only_commands_read_version_1_as_it_is(tmp_path):
    db = tmp_path / "know.db"
    shutil.copy(FIXTURE, db)
    before = db.read_bytes()
    with store.reader(db) as r:
        facts = r.fetch([1, 2, 11])
        assert r.version() == 1
    assert [len(f.anchors) for f in facts.values()] == [0, 1, 2]
    assert not facts[11].anchors[0].fingerprinted
    assert db.read_bytes() == before


def test_first_write_upgrades_version_1_in_place(tmp_path):
    db = tmp_path / "know.db"
    shutil.copy(FIXTURE, db)
    facts_before = table(db, "SELECT * FROM facts ORDER BY id")
    anchors_before = table(db, "SELECT * FROM anchors ORDER BY rowid")
    notes = tmp_path / "more.md"
    notes.write_text("+ a fact the upgrade must not disturb\n", encoding="utf-8")
    importer.import_notes([notes], ImportOptions(roots=[SAMPLES]), db)
    assert version(db) == 4
    columns = [r[1] for r in table(db, "PRAGMA table_info(anchors)")]
    assert columns[-7:] == [
        "verified_commit",
        "target_kind",
        "target_container",
        "target_name",
        "content_hash",
        "sketch",
        "digest_version",
    ]
    assert table(db, "SELECT * FROM facts WHERE id <= 29 ORDER BY id") == facts_before
    # the old rows keep every value but the root, now relative to the store's folder
    # (version 3); the new columns are empty
    base = os.path.realpath(tmp_path)
    assert [r[:11] for r in table(db, "SELECT * FROM anchors ORDER BY rowid")] == [
        (*r[:2], os.path.relpath(r[2], base), *r[3:]) for r in anchors_before
    ]
    assert table(db, "SELECT name, remote, position FROM roots") == [
        (os.path.relpath("/work/wt-13/samples/roots/app", base), None, 0),
        (os.path.relpath("/work/wt-13/samples/roots/infra", base), None, 1),
        (os.path.relpath(SAMPLES, base), None, 2),
    ]
    assert table(db, "SELECT count(*) FROM anchors WHERE verified_commit IS NOT NULL") == [(0,)]
    assert table(db, "SELECT count(*), max(id) FROM facts") == [(30, 30)]


def test_an_upgrade_that_fails_later_in_its_transaction_is_rolled_back(tmp_path):
    db = tmp_path / "know.db"
    shutil.copy(FIXTURE, db)
    before = db.read_bytes()

    with pytest.raises(RuntimeError), store.updating(db) as up:
        assert up.reader.version() == 4
        raise RuntimeError("disk gave up")
    assert version(db) == 1
    assert db.read_bytes() == before


# ------------------------------------------------------------------ real input: a git checkout

import json  # noqa: E402
import os  # noqa: E402
import subprocess  # noqa: E402
from dataclasses import dataclass  # noqa: E402

from clirun import invoker  # noqa: E402

from brainmigrate.cli import main  # noqa: E402

GIT_ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
}
KOTLIN = SAMPLES / "roots/app/src/main/kotlin/com/example/payments/PaymentGateway.kt"
TYPESCRIPT = """\
import { Logger } from "./logger";

/** A thin client of the billing API; GET requests are retried, writes never. */
export class ApiClient {
  constructor(private readonly base: string, private readonly log: Logger) {}

  async get(path: string): Promise<Response> {
    for (let attempt = 1; ; attempt++) {
      const res = await fetch(this.base + path);
      if (res.ok || attempt >= 3) return res;
      this.log.warn(`retrying ${path} (${attempt})`);
    }
  }

  async post(path: string, body: unknown): Promise<Response> {
    return fetch(this.base + path, { method: "POST", body: JSON.stringify(body) });
  }
}
"""
SETUP = "# Set-up\n\n1. `make up`\n2. open http://localhost:8080\n"


def git(repo: Path, *args: str) -> str:
    out = subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, env=GIT_ENV
    )
    return out.stdout.decode().strip()


cli = invoker(catch_exceptions=False)


@dataclass
class Env:
    """A git checkout of real sources, notes citing them, a store imported with --verify."""

    repo: Path
    store: Path
    humps_line: int

    def stale(self, *args):
        return cli("stale", "--store", self.store, *args)

    def states(self, *args) -> dict[str, tuple[str, str | None]]:
        r = self.stale("--format", "json", "--dry-run", *args)
        data = json.loads(r.output)
        return {f["id"]: (f["state"], f["reason"]) for f in data["facts"]}

    def status(self) -> dict[str, tuple[str, str | None]]:
        rows = table(self.store, "SELECT id, status, status_reason FROM facts ORDER BY id")
        return {f"k{i}": (s, r) for i, s, r in rows}

    def edit(self, rel: str, old: str, new: str) -> None:
        path = self.repo / rel
        text = path.read_text(encoding="utf-8")
        assert text.count(old) == 1, old
        path.write_text(text.replace(old, new), encoding="utf-8")


FRESH = {f"k{i}": ("fresh", None) for i in range(1, 7)}


@pytest.fixture
def env(tmp_path, monkeypatch) -> Env:
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "app").mkdir()
    (repo / "web").mkdir()
    (repo / "docs").mkdir()
    shutil.copy(SOURCES / "merge.py.txt", repo / "pkg" / "merge.py")
    shutil.copy(SOURCES / "fsutil.py.txt", repo / "pkg" / "fsutil.py")
    shutil.copy(KOTLIN, repo / "app" / "PaymentGateway.kt")
    (repo / "web" / "api.ts").write_text(TYPESCRIPT, encoding="utf-8")
    (repo / "docs" / "setup.md").write_text(SETUP, encoding="utf-8")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "sources")
    lines = (repo / "pkg" / "merge.py").read_text(encoding="utf-8").split("\n")
    humps_line = lines.index("def humps(word: str) -> list[str]:") + 3  # inside its body
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "code.md").write_text(
        "+ MergeIndex finds the earlier fact a repeat merges into TER-301\n"
        f"+ camelCase words split at their humps, pkg/merge.py:{humps_line} TER-302\n"
        "+ the merge rule lives in pkg/merge.py TER-303\n"
        "+ the set-up steps are in docs/setup.md TER-304\n"
        "+ ChargeRequest carries the idempotency key TER-305\n"
        "+ ApiClient retries a GET request 3 times, never a write TER-306\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    store_path = tmp_path / "know.db"
    r = cli("import", "notes", "--root", "repo", "--store", store_path, "--verify")
    assert r.exit_code == 0, r.output
    return Env(repo, store_path, humps_line)


def anchors_of(env: Env) -> list[tuple]:
    return table(
        env.store,
        "SELECT fact_id, kind, path, symbol, line_first, line_last, target_kind,"
        " target_container, target_name, verified_commit IS NOT NULL, verified_at IS NOT NULL"
        " FROM anchors ORDER BY fact_id, rowid",
    )


def span(path: Path, header: str) -> tuple[int, int]:
    """Lines of the top-level declaration starting ``header``: to the last line that is not
    blank before the next line at column 0."""
    lines = path.read_text(encoding="utf-8").split("\n")
    first = next(i for i, line in enumerate(lines) if line.startswith(header))
    end = next(i for i in range(first + 1, len(lines)) if lines[i][:1] not in ("", " ", ")"))
    while not lines[end - 1].strip():
        end -= 1
    return first + 1, end


def test_import_verify_fingerprints_every_anchor_and_all_are_fresh(env):
    L = env.humps_line
    k1_lines = span(env.repo / "pkg/merge.py", "class MergeIndex")
    k5_lines = (32, 32)
    assert anchors_of(env) == [
        (1, "symbol", "pkg/merge.py", "MergeIndex", *k1_lines, "type", None, "MergeIndex", 1, 1),
        (2, "file", "pkg/merge.py", "", L, L, "function", None, "humps", 1, 1),
        (3, "file", "pkg/merge.py", "", None, None, "file", None, None, 1, 1),
        (4, "file", "docs/setup.md", "", None, None, "file", None, None, 1, 1),
        (
            5,
            "symbol",
            "app/PaymentGateway.kt",
            "ChargeRequest",
            *k5_lines,
            "type",
            None,
            "ChargeRequest",
            1,
            1,
        ),  # fmt: skip
        (6, "symbol", "web/api.ts", "ApiClient", 4, 18, "type", None, "ApiClient", 1, 1),
    ]
    head = git(env.repo, "rev-parse", "HEAD")
    assert table(env.store, "SELECT DISTINCT verified_commit FROM anchors") == [(head,)]
    r = env.stale()
    assert r.exit_code == 0
    assert r.output == "OK: checked 6, stale 0, unreachable 0\n"
    assert env.states() == FRESH


def test_signature_changed_then_reverting_clears_the_flag(env):
    env.edit(
        "pkg/merge.py",
        "def humps(word: str) -> list[str]:",
        "def humps(word: str, keep: bool = False) -> list[str]:",
    )
    r = env.stale("--format", "json")
    assert r.exit_code == 1
    data = json.loads(r.output)
    assert (data["checked"], data["stale"], data["unreachable"]) == (6, 2, 0)
    assert env.status() == {
        **{k: ("active", None) for k in FRESH},
        "k2": ("stale", "signature changed: pkg/merge.py#humps"),
        "k3": ("stale", "body changed: pkg/merge.py"),
    }
    git(env.repo, "checkout", "--", "pkg/merge.py")
    r = env.stale()
    assert (r.exit_code, r.output) == (0, "OK: checked 6, stale 0, unreachable 0\n")
    assert env.status() == {k: ("active", None) for k in FRESH}


def test_body_changed_in_python_kotlin_and_typescript(env):
    env.edit("pkg/merge.py", "    def add(self", "    def add(self, *, strict: bool = False")
    env.edit("app/PaymentGateway.kt", "val currency: String)", 'val currency: String = "EUR")')
    env.edit("web/api.ts", "attempt >= 3", "attempt >= 5")
    assert env.states() == {
        **FRESH,
        "k1": ("body changed", "STALE: body changed: pkg/merge.py#MergeIndex"),
        "k3": ("body changed", "STALE: body changed: pkg/merge.py"),
        "k5": (
            "signature changed",
            "STALE: signature changed: app/PaymentGateway.kt#ChargeRequest",
        ),
        "k6": ("body changed", "STALE: body changed: web/api.ts#ApiClient"),
    }
    r = env.stale()
    assert r.exit_code == 1
    assert r.output.splitlines()[-1] == "STALE: checked 6, stale 4, unreachable 0"
    assert r.output.splitlines()[0] == (
        "notes/code.md:1: k1 environment area:code STALE: body changed: "
        "pkg/merge.py#MergeIndex  MergeIndex finds the earlier fact a repeat merges into TER-301"
    )


def test_whitespace_line_endings_bom_and_outside_comments_change_nothing(env):
    env.edit("pkg/merge.py", "\n\n\nclass MergeIndex", "\n\n# merged facts\nclass MergeIndex")
    for rel in ("pkg/merge.py", "app/PaymentGateway.kt", "web/api.ts", "docs/setup.md"):
        path = env.repo / rel
        text = path.read_text(encoding="utf-8")
        text = text.replace("    ", "\t").replace("\n\n", "\n\n\n").replace(")\n", ")  \n")
        path.write_bytes(b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode("utf-8"))
    assert env.states() == FRESH
    assert env.stale().exit_code == 0


def test_a_docstring_is_no_body_but_the_file_digest_holds_it(env):
    lines = (env.repo / "pkg/merge.py").read_text(encoding="utf-8")
    doc_start = lines.index('"""', lines.index("class MergeIndex"))
    path = env.repo / "pkg/merge.py"
    path.write_text(lines[: doc_start + 3] + "Reworded. " + lines[doc_start + 3 :], "utf-8")
    assert env.states() == {**FRESH, "k3": ("body changed", "STALE: body changed: pkg/merge.py")}


def test_git_mv_reads_moved_and_a_moved_change_names_both_paths(env):
    (env.repo / "lib").mkdir()
    git(env.repo, "mv", "pkg/merge.py", "lib/merge.py")
    assert env.states() == {
        **FRESH,
        "k1": ("moved", "STALE: moved: pkg/merge.py → lib/merge.py#MergeIndex"),
        "k2": ("moved", "STALE: moved: pkg/merge.py → lib/merge.py#humps"),
        "k3": ("moved", "STALE: moved: pkg/merge.py → lib/merge.py"),
    }
    r = env.stale("--format", "json")
    assert r.exit_code == 1
    k1 = json.loads(r.output)["facts"][0]
    assert k1["anchors"][0]["moved_to"] == "lib/merge.py"
    assert k1["anchors"][0]["state"] == "moved"
    env.edit("lib/merge.py", "    def add(self", "    def add(self, *, strict: bool = False")
    assert env.states()["k1"] == (
        "body changed",
        "STALE: body changed: lib/merge.py#MergeIndex (moved from pkg/merge.py)",
    )
    git(env.repo, "mv", "lib/merge.py", "pkg/merge.py")
    git(env.repo, "checkout", "--", "pkg/merge.py")
    assert env.stale().exit_code == 0
    assert env.status() == {k: ("active", None) for k in FRESH}


def test_a_committed_rename_is_followed_from_the_fingerprinted_commit(env):
    git(env.repo, "mv", "docs/setup.md", "docs/getting-started.md")
    git(env.repo, "commit", "-q", "-m", "rename")
    assert env.states()["k4"] == (
        "moved",
        "STALE: moved: docs/setup.md → docs/getting-started.md",
    )


def test_a_file_found_by_its_digest_or_its_name(env):
    # not a git rename (a copy and a delete, untracked): the same digest finds it
    shutil.copy(env.repo / "docs/setup.md", env.repo / "docs/install.md")
    (env.repo / "docs/setup.md").unlink()
    assert env.states()["k4"] == ("moved", "STALE: moved: docs/setup.md → docs/install.md")
    # changed as well: only the file name is left to find it by
    (env.repo / "docs/install.md").unlink()
    (env.repo / "guide").mkdir()
    (env.repo / "guide/setup.md").write_text(SETUP + "3. log in\n", encoding="utf-8")
    assert env.states()["k4"] == (
        "body changed",
        "STALE: body changed: guide/setup.md (moved from docs/setup.md)",
    )


def test_declaration_gone_and_verify_refuses_it(env):
    env.edit(
        "app/PaymentGateway.kt",
        "data class ChargeRequest(val key: String, val amountCents: Long, val currency: String)\n",
        "",
    )
    assert env.states() == {
        **FRESH,
        "k5": (
            "declaration gone",
            "STALE: declaration gone: app/PaymentGateway.kt#ChargeRequest",
        ),
    }
    before = table(env.store, "SELECT * FROM anchors ORDER BY rowid")
    r = cli("verify", "k5", "k6", "--store", env.store)
    assert r.exit_code == 1
    assert r.stdout == (
        "k6 verified: 1 anchor fingerprinted\n"
        "k5 refused: declaration gone: app/PaymentGateway.kt#ChargeRequest\n"
    )
    after = table(env.store, "SELECT * FROM anchors ORDER BY rowid")
    assert [r for r in after if r[0] == 5] == [r for r in before if r[0] == 5]
    # unchanged code: the same fingerprint, taken again (its time may be a second later)
    at = 10  # verified_at
    assert [r[:at] + r[at + 1 :] for r in after if r[0] == 6] == [
        r[:at] + r[at + 1 :] for r in before if r[0] == 6
    ]


def test_file_gone(env):
    (env.repo / "docs/setup.md").unlink()
    (env.repo / "pkg/merge.py").unlink()
    r = env.stale("--format", "json")
    assert r.exit_code == 1
    assert {f["id"]: f["reason"] for f in json.loads(r.output)["facts"]} == {
        "k1": "STALE: file gone: pkg/merge.py",
        "k2": "STALE: file gone: pkg/merge.py",
        "k3": "STALE: file gone: pkg/merge.py",
        "k4": "STALE: file gone: docs/setup.md",
        "k5": None,
        "k6": None,
    }
    r = cli("verify", "--all", "--store", env.store)
    assert r.exit_code == 1
    assert "k4 refused: file gone: docs/setup.md\n" in r.stdout
    git(env.repo, "checkout", "--", ".")
    assert env.stale().exit_code == 0


@pytest.mark.parametrize("how", ["missing", "a file"])
def test_an_unreachable_root_is_counted_and_leaves_the_status(env, how):
    env.edit("web/api.ts", "attempt >= 3", "attempt >= 5")
    assert env.stale().exit_code == 1
    moved = env.repo.with_name("elsewhere")
    env.repo.rename(moved)
    if how == "a file":
        env.repo.write_text("not a folder", encoding="utf-8")
    r = env.stale("--format", "json")  # every anchor unreachable: a wrong root, not "OK"
    assert (r.exit_code, r.stdout) == (2, "")
    assert r.stderr == (  # the root as the store records it, relative to the store's folder
        "brainmigrate: error: no anchor could be read in the roots recorded with them"
        f" ({os.path.relpath(env.repo, env.store.parent)}): 6 anchored facts unreachable;"
        " check --root\n"
    )
    assert env.status()["k6"] == ("stale", "body changed: web/api.ts#ApiClient")
    # --root reads the anchors in another folder (a store moved to another machine)
    assert env.states("--root", moved)["k6"] == (
        "body changed",
        "STALE: body changed: web/api.ts#ApiClient",
    )
    r = cli("verify", "k6", "--root", moved, "--store", env.store)
    assert (r.exit_code, r.stdout) == (0, "k6 verified: 1 anchor fingerprinted\n")
    assert env.states("--root", moved)["k6"] == ("fresh", None)
    assert table(env.store, "SELECT DISTINCT root FROM anchors") == [("repo",)]


def test_stale_json_is_the_spec_shape(env):
    env.edit("web/api.ts", "attempt >= 3", "attempt >= 5")
    r = env.stale("--format", "json")
    assert r.exit_code == 1
    data = json.loads(r.output)
    head = git(env.repo, "rev-parse", "HEAD")
    (when,) = table(env.store, "SELECT DISTINCT verified_at FROM anchors")[0]
    k6 = data["facts"][5]
    assert list(data) == ["schema_version", "checked", "stale", "unreachable", "facts"]
    assert (data["schema_version"], data["checked"], data["stale"], data["unreachable"]) == (
        1,
        6,
        1,
        0,
    )
    assert k6 == {
        "id": "k6",
        "state": "body changed",
        "reason": "STALE: body changed: web/api.ts#ApiClient",
        "origin": {"file": "notes/code.md", "line": 6},
        "anchors": [
            {
                "kind": "symbol",
                "path": "web/api.ts",
                "symbol": "ApiClient",
                "root": "repo",
                "fingerprinted": True,
                "verified_at": when,
                "commit": head,
                "state": "body changed",
                "moved_to": None,
                "diff": f"git -C repo diff {head} -- web/api.ts",
            }
        ],
    }
    assert data["facts"][0] == {**data["facts"][0], "state": "fresh", "reason": None}
    assert data["facts"][0]["anchors"][0]["diff"] is None


def test_dry_run_records_nothing_and_a_version_1_store_stays_version_1(env, tmp_path):
    env.edit("web/api.ts", "attempt >= 3", "attempt >= 5")
    before = env.store.read_bytes()
    assert env.stale("--dry-run").exit_code == 1
    assert env.store.read_bytes() == before
    db = tmp_path / "v1.db"
    shutil.copy(FIXTURE, db)
    roots = ["--root", SAMPLES / "roots/app", "--root", SAMPLES / "roots/infra"]
    r = cli("stale", "--store", db, *roots, "--dry-run")
    assert (r.exit_code, r.output) == (
        0,
        "OK: checked 14, stale 0, unreachable 0 (dry run: nothing recorded)\n",
    )
    assert version(db) == 1
    # a version-1 store's anchors have no fingerprints: they are checked to exist
    copies = tmp_path / "roots"
    shutil.copytree(SAMPLES / "roots", copies)
    (copies / "infra/docker/Dockerfile").unlink()
    roots = ["--root", copies / "app", "--root", copies / "infra"]
    r = cli("stale", "--store", db, *roots)
    assert r.exit_code == 1
    # (the fact's line stands at lines 3 and 10 of its notes: the later one is its origin)
    assert r.output.splitlines() == [
        "notes/docker.md:10: k5 environment area:docker STALE: file gone: docker/Dockerfile"
        "  the app image runs on eclipse-temurin:21-jre, see docker/Dockerfile",
        "STALE: checked 14, stale 1, unreachable 0",
    ]
    assert version(db) == 4  # the first command that wrote upgraded it
    assert table(db, "SELECT status, status_reason FROM facts WHERE id=5") == [
        ("stale", "file gone: docker/Dockerfile")
    ]


def test_ci_formats_place_each_stale_fact_at_its_notes_line(env):
    env.edit("web/api.ts", "attempt >= 3", "attempt >= 5")
    message = (
        "k6 STALE: body changed: web/api.ts#ApiClient: ApiClient retries a GET request 3 times,"
        " never a write TER-306; read the note again, then 'brainmigrate verify k6'"
    )
    r = env.stale("--format", "github", "--dry-run")
    assert r.exit_code == 1
    lines = r.output.splitlines()
    token = lines[1].removeprefix("::stop-commands::")
    assert lines == [
        "::error file=notes/code.md,line=6,title=BM501 stale-fact::" + message,
        f"::stop-commands::{token}",
        "brainmigrate stale: checked 6, stale 1, unreachable 0 (dry run: nothing recorded)",
        f"::{token}::",
    ]
    sarif = json.loads(env.stale("--format", "sarif", "--dry-run").output)
    (result,) = sarif["runs"][0]["results"]
    assert result["ruleId"] == "BM501"
    assert result["level"] == "error"
    assert result["message"]["text"] == message
    assert result["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "notes/code.md"},
        "region": {"startLine": 6},
    }
    md = env.stale("--format", "markdown", "--dry-run", "--output", "report.md")
    assert md.exit_code == 1 and md.output == ""
    text = Path("report.md").read_text(encoding="utf-8")
    assert text.startswith("## brainmigrate stale: 1 failing\n")
    assert "| notes/code.md:6 | BM501 | error (fails) |" in text


def test_every_stale_format_has_a_formatter():
    from brainmigrate.reports import stale as report

    assert set(report.FORMATTERS) == set(report.Format)
    assert [f.value for f in report.Format] == [
        *("text", "json", "github", "sarif", "markdown", "junit", "gitlab")
    ]
    (option,) = [p for p in main.commands["stale"].params if p.name == "fmt"]
    assert list(option.type.choices) == [f.value for f in report.Format]


def test_verify_takes_the_new_commit_and_the_fact_holds_again(env):
    env.edit("web/api.ts", "attempt >= 3", "attempt >= 5")
    git(env.repo, "commit", "-qam", "five attempts")
    assert env.stale().exit_code == 1
    assert env.status()["k6"] == ("stale", "body changed: web/api.ts#ApiClient")
    r = cli("verify", "k6", "--store", env.store)
    assert (r.exit_code, r.stdout) == (0, "k6 verified: 1 anchor fingerprinted\n")
    assert env.status()["k6"] == ("active", None)
    head = git(env.repo, "rev-parse", "HEAD")
    assert table(env.store, "SELECT verified_commit FROM anchors WHERE fact_id=6") == [(head,)]
    assert env.stale().exit_code == 0


def test_verify_follows_a_moved_target(env):
    (env.repo / "lib").mkdir()
    git(env.repo, "mv", "pkg/merge.py", "lib/merge.py")
    r = cli("verify", "--scope", "area:code", "--store", env.store)
    assert r.exit_code == 0
    assert table(env.store, "SELECT DISTINCT path FROM anchors WHERE fact_id IN (1, 2, 3)") == [
        ("lib/merge.py",)
    ]
    assert env.states() == FRESH


def test_verify_refuses_unknown_ids_and_nothing_named(env):
    r = cli("verify", "k99", "--store", env.store)
    assert r.exit_code == 2
    assert "no fact k99 in" in r.stderr
    r = cli("verify", "--store", env.store)
    assert r.exit_code == 2
    assert r.stderr == "brainmigrate: error: name the facts to verify: IDs, --all or --scope\n"


def test_show_and_search_read_the_anchors_again(env):
    env.edit("pkg/merge.py", "    def add(self", "    def add(self, *, strict: bool = False")
    before = env.store.read_bytes()
    r = cli("show", "k1", "--store", env.store)
    assert r.exit_code == 0
    head = git(env.repo, "rev-parse", "HEAD")
    (when,) = table(env.store, "SELECT verified_at FROM anchors WHERE fact_id=1")[0]
    first, last = span(env.repo / "pkg/merge.py", "class MergeIndex")
    lines = r.output.splitlines()
    assert lines[:3] == [
        "k1 environment area:code (stale)",
        "  MergeIndex finds the earlier fact a repeat merges into TER-301",
        "status: stale: body changed: pkg/merge.py#MergeIndex",
    ]
    assert lines[lines.index("anchors: 1") + 1 :][:2] == [
        f"  symbol MergeIndex in pkg/merge.py:{first}-{last} (camelcase; root repo)",
        f"    fingerprinted {when} at {head}",
    ]
    r = cli("search", "MergeIndex", "--store", env.store)
    assert r.stdout == (
        "k1 environment area:code STALE: body changed: pkg/merge.py#MergeIndex  "
        "MergeIndex finds the earlier fact a repeat merges into TER-301\n"
        "k3 environment area:code STALE: body changed: pkg/merge.py  "
        "the merge rule lives in pkg/merge.py TER-303\n"
        f"k2 environment area:code  camelCase words split at their humps, "
        f"pkg/merge.py:{env.humps_line} TER-302\n"
    )
    assert env.store.read_bytes() == before  # read-only: nothing recorded
    git(env.repo, "checkout", "--", "pkg/merge.py")
    r = cli("search", "MergeIndex", "--store", env.store, "--format", "json")
    hit = json.loads(r.stdout)["hits"][0]
    assert (hit["fact"]["status"], hit["fact"]["status_reason"]) == ("active", None)
    assert hit["fact"]["anchors"][0]["commit"] == head


def test_search_anchor_finds_a_class_with_its_members(env):
    text = (env.repo / "pkg/merge.py").read_text(encoding="utf-8").split("\n")
    add = next(i for i, line in enumerate(text) if line.startswith("    def add(self")) + 2
    (Path("notes") / "more.md").write_text(
        f"+ add keeps the index in step with the facts, pkg/merge.py:{add} TER-310\n",
        encoding="utf-8",
    )
    r = cli("import", "notes/more.md", "--root", "repo", "--store", env.store, "--verify")
    assert r.exit_code == 0
    assert table(env.store, "SELECT target_kind, target_container, target_name FROM anchors"
                 " WHERE fact_id=7") == [("function", "MergeIndex", "add")]  # fmt: skip

    def found(anchor, *query):
        r = cli("search", *query, "--anchor", anchor, "--store", env.store, "--limit", "30")
        return [line.split()[0] for line in r.stdout.splitlines()]

    assert found("MergeIndex") == ["k7", "k1"]  # newest first
    assert found("pkg.merge.MergeIndex") == ["k7", "k1"]
    assert found("MergeIndex.add") == ["k7"]
    assert found("add") == ["k7"]
    assert found("pkg/merge.py#MergeIndex.add") == ["k7"]
    assert found("lib/merge.py#MergeIndex.add") == []
    assert found("merge.py") == ["k7", "k3", "k2", "k1"]
    assert found("merge.py", "humps") == ["k2"]
    assert found("humps") == ["k2"]


def test_a_package_moved_wholesale_with_edits_before_and_after(tmp_path, monkeypatch):
    """The way real projects move: a package git mv-ed into src/ in one commit, with edits
    in the commits before and after; notes verified at the first commit, read at the last."""
    repo = tmp_path / "repo"
    (repo / "shop").mkdir(parents=True)
    for name in ("merge", "spill", "config", "hints"):
        shutil.copy(SOURCES / f"{name}.py.txt", repo / "shop" / f"{name}.py")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "shop")
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "shop.md").write_text(
        "+ MergeIndex finds the earlier fact a repeat merges into\n"
        "+ SpillError tells the user to set TMPDIR\n"
        "+ MoveHints tries git renames first\n"
        "+ ConfigError names the bad key\n"
        "+ temporary files are written by shop/spill.py\n"
        "+ shop/merge.py holds the repeat rule\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    r = cli("import", "notes", "--root", "repo", "--store", "know.db", "--verify")
    assert r.exit_code == 0
    env = Env(repo, tmp_path / "know.db", 0)
    # before the move: an edit
    env.edit("shop/spill.py", '"set TMPDIR to a writable', '"set TMPDIR to another writable')
    git(repo, "commit", "-qam", "reword")
    # the move, alone in its commit
    (repo / "src").mkdir()
    git(repo, "mv", "shop", "src/shop")
    git(repo, "commit", "-qm", "move into src/")
    # after the move: an edit and a class removed
    env.edit("src/shop/hints.py", "        if cited not in self._answers:", "        if cited:")
    env.edit(
        "src/shop/config.py",
        'class ConfigError(InputError):\n    """The configuration file cannot be read, or holds'
        ' an unknown key or a bad value."""\n',
        "",
    )
    git(repo, "commit", "-qam", "edits")
    assert env.states() == {
        "k1": ("moved", "STALE: moved: shop/merge.py → src/shop/merge.py#MergeIndex"),
        "k2": (
            "body changed",
            "STALE: body changed: src/shop/spill.py#SpillError (moved from shop/spill.py)",
        ),
        "k3": (
            "body changed",
            "STALE: body changed: src/shop/hints.py#MoveHints (moved from shop/hints.py)",
        ),
        "k4": ("declaration gone", "STALE: declaration gone: src/shop/config.py#ConfigError"),
        "k5": (
            "body changed",
            "STALE: body changed: src/shop/spill.py (moved from shop/spill.py)",
        ),
        "k6": ("moved", "STALE: moved: shop/merge.py → src/shop/merge.py"),
    }


def test_unchanged_bytes_need_no_parsing_changed_ones_go_through_the_cache(env, tmp_path):
    cache = tmp_path / "fresh-cache"
    assert env.stale("--cache-dir", cache).exit_code == 0
    assert not cache.exists()  # every file held the bytes it was fingerprinted on
    env.edit("web/api.ts", "attempt >= 3", "attempt  >=  3")  # new bytes, same digests
    assert env.stale("--cache-dir", cache).exit_code == 0
    assert [p.name.startswith("codeindex-") for p in cache.iterdir()] == [True]


def test_a_root_that_cannot_be_read_is_unreachable(env, monkeypatch):
    """(The tests run as root, whom chmod 000 does not stop: the folder's listing is made
    to fail the way it fails for a user without the permission.)"""
    env.edit("web/api.ts", "attempt >= 3", "attempt >= 5")
    assert env.stale().exit_code == 1
    scandir = os.scandir

    def refuse(path="."):
        if os.fspath(path) == str(env.repo):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return scandir(path)

    monkeypatch.setattr(os, "scandir", refuse)
    r = env.stale("--format", "json")
    assert (r.exit_code, r.stdout) == (2, "")
    assert r.stderr.endswith("6 anchored facts unreachable; check --root\n")
    assert env.status()["k6"] == ("stale", "body changed: web/api.ts#ApiClient")
    r = cli("verify", "k6", "--store", env.store)
    assert (r.exit_code, r.stdout) == (1, f"k6 refused: root cannot be read: {env.repo}\n")


def test_scope_and_kind_choose_the_facts_stale_reads(env):
    env.edit("web/api.ts", "attempt >= 3", "attempt >= 5")
    r = env.stale("--scope", "area:elsewhere", "--dry-run")
    assert r.exit_code == 2
    assert r.stderr.startswith(
        "brainmigrate: error: --scope area:elsewhere: no anchored fact of it in "
    ) and r.stderr.endswith("; give one of the store's scopes (area:code)\n")
    r = cli("verify", "--store", env.store, "--scope", "area:elsewhere")
    assert r.exit_code == 2 and "no anchored fact of it" in r.stderr
    assert env.stale("--scope", " , ").exit_code == 2  # blank: a usage error
    r = env.stale("--scope", "area", "--kind", "environment", "--dry-run")
    assert r.exit_code == 1
    assert r.output.splitlines()[-1] == (
        "STALE: checked 6, stale 1, unreachable 0 (dry run: nothing recorded)"
    )
    assert env.stale("--kind", "decision").output.startswith("OK: checked 0,")


def test_reports_of_stale_facts_only_count_unchanged_files_without_reading_their_facts(env):
    from brainmigrate import stale

    env.edit("web/api.ts", "attempt >= 3", "attempt >= 5")
    short = stale.stale(env.store, dry_run=True, every=False)
    whole = stale.stale(env.store, dry_run=True)
    assert [fc.fact.key for fc in short.facts] == ["k6"]  # the one fact whose file changed
    assert short.fresh_unlisted == 5
    assert (short.checked, short.stale, short.unreachable) == (6, 1, 0)
    assert (whole.checked, whole.stale, whole.unreachable) == (6, 1, 0)
    assert [fc.fact.key for fc in whole.facts] == [f"k{i}" for i in range(1, 7)]


def test_files_are_hashed_with_no_read_transaction_open(env, monkeypatch):
    """``stale`` hashed every anchored file inside its read transaction: in the store's
    rollback-journal mode an import committing meanwhile waited out the busy timeout and
    failed as "busy". While a file is hashed, another connection can commit at once."""
    import sqlite3

    from brainmigrate import stale
    from brainmigrate.fingerprints import Checkouts

    commits = []
    quick = Checkouts.quick

    def hash_and_commit(self, anchor):
        other = sqlite3.connect(env.store, timeout=0, isolation_level=None)
        try:
            other.execute("BEGIN IMMEDIATE")
            other.execute("UPDATE meta SET value = value WHERE 0")
            other.execute("COMMIT")
            commits.append("done")
        finally:
            other.close()
        return quick(self, anchor)

    monkeypatch.setattr(Checkouts, "quick", hash_and_commit)
    env.edit("web/api.ts", "attempt >= 3", "attempt >= 5")
    short = stale.stale(env.store, dry_run=True, every=False)
    assert (short.checked, short.stale, commits[:1]) == (6, 1, ["done"])


def test_lines_outside_declarations_and_overloads(env):
    """A file anchor whose lines no declaration encloses is fingerprinted on those lines'
    text; overloads are told apart by their signature."""
    kotlin = env.repo / "app" / "PaymentGateway.kt"
    text = kotlin.read_text(encoding="utf-8")
    text = text.replace(
        "    private fun backoff(attempt: Int): Duration =",
        '    fun charge(key: String): ChargeResult = charge(ChargeRequest(key, 0, "EUR"))\n\n'
        "    private fun backoff(attempt: Int): Duration =",
    )
    kotlin.write_text(text, encoding="utf-8")
    lines = text.split("\n")
    second = lines.index(
        '    fun charge(key: String): ChargeResult = charge(ChargeRequest(key, 0, "EUR"))'
    )
    git(env.repo, "commit", "-qam", "an overload")
    (Path("notes") / "lines.md").write_text(
        "+ the set-up starts the stack first, docs/setup.md:3 TER-320\n"
        f"+ a charge by key alone charges nothing, app/PaymentGateway.kt:{second + 1} TER-321\n",
        encoding="utf-8",
    )
    r = cli("import", "notes/lines.md", "--root", "repo", "--store", env.store, "--verify")
    assert r.exit_code == 0
    assert table(
        env.store,
        "SELECT fact_id, target_kind, target_container, target_name FROM anchors"
        " WHERE fact_id IN (7, 8) ORDER BY fact_id",
    ) == [(7, "lines", None, None), (8, "function", "PaymentGateway", "charge")]
    env.edit("docs/setup.md", "# Set-up", "# Setting up")  # line 1: not the cited line
    env.edit("app/PaymentGateway.kt", "var attempt = 0", "var attempt = 1")  # the other charge
    states = env.states()
    assert (states["k7"], states["k8"]) == (("fresh", None), ("fresh", None))
    env.edit("docs/setup.md", "1. `make up`", "1. `make start`")  # line 3
    env.edit("app/PaymentGateway.kt", "ChargeRequest(key, 0,", "ChargeRequest(key, 1,")
    states = env.states()
    assert states["k7"] == ("body changed", "STALE: body changed: docs/setup.md:3")
    assert states["k8"] == (
        "body changed",
        "STALE: body changed: app/PaymentGateway.kt#PaymentGateway.charge",
    )


def test_a_plain_import_only_checks_that_anchors_exist(tmp_path, env):
    db = tmp_path / "plain.db"
    r = cli("import", "notes", "--root", "repo", "--store", db)
    assert r.exit_code == 0
    assert table(db, "SELECT count(*) FROM anchors WHERE verified_at IS NOT NULL") == [(0,)]
    env.edit("pkg/merge.py", "    def add(self", "    def add(self, *, strict: bool = False")
    env.edit(
        "app/PaymentGateway.kt",
        "data class ChargeRequest(val key: String, val amountCents: Long, val currency: String)\n",
        "",
    )
    r = cli("stale", "--store", db, "--format", "json", "--dry-run")
    assert r.exit_code == 1
    data = json.loads(r.output)
    assert {f["id"]: f["reason"] for f in data["facts"]} == {
        "k1": None,  # changed, but never fingerprinted: it exists
        "k2": None,
        "k3": None,
        "k4": None,
        "k5": "STALE: declaration gone: app/PaymentGateway.kt#ChargeRequest",
        "k6": None,
    }
    assert {a["fingerprinted"] for f in data["facts"] for a in f["anchors"]} == {False}


def test_search_parses_a_few_changed_files_without_loading_the_cache(env, tmp_path, monkeypatch):
    cache = tmp_path / "search-cache"
    monkeypatch.setenv("BRAINMIGRATE_CACHE_DIR", str(cache))
    env.edit("web/api.ts", "attempt >= 3", "attempt >= 5")
    r = cli("search", "ApiClient", "--store", env.store)
    assert r.stdout.startswith("k6 environment area:code STALE: body changed: web/api.ts#ApiClient")
    assert not cache.exists()
    assert env.stale().exit_code == 1  # stale goes through the cache
    assert cache.is_dir()


def test_import_verify_fingerprints_the_facts_it_writes_only(tmp_path, env):
    db = tmp_path / "plain.db"
    assert cli("import", "notes", "--root", "repo", "--store", db).exit_code == 0
    (tmp_path / "again").mkdir()
    (tmp_path / "again" / "code.md").write_text(
        "+ MergeIndex finds the earlier fact a repeat merges into TER-301\n", encoding="utf-8"
    )
    r = cli("import", "again", "--root", "repo", "--store", db, "--verify", "--format", "json")
    assert r.exit_code == 0
    totals = json.loads(r.output)["totals"]
    # the same fact again: nothing of it changes, but its new provenance is written
    assert (totals["added"], totals["updated"], totals["unchanged"]) == (0, 0, 1)
    assert table(db, "SELECT fact_id FROM anchors WHERE verified_at IS NOT NULL") == [(1,)]


def test_what_a_trial_as_a_user_found(env, tmp_path):
    before = env.store.read_bytes()
    # the report never goes over the store it reads, dry run or not
    for args in (["--dry-run"], [], ["--format", "json"]):
        r = env.stale(*args, "--output", env.store)
        assert r.exit_code == 2 and "would be written over the store" in r.stderr, args
    assert env.store.read_bytes() == before
    # an id no store column holds names no fact: one line, exit 2
    r = cli("verify", "k99999999999999999999", "--store", env.store)
    assert (r.exit_code, r.stderr.count("\n")) == (2, 1)
    assert r.stderr.startswith("brainmigrate: error: no fact k99999999999999999999")
    # a gone target: the advice is what can be done, not a verify that refuses
    (env.repo / "docs/setup.md").unlink()
    r = env.stale("--format", "github", "--dry-run")
    [line] = [x for x in r.output.splitlines() if x.startswith("::error")]
    assert line.endswith(
        "fix the note's citation (check --fix repairs a file git renamed) or remove the note,"
        " then import it again; 'brainmigrate verify k4' refuses while it is gone"
    )


def test_import_verify_after_a_rename_leaves_one_fresh_anchor(env):
    """A file holding an anchored class is renamed, then the notes are imported again with
    --verify: the stored anchor follows the class to its new file (as verify does) and
    is the same anchor as the one the repeat adds there; nothing is left saying moved."""
    git(env.repo, "mv", "app/PaymentGateway.kt", "app/Gateway.kt")
    git(env.repo, "commit", "-q", "-m", "rename")
    assert env.states()["k5"] == (
        "moved",
        "STALE: moved: app/PaymentGateway.kt → app/Gateway.kt#ChargeRequest",
    )
    r = cli("import", "notes", "--root", "repo", "--store", env.store, "--verify")
    assert r.exit_code == 0, r.output
    assert env.states() == FRESH
    k5 = [row for row in anchors_of(env) if row[0] == 5]
    assert [(kind, path, symbol, verified) for _, kind, path, symbol, *_, verified in k5] == [
        ("symbol", "app/Gateway.kt", "ChargeRequest", True)
    ]
    assert env.stale().exit_code == 0


def test_a_file_deleted_then_a_new_one_renamed_away_is_gone_not_moved(env):
    """The fingerprinted docs/setup.md was deleted; a new docs/setup.md was added later and
    renamed to docs/install.md. The rename moved the new file, not the one the fact holds
    for: its trail from the fingerprinted commit ends at the delete."""
    git(env.repo, "rm", "-q", "docs/setup.md")
    git(env.repo, "commit", "-q", "-m", "drop the set-up")
    (env.repo / "docs").mkdir(exist_ok=True)
    (env.repo / "docs" / "setup.md").write_text("# Another text entirely\n", encoding="utf-8")
    git(env.repo, "add", "-A")
    git(env.repo, "commit", "-q", "-m", "a new set-up")
    git(env.repo, "mv", "docs/setup.md", "docs/install.md")
    git(env.repo, "commit", "-q", "-m", "renamed")
    assert env.states()["k4"] == ("file gone", "STALE: file gone: docs/setup.md")


def test_import_verify_of_lines_already_imported_fingerprints_their_facts(env, tmp_path):
    """A plain import, then the same notes with --verify: every line is already imported,
    yet the user asked for fingerprints, so the facts its lines feed get them. After a
    rename, a plain import adds the new anchor and a second --verify import lets the
    stored one follow, leaving one."""
    db = tmp_path / "plain.db"
    assert cli("import", "notes", "--root", "repo", "--store", db).exit_code == 0
    assert table(db, "SELECT count(*) FROM anchors WHERE verified_at IS NOT NULL") == [(0,)]
    r = cli("import", "notes", "--root", "repo", "--store", db, "--verify", "--format", "json")
    totals = json.loads(r.output)["totals"]
    assert (totals["added"], totals["updated"]) == (0, 0)
    assert table(db, "SELECT count(*) FROM anchors WHERE verified_at IS NULL") == [(0,)]
    git(env.repo, "mv", "app/PaymentGateway.kt", "app/Gateway.kt")
    git(env.repo, "commit", "-q", "-m", "rename")
    assert cli("import", "notes", "--root", "repo", "--store", db).exit_code == 0
    assert cli("import", "notes", "--root", "repo", "--store", db, "--verify").exit_code == 0
    rows = table(db, "SELECT path, symbol FROM anchors WHERE fact_id = 5 ORDER BY rowid")
    assert rows == [("app/Gateway.kt", "ChargeRequest")]
    assert cli("stale", "--store", db).exit_code == 0


@pytest.mark.parametrize("cache", [None, 2])
def test_a_verify_dry_run_reports_what_the_verify_import_does(env, tmp_path, monkeypatch, cache):
    """After a rename, `import --verify --dry-run` and `import --verify` report the same
    facts and totals (the anchor that follows its target changes the fact in both), also
    when the run's facts come back from its temporary database (a tiny cache)."""
    from brainmigrate import spill

    if cache is not None:
        monkeypatch.setattr(spill, "CACHE", cache)
    git(env.repo, "mv", "app/PaymentGateway.kt", "app/Gateway.kt")
    git(env.repo, "commit", "-q", "-m", "rename")
    args = ["import", "notes", "--root", "repo", "--store", env.store, "--verify"]
    dry = json.loads(cli(*args, "--dry-run", "--format", "json").output)
    real = json.loads(cli(*args, "--format", "json").output)
    for report in (dry, real):
        for key in ("dry_run", "store"):
            report.pop(key)
    assert dry == real
    assert real["totals"]["updated"] == 1
    assert env.states() == FRESH


def test_import_verify_makes_a_stale_fact_active_again_when_every_anchor_is_taken(env):
    env.edit("web/api.ts", "attempt >= 3", "attempt >= 5")
    assert env.stale().exit_code == 1
    assert env.status()["k6"][0] == "stale"
    r = cli("import", "notes", "--root", "repo", "--store", env.store, "--verify")
    assert r.exit_code == 0, r.output
    assert env.status()["k6"] == ("active", None)
    assert env.stale().exit_code == 0


def test_a_same_size_edit_whose_mtime_was_put_back_is_stale_and_verified_as_it_is(tmp_path):
    # the declaration cache trusted size and mtime: a warm stale missed the new body and a
    # warm verify stored the old body's digest beside the new content hash, so a later
    # stale cried wolf even with a fresh cache
    from clirun import cli

    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    ledger = repo / "src" / "ledger.py"
    body = "class LedgerRepository:\n    def record(self):\n        return {}\n"
    ledger.write_text(body.format(1))
    os.utime(ledger, (1609459200, 1609459200))
    (tmp_path / "facts.md").write_text("+ LedgerRepository records\n")
    warm, db = tmp_path / "warm", tmp_path / "k.db"

    def bm(*args, cache):
        return cli(*args, "--cache-dir", cache)

    done = bm(
        "import", tmp_path / "facts.md", "--root", repo, "--verify", "--store", db, cache=warm
    )
    assert done.exit_code == 0, done.output
    assert bm("stale", "--store", db, "--dry-run", cache=warm).exit_code == 0  # cache warm
    ledger.write_text(body.format(2))  # the same size, the mtime put back
    os.utime(ledger, (1609459200, 1609459200))
    stale_warm = bm("stale", "--store", db, "--dry-run", cache=warm)
    stale_cold = bm("stale", "--store", db, "--dry-run", cache=tmp_path / "c1")
    assert (stale_warm.exit_code, stale_warm.output) == (stale_cold.exit_code, stale_cold.output)
    assert stale_warm.exit_code == 1 and "body changed" in stale_warm.output
    shutil.copy(db, tmp_path / "cold.db")
    assert bm("verify", "--all", "--store", db, cache=warm).exit_code == 0
    assert (
        bm("verify", "--all", "--store", tmp_path / "cold.db", cache=tmp_path / "c2").exit_code == 0
    )

    def kept(path):
        """The anchors' rows but their ``verified_at`` (the two verify runs may fall in
        two seconds)."""
        with sqlite3.connect(path) as con:
            cur = con.execute("SELECT * FROM anchors")
            names = [d[0] for d in cur.description]
            rows = [dict(zip(names, row, strict=True)) for row in cur]
        assert rows and all(r.pop("verified_at") for r in rows)
        return sorted(tuple(r.values()) for r in rows)

    assert kept(db) == kept(tmp_path / "cold.db")
    with ledger.open("a") as fh:
        fh.write("# an unrelated comment\n")
    later = bm("stale", "--store", db, "--dry-run", cache=tmp_path / "c3")
    assert later.exit_code == 0 and "stale 0" in later.output, later.output
