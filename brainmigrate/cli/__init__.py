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

import sys
from collections.abc import Iterator, MutableMapping

import click

from brainmigrate import __version__
from brainmigrate.cli.runtime import OneLineErrors

#: Every command: its name, and the module of ``brainmigrate.cli`` and the name there.
COMMANDS = {
    "import": ("imports", "import_cmd"),
    "index": ("imports", "index_cmd"),
    "check": ("check", "check_cmd"),
    "rule": ("rules", "rule_cmd"),
    "export": ("queries", "export_cmd"),
    "search": ("queries", "search_cmd"),
    "show": ("queries", "show_cmd"),
    "stale": ("staleness", "stale_cmd"),
    "verify": ("staleness", "verify_cmd"),
    "put": ("writing", "put_cmd"),
    "serve": ("serving", "serve_cmd"),
    "mcp": ("serving", "mcp_cmd"),
    "server": ("serving", "server_cmd"),
}


def _imported(name: str):
    """Module ``name``, imported by an import statement's own path (``__import__``), which
    ``python -X importtime`` times (``importlib.import_module`` it does not)."""
    __import__(name)
    return sys.modules[name]


def load(words: list[str]) -> None:
    """Import what the command line ``words`` (without the program's name) will run: the
    module of the command it names and the library that module lists as its ``LIBRARY``
    (left out when the line asks for help); every command's module when the first word
    names no command (``--help``, a mistyped name, nothing). Only when they are imported
    changes: ``__main__`` calls this while start-up's handlers are in place and the garbage
    collector is paused (a collection in the middle of the imports walks every object they
    have made so far), and then freezes what was made. A library module whose import fails (work it
    does on import, such as finding the cache folder, can) is left to the command, which
    imports it again and says what failed as it always has."""
    first = words[0] if words else None
    if first not in COMMANDS:
        for module in dict.fromkeys(m for m, _ in COMMANDS.values()):
            _imported(f"brainmigrate.cli.{module}")
        return
    module = _imported(f"brainmigrate.cli.{COMMANDS[first][0]}")
    if "-h" in words or "--help" in words:
        return
    for name in getattr(module, "LIBRARY", ()):
        try:
            _imported(name)
        except Exception:  # noqa: BLE001 - the command's own import says it, exit 2
            return


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
            command = getattr(_imported(f"brainmigrate.cli.{module}"), attribute)
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
