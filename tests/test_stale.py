"""Staleness: schema version 2, fingerprints, ``verify``, ``stale`` (SPEC.md §Staleness)."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from brainmigrate import importer
from brainmigrate.stores import sqlite as store

REPO = Path(__file__).resolve().parent.parent
FIXTURE = REPO / "tests" / "fixtures" / "store-v1.db"
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
    importer.import_notes([notes], importer.Options(roots=[SAMPLES]), db)
    assert version(db) == 2
    columns = [r[1] for r in table(db, "PRAGMA table_info(anchors)")]
    assert columns[-4:] == ["verified_commit", "target_kind", "target_container", "target_name"]
    assert table(db, "SELECT * FROM facts WHERE id <= 29 ORDER BY id") == facts_before
    # the old rows keep every value; the new columns are empty
    assert [r[:11] for r in table(db, "SELECT * FROM anchors ORDER BY rowid")] == anchors_before
    assert table(db, "SELECT count(*) FROM anchors WHERE verified_commit IS NOT NULL") == [(0,)]
    assert table(db, "SELECT count(*), max(id) FROM facts") == [(30, 30)]


def test_an_upgrade_that_fails_later_in_its_transaction_is_rolled_back(tmp_path):
    db = tmp_path / "know.db"
    shutil.copy(FIXTURE, db)
    before = db.read_bytes()

    def work(con):
        assert con.execute("PRAGMA user_version").fetchone()[0] == 2
        raise RuntimeError("disk gave up")

    with pytest.raises(RuntimeError):
        store.update(db, work)
    assert version(db) == 1
    assert db.read_bytes() == before


# ------------------------------------------------------------------ real input: a git checkout

import json  # noqa: E402
import os  # noqa: E402
import subprocess  # noqa: E402
from dataclasses import dataclass  # noqa: E402

from click.testing import CliRunner  # noqa: E402

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


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


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
    shutil.copy(REPO / "brainmigrate" / "merge.py", repo / "pkg" / "merge.py")
    shutil.copy(REPO / "brainmigrate" / "fsutil.py", repo / "pkg" / "fsutil.py")
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
        "k6 verified: 1 anchors fingerprinted\n"
        "k5 refused: declaration gone: app/PaymentGateway.kt#ChargeRequest\n"
    )
    after = table(env.store, "SELECT * FROM anchors ORDER BY rowid")
    assert [r for r in after if r[0] == 5] == [r for r in before if r[0] == 5]
    assert [r for r in after if r[0] == 6] == [r for r in before if r[0] == 6]  # unchanged code


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
    r = env.stale("--format", "json")
    assert r.exit_code == 0
    data = json.loads(r.output)
    assert (data["checked"], data["stale"], data["unreachable"]) == (6, 0, 6)
    assert {f["state"] for f in data["facts"]} == {"unreachable"}
    assert env.status()["k6"] == ("stale", "body changed: web/api.ts#ApiClient")
    # --root reads the anchors in another folder (a store moved to another machine)
    assert env.states("--root", moved)["k6"] == (
        "body changed",
        "STALE: body changed: web/api.ts#ApiClient",
    )
