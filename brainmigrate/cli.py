"""The ``brainmigrate`` command: parse options, call the library once, render, exit.

Exit codes (SPEC.md §Exit codes): 0 done; 1 ``check`` found what it checks for; 2 usage
error, unreadable input or a store that cannot be written (message on stderr, nothing
written).
"""

from __future__ import annotations

import functools
import os
import sys

import click

from brainmigrate import __version__
from brainmigrate.model import KINDS


class Failure(Exception):
    """A run that could not be done; the CLI prints the message and exits 2."""


def _known_errors() -> tuple[type[BaseException], ...]:
    from brainmigrate.importer import InputError
    from brainmigrate.notation import GrammarError, NotesReadError
    from brainmigrate.stores.sqlite import StoreError

    errors: list[type[BaseException]] = [
        Failure,
        InputError,
        NotesReadError,
        StoreError,
        GrammarError,
    ]
    try:
        from brainmigrate.codeindex import RootError

        errors.append(RootError)
    except ImportError:  # pragma: no cover - the index ships with the package
        pass
    return tuple(errors)


def guarded(func):
    """Turn the library's errors into ``brainmigrate: error: ...`` and exit 2, never a
    traceback (set BRAINMIGRATE_DEBUG=1 to see one for an unexpected error)."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except click.exceptions.Exit:
            raise
        except click.ClickException:
            raise
        except _known_errors() as exc:
            click.echo(f"brainmigrate: error: {exc}", err=True)
            sys.exit(2)
        except KeyboardInterrupt:
            click.echo("brainmigrate: interrupted; nothing written", err=True)
            sys.exit(2)
        except Exception as exc:  # noqa: BLE001 - the last line of defence
            if os.environ.get("BRAINMIGRATE_DEBUG"):
                raise
            click.echo(
                f"brainmigrate: internal error: {type(exc).__name__}: {exc} "
                "(nothing written; BRAINMIGRATE_DEBUG=1 shows the traceback)",
                err=True,
            )
            sys.exit(2)

    return wrapper


def emit(text: str, output: str | None) -> None:
    """Write a finished report to ``output`` atomically, or to stdout."""
    if output in (None, "-"):
        click.echo(text, nl=False)
        return
    from brainmigrate.fsutil import write_text_atomic

    try:
        write_text_atomic(output, text)
    except OSError as exc:
        raise Failure(f"--output {output}: cannot write: {exc.strerror or exc}") from None


def notes_options(func):
    """Options shared by every command that reads notes."""
    for decorator in reversed(
        [
            click.argument("paths", nargs=-1, required=True, type=click.Path()),
            click.option(
                "--root",
                "roots",
                multiple=True,
                type=click.Path(),
                help="Checkout that cited paths are looked up in; repeat, first wins. "
                "Default: the current folder.",
            ),
            click.option("--scope", help="Scope of every fact (default: area:<file stem>)."),
            click.option(
                "--plus-kind",
                type=click.Choice(KINDS),
                help="Kind of '+' facts (default: environment; pattern in patterns files).",
            ),
            click.option(
                "--task-pattern",
                metavar="REGEX",
                help="Regular expression for task ids, replacing the default (TER-167).",
            ),
            click.option(
                "--cache-dir",
                type=click.Path(),
                envvar="BRAINMIGRATE_CACHE_DIR",
                help="Folder for the declaration index cache "
                "(env BRAINMIGRATE_CACHE_DIR; default ~/.cache/brainmigrate).",
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
    ):
        func = decorator(func)
    return func


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="brainmigrate")
def main() -> None:
    """Turn brain-notation notes into a fact store tools can trust."""


@main.command("import")
@notes_options
@click.option(
    "--store",
    default="know.db",
    show_default=True,
    type=click.Path(),
    help="SQLite fact store to import into.",
)
@click.option("--dry-run", is_flag=True, help="Read and report; write no store.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="Report format.",
)
@click.option("--output", type=click.Path(), help="Write the report to FILE instead of stdout.")
@guarded
def import_cmd(
    paths, roots, scope, plus_kind, task_pattern, cache_dir, parser, store, dry_run, fmt, output
):
    """Import notes files (or folders of *.md) into the fact store."""
    from brainmigrate import importer, reports

    options = importer.Options(roots, scope, plus_kind, task_pattern, parser, cache_dir)
    result = importer.import_notes(paths, options, store, dry_run=dry_run)
    emit(reports.render(reports.report(result), fmt), output)


@main.command("index")
@click.option("--root", required=True, type=click.Path(), help="Checkout to index (one folder).")
@click.option(
    "--cache-dir",
    type=click.Path(),
    envvar="BRAINMIGRATE_CACHE_DIR",
    help="Folder for the index cache (env BRAINMIGRATE_CACHE_DIR; default ~/.cache/brainmigrate).",
)
@click.option("--name", "names", multiple=True, help="List where NAME is declared; repeatable.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="Report format.",
)
@click.option("--output", type=click.Path(), help="Write the report to FILE instead of stdout.")
@guarded
def index_cmd(root, cache_dir, names, fmt, output):
    """Index a checkout's declarations (cached) and show why a name does or does not anchor."""
    from pathlib import Path

    from brainmigrate import reports
    from brainmigrate.codeindex import CodeIndex

    idx = CodeIndex(root, cache_dir=Path(cache_dir) if cache_dir else None)
    show = sys.stderr.isatty() and not os.environ.get("CI")
    if show:
        with click.progressbar(length=1, label="indexing", file=sys.stderr) as bar:

            def progress(done, total):
                bar.length = max(total, 1)
                bar.update(done - bar.pos)

            summary = idx.build(progress)
    else:
        summary = idx.build()
    data = reports.index_report(summary, {n: idx.lookup(n) for n in names})
    emit(reports.render(data, "json" if fmt == "json" else "index"), output)
