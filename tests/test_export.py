"""Exports: jsonl, brain notation (round trip), knowledge entries, memory folder; the rules
of each target, atomic writes and bad input (brainmigrate.exports, ``export``)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import random
import shutil
import sqlite3
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from clirun import cli as run
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from brainmigrate import cli, importer, stores
from brainmigrate import exports as export
from brainmigrate.cli.options import EXPORT_FORMATS
from brainmigrate.merge.rule import Stems, numbers
from brainmigrate.merge.run import fts_words
from brainmigrate.model import FactRecord
from brainmigrate.read.facts import KIND_OF_MARKER, SUPERSEDED, TaskIds, plus_kind_for
from brainmigrate.read.notation import fold
from brainmigrate.read.run import ImportOptions

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


def import_into(store: Path, paths, roots, cache: Path, **kw) -> None:
    options = ImportOptions(roots=[str(r) for r in roots], cache_dir=str(cache), **kw)
    importer.import_notes([str(p) for p in paths], options, store)


@pytest.fixture(scope="module")
def sample_store(tmp_path_factory) -> Path:
    """know.db of samples/notes against the two sample roots (built once per module)."""
    base = tmp_path_factory.mktemp("samples")
    store = base / "know.db"
    with contextlib.chdir(SAMPLES):
        import_into(store, ["notes"], ["roots/app", "roots/infra"], base / "cache", scope=None)
    return store


@pytest.fixture
def store(sample_store, tmp_path) -> Path:
    copy = tmp_path / "know.db"
    shutil.copyfile(sample_store, copy)
    return copy


def key(rec: FactRecord) -> tuple:
    """What a round trip must keep of a fact."""
    return (
        rec.scope,
        rec.kind,
        rec.marker,
        rec.text,
        rec.task,
        rec.run,
        rec.created,
        rec.status,
        sorted((a.root, a.path, a.symbol or "") for a in rec.anchors),
        sorted(rec.gone),
    )


def facts_of(store: Path) -> list[tuple]:
    return [key(r) for r in stores.load(store).facts.values()]


def no_temp_files(folder: Path) -> bool:
    return not [p for p in folder.rglob("*") if p.name.startswith(".")]


# ------------------------------------------------------------------------------ jsonl


def test_jsonl_one_fact_per_line_with_provenance(store, tmp_path):
    out = tmp_path / "facts.jsonl"
    result = run("export", "--store", str(store), "--to", "jsonl", "--output", str(out))
    assert result.exit_code == 0, result.output
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 29
    facts = [json.loads(line) for line in lines]
    assert [f["id"] for f in facts] == [f"k{i}" for i in range(1, 30)]
    k11 = facts[10]
    assert k11["text"].startswith("PaymentGateway retries failed charges twice")
    assert (k11["task"], k11["run"], k11["created"]) == (
        "TER-160",
        "ter-160-b",
        "2026-09-20T10:02:11Z",
    )
    # line 16 repeats line 6 and gives the fact its text: the most recent line, its origin
    assert k11["origin"] == {"file": "notes/payments.md", "line": 16}
    assert [(p["file"], p["line"]) for p in k11["provenance"]] == [
        ("notes/payments.md", 6),
        ("notes/payments.md", 16),
    ]
    assert [(a["kind"], a["path"], a["lines"], a["how"]) for a in k11["anchors"]] == [
        ("file", "src/main/kotlin/com/example/payments/PaymentGateway.kt", [13, 24], "cited"),
        ("symbol", "src/main/kotlin/com/example/payments/PaymentGateway.kt", [7, 30], "camelcase"),
    ]
    # recorded relative to the store's folder, never as an absolute path
    recorded = os.path.relpath(SAMPLES / "roots/app", store.parent.resolve())
    assert k11["anchors"][0]["root"] == recorded
    assert facts[20]["status"] == "superseded"
    assert facts[8]["gone"] == ["docker/certs/dev.pem", "scripts/gen-certs.sh"]


def test_jsonl_filters_and_stdout(store):
    result = run(
        "export",
        "--store",
        str(store),
        "--to",
        "jsonl",
        "--output",
        "-",
        "--scope",
        "area:payments",
        "--kind",
        "blocker",
        "--kind",
        "decision",
    )
    assert result.exit_code == 0, result.output
    ids = [json.loads(line)["id"] for line in result.stdout.splitlines()]
    assert ids == ["k13", "k15"]
    active = run(
        "export",
        "--store",
        str(store),
        "--to",
        "jsonl",
        "--output",
        "-",
        "--scope",
        "area:payments",
        "--status",
        "active",
    )
    ids = [json.loads(line)["id"] for line in active.stdout.splitlines()]
    assert "k21" not in ids and len(ids) == 11
    areas = run(
        "export", "--store", str(store), "--to", "jsonl", "--output", "-", "--scope", "area"
    )
    assert len(areas.stdout.splitlines()) == 29


# ------------------------------------------------------------------------------ brain


def test_brain_round_trip_on_samples(store, tmp_path):
    out = tmp_path / "brain"
    result = run("export", "--store", str(store), "--to", "brain", "--output", str(out))
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == [
        "api-patterns.md",
        "docker.md",
        "payments.md",
        "webhooks.md",
    ]
    docker = (out / "docker.md").read_text(encoding="utf-8").splitlines()
    assert docker[:3] == [
        "# area:docker",
        "",
        "+ the app image runs on eclipse-temurin:21-jre, see docker/Dockerfile "
        "<!-- 2026-09-18 14:10:00Z infra-1 -->",
    ]
    payments = (out / "payments.md").read_text(encoding="utf-8")
    assert "! P1 refunds above 10000 cents" in payments
    assert "+ SUPERSEDED: refunds are sent synchronously" in payments
    again = tmp_path / "again.db"
    with contextlib.chdir(SAMPLES):
        import_into(again, [out], ["roots/app", "roots/infra"], tmp_path / "cache")
    assert facts_of(again) == facts_of(store)


WORDS = [
    "retry",
    "backoff",
    "ledger",
    "charge",
    "webhook",
    "cache",
    "deploy",
    "image",
    "build",
    "queue",
    "token",
    "secret",
    "refund",
    "gateway",
    "handler",
    "config",
    "BillingService",
    "timeout",
    "proxy",
    "shard",
    "index",
]
TRICKY = [
    "# not a heading",
    "@ not context",
    "% not state",
    "<!-- mid comment --> stays",
    "```",
    "- bullet",
    "+ plus",
    "-->",
    "<!--",
    "x",
    "SUPERSEDED",
    "a-->b",
    "`code`",
    "evt:<id>",
    "and/or",
]


def generate_notes(rng: random.Random, folder: Path, files: int = 3, facts: int = 25) -> None:
    """Notes files with every marker, bullets, trailers, task ids, continuations, repeats,
    cited paths (found and gone), a CamelCase name, and texts that start or end with what
    the notation could read differently."""
    folder.mkdir()
    names = ["alpha", "api-patterns", "ops_notes", "beta"][:files]
    for name in names:
        lines, written = [f"# {name}", ""], []
        for _ in range(facts):
            roll = rng.random()
            if written and roll < 0.1:
                lines.append(rng.choice(written))
                continue
            if roll < 0.15:
                lines.append(rng.choice(["", "## section", "<!-- a comment -->", "@ ctx", "prose"]))
                continue
            marker = rng.choice(["+", "+", "!", "~", "=", "?", ">", "->", "x"])
            bullet = rng.choice(["", "", "- ", "* "])
            tokens = [rng.choice(WORDS) for _ in range(rng.randint(2, 9))]
            if rng.random() < 0.3:
                tokens.insert(0, rng.choice(TRICKY))
            if rng.random() < 0.3:
                tokens.append(rng.choice(TRICKY))
            if rng.random() < 0.4:
                tokens.insert(rng.randint(0, len(tokens)), f"TER-{rng.randint(1, 40)}")
            if rng.random() < 0.3:
                tokens.append(rng.choice(["src/app/config.yaml:3", "docs/guide.md", "src/gone.py"]))
            if rng.random() < 0.2:
                tokens.append(str(rng.randint(1, 999)))
            if rng.random() < 0.1:
                tokens.insert(0, "SUPERSEDED:")
            text = " ".join(tokens)
            if marker == "!" and rng.random() < 0.2:
                line = f"{bullet}!P{rng.randint(0, 9)} {text}"
            else:
                line = f"{bullet}{marker} {text}"
            if rng.random() < 0.5:
                when = f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
                sep = rng.choice([" ", "T"])
                off = rng.choice(["", "Z", "+02:00", "-0500"])
                run_name = rng.choice(["", " nightly", " run-7"])
                hm = f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}"
                line += f" <!-- {when}{sep}{hm}{off}{run_name} -->"
            lines.append(line)
            written.append(line)
            if rng.random() < 0.15:
                lines.append("  " + " ".join(rng.choice(WORDS) for _ in range(3)))
        (folder / f"{name}.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


def make_root(folder: Path) -> Path:
    (folder / "src" / "app").mkdir(parents=True)
    (folder / "docs").mkdir()
    (folder / "src" / "app" / "config.yaml").write_text("a: 1\nb: 2\nc: 3\n")
    (folder / "docs" / "guide.md").write_text("# guide\n")
    (folder / "src" / "Billing.kt").write_text("class BillingService {\n    fun charge() {}\n}\n")
    return folder


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5, 6])
def test_brain_round_trip_on_generated_corpora(seed, tmp_path):
    root = make_root(tmp_path / "root")
    generate_notes(random.Random(seed), tmp_path / "notes")
    first, second = tmp_path / "first.db", tmp_path / "second.db"
    import_into(first, [tmp_path / "notes"], [root], tmp_path / "cache")
    result = export.export(first, "brain", tmp_path / "out")
    assert result.notes == []
    import_into(second, [tmp_path / "out"], [root], tmp_path / "cache")
    assert facts_of(second) == facts_of(first)
    assert len(facts_of(first)) > 20


def _stored(i: int, text: str, marker: str, created: str | None, run: str | None):
    scope = f"area:s{i}"
    plus = plus_kind_for(f"s{i}.md")
    found = TaskIds().all(text)
    return FactRecord(
        id=i,
        scope=scope,
        kind=KIND_OF_MARKER.get(marker, plus),
        marker=marker,
        text=text,
        task=found[0] if found else None,
        run=run if created else None,
        created=created,
        status="superseded" if SUPERSEDED.search(text) else "active",
        status_reason=None,
        stems=Stems()(text),
        numbers=numbers(text),
        tasks=frozenset(found),
    )


TEXT = st.lists(
    st.one_of(
        st.sampled_from(TRICKY + ["TER-5", "SHA-256", "<!-- 2026-01-02 03:04 r -->", "!P3"]),
        st.text(
            alphabet=st.characters(
                codec="utf-8", exclude_categories=("Cs", "Cc", "Zl", "Zp", "Zs")
            ),
            min_size=1,
            max_size=8,
        ),
    ),
    min_size=1,
    max_size=6,
).map(" ".join)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.tuples(
            TEXT,
            st.sampled_from(["+", "!", "~", "=", "?", ">", "->", "x"]),
            st.one_of(st.none(), st.just("2026-09-23T13:16:09Z")),
            st.one_of(st.none(), st.sampled_from(["nightly", "r-1"])),
        ),
        min_size=1,
        max_size=5,
    )
)
def test_brain_round_trip_on_any_text(tmp_path_factory, items):
    """Any stored text (one fact per scope, so no two can merge) comes back the same."""
    from brainmigrate.read.notation import is_blank, split_trailer

    tmp = tmp_path_factory.mktemp("prop")
    recs = []
    for i, (text, marker, created, run_name) in enumerate(items, 1):
        text = fold(text)
        if is_blank(split_trailer(text)[0]) or len(text) > 2000:
            continue
        recs.append(_stored(i, text, marker, created, run_name))
    if not recs:
        return
    first, second = tmp / "first.db", tmp / "second.db"
    stores.write(first, recs, fts_words(Stems()), "2026-01-01T00:00:00Z")
    export.export(first, "brain", tmp / "out")
    with contextlib.chdir(tmp):
        import_into(second, [tmp / "out"], [tmp], tmp / "cache")
    got = [key(r)[:8] for r in stores.load(second).facts.values()]
    assert got == [key(r)[:8] for r in recs]


def _write_facts(path: Path, recs) -> None:
    stores.write(path, recs, fts_words(Stems()), "2026-01-01T00:00:00Z")


def _rec(i, scope, kind, marker, text, status="active", created=None, reason=None):
    return FactRecord(
        id=i,
        scope=scope,
        kind=kind,
        marker=marker,
        text=text,
        task=None,
        run=None,
        created=created,
        status=status,
        status_reason=reason,
        stems=Stems()(text),
        numbers=numbers(text),
        tasks=frozenset(),
    )


def test_brain_kind_that_no_marker_gives_fails_and_plus_kind_fixes_it(tmp_path):
    db = tmp_path / "k.db"
    _write_facts(
        db,
        [
            _rec(1, "area:docker", "pattern", "+", "images are built once and promoted"),
            _rec(2, "area:api-patterns", "environment", "+", "the gateway runs on port 8080"),
            _rec(3, "area:docker", "environment", "+", "compose starts postgres"),
        ],
    )
    out = tmp_path / "out"
    result = run("export", "--store", str(db), "--to", "brain", "--output", str(out))
    assert result.exit_code == 1  # the others are written; the one left out is named
    assert result.stderr == (
        f"exported 2 facts to {out} as brain: 2 files, 2 written, 0 unchanged\n"
        "  left out, brain cannot hold them as they are: 1 fact\n"
        "    k1 (area:docker) 'images are built once and promoted': a pattern has no marker"
        " of its own, and '+' gives environment in this file; export with --plus-kind"
        " pattern and import the result with --plus-kind pattern\n"
    )
    assert (out / "docker.md").read_text().splitlines()[2:] == ["+ compose starts postgres"]
    assert no_temp_files(tmp_path)
    shutil.rmtree(out)
    result = run(
        "export",
        "--store",
        str(db),
        "--to",
        "brain",
        "--output",
        str(out),
        "--plus-kind",
        "pattern",
    )
    assert result.exit_code == 0, result.output
    assert (out / "docker.md").read_text().splitlines()[2:] == [
        "+ images are built once and promoted",
        "= compose starts postgres",
    ]
    assert (out / "api-patterns.md").read_text().splitlines()[2:] == [
        "= the gateway runs on port 8080"
    ]
    again = tmp_path / "again.db"
    import_into(again, [out], [tmp_path], tmp_path / "cache", plus_kind="pattern")
    assert [(r.scope, r.kind, r.text) for r in stores.load(again).facts.values()] == [
        ("area:api-patterns", "environment", "the gateway runs on port 8080"),
        ("area:docker", "pattern", "images are built once and promoted"),
        ("area:docker", "environment", "compose starts postgres"),
    ]


def test_brain_stale_superseded_and_comment_endings(tmp_path):
    db = tmp_path / "k.db"
    _write_facts(
        db,
        [
            _rec(1, "area:x", "environment", "=", "see <!-- old note -->"),
            _rec(2, "area:x", "other", "?", "gone file", status="stale", reason="file gone: a.py"),
            _rec(3, "area:x", "decision", "~", "was replaced", status="superseded"),
            _rec(
                4, "area:x", "environment", "+", "ends <!-- c -->", created="2026-01-02T03:04:05Z"
            ),
        ],
    )
    result = export.export(db, "brain", tmp_path / "out")
    assert (tmp_path / "out" / "x.md").read_text().splitlines()[2:] == [
        "= see <!-- old note --> <!-- -->",
        "? gone file",
        "~ was replaced SUPERSEDED",  # a short text: SUPERSEDED in it, no fill to the cut
        "+ ends <!-- c --> <!-- 2026-01-02 03:04:05Z -->",
    ]
    assert result.notes == [
        "1 stale fact is written as plain facts (brain notation has no stale status): k2",
        "1 fact is written with the task id or SUPERSEDED their text does not show in it"
        " (brain notation reads both from the text, so importing the export keeps them in"
        " the text): k3",
    ]
    again = tmp_path / "again.db"
    import_into(again, [tmp_path / "out"], [tmp_path], tmp_path / "cache", scope="area:x")
    assert [(r.text, r.status) for r in stores.load(again).facts.values()][2] == (
        "was replaced SUPERSEDED",
        "superseded",
    )


def test_scope_file_names_are_safe_and_unique():
    stems = export.scope_stems(
        [
            "area:docker",
            "area:Docker",
            "area:../../etc",
            "area:etc",
            "file:src/Foo.kt",
            "repo",
            "area:con",
            "area:.hidden",
            "area:a b",
            "area:docker-2",
        ]
    )
    assert stems == {
        "area:docker": "docker",
        "area:docker-2": "docker-2",
        "area:etc": "etc",
        "area:../../etc": "etc-2",
        "area:.hidden": "hidden",
        "area:Docker": "docker-3",
        "area:a b": "a-b",
        "area:con": "scope-con",
        "file:src/Foo.kt": "file-src-foo.kt",
        "repo": "repo",
    }
    assert export.scope_stems(["area:memory"], ["memory"]) == {"area:memory": "memory-2"}


def test_brain_notes_scopes_a_file_name_cannot_carry(tmp_path):
    db = tmp_path / "k.db"
    _write_facts(
        db,
        [
            _rec(1, "area:docker", "other", "?", "compose pins postgres"),
            _rec(2, "area:con", "other", "?", "a scope windows cannot name"),
            _rec(3, "repo", "other", "?", "a scope of no file"),
        ],
    )
    result = export.export(db, "brain", tmp_path / "out")
    assert result.files == ["docker.md", "repo.md", "scope-con.md"]
    assert result.notes == [
        "2 scopes cannot be told by their file name alone: area:con in scope-con.md (imports"
        " as area:scope-con unless imported with --scope area:con); repo in repo.md (imports"
        " as area:repo unless imported with --scope repo)"
    ]


def test_brain_traversal_scope_stays_inside(tmp_path):
    db = tmp_path / "k.db"
    _write_facts(db, [_rec(1, "area:../../etc", "other", "?", "who owns passwd")])
    out = tmp_path / "deep" / "out"
    out.parent.mkdir()
    export.export(db, "brain", out)
    assert [p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.md")] == [
        "deep/out/etc.md"
    ]
    assert (out / "etc.md").read_text() == "# area:../../etc\n\n? who owns passwd\n"


# ------------------------------------------------------------------------------ knowledge


def test_knowledge_entries(store, tmp_path):
    out = tmp_path / "kn"
    result = run(
        "export",
        "--store",
        str(store),
        "--to",
        "knowledge",
        "--output",
        str(out),
        "--type-map",
        "blocker=feedback",
        "--type-map",
        "pattern=reference",
    )
    assert result.exit_code == 0, result.output
    files = sorted(out.iterdir())
    assert len(files) == 29
    entries = {}
    for f in files:
        text = f.read_text(encoding="utf-8")
        assert text.startswith("---\n")
        front = yaml.safe_load(text.split("---\n")[1])
        assert front["name"] == f.stem
        assert front["name"] == export.slug(front["name"], 200)  # kebab-case
        assert "\n" not in front["description"]
        entries[front["id"]] = (front, text)
    assert len({e[0]["name"] for e in entries.values()}) == 29
    front, body = entries["k11"]
    assert front["name"] == "paymentgateway-retries-failed-charges-twice-then-k11"
    assert front["type"] == "project"
    assert front["created"] == "2026-09-20T10:02:11Z"
    digest = hashlib.sha256(
        (SAMPLES / "roots/app/src/main/kotlin/com/example/payments/PaymentGateway.kt").read_bytes()
    ).hexdigest()
    assert [(a["path"], a["sha256"], a.get("symbol")) for a in front["anchors"]] == [
        ("src/main/kotlin/com/example/payments/PaymentGateway.kt", digest, None),
        ("src/main/kotlin/com/example/payments/PaymentGateway.kt", digest, "PaymentGateway"),
    ]
    assert "source" not in front
    assert "- notes/payments.md:16 (imported " in body
    assert entries["k15"][0]["type"] == "feedback"
    assert entries["k1"][0]["type"] == "reference"
    front, _ = entries["k22"]
    assert front["anchors"] == []
    assert front["source"] == {"task": None, "run": None, "notes": "notes/payments.md:23"}


def test_knowledge_yaml_quoting_and_idempotence(tmp_path):
    texts = [
        'she said "no": #1 - * & ! | > % @ `x` \\ {a: [b]}',
        "- leading dash",
        "null",
        "yes",
        "tab\there \u2028 line \x85 next \ufeff bom \U0001f600",
        "'single' and trailing: ",
    ]
    db = tmp_path / "k.db"
    _write_facts(db, [_rec(i, f"area:{t}", "other", "?", t) for i, t in enumerate(texts, 1)])
    out = tmp_path / "kn"
    export.export(db, "knowledge", out)
    for i, text in enumerate(texts, 1):
        (f,) = out.glob(f"*-k{i}.md")
        front = yaml.safe_load(f.read_text(encoding="utf-8").split("---\n")[1])
        assert front["description"] == fold(text)
        assert front["scope"] == f"area:{text}"  # kept exactly, control characters too
    before = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in out.iterdir()}
    result = export.export(db, "knowledge", out)
    assert result.written == []
    assert {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in out.iterdir()} == before


def test_knowledge_digest_only_inside_root(tmp_path):
    root = tmp_path / "root"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_bytes(b"print(1)\n")
    (tmp_path / "secret.txt").write_text("outside")
    (root / "src" / "link.txt").symlink_to(tmp_path / "secret.txt")
    assert export.file_digest(str(root), "src/a.py") == hashlib.sha256(b"print(1)\n").hexdigest()
    assert export.file_digest(str(root), "src/link.txt") is None
    assert export.file_digest(str(root), "../secret.txt") is None
    assert export.file_digest(str(root), "src") is None
    assert export.file_digest(str(root), "src/missing.py") is None


def test_bad_type_map_exits_2(store, tmp_path):
    result = run(
        "export",
        "--store",
        str(store),
        "--to",
        "knowledge",
        "--output",
        str(tmp_path / "k"),
        "--type-map",
        "blocker=user",
    )
    assert result.exit_code == 2
    assert "--type-map 'blocker=user': give KIND=TYPE" in result.stderr
    assert not (tmp_path / "k").exists()


# ------------------------------------------------------------------------------ memory


def test_memory_layout_within_default_budgets(store, tmp_path):
    out = tmp_path / "mem"
    result = run("export", "--store", str(store), "--to", "memory", "--output", str(out))
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == [
        "MEMORY.md",
        "api-patterns.md",
        "docker.md",
        "payments.md",
        "webhooks.md",
    ]
    assert (out / "MEMORY.md").read_text().splitlines() == [
        "- area:api-patterns: 4 pattern, see api-patterns.md",
        "- area:docker: 1 decision, 1 blocker, 4 environment, see docker.md",
        "- area:payments: 1 decision, 1 blocker, 5 environment, 5 other, see payments.md",
        "- area:webhooks: 1 decision, 1 blocker, 4 environment, 1 other, see webhooks.md",
    ]
    docker = (out / "docker.md").read_text().splitlines()
    assert docker[:4] == [
        "# area:docker",
        "",
        "- k10 blocker: the image does not build on arm64 hosts yet INF-16",
        "- k8 decision: CI runs ./gradlew test on every push, .github/workflows/ci.yml INF-14",
    ]
    payments = (out / "payments.md").read_text()
    assert payments.endswith(
        "- k21 environment (superseded): SUPERSEDED: refunds are sent "
        "synchronously from the web request TER-159 (moved to the outbox, "
        "see docs/adr/0007-refund-outbox.md)\n"
    )
    total = sum(p.stat().st_size for p in out.iterdir())
    assert (out / "MEMORY.md").stat().st_size <= 2048 and total <= 65536
    assert f"all files {total} of 65536 bytes" in result.stderr


OLD = "2026-01-01T00:00:00Z"


def _memory_store(tmp_path) -> Path:
    db = tmp_path / "m.db"
    recs = [
        _rec(
            1,
            "area:a",
            "environment",
            "+",
            "old environment fact " + "x" * 40,
            created="2026-01-01T00:00:00Z",
        ),
        _rec(2, "area:a", "blocker", "!", "old blocker", created=OLD),
        _rec(3, "area:b", "blocker", "!", "new blocker", created="2026-05-01T00:00:00Z"),
        _rec(4, "area:b", "decision", "~", "superseded decision SUPERSEDED", status="superseded"),
        _rec(5, "area:b", "decision", "~", "active decision"),
        _rec(6, "area:c", "other", "?", "stale question", status="stale"),
    ]
    _write_facts(db, recs)
    return db


def test_memory_over_budget_fails_with_the_plan(tmp_path):
    db = _memory_store(tmp_path)
    out = tmp_path / "mem"
    result = run(
        "export",
        "--store",
        str(db),
        "--to",
        "memory",
        "--output",
        str(out),
        "--total-budget",
        "200",
    )
    assert result.exit_code == 2
    assert "do not fit the memory budgets" in result.stderr
    assert "all files 402 bytes (--total-budget 200); nothing written" in result.stderr
    assert (
        "these 3 of 6 facts would have to go: k4 (decision, superseded, 59 B), "
        "k1 (environment, active, 80 B), k6 (other, stale, 35 B)"
    ) in result.stderr
    assert "Pass --fit" in result.stderr
    assert not out.exists() and no_temp_files(tmp_path)


def test_memory_fit_keeps_by_priority_and_lists_what_went(tmp_path):
    db = _memory_store(tmp_path)
    out = tmp_path / "mem"
    result = export.export(db, "memory", out, export.ExportOptions(total_budget=200, fit=True))
    # priority: blockers (k3 newer, k2), decisions (k5 active, k4 superseded), then the rest
    # (k1 active, k6 stale); 200 bytes hold k3, k2, k5 only. Listed in priority order.
    assert [e["id"] for e in result.left_out] == ["k4", "k1", "k6"]
    assert result.left_out[2] == {
        "id": "k6",
        "scope": "area:c",
        "kind": "other",
        "status": "stale",
        "bytes": 35,
    }
    assert (out / "MEMORY.md").read_text() == (
        "- area:a: 1 blocker, see a.md\n- area:b: 1 decision, 1 blocker, see b.md\n"
    )
    assert (out / "b.md").read_text() == (
        "# area:b\n\n- k3 blocker: new blocker\n- k5 decision: active decision\n"
    )
    assert sorted(p.name for p in out.iterdir()) == ["MEMORY.md", "a.md", "b.md"]
    assert sum(p.stat().st_size for p in out.iterdir()) == result.sizes["total"] <= 200
    cli_run = run(
        "export",
        "--store",
        str(db),
        "--to",
        "memory",
        "--output",
        str(tmp_path / "m2"),
        "--total-budget",
        "200",
        "--fit",
    )
    assert cli_run.exit_code == 0
    assert "left out by --fit: 3 facts" in cli_run.stderr
    assert "k6 other area:c stale (35 bytes)" in cli_run.stderr


def test_memory_index_budget(tmp_path):
    db = _memory_store(tmp_path)
    result = export.export(
        db, "memory", tmp_path / "mem", export.ExportOptions(index_budget=40, fit=True)
    )
    # k3 opens topic b (30 bytes); every other fact would need an index line over 40 bytes
    assert (tmp_path / "mem" / "MEMORY.md").read_text() == "- area:b: 1 blocker, see b.md\n"
    assert [e["id"] for e in result.left_out] == ["k2", "k5", "k4", "k1", "k6"]


def test_memory_topic_never_named_like_the_index(tmp_path):
    db = tmp_path / "m.db"
    _write_facts(db, [_rec(1, "area:memory", "other", "?", "q")])
    export.export(db, "memory", tmp_path / "mem")
    assert sorted(p.name for p in (tmp_path / "mem").iterdir()) == ["MEMORY.md", "memory-2.md"]


# ------------------------------------------------------------------------------ atomicity


def test_failure_mid_export_leaves_previous_output(store, tmp_path, monkeypatch):
    out = tmp_path / "kn"
    export.export(store, "knowledge", out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    db = tmp_path / "other.db"
    _write_facts(
        db, [_rec(i, "area:a", "other", "?", f"fact number {i} of many") for i in range(1, 6)]
    )
    from brainmigrate.exports import files

    real = files.stage
    calls = []

    def failing(folder, name, data):
        calls.append(name)
        if len(calls) == 3:
            raise OSError(28, "No space left on device")
        return real(folder, name, data)

    monkeypatch.setattr(files, "stage", failing)
    with pytest.raises(export.ExportError, match="No space left on device"):
        export.export(db, "knowledge", out)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert no_temp_files(tmp_path)


def test_failure_in_new_folder_leaves_nothing(store, tmp_path, monkeypatch):
    real = os.chmod
    calls = []

    def failing(path, mode, *a, **kw):
        calls.append(path)
        if len(calls) == 2:
            raise OSError(5, "Input/output error")
        return real(path, mode, *a, **kw)

    monkeypatch.setattr(export.os, "chmod", failing)
    with pytest.raises(export.ExportError, match="Input/output error"):
        export.export(store, "brain", tmp_path / "out")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["know.db"]


def test_reexport_is_idempotent_and_leaves_other_files(store, tmp_path):
    out = tmp_path / "brain"
    first = export.export(store, "brain", out)
    assert first.written == first.files
    (out / "mine.txt").write_text("keep me")
    again = export.export(store, "brain", out)
    assert again.written == [] and again.others == ["mine.txt"]
    assert (out / "mine.txt").read_text() == "keep me"


# ------------------------------------------------------------------------------ bad input


def test_unknown_format_exits_2(store, tmp_path):
    result = run("export", "--store", str(store), "--to", "csv", "--output", str(tmp_path / "x"))
    assert result.exit_code == 2
    assert "'csv' is not one of 'jsonl', 'brain', 'knowledge', 'memory'" in result.stderr
    with pytest.raises(export.ExportError, match="use one of: jsonl, brain, knowledge, memory"):
        export.export(store, "csv", tmp_path / "x")


@pytest.mark.parametrize(
    ("scopes", "named"), [(["area:nosuch"], "area:nosuch"), (["area:docker,dockr"], "dockr")]
)
def test_a_scope_no_fact_has_exits_2_and_writes_nothing(store, tmp_path, scopes, named):
    out = tmp_path / "brain"
    args = sum((["--scope", s] for s in scopes), [])
    result = run("export", "--store", str(store), "--to", "brain", "--output", str(out), *args)
    assert result.exit_code == 2
    assert result.stderr == (
        f"brainmigrate: error: --scope {named}: no fact in the store has this scope (scopes in"
        " the store: area:api-patterns, area:docker, area:payments, area:webhooks); pass --scope"
        " with one of the store's scopes, or leave it out\n"
    )
    assert not out.exists()
    # every scope given exists: exported as before
    ok = run(
        "export", "--store", str(store), "--to", "brain", "--output", str(out), "--scope", "area"
    )
    assert ok.exit_code == 0 and sorted(p.name for p in out.iterdir()) == [
        "api-patterns.md",
        "docker.md",
        "payments.md",
        "webhooks.md",
    ]


def test_cli_formats_match_the_library():
    assert list(export.FORMATS) == EXPORT_FORMATS


def test_output_is_a_file_where_a_folder_is_needed(store, tmp_path):
    target = tmp_path / "taken"
    target.write_text("a file")
    result = run("export", "--store", str(store), "--to", "brain", "--output", str(target))
    assert result.exit_code == 2
    assert (
        "is a file, and this format writes a folder; pass --output with a folder" in result.stderr
    )
    assert target.read_text() == "a file"


def test_output_folder_missing_or_unwritable(store, tmp_path):
    result = run(
        "export", "--store", str(store), "--to", "jsonl", "--output", str(tmp_path / "no" / "x")
    )
    assert (result.exit_code, result.stderr) == (
        2,
        f"brainmigrate: error: --output {tmp_path / 'no' / 'x'}: folder {tmp_path / 'no'} does"
        " not exist; create it or pass --output with another path\n",
    )
    if os.geteuid() == 0:
        pytest.skip("root writes into read-only folders; the unwritable case needs a user")
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        result = run("export", "--store", str(store), "--to", "brain", "--output", str(locked))
        assert result.exit_code == 2
        assert "cannot write in" in result.stderr
    finally:
        locked.chmod(0o700)


def test_missing_and_newer_stores_exit_2(store, tmp_path):
    result = run("export", "--store", str(tmp_path / "none.db"), "--to", "jsonl", "--output", "-")
    assert result.exit_code == 2
    assert "no store here; run 'brainmigrate import NOTES --store" in result.stderr
    assert not (tmp_path / "none.db").exists()
    con = sqlite3.connect(store)
    con.execute("PRAGMA user_version = 99")
    con.commit()
    con.close()
    out = tmp_path / "out"
    result = run("export", "--store", str(store), "--to", "brain", "--output", str(out))
    assert result.exit_code == 2
    assert (
        "newer brainmigrate (schema 99" in result.stderr and "upgrade brainmigrate" in result.stderr
    )
    assert not out.exists()


def test_option_of_another_format_is_a_usage_error(store, tmp_path):
    result = run("export", "--store", str(store), "--to", "jsonl", "--output", "-", "--fit")
    assert result.exit_code == 2
    assert "--fit applies to --to memory only" in result.stderr


def test_control_characters_of_scopes_and_paths_reach_stderr_as_u_fffd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    db = tmp_path / "s\x1b[2J.db"
    _write_facts(db, [_rec(1, "area:a\x1b]0;owned\x07b", "other", "?", "a scope with escapes")])
    r = CliRunner().invoke(
        cli.main,
        ["export", "--store", db.name, "--to", "brain", "--output", "o\x9bx"],
        color=True,  # as a terminal gets it: click strips nothing
    )
    assert r.exit_code == 0, r.output
    assert r.stderr == (
        "exported 1 fact to o\ufffdx as brain: 1 file, 1 written, 0 unchanged\n"
        "  note: 1 scope cannot be told by their file name alone: area:a\ufffd]0;owned\ufffdb"
        " in a-0-owned-b.md (imports as area:a-0-owned-b unless imported with --scope"
        " area:a\ufffd]0;owned\ufffdb)\n"
    )
    missing = CliRunner().invoke(cli.main, ["show", "k1", "--store", "no\x1b[2J.db"], color=True)
    assert (missing.exit_code, missing.stderr) == (
        2,
        "brainmigrate: error: no\ufffd[2J.db: no store here; run 'brainmigrate import NOTES"
        " --store no\ufffd[2J.db' first or pass --store with the path of a store\n",
    )
    (tmp_path / "p.md").write_text("+ the cache holds 5 entries\n")
    dry = CliRunner().invoke(
        cli.main,
        ["import", "p.md", "--scope", "x\x07y", "--store", db.name, "--dry-run"],
        color=True,
    )
    assert dry.exit_code == 0 and dry.stderr == ""
    assert dry.stdout.startswith(
        "Dry run: nothing written; an import into s\ufffd[2J.db would add 1 and update 0 facts\n"
    )
    assert "p.md (x\ufffdy)" in dry.stdout and "\x07" not in dry.stdout


# ------------------------------------------------------------------------------ at the cut


def _words(n: int, word: str = "word") -> str:
    return " ".join([word] * n)


def test_brain_export_of_facts_cut_at_2000_round_trips(tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "cut.md").write_text(
        f"+ {_words(420)} then TER-77 SUPERSEDED\n\n"  # task and SUPERSEDED after the cut
        f"! {_words(399, 'flaky')} gate {_words(30, 'more')} INF-9\n\n"  # the task after it
        f"~ {_words(410, 'pool')} SUPERSEDED_BY k2\n\n"  # SUPERSEDED after it
        "+ a short fact TER-5\n"
    )
    first, second = tmp_path / "first.db", tmp_path / "second.db"
    import_into(first, [notes], [tmp_path], tmp_path / "cache")
    stored = stores.load(first).facts
    assert [(len(r.text), r.task, r.status) for r in stored.values()] == [
        (1999, "TER-77", "superseded"),
        (1997, "INF-9", "active"),
        (1999, None, "superseded"),
        (18, "TER-5", "active"),
    ]
    out = tmp_path / "out"
    r = run("export", "--store", str(first), "--to", "brain", "--output", str(out))
    assert (r.exit_code, r.stderr) == (
        0,
        f"exported 4 facts to {out} as brain: 1 file, 1 written, 0 unchanged\n"
        "  note: 3 facts were cut at 2000 characters before their task id or SUPERSEDED:"
        " written past the cut, where importing the export finds them (and warns BM302):"
        " k1, k2, k3\n",
    )
    lines = (out / "cut.md").read_text().splitlines()
    text = [r.text for r in stored.values()]
    assert lines[2:] == [  # what the cut left out, as one word after it: cut off again
        f"+ {text[0]} SUPERSEDED(TER-77)",
        f"! {text[1]} (INF-9)",
        f"~ {text[2]} SUPERSEDED",
        "+ a short fact TER-5",
    ]
    # a cut that left room before 2000 characters is filled up to it
    (notes / "cut.md").write_text(f"+ {_words(390)} {'z' * 60} TER-78\n")
    third = tmp_path / "third.db"
    import_into(third, [notes], [tmp_path], tmp_path / "cache")
    (rec,) = stores.load(third).facts.values()
    assert (len(rec.text), rec.task) == (1949, "TER-78")
    export.export(third, "brain", tmp_path / "out3")
    assert (tmp_path / "out3" / "cut.md").read_text().splitlines()[2] == (
        f"+ {rec.text} (TER-78)" + "…" * (2001 - 1949 - 9)
    )
    fourth = tmp_path / "fourth.db"
    import_into(fourth, [tmp_path / "out3"], [tmp_path], tmp_path / "cache")
    assert facts_of(fourth) == facts_of(third)
    import_into(second, [out], [tmp_path], tmp_path / "cache")
    assert facts_of(second) == facts_of(first)


def test_a_fact_brain_cannot_hold_never_blocks_the_others(tmp_path):
    (tmp_path / "api-patterns.md").write_text(
        f"+ {_words(300, 'retry')} backs off\n\n+ retries are idempotent\n"
    )
    (tmp_path / "docker.md").write_text("+ compose starts postgres\n")
    db = tmp_path / "k.db"
    import_into(db, [tmp_path / "api-patterns.md"], [tmp_path], tmp_path / "cache", scope="area:x")
    import_into(db, [tmp_path / "docker.md"], [tmp_path], tmp_path / "cache")
    out = tmp_path / "out"
    r = run("export", "--store", str(db), "--to", "brain", "--output", str(out))
    fix = (
        "a pattern has no marker of its own, and '+' gives environment in this file; export"
        " with --plus-kind pattern and import the result with --plus-kind pattern"
    )
    assert r.exit_code == 1
    assert r.stderr == (
        f"exported 1 fact to {out} as brain: 1 file, 1 written, 0 unchanged\n"
        "  left out, brain cannot hold them as they are: 2 facts\n"
        f"    k1 (area:x) '{_words(10, 'retry')}…': {fix}\n"
        f"    k2 (area:x) 'retries are idempotent': {fix}\n"
    )
    assert sorted(p.name for p in out.iterdir()) == ["docker.md"]
    for fmt in ("jsonl", "knowledge", "memory"):  # the other targets hold them all
        r = run("export", "--store", str(db), "--to", fmt, "--output", str(tmp_path / fmt))
        assert (r.exit_code, r.stderr.splitlines()[0]) == (
            0,
            f"exported 3 facts to {tmp_path / fmt} as {fmt}: "
            + ("" if fmt == "jsonl" else f"{3 if fmt == 'knowledge' else 3} files, ")
            + f"{1 if fmt == 'jsonl' else 3} written, 0 unchanged",
        )


def test_read_back_problems_quote_a_short_prefix():
    rec = _rec(1, "area:x", "other", "?", _words(500))
    rec.created = "not a time"
    line, text, problem = export.brain_line(rec, "environment", TaskIds())
    assert problem == "created 'not a time' is not YYYY-MM-DDTHH:MM:SSZ"
    long = "w" * 3000  # a text no importer stores: it would be cut on the way back
    rec = _rec(2, "area:x", "other", "?", long)
    line, text, problem = export.brain_line(rec, "environment", TaskIds())
    from brainmigrate.read.notation import classifier

    got = export._read_back(line, text, rec, "x.md", "environment", TaskIds(), classifier())
    assert got == (
        "text would be read back cut to 2000 of 3000 characters (the notation keeps at most 2000)"
    )
    assert export.quote(_words(100)) == _words(12)[:59] + "…"
    assert export.quote("a  short\ttext") == "a short text"


CUT_WORDS = st.sampled_from(
    ["word", "pool", "retries", "y" * 70, "TER-5", "INF-12", "SUPERSEDED", "superseded"]
    + ["café", "a/b.kt", "PaymentGateway", "<!--", "-->", "#", "`", "1.5", "!P3", "^blk"]
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["+", "!", "~", "=", "?", ">", "->", "x"]),
            st.integers(0, 2100),  # characters of plain words before the rest: past the cut
            st.lists(CUT_WORDS, min_size=1, max_size=12),
            st.one_of(st.none(), st.just(" <!-- 2026-09-23 13:16:09Z nightly -->")),
        ),
        min_size=1,
        max_size=3,
    )
)
def test_every_store_the_importer_writes_exports_to_every_target(tmp_path_factory, items):
    tmp = tmp_path_factory.mktemp("every")
    notes = tmp / "notes"
    notes.mkdir()
    for i, (marker, before, words, trailer) in enumerate(items):
        text = " ".join(["plain"] * (before // 6) + words)
        (notes / f"s{i}.md").write_text(f"{marker} {text}{trailer or ''}\n")  # one per scope
    first, second = tmp / "first.db", tmp / "second.db"
    import_into(first, [notes], [tmp], tmp / "cache")
    if not stores.load(first).facts:
        return
    for fmt in export.FORMATS:
        result = export.export(first, fmt, tmp / fmt, export.ExportOptions(fit=fmt == "memory"))
        assert result.refused == []
        assert result.left_out == []
    import_into(second, [tmp / "brain"], [tmp], tmp / "cache")
    assert [k[:8] for k in facts_of(second)] == [k[:8] for k in facts_of(first)]


# ------------------------------------------------------------------------------ long scopes


def test_long_scopes_get_file_names_capped_in_bytes_and_unique(tmp_path):
    notes = tmp_path / "n.md"
    notes.write_text("+ the cache holds 5 entries TER-1\n")
    scopes = ["a" * 300, "a" * 299 + "b", "area:" + "x" * 240, "area:" + "数据" * 100]
    db = tmp_path / "k.db"
    for scope in scopes:
        import_into(db, [notes], [tmp_path], tmp_path / "cache", scope=scope)
    for fmt in ("brain", "memory", "knowledge"):
        out = tmp_path / fmt
        for attempt in ("new folder", "existing folder"):
            if attempt == "existing folder":  # every file is written through a temporary one
                for p in out.iterdir():
                    p.write_text("old\n")
            r = run("export", "--store", str(db), "--to", fmt, "--output", str(out))
            assert r.exit_code == 0, (fmt, attempt, r.output)
        names = sorted(p.name for p in out.iterdir())
        assert all(len(n.encode()) <= 124 for n in names), names
        assert no_temp_files(tmp_path)
    assert sorted(p.name for p in (tmp_path / "brain").iterdir()) == [
        "a" * 111 + "-9835fa6b.md",  # two scopes alike in their first 300 bytes: two files
        "a" * 111 + "-daf00507.md",
        "x" * 111 + "-718df670.md",
        "数据" * 18 + "数-9bbed929.md",  # 111 bytes, cut at a character
    ]
    again = tmp_path / "again.db"
    brain = tmp_path / "brain"
    for path, scope in zip(sorted(brain.iterdir()), sorted(scopes), strict=True):
        import_into(again, [path], [tmp_path], tmp_path / "cache", scope=scope)
    assert facts_of(again) == facts_of(db)


def test_stems_windows_reserves_are_avoided():
    assert export.scope_stems(
        ["area:nul.txt", "area:NUL", "area:com¹", "area:Lpt9.x", "area:conf", "area:aux-x"]
    ) == {
        "area:nul.txt": "scope-nul.txt",
        "area:NUL": "scope-nul",
        "area:com¹": "scope-com1",
        "area:Lpt9.x": "scope-lpt9.x",
        "area:conf": "conf",
        "area:aux-x": "aux-x",
    }


def test_an_output_name_near_255_bytes_is_written_through_a_shorter_temporary_name(store, tmp_path):
    out = tmp_path / ("f" * 245 + ".jsonl")  # 251 bytes: with its temporary affixes, more
    for _ in range(2):
        r = run("export", "--store", str(store), "--to", "jsonl", "--output", str(out))
        assert r.exit_code == 0, r.output
        out.write_text("old\n")  # so the second run writes again
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f" * 245 + ".jsonl", "know.db"]
    too_long = tmp_path / ("f" * 250 + ".jsonl")
    r = run("export", "--store", str(store), "--to", "jsonl", "--output", str(too_long))
    assert (r.exit_code, r.stderr) == (
        2,
        "brainmigrate: error: Invalid value for '--output': a name of 256 bytes in it, longer"
        " than file systems take (255); pass a shorter one; see 'brainmigrate export --help'\n",
    )


# ------------------------------------------------------------------------------ leftovers

KILLED_EXPORT = """
import os, signal, sys
from brainmigrate import exports as export
def die(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)  # killed once its temporary files are written
export.os.{call} = die
export.export(sys.argv[1], "knowledge", sys.argv[2])
"""


@pytest.mark.parametrize(("call", "where"), [("rename", "in"), ("rename", "beside")])
def test_the_next_export_removes_what_a_killed_export_left(store, tmp_path, call, where):
    import signal
    import subprocess
    import sys

    out = tmp_path / "kn"
    if where == "in":  # an existing folder: its files are staged in it
        r = run("export", "--store", str(store), "--to", "knowledge", "--output", str(out))
        assert r.exit_code == 0
        for p in out.iterdir():
            p.write_text("old\n")
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_EXPORT.format(call=call), str(store), str(out)],
        check=False,
    )
    assert killed.returncode == -signal.SIGKILL
    left = sorted(p for p in tmp_path.rglob(".*") if p.name.endswith(".tmp"))
    assert left and all(".bm" in p.name for p in left)
    (out.parent / ".kn.bm1.abcdefgh.tmp.keep").write_text("not ours: kept")
    r = run("export", "--store", str(store), "--to", "knowledge", "--output", str(out))
    assert r.exit_code == 0, r.output
    names = ", ".join(str(p) for p in left)
    assert f"  note: removed {len(left)} temporary files a killed export left: {names}\n" in (
        r.stderr
    )
    assert no_temp_files(out) and not [p for p in tmp_path.glob(".*.tmp")]
    assert (out.parent / ".kn.bm1.abcdefgh.tmp.keep").exists()
    assert len(list(out.iterdir())) == 29


def test_a_text_that_looks_like_a_block_id_round_trips(tmp_path):
    # '+ ^blk ^blk' is stored as '^blk': its brain line must not read back as empty.
    notes = tmp_path / "n.md"
    notes.write_text("+ ^blk ^blk\n+ ^abc\n  ^x1\n+ word ^blk ^blk\n", encoding="utf-8")
    store = tmp_path / "k.db"
    import_into(store, [notes], [tmp_path], tmp_path / "cache")
    assert [r[3] for r in facts_of(store)] == ["^blk", "^abc", "word"]
    out = tmp_path / "brain"
    result = run("export", "--store", str(store), "--to", "brain", "--output", str(out))
    assert result.exit_code == 0, result.output
    again = tmp_path / "again.db"
    import_into(again, [out / "n.md"], [tmp_path], tmp_path / "cache", scope="area:n")
    assert facts_of(again) == facts_of(store)


def test_an_interrupt_while_an_export_replaces_a_folder_waits_for_every_file(tmp_path):
    """SIGINT while the files of an existing folder are renamed into place: the signal is
    held until every file is in place, so the folder holds the new files, all of them, and
    no temporary file; the folder is recorded as written for the interrupt's line."""
    import signal

    from brainmigrate.exports import files
    from brainmigrate.runstate import state

    folder = tmp_path / "out"
    folder.mkdir()
    for i in range(5):
        (folder / f"f{i}.md").write_text("old\n")
    real = os.rename
    calls = []

    def rename(src, dst, **kw):
        calls.append(dst)
        if len(calls) == 1:
            os.kill(os.getpid(), signal.SIGINT)  # delivered once the renames are done
        real(src, dst, **kw)

    state.written.clear()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(files.os, "rename", rename)
        with pytest.raises(KeyboardInterrupt):
            files.publish_folder(folder, {f"f{i}.md": b"new\n" for i in range(5)})
    assert len(calls) == 5
    assert {p.name: p.read_text() for p in folder.iterdir()} == {
        f"f{i}.md": "new\n" for i in range(5)
    }
    assert state.written == [str(folder)]


@pytest.mark.parametrize("fmt", ["brain", "jsonl"])
def test_an_export_never_writes_over_the_notes_the_store_came_from(tmp_path, monkeypatch, fmt):
    """``export --output notes`` where the store was imported from notes/: an export
    keeps facts, not the headings, ``@``/``%`` lines and prose of hand-written notes, so
    writing over them is refused before anything is written; moved away, they are not
    in the way."""
    monkeypatch.chdir(tmp_path)
    shutil.copytree(SAMPLES / "notes", tmp_path / "notes")
    before = {p.name: p.read_bytes() for p in (tmp_path / "notes").iterdir()}
    roots = ["--root", str(SAMPLES / "roots/app")]
    r = CliRunner().invoke(cli.main, ["import", "notes", *roots, "--store", "k.db"])
    assert r.exit_code in (0, 1), r.output
    out = "notes" if fmt == "brain" else "notes/docker.md"
    first = "api-patterns.md" if fmt == "brain" else "docker.md"
    r = CliRunner().invoke(cli.main, ["export", "--store", "k.db", "--to", fmt, "--output", out])
    assert (r.exit_code, r.stderr) == (
        2,
        f"brainmigrate: error: --output {out}: {first} would be written over notes/{first},"
        " a notes file this store was imported from (the headings, @ and % lines and prose"
        " around its facts are not in the store); pass --output another path, or move the"
        " notes away first\n",
    )
    assert {p.name: p.read_bytes() for p in (tmp_path / "notes").iterdir()} == before
    (tmp_path / "notes").rename(tmp_path / "kept")
    (tmp_path / "notes").mkdir()
    r = CliRunner().invoke(cli.main, ["export", "--store", "k.db", "--to", fmt, "--output", out])
    assert r.exit_code == 0, r.output
