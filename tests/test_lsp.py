"""``brainmigrate server``: a real LSP session over stdio with the command as a subprocess,
driven by pygls' own client (``pygls.lsp.client.LanguageClient``), in a real git checkout;
and ``notesview.check_text``, what it checks an unsaved buffer with.

Every wait is on a message with a timeout, never a sleep.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
import tomllib
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.lsp.client import LanguageClient
from pygls.uris import from_fs_path

from brainmigrate.read.run import ImportOptions
from brainmigrate.serving import notesview
from tests.trees import git, renamed, write

REPO = Path(__file__).resolve().parent.parent
#: Seconds any one message may take (the first check builds the checkout's index).
WAIT = 60

NOTES = (
    "- keep.py is at src/keep.py:2 and src/gone.py is gone\n"
    "- WidgetFactory makes widgets; see src/old.py\n"
)


def checkout(tmp_path: Path) -> Path:
    """A git checkout whose src/old.py was renamed to src/new.py, with src/keep.py,
    src/widget.py (declaring WidgetFactory) and notes/CLAUDE.md citing them."""
    repo = renamed(tmp_path / "repo", "x = 1\n")
    write(repo, {"src/keep.py": "a\nb\nc\n", "src/widget.py": "class WidgetFactory:\n    pass\n"})
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "more")
    write(repo, {"notes/CLAUDE.md": NOTES, "notes/other.txt": "src/gone.py\n"})
    return repo


class Session:
    """A client talking to ``brainmigrate server`` started in ``cwd``; each publish of
    diagnostics is queued."""

    def __init__(
        self, cwd: Path, cache: Path, args: tuple[str, ...] = (), folders: tuple = ()
    ) -> None:
        self.cwd, self.cache, self.args, self.folders = cwd, cache, args, folders
        self.client = LanguageClient("brainmigrate-tests", "1")
        self.published: asyncio.Queue = asyncio.Queue()
        queue = self.published

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def published(params: types.PublishDiagnosticsParams) -> None:
            queue.put_nowait(params)

    async def start(self) -> None:
        env = {**os.environ, "BRAINMIGRATE_CACHE_DIR": str(self.cache)}
        cmd = [sys.executable, "-m", "brainmigrate", "server", *map(str, self.args)]
        await self.client.start_io(*cmd, cwd=str(self.cwd), env=env)
        params = types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            root_uri=from_fs_path(str(self.cwd)),
            workspace_folders=[
                types.WorkspaceFolder(uri=from_fs_path(str(f)), name=f.name) for f in self.folders
            ]
            or None,
        )
        self.init = await asyncio.wait_for(self.client.initialize_async(params), WAIT)
        self.client.initialized(types.InitializedParams())

    async def diagnostics(self, uri: str) -> types.PublishDiagnosticsParams:
        """The next diagnostics published for ``uri`` (those of other documents dropped)."""
        while True:
            got = await asyncio.wait_for(self.published.get(), WAIT)
            if got.uri == uri:
                return got

    async def each(self, *uris: str) -> list[types.PublishDiagnosticsParams]:
        """The next diagnostics published for each of ``uris``, in the order of ``uris``
        (buffers are checked side by side: they may come in any order)."""
        got: dict[str, types.PublishDiagnosticsParams] = {}
        while len(got) < len(uris):
            one = await asyncio.wait_for(self.published.get(), WAIT)
            if one.uri in uris:
                got.setdefault(one.uri, one)
        return [got[u] for u in uris]

    def open(self, path: Path, text: str | None = None) -> str:
        uri = from_fs_path(str(path))
        item = types.TextDocumentItem(
            uri=uri, language_id="markdown", version=1, text=text or path.read_text()
        )
        self.client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=item))
        return uri

    def change(self, uri: str, version: int, text: str) -> None:
        doc = types.VersionedTextDocumentIdentifier(uri=uri, version=version)
        whole = types.TextDocumentContentChangeWholeDocument(text=text)
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(text_document=doc, content_changes=[whole])
        )

    async def stop(self) -> int:
        await asyncio.wait_for(self.client.shutdown_async(None), WAIT)
        self.client.exit(None)
        server = self.client._server
        code = await asyncio.wait_for(server.wait(), WAIT)
        await asyncio.wait_for(self.client.stop(), WAIT)
        return code


def session(
    tmp_path: Path, body, config: str | None = None, up: bool = False, args=(), prepare=None
) -> object:
    """Run ``body(session)`` (a coroutine function) in a started session in the checkout
    (holding ``.brainmigrate.toml`` ``config``, then ``prepare(checkout)`` called; with
    ``up``, started in the folder above it; ``args`` added to its command line), then shut
    it down; returns ``(what body returned, the server's exit code)``."""

    async def main():
        repo = checkout(tmp_path)
        if config is not None:
            write(repo, {".brainmigrate.toml": config})
        if prepare is not None:
            prepare(repo)
        s = Session(repo.parent if up else repo, tmp_path / "cache", tuple(args))
        s.repo = repo
        await s.start()
        try:
            out = await body(s)
        except BaseException:
            s.client._server.kill()
            raise
        return out, await s.stop()

    return asyncio.run(main())


def spans(params: types.PublishDiagnosticsParams) -> list[tuple]:
    return [
        (
            d.code,
            d.severity,
            d.range.start.line,
            d.range.start.character,
            d.range.end.line,
            d.range.end.character,
            d.message,
        )  # fmt: skip
        for d in params.diagnostics
    ]


def apply(text: str, edit: types.TextEdit) -> str:
    """``text`` with the one-line ``edit`` made (ASCII: UTF-16 units are characters)."""
    lines = text.split("\n")
    r = edit.range
    line = lines[r.start.line]
    lines[r.start.line] = line[: r.start.character] + edit.new_text + line[r.end.character :]
    return "\n".join(lines)


GONE = "cites src/gone.py, which no root holds"
OLD = "cites src/old.py, which no root holds; moved? src/new.py (renamed in git history)"
ERROR = types.DiagnosticSeverity.Error


def test_diagnostics_on_open_and_on_change_then_exit_0(tmp_path):
    """didOpen publishes check's findings of the buffer (codes, severities, messages,
    0-based ranges to the end of the cited path); a didChange that fixes both citations
    publishes none (after the debounce, waited for as the notification); a document that
    is no notes file gets nothing; shutdown then exit ends the server with 0."""

    async def body(s: Session):
        notes = s.cwd / "notes" / "CLAUDE.md"
        s.open(s.cwd / "notes" / "other.txt")  # no notes file: no diagnostics at all
        uri = s.open(notes)
        first = await s.diagnostics(uri)
        fixed = NOTES.replace("src/gone.py", "src/keep.py").replace("src/old.py", "src/new.py")
        s.change(uri, 2, fixed)
        second = await s.diagnostics(uri)
        return first, second, s.init.capabilities

    (first, second, caps), code = session(tmp_path, body)
    assert spans(first) == [
        ("BM101", ERROR, 0, 34, 0, 45, GONE),
        ("BM101", ERROR, 1, 35, 1, 45, OLD),
    ]
    assert first.version == 1
    assert {d.source for d in first.diagnostics} == {"brainmigrate"}
    assert spans(second) == [] and second.version == 2
    assert caps.hover_provider and caps.definition_provider
    assert caps.document_link_provider is not None and caps.code_action_provider is not None
    assert code == 0


def test_code_actions_fix_and_ignore(tmp_path):
    """A fixable finding's quick fix is the edit --fix makes (src/old.py to src/new.py);
    every finding has "Ignore CODE on this line", which appends the suppression; applying
    both and sending the text clears the diagnostics."""

    async def body(s: Session):
        uri = s.open(s.cwd / "notes" / "CLAUDE.md")
        await s.diagnostics(uri)
        whole = types.Range(start=types.Position(0, 0), end=types.Position(1, 0))
        params = types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=whole,
            context=types.CodeActionContext(diagnostics=[]),
        )
        actions = await asyncio.wait_for(s.client.text_document_code_action_async(params), WAIT)
        text = NOTES
        chosen = [a for a in actions if a.title.startswith("Replace")]
        chosen += [a for a in actions if a.title == "Ignore BM101 on this line"][:1]
        for action in chosen:
            (edit,) = action.edit.changes[uri]
            text = apply(text, edit)
        s.change(uri, 2, text)
        after = await s.diagnostics(uri)
        return [a.title for a in actions], text, after

    (titles, text, after), code = session(tmp_path, body)
    assert titles == [
        "Ignore BM101 on this line",
        "Replace src/old.py with src/new.py (git-rename)",
        "Ignore BM101 on this line",
    ]
    assert text == (
        "- keep.py is at src/keep.py:2 and src/gone.py is gone"
        " <!-- brainmigrate: ignore BM101 -->\n"
        "- WidgetFactory makes widgets; see src/new.py\n"
    )
    assert spans(after) == [] and code == 0


def test_hover_definition_and_links(tmp_path):
    """Hover says what a citation resolved to (an anchor's kind, path, lines, root; a
    gone path's state and its "moved?"); definition leads to the cited file at its line
    form's line and to the file declaring a CamelCase name at its declaration; document
    links are the cited paths a root holds."""

    async def body(s: Session):
        uri = s.open(s.cwd / "notes" / "CLAUDE.md")
        await s.diagnostics(uri)
        doc = types.TextDocumentIdentifier(uri=uri)

        async def ask(method, line, char):
            params = dict(text_document=doc, position=types.Position(line, char))
            if method == "hover":
                return await s.client.text_document_hover_async(types.HoverParams(**params))
            return await s.client.text_document_definition_async(types.DefinitionParams(**params))

        hovers = [await ask("hover", *at) for at in [(0, 20), (0, 40), (1, 40), (1, 4), (0, 1)]]
        defs = [await ask("definition", *at) for at in [(0, 20), (1, 4), (0, 40)]]
        links = await s.client.text_document_document_link_async(
            types.DocumentLinkParams(text_document=doc)
        )
        return hovers, defs, links

    (hovers, defs, links), code = session(tmp_path, body)
    root = str((tmp_path / "repo").resolve())
    texts = [h.contents.value if h else None for h in hovers]
    assert texts == [
        f"**src/keep.py**: anchor, file `src/keep.py`, line 2\n\nroot `{root}`",
        "**src/gone.py**: gone: no root holds it",
        "**src/old.py**: gone: no root holds it\n\nmoved? `src/new.py` (renamed in git history)",
        "**WidgetFactory**: anchor, declaration `WidgetFactory` in `src/widget.py`, lines"
        f" 1-2\n\nroot `{root}`",
        None,
    ]
    assert (hovers[0].range.start.character, hovers[0].range.end.character) == (16, 29)
    keep, widget, gone = defs
    assert keep.uri == from_fs_path(f"{root}/src/keep.py") and keep.range.start.line == 1
    assert widget.uri == from_fs_path(f"{root}/src/widget.py") and widget.range.start.line == 0
    assert gone is None
    found = [(ln.range.start.line, ln.range.start.character, ln.target) for ln in links]
    assert found == [
        (0, 2, from_fs_path(f"{root}/src/keep.py")),
        (0, 16, from_fs_path(f"{root}/src/keep.py")),
    ]
    assert code == 0


def test_unreadable_configuration_is_one_diagnostic_at_0_0(tmp_path):
    """A configuration that cannot be read is one error at 0:0 naming the file and the
    fault; the server keeps running (and exits 0)."""

    async def body(s: Session):
        uri = s.open(s.cwd / "notes" / "CLAUDE.md")
        return await s.diagnostics(uri)

    got, code = session(tmp_path, body, config="roots = [\n")
    (d,) = got.diagnostics
    assert (d.range.start.line, d.range.start.character, d.severity) == (0, 0, ERROR)
    assert d.message.startswith(".brainmigrate.toml: not valid TOML (") and code == 0


def test_configuration_is_found_from_the_notes_file_up(tmp_path):
    """Started in the folder above the checkout (which holds no configuration), the
    server reads the checkout's configuration for its notes file, found from the file's
    folder up: its ignore drops the two BM101s, the BM103 stays."""

    async def body(s: Session):
        uri = s.open(s.repo / "notes" / "CLAUDE.md", NOTES + "- and lib/none.py\n")
        return await s.diagnostics(uri)

    config = 'ignore = ["BM101"]\n'
    got, code = session(tmp_path, body, config=config, up=True)
    assert spans(got) == [
        ("BM103", types.DiagnosticSeverity.Warning, 2, 6, 2, 17,
         "cites lib/none.py, but nothing of it is in any root (no file citation?)"),
    ]  # fmt: skip
    assert code == 0


def test_isolated_and_root_as_check_takes_them(tmp_path):
    """``--isolated`` reads no configuration (its ignore of BM101 does not apply);
    ``--root`` names the checkout cited paths are looked up in (one holding src/gone.py:
    no BM101 for it, and src/old.py is gone without a rename there)."""
    other = tmp_path / "other"
    write(other, {"src/gone.py": "", "src/keep.py": "a\nb\n"})

    async def body(s: Session):
        uri = s.open(s.repo / "notes" / "CLAUDE.md")
        return await s.diagnostics(uri)

    config = 'ignore = ["BM101"]\n'
    got, code = session(tmp_path, body, config=config, args=("--isolated", "--root", other))
    assert [(d.code, d.range.start.line, d.message) for d in got.diagnostics] == [
        ("BM101", 1, "cites src/old.py, which no root holds"),
    ]
    assert code == 0


def test_config_and_isolated_exclude_each_other(tmp_path):
    """One line on stderr, exit 2, nothing on stdout (no session is begun)."""
    import subprocess

    done = subprocess.run(
        [sys.executable, "-m", "brainmigrate", "server", "--config", "x.toml", "--isolated"],
        capture_output=True, text=True, cwd=tmp_path, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith(
        "brainmigrate: error: --config and --isolated exclude each other; give one; see '"
    )
    assert done.stderr.count("\n") == 1


def test_check_text_reads_the_buffer_as_the_file(tmp_path, monkeypatch):
    """``notesview.check_text`` checks unsaved text as the file it names: findings name that
    file, a relative link resolves from its folder, and a fixable citation has its fix."""
    repo = checkout(tmp_path)
    monkeypatch.chdir(repo)
    monkeypatch.setenv("BRAINMIGRATE_CACHE_DIR", str(tmp_path / "cache"))
    text = "- see [k](../src/keep.py) and src/old.py\n"
    result = notesview.check_text("notes/CLAUDE.md", text, ImportOptions(roots=(".",)))
    (found,) = result.findings
    assert (found.file, found.line, found.col, found.code) == ("notes/CLAUDE.md", 1, 31, "BM101")
    fix = result.fix_of(found)
    assert (fix.old, fix.new, fix.how) == ("src/old.py", "src/new.py", "git-rename")
    assert (repo / "notes" / "CLAUDE.md").read_text() == NOTES  # the file is not read


DOCS = REPO / "docs" / "editors.md"


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", DOCS.read_text(encoding="utf-8"), re.S)


def test_editor_snippets_parse_and_name_the_server():
    """docs/editors.md: the Helix TOML parses and runs ``brainmigrate server``; the VS
    Code settings JSON parses and does too; the Neovim snippet starts the same command."""
    (helix,) = _blocks("toml")
    data = tomllib.loads(helix)
    server = data["language-server"]["brainmigrate"]
    assert (server["command"], server["args"]) == ("brainmigrate", ["server"])
    assert "brainmigrate" in data["language"][0]["language-servers"]
    (vscode,) = _blocks("json")
    settings = json.loads(vscode)
    assert settings["glspc.server.command"] == "brainmigrate"
    assert settings["glspc.server.commandArguments"] == ["server"]
    (lua,) = _blocks("lua")
    assert "cmd = { 'brainmigrate', 'server' }" in lua


@pytest.mark.parametrize(
    ("line", "code", "edit"),
    [
        ("- a src/x.py", "BM101", (12, 12, " <!-- brainmigrate: ignore BM101 -->")),
        (
            "- a src/x.py <!-- brainmigrate: ignore BM102 -->",
            "BM101",
            (13, 48, "<!-- brainmigrate: ignore BM102, BM101 -->"),
        ),  # fmt: skip
        (
            "- a src/x.py <!-- brainmigrate: allow-gone -->",
            "BM102",
            (13, 46, "<!-- brainmigrate: ignore BM101, BM102 -->"),
        ),  # fmt: skip
        ("- a src/x.py <!-- brainmigrate: ignore BM1 -->", "BM101", None),
        ("- a src/x.py <!-- 2024-01-02 -->", "BM101", None),
    ],
)
def test_ignore_edit_adds_or_merges_one_suppression(line, code, edit):
    """The "Ignore CODE on this line" edit: appended, merged into the line's suppression,
    none when the line waives the code already or ends with another trailer."""
    from brainmigrate.serving.notesview import ignore_edit

    assert ignore_edit(line, code) == edit


def test_changes_in_a_row_are_checked_once_after_the_last(tmp_path):
    """Two changes sent together are debounced: the next diagnostics are those of the
    second (version 3), the first is never published; a save of a cited file checks the
    open buffer again (the file it cited as gone is there now); closing the buffer clears
    its diagnostics and drops the pending check."""

    async def body(s: Session):
        uri = s.open(s.cwd / "notes" / "CLAUDE.md")
        await s.diagnostics(uri)
        s.change(uri, 2, "- see src/nowhere.py\n")
        s.change(uri, 3, "- see src/gone.py\n")
        debounced = await s.diagnostics(uri)
        write(s.cwd, {"src/gone.py": "back = 1\n"})
        doc = types.TextDocumentIdentifier(uri=from_fs_path(str(s.cwd / "src" / "gone.py")))
        s.client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=doc))
        saved = await s.diagnostics(uri)
        s.change(uri, 4, "- see src/nowhere.py\n")
        closing = types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri))
        s.client.text_document_did_close(closing)  # before the debounce ends: never checked
        closed = await s.diagnostics(uri)
        return debounced, saved, closed

    (debounced, saved, closed), code = session(tmp_path, body)
    assert debounced.version == 3
    assert spans(debounced) == [("BM101", ERROR, 0, 6, 0, 17, GONE)]
    assert spans(saved) == [] and code == 0
    assert spans(closed) == [] and closed.version is None


def test_without_the_editor_extra_it_names_the_extra_to_install(tmp_path):
    """``import pygls`` fails (a package of that name that raises as a missing one would):
    one line naming the extra, exit 2."""
    import subprocess

    missing = "raise ModuleNotFoundError(\"No module named 'pygls'\", name='pygls')\n"
    write(tmp_path, {"hide/pygls/__init__.py": missing})
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "hide")}
    done = subprocess.run(
        [sys.executable, "-m", "brainmigrate", "server"],
        capture_output=True, text=True, env=env, cwd=tmp_path, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "brainmigrate: error: pygls is not installed; install the extra with"
        " pip install 'brainmigrate[editor]'\n"
    )


def test_positions_are_in_the_agreed_code_units():
    """Columns go out and come in as the client's code units: UTF-16 by default (an
    emoji is two), UTF-8 when that was agreed (four)."""
    from pygls.workspace.position_codec import PositionCodec

    from brainmigrate.serving.lsp import Buffer

    text = "a\U0001f600 src/x.py\r\nnext"
    utf16, utf8 = Buffer(text), Buffer(text, PositionCodec(types.PositionEncodingKind.Utf8))
    r16, r8 = utf16.range(1, 4, 12), utf8.range(1, 4, 12)
    assert (r16.start.character, r16.end.character) == (4, 12)
    assert (r8.start.character, r8.end.character) == (6, 14)
    assert utf16.column(types.Position(0, 4)) == 4 and utf8.column(types.Position(0, 6)) == 4
    assert utf16.line(1) == "a\U0001f600 src/x.py" and utf16.line(3) == ""


def test_a_fault_is_one_line_in_the_document_and_a_traceback_in_the_log(
    tmp_path, monkeypatch, caplog
):
    """A fault while checking (here: the check raises) is one diagnostic at 0:0 saying
    so, never an exception out of the server; the traceback goes to the log."""
    from brainmigrate.serving import lsp
    from brainmigrate.serving.notesview import Given

    def broken(path, text, settings):
        raise RuntimeError("the index went away")

    monkeypatch.setattr(lsp, "analyse", broken)
    monkeypatch.chdir(tmp_path)
    server = lsp.make_server(Given(isolated=True, roots=(str(tmp_path),)))
    with caplog.at_level("ERROR", logger="brainmigrate.server"):
        view = server._analyse(str(tmp_path / "CLAUDE.md"), "- src/x.py\n")
        other = server._analyse(str(tmp_path / "notes.txt"), "- src/x.py\n")
    assert view.error == "brainmigrate server: internal error checking this file (see log)"
    (d,) = lsp.diagnostics(view, lsp.Buffer("- src/x.py\n"))
    assert (d.range.start.line, d.range.start.character, d.message) == (0, 0, view.error)
    assert other is None  # no notes file: not checked at all
    assert "RuntimeError: the index went away" in caplog.text


def test_only_notes_files_check_reads_are_checked(tmp_path):
    """A ``*.md``/``*.mdc`` file is a notes file unless an exclude glob (matched below
    the workspace folder) leaves it out; any other file is none."""
    from brainmigrate.config import Settings
    from brainmigrate.serving.notesview import is_notes

    settings = Settings(exclude=("drafts/*",))
    base = str(tmp_path)
    assert is_notes(f"{base}/notes/CLAUDE.md", settings, base)
    assert is_notes(f"{base}/.cursor/rules/a.mdc", settings, base)
    assert not is_notes(f"{base}/notes/drafts/a.md", settings, base)
    assert not is_notes(f"{base}/src/app.py", settings, base)


def test_documents_are_synced_whole_so_odd_line_breaks_stay_in_place(tmp_path):
    """The server asks for whole documents (``TextDocumentSyncKind.Full``): a line holding
    U+2028, U+000C or U+0085 is one line for the protocol (only ``\\n``, ``\\r\\n``, ``\\r``
    end one), and the findings after it stay on the lines the editor numbers (incremental
    sync placed changes by pygls' own line split, which also breaks at those)."""
    odd = "- a\u2028b src/gone.py\n- c\x0cd src/gone.py\n- e\x85f src/gone.py\n"

    async def body(s: Session):
        uri = s.open(s.cwd / "notes" / "CLAUDE.md", odd)
        first = await s.diagnostics(uri)
        s.change(uri, 2, odd + "- g src/gone.py\n")
        return first, await s.diagnostics(uri), s.init.capabilities.text_document_sync

    (first, second, sync), code = session(tmp_path, body)
    assert sync.change == types.TextDocumentSyncKind.Full
    want = [("BM101", ERROR, n, 6, n, 17, GONE) for n in range(3)]
    assert spans(first) == want
    assert spans(second) == [*want, ("BM101", ERROR, 3, 4, 3, 15, GONE)] and code == 0


def _baseline(repo: Path) -> None:
    """The checkout's baseline bl.json, written by ``check --update-baseline`` of its
    notes as they are (its two BM101s)."""
    import subprocess

    subprocess.run(
        [sys.executable, "-m", "brainmigrate", "check", "notes/CLAUDE.md", "--root", ".",
         "--baseline", "bl.json", "--update-baseline", "-q"],
        cwd=repo, capture_output=True, check=False,
    )  # fmt: skip
    assert (repo / "bl.json").is_file()


def test_the_buffer_is_checked_with_check_s_baseline_and_per_file_ignores(tmp_path):
    """The server runs the check ``check`` runs: the configured baseline's findings are
    Information, tagged ``[baseline]`` as ``check`` tags them, a new one stays an error;
    a ``per-file-ignores`` glob is matched against the notes file's own path (not the
    temporary copy the buffer is checked from), leaving its BM101 out for that file only."""

    async def body(s: Session):
        uri = s.open(s.cwd / "notes" / "CLAUDE.md", NOTES + "- new src/also-gone.py\n")
        other = s.open(s.cwd / "notes" / "AGENTS.md", "- lib/none.py and src/gone.py\n")
        return await s.each(uri, other)

    config = 'baseline = "bl.json"\nper-file-ignores = { "notes/AGENTS.md" = ["BM101"] }\n'
    (notes, other), code = session(tmp_path, body, config=config, prepare=_baseline)
    info = types.DiagnosticSeverity.Information
    assert spans(notes) == [
        ("BM101", info, 0, 34, 0, 45, GONE + " [baseline]"),
        ("BM101", info, 1, 35, 1, 45, OLD + " [baseline]"),
        ("BM101", ERROR, 2, 6, 2, 22, "cites src/also-gone.py, which no root holds"),
    ]
    assert [d.code for d in other.diagnostics] == ["BM103"] and code == 0


def test_each_workspace_folder_is_the_root_of_its_own_notes(tmp_path):
    """In a workspace of two folders, a notes file of the second is checked against the
    second (its default root is the folder that holds it), not the first the server was
    started in: lib/b.py is there, lib/none.py is gone."""
    second = tmp_path / "B"
    write(second, {"lib/b.py": "b = 1\n"})

    async def main():
        repo = checkout(tmp_path)
        s = Session(repo, tmp_path / "cache", folders=(repo, second))
        await s.start()
        uri = s.open(second / "notes" / "CLAUDE.md", "- uses lib/b.py and lib/none.py\n")
        got = await s.diagnostics(uri)
        return got, await s.stop()

    got, code = asyncio.run(main())
    assert [(d.code, d.message) for d in got.diagnostics] == [
        ("BM101", "cites lib/none.py, which no root holds"),
    ]
    assert code == 0


def _actions(s: Session, uri: str, first: int, last: int):
    params = types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=types.Range(start=types.Position(first, 0), end=types.Position(last, 0)),
        context=types.CodeActionContext(diagnostics=[]),
    )
    return asyncio.wait_for(s.client.text_document_code_action_async(params), WAIT)


def test_an_unused_suppression_is_removed_and_ignores_come_once_per_code(tmp_path):
    """A BM401 (an unused suppression) has "Remove the unused suppression", never "Ignore
    BM401" (which made another BM401); removing it clears the line. Three BM101s and a
    BM103 on one line give one "Ignore BM101", one "Ignore BM103", and one merged
    "Ignore BM101, BM103" that waives them all."""
    text = (
        "- uses src/keep.py <!-- brainmigrate: ignore BM103 -->\n"
        "- src/g1.py and src/g2.py and src/g3.py and lib/none.py\n"
    )

    async def body(s: Session):
        uri = s.open(s.cwd / "notes" / "CLAUDE.md", text)
        await s.diagnostics(uri)
        actions = await _actions(s, uri, 0, 1)
        fixed = text
        for a in actions:
            if a.title.startswith(("Remove", "Ignore BM101, BM103")):
                (edit,) = a.edit.changes[uri]
                fixed = apply(fixed, edit)
        s.change(uri, 2, fixed)
        return [a.title for a in actions], fixed, await s.diagnostics(uri)

    (titles, fixed, after), code = session(tmp_path, body)
    assert titles == [
        "Remove the unused suppression 'ignore BM103'",
        "Ignore BM101 on this line",
        "Ignore BM103 on this line",
        "Ignore BM101, BM103 on this line",
    ]
    assert fixed == (
        "- uses src/keep.py\n"
        "- src/g1.py and src/g2.py and src/g3.py and lib/none.py"
        " <!-- brainmigrate: ignore BM101, BM103 -->\n"
    )
    assert spans(after) == [] and code == 0


@pytest.mark.parametrize(
    ("line", "subject", "edit"),
    [
        ("- a <!-- brainmigrate: ignore BM103 -->", "ignore BM103", (3, 39, "")),
        ("- a <!-- brainmigrate: ignore BM101, BM103 -->", "ignore BM103",
         (4, 46, "<!-- brainmigrate: ignore BM101 -->")),
        ("- a <!-- brainmigrate: allow-gone -->", "allow-gone", (3, 37, "")),
        ("- a <!-- 2026-01-01 -->", "ignore BM103", None),
    ],
)  # fmt: skip
def test_unused_edit_takes_the_code_or_the_comment_out(line, subject, edit):
    assert notesview.unused_edit(line, subject) == edit


def test_exit_without_shutdown_a_request_after_it_and_bad_json(tmp_path):
    """As the protocol says: a request after shutdown is answered with InvalidRequest
    (not left unanswered); exit after shutdown is 0, exit without it 1. A message that
    is no JSON is one line on stderr, no traceback, and the server goes on."""
    from pygls.exceptions import JsonRpcException

    async def main():
        repo = checkout(tmp_path)
        s = Session(repo, tmp_path / "cache")
        await s.start()
        server = s.client._server
        server.stdin.write(b"Content-Length: 5\r\n\r\n{bad}")
        uri = s.open(repo / "notes" / "CLAUDE.md")
        await s.diagnostics(uri)
        await asyncio.wait_for(s.client.shutdown_async(None), WAIT)
        hover = types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(0, 20)
        )
        with pytest.raises(JsonRpcException) as refused:
            await asyncio.wait_for(s.client.text_document_hover_async(hover), WAIT)
        s.client.exit(None)
        code = await asyncio.wait_for(server.wait(), WAIT)
        err = (await server.stderr.read()).decode()
        await asyncio.wait_for(s.client.stop(), WAIT)
        t = Session(repo, tmp_path / "cache")
        await t.start()
        t.client.exit(None)
        unshut = await asyncio.wait_for(t.client._server.wait(), WAIT)
        await asyncio.wait_for(t.client.stop(), WAIT)
        return refused.value.code, code, err, unshut

    refused, code, err, unshut = asyncio.run(main())
    assert (refused, code, unshut) == (-32600, 0, 1)
    assert "Traceback" not in err and err.count("\n") == 1
    assert err.startswith("pygls") and "Unable to handle message" in err


def test_a_big_buffer_s_check_holds_up_no_other_buffer(tmp_path):
    """While a buffer of 20,000 lines is being checked, a small buffer opened after it is
    checked and published first (its check runs beside the big one, not after it); both
    are published, the big one with its 20,000 findings."""
    big = "".join(f"- fact {i} cites src/gone{i % 50}.py and src/keep.py\n" for i in range(20000))

    async def body(s: Session):
        warm = s.open(s.cwd / "notes" / "CLAUDE.md")  # the checkout's index is built once
        await s.diagnostics(warm)
        large = s.open(s.cwd / "notes" / "big" / "CLAUDE.md", big)
        small = s.open(s.cwd / "notes" / "small" / "CLAUDE.md", "- src/gone.py\n")
        order = []
        while len(order) < 2:
            got = await asyncio.wait_for(s.published.get(), WAIT)
            order.append((got.uri, len(got.diagnostics)))
        return order, large, small

    (order, large, small), code = session(tmp_path, body)
    assert order == [(small, 1), (large, 20000)] and code == 0


def _spaced(repo: Path) -> None:
    write(repo, {"src/dir with space/f#1.py": "x = 1\n"})
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a folder with spaces")


def test_a_line_past_the_end_and_a_backticked_path_with_spaces(tmp_path):
    """``src/keep.py:99`` (a file of 3 lines) is hovered in check's BM204 state, not as an
    anchor at line 99, and its definition is the file's top; a backticked path with
    spaces that anchors (``src/dir with space/f#1.py``) has its hover, definition and
    link over the whole path, as the resolver read it."""
    text = "- see src/keep.py:99 and `src/dir with space/f#1.py` here\n"

    async def body(s: Session):
        uri = s.open(s.cwd / "notes" / "CLAUDE.md", text)
        found = await s.diagnostics(uri)
        doc = types.TextDocumentIdentifier(uri=uri)
        out = []
        for char in (10, 35):
            at = dict(text_document=doc, position=types.Position(0, char))
            hover = await s.client.text_document_hover_async(types.HoverParams(**at))
            where = await s.client.text_document_definition_async(types.DefinitionParams(**at))
            out.append((hover, where))
        links = await s.client.text_document_document_link_async(
            types.DocumentLinkParams(text_document=doc)
        )
        return found, out, links

    (found, [(past, top), (spaced, there)], links), code = session(tmp_path, body, prepare=_spaced)
    root = str((tmp_path / "repo").resolve())
    assert [(d.code, d.message) for d in found.diagnostics] == [
        ("BM204", "line 99 is past the end of src/keep.py (3 lines)"),
    ]
    assert past.contents.value == (
        f"**src/keep.py:99**: line 99 is past the end of src/keep.py (3 lines)\n\n"
        f"file `src/keep.py`, root `{root}`"
    )
    assert (top.uri, top.range.start.line) == (from_fs_path(f"{root}/src/keep.py"), 0)
    assert spaced.contents.value == (
        f"**src/dir with space/f#1.py**: anchor, file `src/dir with space/f#1.py`\n\nroot `{root}`"
    )
    assert (spaced.range.start.character, spaced.range.end.character) == (26, 51)
    assert there.uri == from_fs_path(f"{root}/src/dir with space/f#1.py")
    assert [(k.range.start.character, k.range.end.character, k.target) for k in links] == [
        (6, 20, from_fs_path(f"{root}/src/keep.py")),
        (26, 51, from_fs_path(f"{root}/src/dir with space/f#1.py")),
    ]
    assert code == 0


def test_a_file_level_message_names_the_file_as_check_does(tmp_path):
    """A finding about the whole file (BM313) names it as ``check`` run in the server's
    folder does (notes/j/facts.md), not by an absolute path, at 0:0. (The buffer holds
    jsonl export lines that lack their kind: read by the jsonl reader, as check reads the
    file, each line warned about, and the file said to give no fact.)"""
    text = '{"id":"k1","text":"x"}\n{"id":"k2","text":"y"}\n'

    async def body(s: Session):
        uri = s.open(s.cwd / "notes" / "j" / "facts.md", text)
        return await s.diagnostics(uri)

    got, code = session(tmp_path, body)
    assert spans(got)[0] == (
        "BM313", types.DiagnosticSeverity.Warning, 0, 0, 0, 0,
        "0 fact lines in 2 lines of notes/j/facts.md: the jsonl reader found no fact in it;"
        " fix the lines it warns about, or pass --from with the reader the file needs",
    )  # fmt: skip
    assert [(g[0], g[2]) for g in spans(got)[1:]] == [("BM312", 0), ("BM312", 1)]
    assert code == 0


def test_an_incremental_change_is_made_by_the_protocol_s_line_rule(tmp_path):
    """A client that sends incremental changes all the same has them made where the
    editor made them: lines end at ``\\n``, ``\\r\\n``, ``\\r`` only (so the change on
    line 2, after a line holding U+2028, lands there), columns in UTF-16 units (after an
    emoji); the rest of the text is kept (pygls took such a change for the whole text)."""
    odd = "- a\u2028b src/gone.py\n- \U0001f600 src/gone.py\n"

    async def body(s: Session):
        uri = s.open(s.cwd / "notes" / "CLAUDE.md", odd)
        await s.diagnostics(uri)
        doc = types.VersionedTextDocumentIdentifier(uri=uri, version=2)
        at = types.Range(start=types.Position(1, 9), end=types.Position(1, 13))
        part = types.TextDocumentContentChangePartial(range=at, text="keep")
        s.client.text_document_did_change(
            types.DidChangeTextDocumentParams(text_document=doc, content_changes=[part])
        )
        return await s.diagnostics(uri)

    got, code = session(tmp_path, body)
    assert spans(got) == [("BM101", ERROR, 0, 6, 0, 17, GONE)] and code == 0


def test_ignoring_on_a_line_with_an_unused_suppression_drops_the_unused_code(tmp_path):
    """On a line whose ``ignore BM103`` waives nothing (a BM401) and which cites a gone
    path, "Ignore BM101 on this line" writes ``ignore BM101``, not ``ignore BM103,
    BM101`` (which kept the BM401): the line is clean after it."""
    text = "- has src/g5.py <!-- brainmigrate: ignore BM103 -->\n"

    async def body(s: Session):
        uri = s.open(s.cwd / "notes" / "CLAUDE.md", text)
        await s.diagnostics(uri)
        actions = await _actions(s, uri, 0, 0)
        (ignore,) = [a for a in actions if a.title.startswith("Ignore")]
        (edit,) = ignore.edit.changes[uri]
        s.change(uri, 2, apply(text, edit))
        return [a.title for a in actions], apply(text, edit), await s.diagnostics(uri)

    (titles, fixed, after), code = session(tmp_path, body)
    assert titles == ["Remove the unused suppression 'ignore BM103'", "Ignore BM101 on this line"]
    assert fixed == "- has src/g5.py <!-- brainmigrate: ignore BM101 -->\n"
    assert spans(after) == [] and code == 0
