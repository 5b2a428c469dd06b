"""``brainmigrate mcp``: the store served to an agent as a stdio MCP server (extra ``mcp``).

Made with the official SDK's ``MCPServer`` (``mcp`` 2.x). Five tools, each one
``Service`` call: ``know_search``, ``know_put``, ``know_show``, ``know_stale`` and
``know_verify``. Each answers text an agent reads (search: the compact lines of
``search.hit_line``, the same as ``brainmigrate search`` prints) and, beside it, the
service's JSON (the seed's HTTP shapes) as structured content. A ``ServiceError`` is a
tool error result (``isError``) holding its one-line message; the server goes on serving.

The protocol owns stdout: while the SDK serves, fd 1 points at stderr (``stdio_server``),
so nothing the library prints can reach the wire; the SDK's log goes to stderr at level
WARNING. The server ends when the client closes stdin (exit 0), or on Ctrl-C or SIGTERM
(the CLI's one line, exit 130 or 143).
"""

import os
import signal
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field, ValidationError

from brainmigrate.__main__ import _early
from brainmigrate.serving.service import Service, ServiceError

#: What the server tells the client about itself when it connects (``instructions``).
INSTRUCTIONS = (
    "brainmigrate's fact store: what earlier agent runs learned about this code (decisions,"
    " patterns, blockers, environment facts), each fact one line with a scope, a kind and"
    " the code it is anchored to; a fact whose anchored code changed since it was verified"
    " is marked STALE. Search before you change code; put what you learn."
)

SEARCH = (
    "Before changing code in an area, or when stuck on something an earlier run may have"
    " met, search what earlier runs learned about it: decisions, patterns, blockers and"
    " environment facts. Answers at most `limit` compact lines, best first, one per fact:"
    " `id kind scope [STALE: reason]  text (task)` (e.g. `k41 decision area:webhooks  retries"
    " back off exponentially (CL-86)`), or `no facts match`. A STALE fact's code changed"
    " since it was verified: check it before you trust it. Give `query`, `anchor`, or both."
)
PUT = (
    "After you learn a decision, pattern, blocker or environment fact worth keeping for"
    " later runs, put it: one line of text, with the scope it is about and the code it"
    " holds for (anchors). A near-identical fact of the same scope is updated rather than"
    " added twice. Answers `added k42` or `updated k17`, the fact's search line, and"
    " `replaced N` when `supersedes` took N older facts out of search."
)
SHOW = (
    "Show one fact whole (text, source, anchors and whether they are fingerprinted,"
    " status, links), when a search line is not enough: before acting on a STALE fact, or"
    " to see which code a fact is anchored to."
)
STALE = (
    "Read every anchored fact again against the checkouts and list the stale ones (their"
    " code changed or is gone since they were verified), then the counts. Use it after a"
    " refactor or before relying on the store for a wide change. Changes nothing."
)
VERIFY = (
    "After you checked that a fact still holds for its code as it is now (a STALE one"
    " included), record that: its anchors are fingerprinted again at the checkout's commit"
    " and the fact is fresh. Refused, with the reason, when an anchored file or"
    " declaration is gone: then put a corrected fact that supersedes it."
)

FactId = Annotated[str, Field(description="A fact id: k17, or the number alone (17).")]


def _text(text: str, structured: Any = None, error: bool = False) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=structured,
        is_error=error,
    )


def _refused(exc: ServiceError) -> CallToolResult:
    """A ``ServiceError`` as a tool error result: the one-line reason (and, when the store
    is busy, when to try again)."""
    message = str(exc)
    if exc.retry_after is not None:
        message += f"; try again in {exc.retry_after} s"
    return _text(message, error=True)


def _answered(work) -> CallToolResult:
    """``work()``'s result, or its ``ServiceError`` as a tool error result."""
    try:
        return work()
    except ServiceError as exc:
        return _refused(exc)


class Tools:
    """The five tools over one ``Service``; each method is a tool (its signature the input
    schema, ``Annotated`` descriptions the arguments') answering a ``CallToolResult``."""

    def __init__(self, service: Service) -> None:
        self.service = service

    def know_search(
        self,
        query: Annotated[
            str, Field(description="The question, in words (e.g. 'how are retries backed off').")
        ] = "",
        anchor: Annotated[
            str | None,
            Field(
                description="Only facts anchored to this code: a path or file name"
                " (src/Foo.kt, Foo.kt), a symbol (Foo, Foo.parse) or both (src/Foo.kt#Foo.parse)."
            ),
        ] = None,
        scope: Annotated[
            str | list[str] | None,
            Field(
                description="Only these scopes, a list or comma-separated (repo, area:webhooks,"
                " file:src/Foo.kt, symbol:Foo.parse, task:TER-12; a bare 'area' is every area)."
            ),
        ] = None,
        kind: Annotated[
            str | list[str] | None,
            Field(
                description="Only these kinds, a list or comma-separated: decision, pattern,"
                " blocker, environment, other."
            ),
        ] = None,
        limit: Annotated[
            int,
            Field(
                description="At most this many lines (1 to 30).",
                json_schema_extra={"minimum": 1, "maximum": 30},
            ),
        ] = 5,
        all: Annotated[  # the HTTP route's parameter
            bool, Field(description="Superseded facts too.")
        ] = False,
    ) -> CallToolResult:
        if not query.strip() and anchor is None:
            return _text("give query (the question), or anchor, or both", error=True)
        params = {"q": query, "limit": str(limit), "all": "1" if all else ""}
        for name, value in (("anchor", anchor), ("scope", scope), ("kind", kind)):
            if value is not None:
                params[name] = value if isinstance(value, str) else ",".join(value)

        def work() -> CallToolResult:
            answer = self.service.search(params)
            lines = [hit["line"] for hit in answer["hits"]]
            return _text("\n".join(lines) if lines else "no facts match", answer)

        return _answered(work)

    def know_put(
        self,
        text: Annotated[str, Field(description="The fact, one line (at most 2000 characters).")],
        scope: Annotated[
            str,
            Field(
                description="What it is about: repo, area:<name>, file:<path>,"
                " symbol:<path>#<Container.name> or task:<id>."
            ),
        ],
        kind: Annotated[
            str | None,
            Field(
                description="decision, pattern, blocker, environment or other (default: other"
                " for a new fact; an update keeps the kind it has)."
            ),
        ] = None,
        task: Annotated[
            str | None, Field(description="The task it was learned in (e.g. CL-86).")
        ] = None,
        run: Annotated[str | None, Field(description="The run that learned it.")] = None,
        anchors: Annotated[
            list[str],
            Field(
                description="The code it holds for, each a path (src/Foo.kt), a symbol"
                " (Foo.parse) or both (src/Foo.kt#Foo.parse), inside the served checkouts."
            ),
        ] = [],  # noqa: B006 - never mutated; the schema's default
        supersedes: Annotated[
            list[str], Field(description="Ids of facts it replaces (they leave search).")
        ] = [],  # noqa: B006
        related: Annotated[list[str], Field(description="Ids of related facts.")] = [],  # noqa: B006
        verify: Annotated[
            bool,
            Field(
                description="Fingerprint the anchors now (the fact holds for the code as it is)."
            ),
        ] = False,
    ) -> CallToolResult:
        body: dict[str, Any] = {"text": text, "scope": scope, "verify": verify}
        for name, value in (("kind", kind), ("task", task), ("run", run)):
            if value is not None:
                body[name] = value
        lists = (("anchors", anchors), ("supersedes", supersedes), ("related", related))
        for name, values in lists:
            if values:
                body[name] = list(values)

        def work() -> CallToolResult:
            answer = self.service.put_answers(body)[0]
            number = answer.fact["id"]
            lines = [f"{answer.action} {number}", answer.line]
            if answer.replaced:
                lines.append(f"replaced {answer.replaced}")
            return _text("\n".join(lines), answer.to_dict())

        return _answered(work)

    def know_show(self, id: FactId) -> CallToolResult:
        from brainmigrate.search import render_fact

        def work() -> CallToolResult:
            fact = self.service.show(id)
            return _text(render_fact(fact).rstrip("\n"), fact)

        return _answered(work)

    def know_stale(self) -> CallToolResult:
        def work() -> CallToolResult:
            answer = self.service.stale()
            lines = [hit["line"] for hit in answer["stale"]]
            lines.append(
                f"{'STALE' if lines else 'OK'}: checked {answer['checked']}, stale {len(lines)},"
                f" unreachable {answer['unreachable']}"
            )
            return _text("\n".join(lines), answer)

        return _answered(work)

    def know_verify(self, id: FactId) -> CallToolResult:
        from brainmigrate.search import render_fact

        def work() -> CallToolResult:
            fact = self.service.verify(id)
            return _text(f"verified {fact['id']}\n" + render_fact(fact).rstrip("\n"), fact)

        return _answered(work)


#: Each tool: its description and whether it only reads (``readOnlyHint``).
TOOLS = {
    "know_search": (SEARCH, True),
    "know_put": (PUT, False),
    "know_show": (SHOW, True),
    "know_stale": (STALE, True),
    "know_verify": (VERIFY, False),
}


class Server(MCPServer):
    """``MCPServer`` whose refusal of a tool call's arguments (a wrong type, a required one
    missing) is one line naming each field, as ``put``'s JSON refusals are
    (``limit: expected an integer``; ``refused_arguments``), not pydantic's report."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context=None):
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(exc, UnexpectedToolError) or not isinstance(cause, ValidationError):
                raise
            schemas = {t.name: t.input_schema for t in await self.list_tools()}
            return _text(refused_arguments(cause, schemas.get(name) or {}), error=True)


def refused_arguments(exc: ValidationError, schema: dict) -> str:
    """One line for the arguments pydantic refused (``exc``), a part per field in the
    order refused: ``field: missing; the tool needs it`` or ``field: expected <what the
    tool's input ``schema`` (JSON Schema) gives it>`` (``an integer``, ``text``, ``text
    or a list of text``, ``true or false``), joined by ``; ``."""
    properties = schema.get("properties", {})
    said: dict[str, str] = {}
    for error in exc.errors():
        field = str(error["loc"][0]) if error["loc"] else "the arguments"
        if error["type"] == "missing":
            said[field] = "missing; the tool needs it"
        else:
            said.setdefault(field, f"expected {_expected(properties.get(field, {}))}")
    return "; ".join(f"{field}: {what}" for field, what in said.items())


#: What a JSON Schema type is, in words (``refused_arguments``).
_WORDS = {
    "integer": "an integer",
    "number": "a number",
    "string": "text",
    "boolean": "true or false",
    "object": "an object",
}


def _expected(schema: dict) -> str:
    """The JSON Schema ``schema`` in words: ``text or a list of text`` for
    ``anyOf: [string, array of string, null]`` (null is the default left out)."""
    if "anyOf" in schema:
        parts = [_expected(s) for s in schema["anyOf"] if s.get("type") != "null"]
        return " or ".join(dict.fromkeys(parts)) or "another value"
    kind = schema.get("type")
    if kind == "array":
        return (
            f"a list of {_expected(schema.get('items', {})).removeprefix('an ').removeprefix('a ')}"
        )
    return _WORDS.get(kind, "another value")


def server(service: Service) -> MCPServer:
    """The MCP server offering ``TOOLS`` over ``service``."""
    from brainmigrate import __version__

    app = Server(
        "brainmigrate", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING"
    )
    tools = Tools(service)
    for name, (description, read_only) in TOOLS.items():
        app.add_tool(
            getattr(tools, name),
            name=name,
            description=description,
            annotations=ToolAnnotations(read_only_hint=read_only, open_world_hint=False),
            structured_output=False,
        )
    return app


def run(
    store: str | os.PathLike,
    roots: Sequence[str | os.PathLike] = (),
    *,
    cache_dir: str | os.PathLike | None = None,
) -> None:
    """Serve the store at ``store`` over stdio until the client closes stdin. First a
    ``roots`` folder that does not exist raises ``stale.RootError``, then the store is
    prepared (``stores.prepare``: created when missing, WAL mode; raises ``StoreError``):
    both before anything is served (the CLI's one-line error, exit 2)."""
    from brainmigrate import stale, stores

    if roots:
        stale.require_roots(roots)  # before the store is made: a failed start writes nothing
    stores.prepare(Path(store))
    app = server(Service(store, roots, cache_dir))
    before = {sig: signal.signal(sig, _stopped) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        anyio.run(app.run_stdio_async)
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)


def _stopped(signum, frame) -> None:
    """Ctrl-C or SIGTERM while serving: the CLI's one line, then exit 130 or 143 at once
    (``__main__._early``, as while a command is imported).

    The SDK reads stdin in a worker thread that no cancellation reaches until the next
    line or EOF comes (Ctrl-C as a ``KeyboardInterrupt`` left the process waiting on it,
    measured: still running 10 s later); so the process ends here. A put in flight is one
    SQLite transaction, which is then not committed: the store is as it was before it."""
    _early(signum, frame)
