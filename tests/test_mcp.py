"""``brainmigrate mcp``: the stdio MCP server, run as a process and talked to through the
SDK's own stdio client (``mcp.client.stdio``), on a store imported from a notes file
against a real git checkout."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from clirun import cli
from mcp import ClientSession, StdioServerParameters, stdio_client
from stored import rows
from trees import committed, write

NOTES = (
    "~ retries back off exponentially, capped at a minute (CL-86)\n"
    "+ the parser in `src/pay.py` accepts only UTC\n"
    "! the gateway in `src/gateway.py` hangs without network (CL-90)\n"
    "+ retries were linear once SUPERSEDED\n"
    "+ the webhook payload " + "is long and wordy " * 40 + "\n"
)
FILES = {
    "src/pay.py": "def parse(text):\n    return text\n",
    "src/gateway.py": "class Gateway:\n    def start(self):\n        return 1\n",
}
TOOLS = ["know_put", "know_search", "know_show", "know_stale", "know_verify"]


@pytest.fixture(scope="module")
def imported(tmp_path_factory) -> Path:
    """A checkout ``repo`` and ``know.db`` imported from ``notes/webhooks.md`` with
    ``--verify`` (every cited file fingerprinted); returns the folder holding both."""
    base = tmp_path_factory.mktemp("mcp")
    committed(base / "repo", FILES)
    write(base, {"notes/webhooks.md": NOTES})
    r = cli("import", base / "notes", "--root", base / "repo", "--store", base / "know.db")
    assert r.exit_code == 0, r.output
    r = cli("verify", "--all", "--store", base / "know.db", "--root", base / "repo")
    assert r.exit_code == 0, r.output
    return base


@pytest.fixture
def base(imported, tmp_path) -> Path:
    """A copy of ``imported`` of the test's own (tools write to the store, tests delete
    files of the checkout)."""
    shutil.copytree(imported, tmp_path / "b")
    return tmp_path / "b"


def server_args(base: Path, *extra: str) -> list[str]:
    return ["-m", "brainmigrate", "mcp", "--store", str(base / "know.db"), *extra]


def session(base: Path, work, *extra: str):
    """``await work(session)`` against ``brainmigrate mcp --store base/know.db --root
    base/repo`` through the SDK's stdio client; returns its result. The server's stderr is
    kept in ``base/mcp.err`` and must hold no traceback."""
    params = StdioServerParameters(
        command=sys.executable,
        args=server_args(base, "--root", str(base / "repo"), *extra),
        env={"BRAINMIGRATE_CACHE_DIR": os.environ["BRAINMIGRATE_CACHE_DIR"]},
        cwd=str(base),
    )

    async def main():
        with anyio.fail_after(60), (base / "mcp.err").open("w") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write_),
                ClientSession(read, write_) as client,
            ):
                await client.initialize()
                return await work(client)

    result = anyio.run(main)
    assert "Traceback" not in (base / "mcp.err").read_text(encoding="utf-8")
    return result


def calls(base: Path, *asked: tuple[str, dict]) -> list:
    """The results of the tool calls ``asked`` (name, arguments), in order, in one session."""

    async def work(client):
        return [await client.call_tool(name, args) for name, args in asked]

    return session(base, work)


def text(result) -> str:
    assert len(result.content) == 1
    return result.content[0].text


def answered(result) -> str:
    assert not result.is_error, text(result)
    return text(result)


def refused(result) -> str:
    assert result.is_error
    return text(result)


def search_cli(base: Path, *args) -> str:
    r = cli("search", *args, "--store", base / "know.db", "--root", base / "repo")
    assert r.exit_code == 0, r.output
    return r.stdout


def test_the_five_tools_are_listed_with_when_to_use_them_and_their_arguments(imported):
    listed = session(imported, lambda client: client.list_tools()).tools
    by_name = {t.name: t for t in listed}
    assert sorted(by_name) == TOOLS
    assert by_name["know_search"].description.startswith("Before changing code in an area")
    assert by_name["know_put"].description.startswith("After you learn a decision, pattern")
    for tool in listed:
        assert len(tool.description) > 100
        for prop in tool.input_schema["properties"].values():
            assert prop["description"]
    search = by_name["know_search"].input_schema
    assert list(search["properties"]) == ["query", "anchor", "scope", "kind", "limit", "all"]
    assert search.get("required", []) == []
    limit = search["properties"]["limit"]
    assert (limit["type"], limit["default"], limit["minimum"], limit["maximum"]) == (
        "integer",
        5,
        1,
        30,
    )
    put = by_name["know_put"].input_schema
    assert put["required"] == ["text", "scope"]
    assert list(put["properties"]) == [
        "text",
        "scope",
        "kind",
        "task",
        "run",
        "anchors",
        "supersedes",
        "related",
        "verify",
    ]
    assert put["properties"]["anchors"]["items"] == {"type": "string"}
    assert put["properties"]["kind"]["default"] is None
    for name in ("know_show", "know_verify"):
        assert by_name[name].input_schema["required"] == ["id"]
    assert by_name["know_stale"].input_schema["properties"] == {}
    read_only = {t.name: t.annotations.read_only_hint for t in listed}
    assert read_only == {
        "know_put": False,
        "know_search": True,
        "know_show": True,
        "know_stale": True,
        "know_verify": False,
    }


def test_search_answers_the_lines_brainmigrate_search_prints(imported):
    asked = [
        ({"query": "retries gateway parser"}, ["retries gateway parser"]),
        ({"query": "retries", "all": True}, ["retries", "--all"]),
        (
            {"query": "retries gateway parser", "limit": 1},
            ["retries gateway parser", "--limit", "1"],
        ),
        ({"query": "retries gateway", "kind": "blocker"}, ["retries gateway", "--kind", "blocker"]),
        ({"query": "webhook payload", "scope": "area"}, ["webhook payload", "--scope", "area"]),
        (
            {"query": "retries gateway parser", "kind": ["blocker", "decision"]},
            ["retries gateway parser", "--kind", "blocker", "--kind", "decision"],
        ),
        ({"anchor": "src/gateway.py"}, ["--anchor", "src/gateway.py"]),
        ({"query": "parser", "anchor": "pay.py"}, ["parser", "--anchor", "pay.py"]),
    ]
    results = calls(imported, *[("know_search", args) for args, _ in asked])
    for (args, cli_args), result in zip(asked, results, strict=True):
        lines = search_cli(imported, *cli_args)
        assert lines, args
        assert answered(result) + "\n" == lines, args
        hits = result.structured_content["hits"]
        assert [h["line"] for h in hits] == lines.splitlines()
        assert [h["fact"]["id"] for h in hits] == [line.split()[0] for line in lines.splitlines()]
    assert answered(results[0]).splitlines() == [
        "k3 blocker area:webhooks  the gateway in `src/gateway.py` hangs without network (CL-90)",
        "k2 environment area:webhooks  the parser in `src/pay.py` accepts only UTC",
        "k1 decision area:webhooks  retries back off exponentially, capped at a minute (CL-86)",
    ]
    assert "k4" in answered(results[1]) and "k4" not in answered(results[0])
    long_line = answered(results[4]).splitlines()[0]
    assert long_line.startswith("k5 environment area:webhooks  the webhook payload is long")
    assert long_line.endswith("…") and 250 < len(long_line) <= 300


def test_search_that_finds_nothing_says_so(imported):
    (result,) = calls(imported, ("know_search", {"query": "kubernetes"}))
    assert answered(result) == "no facts match"
    assert result.structured_content == {"hits": []}


def test_show_answers_the_fact_as_brainmigrate_show_prints_it(imported):
    shown, by_number = calls(imported, ("know_show", {"id": "k2"}), ("know_show", {"id": "2"}))
    r = cli("show", "k2", "--store", imported / "know.db", "--root", imported / "repo")
    assert r.exit_code == 0, r.output
    assert answered(shown) + "\n" == r.stdout
    assert answered(by_number) == answered(shown)
    r = cli("show", "k2", "--format", "json", "--store", imported / "know.db")
    assert shown.structured_content == json.loads(r.stdout)
    assert "fingerprinted" in answered(shown)


def test_refusals_are_error_results_and_the_server_answers_after_them(base):
    before = rows(base / "know.db", "SELECT count(*) FROM facts")
    store = str(base / "know.db")
    results = calls(
        base,
        ("know_show", {"id": "k99"}),
        ("know_show", {"id": "nonsense"}),
        ("know_verify", {"id": "k99"}),
        ("know_search", {"query": "retries", "limit": 31}),
        ("know_search", {"query": "retries", "limit": 0}),
        ("know_search", {"query": "retries", "kind": "idea"}),
        ("know_search", {"query": "  "}),
        ("know_search", {"anchor": "#"}),
        ("know_search", {"query": "retries", "limit": 1}),
    )
    *errors, after = results
    said = [refused(r) for r in errors]
    assert said[:8] == [
        f"no fact k99 in {store}; 'brainmigrate search' finds ids",
        "'nonsense' is not a fact id; give one like k17 or 17",
        said[2],
        "limit '31' is not a number from 1 to 30",
        "limit '0' is not a number from 1 to 30",
        "kind 'idea' is not one of decision, pattern, blocker, environment, other",
        "give query (the question), or anchor, or both",
        "anchor '#' names no file or declaration; give a path (src/Foo.kt), a name"
        " (Foo.start) or both (src/Foo.kt#Foo.start)",
    ]
    assert "k99" in said[2]
    for message in said:
        assert "\n" not in message and "Traceback" not in message
    assert answered(after) == search_cli(base, "retries", "--limit", "1").rstrip("\n")
    assert rows(base / "know.db", "SELECT count(*) FROM facts") == before


def test_a_put_refused_writes_nothing_and_the_server_answers_after_it(base):
    before = rows(base / "know.db", "SELECT * FROM facts ORDER BY id")
    results = calls(
        base,
        ("know_put", {"text": "", "scope": "area:webhooks"}),
        ("know_put", {"text": "a fact", "scope": "area:webhooks", "kind": "idea"}),
        ("know_put", {"text": "a fact", "scope": "area:webhooks", "anchors": ["../../etc/passwd"]}),
        ("know_put", {"text": "a fact", "scope": "area:webhooks", "supersedes": ["k99"]}),
        ("know_put", {"text": "x" * 2001, "scope": "area:webhooks"}),
        ("know_search", {"query": "retries", "limit": 1}),
    )
    *errors, after = results
    said = [refused(r) for r in errors]
    assert said == [
        "text: empty; give the fact as one line of text",
        "kind: 'idea' is not a kind; give one of decision, pattern, blocker, environment, other",
        f"anchors[0]: ../../etc/passwd is outside every root ({base / 'repo'}); anchor a path"
        " inside a checkout",
        "supersedes: no fact k99 in the store; 'brainmigrate search' finds ids",
        "text: 2001 characters, more than 2000; state the fact shorter or split it",
    ]
    assert answered(after) == search_cli(base, "retries", "--limit", "1").rstrip("\n")
    assert rows(base / "know.db", "SELECT * FROM facts ORDER BY id") == before


def test_stale_lists_a_fact_whose_file_is_gone_and_verify_refuses_it(base):
    (base / "repo" / "src" / "gateway.py").unlink()
    stale, verify_gone, verify_fresh, search = calls(
        base,
        ("know_stale", {}),
        ("know_verify", {"id": "k3"}),
        ("know_verify", {"id": "k2"}),
        ("know_search", {"query": "gateway"}),
    )
    assert answered(stale) == (
        "k3 blocker area:webhooks STALE: file gone: src/gateway.py  the gateway in"
        " `src/gateway.py` hangs without network (CL-90)\n"
        "STALE: checked 2, stale 1, unreachable 0"
    )
    assert stale.structured_content["checked"] == 2
    assert [h["fact"]["id"] for h in stale.structured_content["stale"]] == ["k3"]
    assert refused(verify_gone) == "k3: file gone: src/gateway.py"
    fresh = answered(verify_fresh)
    assert fresh.startswith("verified k2\nk2 environment area:webhooks (active)\n")
    r = cli("show", "k2", "--store", base / "know.db", "--root", base / "repo")
    assert fresh == "verified k2\n" + r.stdout.rstrip("\n")
    assert answered(search) == search_cli(base, "gateway").rstrip("\n")
    assert "STALE: file gone: src/gateway.py" in answered(search)


def test_put_adds_updates_and_supersedes(base):
    added, again, superseding, anchored, search = calls(
        base,
        (
            "know_put",
            {
                "text": "the gateway retries twice on a 502",
                "scope": "area:payments",
                "kind": "decision",
                "task": "CL-91",
            },
        ),
        (
            "know_put",
            {
                "text": "The gateway retries twice on a 502.",
                "scope": "area:payments",
                "kind": "decision",
                "task": "CL-91",
            },
        ),
        (
            "know_put",
            {
                "text": "retries back off linearly, capped at ten seconds",
                "scope": "area:webhooks",
                "kind": "decision",
                "supersedes": ["k1"],
            },
        ),
        (
            "know_put",
            {
                "text": "parse keeps the offset",
                "scope": "area:webhooks",
                "anchors": ["src/pay.py#parse"],
                "verify": True,
            },
        ),
        ("know_search", {"query": "retries back off"}),
    )
    assert answered(added) == (
        "added k6\nk6 decision area:payments  the gateway retries twice on a 502 (CL-91)"
    )
    assert added.structured_content["action"] == "added"
    assert added.structured_content["replaced"] == 0
    assert answered(again) == (
        "updated k6\nk6 decision area:payments  The gateway retries twice on a 502. (CL-91)"
    )
    assert answered(superseding) == (
        "added k7\nk7 decision area:webhooks  retries back off linearly, capped at ten seconds"
        "\nreplaced 1"
    )
    assert answered(anchored) == "added k8\nk8 other area:webhooks  parse keeps the offset"
    anchors = anchored.structured_content["fact"]["anchors"]
    assert [(a["path"], a["symbol"], a["fingerprinted"]) for a in anchors] == [
        ("src/pay.py", "parse", True)
    ]
    assert "k1 " not in answered(search)
    assert answered(search) == search_cli(base, "retries back off").rstrip("\n")


def test_closing_stdin_ends_the_server_with_exit_0_and_only_protocol_on_stdout(imported):
    proc = subprocess.Popen(
        [sys.executable, *server_args(imported)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        hello = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"},
            },
        }
        out, err = proc.communicate(json.dumps(hello).encode() + b"\n", timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert (proc.returncode, err) == (0, b"")
    (answer,) = [json.loads(line) for line in out.splitlines()]
    assert answer["id"] == 1
    assert answer["result"]["serverInfo"]["name"] == "brainmigrate"


@pytest.mark.parametrize(
    ("signum", "code", "what"),
    [(signal.SIGTERM, 143, "terminated"), (signal.SIGINT, 130, "interrupted")],
)
def test_a_signal_ends_the_server_at_once_in_one_line(imported, signum, code, what):
    proc = subprocess.Popen(
        [sys.executable, *server_args(imported)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        proc.stdin.write(json.dumps(ping).encode() + b"\n")
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["id"] == 1  # serving, stdin still open
        proc.send_signal(signum)
        proc.wait(timeout=10)
        err = proc.stderr.read().decode()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            stream.close()
    assert proc.returncode == code
    assert err == (
        f"brainmigrate: {what} (a store and every output are written whole or not at all)\n"
    )


def run_mcp(*args, env=None, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "brainmigrate", "mcp", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=60,
    )


def test_a_store_that_cannot_be_prepared_or_a_missing_root_is_one_line_exit_2(tmp_path):
    (tmp_path / "file").write_text("not a folder\n", encoding="utf-8")
    done = run_mcp("--store", "file/know.db", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "brainmigrate: error: file/know.db: cannot read the store (Not a directory); make it"
        " readable or pass --store with another path\n"
    )
    done = run_mcp("--store", "know.db", "--root", "nowhere", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "brainmigrate: error: --root nowhere: no such folder; pass --root with the folder of"
        " a checkout\n"
    )
    assert not (tmp_path / "know.db").exists()


def test_without_the_mcp_extra_it_names_the_extra_to_install(tmp_path):
    """``import mcp`` fails (a package of that name that raises as a missing one would)."""
    missing = "raise ModuleNotFoundError(\"No module named 'mcp'\", name='mcp')\n"
    write(tmp_path, {"hide/mcp/__init__.py": missing})
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "hide")}
    done = run_mcp("--store", str(tmp_path / "know.db"), env=env)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "brainmigrate: error: mcp is not installed; install the extra with"
        " pip install 'brainmigrate[mcp]'\n"
    )
