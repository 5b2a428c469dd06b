"""``check``'s counts mean what an import's mean: ``fact_lines`` the lines that start a
fact, ``facts`` the facts they make (docs/check.md, the JSON report)."""

from __future__ import annotations

import json
from pathlib import Path

from clirun import cli
from trees import write


def test_check_json_counts_fact_lines_and_facts_as_an_import_does(tmp_path: Path, monkeypatch):
    """``fact_lines``: the lines that start a fact; ``facts``: the facts they make, repeats
    merged -- the ``facts`` of an import of the same files into an empty store."""
    monkeypatch.chdir(tmp_path)
    write(tmp_path, {"repo/src/app.py": "X = 1\n"})
    write(
        tmp_path,
        {
            "notes/a.md": "+ the app lives in src/app.py\n+ deploys run on fridays\n",
            "notes/b.md": "+ deploys run on fridays\n! never deploy on friday 13\n",
            "notes/c.md": "+ the app lives in src/app.py\n",
        },
    )
    args = ["--root", "repo", "--isolated", "--scope", "team", "--format", "json"]
    r = cli("check", "notes", *args)
    assert r.exit_code == 0, r.output
    totals = json.loads(r.stdout)["totals"]
    assert (totals["fact_lines"], totals["facts"]) == (5, 3)
    r = cli("import", "notes", *args, "--dry-run")
    assert r.exit_code == 0, r.output
    imported = json.loads(r.stdout)["totals"]
    assert (imported["fact_lines"], imported["facts"], imported["merged"]) == (5, 3, 2)
    text = cli("check", "notes", "--root", "repo", "--isolated", "--scope", "team")
    assert text.stdout.splitlines()[-1].startswith("OK: 3 files, 5 fact lines:")
