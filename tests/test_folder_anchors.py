"""Folder anchors, module anchors and ignored citations downstream of the resolver: the
import report (every format), the store, ``show`` and ``search``, staleness (SPEC.md
§Staleness "Folder anchor": existence only) and the exports.

The anchors and citations are planted (``planting``) into real runs on a real git
checkout, so each stage is tested on exactly the values issue 22 specifies.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest
import yaml
from planting import folder, ignored, module, plant

from brainmigrate import exports, importer, search, stale
from brainmigrate.merge.run import RunResult
from brainmigrate.read.run import ImportOptions
from brainmigrate.reports import json_chunks, render, report
from brainmigrate.reports import stale as stale_report

GIT = ["git", "-c", "user.email=t@example.org", "-c", "user.name=t"]
GIT += ["-c", "init.defaultBranch=main"]

NOTES = """\
+ importers live in tools/importers/legacy/
+ python -m billing.jobs runs nightly
+ the server writes tmp/pids/server.pid at boot
"""


def git(cwd, *args) -> str:
    done = subprocess.run([*GIT, *args], cwd=cwd, check=True, capture_output=True, text=True)
    return done.stdout.strip()


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    """A git checkout ``repo/`` (one commit) and notes ``notes/tools.md`` citing a folder
    of it, a module and an ignored file; the current folder is ``tmp_path``."""
    repo = tmp_path / "repo"
    for rel, text in {
        "tools/importers/legacy/run.py": "def run():\n    return 1\n",
        "billing/__init__.py": "",
        "billing/jobs.py": "def main():\n    return 0\n",
        ".gitignore": "tmp/\n",
    }.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "one")
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes/tools.md").write_text(NOTES)
    monkeypatch.chdir(tmp_path)
    plant(
        monkeypatch,
        {
            "tools/importers/legacy/": folder("tools/importers/legacy"),
            "billing.jobs": module("billing/jobs.py"),
            "tmp/pids/server.pid": ignored("tmp/pids/server.pid"),
        },
    )
    return tmp_path


def options(tmp_path) -> ImportOptions:
    return ImportOptions(roots=["repo"], cache_dir=str(tmp_path / "cache"))


def dry_run(tmp_path) -> RunResult:
    return importer.import_notes(["notes"], options(tmp_path), "know.db", dry_run=True)


def imported(tmp_path, verify=False) -> Path:
    importer.import_notes(["notes"], options(tmp_path), "know.db", verify=verify)
    return tmp_path / "know.db"


def rows(db: Path, sql: str) -> list:
    con = sqlite3.connect(db)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


# ------------------------------------------------------------------------------ reports


def test_the_json_report_lists_folder_and_module_anchors_and_ignored_paths(project):
    data = report(dry_run(project))
    assert [(f["id"], f["anchors"]) for f in data["facts"]] == [
        (
            "k1",
            [
                {
                    "kind": "folder",
                    "path": "tools/importers/legacy",
                    "root": 0,
                    "lines": None,
                    "symbol": None,
                    "how": "cited",
                }
            ],
        ),
        (
            "k2",
            [
                {
                    "kind": "file",
                    "path": "billing/jobs.py",
                    "root": 0,
                    "lines": None,
                    "symbol": None,
                    "how": "module",
                }
            ],
        ),
        ("k3", []),
    ]
    assert data["ignored"] == [
        {
            "file": "notes/tools.md",
            "line": 3,
            "col": 21,
            "fact": "k3",
            "path": "tmp/pids/server.pid",
        }
    ]
    assert data["unresolved"] == [] and data["gone"] == []
    t = data["totals"]
    assert (t["ignored"], t["unresolved"], t["gone"], t["citing_gone"]) == (1, 0, 0, 0)
    assert list(data)[list(data).index("unresolved") + 1] == "ignored"


def test_the_streamed_json_report_is_the_report(project):
    result = dry_run(project)
    assert json.loads("".join(json_chunks(result))) == report(result)


def test_the_text_report_lists_ignored_paths(project):
    out = render(report(dry_run(project)), "text").splitlines()
    assert (
        "  citing gone files: 0 facts (0 citations); outside every root: 0; unresolved: 0;"
        " git-ignored: 1; ambiguous names: 0"
    ) in out
    at = out.index("Git-ignored paths (runtime or build files: neither anchor nor gone)")
    assert out[at + 1] == "  notes/tools.md:3: tmp/pids/server.pid (k3)"


def test_the_markdown_report_lists_ignored_paths(project):
    out = render(report(dry_run(project)), "markdown").splitlines()
    at = out.index("## Git-ignored paths (runtime or build files: neither anchor nor gone)")
    assert out[at + 2 : at + 5] == [
        "| where | path | fact |",
        "| --- | --- | --- |",
        "| notes/tools.md:3 | tmp/pids/server.pid | k3 |",
    ]
    assert any("unresolved: 0; git-ignored: 1; ambiguous names: 0;" in line for line in out)


def test_the_html_report_lists_ignored_paths(project):
    out = render(report(dry_run(project)), "html")
    heading = "Git-ignored paths (runtime or build files: neither anchor nor gone)"
    assert f'<h2 id="ignored">{heading}</h2>' in out
    # a path is one span per folder, a <wbr> after each "/" (it wraps only there)
    assert (
        '<tr><td><code class="p"><span>notes/</span><wbr><span>tools.md:3:21</span></code></td>'
        '<td><code class="p"><span>tmp/</span><wbr><span>pids/</span><wbr><span>server.pid'
        '</span></code></td><td class="nw">k3</td></tr>'
    ) in out
    assert "0 unresolved, 1 git-ignored, 0 ambiguous names." in out


def test_reports_without_ignored_paths_say_nothing_of_them(project, monkeypatch):
    plant(monkeypatch, {})
    kept = [ln for ln in NOTES.splitlines(keepends=True) if "tmp/pids" not in ln]
    (project / "notes/tools.md").write_text("".join(kept))
    data = report(dry_run(project))
    assert data["ignored"] == [] and data["totals"]["ignored"] == 0
    for fmt in ("text", "markdown", "html"):
        assert "git-ignored" not in render(data, fmt).lower(), fmt


# ------------------------------------------------------------------------------ store


def test_the_store_keeps_folder_and_module_anchors(project):
    db = imported(project)
    assert rows(db, "SELECT fact_id, kind, path, symbol, line_first, how FROM anchors") == [
        (1, "folder", "tools/importers/legacy", "", None, "cited"),
        (2, "file", "billing/jobs.py", "", None, "module"),
    ]
    shown = search.show(db, "k1")
    assert [
        (a["kind"], a["path"], a["symbol"], a["lines"], a["how"]) for a in shown["anchors"]
    ] == [("folder", "tools/importers/legacy", None, None, "cited")]
    assert shown["status"] == "active"
    text = search.render_fact(shown).splitlines()
    root = "repo"
    assert text[text.index("anchors: 1") + 1 :][:2] == [
        f"  folder tools/importers/legacy/ (cited; root {root})",
        "    not fingerprinted (only checked to exist)",
    ]


def test_importing_again_adds_nothing(project):
    db = imported(project)
    before = rows(db, "SELECT * FROM anchors")
    again = importer.import_notes(["notes"], options(project), db)
    assert (len(again.facts), rows(db, "SELECT * FROM anchors")) == (3, before)
    assert [r.action() for r in again.facts] == ["unchanged"] * 3


def test_search_by_anchor_finds_a_folder_as_it_is_cited(project):
    db = imported(project)
    for text in ("tools/importers/legacy/", "tools/importers/legacy", "importers/legacy"):
        assert [h.fact.key for h in search.search(db, "", anchor=text)] == ["k1"], text


# ------------------------------------------------------------------------------ staleness


def test_a_folder_anchor_is_fresh_while_the_folder_is_there(project):
    db = imported(project)
    result = stale.stale(db, dry_run=True)
    assert [(fc.fact.key, fc.state, fc.reason) for fc in result.facts] == [
        ("k1", "fresh", None),
        ("k2", "fresh", None),
    ]
    assert result.exit_code == 0


def test_a_folder_anchor_whose_folder_is_gone_is_stale(project):
    db = imported(project)
    shutil.rmtree(project / "repo/tools/importers/legacy")
    result = stale.stale(db)
    assert [(fc.fact.key, fc.state, fc.reason) for fc in result.facts] == [
        ("k1", "file gone", "folder gone: tools/importers/legacy"),
        ("k2", "fresh", None),
    ]
    assert result.exit_code == 1
    data = stale_report.as_dict(result)
    assert data["facts"][0]["reason"] == "STALE: folder gone: tools/importers/legacy"
    assert data["facts"][0]["anchors"] == [
        {
            "kind": "folder",
            "path": "tools/importers/legacy",
            "symbol": None,
            "root": "repo",
            "fingerprinted": False,
            "verified_at": None,
            "commit": None,
            "state": "file gone",
            "moved_to": None,
            "diff": None,  # a plain import: no fingerprint, no commit to compare with
        }
    ]
    assert rows(db, "SELECT id, status, status_reason FROM facts WHERE id = 1") == [
        (1, "stale", "folder gone: tools/importers/legacy")
    ]
    # a file where the folder was is no folder
    (project / "repo/tools/importers/legacy").write_text("x")
    assert stale.stale(db, dry_run=True).facts[0].state == "file gone"
    (project / "repo/tools/importers/legacy").unlink()
    (project / "repo/tools/importers/legacy").mkdir()
    assert [fc.state for fc in stale.stale(db).facts] == ["fresh", "fresh"]
    assert rows(db, "SELECT status, status_reason FROM facts WHERE id = 1") == [("active", None)]


def test_verify_records_the_commit_and_time_of_a_folder_but_no_digest(project):
    db = imported(project)
    head = git(project / "repo", "rev-parse", "HEAD")
    done = stale.verify(db, [1])
    assert (sorted(done.verified), done.refused) == ([1], {})
    [(sig, body, target, commit, verified, chash)] = rows(
        db,
        "SELECT signature_digest, body_digest, target_kind, verified_commit, verified_at,"
        " content_hash FROM anchors WHERE fact_id = 1",
    )
    assert (sig, body, target, commit, chash) == (None, None, None, head, None)
    assert verified is not None and verified.endswith("Z")
    shown = search.show(db, "k1")
    assert (shown["anchors"][0]["fingerprinted"], shown["anchors"][0]["commit"]) == (True, head)
    text = search.render_fact(shown)
    assert f"    fingerprinted {verified} at {head} (a folder: its existence only)\n" in text
    # a folder has no bytes to compare: it is looked at again on every run
    short = stale.stale(db, dry_run=True, every=False)
    assert [(fc.fact.key, fc.state) for fc in short.facts] == [("k1", "fresh"), ("k2", "fresh")]


def test_verify_refuses_a_fact_whose_folder_is_gone(project):
    db = imported(project)
    before = rows(db, "SELECT * FROM anchors")
    shutil.rmtree(project / "repo/tools/importers/legacy")
    done = stale.verify(db, [1])
    assert (done.verified, done.refused) == ({}, {1: "folder gone: tools/importers/legacy"})
    assert done.exit_code == 1
    assert rows(db, "SELECT * FROM anchors") == before


def test_import_verify_fingerprints_a_folder_anchor(project):
    db = imported(project, verify=True)
    head = git(project / "repo", "rev-parse", "HEAD")
    assert rows(db, "SELECT kind, body_digest, verified_commit FROM anchors ORDER BY fact_id") == [
        ("folder", None, head),
        ("file", rows(db, "SELECT body_digest FROM anchors WHERE fact_id = 2")[0][0], head),
    ]
    assert rows(db, "SELECT count(*) FROM anchors WHERE verified_at IS NULL") == [(0,)]


def test_show_marks_a_fact_whose_folder_is_gone(project):
    db = imported(project)
    shutil.rmtree(project / "repo/tools/importers/legacy")
    shown = search.show(db, "k1")
    assert (shown["status"], shown["status_reason"]) == (
        "stale",
        "folder gone: tools/importers/legacy",
    )
    [hit] = search.search(db, "importers")
    assert search.hit_line(hit.fact).startswith(
        "k1 environment area:tools STALE: folder gone: tools/importers/legacy  importers live in"
    )


# ------------------------------------------------------------------------------ exports


def test_jsonl_writes_folder_anchors_as_show_does(project):
    db = imported(project)
    result = exports.export(db, "jsonl", "-")
    first = json.loads(result.text.splitlines()[0])
    assert first["anchors"] == [
        {
            "kind": "folder",
            "path": "tools/importers/legacy",
            "root": "repo",
            "lines": None,
            "symbol": None,
            "how": "cited",
            "fingerprinted": False,
            "verified_at": None,
            "commit": None,
        }
    ]
    second = json.loads(result.text.splitlines()[1])
    assert second["anchors"][0]["how"] == "module"


def test_knowledge_writes_a_folder_anchor_without_a_hash(project):
    db = imported(project)
    exports.export(db, "knowledge", project / "out")
    [entry] = sorted((project / "out").glob("importers-*-k1.md"))
    front = yaml.safe_load(entry.read_text().split("---\n")[1])
    assert front["anchors"] == [
        {"root": "repo", "path": "tools/importers/legacy", "kind": "folder"}
    ]
    [module_entry] = sorted((project / "out").glob("*-k2.md"))
    front = yaml.safe_load(module_entry.read_text().split("---\n")[1])
    assert [sorted(a) for a in front["anchors"]] == [["path", "root", "sha256"]]


def test_memory_and_brain_keep_the_facts_that_cite_folders(project):
    db = imported(project)
    exports.export(db, "memory", project / "memory")
    assert (project / "memory/tools.md").read_text().splitlines()[2:5] == [
        "- k3 environment: the server writes tmp/pids/server.pid at boot",
        "- k2 environment: python -m billing.jobs runs nightly",
        "- k1 environment: importers live in tools/importers/legacy/",
    ]
    exports.export(db, "brain", project / "brain")
    assert (project / "brain/tools.md").read_text().splitlines()[2:] == [
        "+ importers live in tools/importers/legacy/",
        "+ python -m billing.jobs runs nightly",
        "+ the server writes tmp/pids/server.pid at boot",
    ]


def test_check_dry_run_and_import_agree_on_ignored_paths_and_folders(project):
    from brainmigrate import check

    dry = dry_run(project)
    real = importer.import_notes(["notes"], options(project), "know.db")
    found = check.run_check(["notes"], options(project))
    expected = [(3, 21, "tmp/pids/server.pid")]
    for result in (dry, real):
        assert [(e["line"], e["col"], e["path"]) for e in result.ignored] == expected
        assert [tuple(r.anchors) for r in result.facts][0][0].kind == "folder"
    assert [(f.line, f.col, f.subject) for f in found.findings if f.code == "BM105"] == expected
    assert [f.code for f in found.findings] == ["BM105"]
