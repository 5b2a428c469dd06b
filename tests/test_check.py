"""``brainmigrate check``: findings, exit codes, baseline, suppression and "moved?" hints.

The library (``brainmigrate.check``) is called directly; exit codes go through the CLI
(click's CliRunner). The CI-like case builds a real git history in a temporary folder.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from clirun import invoker
from hypothesis import given, settings
from hypothesis import strategies as st

import brainmigrate
from brainmigrate import baseline, check, importer, rules
from brainmigrate.codes import diagnostic
from brainmigrate.git import git_renames
from brainmigrate.hints import MoveHints
from brainmigrate.read import run as read_run
from brainmigrate.read.facts import TaskIds, build_fact
from brainmigrate.read.files import is_excluded
from brainmigrate.read.lines import Line
from brainmigrate.read.run import ImportOptions

PACKAGE = Path(brainmigrate.__file__).parent

NOTES = """\
# Docker
+ the app starts in app/src/Main.kt
+ old entry point app/src/Old.kt is gone
! certificates in /etc/ssl/dev.pem
~ settings live in Config.kt
= reviewed build <!-- reviewed -->
+ legacy loader app/src/Legacy.kt <!-- brainmigrate: allow-gone -->
"""


def write(base: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = base / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    """A checkout ``repo/`` and notes ``notes/docker.md``; the current folder is tmp_path."""
    write(
        tmp_path / "repo",
        {
            "app/src/Main.kt": "class MainActivity\n",
            "lib/a/Config.kt": "class A\n",
            "lib/b/Config.kt": "class B\n",
        },
    )
    write(tmp_path, {"notes/docker.md": NOTES})
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(paths=("notes",), fail_on="error", **kw) -> check.CheckResult:
    return check.run_check(list(paths), ImportOptions(roots=["repo"]), fail_on, **kw)


cli = invoker("check")


def summary_of(result: check.CheckResult) -> list[tuple]:
    return [(f.code, f.severity, f.where, f.message, f.suppressed) for f in result.findings]


# ------------------------------------------------------------------------------ findings


def test_findings_have_codes_severities_and_positions(project):
    result = run()
    assert summary_of(result) == [
        (
            "BM101",
            "error",
            "notes/docker.md:3:19",
            "cites app/src/Old.kt, which no root holds",
            False,
        ),
        (
            "BM102",
            "warning",
            "notes/docker.md:4:19",
            "cites /etc/ssl/dev.pem, outside every root (absolute path under no root)",
            False,
        ),
        (
            "BM201",
            "info",
            "notes/docker.md:5:20",
            "Config.kt names 2 files: lib/a/Config.kt, lib/b/Config.kt",
            False,
        ),
        (
            "BM301",
            "info",
            "notes/docker.md:6:18",
            "trailing comment is not a date; removed from the text",
            False,
        ),
        (
            "BM101",
            "error",
            "notes/docker.md:7:17",
            "cites app/src/Legacy.kt, which no root holds",
            True,
        ),
    ]
    assert result.files == ("notes/docker.md",)
    assert [(f.line, f.text) for f in result.facts][:2] == [
        (2, "the app starts in app/src/Main.kt"),
        (3, "old entry point app/src/Old.kt is gone"),
    ]
    assert [f.code for f in result.failing] == ["BM101"]
    assert result.exit_code == 1
    assert result.totals() == {
        "files": 1,
        "fact_lines": 6,
        "findings": 5,
        "by_severity": {"error": 2, "warning": 1, "info": 2},
        "by_code": {"BM101": 2, "BM102": 1, "BM201": 1, "BM301": 1},
        "failing": 1,
        "suppressed": 1,
        "baselined": 0,
    }


def test_check_writes_nothing(project):
    before = sorted(p.relative_to(project) for p in project.rglob("*"))
    assert cli("notes", "--root", "repo").exit_code == 1
    assert sorted(p.relative_to(project) for p in project.rglob("*")) == before


def test_every_diagnostic_code_has_a_rule_with_the_documented_severity():
    assert {c: r.severity for c, r in rules.RULES.items()} == {
        "BM101": "error",
        "BM102": "warning",
        "BM103": "warning",
        "BM104": "info",
        "BM105": "info",
        "BM201": "info",
        "BM202": "info",
        "BM203": "warning",
        "BM204": "warning",
        "BM205": "warning",
        "BM301": "info",
        "BM302": "info",
        "BM303": "info",
        "BM304": "info",
        "BM305": "warning",
        "BM306": "warning",
        "BM307": "warning",
        "BM308": "warning",
        "BM309": "warning",
        "BM310": "info",
        "BM311": "error",
        "BM312": "warning",
        "BM313": "warning",
        "BM401": "info",
        "BM501": "error",
    }


def test_diagnostics_take_their_severity_from_the_code_registry():
    """One table says each code's severity (codes.CODES); a diagnostic of the reading has
    it, but BM311, which the import report lists as a warning (docs/check.md)."""
    assert diagnostic("n.md", 3, "BM303", "code fence never closed", 1).severity == "info"
    assert diagnostic("n.md", 2, "BM311", "unresolved merge conflict").severity == "warning"
    assert rules.RULES["BM311"].severity == "error"
    with pytest.raises(KeyError):
        diagnostic("n.md", 1, "BM999", "no such code")


def test_no_module_writes_a_diagnostic_severity_by_hand():
    made = [
        p.relative_to(PACKAGE).as_posix()
        for p in sorted(PACKAGE.rglob("*.py"))
        if "Diagnostic(" in p.read_text(encoding="utf-8").replace("class Diagnostic(", "")
    ]
    assert made == ["codes.py"]


def test_file_diagnostics_become_findings(project):
    write(
        project,
        {"notes/raw.md": "+ a fact\n```\nnever closed\n"},
    )
    (project / "notes/bytes.md").write_bytes(b"+ bad \xff byte\n+ nul \x00 here\n")
    result = run(["notes/raw.md", "notes/bytes.md"])
    assert summary_of(result) == [
        ("BM303", "info", "notes/raw.md:2:1", "code fence never closed", False),
        (
            "BM305",
            "warning",
            "notes/bytes.md:1:7",
            "invalid UTF-8 bytes replaced with U+FFFD",
            False,
        ),
        ("BM306", "warning", "notes/bytes.md:2:7", "NUL bytes replaced with U+FFFD", False),
    ]
    assert [f.fact_line for f in result.findings] == [None, 1, 2]


def test_each_warning_belongs_to_the_fact_at_or_before_it_in_its_own_file(project):
    write(
        project,
        {
            "notes/b.md": "\n+ first fact <!-- soon -->\n  goes on\n+ second <!-- later -->\n",
            "notes/a.md": "# heading\n```\n+ in a fence\n",
        },
    )
    (project / "notes/c.md").write_bytes(b"+ one\n  cont \xff\n\xffstray\n+ two \x00\n")
    result = run(["notes/b.md", "notes/a.md", "notes/c.md"])
    got = [(f.file, f.line, f.code, f.fact_line) for f in result.findings]
    assert got == [
        ("notes/b.md", 2, "BM301", 2),
        ("notes/b.md", 4, "BM301", 4),
        ("notes/a.md", 2, "BM303", None),  # no fact before it in its file
        ("notes/c.md", 2, "BM305", 1),  # on a continuation: its fact's
        ("notes/c.md", 3, "BM305", None),  # on a line of no fact
        ("notes/c.md", 4, "BM306", 4),
    ]


def test_camelcase_ambiguity_is_reported(project):
    write(
        project / "repo",
        {"x/One.kt": "class PaymentGateway\n", "y/Two.kt": "class PaymentGateway\n"},
    )
    write(project, {"notes/pay.md": "+ retries live in PaymentGateway.charge\n"})
    result = run(["notes/pay.md"])
    assert summary_of(result) == [
        (
            "BM201",
            "info",
            "notes/pay.md:1:19",
            "PaymentGateway is declared in 2 files: x/One.kt, y/Two.kt",
            False,
        )
    ]


# ------------------------------------------------------------------------------ suppression


def _fact(*texts: str):
    lines = [Line(1, "fact", marker="+", text=texts[0], col=3)]
    lines += [Line(i + 2, "continuation", text=t, col=1) for i, t in enumerate(texts[1:])]
    diags: list = []
    return build_fact("n.md", lines, "area:n", "environment", TaskIds(), diags), diags


def test_allow_gone_trailer_is_removed_without_bm301():
    fact, diags = _fact("see app/Old.kt <!-- brainmigrate: allow-gone -->")
    assert fact.text == "see app/Old.kt"
    assert fact.suppress == frozenset({"gone"})
    assert diags == []


def test_allow_gone_on_a_continuation_line_counts():
    fact, diags = _fact("see app/Old.kt", "  and more <!--brainmigrate:allow-gone-->")
    assert fact.suppress == frozenset({"gone"})
    assert fact.text == "see app/Old.kt and more"
    assert diags == []


def test_other_brainmigrate_comments_still_warn():
    fact, diags = _fact("see app/Old.kt <!-- brainmigrate: allow-outside -->")
    assert fact.suppress == frozenset()
    assert [d.code for d in diags] == ["BM301"]
    assert "not a suppression brainmigrate reads" in diags[0].message


@pytest.mark.parametrize(
    "comment",
    [
        "brainmigrate: ignore BM101, BM103",
        "brainmigrate: ignore BM101 BM103",
        "brainmigrate: ignore=BM101,BM103",
        "brainmigrate: ignore: bm101 bm103",
        "BrainMigrate: IGNORE BM101, bm103",
    ],
)
def test_suppressions_are_read_as_flake8_reads_noqa(comment):
    fact, diags = _fact(f"see app/Old.kt <!-- {comment} -->")
    assert (fact.suppress, diags) == (frozenset({"BM101", "BM103"}), [])


def test_a_suppression_of_no_known_code_says_so():
    fact, _ = _fact("see app/Old.kt <!-- brainmigrate: ignore BM999 -->")
    assert check._unused_finding(fact, "BM999").message == (
        "suppression 'ignore BM999' names no finding code (they are BM101-BM501)"
    )


def test_suppression_keeps_gone_from_failing_but_is_counted(project):
    write(
        project, {"notes/ok.md": "+ loader app/src/Legacy.kt <!-- brainmigrate: allow-gone -->\n"}
    )
    assert cli("notes/ok.md", "--root", "repo").exit_code == 0
    result = run(["notes/ok.md"])
    assert [(f.code, f.suppressed, f.fails("info")) for f in result.findings] == [
        ("BM101", True, False)
    ]
    assert result.totals()["suppressed"] == 1
    out = cli("notes/ok.md", "--root", "repo").output
    assert out.splitlines() == [
        "notes/ok.md:1:10: BM101 error cites app/src/Legacy.kt, which no root holds [suppressed]",
        "OK: 1 file, 1 fact line: 1 finding (1 error, 0 warning, 0 info); "
        "0 failing at --fail-on error; 1 suppressed; 0 in the baseline",
    ]


# ------------------------------------------------------------------------------ exit codes

LEVEL_NOTES = {
    "error": "+ gone app/src/Old.kt\n",
    "warning": "+ outside /etc/ssl/dev.pem\n",
    "info": "+ ambiguous Config.kt\n",
    "clean": "+ found app/src/Main.kt\n",
}


@pytest.mark.parametrize(
    ("worst", "fail_on", "code"),
    [
        ("error", "error", 1),
        ("error", "warning", 1),
        ("error", "info", 1),
        ("warning", "error", 0),
        ("warning", "warning", 1),
        ("warning", "info", 1),
        ("info", "error", 0),
        ("info", "warning", 0),
        ("info", "info", 1),
        ("clean", "error", 0),
        ("clean", "info", 0),
    ],
)
def test_exit_code_per_fail_on_level(project, worst, fail_on, code):
    write(project, {"notes/level.md": LEVEL_NOTES[worst]})
    got = cli("notes/level.md", "--root", "repo", "--fail-on", fail_on)
    assert got.exit_code == code, got.output


def test_default_fail_on_is_error(project):
    write(project, {"notes/level.md": LEVEL_NOTES["warning"]})
    assert cli("notes/level.md", "--root", "repo").exit_code == 0


def test_exit_zero_exits_0_with_failing_findings(project):
    got = cli("notes", "--root", "repo", "--exit-zero")
    assert got.exit_code == 0
    assert "BM101 error cites app/src/Old.kt" in got.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing.md", "--root", "repo"], "missing.md"),
        (["notes", "--root", "nowhere"], "--root nowhere: no such folder"),
        (
            ["notes", "--root", "repo", "--baseline", "none.json"],
            "create it with --update-baseline",
        ),
        (["notes", "--root", "repo", "--update-baseline"], "needs a baseline file"),
        (["notes", "--root", "repo", "--fail-on", "fatal"], "fatal"),
    ],
)
def test_could_not_run_exits_2_even_with_exit_zero(project, args, message):
    got = cli(*args, "--exit-zero")
    assert got.exit_code == 2
    assert message in got.output


# ------------------------------------------------------------------------------ baseline


def test_update_baseline_writes_sorted_fingerprints_and_passes(project):
    got = cli("notes", "--root", "repo", "--baseline", "bl.json", "--update-baseline")
    assert got.exit_code == 0, got.output
    data = json.loads((project / "bl.json").read_text())
    assert data["schema_version"] == 1
    entries = data["entries"]
    assert [(e["code"], e["scope"], e["path"], e["count"]) for e in entries] == [
        ("BM101", "area:docker", "app/src/Old.kt", 1),
        ("BM102", "area:docker", "/etc/ssl/dev.pem", 1),
        ("BM201", "area:docker", "Config.kt", 1),
        ("BM301", "area:docker", "", 1),
    ]
    assert all(len(e["fingerprint"]) == 32 for e in entries)
    text = (project / "bl.json").read_text()
    assert text == json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    assert "3:" not in json.dumps([e["fingerprint"] for e in entries])
    assert "Baseline bl.json written: 4 findings" in got.output


def test_baseline_fails_only_on_new_findings_and_lists_vanished(project):
    assert (
        cli("notes", "--root", "repo", "--baseline", "bl.json", "--update-baseline").exit_code == 0
    )
    assert cli("notes", "--root", "repo", "--baseline", "bl.json").exit_code == 0
    # Move the gone fact down (line numbers change), drop the outside one, add a new gone one.
    notes = NOTES.replace("! certificates in /etc/ssl/dev.pem\n", "")
    notes = notes.replace(
        "+ old entry point", "\n\n+ new citation app/src/New.kt\n+ old entry point"
    )
    write(project, {"notes/docker.md": notes})
    result = run(baseline="bl.json")
    assert [(f.code, f.subject, f.baselined, f.fails("error")) for f in result.findings] == [
        ("BM101", "app/src/New.kt", False, True),
        ("BM101", "app/src/Old.kt", True, False),
        ("BM201", "Config.kt", True, False),
        ("BM301", "", True, False),
        ("BM101", "app/src/Legacy.kt", False, False),
    ]
    assert result.baseline.matched == 3
    assert [(e.code, e.path) for e in result.baseline.vanished] == [("BM102", "/etc/ssl/dev.pem")]
    got = cli("notes", "--root", "repo", "--baseline", "bl.json")
    assert got.exit_code == 1
    lines = got.output.splitlines()
    assert "notes/docker.md:5:16: BM101 error cites app/src/New.kt, which no root holds" in lines
    assert (
        "notes/docker.md:6:19: BM101 error cites app/src/Old.kt, which no root holds [baseline]"
        in lines
    )
    assert "Baseline bl.json: 1 entry no longer occurs" in lines
    assert "  BM102 area:docker /etc/ssl/dev.pem: certificates in /etc/ssl/dev.pem" in lines


def test_baseline_counts_repeated_findings(project):
    # Same file stem, same scope: the second copy of the fact is a new finding.
    write(
        project,
        {"one/x.md": "+ a app/x/Gone.kt\n", "two/x.md": "+ a app/x/Gone.kt\n\n+ a app/x/Gone.kt\n"},
    )
    baseline.write_baseline("bl.json", run(["one/x.md"]).findings)
    result = run(["two/x.md"], baseline="bl.json")
    assert [f.baselined for f in result.findings] == [True, False]
    assert result.exit_code == 1


def test_suppressed_findings_stay_out_of_the_baseline(project):
    write(
        project, {"notes/ok.md": "+ loader app/src/Legacy.kt <!-- brainmigrate: allow-gone -->\n"}
    )
    result = run(["notes/ok.md"], baseline="bl.json", update_baseline=True)
    assert json.loads((project / "bl.json").read_text())["entries"] == []
    assert result.baseline.matched == 0


FIX = "fix it, or remove it and write a new one with --update-baseline"


def test_a_baseline_that_cannot_be_read(project):
    (project / "bl.json").mkdir()
    got = cli("notes", "--root", "repo", "--baseline", "bl.json")
    assert (got.exit_code, got.stderr) == (
        2,
        "brainmigrate: error: --baseline bl.json: is a folder, not a file; pass --baseline"
        " with a baseline file\n",
    )
    (project / "bl.json").rmdir()
    (project / "bl.json").write_bytes(b'{"schema_version": 1, "entries": [\xff]}')
    got = cli("notes", "--root", "repo", "--baseline", "bl.json")
    assert (got.exit_code, got.stderr) == (
        2,
        "brainmigrate: error: --baseline bl.json: not UTF-8 (invalid start byte); " + FIX + "\n",
    )


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            "not json",
            "not JSON (Expecting value: line 1 column 1 (char 0)); " + FIX,
        ),
        ("[1]", f"not a brainmigrate baseline (a JSON object with schema_version 1); {FIX}"),
        ('{"entries": []}', f"schema_version is missing, not 1; {FIX}"),
        ('{"schema_version": true, "entries": []}', f"schema_version is true, not 1; {FIX}"),
        ('{"schema_version": 1.0, "entries": []}', f"schema_version is 1.0, not 1; {FIX}"),
        ('{"schema_version": 1, "entries": {}}', f"entries is {{}}, not a list; {FIX}"),
        ('{"schema_version": 1, "entries": [7]}', f"entry 1 is 7, not an object; {FIX}"),
        (
            '{"schema_version": 1, "entries": [{"code": "BM101"}]}',
            f"entry 1: fingerprint is missing, not a non-empty string; {FIX}",
        ),
        (
            '{"schema_version": 1, "entries": [{"fingerprint": "a"}, {"fingerprint": null}]}',
            f"entry 2: fingerprint is null, not a non-empty string; {FIX}",
        ),
        (
            '{"schema_version": 1, "entries": [{"fingerprint": "a", "count": 1e400}]}',
            f"entry 1: count is Infinity, not a whole number of 1 or more; {FIX}",
        ),
        (
            '{"schema_version": 1, "entries": [{"fingerprint": "a", "count": "many"}]}',
            f'entry 1: count is "many", not a whole number of 1 or more; {FIX}',
        ),
        (
            '{"schema_version": 1, "entries": [{"fingerprint": "a", "count": 0}]}',
            f"entry 1: count is 0, not a whole number of 1 or more; {FIX}",
        ),
        (
            '{"schema_version": 1, "entries": [{"fingerprint": "a", "count": true}]}',
            f"entry 1: count is true, not a whole number of 1 or more; {FIX}",
        ),
        (
            '{"schema_version": 1, "entries": [{"fingerprint": "a", "path": ["x"]}]}',
            f'entry 1: path is ["x"], not a string; {FIX}',
        ),
    ],
)
def test_bad_baseline_exits_2_naming_the_entry_and_the_field(project, content, message):
    (project / "bl.json").write_text(content)
    got = cli("notes", "--root", "repo", "--baseline", "bl.json")
    assert (got.exit_code, got.stdout) == (2, "")
    assert got.stderr == f"brainmigrate: error: --baseline bl.json: {message}\n"
    assert (project / "bl.json").read_text() == content


def test_fingerprint_ignores_position_case_and_spacing():
    a = rules.finding_key("BM101", "area:x", "Old  file app/Old.kt", "app/Old.kt")
    assert a == rules.finding_key("BM101", "area:x", "old file app/Old.kt", "app/Old.kt")
    assert a != rules.finding_key("BM101", "area:y", "old file app/Old.kt", "app/Old.kt")
    assert a != rules.finding_key("BM102", "area:x", "old file app/Old.kt", "app/Old.kt")


# ------------------------------------------------------------------------------ exclude


def test_exclude_globs(project):
    write(project, {"notes/drafts/wip.md": "+ gone app/x/Gone.kt\n"})
    result = run(exclude=["drafts/*"])
    assert result.files == ("notes/docker.md",)
    assert result.excluded == ("notes/drafts/wip.md",)
    assert is_excluded("notes/drafts/wip.md", ["wip.md"])
    assert is_excluded("./notes/drafts/wip.md", ["notes/*"])
    assert not is_excluded("notes/drafts/wip.md", ["drafts/*.txt"])


# ------------------------------------------------------------------------------ CI-like run, hints

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"]


def git(repo: Path, *args: str) -> None:
    subprocess.run([*GIT, "-C", str(repo), *args], check=True, capture_output=True)


@pytest.fixture
def history(tmp_path, monkeypatch) -> Path:
    """A checkout whose later commits rename and delete files the notes cite."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = tmp_path / "checkout"
    write(
        repo,
        {
            "app/src/Old.kt": "class OldEntry {\n    fun start() = 1\n}\n",
            "app/src/Chain.kt": "object Chain {\n    val steps = listOf(1, 2, 3)\n}\n",
            "docs/guide.md": "# Guide\n\nHow to build the thing.\n",
            "manual/guide.md": "# Operator guide\n\nAnother text entirely.\n",
            "src/PaymentGateway.kt": "class PaymentGateway\n",
            "src/Bill.kt": "class Bill\n",
            "tests/test_a.py": "def test_a():\n    assert 1\n",
            "api/handler_v1.py": "def handle():\n    return 1\n",
        },
    )
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "first")
    (repo / "app/core").mkdir()
    (repo / "app/mid").mkdir()
    git(repo, "mv", "app/src/Old.kt", "app/core/Entry.kt")
    git(repo, "mv", "app/src/Chain.kt", "app/mid/Chain.kt")
    git(repo, "rm", "-q", "docs/guide.md", "tests/test_a.py")
    write(repo, {"tests/test_b.py": "def test_b():\n    assert 2\n"})
    git(repo, "mv", "api/handler_v1.py", "api/handler_v2.py")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "move things")
    (repo / "app/last").mkdir()
    git(repo, "mv", "app/mid/Chain.kt", "app/last/Chain.kt")
    git(repo, "commit", "-qm", "move again")
    write(
        tmp_path,
        {
            "notes/code.md": "\n".join(
                [
                    "+ entry point is app/src/Old.kt",
                    "+ the chain lives in app/src/Chain.kt",
                    "+ read docs/guide.md first",
                    "+ charges go through src/PaymentGatewy.kt",
                    "+ invoices are built in src/Billing.kt",
                    "+ first test is tests/test_a.py",
                    "+ the handler is api/handler_v1.py",
                ]
            )
            + "\n"
        },
    )
    monkeypatch.chdir(tmp_path)
    return repo


def test_hints_from_git_renames_same_name_and_similar_paths(history):
    result = check.run_check(["notes"], ImportOptions(roots=["checkout"]))
    got = [(f.code, f.subject, f.hint) for f in result.findings]
    assert got == [
        ("BM101", "app/src/Old.kt", rules.Hint("app/core/Entry.kt", "git-rename")),
        ("BM101", "app/src/Chain.kt", rules.Hint("app/last/Chain.kt", "git-rename")),
        ("BM101", "docs/guide.md", rules.Hint("manual/guide.md", "same-name")),
        ("BM101", "src/PaymentGatewy.kt", rules.Hint("src/PaymentGateway.kt", "similar")),
        ("BM101", "src/Billing.kt", None),
        ("BM101", "tests/test_a.py", None),
        ("BM101", "api/handler_v1.py", rules.Hint("api/handler_v2.py", "git-rename")),
    ]


def test_names_and_hints_share_one_index_of_the_first_root(history, monkeypatch):
    from brainmigrate.codeindex import CodeIndex

    with open("notes/code.md", "a") as f:
        f.write("+ the entry point is Entry.kt\n")  # a bare name: the resolver needs the index
    made = []
    init = CodeIndex.__init__
    monkeypatch.setattr(
        CodeIndex, "__init__", lambda self, *a, **k: made.append(1) or init(self, *a, **k)
    )
    result = check.run_check(["notes"], ImportOptions(roots=["checkout"]))
    assert ("BM101", "docs/guide.md", rules.Hint("manual/guide.md", "same-name")) in [
        (f.code, f.subject, f.hint) for f in result.findings
    ]
    assert made == [1]


def test_ci_run_reports_hints_in_text_and_github(history):
    got = cli("notes", "--root", "checkout", "--format", "github")
    assert got.exit_code == 1
    assert got.output.splitlines()[:4] == [
        "::error file=notes/code.md,line=1,col=18,title=BM101 gone-path::cites app/src/Old.kt, "
        "which no root holds; moved? app/core/Entry.kt (renamed in git history)",
        "::error file=notes/code.md,line=2,col=22,title=BM101 gone-path::cites "
        "app/src/Chain.kt, which no root holds; moved? app/last/Chain.kt (renamed in git history)",
        "::error file=notes/code.md,line=3,col=8,title=BM101 gone-path::cites docs/guide.md, "
        "which no root holds; moved? manual/guide.md (the only file of that name)",
        "::error file=notes/code.md,line=4,col=22,title=BM101 gone-path::cites "
        "src/PaymentGatewy.kt, which no root holds; moved? src/PaymentGateway.kt "
        "(the closest path)",
    ]
    text = cli("notes", "--root", "checkout").output.splitlines()
    assert text[4] == "notes/code.md:5:25: BM101 error cites src/Billing.kt, which no root holds"


def test_unrelated_files_are_never_suggested(tmp_path):
    write(
        tmp_path,
        {
            "src/Bill.kt": "",
            "src/OrderService.kt": "",
            "tests/test_b.py": "",
            "web/index.js": "",
            "db/0002_init.py": "",
            "README.md": "",
            "lib/bar.py": "",
            "lib/dateutil.py": "",
            "lib/appengine.py": "",
            "src/Invoicer.kt": "",
        },
    )
    hints = MoveHints([importer.make_roots([tmp_path])[0]])
    for gone in (
        "src/Billing.kt",
        "src/UserService.kt",
        "tests/test_a.py",
        "web/index.ts",
        "db/0001_init.py",
        "docs/README.rst",
        "app/Main.kt",
        "pkg/bars.py",
        "pkg/datautil.py",
        "lib/engine.py",
    ):
        assert hints.hint(gone) is None, gone
    assert hints.hint("src/Invoicr.kt") == rules.Hint("src/Invoicer.kt", "similar")
    assert hints.hint("conf/Invoicer.kts") == rules.Hint("src/Invoicer.kt", "similar")


def test_similar_needs_a_clear_leader(tmp_path):
    write(tmp_path, {"a/PaymentGateway.kt": "", "b/PaymentGateway.kt": ""})
    hints = MoveHints([importer.make_roots([tmp_path])[0]])
    assert hints.hint("c/PaymentGatewy.kt") is None
    assert hints.hint("a/PaymentGatewy.kt") == rules.Hint("a/PaymentGateway.kt", "similar")


def test_git_renames_outside_a_checkout_is_empty(tmp_path):
    assert git_renames(tmp_path) == {}


def test_a_finding_on_a_line_a_runaway_fact_left_out_is_still_that_facts(project, monkeypatch):
    monkeypatch.setattr(read_run, "MAX_FACT_CHARS", 12)
    (project / "notes").mkdir(exist_ok=True)
    (project / "notes/log.md").write_bytes(b"+ big fact\n  one two\n  three\n  bad \xff\n+ next\n")
    result = run(["notes/log.md"])
    got = [(f.line, f.code, f.fact_line) for f in result.findings]
    assert got == [(3, "BM309", 1), (4, "BM305", 1)]


def test_rename_history_is_read_once_per_commit(history, tmp_path, monkeypatch):
    """The rename history is kept per HEAD commit in the root's one history file: the
    same commit reads the cache (no `git log`), a new commit reads git again (the same
    file), and a spoiled cache file (not the header this writes, or a part of another
    shape) is made again."""
    from brainmigrate import git as gitmodule
    from brainmigrate import githistory
    from brainmigrate import hints as hints_module
    from brainmigrate.git import history_events
    from brainmigrate.trails import RenameTrail

    cache = tmp_path / "cache"
    first = hints_module.history_at_head(history, cache)
    assert RenameTrail(first).follow("app/src/Chain.kt") == "app/last/Chain.kt"
    assert first == history_events(history)
    kept = list(cache.glob("githistory-*.bin"))
    assert len(kept) == 1
    monkeypatch.setattr(gitmodule, "log_output", lambda *a, **k: pytest.fail("read git"))
    assert hints_module.history_at_head(history, cache) == first
    monkeypatch.undo()
    git(history, "mv", "app/last/Chain.kt", "app/Chain.kt")
    git(history, "commit", "-qm", "move once more")
    second = hints_module.history_at_head(history, cache)
    assert RenameTrail(second).follow("app/src/Chain.kt") == "app/Chain.kt"
    assert list(cache.glob("githistory-*.bin")) == kept  # one file per root
    [path] = kept
    good = path.read_bytes()
    line, _, body = good.partition(b"\n")
    header = json.loads(line)
    for spoiled in (
        b"{not json",
        b'{"folder": 1}\n',
        b"[]\n",
        b"",
        good[: len(good) // 2],  # truncated: a part ends past the file's end
        json.dumps({**header, "format": githistory.FORMAT - 1}).encode() + b"\n" + body,
        json.dumps({**header, "folder": "/elsewhere"}).encode() + b"\n" + body,
        json.dumps({**header, "parts": {"every": [0, 5]}}).encode() + b"\n" + b"[[5]]",
        json.dumps({**header, "parts": {"every": [0, 23]}}).encode()
        + b"\n"
        + b'[["c","R","src/a.py",5]]',
    ):
        path.write_bytes(spoiled)
        assert hints_module.history_at_head(history, cache) == second
    # an unwritable cache folder still gives the answer
    blocked = tmp_path / "blocked"
    blocked.write_text("a file, not a folder", encoding="utf-8")
    assert hints_module.history_at_head(history, blocked / "cache") == second


def test_a_path_added_again_and_deleted_is_not_the_renamed_one(tmp_path):
    """src/util.py was renamed, then a new src/util.py was added and deleted: a note citing
    src/util.py means the later file (deleted), so no rename is a hint; and a chain
    A -> B -> C, then a new unrelated B, still leads from A to C."""
    repo = tmp_path / "repo"
    write(repo, {"src/util.py": "def legacy(): return 1\n", "src/a.py": "a = 1\n"})
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "1")
    git(repo, "mv", "src/util.py", "src/legacy_util.py")
    git(repo, "mv", "src/a.py", "src/b.py")
    git(repo, "commit", "-qm", "rename")
    write(repo, {"src/util.py": "def brand_new(): return 42\n"})
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "new util")
    git(repo, "rm", "-q", "src/util.py")
    git(repo, "mv", "src/b.py", "src/c.py")
    git(repo, "commit", "-qm", "drop util, b to c")
    write(repo, {"src/b.py": "unrelated = 2\n"})
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "an unrelated b")
    hints = MoveHints([importer.make_roots([repo])[0]], tmp_path / "cache")
    assert hints.locate("src/util.py", similar=False) is None
    assert hints.hint("src/a.py") == rules.Hint("src/c.py", "git-rename")


@settings(max_examples=300, deadline=None)
@given(
    stem=st.text(alphabet="abcdeé_1", min_size=0, max_size=14),
    stems=st.lists(st.text(alphabet="abcdeé_1", min_size=0, max_size=14), max_size=25),
)
def test_the_similar_prefilter_keeps_every_stem_rapidfuzz_would_keep(stem, stems):
    from rapidfuzz import fuzz, process

    from brainmigrate.hints import STEM_CUTOFF, reachable

    every = process.extract(stem, stems, scorer=fuzz.ratio, score_cutoff=STEM_CUTOFF, limit=None)
    kept = reachable(stem, stems)
    assert all(other in kept for other, _, _ in every)
    assert [s for s in stems if s in kept] == kept  # order kept
    near = process.extract(stem, kept, scorer=fuzz.ratio, score_cutoff=STEM_CUTOFF, limit=None)
    assert [(o, s) for o, s, _ in near] == [(o, s) for o, s, _ in every]


def test_a_shallow_clones_history_is_kept_by_its_cut_so_a_fetch_brings_the_hints(history, tmp_path):
    clone = tmp_path / "clone"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", f"file://{history}", str(clone)],
        check=True,
        capture_output=True,
    )
    cache = tmp_path / "cache"
    root = importer.make_roots([clone])[0]
    shallow = MoveHints([root], cache).locate("app/src/Chain.kt")
    assert shallow is not None and shallow.how == "same-name"  # git cannot tell yet
    [kept] = cache.glob("githistory-*.bin")  # kept, keyed by what cut the history
    assert json.loads(kept.read_bytes().split(b"\n")[0])["shallow"].startswith("shallow:")
    git(clone, "fetch", "-q", "--unshallow")
    assert MoveHints([root], cache).hint("app/src/Chain.kt") == rules.Hint(
        "app/last/Chain.kt", "git-rename"
    )


@settings(max_examples=200, deadline=None)
@given(
    stem=st.text(alphabet="abcdeé_1", min_size=0, max_size=14),
    stems=st.lists(st.text(alphabet="abcdeé_1", min_size=0, max_size=14), max_size=40),
)
def test_the_length_prefilter_keeps_every_stem_the_count_prefilter_keeps(stem, stems):
    # past COUNTED stems rapidfuzz is handed the length-fitting stems: a superset of
    # reachable's, so its hits (the stems at or above the cutoff) are the same
    from rapidfuzz import fuzz, process

    from brainmigrate.hints import STEM_CUTOFF, by_length, near_length, reachable

    stems = list(dict.fromkeys(stems))
    near = near_length(stem, by_length(stems))
    assert sorted(near) == sorted(
        s for s in stems if abs(len(s) - len(stem)) <= 0.1 * (len(s) + len(stem))
    )
    assert set(reachable(stem, stems)) <= set(near)

    def hits(choices):
        found = process.extract(
            stem, choices, scorer=fuzz.ratio, score_cutoff=STEM_CUTOFF, limit=None
        )
        return sorted((o, s) for o, s, _ in found)

    assert hits(near) == hits(reachable(stem, stems)) == hits(stems)


def test_a_gone_path_among_many_files_gets_the_same_similar_hint_either_way(tmp_path, monkeypatch):
    # 400 files of one length: past COUNTED, rapidfuzz is asked directly; at COUNTED =
    # 10**6 every stem is counted in Python first: the same hint, and the same refusal
    from brainmigrate import hints as hintmod

    repo = tmp_path / "repo"
    files = {f"pkg/m{i:03d}/Handler{i:03d}.py": "x = 1\n" for i in range(400)}
    files |= {f"lib/PayGateway{i:03d}.kt": "x = 1\n" for i in range(300)}
    files["src/PaymentGateway.kt"] = "class PaymentGateway\n"
    write(repo, files)
    roots = importer.make_roots([repo])
    asked = ["src/PaymentGatewy.kt", "pkg/m007/Handlr007.py", "src/Nothing.kt"]
    stems = hintmod.by_length(p.rpartition("/")[2].partition(".")[0] for p in files)
    for gone in ("PaymentGatewy", "Handlr007"):  # past COUNTED: rapidfuzz asked directly
        assert len(hintmod.near_length(gone, stems)) > hintmod.COUNTED
    fast = [MoveHints(roots, tmp_path / "c1").hint(p) for p in asked]
    monkeypatch.setattr(hintmod, "COUNTED", 10**6)
    counted = [MoveHints(roots, tmp_path / "c2").hint(p) for p in asked]
    assert fast == counted
    assert fast[:2] == [
        rules.Hint("src/PaymentGateway.kt", "similar"),
        rules.Hint("pkg/m007/Handler007.py", "similar"),
    ]
    assert fast[2] is None
