"""Every option more than one command takes, declared once: the store, roots, scope and
kind filters, the cache folder, configuration, progress, formats and outputs, and the
options of every command that reads notes. A command passes only its own help text where
the meaning differs (``--store``: read, import into, record in).
"""

from __future__ import annotations

import functools
import os
import sys

import click

from brainmigrate.fsutil import NAME_MAX
from brainmigrate.model import KINDS

#: The export formats (``brainmigrate.exports.FORMATS``; a test keeps them equal).
EXPORT_FORMATS = ["jsonl", "brain", "knowledge", "memory"]

#: ``check``'s report formats (``reports.ci.Format``; named here so that ``--help`` loads
#: no report, and a test keeps them equal).
#: The severity levels ``--fail-on`` takes, highest first (``codes.LEVELS``: ``--help``
#: does not load the code registry; a test holds them equal).
LEVELS = ["error", "warning", "info"]
CHECK_FORMATS = ["text", "json", "github", "sarif", "junit", "markdown", "gitlab"]

#: ``stale``'s report formats (``reports.stale.Format``; a test keeps them equal).
STALE_FORMATS = ["text", "json", "github", "sarif", "markdown", "junit", "gitlab"]


def not_blank(ctx, param, value):
    """A click callback: an option given as empty or blank text (``--task-pattern ''``,
    ``--scope '  '``) is a usage error, not a silent default. A filter ``--scope`` (a
    comma-separated list) is blank when each of its parts is."""
    filters = param.multiple  # export and search: lists of scopes
    for given in value if param.multiple else (value,):
        if given is None:
            continue
        parts = given.split(",") if filters else [given]
        if not any(part.strip() for part in parts):
            raise click.BadParameter("empty or blank; give a value or leave the option out")
    return value


class UserPath(click.Path):
    """A path given on the command line (every path option and argument is one): refused
    at once, as a usage error naming the option, when no system call could take it (longer
    than the system's ``PATH_MAX``, a name in it longer than ``NAME_MAX``, holding a NUL
    byte) or it names nothing (empty or blank), so a later ``stat`` or ``open``
    never fails with "File name too long" as an internal error."""

    def convert(self, value, param, ctx):
        value = super().convert(value, param, ctx)
        text = os.fspath(value)
        if "\0" in text:
            self.fail("holds a NUL byte, which no file name can; pass another path", param, ctx)
        if not text.strip():
            self.fail("empty or blank; give a value or leave the option out", param, ctx)
        size = len(os.fsencode(text))
        longest = max(len(os.fsencode(part)) for part in text.split(os.sep))
        if longest > NAME_MAX:
            self.fail(
                f"a name of {longest} bytes in it, longer than file systems take ({NAME_MAX});"
                " pass a shorter one",
                param,
                ctx,
            )
        if size >= PATH_MAX:
            self.fail(
                f"a path of {size} bytes, longer than the system takes ({PATH_MAX - 1});"
                " pass a shorter one",
                param,
                ctx,
            )
        return value


def _path_max() -> int:
    """The system's ``PATH_MAX`` (with its NUL: 4096 on Linux); 4096 where it cannot say."""
    try:
        return os.pathconf("/", "PC_PATH_MAX")
    except (AttributeError, OSError, ValueError):
        return 4096


#: The longest path, in bytes with its NUL, that ``open`` or ``stat`` takes.
PATH_MAX = _path_max()

#: The type of every path option and argument.
PATH = UserPath()


def store_option(help: str = "SQLite fact store to read."):
    """``--store`` (default ``know.db``), for every command that reads or writes the store;
    ``help`` says which."""
    return click.option("--store", default="know.db", show_default=True, type=PATH, help=help)


def root_option(help: str, multiple: bool = True):
    """``--root``: checkouts (``roots``, repeatable) or, not ``multiple``, one (``root``)."""
    return click.option(
        "--root",
        "roots" if multiple else "root",
        callback=not_blank,
        multiple=multiple,
        type=PATH,
        help=help,
    )


def cache_option(help: str):
    """``--cache-dir`` (env ``BRAINMIGRATE_CACHE_DIR``), for the commands that read code."""
    return click.option(
        "--cache-dir",
        callback=not_blank,
        type=PATH,
        envvar="BRAINMIGRATE_CACHE_DIR",
        help=help,
    )


#: ``--root`` of the commands that read anchors again (``stale``, ``verify``, ``search``,
#: ``show``).
anchor_roots_option = root_option(
    "Look anchors up in this checkout instead of the root recorded with them (a path "
    "relative to the store's folder); repeat, first holding the file wins; several "
    "recorded roots map to the --root of the same git remote, else of the same position."
)

#: ``--cache-dir`` of the commands that read anchors again (``stale``, ``verify``).
anchor_cache_option = cache_option(
    "Folder for the declaration index cache "
    "(env BRAINMIGRATE_CACHE_DIR; default ~/.cache/brainmigrate)."
)


def scope_filter(
    help: str = "Only facts of this scope; repeat or comma-separate; 'area' means every area:*.",
):
    """``--scope`` as a filter of stored facts (``scopes``; repeatable, comma lists)."""
    return click.option("--scope", "scopes", callback=not_blank, multiple=True, help=help)


def kind_filter(func):
    """``--kind``: only facts of these kinds (``kinds``)."""
    return click.option(
        "--kind", "kinds", multiple=True, type=click.Choice(KINDS), help="Only this kind."
    )(func)


def format_option(choices, help: str):
    """``--format`` (``fmt``), one of ``choices``, default ``text``."""
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(choices),
        default="text",
        show_default=True,
        help=help,
    )


def output_option(func):
    """``--output FILE`` for one report (default: stdout)."""
    return click.option("--output", type=PATH, help="Write the report to FILE instead of stdout.")(
        func
    )


def dry_run_option(help: str):
    """``--dry-run``: read and report; ``help`` says what is not written."""
    return click.option("--dry-run", is_flag=True, help=help)


def plus_kind_option(help: str):
    """``--plus-kind``: the kind of ``+`` facts, as read or as exported."""
    return click.option("--plus-kind", type=click.Choice(KINDS), help=help)


def task_pattern_option(help: str):
    """``--task-pattern REGEX``: the task ids, as read or as the store was imported with."""
    return click.option("--task-pattern", metavar="REGEX", callback=not_blank, help=help)


def config_options(func):
    """``--config FILE`` and ``--isolated``: which configuration file a command reads."""
    func = click.option(
        "--isolated",
        is_flag=True,
        help="Read no configuration file (.brainmigrate.toml, pyproject.toml).",
    )(func)
    return click.option(
        "--config",
        "config_file",
        type=PATH,
        help="Configuration file to read for every notes file instead of the nearest one "
        "(above each notes file, or the current folder, up to the repository root).",
    )(func)


def progress_option(func):
    """``--no-progress``: no status line on stderr (drawn only on a terminal, without CI)."""
    return click.option(
        "--no-progress",
        is_flag=True,
        help="Draw no progress line on stderr (it is drawn only on a terminal, CI unset).",
    )(func)


def _exclude_option(name: str, help: str):
    return click.option(name, callback=not_blank, multiple=True, metavar="GLOB", help=help)


#: The options of every command that reads notes, in the order ``--help`` lists them.
NOTES_OPTIONS = [
    click.argument("paths", nargs=-1, type=PATH),
    config_options,
    _exclude_option("--exclude", "Notes files to skip, replacing the config's exclude; repeat."),
    _exclude_option(
        "--extend-exclude", "Notes files to skip, added to the config's exclude; repeat."
    ),
    root_option(
        "Checkout that cited paths are looked up in; repeat, first wins. "
        "Default: the current folder."
    ),
    click.option(
        "--scope",
        callback=not_blank,
        help="Scope of every fact (default: area:<file stem>).",
    ),
    plus_kind_option("Kind of '+' facts (default: environment; pattern in patterns files)."),
    task_pattern_option("Regular expression for task ids, replacing the default (TER-167)."),
    cache_option(
        "Folder for the declaration index cache "
        "(env BRAINMIGRATE_CACHE_DIR, else config cache-dir; "
        "default ~/.cache/brainmigrate)."
    ),
    progress_option,
    click.option(
        "--stdin-filename",
        callback=not_blank,
        metavar="NAME",
        help="Name of the notes read from standard input ('-' as a PATH): shown in "
        "the report and giving their scope.",
    ),
    click.option(
        "--notation",
        type=click.Choice(["markdown", "brain"]),
        help="Read every notes file as plain Markdown notes or as brain notation "
        "(default: Markdown for the config's markdown globs, CLAUDE.md, AGENTS.md, "
        ".cursor/rules/*.mdc …; brain for the rest).",
    ),
    click.option(
        "--parser",
        type=click.Choice(["fast", "lark"]),
        default="fast",
        show_default=True,
        help="Line reader: the fast regex composed from the grammar, or the Lark "
        "parser itself (same result, slower).",
    ),
]


def notes_options(func):
    """Options shared by every command that reads notes (``NOTES_OPTIONS``)."""
    for decorator in reversed(NOTES_OPTIONS):
        func = decorator(func)
    return func


def voice_options(
    quiet: str = "Print only what was asked for: no counts, notes or summaries on stderr.",
    verbose: str = "Also say on stderr which store, roots and configuration the run used.",
) -> list:
    """``--color``, ``-q/--quiet`` and ``-v/--verbose`` (``color``, ``quiet``,
    ``verbose``), as ruff has them; ``quiet`` and ``verbose`` are their help texts."""
    return [
        click.option(
            "--color",
            type=click.Choice(["auto", "always", "never"]),
            default="auto",
            show_default=True,
            help="Colour what is printed: auto colours a terminal unless NO_COLOR is set "
            "(FORCE_COLOR forces it).",
        ),
        click.option("-q", "--quiet", is_flag=True, help=quiet),
        click.option("-v", "--verbose", is_flag=True, help=verbose),
    ]


def voiced(func):
    """``voice_options`` for a command other than ``check``: the run's choice is kept in
    the click context (``runtime.voice()``; ``runtime.note`` prints nothing under
    ``--quiet``), ``--color`` decides whether what the command echoes keeps its ANSI
    styles (``runtime.use_color`` of stdout), and ``--verbose`` says the store (as an
    absolute path) and the ``--root`` checkouts given; the commands that read a
    configuration say it, and its roots, as they load it (``reading.load_settings``)."""

    @functools.wraps(func)
    def wrapper(*args, quiet: bool, verbose: bool, color: str, **given):
        from brainmigrate.cli.runtime import VOICE_KEY, Voice, say, use_color

        ctx = click.get_current_context()
        ctx.meta[VOICE_KEY] = Voice(quiet, verbose, color)
        ctx.color = use_color(color, sys.stdout)
        if verbose and given.get("store"):
            say(f"brainmigrate: store: {os.path.abspath(given['store'])}")
        if verbose and "config_file" not in given and "roots" in given:
            roots = ", ".join(given["roots"]) or "the roots recorded with the anchors"
            say(f"brainmigrate: roots: {roots}")
        return func(*args, **given)

    for decorator in reversed(voice_options()):
        wrapper = decorator(wrapper)
    return wrapper
