"""What every command shares at run time: the run's end (settled, interrupted by Ctrl-C or
SIGTERM), one-line errors and exit codes, output written whole, colour, and the rule that
a run never writes over what it reads.

The run state itself (what was written, which store committed, terminated, settled) is
``runstate.state``: the writers set it, this module reads it and ``OneLineErrors``
resets it for each command line.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import NamedTuple

import click

from brainmigrate.errors import EXIT_FAULT, EXIT_INTERRUPTED, EXIT_OK, EXIT_PIPE, BrainmigrateError
from brainmigrate.runstate import state


class Failure(BrainmigrateError):
    """A run that could not be done; the CLI prints the message and exits 2."""


def settle() -> None:
    """Say that this run holds nothing the interpreter's teardown would still close or
    flush (``state.settled``: ``__main__.run`` then freezes what is left, so the
    interpreter's last collections at exit have nothing to walk); called just before a
    command's last ``sys.exit``."""
    state.settled = True


def terminate(signum, frame) -> None:
    """The SIGTERM handler the ``brainmigrate`` command installs: stop the run where it is,
    as Ctrl-C does (a ``KeyboardInterrupt``, so every clean-up runs: a store's transaction
    rolled back, a store file the run created removed), then exit 143 (``interrupted``)."""
    state.terminated = True
    raise KeyboardInterrupt


def interrupted() -> None:
    """Stop a run that Ctrl-C (exit 130) or SIGTERM (``terminate``, exit 143) interrupted,
    in one line. An import is one transaction, rolled back (or already committed) by the
    time this runs; once committed (``state.committed``), the line says so, and it names
    the outputs already written whole (``state.written``: reports, exports, notes files
    ``check --fix`` rewrote, a baseline)."""
    from brainmigrate.errors import EXIT_TERMINATED

    what = "terminated" if state.terminated else "interrupted"
    committed, written = state.committed, state.written
    files = ""
    if written:
        shown_names = ", ".join(written[:3]) + (", …" if len(written) > 3 else "")
        files = shown_names if len(written) == 1 else f"{len(written)} files ({shown_names})"
    if committed is not None and files:
        say(
            f"brainmigrate: {what} after the store and {files} were written ({committed}"
            " holds the whole import)"
        )
    elif committed is not None:
        say(
            f"brainmigrate: {what} after the store was written ({committed} holds the whole"
            " import; only the report was cut short)"
        )
    elif files:
        done = "were written, each whole" if len(written) > 1 else "was written whole"
        say(f"brainmigrate: {what} after {files} {done}; the rest of the run was cut short")
    else:
        click.echo(
            f"brainmigrate: {what} (a store and every output are written whole or not at all)",
            err=True,
        )
    sys.exit(EXIT_TERMINATED if state.terminated else EXIT_INTERRUPTED)


def say(text: str) -> None:
    """Print one line to stderr (an error, a note, a summary line): a scope, a path, an
    option value or a text in it shows its control characters and line breaks as U+FFFD
    (``fsutil.shown``, ``escapes.one_line``), so it can neither drive the terminal nor
    split the line (``--scope $'a\\nb'`` stays one ``brainmigrate: error: …`` line)."""
    from brainmigrate.escapes import one_line
    from brainmigrate.fsutil import shown

    click.echo(one_line(shown(text)), err=True)


#: The key of the run's ``Voice`` in the click context's ``meta``.
VOICE_KEY = "brainmigrate.voice"


class Voice(NamedTuple):
    """How much a run says: ``-q/--quiet``, ``-v/--verbose`` and ``--color`` (auto,
    always, never) as given (``options.voiced``)."""

    quiet: bool = False
    verbose: bool = False
    color: str = "auto"


def voice() -> Voice:
    """The running command's ``Voice`` (the defaults outside a command, or for one that
    reads its options itself, as ``check`` does)."""
    ctx = click.get_current_context(silent=True)
    return ctx.meta.get(VOICE_KEY, Voice()) if ctx is not None else Voice()


def note(text: str) -> None:
    """``say`` a count, a note or a summary: nothing under ``--quiet``."""
    if not voice().quiet:
        say(text)


def verbose(text: str) -> None:
    """``say`` what the run used (a store, roots, a configuration): only under
    ``--verbose``."""
    if voice().verbose:
        say(text)


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
        except BrainmigrateError as exc:
            say(f"brainmigrate: error: {exc}")
            sys.exit(EXIT_FAULT)
        except BrokenPipeError:
            # the reader went away (``| head``): stop quietly, as a tool killed by SIGPIPE
            with contextlib.suppress(OSError):
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(EXIT_PIPE)
        except KeyboardInterrupt:
            interrupted()
        except Exception as exc:  # noqa: BLE001 - the last line of defence
            if os.environ.get("BRAINMIGRATE_DEBUG"):
                raise
            say(
                f"brainmigrate: internal error: {type(exc).__name__}: {exc} "
                "(a store is written in one transaction, whole or not at all; "
                "BRAINMIGRATE_DEBUG=1 shows the traceback)"
            )
            sys.exit(EXIT_FAULT)

    return wrapper


class OneLineErrors(click.Group):
    """A command group whose usage errors are one line on stderr, exit 2:
    ``brainmigrate: error: <what>; see 'brainmigrate <command> --help'``."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        state.reset()  # a new command line, also when tests run several in one process
        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.exceptions.NoArgsIsHelpError as exc:
            click.echo(exc.ctx.get_help() if exc.ctx else exc.format_message())
            sys.exit(EXIT_OK)
        except click.UsageError as exc:
            where = f"; see '{exc.ctx.command_path} --help'" if exc.ctx else ""
            message = " ".join(exc.format_message().split()).rstrip(".")
            say(f"brainmigrate: error: {message}{where}")
            sys.exit(EXIT_FAULT)
        except click.ClickException as exc:
            say(f"brainmigrate: error: {exc.format_message()}")
            sys.exit(exc.exit_code)
        except click.Abort:  # (Ctrl-C where neither method below could catch it)
            interrupted()
        if not standalone_mode:
            return rv
        sys.exit(rv if isinstance(rv, int) else EXIT_OK)

    # Ctrl-C while options are read: stopped here, before click turns it into Abort (and
    # prints an empty line first).
    def make_context(self, *args, **kwargs):
        try:
            return super().make_context(*args, **kwargs)
        except KeyboardInterrupt:
            interrupted()

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            interrupted()


def emit(
    text: str | Iterable[str],
    output: str | None,
    color: bool | None = None,
    changed: Callable[[], str | None] | None = None,
) -> None:
    """Write a finished report (a string, or chunks of one) to ``output`` atomically, or to
    stdout (``color``: keep ANSI styles or strip them; None: as click decides).

    An ``--output`` that cannot be written raises ``Failure``; when the run has already
    changed something, the message says what (``unwritten``): ``changed()`` (called only
    then) tells what it changed in the store, and every file already written whole
    (``state.written``: notes ``check --fix`` rewrote, a baseline, other reports) is named.
    """
    chunks = [text] if isinstance(text, str) else _joined(text)
    if output in (None, "-"):
        for chunk in chunks:
            click.echo(chunk, nl=False, color=color)
        return
    from brainmigrate.writers import encoded, write_file

    try:
        write_file(output, encoded(chunks), output=True)
    except OSError as exc:
        raise Failure(unwritten(output, exc, changed() if changed else None)) from None


def unwritten(output: str, exc: OSError, changed: str | None = None) -> str:
    """The one-line message for a report that could not be written to ``output``
    (``exc``): when the run changed the store (``changed``, in words: "the store know.db
    was updated (3 facts added)") or wrote files (``state.written``), it says so first, so
    a failed report never reads as a run that did nothing (README "Exit codes")."""
    reason = exc.strerror or str(exc)
    done = [changed] if changed else []
    files = list(state.written)
    if files:
        names = ", ".join(files[:3]) + (", …" if len(files) > 3 else "")
        done.append(
            f"{names} was written"
            if len(files) == 1
            else f"{len(files)} files ({names}) were written"
        )
    if not done:
        return (
            f"--output {output}: cannot write ({reason}); free space or pass --output with"
            " another path"
        )
    return (
        f"{' and '.join(done)}; the report could not be written to --output {output}"
        f" ({reason}): free space or pass --output with another path (what was written stays)"
    )


def _joined(chunks: Iterable[str], size: int = 1 << 16) -> Iterator[str]:
    """Small chunks (a template yields many) joined into pieces of about ``size``."""
    buf: list[str] = []
    n = 0
    for chunk in chunks:
        buf.append(chunk)
        n += len(chunk)
        if n >= size:
            yield "".join(buf)
            buf, n = [], 0
    if buf:
        yield "".join(buf)


def writable_output(output: str | None) -> None:
    """Refuse an ``--output`` that cannot be written before the run starts
    (``fsutil.check_output``: ``OutputError``); none or ``-`` is standard output."""
    if output not in (None, "-"):
        from brainmigrate.fsutil import check_output

        check_output(output)


def refuse_overwrites(
    outputs: Iterable[tuple[str, str | None]],
    store: str | None = None,
    notes: Iterable[str] = (),
    baseline: str | None = None,
    store_written: bool = False,
    cache: str | os.PathLike | None = None,
    configs: Iterable[str] = (),
    rules=None,
) -> None:
    """Refuse (``fsutil.Clash``, exit 2) before any work a run that would write one of its
    outputs over what it reads: its store, a notes file (also one of a folder it walks),
    its baseline, configuration (the current folder's, and ``configs``: the files the run
    found for its notes) or declaration index ``cache`` file; or two of its outputs into
    one file. Files are compared by identity (device and inode, through symlinks).
    ``outputs`` are ``(option, path)`` pairs (None and ``-`` are stdout); an import's store
    is written too (``store_written``), so it may not be a notes file either. ``rules``
    (``files.FileRules``) say which files a folder among ``notes`` gives."""
    from brainmigrate.config import SOURCES
    from brainmigrate.fsutil import refuse_clashes
    from brainmigrate.read.files import notes_files

    files = [(option, path) for option, path in outputs if path not in (None, "-")]
    read: list[tuple[str, str]] = []
    if store is not None:
        read.append(("the store", store))
        # SQLite's files beside the store: a report there is removed by the next open
        beside = os.fspath(store)
        if os.path.islink(store):  # its journal is beside the file the link leads to
            real = os.path.realpath(store)
            beside = real if os.path.isabs(beside) else os.path.relpath(real)
        read += [("the store's journal", beside + end) for end in ("-journal", "-wal", "-shm")]
    if baseline is not None:
        read.append(("the baseline", baseline))
    read += [("the configuration", name) for name, _ in SOURCES if os.path.isfile(name)]
    read += [("the configuration", name) for name in configs]
    if cache is not None:
        read.append(("the declaration index cache", cache))
    notes = [p for p in notes if p != "-"]  # standard input is no file to write over
    if notes and (files or store_written):
        listed = notes_files(notes, rules=rules) if rules else notes_files(notes)
        read += [("the notes file", str(path)) for _, path in listed]
    refuse_clashes(files, read)
    if store_written and store is not None:
        refuse_clashes([("--store", store)], [r for r in read if r[0] == "the notes file"])


def use_color(choice: str, stream) -> bool:
    """Whether to colour what goes to ``stream``: ``always``/``never`` as said; ``auto``:
    not when ``NO_COLOR`` is set (not empty), yes when ``FORCE_COLOR`` is (not empty or
    ``0``), else when ``stream`` is a terminal."""
    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR", "0") not in ("", "0"):
        return True
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())
