"""A SUPERSEDED fact records history: the paths it cites that are gone now are told
(BM101 at severity info), never a failure of ``check`` (docs/check.md, "Finding codes")."""

from __future__ import annotations

import json
from pathlib import Path

from clirun import cli
from trees import write


def test_a_superseded_facts_gone_path_is_info_and_passes(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path, {"repo/src/convert/base.py": "def convert_all():\n    return 1\n"})
    write(
        tmp_path,
        {
            "notes/conv.md": (
                "! SUPERSEDED the converters lived in src/converters.py before the split\n"
                "+ the converters live in src/convert/base.py\n"
                "+ the old loader is in src/loader.py\n"
            )
        },
    )
    r = cli("check", "notes/conv.md", "--root", "repo", "--isolated", "--format", "json")
    assert r.exit_code == 1, r.output  # the active fact's gone path still fails
    findings = json.loads(r.stdout)["findings"]
    assert [(f["line"], f["code"], f["severity"], f["fails"], f["message"]) for f in findings] == [
        (
            1,
            "BM101",
            "info",
            False,
            "cites src/converters.py, which no root holds"
            " (the fact is SUPERSEDED: history, not a fault)",
        ),
        (3, "BM101", "error", True, "cites src/loader.py, which no root holds"),
    ]
    write(tmp_path, {"notes/conv.md": "! SUPERSEDED converters were in src/converters.py\n"})
    r = cli("check", "notes/conv.md", "--root", "repo", "--isolated")
    assert r.exit_code == 0, r.output
    assert "BM101 info cites src/converters.py" in r.stdout
    r = cli("check", "notes/conv.md", "--root", "repo", "--isolated", "--fail-on", "info")
    assert r.exit_code == 1, r.output
