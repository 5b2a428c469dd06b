"""The commands that serve the store to agents: ``serve`` (HTTP, extra ``serve``) and
``mcp`` (a stdio MCP server, extra ``mcp``); and ``server``, the Language Server editors
start for notes files (extra ``editor``, docs/editors.md). Each checks its options, then
hands over to its transport in ``brainmigrate.serving``."""

from __future__ import annotations

import click

from brainmigrate.cli.options import (
    PATH,
    anchor_cache_option,
    anchor_roots_option,
    cache_option,
    config_options,
    root_option,
    store_option,
    voiced,
)
from brainmigrate.cli.runtime import Failure, guarded

#: The packages each extra installs (top-level names), by extra.
EXTRAS = {
    "serve": ("starlette", "uvicorn", "anyio"),
    "mcp": ("mcp", "anyio", "pydantic"),
    "editor": ("pygls", "lsprotocol", "cattrs", "attrs"),
}


def _extra(module: str, extra: str):
    """``brainmigrate.serving.<module>``, or a one-line error naming the extra to install
    when a package it needs is missing (any other failed import is raised as it is)."""
    import importlib

    try:
        return importlib.import_module(f"brainmigrate.serving.{module}")
    except ImportError as exc:
        if (exc.name or "").partition(".")[0] not in EXTRAS[extra]:
            raise
        raise Failure(
            f"{exc.name or 'a package'} is not installed; install the extra with"
            f" pip install 'brainmigrate[{extra}]'"
        ) from None


@click.command("serve")
@store_option("SQLite fact store to serve (created when missing).")
@anchor_roots_option
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8765,
    show_default=True,
    help="Port to listen on (0: any free port, printed at start).",
)
@click.option(
    "--token-file",
    type=PATH,
    help="File whose first line is the token clients send (x-brainmigrate-token); "
    "default: a new token in a 0600 file in $XDG_RUNTIME_DIR/brainmigrate (else the cache "
    "folder), its path printed, removed at stop.",
)
@click.option(
    "--allow-remote", is_flag=True, help="Listen on an address other than loopback (--host)."
)
@anchor_cache_option
@voiced
@guarded
def serve_cmd(store, roots, host, port, token_file, allow_remote, cache_dir):
    """Serve the store over HTTP to agents, behind a token (extra 'serve')."""
    http = _extra("http", "serve")
    http.run(
        store,
        roots,
        host=host,
        port=port,
        token_file=token_file,
        allow_remote=allow_remote,
        cache_dir=cache_dir,
    )


@click.command("mcp")
@store_option("SQLite fact store to serve (created when missing).")
@anchor_roots_option
@anchor_cache_option
@voiced
@guarded
def mcp_cmd(store, roots, cache_dir):
    """Serve the store to an agent as a stdio MCP server (extra 'mcp')."""
    server = _extra("mcp", "mcp")
    server.run(store, roots, cache_dir=cache_dir)


@click.command("server")
@config_options
@root_option(
    "Checkout that cited paths are looked up in; repeat, first wins. Default: the config's "
    "roots, else the editor's workspace folder."
)
@cache_option(
    "Folder for the declaration index cache "
    "(env BRAINMIGRATE_CACHE_DIR, else config cache-dir; default ~/.cache/brainmigrate)."
)
@voiced
@guarded
def server_cmd(config_file, isolated, roots, cache_dir):
    """Serve check's findings, fixes and citations to an editor: a Language Server for
    notes files over stdio (extra 'editor'; docs/editors.md)."""
    if config_file and isolated:
        raise click.UsageError("--config and --isolated exclude each other; give one")
    lsp = _extra("lsp", "editor")
    from brainmigrate.serving.notesview import Given

    lsp.run(Given(config_file, isolated, tuple(roots), cache_dir))
