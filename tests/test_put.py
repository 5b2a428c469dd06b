"""``brainmigrate put``: one fact written by the merge rule, its anchors found in the roots
and never outside them, every refusal writing nothing (the seed's "Writing: one fact
once"; SPEC.md §Merge, §Staleness)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading

import pytest
from click.testing import CliRunner
from clirun import invoker
from stored import rows, stale_states
from trees import committed, write

from brainmigrate import put as putting
from brainmigrate.cli import main
from brainmigrate.serving.service import Service, ServiceError

put = invoker("put")

KOTLIN = """package com.x

class Foo {
    fun parse(s: String): Int {
        return s.length
    }
}

class PaymentGateway {
    fun charge() {}
}
"""


@pytest.fixture
def repo(tmp_path):
    """A committed checkout with one Kotlin file, a doc and a folder; the store beside it."""
    return committed(
        tmp_path / "app",
        {"src/Foo.kt": KOTLIN, "docs/retries.md": "# Retries\n", "src/Other.kt": "class Bar\n"},
    )


def _put(store, *args, root=None):
    r = put(*args, "--store", store, "--root", root, "--format", "json")
    assert r.exit_code == 0, r.stderr
    return json.loads(r.stdout)


def _facts(store):
    return rows(store, "SELECT id, scope, kind, text, task, run, created, status FROM facts")


def test_a_near_identical_fact_of_the_same_scope_updates_the_older_one(tmp_path, repo):
    store = tmp_path / "know.db"
    first = _put(
        store, "retries back off exponentially, capped at a minute", "--scope", "area:webhooks",
        "--kind", "decision", "--task", "CL-86", "--run", "night-1", root=repo,
    )  # fmt: skip
    assert first["action"] == "added" and first["replaced"] == 0
    assert first["fact"]["id"] == "k1" and first["fact"]["marker"] == "~"
    again = _put(
        store, "retries back off exponentially, capped at a minute!", "--scope", "area:webhooks",
        "--kind", "pattern", "--task", "CL-86", "--run", "night-2", root=repo,
    )  # fmt: skip
    assert again["action"] == "updated"
    third = _put(store, "Retries back off exponentially; capped at a minute", "--scope",
                 "area:webhooks", "--kind", "pattern", "--task", "CL-86", root=repo)  # fmt: skip
    fact = third["fact"]
    # text, kind and source replaced (the run only when given), id and creation time kept
    assert (fact["id"], fact["text"], fact["kind"], fact["task"], fact["run"]) == (
        "k1",
        "Retries back off exponentially; capped at a minute",
        "pattern",
        "CL-86",
        "night-2",
    )
    assert fact["created"] == first["fact"]["created"]
    assert len(_facts(store)) == 1
    # a put that gives no kind keeps the stored one
    kept = _put(store, "Retries back off exponentially; capped at a minute.", "--scope",
                "area:webhooks", "--task", "CL-86", root=repo)  # fmt: skip
    assert (kept["action"], kept["fact"]["kind"], kept["fact"]["marker"]) == (
        "updated",
        "pattern",
        "+",
    )
    # another task id is another fact, however alike the rest is (SPEC.md §Merge)
    other = _put(store, "retries back off exponentially, capped at a minute", "--scope",
                 "area:webhooks", "--task", "CL-87", root=repo)  # fmt: skip
    assert other["action"] == "added"


@pytest.mark.parametrize(
    "other",
    [
        ("retries back off exponentially, capped at 2 minutes", "area:webhooks"),  # numbers
        ("retries back off exponentially, capped at a minute TER-168", "area:webhooks"),  # tasks
        ("retries back off exponentially, capped at a minute", "area:billing"),  # scope
        ("retries are linear and never capped", "area:webhooks"),  # words
    ],
)
def test_what_the_merge_rule_tells_apart_is_a_new_fact(tmp_path, repo, other):
    store = tmp_path / "know.db"
    _put(store, "retries back off exponentially, capped at a minute", "--scope", "area:webhooks",
         root=repo)  # fmt: skip
    text, scope = other
    if "TER-168" in text:  # a task id of the first too: TER-167 and TER-168 are two facts
        store.unlink()
        _put(store, text.replace("168", "167"), "--scope", scope, root=repo)
    assert _put(store, text, "--scope", scope, root=repo)["action"] == "added"
    assert len(_facts(store)) == 2


def test_a_put_merges_into_an_imported_fact(tmp_path, repo):
    notes = tmp_path / "notes"
    write(notes, {"webhooks.md": "~ retries back off exponentially, capped at a minute CL-86\n"})
    store = tmp_path / "know.db"
    r = invoker("import")(notes, "--store", store, "--root", repo)
    assert r.exit_code == 0, r.stderr
    answer = _put(store, "Retries back off exponentially; capped at a minute (CL-86)",
                  "--scope", "area:webhooks", "--kind", "decision", root=repo)  # fmt: skip
    assert answer["action"] == "updated" and answer["fact"]["id"] == "k1"
    # the provenance of the imported line stays; a put adds none
    assert [p["file"] for p in answer["fact"]["provenance"]] == [str(notes / "webhooks.md")]


def test_supersedes_takes_the_fact_out_of_search(tmp_path, repo):
    store = tmp_path / "know.db"
    _put(store, "webhooks retry three times", "--scope", "area:webhooks", root=repo)
    answer = _put(store, "webhooks retry with exponential backoff", "--scope", "area:webhooks",
                  "--supersedes", "k1", "--related", "1", root=repo)  # fmt: skip
    assert answer["replaced"] == 1
    assert answer["fact"]["supersedes"] == ["k1"] and answer["fact"]["related"] == ["k1"]
    assert rows(store, "SELECT status, status_reason FROM facts WHERE id=1") == [
        ("superseded", "superseded by k2")
    ]
    search = invoker("search")
    assert search("webhooks", "--store", store).stdout.splitlines() == [
        "k2 other area:webhooks  webhooks retry with exponential backoff"
    ]
    assert "k1" in search("webhooks", "--store", store, "--all").stdout
    # superseding it again replaces nothing more
    again = _put(store, "webhooks retry with backoff, jittered", "--scope", "area:webhooks",
                 "--supersedes", "k1", root=repo)  # fmt: skip
    assert again["replaced"] == 0


WORDS = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike"
WORDS += " november oscar papa quebec romeo sierra tango"


def test_a_fact_is_no_repeat_of_the_fact_it_supersedes(tmp_path, repo):
    store = tmp_path / "know.db"
    # k1 and k2 are two facts (Jaccard 20/24); the third is as close to each (21/23)
    _put(store, f"{WORDS} uniform victor", "--scope", "area:w", root=repo)
    assert _put(store, f"{WORDS} whiskey xray", "--scope", "area:w", root=repo)["action"] == "added"
    third = f"{WORDS} uniform whiskey"
    answer = _put(store, third, "--scope", "area:w", "--supersedes", "k1", root=repo)
    # k1 would win the tie, but this put supersedes it: k2 is updated
    assert (answer["action"], answer["fact"]["id"], answer["replaced"]) == ("updated", "k2", 1)
    alone = _put(store, "the queue is FIFO", "--scope", "area:q", root=repo)
    answer = _put(store, "the queue is FIFO!", "--scope", "area:q", "--supersedes",
                  alone["fact"]["id"], root=repo)  # fmt: skip
    assert (answer["action"], answer["fact"]["id"], answer["replaced"]) == ("added", "k4", 1)


def test_anchors_of_every_form_are_found_in_the_roots(tmp_path, repo):
    store = tmp_path / "know.db"
    answer = _put(
        store, "PaymentGateway charges once; see docs/retries.md", "--scope", "area:pay",
        "--anchor", "src/Foo.kt#Foo.parse", "--anchor", "Foo.parse", "--anchor", "docs/",
        "--anchor", "src/Other.kt", root=repo,
    )  # fmt: skip
    got = [
        (a["kind"], a["path"], a["symbol"], a["lines"], a["how"]) for a in answer["fact"]["anchors"]
    ]
    assert got == [
        ("symbol", "src/Foo.kt", "Foo.parse", [4, 6], "cited"),
        ("folder", "docs", None, None, "cited"),
        ("file", "src/Other.kt", None, None, "cited"),
        ("file", "docs/retries.md", None, None, "cited"),
        ("symbol", "src/Foo.kt", "PaymentGateway", [9, 11], "camelcase"),
    ]
    scoped = _put(store, "Foo.parse accepts only UTC", "--scope", "symbol:src/Foo.kt#Foo.parse",
                  "--kind", "pattern", root=repo)  # fmt: skip
    assert [(a["path"], a["symbol"]) for a in scoped["fact"]["anchors"]] == [
        ("src/Foo.kt", "Foo.parse")
    ]
    filed = _put(store, "the doc is short", "--scope", "file:docs/retries.md", root=repo)
    assert [(a["kind"], a["path"]) for a in filed["fact"]["anchors"]] == [
        ("file", "docs/retries.md")
    ]


def test_a_text_citing_a_gone_file_keeps_it_as_gone(tmp_path, repo):
    store = tmp_path / "know.db"
    answer = _put(store, "the limits live in src/Limits.kt", "--scope", "area:x", root=repo)
    assert answer["fact"]["gone"] == ["src/Limits.kt"]


def test_verify_fingerprints_and_stale_then_sees_the_change(tmp_path, repo):
    store = tmp_path / "know.db"
    fp = _put(store, "parse counts characters", "--scope", "area:x", "--anchor", "Foo.parse",
              "--verify", root=repo)  # fmt: skip
    (anchor,) = fp["fact"]["anchors"]
    assert anchor["fingerprinted"] and anchor["commit"] is not None
    _put(store, "charge is a no-op", "--scope", "area:y", "--anchor", "PaymentGateway.charge",
         root=repo)  # fmt: skip
    # a Container.name anchor not fingerprinted is found by container and name
    assert stale_states(store) == {"k1": ("fresh", None), "k2": ("fresh", None)}
    (repo / "src/Foo.kt").write_text(
        KOTLIN.replace("s.length", "s.length + 1").replace("fun charge()", "fun charge2()")
    )
    assert stale_states(store) == {
        "k1": ("body changed", "STALE: body changed: src/Foo.kt#Foo.parse"),
        "k2": ("declaration gone", "STALE: declaration gone: src/Foo.kt#PaymentGateway.charge"),
    }


A = ["x", "--scope", "area:a", "--anchor"]
BAD = [
    ([*A, "../../etc/passwd"], "--anchor: ../../etc/passwd is outside every root"),
    ([*A, "/etc/passwd"], "--anchor: /etc/passwd is outside every root"),
    ([*A, "link/passwd"], "--anchor: link/passwd leads out of the root"),
    ([*A, "src/Nope.kt"], "--anchor: src/Nope.kt: no root holds it"),
    ([*A, "Nope.parse"], "--anchor: Nope.parse is declared in no root"),
    ([*A, "src/Foo.kt#Foo.nope"], "--anchor: src/Foo.kt declares no Foo.nope"),
    ([*A, "docs/retries.md#Foo"], "--anchor: docs/retries.md is no source file"),
    ([*A, ".git/config"], "is inside git's own folder"),
    (["x", "--scope", "file:src/Gone.kt"], "--scope: src/Gone.kt: no root holds it"),
    (["x", "--scope", "nothing"], "--scope: 'nothing' is no scope"),
    (["x", "--scope", "area:"], "--scope: 'area:' is no scope"),
    (["  ", "--scope", "area:a"], "TEXT: empty"),
    (["a" * 2001, "--scope", "area:a"], "TEXT: 2001 characters, more than 2000"),
    (["x", "--scope", "area:a", "--supersedes", "k99"], "--supersedes: no fact k99 in the store"),
    (["x", "--scope", "area:a", "--related", "kx"], "--related: 'kx' is not a fact id"),
    (["x", "--scope", "area:a", "--task", "A\nB"], "--task: holds the control character U+000A"),
    ([*A, "src/.."], "--anchor: src/.. is the root"),
    (["x", "--scope", "file:."], "--scope: . is the root"),
    (["x", "--scope", "area:a,area:b"], "--scope: 'area:a,area:b' holds a comma"),
    (["x", "--scope", "area:a", "--related", "k9223372036854775808"], "--related: no fact k92233"),
    ([*A, "docs/\udcff.md"], "--anchor: holds bytes that are not UTF-8 text"),
    (["bad \udcff byte", "--scope", "area:a"], "TEXT: holds bytes that are not UTF-8 text"),
    (["x", "--scope", "area:a", "--related", "k1"], "--related: k1 is the fact this put writes"),
    (["x", "--scope", "area:a", "--json", "-"], "--json FILE holds the facts whole"),
    (["--json", "-", "--verify", "--anchor", "x"], "not --verify, --anchor"),
]  # fmt: skip


@pytest.mark.parametrize(("args", "message"), BAD)
def test_a_refused_put_is_one_line_and_writes_nothing(tmp_path, repo, args, message):
    store = tmp_path / "know.db"
    (repo / "link").symlink_to("/etc")
    (repo / os.fsdecode(b"docs/\xff.md")).write_text("x\n")
    _put(store, "x!", "--scope", "area:a", root=repo)
    before = store.read_bytes()
    r = put(*args, "--store", store, "--root", repo)
    assert r.exit_code == 2, r.output
    (line,) = r.stderr.splitlines()
    assert line.startswith("brainmigrate: error: ") and message in line, line
    assert store.read_bytes() == before


def test_a_refused_put_into_no_store_makes_none(tmp_path, repo):
    store = tmp_path / "know.db"
    r = put("x", "--scope", "area:a", "--anchor", "../x", "--store", store, "--root", repo)
    assert r.exit_code == 2 and not store.exists()


def test_an_ambiguous_symbol_names_its_files(tmp_path):
    repo = committed(tmp_path / "app", {"a/Foo.kt": "class Foo\n", "b/Foo.kt": "class Foo\n"})
    r = put("x", "--scope", "area:a", "--anchor", "Foo", "--store", tmp_path / "k.db",
            "--root", repo)  # fmt: skip
    assert r.exit_code == 2
    assert "Foo is declared in 2 files of" in r.stderr and "(a/Foo.kt, b/Foo.kt)" in r.stderr


def test_put_json_writes_a_batch_in_order_or_nothing(tmp_path, repo):
    store = tmp_path / "know.db"
    batch = {"facts": [
        {"scope": "area:w", "text": "retries back off exponentially", "kind": "decision",
         "anchors": [{"path": "src/Foo.kt", "symbol": "Foo.parse"}, "docs/retries.md"]},
        {"scope": "area:w", "text": "retries back off exponentially!", "run": "r2"},
        {"scope": "area:w", "text": "the gateway is idempotent", "supersedes": ["k1"]},
    ]}  # fmt: skip
    (tmp_path / "b.json").write_text(json.dumps(batch))
    r = put("--json", tmp_path / "b.json", "--store", store, "--root", repo, "--format", "json")
    assert r.exit_code == 0, r.stderr
    answers = json.loads(r.stdout)["answers"]
    assert [(a["action"], a["fact"]["id"], a["replaced"]) for a in answers] == [
        ("added", "k1", 0),
        ("updated", "k1", 0),
        ("added", "k2", 1),
    ]
    assert [(a["path"], a["symbol"]) for a in answers[1]["fact"]["anchors"]] == [
        ("src/Foo.kt", "Foo.parse"),
        ("docs/retries.md", None),
    ]
    before = store.read_bytes()
    bad = {
        "facts": [
            {"scope": "area:w", "text": "fine"},
            {"scope": "area:w", "text": "x", "kind": "nope"},
        ]
    }
    args = ["put", "--json", "-", "--store", str(store), "--root", str(repo)]
    r = CliRunner().invoke(main, args, input=json.dumps(bad))
    assert r.exit_code == 2
    assert r.stderr == (
        "brainmigrate: error: standard input: facts[1].kind: 'nope' is not a kind; give one of"
        " decision, pattern, blocker, environment, other\n"
    )
    assert store.read_bytes() == before


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"text": "x"}, "scope: missing; a fact needs scope and text"),
        ({"text": 3, "scope": "area:a"}, "text: must be text"),
        ({"text": "x", "scope": "area:a", "color": 1}, "color: no such field"),
        ({"text": "x", "scope": "area:a", "anchors": "src/Foo.kt"}, "anchors: must be a list"),
        ({"text": "x", "scope": "area:a", "anchors": [{}]}, "anchors[0]: give a path, a symbol"),
        ({"text": "x", "scope": "area:a", "anchors": [{"path": 1}]}, "anchors[0].path: must be"),
        ({"text": "x", "scope": "area:a", "verify": "yes"}, "verify: must be true or false"),
        ({"text": "x", "scope": "area:a", "supersedes": [True]}, "supersedes: must be a list"),
        ({"facts": {}}, "facts: must be a list of fact objects"),
        ({"facts": []}, "facts: give 1 to 1000 facts, not 0"),
        ({"facts": [1]}, "facts[0]: must be a fact object"),
        ({"facts": [], "text": "x"}, 'give {"facts": [...]} alone'),
        ([], "the JSON: must be a fact object"),
    ],
)  # fmt: skip
def test_json_of_the_wrong_shape_names_the_field(body, message):
    with pytest.raises(putting.PutError) as caught:
        putting.from_json(body)
    assert message in str(caught.value)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"[" * 100_000, "the body:1:257: too deeply nested"),
        (b'{"text": 1' + b"1" * 5000 + b"}", "a number of 5001 digits"),
        (b"\xff{}", "the body: not UTF-8 (byte 1)"),
        (b'{"text": }', "the body:1:10: not JSON (Expecting value)"),
    ],
)
def test_bytes_that_are_no_json_are_refused_where_they_fail(data, message):
    with pytest.raises(putting.PutError) as caught:
        putting.from_json(putting.decode_json(data))
    assert message in str(caught.value)


def test_a_root_in_the_json_must_be_one_of_the_roots(tmp_path, repo):
    body = {"scope": "area:a", "text": "x", "anchors": [{"path": "passwd", "root": "/etc"}]}
    with pytest.raises(putting.PutError) as caught:
        putting.put(tmp_path / "k.db", putting.from_json(body), roots=[repo])
    assert str(caught.value).startswith("anchors[0].root: /etc is not one of the roots")


def test_a_busy_store_answers_503_with_retry_after(tmp_path, repo, monkeypatch):
    store = tmp_path / "know.db"
    _put(store, "a fact", "--scope", "area:a", root=repo)
    monkeypatch.setenv("BRAINMIGRATE_BUSY_TIMEOUT", "0.05")
    holder = sqlite3.connect(store, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(ServiceError) as caught:
            Service(store, [repo]).put({"scope": "area:a", "text": "another fact"})
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert caught.value.status == 503 and caught.value.retry_after == 1
    assert "store is busy" in str(caught.value)


def test_the_service_answers_the_seed_shapes(tmp_path, repo):
    store = tmp_path / "know.db"
    service = Service(store, [repo])
    one = service.put({"scope": "area:w", "text": "retries back off", "task": "CL-86"})
    assert set(one) == {"action", "fact", "replaced"} and one["action"] == "added"
    many = service.put({"facts": [{"scope": "area:w", "text": "the queue is FIFO"}]})
    assert [a["fact"]["id"] for a in many["answers"]] == ["k2"]
    hits = service.search({"q": "retries"})["hits"]
    assert [h["line"] for h in hits] == ["k1 other area:w  retries back off (CL-86)"]
    assert invoker("search")("retries", "--store", store).stdout == hits[0]["line"] + "\n"
    for params, status in [
        ({}, 400),
        ({"q": "x", "limit": "31"}, 400),
        ({"q": "x", "kind": "k"}, 400),
        ({"q": "x", "limit": "²"}, 400),  # a digit, but no ASCII one
        ({"q": "x", "limit": "٣"}, 400),
    ]:
        with pytest.raises(ServiceError) as caught:
            service.search(params)
        assert caught.value.status == status
    with pytest.raises(ServiceError) as caught:
        service.show("k9")
    assert caught.value.status == 404


def test_a_batch_over_several_blocks_of_a_scope_merges_each_into_its_own(tmp_path, repo):
    store = tmp_path / "know.db"
    service = Service(store, [repo])
    service.put({"facts": [
        {"scope": "area:w", "text": "webhooks retry 3 times"},
        {"scope": "area:w", "text": "webhooks retry 5 times"},
        {"scope": "area:w", "text": "webhooks retry often CL-1"},
        {"scope": "area:w", "text": "webhooks retry often"},
    ]})  # fmt: skip
    again = service.put({"facts": [
        {"scope": "area:w", "text": "webhooks retry 5 times!"},
        {"scope": "area:w", "text": "webhooks retry often!"},
        {"scope": "area:w", "text": "webhooks retry 3 times!"},
        {"scope": "area:w", "text": "webhooks retry often (CL-1)"},
        {"scope": "area:w", "text": "webhooks retry 4 times"},
    ]})  # fmt: skip
    assert [(a["action"], a["fact"]["id"]) for a in again["answers"]] == [
        ("updated", "k2"),
        ("updated", "k4"),
        ("updated", "k1"),
        ("updated", "k3"),
        ("added", "k5"),
    ]


def test_a_repeat_adds_its_links_up(tmp_path, repo):
    store = tmp_path / "know.db"
    for text in ("alpha fact here", "beta fact here", "gamma fact here"):
        _put(store, text, "--scope", "repo", root=repo)
    _put(store, "alpha fact here", "--scope", "repo", "--related", "k2", root=repo)
    answer = _put(store, "alpha fact here", "--scope", "repo", "--supersedes", "k3", root=repo)
    assert (answer["fact"]["related"], answer["fact"]["supersedes"]) == (["k2"], ["k3"])
    assert rows(store, "SELECT id, status, supersedes, related FROM facts") == [
        (1, "active", "[3]", "[2]"),
        (2, "active", "[]", "[]"),
        (3, "superseded", "[]", "[]"),
    ]


def test_a_file_scope_is_stored_as_the_path_it_found(tmp_path, repo):
    store = tmp_path / "know.db"
    for scope in (
        "file:docs/retries.md",
        "file:./docs//retries.md",
        f"file:{repo}/docs/retries.md",
    ):
        answer = _put(store, "the doc is short", "--scope", scope, root=repo)
        assert answer["fact"]["id"] == "k1" and answer["fact"]["scope"] == "file:docs/retries.md"
    answer = _put(store, "parse is pure", "--scope", "symbol:./src/Foo.kt#Foo.parse", root=repo)
    assert answer["fact"]["scope"] == "symbol:src/Foo.kt#Foo.parse"


def test_a_symlink_to_a_file_is_that_file_for_a_symbol(tmp_path, repo):
    (repo / "src/FooLink.kt").symlink_to("Foo.kt")
    answer = _put(tmp_path / "k.db", "charges", "--scope", "area:a", "--anchor",
                  "PaymentGateway", root=repo)  # fmt: skip
    assert [(a["path"], a["symbol"]) for a in answer["fact"]["anchors"]] == [
        ("src/Foo.kt", "PaymentGateway")
    ]


def test_a_tilde_path_is_the_home_folder_s(tmp_path, repo, monkeypatch):
    monkeypatch.setenv("HOME", str(repo))
    answer = _put(tmp_path / "k.db", "x", "--scope", "area:a", "--anchor", "~/src/Other.kt",
                  root=repo)  # fmt: skip
    assert [a["path"] for a in answer["fact"]["anchors"]] == ["src/Other.kt"]


def test_json_with_a_bom_is_read(tmp_path, repo):
    (tmp_path / "b.json").write_bytes(
        b"\xef\xbb\xbf" + json.dumps({"scope": "repo", "text": "x"}).encode()
    )
    r = put("--json", tmp_path / "b.json", "--store", tmp_path / "k.db", "--root", repo)
    assert r.exit_code == 0 and r.stdout.startswith("added k1 "), r.output


def test_a_first_run_waits_for_another_first_run_of_the_same_store(tmp_path, repo):
    from brainmigrate.stores.connection import folder_lock

    store = tmp_path / "know.db"
    holding, done = threading.Event(), []

    def first():
        with folder_lock(store):
            holding.set()
            store.write_bytes(b"")  # what a first run's connection makes, empty
            threading.Event().wait(0.5)
            done.append("first")

    t = threading.Thread(target=first)
    t.start()
    holding.wait(5)
    r = put("x", "--scope", "area:a", "--related", "k1", "--store", store, "--root", repo)
    done.append("second")
    t.join()
    assert done == ["first", "second"] and r.exit_code == 2


def test_first_puts_at_once_all_land_or_fail_for_their_own_reason(tmp_path, repo):
    store = tmp_path / "know.db"
    batch = tmp_path / "batch.json"
    batch.write_text(
        json.dumps({"facts": [{"scope": "repo", "text": f"fact {i}"} for i in range(300)]})
    )
    run = [sys.executable, "-m", "brainmigrate", "put", "--store", str(store), "--root", str(repo)]
    bad = ("x", "--scope", "repo", "--related", "k9000")
    procs = [
        subprocess.Popen(
            [*run, *(("--json", str(batch)) if i in (0, 4) else bad)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(8)
    ]
    outs = [(p.wait(60), *p.communicate()) for p in procs]
    for i, (code, _out, err) in enumerate(outs):
        if i in (0, 4):
            assert code == 0, err
        else:
            assert code == 2 and "no fact k9000" in err, err
    assert rows(store, "SELECT count(*) FROM facts") == [(300,)]


@pytest.mark.parametrize(
    ("anchor", "message"),
    [
        ({"path": "src/a\x00b.py"}, "anchors[0].path: holds the control character U+0000"),
        ({"symbol": "Fo\ud800o"}, "anchors[0].symbol: holds bytes that are not UTF-8"),
        ("src/\ud800.py", "anchors[0].path: holds bytes that are not UTF-8"),
        ({"path": "x" * 1001}, "anchors[0].path: 1001 characters, more than 1000"),
    ],
)
def test_an_anchor_s_fields_are_checked_as_the_fact_s(tmp_path, repo, anchor, message):
    facts = putting.from_json({"scope": "area:a", "text": "x", "anchors": [anchor]})
    with pytest.raises(putting.PutError) as caught:
        putting.put(tmp_path / "k.db", facts, roots=[repo])
    assert str(caught.value).startswith(message)
    assert not (tmp_path / "k.db").exists()


def test_links_to_many_ids_are_no_store_error(tmp_path, repo):
    store = tmp_path / "know.db"
    _put(store, "a fact", "--scope", "area:a", root=repo)
    # 260,000 distinct ids: more than SQLite takes as variables of one statement
    ids = [list(range(2 + j * 1000, 1002 + j * 1000)) for j in range(260)]
    facts = [{"scope": "area:a", "text": f"fact {j}", "related": ids[j]} for j in range(260)]
    body = {"facts": facts}
    with pytest.raises(putting.PutError) as caught:
        putting.put(store, putting.from_json(body), roots=[repo])
    assert str(caught.value).startswith("facts[0].related: no fact k2 in the store")
