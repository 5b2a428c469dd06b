"""One week of a team's notes and code in one git repository (issue 24, "Done when"): each
day an ordinary edit, the CI recipe ``import notes --root . --sync --verify`` and a commit
with the store ``know.db`` in it. After each day every fact is read back as a user reads it
(``show --format json``) and compared with the day's row of expected states: status and its
reason, origin (file, line), anchors (kind, path, symbol, root as recorded), and ``stale``'s
exit code."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from clirun import cli
from trees import git, write

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

INVOICE = "class InvoiceBook:\n    def total(self, lines):\n        return sum(lines)\n"
CODE = {
    "src/pay.py": "def charge(amount):\n    return amount * 2\n",
    "src/billing/invoice.py": INVOICE,
    "src/billing/tax.py": "RATE = 20\n",
    "src/jobs.py": "def nightly():\n    return 2\n",
}
MONDAY = [
    "+ src/pay.py charge doubles the amount\n",
    "+ InvoiceBook in src/billing/invoice.py totals every line\n",
    "+ src/billing/ holds the invoice code\n",
    "+ src/jobs.py runs the nightly invoices\n",
    "+ webhook retries back off exponentially\n",
]
REWORDED = "+ webhook retries stop after five attempts since PAY-7\n"

# anchors as recorded: (kind, path, symbol, root)
PAY = [("file", "src/pay.py", None, ".")]
INVOICE_AT = {
    "src/billing/invoice.py": [
        ("file", "src/billing/invoice.py", None, "."),
        ("symbol", "src/billing/invoice.py", "InvoiceBook", "."),
    ],
    "src/invoice.py": [
        ("file", "src/invoice.py", None, "."),
        ("symbol", "src/invoice.py", "InvoiceBook", "."),
    ],
}
FOLDER = [("folder", "src/billing", None, ".")]
JOBS = [("file", "src/jobs.py", None, ".")]
ACTIVE = ("active", None)
REMOVED = ("superseded", "removed from notes")


def at(file: str, line: int, status=ACTIVE, anchors=(), scope="area:pay") -> tuple:
    """One fact's expected state: (status, reason, scope, (file, line), anchors)."""
    return (*status, scope, (file, line), list(anchors))


# The expected states, day by day: fact id -> state, and the exit code of ``stale``.
MONDAY_FACTS = {
    "k1": at("notes/pay.md", 1, anchors=PAY),
    "k2": at("notes/pay.md", 2, anchors=INVOICE_AT["src/billing/invoice.py"]),
    "k3": at("notes/pay.md", 3, anchors=FOLDER),
    "k4": at("notes/pay.md", 4, anchors=JOBS),
    "k5": at("notes/pay.md", 5),
}
# tuesday: the jobs note is deleted (retired, kept with its history and anchors)
# and the webhook note below it moves up a line
TUESDAY_FACTS = {
    **MONDAY_FACTS,
    "k4": at("notes/pay.md", 4, REMOVED, JOBS),
    "k5": at("notes/pay.md", 4),
}
# wednesday: the webhook note is reworded at its place: k6 supersedes k5
WEDNESDAY_FACTS = {
    **TUESDAY_FACTS,
    "k5": at("notes/pay.md", 4, ("superseded", "reworded in notes as k6")),
    "k6": at("notes/pay.md", 4),
}
# thursday: the folder and webhook notes moved to the top: lines follow, nothing else moves
THURSDAY_FACTS = {
    **WEDNESDAY_FACTS,
    "k1": at("notes/pay.md", 3, anchors=PAY),
    "k2": at("notes/pay.md", 4, anchors=INVOICE_AT["src/billing/invoice.py"]),
    "k3": at("notes/pay.md", 1, anchors=FOLDER),
    "k6": at("notes/pay.md", 2),
}
# friday: notes/pay.md renamed to notes/billing.md: ids stay, the file and scope follow
BILLING = "area:billing"
FRIDAY_FACTS = {
    **THURSDAY_FACTS,
    "k1": at("notes/billing.md", 3, anchors=PAY, scope=BILLING),
    "k2": at("notes/billing.md", 4, anchors=INVOICE_AT["src/billing/invoice.py"], scope=BILLING),
    "k3": at("notes/billing.md", 1, anchors=FOLDER, scope=BILLING),
    "k6": at("notes/billing.md", 2, scope=BILLING),
    # the retired facts' provenance moves too; their scope is the one they had
    "k4": at("notes/billing.md", 4, REMOVED, JOBS),
    "k5": at("notes/billing.md", 4, ("superseded", "reworded in notes as k6")),
}
# saturday: src/billing/invoice.py moved to src/invoice.py, the note fixed and re-imported
SATURDAY_FACTS = {
    **FRIDAY_FACTS,
    "k2": at("notes/billing.md", 4, anchors=INVOICE_AT["src/invoice.py"], scope=BILLING),
}


def facts(folder: Path) -> dict[str, tuple]:
    """Every stored fact as ``show --format json`` prints it, reduced to an expected
    state; the ids come from the store, each fact is read by the command."""
    con = sqlite3.connect(folder / "know.db")
    try:
        ids = [f"k{i}" for (i,) in con.execute("SELECT id FROM facts ORDER BY id")]
    finally:
        con.close()
    states = {}
    for fid in ids:
        r = cli("show", fid, "--format", "json")
        assert r.exit_code == 0, r.output
        f = json.loads(r.stdout)
        anchors = [(a["kind"], a["path"], a["symbol"], a["root"]) for a in f["anchors"]]
        origin = (f["origin"]["file"], f["origin"]["line"])
        states[fid] = (f["status"], f["status_reason"], f["scope"], origin, anchors)
    return states


def stale() -> int:
    return cli("stale").exit_code


def expect(folder: Path, states: dict[str, tuple], stale_code: int = 0) -> None:
    """The one comparison every day makes: each fact's state, then ``stale``'s code."""
    assert facts(folder) == states
    assert stale() == stale_code


def sync(*extra: str) -> dict:
    """The CI recipe on main, as a user types it (JSON for the counts)."""
    r = cli("import", "notes", "--root", ".", "--sync", "--verify", "--format", "json", *extra)
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def commit(repo: Path, day: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", day)


def notes(repo: Path, lines: list[str], name: str = "notes/pay.md") -> None:
    (repo / name).write_text("".join(lines), encoding="utf-8")


def test_a_week_in_one_repository(tmp_path: Path, monkeypatch):
    repo = tmp_path / "repo"
    write(repo, {**CODE, "notes/pay.md": "".join(MONDAY)})
    git(repo, "init", "-q")
    git(repo, "remote", "add", "origin", "git@github.com:acme/pay.git")
    monkeypatch.chdir(repo)

    # monday: the first import runs without --sync (there is no store to sync against)
    r = cli("import", "notes", "--root", ".", "--verify")
    assert r.exit_code == 0, r.output
    commit(repo, "monday")
    expect(repo, MONDAY_FACTS)

    # tuesday: the note on the jobs file is deleted; then that file changes, and no
    # stale fact reports it
    notes(repo, MONDAY[:3] + MONDAY[4:])
    tuesday = sync()
    assert [(x["fact"], x["line"]) for x in tuesday["removed"]] == [("k4", 4)]
    (repo / "src/jobs.py").write_text("def nightly():\n    return 9\n")
    commit(repo, "tuesday")
    expect(repo, TUESDAY_FACTS)
    r = cli("search", "nightly", "--format", "json")
    assert r.exit_code == 0 and json.loads(r.stdout)["hits"] == []

    # wednesday: the webhook note reworded beyond the merge rule
    notes(repo, [*MONDAY[:3], REWORDED])
    wednesday = sync()
    assert wednesday["totals"]["added"] == 1 and wednesday["totals"]["superseded"] == 1
    commit(repo, "wednesday")
    expect(repo, WEDNESDAY_FACTS)
    r = cli("search", "webhook", "retries", "--format", "json")
    assert [h["fact"]["id"] for h in json.loads(r.stdout)["hits"]] == ["k6"]

    # thursday: a block of two facts moved up
    notes(repo, [MONDAY[2], REWORDED, *MONDAY[:2]])
    thursday = sync()
    assert [thursday["totals"][k] for k in ("added", "updated", "removed")] == [0, 0, 0]
    commit(repo, "thursday")
    expect(repo, THURSDAY_FACTS)

    # friday: the notes file renamed in git
    git(repo, "mv", "notes/pay.md", "notes/billing.md")
    friday = sync()
    assert [(x["from"], x["to"]) for x in friday["renamed"]] == [
        ("notes/pay.md", "notes/billing.md")
    ]
    assert [friday["totals"][k] for k in ("added", "removed")] == [0, 0]
    commit(repo, "friday")
    expect(repo, FRIDAY_FACTS)

    # saturday: the invoice module moves; stale says so until check --fix rewrites the
    # citation and the re-import moves the anchors (fingerprints kept: fresh at once)
    git(repo, "mv", "src/billing/invoice.py", "src/invoice.py")
    git(repo, "commit", "-qm", "invoice moves up")
    r = cli("stale", "--format", "json")
    assert r.exit_code == 1
    assert [
        (f["id"], f["state"]) for f in json.loads(r.stdout)["facts"] if f["state"] != "fresh"
    ] == [("k2", "moved")]
    r = cli("check", "notes", "--root", ".", "--fix")
    assert r.exit_code == 0, r.output
    assert "+ InvoiceBook in src/invoice.py totals every line\n" in (
        repo / "notes/billing.md"
    ).read_text(encoding="utf-8")
    saturday = sync()
    assert saturday["totals"]["added"] == 0
    commit(repo, "saturday")
    expect(repo, SATURDAY_FACTS)
    assert "src/billing/invoice.py" not in cli("show", "k2").stdout

    # sunday: a copy of the checkout, with its store, imports and adds nothing
    copy = tmp_path / "elsewhere" / "pay"
    shutil.copytree(repo, copy)
    monkeypatch.chdir(copy)
    there = sync()
    assert [there["totals"][k] for k in ("added", "updated", "removed")] == [0, 0, 0]
    expect(copy, SATURDAY_FACTS)
    # an import --verify that finds every fingerprint as stored writes nothing: the
    # main-branch job of docs/staleness.md has nothing to commit
    stored = (copy / "know.db").read_bytes()
    assert [sync()["totals"][k] for k in ("added", "updated", "removed")] == [0, 0, 0]
    assert (copy / "know.db").read_bytes() == stored
    # ... and a clone in a third folder reads the committed store without --root
    clone = tmp_path / "ci" / "pay"
    clone.parent.mkdir()
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    monkeypatch.chdir(clone)
    expect(clone, SATURDAY_FACTS)
    (clone / "src/invoice.py").write_text(INVOICE.replace("sum(lines)", "sum(lines) + 1"))
    assert stale() == 1
    assert sorted(p for p in clone.iterdir() if p.name != ".git") == [
        clone / "know.db",
        clone / "notes",
        clone / "src",
    ]  # the store was committed with the notes and the code, and nothing else beside it
    assert str(tmp_path).encode() not in (clone / "know.db").read_bytes()  # no local path
