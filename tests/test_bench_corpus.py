"""A refactor keeps every output byte for byte (issue 23), on a bench corpus.

A corpus from ``bench/corpus.py`` (seed 1, 500 lines in 8 files) cites a small tree built
here (a git checkout of Python files: found, gone and past-the-end citations, declarations
the corpus names). It goes through the commands as the CLI runs them:

* ``import --dry-run --format json`` (the report),
* ``import`` into a new store (its JSON report),
* ``export --to`` each target, from that store (a file, or a folder's files in name order;
  memory with ``--fit`` to a 16 KB budget, and without it the refusal of a corpus over it),
* ``check --format json``.

Each output's bytes must equal ``golden/bench-corpus/<name>``, recorded from the code as it
was before the house-keeping of issue 23. Only what differs from run to run is written in a
fixed form: the scratch folder as ``<tmp>``, times of this run as ``<now>``. Regenerate with
``pytest tests/test_bench_corpus.py --update-golden`` only for a change of behaviour, and say
which in the commit.
"""

from __future__ import annotations

import re
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from clirun import cli
from trees import git, write

REPO = Path(__file__).resolve().parent.parent
KEPT = Path(__file__).parent / "golden" / "bench-corpus"
sys.path.insert(0, str(REPO / "bench"))
from corpus import generate  # noqa: E402

EXPORTS = ("jsonl", "brain", "knowledge", "memory")
NAMES = [
    "dry-run.json",
    "import.json",
    *(f"export-{target}.txt" for target in EXPORTS),
    "export-memory-over.txt",
    "check.json",
]
#: Declarations the corpus names (``corpus.NAMES``); the others it names are in no file.
CLASSES = ("PaymentGateway", "LedgerRepository", "WebhookHandler")
#: A fixed time for the tree's one commit, so its hash is the same in every run.
COMMITTED = "2026-01-02T03:04:05Z"


def source(i: int) -> str:
    """The ``i``-th file of the tree: about 100 lines, a class and functions."""
    name = CLASSES[i % len(CLASSES)] if i < len(CLASSES) else f"Part{i}"
    lines = [f'"""Module {i}."""', "", "", f"class {name}:"]
    for j in range(12):
        lines += [f"    def step_{j}(self, value):", f"        return value + {j}", ""]
    lines += ["", *(f"def helper_{i}_{j}(x):\n    return x * {j}\n\n" for j in range(8))]
    return "\n".join(lines)


def tree(base: Path) -> Path:
    folders = ("app", "app/payments", "lib", "tools")
    write(base, {f"{folders[i % 4]}/mod_{i}.py": source(i) for i in range(24)})
    git(base, "init", "-q")
    git(base, "add", ".")
    with pytest.MonkeyPatch.context() as m:
        m.setenv("GIT_AUTHOR_DATE", COMMITTED)
        m.setenv("GIT_COMMITTER_DATE", COMMITTED)
        git(base, "commit", "-q", "-m", "the tree")
    return base


def files_of(path: Path) -> bytes:
    """A file's bytes; a folder's files, each after a line ``== NAME (N bytes)``, by name."""
    if path.is_file():
        return path.read_bytes()
    out = b""
    for p in sorted(q for q in path.rglob("*") if q.is_file()):
        data = p.read_bytes()
        out += f"== {p.relative_to(path).as_posix()} ({len(data)} bytes)\n".encode() + data
    return out


STAMP = re.compile(rb"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")


def kept_form(data: bytes, tmp: Path, ran: tuple[datetime, datetime]) -> bytes:
    """``data`` with the scratch folder written ``<tmp>`` and the times this run wrote
    (import and update times: ISO, in UTC, to the second) written ``<now>``."""

    def now(m: re.Match) -> bytes:
        when = datetime.strptime(m[0].decode(), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
        return b"<now>" if ran[0] <= when <= ran[1] else m[0]

    return STAMP.sub(now, data.replace(str(tmp).encode(), b"<tmp>"))


@pytest.fixture(scope="module")
def outputs(tmp_path_factory) -> dict[str, bytes]:
    """Every output, by kept file name, from one run in a scratch folder."""
    tmp = tmp_path_factory.mktemp("bench-corpus")
    root = tree(tmp / "repo")
    generate(tmp / "notes", lines=500, files=8, seed=1, cite=root)
    mp = pytest.MonkeyPatch()
    mp.chdir(tmp)
    mp.setenv("BRAINMIGRATE_CACHE_DIR", str(tmp / "cache"))
    started = datetime.now(UTC).replace(microsecond=0)

    def run(*argv: str) -> bytes:
        got = cli(*argv, catch_exceptions=False)
        assert got.exit_code in (0, 1), got.output
        return got.stdout_bytes

    roots = ["--root", "repo"]
    out = {
        "dry-run.json": run("import", "notes", *roots, "--dry-run", "--format", "json"),
        "import.json": run("import", "notes", *roots, "--store", "know.db", "--format", "json"),
    }
    (tmp / "exports").mkdir()
    for target in EXPORTS:
        written = tmp / "exports" / target
        fit = ["--fit", "--total-budget", "16384"] if target == "memory" else []
        run("export", "--store", "know.db", "--to", target, "--output", str(written), *fit)
        out[f"export-{target}.txt"] = files_of(written)
    over = cli(
        "export",
        "--store",
        "know.db",
        "--to",
        "memory",
        "--output",
        "over",
        "--total-budget",
        "16384",
    )
    assert (over.exit_code, over.stdout) == (2, ""), over.output
    out["export-memory-over.txt"] = over.stderr_bytes
    out["check.json"] = run("check", "notes", *roots, "--format", "json")
    mp.undo()
    ran = (started, datetime.now(UTC).replace(microsecond=0))
    return {name: kept_form(data, tmp, ran) for name, data in out.items()}


@pytest.mark.parametrize("name", NAMES)
def test_output_is_kept(name, outputs, update_golden):
    kept = KEPT / name
    if update_golden:
        kept.parent.mkdir(exist_ok=True)
        kept.write_bytes(outputs[name])
    assert outputs[name] == kept.read_bytes()
