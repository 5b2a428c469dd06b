"""The codes issue 22 added, through ``check`` and every check format: an ignored citation
is a BM105 info finding; BM204 (line past the end), BM205 (missing heading) and BM311
(merge conflict, an error in ``check``) diagnostics are findings with the registry's
severity; suppression and the baseline work on them as on the other codes.

The values come from the real resolver and notes reader, on a small root with a
``.gitignore``: what they make of other text is their tests' business; here it is what
``check`` does with these.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from clirun import invoker

from brainmigrate import check, rules
from brainmigrate.read.run import ImportOptions
from brainmigrate.reports import ci, github

NOTES = """\
+ the server writes tmp/pids/server.pid at boot
+ the loop is src/app.py:90
+ rollback in docs/ops.md#rollback-steps

<<<<<<< HEAD
+ a pool of 8
=======
+ a pool of 16
>>>>>>> feature
"""

PAST_END = "line 90 is past the end of src/app.py (3 lines)"
NO_HEADING = "no heading #rollback-steps in docs/ops.md"
CONFLICT = "unresolved merge conflict (lines 5-9); resolve it"


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    """A root ``repo/`` with ``src/app.py`` and ``docs/ops.md``, notes ``notes/ops.md``;
    ``repo/.gitignore`` ignores ``tmp/``."""
    (tmp_path / "repo/src").mkdir(parents=True)
    (tmp_path / "repo/src/app.py").write_text("a = 1\nb = 2\nc = 3\n")
    (tmp_path / "repo/docs").mkdir()
    (tmp_path / "repo/docs/ops.md").write_text("# Ops\n")
    (tmp_path / "repo/.gitignore").write_text("tmp/\n")
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes/ops.md").write_text(NOTES)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def result_of(fail_on="error", **kw) -> check.CheckResult:
    return check.run_check(["notes"], ImportOptions(roots=["repo"]), fail_on, **kw)


cli = invoker("check", "notes", "--root", "repo")


def test_the_new_codes_are_findings_with_the_registry_severity(project):
    result = result_of()
    assert [(f.code, f.severity, f.where, f.message, f.subject) for f in result.findings] == [
        (
            "BM105",
            "info",
            "notes/ops.md:1:21",
            "cites tmp/pids/server.pid, which git ignores (a runtime or build file)",
            "tmp/pids/server.pid",
        ),
        ("BM204", "warning", "notes/ops.md:2:15", PAST_END, "src/app.py"),
        ("BM205", "warning", "notes/ops.md:3:15", NO_HEADING, "docs/ops.md"),
        ("BM311", "error", "notes/ops.md:5", CONFLICT, ""),
    ]
    assert [f.code for f in result.failing] == ["BM311"]
    assert result.exit_code == 1
    assert rules.RULES["BM105"].name == "ignored-path"
    assert rules.RULES["BM311"].name == "merge-conflict"


def test_ignored_paths_never_fail_at_the_default_fail_on(project):
    (project / "notes/ops.md").write_text("+ the server writes tmp/pids/server.pid at boot\n")
    assert result_of().exit_code == 0
    assert result_of("warning").exit_code == 0
    assert result_of("info").exit_code == 1
    assert cli().exit_code == 0
    assert cli("--fail-on", "info").exit_code == 1


def test_a_committed_merge_conflict_fails_check(project):
    (project / "notes/ops.md").write_text(NOTES.split("\n\n")[1])
    done = cli()
    assert done.exit_code == 1
    assert done.output.splitlines()[0] == (
        "notes/ops.md:1: BM311 error unresolved merge conflict (lines 1-5); resolve it"
    )


def test_text_format(project):
    assert cli("--fail-on", "info").output.splitlines()[:4] == [
        "notes/ops.md:1:21: BM105 info cites tmp/pids/server.pid, which git ignores"
        " (a runtime or build file)",
        f"notes/ops.md:2:15: BM204 warning {PAST_END}",
        f"notes/ops.md:3:15: BM205 warning {NO_HEADING}",
        f"notes/ops.md:5: BM311 error {CONFLICT}",
    ]


def test_json_format(project):
    data = json.loads(ci.render(result_of(), "json"))
    assert [
        (f["code"], f["rule"], f["severity"], f["line"], f["col"], f["path"], f["fails"])
        for f in data["findings"]
    ] == [
        ("BM105", "ignored-path", "info", 1, 21, "tmp/pids/server.pid", False),
        ("BM204", "line-past-end", "warning", 2, 15, "src/app.py", False),
        ("BM205", "missing-heading", "warning", 3, 15, "docs/ops.md", False),
        ("BM311", "merge-conflict", "error", 5, None, None, True),
    ]
    assert data["totals"]["by_code"] == {"BM105": 1, "BM204": 1, "BM205": 1, "BM311": 1}
    assert data["totals"]["by_severity"] == {"error": 1, "warning": 2, "info": 1}
    assert data["exit_code"] == 1


def test_sarif_format(project):
    run = json.loads(ci.render(result_of(), "sarif"))["runs"][0]
    by_id = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
    assert {c: by_id[c]["defaultConfiguration"]["level"] for c in ("BM105", "BM204", "BM311")} == {
        "BM105": "note",
        "BM204": "warning",
        "BM311": "error",
    }
    assert [(r["ruleId"], r["level"]) for r in run["results"]] == [
        ("BM105", "note"),
        ("BM204", "warning"),
        ("BM205", "warning"),
        ("BM311", "error"),
    ]
    first = run["results"][0]
    assert first["message"]["text"] == (
        "cites tmp/pids/server.pid, which git ignores (a runtime or build file)"
    )
    assert first["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 1,
        "startColumn": 21,
    }


def test_github_format(project):
    lines = github.github(result_of(), token="t0k").splitlines()
    assert lines[:4] == [
        "::notice file=notes/ops.md,line=1,col=21,title=BM105 ignored-path::cites"
        " tmp/pids/server.pid, which git ignores (a runtime or build file)",
        f"::warning file=notes/ops.md,line=2,col=15,title=BM204 line-past-end::{PAST_END}",
        f"::warning file=notes/ops.md,line=3,col=15,title=BM205 missing-heading::{NO_HEADING}",
        f"::error file=notes/ops.md,line=5,title=BM311 merge-conflict::{CONFLICT}",
    ]


def test_gitlab_format(project):
    issues = json.loads(ci.render(result_of(), "gitlab"))
    assert [(i["check_name"], i["severity"], i["location"]["lines"]["begin"]) for i in issues] == [
        ("BM105 ignored-path", "info", 1),
        ("BM204 line-past-end", "minor", 2),
        ("BM205 missing-heading", "minor", 3),
        ("BM311 merge-conflict", "major", 5),
    ]


def test_junit_format(project):
    root = ET.fromstring(ci.render(result_of(), "junit"))
    suite = root.find("testsuite")
    cases = [(c.get("name"), c.find("failure")) for c in suite.findall("testcase")]
    # only the conflict fails at --fail-on error; it belongs to no fact: the file's case
    assert [(name, f.get("type") if f is not None else None) for name, f in cases] == [
        ("line 1: the server writes tmp/pids/server.pid at boot", None),
        ("line 2: the loop is src/app.py:90", None),
        ("line 3: rollback in docs/ops.md#rollback-steps", None),
        ("line 6: a pool of 8", None),
        ("line 8: a pool of 16", None),
        ("(file)", "BM311"),
    ]
    info = ET.fromstring(ci.render(result_of("info"), "junit")).find("testsuite")
    assert info.get("failures") == "4"


def test_markdown_format(project):
    out = ci.render(result_of(), "markdown")
    assert (
        "| notes/ops.md:1:21 | BM105 | info | cites tmp/pids/server.pid, which git ignores"
        " (a runtime or build file) |"
    ) in out.splitlines()
    assert f"| notes/ops.md:5 | BM311 | error (fails) | {CONFLICT} |" in out.splitlines()


def test_statistics_name_the_new_codes(project):
    assert ci.statistics(result_of(), quiet=True).splitlines() == [
        "1 BM105 info ignored-path",
        "1 BM204 warning line-past-end",
        "1 BM205 warning missing-heading",
        "1 BM311 error merge-conflict",
    ]


def test_suppression_waives_the_new_codes(project):
    (project / "notes/ops.md").write_text(
        "+ the server writes tmp/pids/server.pid at boot <!-- brainmigrate: ignore BM105 -->\n"
        "+ the loop is src/app.py:90 <!-- brainmigrate: ignore BM2 -->\n"
    )
    result = result_of("info")
    assert [(f.code, f.suppressed, f.suppressed_by) for f in result.findings] == [
        ("BM105", True, "ignore BM105"),
        ("BM204", True, "ignore BM2"),
    ]
    assert result.exit_code == 0


def test_select_and_ignore_the_new_codes(project):
    result = result_of(select=rules.Selection(ignore=("BM105", "BM20")))
    assert [f.code for f in result.findings] == ["BM311"]


def test_the_baseline_holds_a_merge_conflict_while_lines_above_move(project, monkeypatch):
    assert cli("--baseline", "bl.json", "--update-baseline").exit_code == 0
    held = json.loads((project / "bl.json").read_text())
    assert sorted(e["code"] for e in held["entries"]) == ["BM105", "BM204", "BM205", "BM311"]
    # two lines more above every finding: the conflict is now at lines 7-11
    (project / "notes/ops.md").write_text("# Ops\n\n" + NOTES)
    result = result_of(baseline="bl.json")
    assert [(f.code, f.line, f.baselined) for f in result.findings] == [
        ("BM105", 3, True),
        ("BM204", 4, True),
        ("BM205", 5, True),
        ("BM311", 7, True),
    ]
    assert result.exit_code == 0


@pytest.mark.parametrize(
    ("code", "message", "subject"),
    [
        ("BM204", "line 12 is past the end of docs/My Notes.md (1 line)", "docs/My Notes.md"),
        ("BM204", "line 7 is past the end of a.py (0 lines)", "a.py"),
        ("BM205", "no heading #setup-in-ci in docs/ci in depth.md", "docs/ci in depth.md"),
        ("BM205", "a heading is missing", ""),
        ("BM303", "code fence never closed", ""),
    ],
)
def test_a_line_or_fragment_finding_names_its_cited_path(code, message, subject):
    from brainmigrate.model import Diagnostic

    d = Diagnostic("n.md", 3, code, "warning", message, 5)
    f = check._diagnostic_finding(d, None, {"n.md": "area:n"})
    assert (f.subject, f.scope, f.where) == (subject, "area:n", "n.md:3:5")
    assert f.fingerprint == rules.finding_key(code, "area:n", message, subject)
