"""An import follows the notes (issue 24, "Sync"): the facts no longer in the notes read are
reported by every import and retired by ``import --sync``; a rewording at a removed fact's
place supersedes it; ``merged`` and ``already_imported`` are two counts."""

from __future__ import annotations

import json
import sqlite3

from clirun import invoker
from trees import git, write

from brainmigrate import fingerprints

cli = invoker(catch_exceptions=False)

PAY = (
    "+ webhook retries back off exponentially\n"
    "+ the ledger is append only\n"
    "+ payments use idempotency keys always\n"
    "+ invoices are rendered nightly by the batch job\n"
)


def _repo(tmp_path, notes=PAY):
    write(tmp_path, {"notes/pay.md": notes, "src/app.py": "def run():\n    return 1\n"})
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "start")
    return tmp_path


def _import(repo, *extra, code=0):
    res = cli("import", "notes", "--root", ".", "--store", "know.db", "--format", "json", *extra)
    assert res.exit_code == code, res.output + res.stderr
    return json.loads(res.stdout) if code == 0 else res


def _facts(repo):
    con = sqlite3.connect(repo / "know.db")
    try:
        return con.execute(
            "SELECT id, status, status_reason, supersedes, text FROM facts ORDER BY id"
        ).fetchall()
    finally:
        con.close()


def _dump(repo):
    con = sqlite3.connect(repo / "know.db")
    try:
        return [
            con.execute(f"SELECT * FROM {t} ORDER BY 1, 2, 3").fetchall()
            for t in ("facts", "anchors", "provenance", "citations")
        ]
    finally:
        con.close()


def test_a_deleted_fact_is_reported_then_retired_by_sync(tmp_path, monkeypatch):
    repo = _repo(tmp_path)
    monkeypatch.chdir(repo)
    first = _import(repo)
    assert first["totals"]["removed"] == 0 and first["removed"] == []
    (repo / "notes/pay.md").write_text(PAY.replace("+ the ledger is append only\n", ""))
    plain = _import(repo)
    assert plain["sync"] is False
    assert plain["totals"]["removed"] == 1
    assert plain["removed"] == [
        {
            "fact": "k2",
            "file": "notes/pay.md",
            "line": 2,
            "scope": "area:pay",
            "text": "the ledger is append only",
            "status": "active",
            "superseded_by": None,
        }
    ]
    assert [f[1] for f in _facts(repo)] == ["active"] * 4  # reported, not retired
    before = _dump(repo)
    dry = _import(repo, "--sync", "--dry-run")
    assert dry["totals"]["removed"] == 1 and dry["removed"][0]["fact"] == "k2"
    assert [(f["id"], f["status"]) for f in dry["facts"] if f["id"] == "k2"] == [
        ("k2", "superseded")
    ]
    assert _dump(repo) == before  # a dry run writes nothing
    text = cli("import", "notes", "--root", ".", "--store", "know.db", "--sync", "--dry-run")
    assert "  no longer in the notes: 1 fact (would be retired)\n" in text.output
    assert "No longer in the notes (would be retired)\n  notes/pay.md:2: k2 the ledger" in (
        text.output
    )
    synced = _import(repo, "--sync")
    assert synced["totals"]["removed"] == 1 and synced["totals"]["updated"] == 1
    assert _facts(repo) == [
        (1, "active", None, "[]", "webhook retries back off exponentially"),
        (2, "superseded", "removed from notes", "[]", "the ledger is append only"),
        (3, "active", None, "[]", "payments use idempotency keys always"),
        (4, "active", None, "[]", "invoices are rendered nightly by the batch job"),
    ]
    con = sqlite3.connect(repo / "know.db")
    assert con.execute("SELECT count(*) FROM provenance WHERE fact_id=2").fetchone() == (1,)
    con.close()
    # retired: no longer counted as removed, out of search and of an active export
    again = _import(repo, "--sync")
    assert again["totals"]["removed"] == 0 and again["totals"]["updated"] == 0
    assert "k2" not in cli("search", "ledger", "--store", "know.db").output
    cli(
        "export",
        "--store",
        "know.db",
        "--to",
        "jsonl",
        "--output",
        "all.jsonl",
        "--status",
        "active",
    )
    exported = [json.loads(x)["id"] for x in (repo / "all.jsonl").read_text().splitlines()]
    assert exported == ["k1", "k3", "k4"]
    shown = cli("show", "k2", "--store", "know.db").output
    assert "superseded" in shown and "removed from notes" in shown


def test_a_reworded_fact_supersedes_the_one_at_its_place(tmp_path, monkeypatch):
    repo = _repo(tmp_path)
    monkeypatch.chdir(repo)
    _import(repo)
    # k2 deleted and k3 reworded beyond the merge rule: one gap (between k1 and k4), and
    # the new fact is most like k3
    (repo / "notes/pay.md").write_text(
        "+ webhook retries back off exponentially\n"
        "+ payments carry idempotency keys on every request since TER-12\n"
        "+ invoices are rendered nightly by the batch job\n"
    )
    dry = _import(repo, "--sync", "--dry-run")
    assert [(r["fact"], r["superseded_by"]) for r in dry["removed"]] == [
        ("k2", None),
        ("k3", "k5"),
    ]
    plain = _import(repo, "--dry-run")  # without --sync: reported, nothing superseded
    assert [(r["fact"], r["superseded_by"]) for r in plain["removed"]] == [
        ("k2", None),
        ("k3", None),
    ]
    synced = _import(repo, "--sync")
    assert synced["totals"]["added"] == 1 and synced["totals"]["removed"] == 2
    new = "payments carry idempotency keys on every request since TER-12"
    assert _facts(repo) == [
        (1, "active", None, "[]", "webhook retries back off exponentially"),
        (2, "superseded", "removed from notes", "[]", "the ledger is append only"),
        (3, "superseded", "reworded in notes as k5", "[]", "payments use idempotency keys always"),
        (4, "active", None, "[]", "invoices are rendered nightly by the batch job"),
        (5, "active", None, "[3]", new),
    ]
    hits = cli("search", "idempotency", "--store", "know.db").output
    assert "k5" in hits and "k3" not in hits
    # a block moved up retires nothing: its lines are read again
    (repo / "notes/pay.md").write_text(
        "+ invoices are rendered nightly by the batch job\n"
        f"+ {new}\n"
        "+ webhook retries back off exponentially\n"
    )
    moved = _import(repo, "--sync")
    assert moved["totals"]["removed"] == 0 and moved["totals"]["updated"] == 0
    assert [f[1] for f in _facts(repo)] == [
        "active", "superseded", "superseded", "active", "active"
    ]  # fmt: skip


def test_a_new_fact_beside_kept_ones_supersedes_nothing(tmp_path, monkeypatch):
    """Only a fact at a removed fact's place supersedes it: one added elsewhere is new."""
    repo = _repo(tmp_path)
    monkeypatch.chdir(repo)
    _import(repo)
    (repo / "notes/pay.md").write_text(
        "+ refunds go through the ledger service only\n"
        + PAY.replace("+ invoices are rendered nightly by the batch job\n", "")
    )
    synced = _import(repo, "--sync")
    assert [(r["fact"], r["superseded_by"]) for r in synced["removed"]] == [("k4", None)]
    assert [(f[0], f[1], f[3]) for f in _facts(repo)] == [
        (1, "active", "[]"),
        (2, "active", "[]"),
        (3, "active", "[]"),
        (4, "superseded", "[]"),
        (5, "active", "[]"),
    ]


def test_only_files_read_lose_facts(tmp_path, monkeypatch):
    """A fact fed from a file this import did not read is not "no longer in the notes"."""
    repo = _repo(tmp_path)
    write(repo, {"notes/ops.md": "+ deploys run from main only\n"})
    monkeypatch.chdir(repo)
    _import(repo)
    (repo / "notes/pay.md").write_text("+ webhook retries back off exponentially\n")
    res = cli(
        "import",
        "notes/pay.md",
        "--root",
        ".",
        "--store",
        "know.db",
        "--format",
        "json",
        "--sync",
    )
    data = json.loads(res.stdout)
    assert [r["fact"] for r in data["removed"]] == ["k3", "k4", "k5"]
    assert [f[1] for f in _facts(repo)] == [
        "active", "active", "superseded", "superseded", "superseded"
    ]  # fmt: skip


def test_sync_without_a_store_or_with_other_files_says_so(tmp_path, monkeypatch):
    repo = _repo(tmp_path)
    monkeypatch.chdir(repo)
    res = _import(repo, "--sync", code=2)
    assert res.stderr == (
        "brainmigrate: error: --sync: know.db holds no fact to sync against; import the"
        " notes once without --sync (or pass --store with the store to sync)\n"
    )
    assert not (repo / "know.db").exists()
    _import(repo)
    before = _dump(repo)
    write(repo, {"other/ops.md": "+ deploys run from main only\n"})
    res = cli("import", "other", "--root", ".", "--store", "know.db", "--sync")
    assert res.exit_code == 2
    assert res.stderr == (
        "brainmigrate: error: --sync: none of the 1 notes files read ever fed know.db (it"
        " was fed from notes/pay.md, …); pass the notes files the store was imported from,"
        " named as they were then\n"
    )
    assert _dump(repo) == before


def test_counts_mean_one_thing(tmp_path, monkeypatch):
    """``merged`` counts repeats merged in this run; lines already imported are their own
    count, in JSON, text, Markdown and HTML alike."""
    repo = _repo(tmp_path)
    monkeypatch.chdir(repo)
    _import(repo)
    with (repo / "notes/pay.md").open("a") as f:
        f.write("+ webhook retries backs off exponentially\n")
    data = _import(repo)
    assert (data["totals"]["merged"], data["totals"]["already_imported"]) == (1, 4)
    assert [(f["merged"], f["already_imported"]) for f in data["files"]] == [(1, 4)]
    again = _import(repo)
    assert (again["totals"]["merged"], again["totals"]["already_imported"]) == (0, 5)
    for t in (data["totals"], again["totals"]):
        assert t["fact_lines"] == t["added"] + t["merged"] + t["already_imported"]
    args = ("import", "notes", "--root", ".", "--store", "know.db", "--format")
    text = cli(*args[:-1]).output
    assert "repeats merged 0, lines already imported 5;" in text
    assert "notes/pay.md (area:pay): lines 5, fact lines 5, continuations 0, blank 0," in text
    assert text.count("already imported 5\n") == 1 and "merged 5" not in text
    md = cli(*args, "markdown").output
    assert "| 1 | 5 | 5 | 0 | 0 | 0 | 4 | 0 | 0 | 4 | 0 | 5 | 0 | 0 |" in md
    assert "| notes/pay.md | area:pay | 5 | 5 | 0 | 0 | 0 | 0 | 5 | 0 |" in md
    html = cli(*args, "html").output
    assert '<div class="card"><b>0</b>merged repeats</div>' in html
    assert '<div class="card"><b>5</b>lines already imported</div>' in html


def test_a_retired_fact_leaves_stale_and_comes_back_with_its_line(tmp_path, monkeypatch):
    repo = _repo(tmp_path, PAY + "+ src/app.py runs the batch\n")
    monkeypatch.chdir(repo)
    _import(repo)
    stale = cli("stale", "--store", "know.db", "--root", ".", "--format", "json")
    assert (stale.exit_code, json.loads(stale.stdout)["checked"]) == (0, 1)
    (repo / "notes/pay.md").write_text(PAY)
    _import(repo, "--sync")
    assert _facts(repo)[4][1:3] == ("superseded", "removed from notes")
    stale = cli("stale", "--store", "know.db", "--root", ".", "--format", "json")
    assert (stale.exit_code, json.loads(stale.stdout)["checked"]) == (0, 0)
    (repo / "notes/pay.md").write_text(PAY + "+ src/app.py runs the batch\n")
    back = _import(repo)
    assert back["totals"]["updated"] == 1 and back["totals"]["removed"] == 0
    assert _facts(repo)[4][1:3] == ("active", None)
    stale = cli("stale", "--store", "know.db", "--root", ".", "--format", "json")
    assert (stale.exit_code, json.loads(stale.stdout)["checked"]) == (0, 1)


def _scopes(repo):
    con = sqlite3.connect(repo / "know.db")
    try:
        facts = con.execute("SELECT id, scope FROM facts ORDER BY id").fetchall()
        files = con.execute("SELECT DISTINCT file FROM provenance ORDER BY file").fetchall()
        return facts, [f for (f,) in files]
    finally:
        con.close()


def test_a_notes_file_renamed_in_git_carries_its_facts(tmp_path, monkeypatch):
    repo = _repo(tmp_path)
    monkeypatch.chdir(repo)
    _import(repo)
    git(repo, "mv", "notes/pay.md", "notes/payments.md")
    git(repo, "commit", "-qm", "rename")
    data = _import(repo, "--sync")
    assert data["renamed"] == [{"from": "notes/pay.md", "to": "notes/payments.md", "facts": 4}]
    assert (data["totals"]["added"], data["totals"]["removed"]) == (0, 0)
    assert _scopes(repo) == (
        [(1, "area:payments"), (2, "area:payments"), (3, "area:payments"), (4, "area:payments")],
        ["notes/payments.md"],
    )
    assert [f[1] for f in _facts(repo)] == ["active"] * 4
    hits = cli("search", "ledger", "--store", "know.db", "--scope", "area:payments").output
    assert "k2" in hits
    again = _import(repo, "--sync")
    assert again["renamed"] == [] and again["totals"]["updated"] == 0
    text = cli("import", "notes", "--root", ".", "--store", "know.db").output
    assert "Renamed notes files" not in text


def test_a_copy_under_a_new_name_keeps_its_scope_with_scope_given(tmp_path, monkeypatch):
    """Found with the same content under a new name (no git): with ``--scope`` the facts
    keep the scope given; a fact edited meanwhile is followed too."""
    repo = _repo(tmp_path)
    monkeypatch.chdir(repo)
    _import(repo, "--scope", "team:pay")
    (repo / "notes/pay.md").unlink()
    write(repo, {"notes/billing.md": PAY.replace("batch job", "batch jobs")})
    data = _import(repo, "--scope", "team:pay", "--sync")
    assert data["renamed"] == [{"from": "notes/pay.md", "to": "notes/billing.md", "facts": 4}]
    assert _scopes(repo) == ([(i, "team:pay") for i in range(1, 5)], ["notes/billing.md"])
    assert data["totals"]["removed"] == 0 and data["totals"]["added"] == 0
    assert _facts(repo)[3][4] == "invoices are rendered nightly by the batch jobs"


def test_a_file_not_like_the_gone_one_is_no_rename(tmp_path, monkeypatch):
    repo = _repo(tmp_path)
    monkeypatch.chdir(repo)
    _import(repo)
    (repo / "notes/pay.md").unlink()
    write(repo, {"notes/ops.md": "+ webhook retries back off exponentially\n+ deploys from main\n"})
    data = _import(repo)
    assert data["renamed"] == [] and data["totals"]["added"] == 2
    assert _scopes(repo)[1] == ["notes/ops.md", "notes/pay.md"]


def _anchors(repo):
    con = sqlite3.connect(repo / "know.db")
    try:
        return con.execute("SELECT fact_id, path, symbol FROM anchors ORDER BY 1, 2").fetchall()
    finally:
        con.close()


def _stale(repo):
    return cli("stale", "--store", "know.db", "--root", ".", "--dry-run").exit_code


def test_a_week_of_edits_with_import_sync_verify(tmp_path, monkeypatch):
    """The CI recipe, ``import --sync --verify`` after each change on main, through a week
    of edits in a git repository: after each, every fact's status, the anchors and the exit
    code of ``stale``."""
    repo = tmp_path
    write(
        repo,
        {
            "src/app.py": "def run():\n    return 1\n\n\ndef stop():\n    return 0\n",
            "src/jobs.py": "def nightly():\n    return 2\n",
            "notes/pay.md": (
                "+ src/app.py:1 run returns one\n"
                "+ src/app.py:5 stop returns zero\n"
                "+ src/jobs.py runs the nightly invoices\n"
            ),
        },
    )
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "monday")
    monkeypatch.chdir(repo)

    def step(message):
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", message)
        return _import(repo, "--sync", "--verify")

    _import(repo, "--verify")  # the first import: there is no store to sync against yet
    anchors = [(1, "src/app.py", ""), (2, "src/app.py", ""), (3, "src/jobs.py", "")]
    assert [f[1] for f in _facts(repo)] == ["active"] * 3
    assert _anchors(repo) == anchors and _stale(repo) == 0
    # tuesday: the note on stop() is deleted, then stop() changes: no stale fact for it
    (repo / "notes/pay.md").write_text(
        "+ src/app.py:1 run returns one\n+ src/jobs.py runs the nightly invoices\n"
    )
    tuesday = step("tuesday")
    assert [r["fact"] for r in tuesday["removed"]] == ["k2"]
    (repo / "src/app.py").write_text("def run():\n    return 1\n\n\ndef stop():\n    return 9\n")
    git(repo, "commit", "-qam", "stop changes")
    assert [f[1] for f in _facts(repo)] == ["active", "superseded", "active"]
    assert _anchors(repo) == anchors and _stale(repo) == 0  # history keeps its anchors
    # wednesday: the jobs note is reworded beyond the merge rule
    (repo / "notes/pay.md").write_text(
        "+ src/app.py:1 run returns one\n+ src/jobs.py renders invoices each night since TER-4\n"
    )
    step("wednesday")
    assert [(f[0], f[1], f[3]) for f in _facts(repo)] == [
        (1, "active", "[]"),
        (2, "superseded", "[]"),
        (3, "superseded", "[]"),
        (4, "active", "[3]"),
    ]
    assert _anchors(repo) == [*anchors, (4, "src/jobs.py", "")] and _stale(repo) == 0
    # thursday: a block moved up; friday: the notes file renamed
    (repo / "notes/pay.md").write_text(
        "+ src/jobs.py renders invoices each night since TER-4\n+ src/app.py:1 run returns one\n"
    )
    thursday = step("thursday")
    assert (thursday["totals"]["removed"], thursday["totals"]["added"]) == (0, 0)
    git(repo, "mv", "notes/pay.md", "notes/billing.md")
    friday = step("friday")
    assert [(r["from"], r["to"]) for r in friday["renamed"]] == [
        ("notes/pay.md", "notes/billing.md")
    ]
    assert (friday["totals"]["removed"], friday["totals"]["added"]) == (0, 0)
    assert [(f[0], f[1]) for f in _facts(repo)] == [
        (1, "active"), (2, "superseded"), (3, "superseded"), (4, "active")
    ]  # fmt: skip
    assert _scopes(repo)[0] == [
        (1, "area:billing"), (2, "area:pay"), (3, "area:pay"), (4, "area:billing")
    ]  # fmt: skip
    assert _anchors(repo) == [*anchors, (4, "src/jobs.py", "")] and _stale(repo) == 0
    (repo / "src/app.py").write_text("def run():\n    return 7\n")
    assert _stale(repo) == 1  # the active fact on run() still fails CI


def test_an_unchanged_verify_leaves_the_store_file_as_it_was(tmp_path, monkeypatch):
    """The CI recipe's ``git diff --quiet know.db`` holds on a push that changed nothing: an
    equal fingerprint keeps its commit and time; a changed target is fingerprinted anew."""
    repo = _repo(tmp_path, "+ run() lives in src/app.py\n+ the app is in src/ alone\n")
    monkeypatch.chdir(repo)
    _import(repo, "--verify")
    before = (repo / "know.db").read_bytes()
    (repo / "notes" / "pay.md").touch()
    # a later run: a folder anchor (no digests, only a time) keeps its time too
    monkeypatch.setattr(fingerprints, "now_utc", lambda: "2099-01-01T00:00:00Z")
    again = _import(repo, "--sync", "--verify")
    assert (again["totals"]["added"], again["totals"]["updated"]) == (0, 0)
    assert (repo / "know.db").read_bytes() == before
    con = sqlite3.connect(repo / "know.db")
    held = con.execute("SELECT body_digest, verified_at FROM anchors").fetchall()
    con.close()
    write(repo, {"src/app.py": "def run():\n    return 2\n"})
    _import(repo, "--sync", "--verify")
    assert (repo / "know.db").read_bytes() != before
    con = sqlite3.connect(repo / "know.db")
    now = con.execute("SELECT body_digest, verified_at FROM anchors").fetchall()
    con.close()
    assert now[0][0] != held[0][0]


def test_a_deleted_notes_file_loses_its_facts_to_sync(tmp_path, monkeypatch):
    """A notes file removed from a folder the import reads is read as empty: its facts are
    reported (every import) and retired (``--sync``); a file of another folder is not."""
    repo = _repo(tmp_path)
    write(repo, {"notes/old.md": "+ the old cron runs hourly\n", "other/x.md": "+ kept apart\n"})
    monkeypatch.chdir(repo)
    _import(repo)
    assert cli("import", "other", "--store", "know.db").exit_code == 0
    (repo / "notes" / "old.md").unlink()
    (repo / "other" / "x.md").unlink()
    plain = _import(repo, "--dry-run")
    assert [(e["fact"], e["file"], e["line"]) for e in plain["removed"]] == [
        ("k1", "notes/old.md", 1)
    ]
    synced = _import(repo, "--sync")
    assert synced["totals"]["removed"] == 1
    assert [row[:3] for row in _facts(repo)] == [
        (1, "superseded", "removed from notes"),
        *((n, "active", None) for n in range(2, 7)),
    ]


def test_the_same_notes_file_read_from_another_folder_is_no_rename(tmp_path, monkeypatch):
    repo = _repo(tmp_path)
    monkeypatch.chdir(repo)
    _import(repo)
    before = (repo / "know.db").read_bytes()
    monkeypatch.chdir(repo / "notes")
    res = cli("import", "pay.md", "--root", "..", "--store", "../know.db", "--sync")
    assert res.exit_code == 2
    assert "none of the 1 notes files read ever fed ../know.db" in res.stderr
    assert (repo / "know.db").read_bytes() == before
    dry = cli(
        "import", "pay.md", "--root", "..", "--store", "../know.db", "--dry-run", "--format", "json"
    )
    report = json.loads(dry.stdout)
    assert (report["renamed"], report["totals"]["removed"]) == ([], 0)


def test_a_deleted_file_beside_a_namesake_below_is_still_deleted(tmp_path, monkeypatch):
    """``a.md`` imported from ``notes/`` and then deleted is gone, although ``x/a.md`` ends
    with the same name: only a folder above the current one names the same file."""
    repo = _repo(tmp_path)
    write(repo, {"notes/a.md": "+ the a fact stands\n", "notes/x/a.md": "+ the x fact stands\n"})
    monkeypatch.chdir(repo / "notes")
    assert cli("import", ".", "--store", "../know.db").exit_code == 0
    (repo / "notes" / "a.md").unlink()
    res = cli("import", ".", "--store", "../know.db", "--sync", "--format", "json")
    assert res.exit_code == 0, res.output
    assert [e["file"] for e in json.loads(res.stdout)["removed"]] == ["a.md"]
