"""Issue 29, "Flags": ``-q``/``-v``/``--color`` on every command, ``stale --format
junit|gitlab``, ``search``'s refusals, fact ids and superseded marks, ``index --name``
for a name that never anchors. Each test runs the command on a store imported from a
small notes file."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from clirun import invoker

from brainmigrate.cli import main

cli = invoker(catch_exceptions=False)


@pytest.fixture
def gone(tmp_path, monkeypatch) -> Path:
    """A store of two facts imported with ``--verify``, the first citing ``pkg/merge.py``,
    which is then removed: one stale fact, at line 1 of ``notes/code.md``."""
    (tmp_path / "repo" / "pkg").mkdir(parents=True)
    (tmp_path / "repo" / "pkg" / "merge.py").write_text("def f():\n    pass\n", encoding="utf-8")
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "code.md").write_text(
        "+ the merge rule lives in pkg/merge.py TER-303\n+ nothing cited here\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    r = cli("import", "notes", "--root", "repo", "--store", "know.db", "--verify")
    assert r.exit_code == 0, r.output
    (tmp_path / "repo" / "pkg" / "merge.py").unlink()
    return tmp_path / "know.db"


MESSAGE = (
    "BM501 k1 STALE: file gone: pkg/merge.py: the merge rule lives in pkg/merge.py TER-303;"
    " fix the note's citation (check --fix repairs a file git renamed) or remove the note,"
    " then import it again; 'brainmigrate verify k1' refuses while it is gone"
)


def test_stale_junit_is_one_failing_case_per_stale_fact_at_its_notes_line(gone):
    r = cli("stale", "--store", gone, "--format", "junit", "--dry-run")
    assert r.exit_code == 1
    top = ET.fromstring(r.stdout)
    assert (top.get("name"), top.get("tests"), top.get("failures")) == (
        "brainmigrate stale",
        "1",
        "1",
    )
    (case,) = top.iter("testcase")
    assert (case.get("file"), case.get("line")) == ("notes/code.md", "1")
    assert case.find("failure").get("message") == MESSAGE


def test_stale_gitlab_is_one_issue_per_stale_fact_at_its_notes_line(gone):
    r = cli("stale", "--store", gone, "--format", "gitlab", "--dry-run")
    assert r.exit_code == 1
    (issue,) = json.loads(r.stdout)
    assert issue["description"] == MESSAGE
    assert issue["check_name"] == "BM501 stale-fact"
    assert issue["location"] == {"path": "notes/code.md", "lines": {"begin": 1}}


# ------------------------------------------------------------- -q, -v, --color everywhere


@pytest.mark.parametrize("name", sorted(main.commands))
def test_every_command_takes_quiet_verbose_and_color(name):
    params = {p.name: p for p in main.commands[name].params}
    assert params["quiet"].opts == ["-q", "--quiet"]
    assert params["verbose"].opts == ["-v", "--verbose"]
    assert list(params["color"].type.choices) == ["auto", "always", "never"]


def test_quiet_stale_prints_the_stale_facts_without_the_counts(gone):
    line = (
        "notes/code.md:1: k1 environment area:code STALE: file gone: pkg/merge.py"
        "  the merge rule lives in pkg/merge.py TER-303\n"
    )
    r = cli("stale", "--store", gone, "--dry-run")
    assert (r.exit_code, r.stdout) == (
        1,
        line + "STALE: checked 1, stale 1, unreachable 0 (dry run: nothing recorded)\n",
    )
    r = cli("stale", "-q", "--store", gone, "--dry-run")
    assert (r.exit_code, r.stdout, r.stderr) == (1, line, "")


def test_quiet_search_and_verify_say_no_counts_on_stderr(gone):
    r = cli("search", "nowhere", "--store", gone)
    assert (r.exit_code, r.stdout, r.stderr) == (0, "", "no facts match\n")
    r = cli("search", "nowhere", "--store", gone, "--quiet")
    assert (r.exit_code, r.stdout, r.stderr) == (0, "", "")
    r = cli("verify", "k2", "--store", gone)
    assert r.stderr == "verified 0, refused 1\n"
    r = cli("verify", "k2", "--store", gone, "-q")
    assert (r.exit_code, r.stdout, r.stderr) == (1, "k2 refused: no anchor to fingerprint\n", "")


def test_quiet_export_writes_without_its_summary(gone):
    r = cli("export", "--store", gone, "--to", "jsonl", "--output", "all.jsonl")
    assert r.stderr == "exported 2 facts to all.jsonl as jsonl: 1 written, 0 unchanged\n"
    r = cli("export", "--store", gone, "--to", "jsonl", "--output", "quiet.jsonl", "-q")
    assert (r.exit_code, r.stderr) == (0, "")
    assert Path("quiet.jsonl").read_bytes() == Path("all.jsonl").read_bytes()


def test_verbose_says_the_store_and_the_roots_on_stderr(gone, tmp_path):
    r = cli("search", "merge", "--store", "know.db", "-v")
    assert r.stderr.splitlines() == [
        f"brainmigrate: store: {tmp_path / 'know.db'}",
        "brainmigrate: roots: the roots recorded with the anchors",
    ]
    r = cli("stale", "--store", "know.db", "--root", "repo", "--dry-run", "-v")
    assert r.stderr.splitlines() == [
        f"brainmigrate: store: {tmp_path / 'know.db'}",
        "brainmigrate: roots: repo",
    ]
    r = cli("import", "notes", "--root", "repo", "--store", "new.db", "--isolated", "-v")
    assert r.exit_code == 0
    assert r.stderr.splitlines() == [
        f"brainmigrate: store: {tmp_path / 'new.db'}",
        "brainmigrate: configuration: none",
        "brainmigrate: roots: repo",
    ]


def test_quiet_check_leaves_baselined_findings_out(gone):
    cli("check", "notes", "--root", "repo", "--baseline", "b.json", "--update-baseline")
    r = cli("check", "notes", "--root", "repo", "--baseline", "b.json")
    assert r.stdout.splitlines()[0] == (
        "notes/code.md:1:27: BM101 error cites pkg/merge.py, which no root holds [baseline]"
    )
    r = cli("check", "-q", "notes", "--root", "repo", "--baseline", "b.json")
    assert (r.exit_code, r.stdout, r.stderr) == (0, "", "")


# ------------------------------------------------------------------------------ search


def test_search_refuses_an_unknown_double_dash_word_as_click_does(gone):
    r = cli("search", "--limt", "3", "merge", "--store", gone)
    assert (r.exit_code, r.stdout) == (2, "")
    assert r.stderr == (
        "brainmigrate: error: No such option '--limt'. (Did you mean one of: '--limit',"
        " '--quiet'?); see 'brainmigrate search --help'\n"
    )
    # a one-dash word stays a query word, and after '--' every word is one
    r = cli("search", "-merge", "rule", "--store", gone)
    assert (r.exit_code, r.stdout.split()[0]) == (0, "k1")
    r = cli("search", "--store", gone, "--", "--limt")
    assert (r.exit_code, r.stdout, r.stderr) == (0, "", "no facts match\n")


def test_search_refuses_a_scope_no_fact_has_listing_the_stored_scopes(gone):
    r = cli("search", "merge", "--scope", "core", "--store", "know.db")
    assert (r.exit_code, r.stdout) == (2, "")
    assert r.stderr == (
        "brainmigrate: error: --scope core: no fact of it in know.db; give one of the"
        " store's scopes (area:code)\n"
    )
    r = cli("search", "merge", "--scope", "area", "--store", "know.db")
    assert (r.exit_code, r.stdout.split()[0]) == (0, "k1")
    # a typo beside a scope the store has is refused too (it would narrow the hits)
    r = cli("search", "merge", "--scope", "area:code,area:cod", "--store", "know.db")
    assert (r.exit_code, r.stderr) == (
        2,
        "brainmigrate: error: --scope area:cod: no fact of it in know.db; give one of the"
        " store's scopes (area:code)\n",
    )


def test_search_for_a_fact_id_shows_that_fact_first(gone):
    r = cli("search", "k2", "--store", gone)
    assert (r.exit_code, r.stdout) == (0, "k2 environment area:code  nothing cited here\n")
    r = cli("search", "K02", "--store", gone, "--kind", "decision")  # filters still apply
    assert (r.exit_code, r.stdout) == (0, "")


def test_a_superseded_hit_is_marked_in_its_line(gone, tmp_path):
    (tmp_path / "notes" / "code.md").write_text(
        "+ the merge rule lives in pkg/merge.py TER-303\n", encoding="utf-8"
    )
    r = cli("import", "notes", "--root", "repo", "--store", gone, "--sync")
    assert r.exit_code == 0, r.output
    r = cli("search", "nothing", "cited", "--store", gone, "--all")
    assert (r.exit_code, r.stdout) == (
        0,
        "k2 environment area:code SUPERSEDED  nothing cited here\n",
    )
    from brainmigrate import search

    (hit,) = search.search(gone, "nothing cited", include_superseded=True)
    assert hit.line == "k2 environment area:code SUPERSEDED  nothing cited here"


# ------------------------------------------------------------------------------- index


def test_index_says_a_one_word_name_never_anchors(tmp_path):
    (tmp_path / "a.py").write_text(
        "class Context:\n    pass\n\n\nclass PaymentGateway:\n    pass\n", encoding="utf-8"
    )
    args = ("index", "--root", tmp_path, "--cache-dir", tmp_path / "cache", "--no-progress")
    r = cli(*args, "--name", "Context", "--name", "PaymentGateway")
    assert r.exit_code == 0
    assert r.stdout.split("\n\n")[-2:] == [
        "Context: never anchors: not a CamelCase name of two or more words (SPEC.md §Anchors"
        " 3); declared in a.py\n  a.py:1-2 class (type)",
        "PaymentGateway: anchors to a.py\n  a.py:5-6 class (type)\n",
    ]
    data = json.loads(cli(*args, "--name", "Context", "--format", "json").stdout)
    assert (data["names"]["Context"]["anchor"], data["names"]["Context"]["chosen"]) == (
        "never",
        [],
    )


# ---------------------------------------------------------------- -q on every command

#: Each command's arguments on the ``gone`` store and notes (``serve`` is run apart), and
#: how its summary starts on stdout, which ``-q`` leaves out (None: it prints none there);
#: under ``-q`` stderr must be empty.
QUIET_RUNS = {
    "import": (["notes", "--root", "repo", "--store", "quiet.db"], "Imported"),
    "index": (["--root", "repo", "--cache-dir", "cache", "--name", "Merge"], "Indexed"),
    "check": (["notes", "--root", "repo", "--fix"], "Fixed"),
    "rule": (["BM101"], None),
    "export": (["--store", "know.db", "--to", "jsonl", "--output", "q.jsonl"], "exported"),
    "search": (["nowhere", "--store", "know.db"], "no facts"),
    "show": (["k1", "--store", "know.db"], None),
    "stale": (["--store", "know.db", "--dry-run"], "STALE:"),
    "verify": (["k2", "--store", "know.db"], "verified"),
    "put": (["--scope", "repo", "a fact put quietly", "--store", "know.db"], None),
    "mcp": (["--store", "know.db"], None),
    "server": (["--root", "repo"], None),
}


def test_every_command_is_in_the_quiet_runs():
    from brainmigrate.cli import COMMANDS

    assert sorted(COMMANDS) == sorted([*QUIET_RUNS, "serve"])


@pytest.mark.parametrize("name", sorted(QUIET_RUNS))
def test_quiet_leaves_no_summary_line(gone, name):
    args, summary = QUIET_RUNS[name]
    loud = cli(name, *args)
    quiet = cli(name, "-q", *args)
    assert quiet.exit_code == loud.exit_code, quiet.output
    assert quiet.stderr == ""
    if summary is not None:
        assert [line for line in loud.output.splitlines() if line.startswith(summary)]
        assert not [line for line in quiet.stdout.splitlines() if line.startswith(summary)]


def test_quiet_import_and_index_keep_what_they_found(gone):
    r = cli("import", "-q", "notes", "--root", "repo", "--store", "quiet.db")
    assert (r.exit_code, r.stdout, r.stderr) == (
        0,
        "\nFacts citing gone files\n  notes/code.md:1: pkg/merge.py (k1)\n",
        "",
    )
    (gone.parent / "repo" / "pkg" / "new.py").write_text("class MergeRule:\n    pass\n")
    args = ("index", "-q", "--root", "repo", "--cache-dir", "cache", "--name", "MergeRule")
    r = cli(*args)
    assert (r.exit_code, r.stdout, r.stderr) == (
        0,
        "\nMergeRule: anchors to pkg/new.py\n  pkg/new.py:1-2 class (type)\n",
        "",
    )
    assert cli("index", *args[2:]).stdout.startswith("Indexed ")


def test_quiet_check_fix_says_nothing_but_the_findings_left(gone):
    r = cli("check", "-q", "notes", "--root", "repo", "--fix")
    assert (r.exit_code, r.stderr) == (1, "")
    assert r.stdout == ("notes/code.md:1:27: BM101 error cites pkg/merge.py, which no root holds\n")


def test_quiet_serve_says_only_where_it_serves(gone):
    """The serve line stays (it says the address and the token file, ``--port 0`` too);
    the line at its stop is a summary, left out."""
    from test_serve import TOKEN, serving

    (gone.parent / "token").write_text(TOKEN + "\n", encoding="utf-8")
    with serving(gone, "-q") as served:
        assert served.client.get("/know/k1").status_code == 200
        assert served.stop() == (0, "")


# ------------------------------------------------------------------ stale --format junit


def test_stale_junit_counts_a_fresh_fact_as_a_passing_case_with_the_runs_properties(gone):
    (gone.parent / "repo" / "pkg" / "merge.py").write_text("def f():\n    pass\n")
    r = cli("stale", "--store", gone, "--format", "junit", "--dry-run")
    assert r.exit_code == 0, r.output
    top = ET.fromstring(r.stdout)
    assert (top.get("tests"), top.get("failures")) == ("1", "0")
    (suite,) = top.iter("testsuite")
    assert (suite.get("name"), suite.get("tests"), suite.get("failures")) == (
        "notes/code.md",
        "1",
        "0",
    )
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props == {
        "store": str(gone),
        "dry-run": "true",
        "checked": "1",
        "stale": "0",
        "unreachable": "0",
    }
    (case,) = top.iter("testcase")
    assert case.attrib == {
        "classname": "notes/code.md",
        "name": "k1: the merge rule lives in pkg/merge.py TER-303",
        "file": "notes/code.md",
        "line": "1",
    }
    assert list(case) == []  # passed


def test_stale_junit_has_a_case_per_fact_and_fails_only_the_stale_one(gone, tmp_path):
    (tmp_path / "repo" / "pkg" / "merge.py").write_text("def f():\n    pass\n")
    (tmp_path / "repo" / "pkg" / "keep.py").write_text("x = 1\n")
    (tmp_path / "notes" / "keep.md").write_text("+ the keeper is pkg/keep.py TER-304\n")
    r = cli("import", "notes", "--root", "repo", "--store", gone, "--verify")
    assert r.exit_code == 0, r.output
    (tmp_path / "repo" / "pkg" / "merge.py").unlink()
    r = cli("stale", "--store", gone, "--format", "junit")
    assert r.exit_code == 1
    top = ET.fromstring(r.stdout)
    assert (top.get("tests"), top.get("failures")) == ("2", "1")
    cases = {c.get("name"): c for c in top.iter("testcase")}
    assert sorted(cases) == [
        "k1: the merge rule lives in pkg/merge.py TER-303",
        "k3: the keeper is pkg/keep.py TER-304",
    ]
    assert cases["k1: the merge rule lives in pkg/merge.py TER-303"].find("failure").attrib == {
        "message": MESSAGE,
        "type": "BM501",
    }
    assert list(cases["k3: the keeper is pkg/keep.py TER-304"]) == []
    props = {p.get("name"): p.get("value") for p in top.iter("property")}
    assert (props["dry-run"], props["checked"], props["stale"]) == ("false", "2", "1")
    assert "fail-on" not in props  # check's, not stale's


# -------------------------------------------------------------------------------- rule


def test_rule_without_a_code_says_what_to_give_and_with_both_says_not_both():
    r = cli("rule")
    assert (r.exit_code, r.stdout, r.stderr) == (
        2,
        "",
        "brainmigrate: error: give a code (brainmigrate rule BM101) or --all;"
        " see 'brainmigrate rule --help'\n",
    )
    r = cli("rule", "--all", "BM101")
    assert (r.exit_code, r.stdout, r.stderr) == (
        2,
        "",
        "brainmigrate: error: give a code or --all, not both; leave out BM101 or --all;"
        " see 'brainmigrate rule --help'\n",
    )


@pytest.mark.parametrize("name", ["", "   ", "\t"])
def test_index_refuses_an_empty_or_blank_name(tmp_path, name):
    (tmp_path / "a.py").write_text("class PaymentGateway:\n    pass\n", encoding="utf-8")
    args = ("index", "--root", tmp_path, "--cache-dir", tmp_path / "cache", "--no-progress")
    r = cli(*args, "--name", "PaymentGateway", "--name", name)
    assert (r.exit_code, r.stdout, r.stderr) == (
        2,
        "",
        "brainmigrate: error: Invalid value for '--name': empty or blank; give a value or"
        " leave the option out; see 'brainmigrate index --help'\n",
    )


# ----------------------------------------------------------------------- check --explain


def _given(param) -> list[str]:
    """A command-line use of ``param`` of ``check``: the flag, or the option with a value
    it takes (its first choice), or a PATH."""
    import click

    if isinstance(param, click.Argument):
        return ["notes"]
    if param.is_flag:
        return [param.opts[-1]]
    choices = getattr(param.type, "choices", None)
    return [param.opts[-1], str(list(choices)[0]) if choices else "x"]


def test_explain_with_fix_is_refused_in_one_line_and_nothing_is_fixed(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "x.md").write_text("+ gone is pkg/old.py\n", encoding="utf-8")
    r = cli("check", "--explain", "BM101", "--fix")
    assert (r.exit_code, r.stdout, r.stderr) == (
        2,
        "",
        "brainmigrate: error: --explain prints a code's documentation and reads or writes no"
        " notes; leave out --fix, or --explain; see 'brainmigrate check --help'\n",
    )
    r = cli("check", "notes", "--explain", "BM101", "--diff", "--fix-only")
    assert r.stderr == (
        "brainmigrate: error: --explain prints a code's documentation and reads or writes no"
        " notes; leave out --diff, --fix-only and PATHS, or --explain;"
        " see 'brainmigrate check --help'\n"
    )
    # how it prints may still be chosen
    r = cli("check", "--explain", "BM101", "-q", "--color", "never", "-v")
    assert (r.exit_code, r.stdout) == (0, cli("rule", "BM101").stdout)


def _check_params():
    from brainmigrate.cli.check_options import EXPLAIN_WITH

    return [p for p in main.commands["check"].params if p.name not in (*EXPLAIN_WITH, "help")]


@pytest.mark.parametrize("param", _check_params(), ids=lambda p: p.name)
def test_explain_is_refused_beside_every_option_that_reads_or_writes(param):
    r = cli("check", "--explain", "BM101", *_given(param))
    shown = "PATHS" if param.name == "paths" else param.opts[-1]
    assert (r.exit_code, r.stdout) == (2, "")
    assert f"; leave out {shown}, or --explain;" in r.stderr


# ------------------------------------------------------- check FILE --fix through a symlink


def test_fix_leaves_a_named_symlink_leading_out_of_its_folder_alone(tmp_path, monkeypatch):
    """``check notes/link.md --fix`` where ``link.md`` leads to a file in another folder:
    left alone as a walked symlink leading out of the PATHS is (said so, not marked
    fixable); the target's bytes are unchanged."""
    import shutil

    from trees import committed, git

    if shutil.which("git") is None:
        pytest.skip("needs git")
    project = tmp_path / "project"
    repo = committed(project / "repo", {"src/old.py": "a = 1\n"})
    git(repo, "mv", "src/old.py", "src/new.py")
    git(repo, "commit", "-qm", "move")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    target = elsewhere / "other.md"
    target.write_bytes(b"+ the parser lives in src/old.py (x)\n")
    (project / "notes").mkdir()
    (project / "notes" / "link.md").symlink_to(target)
    monkeypatch.chdir(project)
    args = ("check", "notes/link.md", "--root", "repo", "--isolated", "--no-progress")
    r = cli(*args)
    assert r.stdout.splitlines()[0] == (
        "notes/link.md:1:23: BM101 error cites src/old.py, which no root holds;"
        " moved? src/new.py (renamed in git history)"
    )
    assert "fixable" not in r.stderr
    r = cli(*args, "--fix")
    assert r.exit_code == 1
    assert target.read_bytes() == b"+ the parser lives in src/old.py (x)\n"
    assert (project / "notes" / "link.md").is_symlink()
    assert r.stderr.splitlines() == [
        "notes/link.md:1:23: left src/old.py: the file leads outside the paths given",
        f"brainmigrate: note: notes/link.md: a symlink to {target}, outside the paths given;"
        " left alone (replace the symlink by the file, or pass its target as a PATH)",
        "Fixed 0 citations in 0 files; 1 left",
    ]
    # a symlink to a file of its own folder is written through, as a walked one is
    (project / "notes" / "real.md").write_bytes(target.read_bytes())
    (project / "notes" / "same.md").symlink_to("real.md")
    r = cli("check", "notes/same.md", "--root", "repo", "--isolated", "--no-progress", "--fix")
    assert (project / "notes" / "real.md").read_bytes() == (
        b"+ the parser lives in src/new.py (x)\n"
    )


# ------------------------------------------------- an unknown scope, named as it was given


UNKNOWN_SCOPE = "no fact of it in {}; give one of the store's scopes (area:code)"


def test_an_unknown_scope_is_named_as_the_caller_gave_it(gone):
    from test_mcp import calls, refused
    from test_serve import TOKEN, serving

    store = gone.parent / "know.db"
    r = cli("search", "merge", "--scope", "nope", "--store", "know.db")
    assert r.stderr == f"brainmigrate: error: --scope nope: {UNKNOWN_SCOPE.format('know.db')}\n"
    (gone.parent / "token").write_text(TOKEN + "\n", encoding="utf-8")
    with serving(store) as served:
        answer = served.client.get("/know/search", params={"q": "merge", "scope": "nope"})
        assert answer.status_code == 400
        assert answer.json()["error"] == f"scope nope: {UNKNOWN_SCOPE.format(store)}"
    (result,) = calls(gone.parent, ("know_search", {"query": "merge", "scope": "nope"}))
    assert refused(result) == f"scope nope: {UNKNOWN_SCOPE.format(store)}"


# ---------------------------------------------------- MCP arguments of a wrong type


def test_mcp_refuses_an_argument_of_a_wrong_type_in_one_line_naming_it(gone):
    from test_mcp import calls, refused, text

    results = calls(
        gone.parent,
        ("know_search", {"query": "merge", "limit": "x"}),
        ("know_search", {"query": "merge", "limit": 2.5, "all": "maybe"}),
        ("know_search", {"query": "merge", "kind": [1]}),
        ("know_put", {"text": "a fact of the wrong scope", "scope": ["repo"]}),
        ("know_show", {}),
        ("know_search", {"query": "merge", "limit": 1}),
    )
    assert [refused(r) for r in results[:-1]] == [
        "limit: expected an integer",
        "limit: expected an integer; all: expected true or false",
        "kind: expected text or a list of text",
        "scope: expected text",
        "id: missing; the tool needs it",
    ]
    # the server answers after them
    assert not results[-1].is_error
    assert text(results[-1]).startswith("k1 environment area:code")
