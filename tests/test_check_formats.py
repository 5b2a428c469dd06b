"""Report formats of ``brainmigrate check``: text, json, github, sarif, junit, markdown,
gitlab."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from clirun import invoker

from brainmigrate import check, rules
from brainmigrate.cli import main
from brainmigrate.read.run import ImportOptions
from brainmigrate.reports import ci, github, gitlab, sarif

SARIF_SCHEMA = Path(__file__).resolve().parents[2] / "shared" / "data" / "sarif-schema-2.1.0.json"

NOTES = """\
+ found app/Main.kt
+ gone app/Old.kt
  and app/__init__.py too
! outside /etc/hosts.conf
+ loader app/Legacy.kt <!-- brainmigrate: allow-gone -->
"""


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    (tmp_path / "repo/app").mkdir(parents=True)
    (tmp_path / "repo/app/Main.kt").write_text("class Main\n")
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes/docker.md").write_text(NOTES)
    (tmp_path / "notes/empty.md").write_text("# nothing here\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def result_of(paths=("notes",), fail_on="error", **kw) -> check.CheckResult:
    return check.run_check(list(paths), ImportOptions(roots=["repo"]), fail_on, **kw)


cli = invoker("check")


# ------------------------------------------------------------------------------ interface


def test_every_format_has_a_formatter_and_the_cli_offers_each():
    assert set(ci.FORMATTERS) == set(ci.Format)
    option = next(p for p in main.commands["check"].params if p.name == "formats")
    assert list(option.type.choices) == [f.value for f in ci.Format]


@pytest.mark.parametrize("fmt", list(ci.Format))
def test_every_formatter_renders_a_result(project, fmt):
    out = ci.render(result_of(), fmt)
    assert out.endswith("\n")
    assert "app/Old.kt" in out


def test_render_rejects_an_unknown_format(project):
    with pytest.raises(ValueError):
        ci.render(result_of(), "html")


def test_plan_pairs_formats_and_outputs_by_position():
    assert ci.plan([], []) == [(ci.Format.TEXT, None)]
    assert ci.plan(["json", "sarif", "text"], ["r.json", "r.sarif"]) == [
        (ci.Format.JSON, "r.json"),
        (ci.Format.SARIF, "r.sarif"),
        (ci.Format.TEXT, None),
    ]
    assert ci.plan(["json", "text"], ["-", "r.txt"]) == [
        (ci.Format.JSON, None),
        (ci.Format.TEXT, "r.txt"),
    ]
    with pytest.raises(ValueError, match="would all go to stdout"):
        ci.plan(["json", "text"], [])
    with pytest.raises(ValueError, match="--output given 2 times for 1 --format"):
        ci.plan(["json"], ["a", "b"])


def test_cli_writes_each_report_to_its_output(project):
    got = cli(
        "notes", "--root", "repo",
        "--format", "json", "--output", "r.json",
        "--format", "sarif", "--output", "r.sarif",
        "--format", "text",
    )  # fmt: skip
    assert got.exit_code == 1
    assert got.output.startswith("notes/docker.md:2:8: BM101 error cites app/Old.kt")
    assert json.loads((project / "r.json").read_text())["totals"]["failing"] == 2
    assert json.loads((project / "r.sarif").read_text())["version"] == "2.1.0"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--format", "json", "--format", "text"], "would all go to stdout"),
        (["--output", "a", "--output", "b"], "--output given 2 times for 1 --format"),
        (["--format", "html"], "html"),
    ],
)
def test_cli_output_usage_errors_exit_2(project, args, message):
    got = cli("notes", "--root", "repo", *args)
    assert got.exit_code == 2
    assert message in got.output
    assert not (project / "a").exists()


# ------------------------------------------------------------------------------ text


def test_text_lines(project):
    got = cli("notes", "--root", "repo")
    assert got.output.splitlines() == [
        "notes/docker.md:2:8: BM101 error cites app/Old.kt, which no root holds",
        "notes/docker.md:3:7: BM101 error cites app/__init__.py, which no root holds",
        "notes/docker.md:4:11: BM102 warning cites /etc/hosts.conf, outside every root "
        "(absolute path under no root)",
        "notes/docker.md:5:10: BM101 error cites app/Legacy.kt, which no root holds [suppressed]",
        "FAILED: 2 files, 4 fact lines: 4 findings (3 error, 1 warning, 0 info); "
        "2 failing at --fail-on error; 1 suppressed; 0 in the baseline",
    ]


# ------------------------------------------------------------------------------ json


def test_json_is_versioned_sorted_and_deterministic(project):
    first = ci.render(result_of(), "json")
    assert first == ci.render(result_of(), "json")
    data = json.loads(first)
    assert first == json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    assert data["schema_version"] == 1
    assert data["exit_code"] == 1
    assert data["files"] == ["notes/docker.md", "notes/empty.md"]
    assert data["totals"]["suppressed"] == 1
    assert data["baseline"] is None
    assert data["findings"][0] == {
        "baselined": False,
        "code": "BM101",
        "col": 8,
        "end_col": None,  # issue 29: no fix, no end column
        "fact_line": 2,
        "fails": True,
        "file": "notes/docker.md",
        "fix": None,
        "fingerprint": rules.finding_key(
            "BM101", "area:docker", "gone app/Old.kt and app/__init__.py too", "app/Old.kt"
        ),
        "hint": None,
        "line": 2,
        "message": "cites app/Old.kt, which no root holds",
        "path": "app/Old.kt",
        "rule": "gone-path",
        "scope": "area:docker",
        "severity": "error",
        "suppressed": False,
    }


def test_json_reports_the_baseline(project):
    result_of(baseline="bl.json", update_baseline=True)
    (project / "notes/docker.md").write_text(NOTES.replace("! outside /etc/hosts.conf\n", ""))
    data = json.loads(ci.render(result_of(baseline="bl.json"), "json"))
    assert data["baseline"]["matched"] == 2
    assert data["baseline"]["updated"] is False
    assert [(e["code"], e["path"]) for e in data["baseline"]["vanished"]] == [
        ("BM102", "/etc/hosts.conf")
    ]
    assert data["exit_code"] == 0


# ------------------------------------------------------------------------------ github


def test_github_escapes_data_and_properties():
    f = rules.Finding(
        "BM101",
        "error",
        "notes/a,b:c%\r\n.md",
        3,
        5,
        "cites x%y, z:w\r\nnext",
        hint=rules.Hint("p:q,r.kt", "similar"),
    )
    assert github.github_command(f) == (
        "::error file=notes/a%2Cb%3Ac%25%0D%0A.md,line=3,col=5,title=BM101 gone-path::"
        "cites x%25y, z:w%0D%0Anext; moved? p:q,r.kt (the closest path)"
    )
    assert github.escape_data("100%\r\n:,") == "100%25%0D%0A:,"
    assert github.escape_property("100%\r\n:,") == "100%25%0D%0A%3A%2C"


def token(output: str) -> str:
    """The token of the one ``::stop-commands::`` line of a github report."""
    (line,) = [x for x in output.splitlines() if x.startswith("::stop-commands::")]
    found = line.removeprefix("::stop-commands::")
    assert re.fullmatch("[0-9a-f]{32}", found)
    return found


def test_github_lines_of_a_run(project):
    (project / "notes/a,b:c.md").write_text("+ cites app/100%/x.kt\n? ambiguous\n")
    got = cli("notes", "--root", "repo", "--format", "github")
    assert got.exit_code == 1
    assert got.output.splitlines() == [
        "::error file=notes/a%2Cb%3Ac.md,line=1,col=9,title=BM101 gone-path::"
        "cites app/100%25/x.kt, which no root holds",
        "::error file=notes/docker.md,line=2,col=8,title=BM101 gone-path::"
        "cites app/Old.kt, which no root holds",
        "::error file=notes/docker.md,line=3,col=7,title=BM101 gone-path::"
        "cites app/__init__.py, which no root holds",
        "::warning file=notes/docker.md,line=4,col=11,title=BM102 outside-root::"
        "cites /etc/hosts.conf, outside every root (absolute path under no root)",
        f"::stop-commands::{token(got.output)}",
        "brainmigrate check: 3 files, 6 fact lines: 5 findings (4 error, 1 warning, 0 info); "
        "3 failing at --fail-on error; 1 suppressed; 0 in the baseline",
        f"::{token(got.output)}::",
    ]


def test_github_annotates_10_per_kind_and_summarizes_the_rest(project):
    lines = [f"+ gone app/Gone{i:02d}.kt" for i in range(12)]
    (project / "notes/many.md").write_text("\n\n".join(lines) + "\n")
    summary = project / "summary.md"
    summary.write_text("earlier step\n")
    got = cli(
        "notes/many.md", "--root", "repo", "--format", "github",
        env={"GITHUB_STEP_SUMMARY": str(summary)},
    )  # fmt: skip
    out = got.output.splitlines()
    assert sum(line.startswith("::error ") for line in out) == 10
    assert out[10] == f"::stop-commands::{token(got.output)}"
    assert out[11] == "2 more findings (GitHub shows 10 annotations of each kind):"
    assert out[12:14] == [
        "notes/many.md:21:8: BM101 cites app/Gone10.kt, which no root holds",
        "notes/many.md:23:8: BM101 cites app/Gone11.kt, which no root holds",
    ]
    assert out[15:] == [f"::{token(got.output)}::"]
    text = summary.read_text()
    assert text.startswith("earlier step\n## brainmigrate check: 2 more findings\n")
    assert "these 2 are not annotated" in text
    assert "| notes/many.md:21:8 | BM101 | error (fails) | cites app/Gone10.kt" in text
    assert "Gone09" not in text


def test_no_step_summary_without_overflow(project):
    summary = project / "summary.md"
    cli("notes", "--root", "repo", "--format", "github", env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert not summary.exists()


# ------------------------------------------------------------------------------ sarif


def test_sarif_validates_against_the_2_1_0_schema(project):
    if not SARIF_SCHEMA.is_file():
        pytest.skip(f"SARIF schema not found at {SARIF_SCHEMA} (shared/ beside the clone)")
    import jsonschema

    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    data = json.loads(ci.render(result_of(baseline="bl.json", update_baseline=True), "sarif"))
    jsonschema.validators.validator_for(schema)(schema).validate(data)
    data = json.loads(ci.render(result_of(), "sarif"))
    jsonschema.validators.validator_for(schema)(schema).validate(data)


def test_sarif_results(project):
    data = json.loads(ci.render(result_of(), "sarif"))
    run = data["runs"][0]
    driver_rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in driver_rules] == list(rules.RULES)
    results = run["results"]
    assert [(r["ruleId"], driver_rules[r["ruleIndex"]]["id"], r["level"]) for r in results] == [
        ("BM101", "BM101", "error"),
        ("BM101", "BM101", "error"),
        ("BM102", "BM102", "warning"),
        ("BM101", "BM101", "error"),
    ]
    assert results[0]["locations"] == [
        {
            "physicalLocation": {
                "artifactLocation": {"uri": "notes/docker.md"},
                "region": {"startLine": 2, "startColumn": 8},
            }
        }
    ]
    assert results[3]["suppressions"][0]["kind"] == "inSource"
    assert "suppressions" not in results[0]
    assert run["properties"]["suppressed"] == 1
    assert "baselineState" not in results[0]


def test_sarif_fingerprints_hold_no_line_numbers(project):
    before = json.loads(ci.render(result_of(), "sarif"))["runs"][0]["results"][0]
    (project / "notes/docker.md").write_text("\n\n\n" + NOTES)
    after = json.loads(ci.render(result_of(), "sarif"))["runs"][0]["results"][0]
    assert after["locations"][0]["physicalLocation"]["region"]["startLine"] == 5
    assert before["partialFingerprints"] == after["partialFingerprints"]
    assert list(before["partialFingerprints"]) == ["brainmigrate/v1"]


def test_sarif_baseline_state(project):
    result_of(baseline="bl.json", update_baseline=True)
    (project / "notes/docker.md").write_text(NOTES + "+ new app/New.kt\n")
    results = json.loads(ci.render(result_of(baseline="bl.json"), "sarif"))["runs"][0]["results"]
    assert [(r["message"]["text"].split(",")[0], r.get("baselineState")) for r in results] == [
        ("cites app/Old.kt", "unchanged"),
        ("cites app/__init__.py", "unchanged"),
        ("cites /etc/hosts.conf", "unchanged"),
        ("cites app/Legacy.kt", "new"),
        ("cites app/New.kt", "new"),
    ]


# ------------------------------------------------------------------------------ junit


def test_junit_suites_per_file_and_cases_per_fact(project):
    root = ET.fromstring(ci.render(result_of(), "junit"))
    assert root.tag == "testsuites"
    assert (root.get("tests"), root.get("failures")) == ("4", "1")
    suites = root.findall("testsuite")
    assert [(s.get("name"), s.get("tests"), s.get("failures")) for s in suites] == [
        ("notes/docker.md", "4", "1"),
        ("notes/empty.md", "0", "0"),
    ]
    cases = suites[0].findall("testcase")
    assert [(c.get("name"), c.get("line")) for c in cases] == [
        ("line 1: found app/Main.kt", "1"),
        ("line 2: gone app/Old.kt and app/__init__.py too", "2"),
        ("line 4: outside /etc/hosts.conf", "4"),
        ("line 5: loader app/Legacy.kt", "5"),
    ]
    failure = cases[1].find("failure")
    assert failure.get("type") == "BM101"
    assert failure.get("message") == "BM101 cites app/Old.kt, which no root holds"
    assert failure.text.splitlines() == [
        "notes/docker.md:2:8: BM101 cites app/Old.kt, which no root holds",
        "notes/docker.md:3:7: BM101 cites app/__init__.py, which no root holds",
    ]
    assert cases[3].find("failure") is None  # suppressed
    props = {p.get("name"): p.get("value") for p in suites[0].iter("property")}
    assert props == {"fail-on": "error", "suppressed": "1", "baselined": "0"}


def test_junit_failures_follow_fail_on(project):
    root = ET.fromstring(ci.render(result_of(fail_on="warning"), "junit"))
    assert root.get("failures") == "2"


def test_junit_file_findings_and_control_characters(project):
    (project / "notes/odd.md").write_text("+ bell \x07 here\n```\nopen fence\n")
    root = ET.fromstring(ci.render(result_of(["notes/odd.md"], fail_on="info"), "junit"))
    cases = root.find("testsuite").findall("testcase")
    assert [c.get("name") for c in cases] == ["line 1: bell \ufffd here", "(file)"]
    assert cases[1].find("failure").get("type") == "BM303"


def test_text_keeps_one_finding_on_one_line(project):
    """A notes file named with a tab, a newline and a right-to-left override: its findings
    are still one line each, and nothing in them reorders or breaks the line."""
    name = "notes/a\tb\nfake.md:1:1: BM101 error x \u202ecod.md"
    (project / name).write_text("+ see app/Gone.kt\n")
    out = ci.render(result_of([name]), "text")
    [line] = [ln for ln in out.splitlines() if "Gone.kt" in ln]
    assert line.startswith("notes/a\ufffdb\ufffdfake.md:1:1: BM101 error x \ufffdcod.md:1:7: ")
    assert not any(c in out for c in "\t\u202e")


# ------------------------------------------------------------------------------ markdown


def test_markdown_report(project):
    (project / "notes/odd.md").write_text("+ see app/a|1_c.kt\n")
    out = ci.render(result_of(), "markdown").splitlines()
    assert out[0] == "## brainmigrate check: 3 failing"
    assert out[2] == (
        "3 files, 5 fact lines: 5 findings (4 error, 1 warning, 0 info); 3 failing at --fail-on "
        "error; 1 suppressed; 0 in the baseline"
    )
    assert out[4:6] == ["| Where | Code | Severity | Finding |", "| --- | --- | --- | --- |"]
    assert out[7] == (
        "| notes/docker.md:3:7 | BM101 | error (fails) | cites app/\\_\\_init\\_\\_.py, "
        "which no root holds |"
    )
    assert out[9] == (
        "| notes/docker.md:5:10 | BM101 | error | cites app/Legacy.kt, which no root holds "
        "(suppressed) |"
    )
    assert out[10] == (
        "| notes/odd.md:1:7 | BM101 | error (fails) | cites app/a\\|1\\_c.kt, which no root holds |"
    )


def test_markdown_without_findings(project):
    out = ci.render(result_of(["notes/empty.md"]), "markdown")
    assert out.splitlines()[0] == "## brainmigrate check: passed"
    assert "No findings." in out


def test_github_never_lets_text_from_the_notes_reach_the_command_channel(project, monkeypatch):
    facts = [f"+ gone app/Gone{i:02d}.kt" for i in range(10)]
    facts += ["+ forged ##[error]app/Forged.kt", "+ forged ::error::x/Forged2.kt"]
    (project / "notes/::warning::x.md").write_text("\n\n".join(facts) + "\n")
    # known to the root by their file names: gone (errors), not unresolved (warnings)
    (project / "repo/lib").mkdir(exist_ok=True)
    (project / "repo/lib/Forged.kt").write_text("class Forged\n")
    (project / "repo/lib/Forged2.kt").write_text("class Forged2\n")
    monkeypatch.chdir(project / "notes")
    got = cli("::warning::x.md", "--root", "../repo", "--format", "github")
    assert got.exit_code == 1
    out = got.output.splitlines()
    tok = token(got.output)
    start = out.index(f"::stop-commands::{tok}")
    command = re.compile(r"::error (file=[^:,]*,line=[0-9]+,col=[0-9]+,title=[^:,]*)::(.*)")
    for line in out[:start]:
        m = command.fullmatch(line)
        assert m, line
        assert m.group(1).startswith("file=%3A%3Awarning%3A%3Ax.md,line=")
    assert out[start:] == [
        f"::stop-commands::{tok}",
        "2 more findings (GitHub shows 10 annotations of each kind):",
        "::warning::x.md:21:10: BM101 cites ##[error]app/Forged.kt, which no root holds;"
        " moved? lib/Forged.kt (the only file of that name)",
        "::warning::x.md:23:10: BM101 cites ::error::x/Forged2.kt, which no root holds;"
        " moved? lib/Forged2.kt (the only file of that name)",
        "brainmigrate check: 1 file, 12 fact lines: 12 findings (12 error, 0 warning, 0 info);"
        " 12 failing at --fail-on error; 0 suppressed; 0 in the baseline",
        f"::{tok}::",
    ]


def test_github_token_is_never_part_of_the_text_it_encloses():
    from brainmigrate import check as check_mod

    result = check_mod.CheckResult(files=(), facts=[], findings=())
    got = github.github(result, token="0")  # "0" stands in the counts: another token is drawn
    lines = got.splitlines()
    tok = lines[0].removeprefix("::stop-commands::")
    assert tok != "0" and lines[-1] == f"::{tok}::"


# ------------------------------------------------------------------------------ gitlab

#: The fields GitLab documents for a Code Quality report (docs.gitlab.com, "Code Quality",
#: "Code Quality report format"): every issue must have these, of these types.
GITLAB_SCHEMA = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["description", "check_name", "fingerprint", "severity", "location"],
        "properties": {
            "description": {"type": "string", "minLength": 1},
            "check_name": {"type": "string", "minLength": 1},
            "fingerprint": {"type": "string", "minLength": 1},
            "severity": {"enum": ["info", "minor", "major", "critical", "blocker"]},
            "location": {
                "type": "object",
                "required": ["path", "lines"],
                "properties": {
                    "path": {"type": "string", "minLength": 1},
                    "lines": {
                        "type": "object",
                        "required": ["begin"],
                        "properties": {"begin": {"type": "integer", "minimum": 1}},
                    },
                },
            },
        },
    },
}


def test_gitlab_code_quality_report(project):
    import jsonschema

    (project / "notes/twice.md").write_text("+ gone app/Old.kt\n+ gone app/Old.kt\n")
    got = cli("notes", "--root", "repo", "--format", "gitlab")
    assert got.exit_code == 1
    issues = json.loads(got.stdout)
    jsonschema.validate(issues, GITLAB_SCHEMA)
    assert [
        (i["check_name"], i["severity"], i["location"]["path"], i["location"]["lines"]["begin"])
        for i in issues
    ] == [
        ("BM101 gone-path", "major", "notes/docker.md", 2),
        ("BM101 gone-path", "major", "notes/docker.md", 3),
        ("BM102 outside-root", "minor", "notes/docker.md", 4),
        ("BM101 gone-path", "major", "notes/twice.md", 1),
        ("BM101 gone-path", "major", "notes/twice.md", 2),
    ]  # the suppressed app/Legacy.kt is no issue
    assert issues[0]["description"] == "BM101 cites app/Old.kt, which no root holds"
    assert len({i["fingerprint"] for i in issues}) == 5  # the two repeats stay distinct


def test_gitlab_fingerprints_hold_no_line_numbers_and_skip_the_baseline(project):
    before = json.loads(ci.render(result_of(), "gitlab"))
    (project / "notes/docker.md").write_text("\n\n" + NOTES)
    after = json.loads(ci.render(result_of(), "gitlab"))
    assert [i["fingerprint"] for i in before] == [i["fingerprint"] for i in after]
    assert after[0]["location"]["lines"]["begin"] == 4
    result_of(baseline="bl.json", update_baseline=True)
    assert json.loads(ci.render(result_of(baseline="bl.json"), "gitlab")) == []


def test_gitlab_severity_of_each_level():
    finding = rules.Finding("BM201", "info", "n.md", None, None, "x")
    result = check.CheckResult(("n.md",), [], (finding,))
    assert json.loads(gitlab.gitlab(result))[0]["severity"] == "info"
    assert json.loads(gitlab.gitlab(result))[0]["location"] == {
        "path": "n.md",
        "lines": {"begin": 1},
    }


def test_sarif_rules_link_their_section_of_the_docs(project, monkeypatch):
    monkeypatch.setenv("BRAINMIGRATE_HOMEPAGE", "https://git.example.org/team/brainmigrate/")
    driver = json.loads(ci.render(result_of(), "sarif"))["runs"][0]["tool"]["driver"]
    home = "https://git.example.org/team/brainmigrate"
    assert driver["informationUri"] == home
    assert [r["helpUri"] for r in driver["rules"]] == [
        f"{home}/blob/main/docs/check.md#{code.lower()}" for code in rules.RULES
    ]
    docs = (Path(__file__).resolve().parent.parent / "docs/check.md").read_text()
    for code in rules.RULES:
        assert f'<a id="{code.lower()}"></a>{code}' in docs, code


def test_sarif_makes_up_no_links_when_no_home_is_named(project, monkeypatch):
    monkeypatch.delenv("BRAINMIGRATE_HOMEPAGE", raising=False)
    monkeypatch.setattr(sarif, "homepage", lambda: None)
    driver = json.loads(ci.render(result_of(), "sarif"))["runs"][0]["tool"]["driver"]
    assert "informationUri" not in driver
    assert not any("helpUri" in r for r in driver["rules"])


def test_a_github_annotation_on_a_root_names_no_file():
    f = rules.Finding(
        "BM104", "info", "/w/repo", None, None, "git history not available (a shallow clone)"
    )
    assert github.github_command(f) == (
        "::notice title=BM104 no-git-history::/w/repo: git history not available (a shallow clone)"
    )


def test_github_annotations_name_files_from_the_workspace(tmp_path, monkeypatch):
    (tmp_path / "docs" / "notes").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "docs")
    f = rules.Finding("BM101", "error", "notes/n.md", 3, 7, "cites a.py, which no root holds")
    assert github.github_command(f).startswith("::error file=notes/n.md,line=3,col=7,")
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path))
    assert github.github_command(f).startswith("::error file=docs/notes/n.md,line=3,col=7,")
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path / "elsewhere"))
    assert github.github_command(f).startswith("::error file=notes/n.md,")
