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
from brainmigrate.model import KINDS
from brainmigrate.reports import FORMATS as REPORT_FORMATS
from brainmigrate.reports import to_json


class Failure(Exception):
    """A run that could not be done; the CLI prints the message and exits 2."""


def _known_errors() -> tuple[type[BaseException], ...]:
    from brainmigrate.importer import InputError
    from brainmigrate.notation import GrammarError, NotesReadError
    from brainmigrate.spill import SpillError
    from brainmigrate.stale import VerifyError
    from brainmigrate.stores.sqlite import StoreError

    errors: list[type[BaseException]] = [
        Failure,
        VerifyError,
        InputError,
        NotesReadError,
        StoreError,
        GrammarError,
        SpillError,
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
        except BrokenPipeError:
            # the reader went away (``| head``): stop quietly, as a tool killed by SIGPIPE
            with contextlib.suppress(OSError):
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(141)
        except KeyboardInterrupt:
            click.echo(
                "brainmigrate: interrupted (a store is written whole or not at all)", err=True
            )
            sys.exit(2)
        except Exception as exc:  # noqa: BLE001 - the last line of defence
            if os.environ.get("BRAINMIGRATE_DEBUG"):
                raise
            click.echo(
                f"brainmigrate: internal error: {type(exc).__name__}: {exc} "
                "(a store is written in one transaction, whole or not at all; "
                "BRAINMIGRATE_DEBUG=1 shows the traceback)",
                err=True,
            )
            sys.exit(2)

    return wrapper


def emit(text: str | Iterable[str], output: str | None) -> None:
    """Write a finished report (a string, or chunks of one) to ``output`` atomically, or to
    stdout."""
    chunks = [text] if isinstance(text, str) else _joined(text)
    if output in (None, "-"):
        for chunk in chunks:
            click.echo(chunk, nl=False)
        return
    from brainmigrate.fsutil import write_chunks_atomic

    try:
        write_chunks_atomic(output, chunks)
    except OSError as exc:
        raise Failure(f"--output {output}: cannot write: {exc.strerror or exc}") from None


def check_output(output: str | None) -> None:
    """Raise ``Failure`` when ``--output`` could not be written, before any work (an import
    that fails at its report would have written its store already): the folder must exist
    and take a new file, which is tried (and removed again)."""
    if output in (None, "-"):
        return
    import tempfile
    from pathlib import Path

    if not output or output.endswith(("/", os.sep)):
        raise Failure(f"--output {output!r}: not a file name; pass a file name")
    target = Path(output)
    folder = target.parent
    if target.is_dir():
        raise Failure(f"--output {output}: is a folder; pass a file name")
    if not folder.is_dir():
        raise Failure(f"--output {output}: folder {folder} does not exist")
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=f".{target.name}.", suffix=".probe"):
            pass
    except OSError as exc:
        raise Failure(f"--output {output}: cannot write in {folder}: {exc.strerror}") from None


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


class OneLineErrors(click.Group):
    """A command group whose usage errors are one line on stderr, exit 2:
    ``brainmigrate: error: <what>; see 'brainmigrate <command> --help'``."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.exceptions.NoArgsIsHelpError as exc:
            click.echo(exc.ctx.get_help() if exc.ctx else exc.format_message())
            sys.exit(0)
        except click.UsageError as exc:
            where = f"; see '{exc.ctx.command_path} --help'" if exc.ctx else ""
            message = " ".join(exc.format_message().split()).rstrip(".")
            click.echo(f"brainmigrate: error: {message}{where}", err=True)
            sys.exit(2)
        except click.ClickException as exc:
            click.echo(f"brainmigrate: error: {exc.format_message()}", err=True)
            sys.exit(exc.exit_code)
        except click.Abort:
            click.echo(
                "brainmigrate: interrupted (a store is written whole or not at all)", err=True
            )
            sys.exit(2)
        if not standalone_mode:
            return rv
        sys.exit(rv if isinstance(rv, int) else 0)


@click.group(
    "brainmigrate", cls=OneLineErrors, context_settings={"help_option_names": ["-h", "--help"]}
)
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
    roots,
    scope,
    plus_kind,
    task_pattern,
    cache_dir,
    parser,
    store,
    dry_run,
    verify,
    fmt,
    output,
):
    """Import notes files (or folders of *.md) into the fact store."""
    from brainmigrate import importer, reports

    check_output(output)
    options = importer.Options(roots, scope, plus_kind, task_pattern, parser, cache_dir)
    result = importer.import_notes(paths, options, store, dry_run=dry_run, verify=verify)
    if fmt == "json":
        emit(reports.json_chunks(result), output)
    else:  # streamed: facts and entries are read back as they are written
        emit(reports.render_chunks(reports.report(result, fmt != "text", "stream"), fmt), output)


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


@main.command("check")
@notes_options
@click.option(
    "--format",
    "formats",
    multiple=True,
    type=click.Choice(["text", "json", "github", "sarif", "junit", "markdown"]),
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
    type=click.Path(),
    help="Baseline file: findings it holds do not fail; entries no longer found are listed.",
)
@click.option(
    "--update-baseline",
    is_flag=True,
    help="Write the current findings to the --baseline file, then check against it.",
)
@click.option("--exit-zero", is_flag=True, help="Exit 0 even with failing findings.")
@guarded
def check_cmd(
    paths,
    roots,
    scope,
    plus_kind,
    task_pattern,
    cache_dir,
    parser,
    formats,
    outputs,
    fail_on,
    baseline,
    update_baseline,
    exit_zero,
):
    """Check notes for citations of files that no longer exist; read-only, for CI.

    Exit 0: nothing fails; 1: findings at or above --fail-on; 2: could not run. Settings
    come from .brainmigrate.toml or [tool.brainmigrate] in pyproject.toml; options given
    here override them.
    """
    from brainmigrate import check, config, importer
    from brainmigrate.reports import ci

    try:
        targets = ci.plan(formats, outputs)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    for _, output in targets:
        check_output(output)
    settings = config.load().override(
        roots=roots,
        task_pattern=task_pattern,
        plus_kind=plus_kind,
        fail_on=fail_on,
        baseline=baseline,
    )
    if update_baseline and not settings.baseline:
        raise click.UsageError("--update-baseline needs a baseline file: add --baseline FILE")
    options = importer.Options(
        settings.roots, scope, settings.plus_kind, settings.task_pattern, parser, cache_dir
    )
    result = check.run_check(
        paths,
        options,
        settings.fail_on,
        baseline=settings.baseline,
        update_baseline=update_baseline,
        exclude=settings.exclude,
    )
    reports = [(ci.render(result, fmt), output) for fmt, output in targets]
    for text, output in reports:
        emit(text, output)
    step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if step_summary and any(fmt == ci.Format.GITHUB for fmt, _ in targets):
        extra = ci.github_step_summary(result)
        if extra:
            try:
                with open(step_summary, "a", encoding="utf-8") as handle:
                    handle.write(extra)
            except OSError as exc:
                click.echo(f"brainmigrate: warning: GITHUB_STEP_SUMMARY: {exc}", err=True)
    sys.exit(0 if exit_zero else result.exit_code)


# ------------------------------------------------------------------ export, search, show

#: The export formats (``brainmigrate.stores.export.FORMATS``; a test keeps them equal).
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
    """
    from brainmigrate.stores import export

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
    options = export.Options(
        scopes, kinds, status, plus_kind, task_pattern, type_map, index_budget, total_budget, fit
    )
    try:
        result = export.export(store, fmt, output, options)
    except export.ExportError as exc:
        raise Failure(str(exc)) from None
    if result.text is not None:
        click.echo(result.text, nl=False)
    say = functools.partial(click.echo, err=True)
    files = f"{len(result.files)} files, " if fmt != "jsonl" else ""
    if result.text is None:
        say(
            f"exported {result.facts - len(result.left_out)} facts to {output} as {fmt}: "
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


# A query word may start with "-" (and hold an "h"): unknown options are query words, and
# only --help (not -h) asks for help.
@main.command(
    "search",
    context_settings={"ignore_unknown_options": True, "help_option_names": ["--help"]},
)
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
    word, not an option. Task ids (TER-160) and numbers are found as written. The hits'
    anchors are read again: facts whose code changed are marked STALE.
    """

    from brainmigrate import search

    if not query and anchor is None:
        raise click.UsageError("give a query, or --anchor TEXT, or both")
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
