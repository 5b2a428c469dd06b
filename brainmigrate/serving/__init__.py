"""Serving the store to agents: ``service`` (what every transport asks, in one place),
``http`` (``brainmigrate serve``: Starlette routes behind a token, extra ``serve``) and
``mcp`` (``brainmigrate mcp``: a stdio MCP server, extra ``mcp``).

The transports only translate: a request or a tool call becomes one ``Service`` call, and
its answer (or its ``ServiceError``, with an HTTP status) goes back as JSON. So search
lines and JSON are the same in the CLI, over HTTP and through MCP (``search.Hit``).
"""
