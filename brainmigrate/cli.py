"""The ``brainmigrate`` command: parse options, call the library once, render, exit.

Exit codes (SPEC.md §Exit codes): 0 done; 1 ``check`` found what it checks for, ``stale``
found a stale fact, ``verify`` refused a fact whose anchor is gone; 2 usage error,
unreadable input or a store that cannot be written (message on stderr, nothing written).
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from collections.abc import Iterable, Iterator

import click

from brainmigrate import __version__
from brainmigrate.errors import (
    EXIT_FAULT,
    EXIT_FINDINGS,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_PIPE,
    BrainmigrateError,
)
from brainmigrate.model import KINDS
from brainmigrate.reports import FORMATS as REPORT_FORMATS
from brainmigrate.shapes import to_json


class Failure(BrainmigrateError):
    """A run that could not be done; the CLI prints the message and exits 2."""


#: True once a command has closed everything it opened (files written and closed, no
#: store open): ``__main__.run`` then freezes what is left (``gc.freeze``), so the
#: interpreter's last collections at exit have nothing to walk (``settle``).
settled = False


def settle() -> None:
    """Say that this run holds nothing the interpreter's teardown would still close or
    flush (``settled``); called just before a command's last ``sys.exit``."""
    global settled
    settled = True


#: Set by SIGTERM (``terminate``): the interrupt being handled is a termination.
terminated = False


def terminate(signum, frame) -> None:
    """The SIGTERM handler the ``brainmigrate`` command installs: stop the run where it is,
    as Ctrl-C does (a ``KeyboardInterrupt``, so every clean-up runs: a store's transaction
    rolled back, a store file the run created removed), then exit 143 (``interrupted``)."""
    global terminated
    terminated = True
    raise KeyboardInterrupt


def interrupted() -> None:
    """Stop a run that Ctrl-C (exit 130) or SIGTERM (``terminate``, exit 143) interrupted,
    in one line. An import is one transaction, rolled back (or already committed) by the
    time this runs; once committed (``sqlite.committed``), the line says so, and it names
    the outputs already written whole (``fsutil.written``: reports, exports, notes files
    ``check --fix`` rewrote, a baseline)."""
    from brainmigrate.errors import EXIT_TERMINATED

    what = "terminated" if terminated else "interrupted"
    committed = getattr(sys.modules.get("brainmigrate.stores.sqlite"), "committed", None)
    written = getattr(sys.modules.get("brainmigrate.fsutil"), "written", None) or []
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
    sys.exit(EXIT_TERMINATED if terminated else EXIT_INTERRUPTED)


def say(text: str) -> None:
    """Print a line to stderr; a scope, a path or a text in it shows its control
    characters as U+FFFD (``fsutil.shown``), so it cannot drive the terminal."""
    from brainmigrate.fsutil import shown

    click.echo(shown(text), err=True)


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
            click.echo(
                f"brainmigrate: internal error: {type(exc).__name__}: {exc} "
                "(a store is written in one transaction, whole or not at all; "
                "BRAINMIGRATE_DEBUG=1 shows the traceback)",
                err=True,
            )
            sys.exit(EXIT_FAULT)

    return wrapper


def emit(text: str | Iterable[str], output: str | None, color: bool | None = None) -> None:
    """Write a finished report (a string, or chunks of one) to ``output`` atomically, or to
    stdout (``color``: keep ANSI styles or strip them; None: as click decides)."""
    chunks = [text] if isinstance(text, str) else _joined(text)
    if output in (None, "-"):
        for chunk in chunks:
            click.echo(chunk, nl=False, color=color)
        return
    from brainmigrate.fsutil import write_chunks_atomic

    try:
        write_chunks_atomic(output, chunks)
    except OSError as exc:
        raise Failure(
            f"--output {output}: cannot write ({exc.strerror or exc}); free space or pass"
            " --output with another path"
        ) from None


@contextlib.contextmanager
def stdin_notes(paths: tuple[str, ...], stdin_filename: str | None):
    """``(paths, names)`` with ``-`` in ``paths`` replaced by a temporary file holding
    standard input, which ``names`` shows as ``stdin_filename`` (or ``-``); the file is
    removed afterwards."""
    if "-" not in paths:
        if stdin_filename:
            raise click.UsageError("--stdin-filename names the notes of '-': add - as a PATH")
        yield paths, {}
        return
    import tempfile

    with tempfile.TemporaryDirectory(prefix="brainmigrate-stdin-") as folder:
        temp = os.path.join(folder, "stdin.md")
        with open(temp, "wb") as handle:
            handle.write(sys.stdin.buffer.read())
        yield tuple(temp if p == "-" else p for p in paths), {temp: stdin_filename or "-"}


def check_output(output: str | None) -> None:
    """Raise ``Failure`` when ``--output`` could not be written, before any work
    (``fsutil.check_output``, the one check every command's output passes)."""
    if output in (None, "-"):
        return
    from brainmigrate.fsutil import OutputError
    from brainmigrate.fsutil import check_output as check

    try:
        check(output)
    except OutputError as exc:
        raise Failure(str(exc)) from None


def refuse_overwrites(
    outputs: Iterable[tuple[str, str | None]],
    store: str | None = None,
    notes: Iterable[str] = (),
    baseline: str | None = None,
    store_written: bool = False,
    cache: str | os.PathLike | None = None,
) -> None:
    """Refuse (``fsutil.Clash``, exit 2) before any work a run that would write one of its
    outputs over what it reads: its store, a notes file (also one of a folder it walks),
    its baseline, configuration or declaration index ``cache`` file; or two of its outputs
    into one file. Files are compared by identity (device and inode, through symlinks).
    ``outputs`` are ``(option, path)`` pairs (None and ``-`` are stdout); an import's store
    is written too (``store_written``), so it may not be a notes file either."""
    from brainmigrate.config import SOURCES
    from brainmigrate.fsutil import refuse_clashes
    from brainmigrate.read.files import notes_files

    files = [(option, path) for option, path in outputs if path not in (None, "-")]
    read: list[tuple[str, str]] = []
    if store is not None:
        read.append(("the store", store))
    if baseline is not None:
        read.append(("the baseline", baseline))
    read += [("the configuration", name) for name, _ in SOURCES if os.path.isfile(name)]
    if cache is not None:
        read.append(("the declaration index cache", cache))
    notes = [p for p in notes if p != "-"]  # standard input is no file to write over
    if notes and (files or store_written):
        read += [("the notes file", str(path)) for _, path in notes_files(notes)]
    refuse_clashes(files, read)
    if store_written and store is not None:
        refuse_clashes([("--store", store)], [r for r in read if r[0] == "the notes file"])


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


def read_options(settings, parser: str, names, progress, notation: str | None = None):
    """The ``ImportOptions`` of the configured ``settings`` (``config.Settings`` with
    the command line's options in place), as import and check read notes; ``notation`` is
    ``--notation`` (None: by the settings' ``markdown`` globs)."""
    from brainmigrate.read import markdown_notes
    from brainmigrate.read.run import ImportOptions

    settings.check_roots()
    markdown = markdown_notes.DEFAULT_GLOBS if settings.markdown is None else settings.markdown
    return ImportOptions(
        roots=settings.roots,
        scope=settings.scope,
        plus_kind=settings.plus_kind,
        task_pattern=settings.task_pattern,
        parser=parser,
        cache_dir=settings.cache_dir,
        names=names,
        progress=progress,
        notation=notation,
        markdown=markdown,
    )


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
        type=click.Path(),
        help="Configuration file to read instead of the one found from the current folder "
        "up to the repository root.",
    )(func)


def load_settings(config_file: str | None, isolated: bool, quiet: bool = False, **given):
    """The settings of the configuration file (``config.load``) with the options given in
    place; says on stderr which file is used when one folder holds two (not when
    ``quiet``)."""
    from brainmigrate import config

    if config_file and isolated:
        raise click.UsageError("--config and --isolated exclude each other; give one")
    settings = config.load(config_file=config_file, isolated=isolated).override(**given)
    for note in () if quiet else settings.notes:
        click.echo(f"brainmigrate: note: {note}", err=True)
    return settings


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


def progress_option(func):
    """``--no-progress``: no status line on stderr (drawn only on a terminal, without CI)."""
    return click.option(
        "--no-progress",
        is_flag=True,
        help="Draw no progress line on stderr (it is drawn only on a terminal, CI unset).",
    )(func)


#: What a stage of ``ImportOptions.progress`` shows after reading.
_STAGES = {"merge": "merging", "write": "writing the store:", "check": "checking"}


@contextlib.contextmanager
def notes_progress(no_progress: bool):
    """A ``progress`` callback for ``ImportOptions`` that draws files and lines read,
    then the stage after reading, on stderr; None when no progress is drawn. The line is
    cleared at the end."""
    from brainmigrate import progress

    if not progress.enabled(sys.stderr, not no_progress):
        yield None
        return
    bar = progress.Progress(sys.stderr)

    def report(stage: str, done: int, total: int, lines: int) -> None:
        if stage == "read":
            bar.count("reading notes", done, total, "files", f"{lines:,} lines")
        else:
            bar.show(f"{_STAGES[stage]} {total:,} fact lines ({lines:,} lines read)", force=True)

    try:
        yield report
    finally:
        bar.close()


def notes_options(func):
    """Options shared by every command that reads notes."""
    for decorator in reversed(
        [
            click.argument("paths", nargs=-1, required=True, type=click.Path()),
            config_options,
            click.option(
                "--exclude",
                callback=not_blank,
                multiple=True,
                metavar="GLOB",
                help="Notes files to skip, replacing the config's exclude; repeat.",
            ),
            click.option(
                "--extend-exclude",
                callback=not_blank,
                multiple=True,
                metavar="GLOB",
                help="Notes files to skip, added to the config's exclude; repeat.",
            ),
            click.option(
                "--root",
                "roots",
                callback=not_blank,
                multiple=True,
                type=click.Path(),
                help="Checkout that cited paths are looked up in; repeat, first wins. "
                "Default: the current folder.",
            ),
            click.option(
                "--scope",
                callback=not_blank,
                help="Scope of every fact (default: area:<file stem>).",
            ),
            click.option(
                "--plus-kind",
                type=click.Choice(KINDS),
                help="Kind of '+' facts (default: environment; pattern in patterns files).",
            ),
            click.option(
                "--task-pattern",
                metavar="REGEX",
                callback=not_blank,
                help="Regular expression for task ids, replacing the default (TER-167).",
            ),
            click.option(
                "--cache-dir",
                callback=not_blank,
                type=click.Path(),
                envvar="BRAINMIGRATE_CACHE_DIR",
                help="Folder for the declaration index cache "
                "(env BRAINMIGRATE_CACHE_DIR, else config cache-dir; "
                "default ~/.cache/brainmigrate).",
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
    ):
        func = decorator(func)
    return func


class OneLineErrors(click.Group):
    """A command group whose usage errors are one line on stderr, exit 2:
    ``brainmigrate: error: <what>; see 'brainmigrate <command> --help'``."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        global terminated
        terminated = False  # (a new command line, also when tests run several in one process)
        store = sys.modules.get("brainmigrate.stores.sqlite")
        if store is not None:
            store.committed = None
        files = sys.modules.get("brainmigrate.fsutil")
        if files is not None:
            files.written.clear()
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


@click.group(
    "brainmigrate", cls=OneLineErrors, context_settings={"help_option_names": ["-h", "--help"]}
)
@click.version_option(__version__, "-V", "--version", prog_name="brainmigrate")
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
    "--verify",
    is_flag=True,
    help="Fingerprint the anchors of the facts this import writes (see 'brainmigrate stale').",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(REPORT_FORMATS),
    default="text",
    show_default=True,
    help="Report format (html: one self-contained audit page).",
)
@click.option("--output", type=click.Path(), help="Write the report to FILE instead of stdout.")
@guarded
def import_cmd(
    paths,
    config_file,
    isolated,
    exclude,
    extend_exclude,
    roots,
    scope,
    plus_kind,
    task_pattern,
    cache_dir,
    no_progress,
    stdin_filename,
    notation,
    parser,
    store,
    dry_run,
    verify,
    fmt,
    output,
):
    """Import notes files (or folders of *.md) into the fact store.

    Settings come from .brainmigrate.toml or [tool.brainmigrate] in pyproject.toml, found
    from the current folder up; options given here override them.
    """
    from brainmigrate import importer, reports
    from brainmigrate.read.files import select_files

    refuse_overwrites([("--output", output)], store, paths, store_written=not dry_run)
    check_output(output)
    s = load_settings(
        config_file,
        isolated,
        roots=roots,
        scope=scope,
        plus_kind=plus_kind,
        task_pattern=task_pattern,
        cache_dir=cache_dir,
        exclude=exclude,
        extend_exclude=extend_exclude,
    )
    with (
        stdin_notes(paths, stdin_filename) as (paths, names),
        notes_progress(no_progress) as progress,
    ):
        options = read_options(s, parser, names, progress, notation)
        paths, _ = select_files(paths, s.excludes, names)
        result = importer.import_notes(paths, options, store, dry_run=dry_run, verify=verify)
    if fmt == "json":
        emit(reports.json_chunks(result), output)
    else:  # streamed: facts and entries are read back as they are written
        data = reports.report(result, fmt != "text", "stream")
        hints = reports.gone_hints(result, s.cache_dir) if fmt == "html" else None
        emit(reports.render_chunks(data, fmt, hints), output)


@main.command("index")
@click.option(
    "--root",
    callback=not_blank,
    type=click.Path(),
    help="Checkout to index (one folder). Default: the config's first root, else '.'.",
)
@config_options
@click.option(
    "--cache-dir",
    callback=not_blank,
    type=click.Path(),
    envvar="BRAINMIGRATE_CACHE_DIR",
    help="Folder for the index cache (env BRAINMIGRATE_CACHE_DIR, else config cache-dir; "
    "default ~/.cache/brainmigrate).",
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
@progress_option
@guarded
def index_cmd(root, config_file, isolated, cache_dir, names, fmt, output, no_progress):
    """Index a checkout's declarations (cached) and show why a name does or does not anchor."""
    from pathlib import Path

    from brainmigrate import importer, progress, reports
    from brainmigrate.codeindex import CodeIndex

    settings = load_settings(config_file, isolated, cache_dir=cache_dir)
    if not root:
        settings.check_roots()
    root = root or (settings.roots[0] if settings.roots else ".")
    cache_dir = settings.cache_dir
    check_output(output)
    importer.make_roots([root])  # a root that is no folder: the message import gives
    idx = CodeIndex(root, cache_dir=Path(cache_dir) if cache_dir else None)
    refuse_overwrites([("--output", output)], cache=idx.cache_path)
    if progress.enabled(sys.stderr, not no_progress):
        bar = progress.Progress(sys.stderr)
        bar.show("indexing: listing files", force=True)
        try:
            summary = idx.build(lambda done, total: bar.count("indexing", done, total))
        finally:
            bar.close()
    else:
        summary = idx.build()
    data = reports.index_report(summary, {n: idx.lookup(n) for n in names}, idx.link_target)
    emit(reports.render(data, "json" if fmt == "json" else "index"), output)


@main.command("check")
@notes_options
@click.option(
    "--format",
    "formats",
    multiple=True,
    type=click.Choice(["text", "json", "github", "sarif", "junit", "markdown", "gitlab"]),
    help="Report format; repeat for several reports, each paired with the --output at the "
    "same position. Default: text.",
)
@click.option(
    "--output",
    "outputs",
    multiple=True,
    type=click.Path(),
    help="File for the report of the --format at the same position ('-': stdout). A format "
    "without one goes to stdout; at most one may.",
)
@click.option(
    "--fail-on",
    type=click.Choice(["error", "warning", "info"]),
    help="Lowest severity that fails the check (exit 1). Default: error, or the config's.",
)
@click.option(
    "--baseline",
    callback=not_blank,
    type=click.Path(),
    help="Baseline file: findings it holds do not fail; entries no longer found are listed.",
)
@click.option(
    "--update-baseline",
    is_flag=True,
    help="Write the current findings to the --baseline file, then check against it.",
)
@click.option("--exit-zero", is_flag=True, help="Exit 0 even with failing findings.")
@click.option(
    "--select",
    callback=not_blank,
    multiple=True,
    metavar="CODES",
    help="Finding codes or prefixes to report (BM1, BM203), comma-separated or repeated; "
    "replaces the config's select. Default: every code.",
)
@click.option(
    "--extend-select",
    callback=not_blank,
    multiple=True,
    metavar="CODES",
    help="Codes or prefixes to report in addition to select.",
)
@click.option(
    "--ignore",
    callback=not_blank,
    multiple=True,
    metavar="CODES",
    help="Codes or prefixes not to report (a longer selected prefix wins).",
)
@click.option("--statistics", is_flag=True, help="Show a count per finding code.")
@click.option(
    "--color",
    type=click.Choice(["auto", "always", "never"]),
    default="auto",
    show_default=True,
    help="Colour the text report: auto colours a terminal unless NO_COLOR is set "
    "(FORCE_COLOR forces it).",
)
@click.option("-q", "--quiet", is_flag=True, help="Print the findings only, no counts or notes.")
@click.option(
    "-v", "--verbose", is_flag=True, help="Also say on stderr which configuration and roots."
)
@click.option(
    "--fix",
    is_flag=True,
    help="Rewrite gone citations whose new place is certain (a git rename, or the one file "
    "of that name with unchanged content), then check again.",
)
@click.option(
    "--unsafe-fixes",
    is_flag=True,
    help="With --fix or --diff, also apply the one file of the same name without the "
    "content proof.",
)
@click.option(
    "--diff",
    is_flag=True,
    help="Print a unified diff of what --fix would change (patch -p1 applies it); write "
    "nothing. Exit 1 when there is something to fix.",
)
@guarded
def check_cmd(
    paths,
    config_file,
    isolated,
    exclude,
    extend_exclude,
    roots,
    scope,
    plus_kind,
    task_pattern,
    cache_dir,
    no_progress,
    stdin_filename,
    notation,
    parser,
    formats,
    outputs,
    fail_on,
    baseline,
    update_baseline,
    exit_zero,
    select,
    extend_select,
    ignore,
    statistics,
    color,
    quiet,
    verbose,
    fix,
    unsafe_fixes,
    diff,
):
    """Check notes for citations of files that no longer exist; read-only (unless
    --fix), for CI.

    Exit 0: nothing fails; 1: findings at or above --fail-on; 2: could not run. Settings
    come from .brainmigrate.toml or [tool.brainmigrate] in pyproject.toml, found from the
    current folder up; options given here override them.
    """
    from brainmigrate import check, rules
    from brainmigrate.reports import ci

    if fix or diff:
        from brainmigrate import fix as fixing  # a plain check does not load it

    if unsafe_fixes and not (fix or diff):
        raise click.UsageError("--unsafe-fixes applies with --fix or --diff: add one")
    if (fix or diff) and "-" in paths:
        raise click.UsageError("--fix and --diff rewrite notes files, not standard input ('-')")
    if diff and (formats or outputs or update_baseline or statistics):
        raise click.UsageError(
            "--diff prints only the diff: leave out --format, --output, --statistics and"
            " --update-baseline"
        )

    try:
        targets = ci.plan(formats, outputs)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    for _, output in targets:
        check_output(output)
    settings = load_settings(
        config_file,
        isolated,
        roots=roots,
        scope=scope,
        task_pattern=task_pattern,
        plus_kind=plus_kind,
        cache_dir=cache_dir,
        fail_on=fail_on,
        baseline=baseline,
        exclude=exclude,
        extend_exclude=extend_exclude,
        select=select,
        extend_select=extend_select,
        ignore=ignore,
        quiet=quiet,
    )
    selection = rules.Selection(settings.select, settings.extend_select, settings.ignore)
    if verbose:
        say(f"brainmigrate: configuration: {settings.source or 'none'}")
        say(f"brainmigrate: roots: {', '.join(settings.roots or ('.',))}")
        say(f"brainmigrate: codes: {', '.join(selection.codes()) or 'none'}")
    if update_baseline and not settings.baseline:
        raise click.UsageError("--update-baseline needs a baseline file: add --baseline FILE")
    written = [(f"--format {fmt.value} --output", output) for fmt, output in targets]
    if update_baseline:
        written.insert(0, ("--baseline", str(settings.baseline)))
    refuse_overwrites(
        written,
        notes=paths,
        baseline=None if update_baseline or not settings.baseline else str(settings.baseline),
    )
    with (
        stdin_notes(paths, stdin_filename) as (paths, names),
        notes_progress(no_progress or quiet) as progress,
    ):
        options = read_options(settings, parser, names, progress, notation)
        kwargs = {
            "baseline": settings.baseline,
            "update_baseline": update_baseline,
            "exclude": settings.excludes,
            "select": selection,
        }
        if fix or diff:
            fixed = fixing.run_fix(
                paths, options, settings.fail_on, write=not diff, unsafe=unsafe_fixes, **kwargs
            )
        else:
            result = check.run_check(paths, options, settings.fail_on, **kwargs)
    if fix or diff:
        for line in fixing.summary(fixed, diff=diff, quiet=quiet):
            say(line)
        if diff:
            sys.stdout.buffer.write(fixing.unified_diff(fixed.edits))
            sys.stdout.flush()
            sys.exit(EXIT_FINDINGS if fixed.edits and not exit_zero else EXIT_OK)
        result = fixed.check
    painted = use_color(color, sys.stdout)
    reports = [
        (ci.render(result, fmt, color=painted and output is None, quiet=quiet), output)
        for fmt, output in targets
    ]
    if statistics:  # in place of a text report on stdout, else on stderr
        table = ci.statistics(result, quiet=quiet)
        on_stdout = [i for i, (_, output) in enumerate(targets) if output is None]
        if on_stdout and targets[on_stdout[0]][0] == ci.Format.TEXT:
            reports[on_stdout[0]] = (table, None)
        else:
            click.echo(table, nl=False, err=True)
    for text, output in reports:
        emit(text, output, color=painted if output is None else None)
    step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if step_summary and any(fmt == ci.Format.GITHUB for fmt, _ in targets):
        extra = ci.github_step_summary(result)
        if extra:
            try:
                with open(step_summary, "a", encoding="utf-8") as handle:
                    handle.write(extra)
            except OSError as exc:
                say(f"brainmigrate: warning: GITHUB_STEP_SUMMARY: {exc}")
    settle()
    sys.exit(EXIT_OK if exit_zero else result.exit_code)


# ------------------------------------------------------------------ export, search, show

#: The export formats (``brainmigrate.exports.FORMATS``; a test keeps them equal).
EXPORT_FORMATS = ["jsonl", "brain", "knowledge", "memory"]


def store_option(func):
    """``--store``, for the commands that read the fact store."""
    return click.option(
        "--store",
        default="know.db",
        show_default=True,
        type=click.Path(),
        help="SQLite fact store to read.",
    )(func)


@main.command("export")
@store_option
@click.option(
    "--to", "fmt", required=True, type=click.Choice(EXPORT_FORMATS), help="Target format."
)
@click.option(
    "--output",
    required=True,
    type=click.Path(),
    help="File (jsonl; '-' for stdout) or folder (brain, knowledge, memory) to write.",
)
@click.option(
    "--scope",
    "scopes",
    multiple=True,
    callback=not_blank,
    help="Only facts of this scope; repeat or comma-separate; 'area' means every area:*.",
)
@click.option("--kind", "kinds", multiple=True, type=click.Choice(KINDS), help="Only this kind.")
@click.option(
    "--status",
    type=click.Choice(["active", "all"]),
    default="all",
    show_default=True,
    help="'active' leaves out stale and superseded facts.",
)
@click.option(
    "--plus-kind",
    type=click.Choice(KINDS),
    help="brain: write '+' for this kind in every file (import the result with the same "
    "--plus-kind). Default: as the importer reads '+' by the file's name.",
)
@click.option(
    "--task-pattern",
    metavar="REGEX",
    callback=not_blank,
    help="brain: the --task-pattern the store was imported with.",
)
@click.option(
    "--type-map",
    "type_map",
    multiple=True,
    metavar="KIND=TYPE",
    help="knowledge: entry type of a kind (project, reference or feedback); default project.",
)
@click.option(
    "--index-budget",
    type=click.IntRange(min=0),
    default=2048,
    show_default=True,
    help="memory: largest MEMORY.md, in bytes.",
)
@click.option(
    "--total-budget",
    type=click.IntRange(min=0),
    default=65536,
    show_default=True,
    help="memory: largest size of all files together, in bytes.",
)
@click.option(
    "--fit",
    is_flag=True,
    help="memory: leave out what does not fit the budgets (blockers, decisions, then the "
    "rest; active first; newest first) and list it. Without it the export fails.",
)
@click.pass_context
@guarded
def export_cmd(
    ctx,
    store,
    fmt,
    output,
    scopes,
    kinds,
    status,
    plus_kind,
    task_pattern,
    type_map,
    index_budget,
    total_budget,
    fit,
):
    """Export the fact store as jsonl, brain notes, knowledge entries or a memory folder.

    Nothing is written when the export fails (exit 2); summary and notes go to stderr.
    Exit 1: the other facts were written, but facts the target cannot hold were left out
    (each named on stderr).
    """
    from brainmigrate import exports as export

    only = {
        "plus_kind": "brain",
        "task_pattern": "brain",
        "type_map": "knowledge",
        "index_budget": "memory",
        "total_budget": "memory",
        "fit": "memory",
    }
    for name, target in only.items():
        if fmt != target and ctx.get_parameter_source(name).name != "DEFAULT":
            flag = "--" + name.replace("_", "-")
            raise click.UsageError(f"{flag} applies to --to {target} only; leave it out")
    refuse_overwrites([("--output", output)], store)
    options = export.Options(
        scopes=scopes,
        kinds=kinds,
        status=status,
        plus_kind=plus_kind,
        task_pattern=task_pattern,
        type_map=type_map,
        index_budget=index_budget,
        total_budget=total_budget,
        fit=fit,
    )
    try:
        result = export.export(store, fmt, output, options)
    except export.ExportError as exc:
        raise Failure(str(exc)) from None
    if result.text is not None:
        click.echo(result.text, nl=False)
    files = f"{len(result.files)} files, " if fmt != "jsonl" else ""
    if result.text is None:
        say(
            f"exported {result.facts - len(result.left_out) - len(result.refused)} facts"
            f" to {output} as {fmt}: "
            f"{files}{len(result.written)} written, "
            f"{len(result.files) - len(result.written)} unchanged"
        )
    if result.sizes:
        s = result.sizes
        say(
            f"  MEMORY.md {s['index']} of {s['index_budget']} bytes; "
            f"all files {s['total']} of {s['total_budget']} bytes"
        )
    for note in result.notes:
        say(f"  note: {note}")
    if result.others:
        say(f"  left alone: {len(result.others)} other files in {output}")
    if result.left_out:
        say(f"  left out by --fit: {len(result.left_out)} facts")
        for e in result.left_out:
            say(f"    {e['id']} {e['kind']} {e['scope']} {e['status']} ({e['bytes']} bytes)")
    if result.refused:
        say(f"  left out, {fmt} cannot hold them as they are: {len(result.refused)} facts")
        for e in result.refused:
            say(f"    {export.refusal(e)}")
        sys.exit(EXIT_FINDINGS)


class QueryCommand(click.Command):
    """A command whose words may start with "-": a word that is none of its options
    (``-webhook``, ``-x``) is a query word, wherever it stands. ``-h`` and ``--help`` ask for
    help, as in every command; after ``--`` every word is a query word."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        names, takes_value = set(), set()
        for param in self.get_params(ctx):
            if isinstance(param, click.Option):
                names.update(param.opts + param.secondary_opts)
                if not param.is_flag and not param.count:
                    takes_value.update(param.opts)
        kept: list[str] = []
        words: list[str] = []
        rest = list(args)
        while rest:
            arg = rest.pop(0)
            if arg == "--":
                words.extend(rest)
                break
            name = arg.split("=", 1)[0]
            if arg.startswith("-") and arg != "-" and name not in names:
                words.append(arg)  # a query word, not an option
                continue
            kept.append(arg)
            if arg in takes_value and rest:
                kept.append(rest.pop(0))  # the option's value, whatever it starts with
        return super().parse_args(ctx, [*kept, "--", *words] if words else kept)


@main.command("search", cls=QueryCommand)
@click.argument("query", nargs=-1)
@store_option
@click.option(
    "--anchor",
    metavar="TEXT",
    help="Only facts anchored to this file or symbol (Foo.kt, src/Foo.kt, Foo, Foo.parse, "
    "src/Foo.kt#Foo.parse); without a query, newest first.",
)
@click.option(
    "--scope",
    "scopes",
    multiple=True,
    callback=not_blank,
    help="Only facts of this scope; repeat or comma-separate; 'area' means every area:*.",
)
@click.option("--kind", "kinds", multiple=True, type=click.Choice(KINDS), help="Only this kind.")
@click.option(
    "--limit", type=click.IntRange(1, 30), default=5, show_default=True, help="Most hits."
)
@click.option("--all", "include_all", is_flag=True, help="Also superseded facts.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="One line per hit, or JSON.",
)
@guarded
def search_cmd(query, store, anchor, scopes, kinds, limit, include_all, fmt):
    """Full-text search (BM25 over stemmed words); one line per hit, best first.

    Any text is a query (quote it, or give several words); a word starting with '-' is a
    word, not an option (-h and --help ask for help: put them after '--' to search for
    them). Task ids (TER-160) and numbers are found as written. The hits' anchors are read
    again: facts whose code changed are marked STALE.
    """

    from brainmigrate import search

    if not query and anchor is None:
        raise click.UsageError("give a query, or --anchor TEXT, or both")
    if anchor is not None and search.anchor_parts(anchor) == ("", ""):
        raise click.UsageError(
            f"--anchor {anchor!r} names no file or declaration; give a path (src/Foo.kt),"
            " a name (Foo.start) or both (src/Foo.kt#Foo.start)"
        )
    hits = search.search(store, " ".join(query), scopes, kinds, limit, include_all, anchor=anchor)
    if fmt == "json":
        click.echo(to_json({"hits": [h.to_dict() for h in hits]}, indent=2))
        return
    for hit in hits:
        click.echo(hit.line)
    if not hits:
        click.echo("no facts match", err=True)


@main.command("show")
@click.argument("fact_id")
@store_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="Output format.",
)
@guarded
def show_cmd(fact_id, store, fmt):
    """Show one fact (k17 or 17) with its anchors and provenance.

    Its anchors are read again (a stale fact shows status stale with the reason); each
    says whether it is fingerprinted, when and at which commit.
    """

    from brainmigrate import search

    try:
        fact = search.show(store, fact_id)
    except search.NotFound as exc:
        raise Failure(str(exc)) from None
    if fmt == "json":
        click.echo(to_json(fact, indent=2))
    else:
        click.echo(search.render_fact(fact), nl=False)


# ------------------------------------------------------------------ staleness


def cache_option(func):
    """``--cache-dir``, for the commands that read anchored files."""
    return click.option(
        "--cache-dir",
        callback=not_blank,
        type=click.Path(),
        envvar="BRAINMIGRATE_CACHE_DIR",
        help="Folder for the declaration index cache "
        "(env BRAINMIGRATE_CACHE_DIR; default ~/.cache/brainmigrate).",
    )(func)


def anchor_roots_option(func):
    """``--root``, for the commands that read anchors again."""
    return click.option(
        "--root",
        "roots",
        callback=not_blank,
        multiple=True,
        type=click.Path(),
        help="Look anchors up in this checkout instead of the root recorded with them; "
        "repeat, first holding the file wins.",
    )(func)


@main.command("stale")
@click.option(
    "--store",
    default="know.db",
    show_default=True,
    type=click.Path(),
    help="SQLite fact store to read and record the states in.",
)
@anchor_roots_option
@click.option(
    "--scope",
    "scopes",
    callback=not_blank,
    multiple=True,
    help="Only facts of this scope; repeat or comma-separate; 'area' means every area:*.",
)
@click.option("--kind", "kinds", multiple=True, type=click.Choice(KINDS), help="Only this kind.")
@click.option("--dry-run", is_flag=True, help="Read and report; record nothing in the store.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "github", "sarif", "markdown"]),
    default="text",
    show_default=True,
    help="Report format (github, sarif, markdown: each stale fact at its notes line).",
)
@click.option("--output", type=click.Path(), help="Write the report to FILE instead of stdout.")
@cache_option
@guarded
def stale_cmd(store, roots, scopes, kinds, dry_run, fmt, output, cache_dir):
    """Read every anchored fact's code again; list and record the stale ones.

    Exit 0: no fact is stale; 1: a fact is stale; 2: could not run. Statuses are recorded
    in one transaction (stale with its reason, or back to active); --dry-run records
    nothing.
    """
    from brainmigrate import stale
    from brainmigrate.reports import stale as report

    refuse_overwrites([("--output", output)], store)
    check_output(output)
    result = stale.stale(
        store, roots, scopes, kinds, dry_run=dry_run, cache_dir=cache_dir, every=fmt == "json"
    )
    emit(report.render(result, fmt), output)
    sys.exit(result.exit_code)


@main.command("verify")
@click.argument("ids", nargs=-1)
@click.option(
    "--store",
    default="know.db",
    show_default=True,
    type=click.Path(),
    help="SQLite fact store to record the fingerprints in.",
)
@click.option("--all", "every", is_flag=True, help="Every fact with an anchor.")
@click.option(
    "--scope",
    "scopes",
    callback=not_blank,
    multiple=True,
    help="The facts of this scope; repeat or comma-separate; 'area' means every area:*.",
)
@anchor_roots_option
@cache_option
@guarded
def verify_cmd(ids, store, every, scopes, roots, cache_dir):
    """Record that facts hold now: fingerprint their anchors with the commit and time.

    Exit 0: every fact verified; 1: a fact was refused (an anchor is gone: the reason is
    printed, that fact is left as it was); 2: could not run.
    """
    from brainmigrate import search, stale

    try:
        numbers = [search.parse_id(i) for i in ids]
    except search.NotFound as exc:
        raise Failure(str(exc)) from None
    result = stale.verify(
        store, numbers, every=every, scopes=scopes, roots=roots, cache_dir=cache_dir
    )
    for fid, anchors in result.verified.items():
        click.echo(f"k{fid} verified: {len(anchors)} anchors fingerprinted")
    for fid, reason in result.refused.items():
        click.echo(f"k{fid} refused: {reason}")
    click.echo(f"verified {len(result.verified)}, refused {len(result.refused)}", err=True)
    sys.exit(result.exit_code)
