"""The ``brainmigrate`` command: parse options, call the library once, render, exit.

Exit codes (SPEC.md §Exit codes): 0 done; 1 ``check`` found what it checks for, ``stale``
found a stale fact, ``verify`` refused a fact whose anchor is gone; 2 usage error,
unreadable input or a store that cannot be written (message on stderr, nothing written).

The group is here; each command lives in the module of its family (``imports``,
``check``, ``queries``, ``staleness``), every shared option once in ``options``, what
every run shares (interrupts, errors, output, colour) in ``runtime``.
"""

from __future__ import annotations

import click

from brainmigrate import __version__
from brainmigrate.cli import check, imports, queries, staleness
from brainmigrate.cli.runtime import OneLineErrors


@click.group(
    "brainmigrate", cls=OneLineErrors, context_settings={"help_option_names": ["-h", "--help"]}
)
@click.version_option(__version__, "-V", "--version", prog_name="brainmigrate")
def main() -> None:
    """Turn brain-notation notes into a fact store tools can trust."""


for _command in (
    imports.import_cmd,
    imports.index_cmd,
    check.check_cmd,
    queries.export_cmd,
    queries.search_cmd,
    queries.show_cmd,
    staleness.stale_cmd,
    staleness.verify_cmd,
):
    main.add_command(_command)
