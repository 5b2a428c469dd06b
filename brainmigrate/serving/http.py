"""``brainmigrate serve``: the store over HTTP (Starlette on uvicorn, extra ``serve``).

The routes are the seed's HTTP table, every answer JSON, each a call of one ``Service``
method (``service.py`` holds every rule about facts; this module only translates):

============================  =================================================
``GET /know/search``          ``Service.search(query parameters)``
``POST /know``                ``Service.put(JSON body)``
``GET /know/stale``           ``Service.stale()``
``GET /know/{id}``            ``Service.show(id)``
``POST /know/{id}/verify``    ``Service.verify(id)``
============================  =================================================

Every request carries the token in the ``x-brainmigrate-token`` header (compared in
constant time, 401 without it or with another). A refusal is ``{"error": "<one line>"}``
with its status: ``ServiceError``'s own (400, 404, 409, 500, 503 with ``Retry-After``),
404 / 405 for an unknown route or method, 413 for a body over ``MAX_BODY`` bytes, 415 for
a body that is not ``application/json``. An unexpected exception is one line on stderr
and ``500 {"error": "internal error"}``. The library's work (SQLite, reading code) is
blocking and runs in the thread pool, never on the event loop.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import logging
import os
import secrets
import socket
import tempfile
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

import anyio
import anyio.to_thread
import uvicorn
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from brainmigrate.cli.runtime import Failure, note, say
from brainmigrate.serving.service import Service, ServiceError

#: The header every request carries the token in (the seed's ``x-codeloupe-token``).
TOKEN_HEADER = "x-brainmigrate-token"

#: The largest ``POST /know`` body read, in bytes (1 MiB): a batch of 100 facts of 2,000
#: characters with their anchors is about 250 KB, so a bigger body is no honest put.
MAX_BODY = 1 << 20

#: The largest token file read, in bytes.
TOKEN_FILE_MAX = 4096

#: The deepest JSON a body may nest (objects and arrays): a put is at most four deep
#: (``{"facts": [{"anchors": [{…}]}]}``), so 32 refuses only what no client means.
MAX_DEPTH = 32

#: Threads that run writes (``POST /know``, verify) at once, apart from the pool reads
#: use (40 threads): a write waiting for the store's lock never keeps a read waiting.
WRITERS = 4

#: Connections and requests served at once; past it a request is answered 503 at once.
CONNECTIONS = 256

#: Seconds a stop (Ctrl-C, SIGTERM) waits for requests under way before it cancels them.
GRACE = 5

ROUTES = "GET /know/search, POST /know, GET /know/stale, GET /know/{id}, POST /know/{id}/verify"


def refusal(status: int, message: str, retry_after: int | None = None) -> JSONResponse:
    """``{"error": message}`` with ``status`` (and ``Retry-After`` seconds for a 503)."""
    headers = {"Retry-After": str(retry_after)} if retry_after is not None else None
    return JSONResponse({"error": message}, status_code=status, headers=headers)


Endpoint = Callable[[Request], Awaitable[JSONResponse]]


def answering(work: Callable[[Request], Awaitable[object]]) -> Endpoint:
    """An endpoint answering ``await work(request)`` as JSON (200); a ``ServiceError`` as
    its refusal, anything else as one line on stderr and ``500 internal error``."""

    async def endpoint(request: Request) -> JSONResponse:
        try:
            return JSONResponse(await work(request))
        except ServiceError as exc:
            return refusal(exc.status, str(exc), exc.retry_after)
        except ClientDisconnect:  # the client went away: nobody to answer, nothing wrong here
            return refusal(400, "the client closed the connection")
        except Exception as exc:  # noqa: BLE001 - a client never sees a traceback
            say(
                f"brainmigrate: internal error answering {request.method}"
                f" {request.url.path}: {type(exc).__name__}: {exc}"
            )
            return refusal(500, "internal error")

    return endpoint


async def read_json(request: Request):
    """The decoded JSON body of ``request``: at most ``MAX_BODY`` bytes (413 past it, by
    ``Content-Length`` or while a chunked body streams, the rest unread), content type
    ``application/json`` or none (else 415), UTF-8 (else 400), JSON (else 400, also for
    NaN/Infinity) nested at most ``MAX_DEPTH`` deep (else 400). Raises ``ServiceError``."""
    ctype = request.headers.get("content-type")
    if ctype is not None:
        media = ctype.split(";", 1)[0].strip().lower()
        if media != "application/json":
            raise ServiceError(415, f"content type {media!r}: send the body as application/json")
    length = request.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > MAX_BODY:
        raise ServiceError(413, f"the body is {length} bytes, over the bound of {MAX_BODY}")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            raise ServiceError(413, f"the body is over the bound of {MAX_BODY} bytes")
        chunks.append(chunk)
    try:
        text = b"".join(chunks).decode("utf-8").removeprefix("\ufeff")  # (as put --json)
    except UnicodeDecodeError as exc:
        raise ServiceError(400, f"the body is not UTF-8 (byte {exc.start})") from None
    try:
        value = json.loads(text, parse_constant=_no_constant)
    except RecursionError:
        raise ServiceError(400, f"the body nests deeper than {MAX_DEPTH} levels") from None
    except ValueError as exc:
        from brainmigrate.inputs import structure_fault

        fault = structure_fault(text, "json", numbers=True)  # a number too long to read
        why = f"{fault[0]}:{fault[1]}: {fault[2]}" if fault else str(exc)
        raise ServiceError(400, f"the body is not JSON ({why})") from None
    _shallow(value)
    return value


def _no_constant(name: str):
    raise ValueError(f"{name} is not a JSON number")


def _shallow(value) -> None:
    """Raise a 400 ``ServiceError`` when ``value`` nests deeper than ``MAX_DEPTH`` (walked
    without recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        inner = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        if inner and depth > MAX_DEPTH:
            raise ServiceError(400, f"the body nests deeper than {MAX_DEPTH} levels")
        stack.extend((v, depth + 1) for v in inner)


def app(service: Service, token: str) -> Starlette:
    """The Starlette application answering the routes above for ``service``, every request
    checked for ``token`` first (``TokenGate`` wraps it)."""

    async def search(request: Request):
        return await run_in_threadpool(service.search, request.query_params)

    # Writes wait for the store's write lock (up to the busy timeout): they take turns on
    # threads of their own, so the pool's threads stay free for reads however many wait.
    writers = anyio.CapacityLimiter(WRITERS)

    def writing(work, *args):
        return anyio.to_thread.run_sync(work, *args, limiter=writers)

    async def put(request: Request):
        return await writing(service.put, await read_json(request))

    async def stale(request: Request):
        return await run_in_threadpool(service.stale)

    async def show(request: Request):
        return await run_in_threadpool(service.show, request.path_params["id"])

    async def verify(request: Request):
        return await writing(service.verify, request.path_params["id"])

    routes = [  # the fixed paths before /know/{id}, which would take them
        Route("/know/search", answering(search), methods=["GET"]),
        Route("/know/stale", answering(stale), methods=["GET"]),
        Route("/know", answering(put), methods=["POST"]),
        Route("/know/{id}", answering(show), methods=["GET"]),
        Route("/know/{id}/verify", answering(verify), methods=["POST"]),
    ]
    inner = Starlette(routes=routes, exception_handlers={HTTPException: _no_route})
    inner.router.redirect_slashes = False  # /know/ is no route (404 JSON), not a redirect
    return TokenGate(inner, token)


async def _no_route(request: Request, exc: HTTPException) -> JSONResponse:
    """404 and 405 (with ``Allow``) from the router, as JSON."""
    path = request.url.path
    if exc.status_code == 404:
        message = f"no route {request.method} {path}; the routes are {ROUTES}"
    elif exc.status_code == 405:
        allow = ", ".join(sorted((exc.headers or {}).get("Allow", "").split(", ")))
        exc.headers = {**(exc.headers or {}), "Allow": allow}  # in one order, not a set's
        message = f"{request.method} is not allowed on {path}; use {allow}"
    else:
        message = exc.detail
    return JSONResponse({"error": message}, status_code=exc.status_code, headers=exc.headers)


class TokenGate:
    """ASGI middleware: an HTTP request whose ``x-brainmigrate-token`` header is missing
    or is not ``token`` (compared with ``hmac.compare_digest`` on bytes) is answered 401
    before any route is looked up."""

    def __init__(self, inner, token: str) -> None:
        self.inner = inner
        self.token = token.encode()
        self.header = TOKEN_HEADER.encode()

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http":
            given = [v for k, v in scope["headers"] if k == self.header]
            if len(given) != 1 or not hmac.compare_digest(given[0], self.token):
                what = ["no", "a wrong"][len(given)] if len(given) < 2 else "more than one"
                response = refusal(
                    401,
                    f"{what} {TOKEN_HEADER} header; send the token of the file serve named"
                    " at start, once",
                )
                await response(scope, receive, send)
                return
        await self.inner(scope, receive, send)


def loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address: ``localhost``, 127.0.0.0/8 or ``::1``."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def read_token(path: str) -> str:
    """The first line of the file at ``path``, stripped; ``Failure`` when it cannot be read,
    is not UTF-8 or that line is empty."""
    from brainmigrate import inputs

    try:  # a regular file only, opened without waiting (a FIFO, a device: refused unread)
        data = inputs.read_bounded(path, TOKEN_FILE_MAX, "a token file")
        token = data.decode("utf-8").partition("\n")[0].strip()
    except (OSError, UnicodeDecodeError) as exc:
        why = getattr(exc, "strerror", None) or "not UTF-8"
        raise Failure(
            f"--token-file {path}: cannot read it ({why}); give a readable file"
        ) from None
    if not token:
        raise Failure(f"--token-file {path}: its first line is empty; write the token there")
    return token


def token_folder() -> Path:
    """Where a token made at start is written: ``$XDG_RUNTIME_DIR/brainmigrate`` (a folder
    only the user reads, emptied at log-out) when that is set, else the cache folder
    (``$BRAINMIGRATE_CACHE_DIR``, ``$XDG_CACHE_HOME/brainmigrate``, ``~/.cache/brainmigrate``)."""
    from brainmigrate.fsutil import user_cache_dir

    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isdir(runtime):
        return Path(runtime) / "brainmigrate"
    return user_cache_dir()


def new_token() -> tuple[str, Path]:
    """A new token (``secrets.token_urlsafe(32)``) written to a new file of mode 0600 in
    ``token_folder()`` (made 0700 when missing); the token and the file's path. Raises
    ``Failure`` when it cannot be written."""
    folder = token_folder()
    token = secrets.token_urlsafe(32)
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix="serve-", suffix=".token", dir=folder)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(token + "\n")
    except OSError as exc:
        raise Failure(
            f"cannot write the token file in {folder} ({exc.strerror or exc});"
            " pass --token-file FILE or set XDG_RUNTIME_DIR to a writable folder"
        ) from None
    return token, Path(name)


def listen(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host``:``port`` (0: a free port); ``Failure`` when the
    address cannot be resolved or bound."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host.strip("[]"), port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        sock = socket.socket(family, kind, proto)
    except OSError as exc:
        raise Failure(f"--host {host}: cannot listen there ({exc.strerror or exc})") from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise Failure(
            f"cannot listen on {host}:{port} ({exc.strerror or exc}); pass another --port"
            " (0 picks a free one)"
        ) from None
    return sock


def url_of(sock: socket.socket) -> str:
    """``http://host:port`` of the address ``sock`` listens on (``[::1]`` for IPv6)."""
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}"


class OneLine(logging.Formatter):
    """uvicorn's own log records (``Invalid HTTP request received.``) as one line each,
    ``brainmigrate: <message>``, never a traceback."""

    def format(self, record: logging.LogRecord) -> str:
        return f"brainmigrate: {' '.join(record.getMessage().split())}"


#: uvicorn's loggers: warnings and errors only, one line each on stderr (no access log).
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"line": {"()": OneLine}},
    "handlers": {
        "stderr": {
            "class": "logging.StreamHandler",
            "formatter": "line",
            "stream": "ext://sys.stderr",
        }
    },
    "loggers": {
        "uvicorn": {"handlers": ["stderr"], "level": "WARNING", "propagate": False},
        # (the event loop's own: "socket.accept() out of system resource", once a second at
        # most is what asyncio logs when descriptors run out, with a traceback each)
        "asyncio": {"handlers": ["stderr"], "level": "WARNING", "propagate": False},
    },
}


class _Server(uvicorn.Server):
    """uvicorn's server, whose Ctrl-C / SIGTERM only stops serving: uvicorn raises the
    signal again once it has stopped, which the ``brainmigrate`` command would turn into
    an interrupted run (exit 130/143); a stopped daemon ends settled (exit 0)."""

    def capture_signals(self):
        import contextlib
        import signal

        @contextlib.contextmanager
        def captured():
            sigs = (signal.SIGINT, signal.SIGTERM)
            before = {sig: signal.signal(sig, self.handle_exit) for sig in sigs}
            try:
                yield
            finally:
                for sig, handler in before.items():
                    signal.signal(sig, handler)

        return captured()


def run(
    store: str | os.PathLike,
    roots: Sequence[str | os.PathLike] = (),
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    token_file: str | None = None,
    allow_remote: bool = False,
    cache_dir: str | os.PathLike | None = None,
) -> None:
    """Serve the store at ``store`` on ``host``:``port`` until Ctrl-C or SIGTERM.

    Before listening: ``host`` must be loopback unless ``allow_remote``; the token is read
    from ``token_file`` or made (``new_token``); the ``roots`` must be folders; the store is
    prepared (``stores.prepare``: created when missing, WAL mode). Each is a ``Failure`` /
    ``BrainmigrateError`` (one line, exit 2) when it fails. Then one line on stderr,
    ``brainmigrate: serving STORE on http://HOST:PORT (token in FILE)``, with the port
    really bound (``port`` 0 picks a free one). A token file made here is removed at stop.
    """
    from brainmigrate import stale, stores

    if not allow_remote and not loopback(host):
        raise Failure(
            f"--host {host} is not a loopback address; serve on 127.0.0.1 or ::1, or pass"
            " --allow-remote to listen there"
        )
    token = read_token(token_file) if token_file is not None else None
    stale.require_roots(roots)
    sock = listen(host, port)  # (before the store is made: a port in use makes none)
    made = None
    try:
        stores.prepare(Path(store))
        if token is None:
            token, made = new_token()
        where = made if made is not None else token_file
        say(f"brainmigrate: serving {store} on {url_of(sock)} (token in {where})")
        config = uvicorn.Config(
            app(Service(store, roots, cache_dir), token),
            log_config=LOGGING,
            log_level="warning",
            access_log=False,
            server_header=False,
            limit_concurrency=CONNECTIONS,
            lifespan="off",
            timeout_graceful_shutdown=GRACE,
        )
        _Server(config).run(sockets=[sock])
    finally:
        sock.close()
        if made is not None:
            made.unlink(missing_ok=True)
    note(f"brainmigrate: stopped serving {store}")  # a summary: not under -q
