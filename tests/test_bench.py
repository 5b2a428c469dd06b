"""Every ``bench/`` script still runs: each on a tiny input (its own options: a few lines,
one round, small trees built here), as a whole process, exiting 0. What it measures is not
checked (on such inputs its bars mean nothing); that it runs to its end is."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from trees import write

REPO = Path(__file__).resolve().parent.parent
BENCH = REPO / "bench"

#: Each script's arguments: ``{tree}`` is a folder of six small Python files, ``{go}`` one of
#: six Go files, ``{out}`` a folder to write in. A script with no case here fails the test.
CASES = {
    "corpus.py": ["{out}/corpus", "--lines", "100", "--files", "2"],
    "bench_check.py": ["--lines", "100", "--files", "2", "--repeat", "1"],
    "bench_export.py": ["--facts", "100", "--queries", "3"],
    "bench_history.py": ["--commits", "120", "--files", "20", "--notes", "10", "--repeat", "1"],
    "bench_import.py": ["--lines", "100", "--files", "2"],
    "bench_import_rows.py": ["--lines", "100", "--files", "2", "--rounds", "1", "--tree", "{tree}"],
    "bench_index.py": ["--tree", "{tree}", "--names", "2", "--repeat", "1"],
    "bench_memory.py": ["--scale", "0.0001"],
    "bench_lsp.py": ["--lines", "50", "--repeat", "1"],
    "bench_merge.py": ["--facts", "40", "--repeat", "1"],
    # without universal-ctags, its ctags rows say how to install it; the run goes on
    "bench_roots.py": ["--files", "30", "--seeds", "0,1", "--rounds", "1"],
    "bench_names.py": ["--tree", "{go}", "--names", "2", "--rounds", "1"],
    # without lychee, remark-validate-links or markdown-link-check, it says how to install
    # each and times brainmigrate alone
    "bench_peers.py": ["--quick"],
    "bench_read.py": ["--lines", "100", "--files", "2", "--repeat", "1"],
    "bench_serve.py": "--facts 200 --writers 2 --puts 5 --readers 2 --seconds 0.5".split(),
    "bench_stale.py": ["--tree", "{tree}", "--files", "5", "--facts", "30", "--repeat", "1"],
    "bench_startup.py": ["--rounds", "1"],
    # a generated store of 50 facts, served by brainmigrate mcp, 5 searches
    "serve_mcp.py": ["--facts", "50", "--n", "5"],
    "notes_tree.py": ["{out}/tree", "--notes-lines", "60", "--tree-files", "80", "--commits", "30"],
    "fuzz.py": ["--examples", "5", "--workers", "1", "--store-every", "2"],
}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> dict[str, str]:
    base = tmp_path_factory.mktemp("bench")
    write(
        base / "tree",
        {
            f"pkg/m{i}.py": f"class WidgetMaker{i}:\n    def run(self):\n        return {i}\n"
            for i in range(6)
        },
    )
    write(
        base / "go",
        {
            f"t{i}.go": f"package main\n\ntype ThingMaker{i} struct{{}}\n\n"
            f"func (t ThingMaker{i}) Run() int {{ return {i} }}\n"
            for i in range(6)
        },
    )
    (base / "out").mkdir()
    return {"tree": str(base / "tree"), "go": str(base / "go"), "out": str(base / "out")}


def test_every_bench_script_has_a_case():
    assert sorted(p.name for p in BENCH.glob("*.py")) == sorted(CASES)


@pytest.mark.parametrize("script", sorted(CASES))
def test_bench_script_runs_on_a_tiny_input(script, inputs, tmp_path):
    args = [a.format(**inputs) for a in CASES[script]]
    env = {**os.environ, "TMPDIR": str(tmp_path)}  # what a script leaves in its temp folder
    done = subprocess.run(
        [sys.executable, str(BENCH / script), *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip(), "it printed no figures"
