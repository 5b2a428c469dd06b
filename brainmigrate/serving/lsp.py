"""``brainmigrate server``: a Language Server for notes files over stdio (pygls, extra
``editor``; docs/editors.md).

What ``check`` finds in a notes buffer's unsaved text is published as diagnostics on open
and, ``DEBOUNCE`` seconds after the last change, on change: the check ``check`` runs on
the file the buffer names (its configuration, baseline and per-file-ignores; the
workspace folder holding it its default root), with the same codes and messages; a
baselined finding is Information, tagged ``[baseline]``. A gone citation ``--fix`` would
rewrite has a quick fix, an unused suppression (BM401) its removal, the findings on a
fact's line "Ignore CODE on this line"; a citation has a hover (what it resolved to, its
state, a gone path's "moved?"), a definition (the cited file at its line, the file
declaring a CamelCase name at the declaration) and, when a root holds it, a document link.
Documents are synced whole. What a buffer shows comes from ``serving.notesview``, in the
protocol's terms from ``serving.lspview``; this module speaks the protocol (exit 0 after
``shutdown``, 1 without; a request after it is refused with InvalidRequest). Any
document but a notes file gets nothing. A fault is logged (stderr and
``window/logMessage``), never sent as a traceback.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import sys
import traceback
from concurrent.futures import ThreadPoolExecutor

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidRequest
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol, lsp_method
from pygls.protocol.json_rpc import RPCRequest

from brainmigrate import __version__
from brainmigrate.errors import BrainmigrateError
from brainmigrate.serving.lspview import (  # noqa: F401 - the server's parts, as lsp.X
    SEVERITY,
    Buffer,
    changed,
    code_actions,
    diagnostic_of,
    diagnostics,
    hover_text,
)
from brainmigrate.serving.notesview import Given, View, analyse, is_notes, settings_for

#: Seconds after the last change before a changed buffer is checked again.
DEBOUNCE = 0.3
#: Buffers checked at the same time (each in a thread of its own).
CHECKERS = 4

log = logging.getLogger("brainmigrate.server")


class Protocol(LanguageServerProtocol):
    """pygls' protocol, but a request after ``shutdown`` is answered with the error
    InvalidRequest, as the protocol says (pygls drops it, and the client waits forever),
    and an incremental change (sent though the server asks for whole documents) is made
    by the protocol's line rule (``lspview.changed``), never taken for the whole text."""

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams):
        doc = self.workspace.get_text_document(params.text_document.uri)
        for change in params.content_changes:
            if isinstance(change, types.TextDocumentContentChangePartial):
                text = changed(doc.source, change, self.workspace.position_codec)
                change = types.TextDocumentContentChangeWholeDocument(text=text)
            self.workspace.update_text_document(params.text_document, change)
        user = self.fm.features.get(types.TEXT_DOCUMENT_DID_CHANGE)
        if user is not None:
            yield user, (params,), None

    def handle_message(self, message) -> None:
        if self._shutdown and isinstance(message, RPCRequest):
            error = JsonRpcInvalidRequest("the server was shut down; only exit is accepted")
            self._send_response(message.id, None, error.to_response_error())
            return
        super().handle_message(message)


class NotesServer(LanguageServer):
    """The server: the command line's ``Given``, the last ``View`` of each open notes
    buffer by its (version, text), and the pending debounced checks. Documents are synced
    whole (``TextDocumentSyncKind.Full``): an incremental change is placed by lines the
    client and pygls split differently (pygls also splits at U+2028, U+000C, U+0085, the
    protocol only at ``\n``, ``\r\n``, ``\r``), so the server's copy would drift."""

    def __init__(self, given: Given) -> None:
        super().__init__(
            "brainmigrate",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Full,
            protocol_cls=Protocol,
        )
        self.given = given
        self.views: dict[str, tuple[tuple, View | None]] = {}
        self.pending: dict[str, asyncio.Task] = {}
        self.running: dict[str, tuple[tuple, asyncio.Future]] = {}
        # off the protocol's loop, several buffers at a time
        self.checker = ThreadPoolExecutor(CHECKERS, thread_name_prefix="brainmigrate-check")

    def lines(self, uri: str) -> Buffer:
        """The buffer ``uri`` as it is now."""
        text = self.workspace.get_text_document(uri).source
        return Buffer(text, self.workspace.position_codec)

    async def view(self, uri: str) -> View | None:
        """The ``View`` of the buffer ``uri`` as it is now (None: no notes file), made
        in a checker thread when the text changed since the last one: one check per
        (version, text), awaited by every request that asks while it runs; a big
        buffer's check holds up no other buffer's."""
        doc = self.workspace.get_text_document(uri)
        key = (doc.version, doc.source)
        held = self.views.get(uri)
        if held is not None and held[0] == key:
            return held[1]
        running = self.running.get(uri)
        if running is None or running[0] != key:
            loop = asyncio.get_running_loop()
            made = loop.run_in_executor(self.checker, self._analyse, doc.path, doc.source)
            running = self.running[uri] = (key, made)
        # shielded: a cancelled publish leaves the check to the others waiting on it
        view = await asyncio.shield(running[1])
        if self.running.get(uri) is running:
            del self.running[uri]
            self.views[uri] = (key, view)
        return view

    def _analyse(self, path: str | None, text: str) -> View | None:
        if not path:
            return None
        path = os.path.abspath(path)
        workspace = self.folder_of(path)
        try:
            settings = settings_for(path, self.given, workspace)
            if not is_notes(path, settings, workspace):
                return None
            return analyse(path, text, settings)
        except (BrainmigrateError, OSError, ValueError) as exc:
            return View(error=str(exc))
        except Exception:  # noqa: BLE001 - logged, shown as one line, never a crash
            self.fault(f"checking {path} failed")
            return View(error="brainmigrate server: internal error checking this file (see log)")

    def folder_of(self, path: str) -> str | None:
        """The workspace folder holding ``path`` (absolute; the innermost of several), else
        the workspace's root folder, else None (not initialized, or no folder)."""
        from pygls.uris import to_fs_path

        try:
            folders = [to_fs_path(f.uri) for f in self.workspace.folders.values()]
            root = self.workspace.root_path
        except RuntimeError:  # not initialized: no workspace folder
            return None
        holding = [f for f in folders if f and path.startswith(os.path.join(f, ""))]
        return max(holding, key=len) if holding else root

    def fault(self, what: str) -> None:
        """Log the current exception to stderr and the client's log."""
        text = f"{what}:\n{traceback.format_exc()}"
        log.error("%s", text)
        with contextlib.suppress(Exception):  # the log on stderr has it
            self.window_log_message(
                types.LogMessageParams(type=types.MessageType.Error, message=text)
            )

    def schedule(self, uri: str, delay: float) -> None:
        """Check buffer ``uri`` after ``delay`` seconds, in place of a pending check."""
        pending = self.pending.pop(uri, None)
        if pending is not None:
            pending.cancel()
        self.pending[uri] = asyncio.get_running_loop().create_task(self._publish(uri, delay))

    async def _publish(self, uri: str, delay: float) -> None:
        try:
            if delay:
                await asyncio.sleep(delay)
            # the version and text the view is made of, though more changes may come
            version, lines = self.workspace.get_text_document(uri).version, self.lines(uri)
            view = await self.view(uri)
            if view is None:
                return
            found = diagnostics(view, lines)
            self.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=uri, diagnostics=found, version=version)
            )
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001
            self.fault(f"publishing the diagnostics of {uri} failed")


def _uri(path: str) -> str:
    from pygls.uris import from_fs_path

    return from_fs_path(path) or path


def _guarded(handler):
    """``handler`` (an async feature handler) answering None on a fault, which is logged
    (``NotesServer.fault``) instead of going to the client as an error with a traceback."""

    @functools.wraps(handler)
    async def run(ls: NotesServer, params):
        try:
            return await handler(ls, params)
        except Exception:  # noqa: BLE001 - logged; the editor keeps working
            ls.fault(f"{handler.__name__} failed")
            return None

    return run


def make_server(given: Given) -> NotesServer:
    """The server with its features registered: the buffers' life
    (``_buffer_features``) and what is asked of one (``_asked_features``)."""
    server = NotesServer(given)
    _buffer_features(server)
    _asked_features(server)
    return server


def _buffer_features(server: NotesServer) -> None:
    """didOpen, didChange (debounced), didSave (every open buffer again), shutdown (no
    check begun after it), didClose."""

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    @_guarded
    async def did_open(ls: NotesServer, params: types.DidOpenTextDocumentParams):
        ls.schedule(params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    @_guarded
    async def did_change(ls: NotesServer, params: types.DidChangeTextDocumentParams):
        ls.schedule(params.text_document.uri, DEBOUNCE)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    @_guarded
    async def did_save(ls: NotesServer, params: types.DidSaveTextDocumentParams):
        # a saved file may be what another buffer cites: every open buffer is read again
        ls.views.clear()
        ls.running.clear()
        for uri in list(ls.workspace.text_documents):
            ls.schedule(uri, 0)

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: NotesServer, params) -> None:
        # no check is begun after shutdown; one under way ends before the process does
        for pending in ls.pending.values():
            pending.cancel()
        ls.checker.shutdown(wait=False, cancel_futures=True)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    @_guarded
    async def did_close(ls: NotesServer, params: types.DidCloseTextDocumentParams):
        uri = params.text_document.uri
        pending = ls.pending.pop(uri, None)
        if pending is not None:
            pending.cancel()
        if ls.views.pop(uri, None) is not None:
            ls.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=uri, diagnostics=[])
            )


def _asked_features(server: NotesServer) -> None:
    """Code actions, hover, definition and document links."""

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]),
    )
    @_guarded
    async def code_action(ls: NotesServer, params: types.CodeActionParams):
        uri = params.text_document.uri
        view = await _checked(ls, uri)
        if view is None:
            return None
        first, last = params.range.start.line, params.range.end.line
        return code_actions(view, uri, ls.lines(uri), first, last)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    @_guarded
    async def hover(ls: NotesServer, params: types.HoverParams):
        found = await _spot(ls, params.text_document.uri, params.position)
        if found is None:
            return None
        spot, lines = found
        contents = types.MarkupContent(kind=types.MarkupKind.Markdown, value=hover_text(spot))
        return types.Hover(contents=contents, range=lines.range(spot.line, spot.col, spot.end))

    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    @_guarded
    async def definition(ls: NotesServer, params: types.DefinitionParams):
        found = await _spot(ls, params.text_document.uri, params.position)
        target = found[0].target() if found else None
        if target is None:
            return None
        path, line = target
        at = types.Position(line=max(line - 1, 0), character=0)
        return types.Location(uri=_uri(path), range=types.Range(start=at, end=at))

    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_LINK)
    @_guarded
    async def document_link(ls: NotesServer, params: types.DocumentLinkParams):
        uri = params.text_document.uri
        view = await _checked(ls, uri)
        if view is None:
            return None
        lines = ls.lines(uri)
        return [
            types.DocumentLink(
                range=lines.range(s.line, s.col, s.end),
                target=_uri(os.path.join(s.anchor.root, s.anchor.path)),
                tooltip=f"{s.anchor.path} in {s.anchor.root}",
            )
            for s in view.spots
            if s.anchor is not None and s.anchor.kind != "symbol"
        ]


async def _checked(ls: NotesServer, uri: str) -> View | None:
    """The current ``View`` of ``uri``; None for a document that is no notes file or could
    not be checked (its diagnostic says why), or on a fault (logged)."""
    try:
        view = await ls.view(uri)
    except Exception:  # noqa: BLE001
        ls.fault(f"reading {uri} failed")
        return None
    return None if view is None or view.error is not None else view


async def _spot(ls: NotesServer, uri: str, position: types.Position):
    """``(spot, lines)``: the citation at the LSP ``position`` of ``uri``, or None."""
    view = await _checked(ls, uri)
    if view is None:
        return None
    lines = ls.lines(uri)
    spot = view.spot_at(position.line + 1, lines.column(position))
    return None if spot is None else (spot, lines)


class OneLine(logging.Filter):
    """A record logged with its exception (pygls logs a message that is no JSON-RPC with
    its traceback) is one line: the message and the exception's text."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info:
            exc = record.exc_info[1]
            record.msg, record.args = f"{record.getMessage()}: {exc}", ()
            record.exc_info = record.exc_text = None
        return True


def run(given: Given) -> None:
    """Serve over stdin and stdout until the client says exit, then exit 0 after
    ``shutdown``, 1 without (or when standard input ends first), as the protocol says.
    Faults are logged to stderr; a message from the client that cannot be read is one
    line there."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="%(name)s: %(message)s")
    for handler in logging.getLogger().handlers:
        handler.addFilter(OneLine())
    server = make_server(given)
    server.start_io()
    sys.exit(0 if server.protocol._shutdown else 1)
