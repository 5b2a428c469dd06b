"""The command that writes one fact: ``put``."""

from __future__ import annotations

import click


@click.command("put")
def put_cmd():
    """Write one fact (or a JSON list of facts) into the store."""
    raise click.UsageError("put: not built yet")
