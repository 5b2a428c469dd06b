"""Speed work keeps every output byte for byte (issue 14).

A bench corpus (``bench/corpus.py``, seed 1, every line class of SPEC.md §Notation) is run
through the commands users run, as the CLI runs them, against the sample checkouts:

* ``import --dry-run --format json`` (the report),
* ``import`` into a new store, then the store's rows (every table, in key order),
* the same ``import`` again (nothing new: the re-import's JSON report),
* ``check --format json`` and ``check`` text,
* ``index --format json`` of the sample checkout and of a name lookup.

Each output must equal ``golden/kept/<name>``, recorded before the speed work: a faster
path that changes one byte fails here. Regenerate with
``pytest tests/test_kept_outputs.py --update-golden`` only for a change of behaviour, and
say which in the commit.
"""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from brainmigrate import knowledge
from brainmigrate.cli import main

REPO = Path(__file__).resolve().parent.parent
KEPT = Path(__file__).parent / "golden" / "kept"
sys.path.insert(0, str(REPO / "bench"))
from corpus import generate  # noqa: E402

ROOTS = ["--root", "app", "--root", "infra"]


@pytest.fixture(scope="module")
def outputs(tmp_path_factory) -> dict[str, str]:
    """Every kept output, by file name, from one run in a scratch folder."""
    tmp = tmp_path_factory.mktemp("kept")
    generate(tmp / "notes", lines=1500, files=5, seed=1)
    for root in ("app", "infra"):
        shutil.copytree(REPO / "samples" / "roots" / root, tmp / root)
    mp = pytest.MonkeyPatch()
    # the copies are not in a git checkout; history must not come from this one either
    mp.setattr(knowledge, "git_history", lambda root, cache_dir=None: None)
    mp.chdir(tmp)
    mp.setenv("BRAINMIGRATE_CACHE_DIR", str(tmp / "cache"))
    runner = CliRunner()
    started = datetime.now(UTC).replace(microsecond=0)

    def run(*argv: str) -> str:
        got = runner.invoke(main, [*argv, "--no-progress"], catch_exceptions=False)
        assert got.exit_code in (0, 1), got.output
        return got.stdout

    out = {
        "dry-run.json": run("import", "notes", *ROOTS, "--dry-run", "--format", "json"),
        "import.json": run("import", "notes", *ROOTS, "--store", "know.db", "--format", "json"),
        "store.txt": store_rows(tmp / "know.db"),
        "reimport.json": run("import", "notes", *ROOTS, "--store", "know.db", "--format", "json"),
        "check.json": run("check", "notes", *ROOTS, "--format", "json"),
        "check.txt": run("check", "notes", *ROOTS),
        "index.json": run("index", "--root", "app", "--format", "json"),
        "names.json": run(
            "index",
            "--root",
            "app",
            "--name",
            "PaymentGateway",
            "--name",
            "RetryPolicy",
            "--format",
            "json",
        ),
    }
    mp.undo()
    ran = (started, datetime.now(UTC).replace(microsecond=0))
    return {name: kept_form(name, text, tmp, ran) for name, text in out.items()}


#: What an index report says of the work it did (time, cache use): a speed change may
#: change these; what it found may not.
WORK_KEYS = ("seconds", "parsed", "cache_hits", "cache_status", "cache_path")


STAMP = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")


def kept_form(name: str, text: str, tmp: Path, ran: tuple[datetime, datetime]) -> str:
    """``text`` with the scratch folder written ``<tmp>`` and the times this run wrote
    (import and update times) written ``<now>``; for index reports, without
    ``WORK_KEYS``."""

    def now(m: re.Match) -> str:
        when = datetime.strptime(m[0], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
        return "<now>" if ran[0] <= when <= ran[1] else m[0]

    text = STAMP.sub(now, text.replace(str(tmp), "<tmp>"))
    if name.startswith(("index", "names")):
        data = json.loads(text)
        for key in WORK_KEYS:
            data.pop(key, None)
        text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    return text


def store_rows(db: Path) -> str:
    """Every row of every table of the store, tables by name and rows sorted, one per line
    (FTS5's own shadow tables left out: their bytes are SQLite's business)."""
    con = sqlite3.connect(db)
    lines = []
    names = [
        r[0]
        for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
    ]
    shadows = {n for n in names for base in names if n.startswith(base + "_") and n != base}
    for name in names:
        if name in shadows or name.startswith("sqlite_"):
            continue
        rows = sorted(repr(r) for r in con.execute(f'SELECT * FROM "{name}"'))
        lines.append(f"== {name} ({len(rows)} rows)")
        lines.extend(rows)
    con.close()
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    "name",
    [
        "dry-run.json",
        "import.json",
        "store.txt",
        "reimport.json",
        "check.json",
        "check.txt",
        "index.json",
        "names.json",
    ],
)
def test_output_is_kept(name, outputs, update_golden):
    kept = KEPT / name
    if update_golden:
        kept.parent.mkdir(exist_ok=True)
        kept.write_text(outputs[name], encoding="utf-8")
    assert outputs[name] == kept.read_text(encoding="utf-8")
