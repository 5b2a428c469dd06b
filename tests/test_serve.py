"""``brainmigrate serve``: the real daemon (a subprocess on a free loopback port) asked over
HTTP with httpx, on a store imported from a small notes file against a real checkout."""

from __future__ import annotations

import contextlib
import json
import os
import re
import selectors
import signal
import sqlite3
import stat
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from clirun import cli
from trees import committed, write

from brainmigrate.serving import http

TOKEN = "s3cret-token-for-tests"
NOTES = (
    "+ retries back off exponentially in src/retry.py TER-1\n"
    "~ the guide for new hands is doc/guide.md TER-2\n"
    "! the webhook queue drops events under load TER-3\n"
)
FILES = {
    "src/retry.py": "class Backoff:\n    def delay(self, n):\n        return 2 ** n\n",
    "doc/guide.md": "# Guide\n\nRun the tests first.\n",
}
#: The serve line: ``brainmigrate: serving STORE on http://HOST:PORT (token in FILE)``.
SERVING = re.compile(r"^brainmigrate: serving (.+) on (http://([0-9.]+):(\d+)) \(token in (.+)\)$")


def checkout(base: Path) -> tuple[Path, Path]:
    """The checkout ``base/repo`` of ``FILES`` and ``base/know.db`` imported (``--verify``)
    from ``base/notes/facts.md`` holding ``NOTES``; the store and the checkout."""
    repo = committed(base / "repo", FILES)
    write(base, {"notes/facts.md": NOTES})
    with contextlib.chdir(base):
        r = cli("import", "notes", "--root", "repo", "--store", "know.db", "--verify")
    assert r.exit_code == 0, r.output
    (base / "token").write_text(TOKEN + "\n", encoding="utf-8")
    return base / "know.db", repo


class Served:
    """A running ``brainmigrate serve`` subprocess: ``url``, ``token``, the ``line`` it
    printed at start, ``proc``, and ``client`` (httpx, the token sent)."""

    def __init__(self, proc: subprocess.Popen, line: str, token: str | None) -> None:
        self.proc, self.line = proc, line
        m = SERVING.match(line)
        assert m, line
        self.url, self.token_path = m.group(2), Path(m.group(5))
        self.token = token if token is not None else self.token_path.read_text().strip()
        headers = {http.TOKEN_HEADER: self.token}
        self.client = httpx.Client(base_url=self.url, headers=headers, trust_env=False, timeout=30)

    def stop(self, sig: int = signal.SIGTERM) -> tuple[int, str]:
        """Send ``sig``; the exit code and the rest of stderr (within 15 s)."""
        self.client.close()
        self.proc.send_signal(sig)
        _, err = self.proc.communicate(timeout=15)
        return self.proc.returncode, err


def first_line(proc: subprocess.Popen, timeout: float = 30) -> str:
    """The first line ``proc`` writes to stderr, waited for at most ``timeout`` seconds."""
    sel = selectors.DefaultSelector()
    sel.register(proc.stderr, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout
    while proc.poll() is None and time.monotonic() < deadline:
        if sel.select(deadline - time.monotonic()):
            return proc.stderr.readline().rstrip("\n")
    raise AssertionError(f"serve printed nothing (exit {proc.poll()})")


@contextlib.contextmanager
def serving(store: Path, *args, env: dict | None = None, token: str | None = TOKEN):
    """``brainmigrate serve --store STORE --port 0 ARGS`` (``--token-file`` of ``TOKEN``
    beside the store unless ``token`` is None) as a ``Served``, always ended."""
    more = ["--token-file", str(store.parent / "token")] if token is not None else []
    cmd = [sys.executable, "-m", "brainmigrate", "serve", "--store", str(store), "--port", "0"]
    proc = subprocess.Popen(
        [*cmd, *more, *args],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env={**os.environ, **(env or {})},
        cwd=store.parent,
    )
    try:
        yield Served(proc, first_line(proc), token)
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if proc.stderr:
            proc.stderr.close()


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> tuple[Path, Path]:
    return checkout(tmp_path_factory.mktemp("serve"))


@pytest.fixture(scope="module")
def server(tree):
    """One daemon for the tests that change nothing."""
    store, repo = tree
    with serving(store, "--root", str(repo)) as served:
        yield served


@pytest.fixture
def own(tmp_path):
    """A daemon of its own, on a store of its own (for the tests that write)."""
    store, repo = checkout(tmp_path)
    with serving(store, "--root", str(repo)) as served:
        served.repo, served.store = repo, store
        yield served


def test_search_answers_the_seeds_shape_and_the_cli_line(server, tree):
    store, repo = tree
    r = server.client.get("/know/search", params={"q": "retries"})
    assert r.status_code == 200
    hits = r.json()["hits"]
    assert [h["fact"]["id"] for h in hits] == ["k1"]
    assert (
        hits[0]["line"]
        == "k1 environment area:facts  retries back off exponentially in src/retry.py TER-1"
    )
    printed = cli("search", "retries", "--store", store, "--root", repo)
    assert printed.stdout.splitlines() == [h["line"] for h in hits]


def test_search_takes_the_filters(server):
    r = server.client.get(
        "/know/search", params={"q": "guide queue retries", "kind": "decision,blocker"}
    )
    assert sorted(h["fact"]["id"] for h in r.json()["hits"]) == ["k2", "k3"]
    r = server.client.get("/know/search", params={"anchor": "doc/guide.md"})
    assert [h["fact"]["id"] for h in r.json()["hits"]] == ["k2"]
    r = server.client.get("/know/search", params={"q": "guide queue retries", "limit": "1"})
    assert len(r.json()["hits"]) == 1


def test_show_is_what_show_json_prints(server, tree):
    store, repo = tree
    r = server.client.get("/know/k2")
    assert r.status_code == 200
    printed = cli("show", "k2", "--store", store, "--root", repo, "--format", "json")
    assert r.json() == json.loads(printed.stdout)
    assert server.client.get("/know/2").json() == r.json()


def test_stale_reads_every_anchored_fact(server):
    r = server.client.get("/know/stale")
    assert (r.status_code, r.json()) == (200, {"checked": 2, "unreachable": 0, "stale": []})


def test_a_gone_file_is_stale_and_its_verify_is_409(own):
    (own.repo / "doc/guide.md").unlink()
    r = own.client.get("/know/stale")
    assert r.status_code == 200
    body = r.json()
    assert (body["checked"], body["unreachable"]) == (2, 0)
    assert [h["line"] for h in body["stale"]] == [
        "k2 decision area:facts STALE: file gone: doc/guide.md  the guide for new hands is"
        " doc/guide.md TER-2"
    ]
    r = own.client.post("/know/k2/verify")
    assert (r.status_code, r.json()) == (409, {"error": "k2: file gone: doc/guide.md"})


def test_verify_fingerprints_the_anchors_now(own):
    (own.repo / "src/retry.py").write_text(FILES["src/retry.py"].replace("2 **", "3 **"))
    assert [h["fact"]["id"] for h in own.client.get("/know/stale").json()["stale"]] == ["k1"]
    r = own.client.post("/know/k1/verify")
    assert r.status_code == 200
    assert (r.json()["id"], r.json()["status"]) == ("k1", "active")
    assert own.client.get("/know/stale").json()["stale"] == []


@pytest.mark.parametrize("headers", [{}, {http.TOKEN_HEADER: "wrong"}, {http.TOKEN_HEADER: ""}])
@pytest.mark.parametrize(
    "method, path", [("GET", "/know/k1"), ("POST", "/know"), ("GET", "/nowhere")]
)
def test_every_route_wants_the_token(server, headers, method, path):
    r = httpx.request(method, server.url + path, headers=headers, trust_env=False, json={})
    assert r.status_code == 401
    what = "no" if not headers else "a wrong"
    assert r.json() == {
        "error": f"{what} x-brainmigrate-token header; send the token of the file serve named"
        " at start, once"
    }


def test_two_token_headers_are_refused(server):
    for tokens in ([TOKEN, "wrong"], ["wrong", TOKEN], [TOKEN, TOKEN]):
        headers = [(http.TOKEN_HEADER, t) for t in tokens]
        r = httpx.get(server.url + "/know/k1", headers=headers, trust_env=False)
        assert r.status_code == 401 and r.json()["error"].startswith("more than one")


def test_a_token_file_that_is_no_regular_file_is_refused_unread(tree, tmp_path):
    os.mkfifo(tmp_path / "fifo")
    for path in (tmp_path / "fifo", Path("/dev/zero")):
        r = cli("serve", "--store", tmp_path / "k.db", "--token-file", path, "--port", "0")
        assert r.exit_code == 2 and r.stderr.count("\n") == 1, r.stderr
        assert "not a file" in r.stderr or "is a" in r.stderr, r.stderr


def test_a_put_after_the_store_is_gone_makes_none(own):
    moved = own.store.with_name("moved.db")
    own.store.rename(moved)
    r = own.client.post("/know", json={"scope": "area:v", "text": "x"})
    assert r.status_code == 500 and "the store is gone" in r.json()["error"]
    assert not own.store.exists()


def test_a_body_with_a_bom_and_a_long_number(server):
    r = server.client.post(
        "/know",
        content=b"\xef\xbb\xbf" + b'{"scope": "area:b", "text": 1' + b"1" * 5000 + b"}",
        headers={"content-type": "application/json"},
    )
    assert r.status_code == 400 and r.json()["error"].endswith("a number of 5001 digits)")


@pytest.mark.parametrize(
    "params, error",
    [
        ({}, "give q (the question), or anchor, or both"),
        ({"q": "  "}, "give q (the question), or anchor, or both"),
        ({"q": "x", "limit": "31"}, "limit '31' is not a number from 1 to 30"),
        ({"q": "x", "limit": "two"}, "limit 'two' is not a number from 1 to 30"),
        (
            {"q": "x", "kind": "rumour"},
            "kind 'rumour' is not one of decision, pattern, blocker, environment, other",
        ),
    ],
)
def test_a_bad_search_is_400_with_the_reason(server, params, error):
    r = server.client.get("/know/search", params=params)
    assert (r.status_code, r.json()) == (400, {"error": error})


@pytest.mark.parametrize(
    "body, error",
    [
        (
            b"{",
            "the body is not JSON (Expecting property name enclosed in double quotes:"
            " line 1 column 2 (char 1))",
        ),
        (b'{"scope": "repo", "text": NaN}', "the body is not JSON (NaN is not a JSON number)"),
        (b'"caf\xe9"', "the body is not UTF-8 (byte 4)"),
        (b"[" * 100_000, f"the body nests deeper than {http.MAX_DEPTH} levels"),
        (
            b'{"text": ' + b"[" * 40 + b"]" * 40 + b"}",
            f"the body nests deeper than {http.MAX_DEPTH} levels",
        ),
    ],
)
def test_a_body_that_is_no_json_is_400(server, body, error):
    r = server.client.post("/know", content=body)
    assert (r.status_code, r.json()) == (400, {"error": error})


def test_a_body_of_another_type_is_415(server):
    r = server.client.post("/know", content=b"text=x", headers={"content-type": "text/plain"})
    assert r.status_code == 415
    assert r.json() == {"error": "content type 'text/plain': send the body as application/json"}


def test_a_huge_body_is_413_unread(server):
    huge = b" " * (http.MAX_BODY + 1)
    r = server.client.post("/know", content=huge)
    assert (r.status_code, r.json()) == (
        413,
        {"error": f"the body is {http.MAX_BODY + 1} bytes, over the bound of {http.MAX_BODY}"},
    )

    def chunks():  # no Content-Length: chunked, cut off once past the bound
        for _ in range(64):
            yield b" " * 65536

    r = server.client.post("/know", content=chunks())
    assert (r.status_code, r.json()) == (
        413,
        {"error": f"the body is over the bound of {http.MAX_BODY} bytes"},
    )
    assert server.client.get("/know/k1").status_code == 200  # and it still serves


def test_an_unknown_fact_route_or_method(server):
    r = server.client.get("/know/k99")
    assert r.status_code == 404
    assert r.json() == {
        "error": f"no fact k99 in {server.line.split()[2]}; 'brainmigrate search' finds ids"
    }
    r = server.client.get("/nowhere")
    assert (r.status_code, r.json()) == (
        404,
        {"error": f"no route GET /nowhere; the routes are {http.ROUTES}"},
    )
    r = server.client.delete("/know/k1")
    assert (r.status_code, r.json()) == (
        405,
        {"error": "DELETE is not allowed on /know/k1; use GET, HEAD"},
    )
    assert r.headers["allow"] == "GET, HEAD"
    assert server.client.get("/know/k1/verify").status_code == 405
    r = server.client.post("/know/", json={"scope": "repo", "text": "x"})
    assert (r.status_code, r.json()) == (
        404,
        {"error": f"no route POST /know/; the routes are {http.ROUTES}"},
    )


def test_a_stop_ends_promptly_without_a_traceback(tree, tmp_path):
    """SIGTERM and Ctrl-C each end the daemon at once with its last line (exit 0); the
    token file it made (mode 0600, in XDG_RUNTIME_DIR) is removed."""
    store, repo = tree
    for sig in (signal.SIGTERM, signal.SIGINT):
        runtime = tmp_path / sig.name
        runtime.mkdir()
        with serving(store, env={"XDG_RUNTIME_DIR": str(runtime)}, token=None) as served:
            made = served.token_path
            assert made.parent == runtime / "brainmigrate" and made.name.endswith(".token")
            assert stat.S_IMODE(made.stat().st_mode) == 0o600
            assert len(served.token) == 43  # secrets.token_urlsafe(32)
            assert served.client.get("/know/k1").status_code == 200
            code, err = served.stop(sig)
            assert (code, err) == (0, f"brainmigrate: stopped serving {store}\n")
            assert not made.exists()


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.10", "example.org", "::"])
def test_a_host_that_is_not_loopback_needs_allow_remote(tree, host):
    r = cli("serve", "--store", tree[0], "--host", host, "--token-file", tree[0].parent / "token")
    assert r.exit_code == 2
    assert r.stderr == (
        f"brainmigrate: error: --host {host} is not a loopback address; serve on 127.0.0.1 or"
        " ::1, or pass --allow-remote to listen there\n"
    )


def test_allow_remote_listens_on_another_address(tree):
    with serving(tree[0], "--host", "0.0.0.0", "--allow-remote") as served:
        assert SERVING.match(served.line).group(3) == "0.0.0.0"
        assert served.client.get("/know/k1").json()["id"] == "k1"


@pytest.mark.parametrize("host", ["127.0.0.1", "127.8.9.10", "localhost", "::1", "[::1]"])
def test_loopback_hosts(host):
    assert http.loopback(host)


def test_a_token_file_that_cannot_be_read_is_exit_2(tree, tmp_path):
    missing = tmp_path / "nope"
    r = cli("serve", "--store", tree[0], "--token-file", missing)
    assert (r.exit_code, r.stderr) == (
        2,
        f"brainmigrate: error: --token-file {missing}: cannot read it (No such file or"
        " directory); give a readable file\n",
    )
    (tmp_path / "empty").write_text("\n  \n")
    r = cli("serve", "--store", tree[0], "--token-file", tmp_path / "empty")
    assert (r.exit_code, r.stderr) == (
        2,
        f"brainmigrate: error: --token-file {tmp_path / 'empty'}: its first line is empty;"
        " write the token there\n",
    )


def test_a_root_that_is_no_folder_is_exit_2(tree, tmp_path):
    token = tree[0].parent / "token"
    r = cli("serve", "--store", tree[0], "--token-file", token, "--root", tmp_path / "nope")
    assert r.exit_code == 2
    assert r.stderr.startswith(f"brainmigrate: error: --root {tmp_path / 'nope'}")
    assert r.stderr.count("\n") == 1


def test_a_store_that_cannot_be_prepared_is_exit_2(tmp_path):
    (tmp_path / "token").write_text(TOKEN)
    (tmp_path / "know.db").write_text("not a database, just words\n")
    r = cli("serve", "--store", tmp_path / "know.db", "--token-file", tmp_path / "token")
    assert r.exit_code == 2
    assert r.stderr.startswith(f"brainmigrate: error: {tmp_path / 'know.db'}")
    assert r.stderr.count("\n") == 1


def test_a_port_in_use_makes_no_store(tmp_path):
    import socket

    (tmp_path / "token").write_text(TOKEN)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        r = cli("serve", "--store", tmp_path / "know.db", "--token-file", tmp_path / "token",
                "--port", port)  # fmt: skip
    assert r.exit_code == 2 and r.stderr.count("\n") == 1, r.stderr
    assert not (tmp_path / "know.db").exists()


BLOCKER = """
import sys
class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "starlette":
            raise ImportError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Blocker())
sys.argv = ["brainmigrate", "serve", "--store", sys.argv[1]]
from brainmigrate.__main__ import run
run()
"""


def test_serve_without_the_extra_names_it(tmp_path):
    done = subprocess.run(
        [sys.executable, "-c", BLOCKER, str(tmp_path / "know.db")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stderr) == (
        2,
        "brainmigrate: error: starlette is not installed; install the extra with pip install"
        " 'brainmigrate[serve]'\n",
    )
    assert not (tmp_path / "know.db").exists()


class Failing:
    """A service whose every call fails as nothing a client sent could make it fail."""

    def show(self, fact_id):
        raise RuntimeError("the disk caught fire")

    def search(self, params):
        from brainmigrate.serving.service import ServiceError

        raise ServiceError(503, "store is busy; try again", 1)


def test_an_unexpected_error_is_500_and_one_line(capsys):
    from starlette.testclient import TestClient

    with TestClient(http.app(Failing(), TOKEN), raise_server_exceptions=False) as client:
        r = client.get("/know/k1", headers={http.TOKEN_HEADER: TOKEN})
        assert (r.status_code, r.json()) == (500, {"error": "internal error"})
        r = client.get("/know/search?q=x", headers={http.TOKEN_HEADER: TOKEN})
        assert (r.status_code, r.json()) == (503, {"error": "store is busy; try again"})
        assert r.headers["retry-after"] == "1"
    assert capsys.readouterr().err == (
        "brainmigrate: internal error answering GET /know/k1: RuntimeError: the disk caught fire\n"
    )


def test_a_put_is_written_and_found(own):
    r = own.client.post(
        "/know",
        json={
            "scope": "area:webhooks",
            "text": "webhook retries cap at one minute",
            "kind": "decision",
            "task": "TER-9",
        },
    )
    assert r.status_code == 200
    body = r.json()
    assert (body["action"], body["replaced"], body["fact"]["id"]) == ("added", 0, "k4")
    hits = own.client.get("/know/search", params={"q": "webhook minute"}).json()["hits"]
    assert hits[0]["line"] == "k4 decision area:webhooks  webhook retries cap at one minute (TER-9)"
    r = own.client.post(
        "/know",
        json={
            "facts": [
                {"scope": "repo", "text": "one more fact"},
                {"scope": "repo", "text": "and another"},
            ]
        },
    )
    assert r.status_code == 200
    assert [(a["action"], a["fact"]["id"]) for a in r.json()["answers"]] == [
        ("added", "k5"),
        ("added", "k6"),
    ]
    # the same words again in its scope: the fact is updated, and k1 is superseded by it
    again = {
        "scope": "area:webhooks",
        "text": "webhook retries cap at one  minute",
        "task": "TER-9",
        "supersedes": ["k1"],
    }
    r = own.client.post("/know", json=again)
    assert (r.status_code, r.json()["action"], r.json()["fact"]["id"], r.json()["replaced"]) == (
        200,
        "updated",
        "k4",
        1,
    )
    assert own.client.get("/know/search", params={"q": "exponentially"}).json() == {"hits": []}
    assert rows_of(own.store) == 6


@pytest.mark.parametrize(
    "body, error",
    [
        ({"scope": 5, "text": "x"}, "scope: must be text"),
        ({"scope": "repo", "text": ["x"]}, "text: must be text"),
        ({"scope": "repo"}, "text: missing; a fact needs scope and text"),
        ({"facts": "no list"}, "facts: must be a list of fact objects"),
        ({"facts": []}, "facts: give 1 to 1000 facts, not 0"),
        ([1, 2], 'the JSON: must be a fact object ({"scope": …, "text": …})'),
        (
            {"scope": "repo", "text": "x", "kind": "rumour"},
            "kind: 'rumour' is not a kind; give one of decision, pattern, blocker, environment,"
            " other",
        ),
    ],
)
def test_a_put_of_wrong_types_is_400_and_names_the_field(server, tree, body, error):
    r = server.client.post("/know", json=body)
    assert (r.status_code, r.json()) == (400, {"error": error})
    assert rows_of(tree[0]) == 3


def test_a_put_anchored_outside_the_roots_writes_nothing(own):
    r = own.client.post(
        "/know",
        json={
            "scope": "repo",
            "text": "the password file is read",
            "anchors": [{"path": "../../etc/passwd"}],
        },
    )
    assert (r.status_code, r.json()) == (
        400,
        {
            "error": f"anchors[0]: ../../etc/passwd is outside every root ({own.repo});"
            " anchor a path inside a checkout"
        },
    )
    assert own.client.get("/know/search", params={"q": "password"}).json() == {"hits": []}
    assert rows_of(own.store) == 3


def rows_of(store: Path) -> int:
    con = sqlite3.connect(store)
    try:
        return con.execute("SELECT count(*) FROM facts").fetchone()[0]
    finally:
        con.close()


def test_a_writer_held_past_the_busy_timeout_is_503_and_readers_go_on(tmp_path):
    """Another writer holds the store (an open write transaction): a write (``verify``)
    waits the busy timeout, then 503 with Retry-After; a search is answered meanwhile
    (WAL: readers never wait for a writer); once the writer is done, the write goes
    through."""
    store, repo = checkout(tmp_path)
    env = {"BRAINMIGRATE_BUSY_TIMEOUT": "0.2"}
    with serving(store, "--root", str(repo), env=env) as served:
        holder = sqlite3.connect(store, isolation_level=None)
        try:
            holder.execute("BEGIN IMMEDIATE")
            holder.execute("UPDATE facts SET text = text WHERE id = 1")
            r = served.client.post("/know/k1/verify")
            assert (r.status_code, r.headers["retry-after"]) == (503, "1")
            assert r.json() == {
                "error": f"{store}: store is busy (another writer holds it); try again when"
                " it is done"
            }
            r = served.client.get("/know/search", params={"q": "retries"})
            assert [h["fact"]["id"] for h in r.json()["hits"]] == ["k1"]
        finally:
            holder.close()
        assert served.client.post("/know/k1/verify").status_code == 200


def test_a_request_that_is_no_http_is_400_and_one_log_line(own):
    import socket

    host, port = own.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as s:
        s.sendall(b"NOT HTTP AT ALL\r\n\r\n")
        assert s.recv(1000).startswith(b"HTTP/1.1 400 Bad Request\r\n")
    assert own.client.get("/know/k1").status_code == 200
    code, err = own.stop()
    assert (code, err) == (
        0,
        "brainmigrate: Invalid HTTP request received.\n"
        f"brainmigrate: stopped serving {own.store}\n",
    )


def test_puts_waiting_for_the_lock_leave_the_reads_threads_free(tmp_path):
    """45 puts wait for a write lock another process holds (more than the thread pool's 40
    threads): a search and a show are answered while they wait, not after the busy
    timeout; once the lock is released every put lands."""
    import threading

    store, repo = checkout(tmp_path)
    env = {"BRAINMIGRATE_BUSY_TIMEOUT": "20"}
    with serving(store, "--root", str(repo), env=env) as served:
        holder = sqlite3.connect(store, isolation_level=None)
        answers: list[int] = []
        try:
            holder.execute("BEGIN IMMEDIATE")

            def put(i: int) -> None:
                headers = {http.TOKEN_HEADER: TOKEN}
                with httpx.Client(base_url=served.url, headers=headers, trust_env=False) as c:
                    body = {"scope": "area:load", "text": f"waiting put {i}"}
                    answers.append(c.post("/know", json=body, timeout=60).status_code)

            threads = [threading.Thread(target=put, args=(i,)) for i in range(45)]
            for t in threads:
                t.start()
            tasks = Path(f"/proc/{served.proc.pid}/task")
            for _ in range(200):  # the puts' threads wait on the lock (at least 4 of them)
                if len(list(tasks.iterdir())) >= 6:
                    break
                threading.Event().wait(0.05)
            threading.Event().wait(1)  # and the rest of them queue up
            got = served.client.get("/know/search", params={"q": "retries"}, timeout=10)
            assert got.status_code == 200 and answers == []  # answered while all wait
            assert served.client.get("/know/k1", timeout=10).status_code == 200
            assert answers == []
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        for t in threads:
            t.join(60)
        assert answers == [200] * 45
