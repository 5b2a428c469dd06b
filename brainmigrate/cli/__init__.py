"""The ``brainmigrate`` command: parse options, call the library once, render, exit.

Exit codes (SPEC.md §Exit codes): 0 done; 1 ``check`` found what it checks for, ``stale``
found a stale fact, ``verify`` refused a fact whose anchor is gone; 2 usage error,
unreadable input or a store that cannot be written (message on stderr, nothing written).

The group is here; each command lives in the module of its family (``imports``,
``check``, ``queries``, ``staleness``), every shared option once in ``options``, what
every run shares (interrupts, errors, output, colour) in ``runtime``. A command's module
is imported when the command is looked up (``Commands``): a run imports only the family
of the command it runs, and ``--help`` all of them.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, MutableMapping

import click

from brainmigrate import __version__
from brainmigrate.cli.runtime import OneLineErrors

#: Every command: its name, and the module of ``brainmigrate.cli`` and the name there.
COMMANDS = {
    "import": ("imports", "import_cmd"),
    "index": ("imports", "index_cmd"),
    "check": ("check", "check_cmd"),
    "export": ("queries", "export_cmd"),
    "search": ("queries", "search_cmd"),
    "show": ("queries", "show_cmd"),
    "stale": ("staleness", "stale_cmd"),
    "verify": ("staleness", "verify_cmd"),
}


def load(words: list[str]) -> None:
    """Import the module of the command ``words`` begin with (a command line without its
    program name); every command's module when the first word names no command (``--help``,
    a mistyped name, nothing): what ``cli.main`` will look up, imported beforehand."""
    first = words[0] if words else None
    modules = [COMMANDS[first][0]] if first in COMMANDS else [m for m, _ in COMMANDS.values()]
    for module in dict.fromkeys(modules):
        importlib.import_module(f"brainmigrate.cli.{module}")


class Commands(MutableMapping):
    """The group's commands (click's ``Group.commands``, a mapping of name to command): every
    name is known at once; a command is imported the first time it is looked up."""

    def __init__(self, where: dict[str, tuple[str, str]]) -> None:
        self._where = dict(where)
        self._loaded: dict[str, click.Command] = {}

    def __getitem__(self, name: str) -> click.Command:
        command = self._loaded.get(name)
        if command is None:
            module, attribute = self._where[name]
            command = getattr(importlib.import_module(f"brainmigrate.cli.{module}"), attribute)
            self._loaded[name] = command
        return command

    def __setitem__(self, name: str, command: click.Command) -> None:
        self._where.setdefault(name, ("", ""))
        self._loaded[name] = command

    def __delitem__(self, name: str) -> None:
        del self._where[name]
        self._loaded.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter(self._where)

    def __len__(self) -> int:
        return len(self._where)


@click.group(
    "brainmigrate",
    cls=OneLineErrors,
    commands=Commands(COMMANDS),
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(__version__, "-V", "--version", prog_name="brainmigrate")
def main() -> None:
    """Turn brain-notation notes into a fact store tools can trust."""
