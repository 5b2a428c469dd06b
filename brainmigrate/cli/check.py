"""``check`` (and ``check --fix``/``--diff``): read notes, report findings for CI.

The command's options are one ``CheckOptions``; the steps each take it: ``_refuse_usage``
(option combinations), ``_configure`` (settings, selection, outputs checked), ``_run``
(``check.run_check`` or ``fix.run_fix``), ``_report`` (the reports and their exit).
"""

from __future__ import annotations

import os
import sys
from typing import NamedTuple

import click

from brainmigrate.cli.options import (
    CHECK_FORMATS,
    LEVELS,
    PATH,
    not_blank,
    notes_options,
    voice_options,
)
from brainmigrate.cli.reading import (
    file_rules,
    load_settings,
    notes_paths,
    notes_progress,
    read_options,
    stdin_notes,
)
from brainmigrate.cli.runtime import (
    emit,
    guarded,
    refuse_overwrites,
    say,
    settle,
    use_color,
    writable_output,
)
from brainmigrate.errors import EXIT_FAULT, EXIT_FINDINGS, EXIT_OK

#: What every check runs, imported with the command (``cli.load``) rather than in the
#: middle of the run: the check, its reports, configuration, the declaration index.
LIBRARY = (
    "brainmigrate.reports.ci",
    "brainmigrate.config",
    "brainmigrate.read.markdown_notes",
    "brainmigrate.read.run",
    "brainmigrate.codeindex",
    "brainmigrate.progress",
)


class CheckOptions(NamedTuple):
    """``check``'s command line as click parsed it, one field per option (named as
    click names its value; a NamedTuple, so nothing is generated at start-up)."""

    paths: tuple[str, ...]
    config_file: str | None
    isolated: bool
    exclude: tuple[str, ...]
    extend_exclude: tuple[str, ...]
    roots: tuple[str, ...]
    scope: str | None
    plus_kind: str | None
    task_pattern: str | None
    cache_dir: str | None
    no_progress: bool
    stdin_filename: str | None
    notation: str | None
    parser: str
    formats: tuple[str, ...]
    outputs: tuple[str, ...]
    fail_on: str | None
    baseline: str | None
    update_baseline: bool
    exit_zero: bool
    select: tuple[str, ...]
    extend_select: tuple[str, ...]
    ignore: tuple[str, ...]
    statistics: bool
    color: str
    quiet: bool
    verbose: bool
    fix: bool
    unsafe_fixes: bool
    diff: bool
    show_fixes: bool
    fix_only: bool
    exit_non_zero_on_fix: bool
    force_exclude: bool
    respect_gitignore: bool | None
    add_ignore: bool

    @property
    def fixing(self) -> bool:
        """``--fix``, ``--fix-only`` or ``--diff``: the run plans fixes (and loads ``fix``)."""
        return self.fix or self.diff or self.fix_only


def _codes_option(name: str, help: str):
    return click.option(name, callback=not_blank, multiple=True, metavar="CODES", help=help)


#: ``check``'s own options, after the notes options, in the order ``--help`` lists them.
CHECK_OPTIONS = [
    click.option(
        "--force-exclude",
        is_flag=True,
        help="Apply --exclude and --extend-exclude to files named as PATHS too (as "
        "pre-commit passes them); without it they drop only files found in folders.",
    ),
    click.option(
        "--respect-gitignore/--no-respect-gitignore",
        default=None,
        help="Leave git-ignored notes files of walked folders out (default; a file named "
        "as a PATH is read all the same). Default: the config's respect-gitignore, else on.",
    ),
    click.option(
        "--format",
        "formats",
        multiple=True,
        type=click.Choice(CHECK_FORMATS),
        help="Report format; repeat for several reports, each paired with the --output at "
        "the same position. Default: text.",
    ),
    click.option(
        "--output",
        "outputs",
        multiple=True,
        type=PATH,
        help="File for the report of the --format at the same position ('-': stdout). A "
        "format without one goes to stdout; at most one may.",
    ),
    click.option(
        "--fail-on",
        type=click.Choice(LEVELS),
        help="Lowest severity that fails the check (exit 1). Default: error, or the config's.",
    ),
    click.option(
        "--baseline",
        callback=not_blank,
        type=PATH,
        help="Baseline file: findings it holds do not fail; entries no longer found are listed.",
    ),
    click.option(
        "--update-baseline",
        is_flag=True,
        help="Write the current findings to the --baseline file, then check against it.",
    ),
    click.option("--exit-zero", is_flag=True, help="Exit 0 even with failing findings."),
    _codes_option(
        "--select",
        "Finding codes or prefixes to report (BM1, BM203), comma-separated or repeated; "
        "replaces the config's select. Default: every code.",
    ),
    _codes_option("--extend-select", "Codes or prefixes to report in addition to select."),
    _codes_option("--ignore", "Codes or prefixes not to report (a longer selected prefix wins)."),
    click.option("--statistics", is_flag=True, help="Show a count per finding code."),
    *voice_options(
        quiet="Print the findings only, no counts or notes.",
        verbose="Also say on stderr which configuration and roots.",
    ),
    click.option(
        "--fix",
        is_flag=True,
        help="Rewrite gone citations whose new place is certain (a git rename, or the one "
        "file of that name with unchanged content), then check again.",
    ),
    click.option(
        "--unsafe-fixes",
        is_flag=True,
        help="With --fix or --diff, also apply the one file of the same name without the "
        "content proof.",
    ),
    click.option(
        "--diff",
        is_flag=True,
        help="Print a unified diff of what --fix would change (patch -p1 applies it); write "
        "nothing. Exit 1 when there is something to fix.",
    ),
    click.option(
        "--show-fixes",
        is_flag=True,
        help="List on stderr, per file, what --fix changed (without --fix: would change).",
    ),
    click.option(
        "--fix-only",
        is_flag=True,
        help="Apply the fixes as --fix does and report nothing else; exit 0 unless a file "
        "cannot be written.",
    ),
    click.option(
        "--exit-non-zero-on-fix",
        is_flag=True,
        help="With --fix or --fix-only, exit 1 when a file was fixed, even if nothing is left.",
    ),
    click.option(
        "--add-ignore",
        is_flag=True,
        help="Write a '<!-- brainmigrate: ignore CODE -->' comment for each finding left, "
        "so that the next check reports it as suppressed; then exit 0.",
    ),
]


def _explain(ctx: click.Context, _param, code: str | None) -> None:
    """``--explain CODE``: print the code's documentation (``rules.explain``) and exit 0,
    before the other options and PATHS are read; an unknown code is exit 2."""
    if code is None or ctx.resilient_parsing:
        return
    from brainmigrate import rules
    from brainmigrate.read.files import InputError

    try:
        click.echo(rules.explain(rules.known_code(code)), nl=False)
    except InputError as exc:
        raise click.BadParameter(str(exc), ctx, _param) from None
    ctx.exit(0)


CHECK_OPTIONS.append(
    click.option(
        "--explain",
        metavar="CODE",
        is_eager=True,
        expose_value=False,
        callback=_explain,
        help="Print what the finding CODE finds and how to fix it (as brainmigrate rule), "
        "then exit.",
    )
)


def check_options(func):
    """``check``'s own options (``CHECK_OPTIONS``)."""
    for decorator in reversed(CHECK_OPTIONS):
        func = decorator(func)
    return func


@click.command("check")
@notes_options
@check_options
@guarded
def check_cmd(**given) -> None:
    """Check notes for citations of files that no longer exist; read-only (unless
    --fix or --add-ignore), for CI. PATHS are notes files, folders (their *.md files) or
    quoted globs ("notes/**/*.md"); with no PATH, the notes files under the current
    folder that the include globs name (brain notes folders, CLAUDE.md, AGENTS.md …).

    Exit 0: nothing fails; 1: findings at or above --fail-on; 2: could not run. Settings
    come from .brainmigrate.toml or [tool.brainmigrate] in pyproject.toml, found from the
    current folder up; options given here override them.
    """
    opts = CheckOptions(**given)
    _refuse_usage(opts)
    opts, targets, settings, selection = _configure(opts)
    if opts.add_ignore:
        _add_ignore(opts, settings, selection)
    result = _run(opts, settings, selection)
    _report(opts, targets, result)


def _refuse_usage(opts: CheckOptions) -> None:
    """Raise ``click.UsageError`` for options that exclude each other."""
    if opts.unsafe_fixes and not opts.fixing:
        raise click.UsageError("--unsafe-fixes applies with --fix or --diff: add one")
    if opts.exit_non_zero_on_fix and not (opts.fix or opts.fix_only):
        raise click.UsageError("--exit-non-zero-on-fix applies with --fix or --fix-only: add one")
    if opts.exit_non_zero_on_fix and opts.exit_zero:
        raise click.UsageError("--exit-zero and --exit-non-zero-on-fix contradict: give one")
    if opts.fixing and "-" in opts.paths:
        raise click.UsageError("--fix and --diff rewrite notes files, not standard input ('-')")
    reports = opts.formats or opts.outputs or opts.update_baseline or opts.statistics
    if opts.add_ignore and (opts.fixing or reports or "-" in opts.paths):
        raise click.UsageError(
            "--add-ignore writes comments into notes files and reports nothing: leave out"
            " --fix, --diff, --fix-only, --format, --output, --statistics, --update-baseline"
            " and '-'"
        )
    if opts.fix_only and reports:
        raise click.UsageError(
            "--fix-only reports nothing: leave out --format, --output, --statistics and"
            " --update-baseline"
        )
    if opts.diff and reports:
        raise click.UsageError(
            "--diff prints only the diff: leave out --format, --output, --statistics and"
            " --update-baseline"
        )


def _configure(opts: CheckOptions):
    """``(opts, targets, settings, selection)``: ``opts`` with the PATHS read
    (``reading.notes_paths``: globs expanded, the current folder for none); the reports to
    write (``ci.plan``: ``(format, output or None)``), each output checked before any work;
    the configuration with the
    options in place; the finding codes selected. Says on stderr what ``--verbose`` asks
    for; raises ``click.UsageError`` or ``fsutil.OutputError``/``Clash`` (exit 2)."""
    from brainmigrate import rules
    from brainmigrate.reports import ci

    try:
        targets = ci.plan(opts.formats, opts.outputs)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    for _, output in targets:
        writable_output(output)
    overrides = ("roots", "scope", "task_pattern", "plus_kind", "cache_dir", "fail_on")
    overrides += ("baseline", "exclude", "extend_exclude", "select", "extend_select", "ignore")
    overrides += ("force_exclude", "respect_gitignore")
    settings = load_settings(
        opts.config_file,
        opts.isolated,
        quiet=opts.quiet,
        **{name: getattr(opts, name) for name in overrides},
    )
    paths, settings = notes_paths(opts.paths, settings)
    opts = opts._replace(paths=paths)
    selection = rules.Selection(settings.select, settings.extend_select, settings.ignore)
    if opts.verbose:
        say(f"brainmigrate: configuration: {settings.source or 'none'}")
        say(f"brainmigrate: roots: {', '.join(settings.roots or ('.',))}")
        say(f"brainmigrate: codes: {', '.join(selection.codes()) or 'none'}")
    if opts.update_baseline and not settings.baseline:
        raise click.UsageError("--update-baseline needs a baseline file: add --baseline FILE")
    written = [(f"--format {fmt.value} --output", output) for fmt, output in targets]
    if opts.update_baseline:
        written.insert(0, ("--baseline", str(settings.baseline)))
    read_baseline = settings.baseline and not opts.update_baseline
    refuse_overwrites(
        written,
        notes=opts.paths,
        baseline=str(settings.baseline) if read_baseline else None,
        rules=file_rules(settings),
    )
    return opts, targets, settings, selection


def _baseline_folder(opts: CheckOptions, settings) -> str | None:
    """The folder of the configuration file that named the baseline ``--update-baseline``
    writes (None when ``--baseline`` was typed, or nothing is written): the file must stay
    below it. Raises ``BaselineError`` (exit 2) before any work when it leads out."""
    if not opts.update_baseline or opts.baseline is not None or not settings.baseline:
        return None
    from brainmigrate import config
    from brainmigrate.baseline import BaselineError, outside_message

    if opts.config_file:
        folder = os.path.dirname(os.path.abspath(opts.config_file))
    else:
        try:
            folder = os.fspath(config.find()[0].absolute().parent)
        except LookupError:  # pragma: no cover - a baseline from no file is typed
            return None
    message = outside_message(settings.baseline, folder)
    if message is not None:
        raise BaselineError(message)
    return folder


def _add_ignore(opts: CheckOptions, settings, selection) -> None:
    """``--add-ignore``: write the suppressions of the findings left (``suppress``), say
    on stderr what was added and what was left alone, and exit: 0, or 2 when a file that
    needed a comment could not be written."""
    from brainmigrate import suppress

    with notes_progress(opts.no_progress or opts.quiet) as progress:
        options = read_options(settings, opts.parser, {}, progress, opts.notation)
        done = suppress.add_ignores(
            opts.paths,
            options,
            settings.fail_on,
            baseline=settings.baseline,
            exclude=settings.excludes,
            select=selection,
        )
    for note in done.notes:
        say(f"brainmigrate: warning: {note}")
    if not opts.quiet:
        s, files = _plural(done.added, "suppression"), _plural(len(done.written), "file")
        say(f"Added {s} to {files}")
    settle()
    sys.exit(EXIT_FAULT if done.left else EXIT_OK)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _run(opts: CheckOptions, settings, selection):
    """The check (``check.CheckResult``) or, with ``--fix``/``--diff``, the fix
    (``fix.FixResult``) of the notes ``opts`` name."""
    from brainmigrate import check

    within = _baseline_folder(opts, settings)
    with (
        stdin_notes(opts.paths, opts.stdin_filename) as (paths, names),
        notes_progress(opts.no_progress or opts.quiet) as progress,
    ):
        options = read_options(settings, opts.parser, names, progress, opts.notation)
        kwargs = {
            "baseline": settings.baseline,
            "update_baseline": opts.update_baseline,
            "exclude": settings.excludes,
            "select": selection,
            "baseline_folder": within,
        }
        if not opts.fixing:
            result = check.run_check(paths, options, settings.fail_on, **kwargs)
            if "-" in opts.paths or not result.tally().by_code().get("BM101"):
                return result
            from brainmigrate import fix  # only a check with gone citations loads it

            return fix.fixable(result, paths, options, settings.excludes)
        from brainmigrate import fix  # a plain check does not load it

        return fix.run_fix(
            paths,
            options,
            settings.fail_on,
            write=not opts.diff,
            unsafe=opts.unsafe_fixes,
            **kwargs,
        )


def _report(opts: CheckOptions, targets, result) -> None:
    """Write the reports of ``result`` to their ``targets`` and exit: after a fix, its
    summary on stderr (and with ``--diff`` only the diff, exit 1 when there is something
    to fix); ``--statistics`` in place of a text report on stdout, else on stderr."""
    from brainmigrate.reports import ci

    fixed = False
    if opts.fixing:
        fixed = _fix_summary(opts, result)
        result = result.check
    elif opts.show_fixes and result.fixes:
        from brainmigrate.reports import fix as fix_report

        for line in fix_report.listing(list(result.fixes.values()), done=False):
            say(line)
    painted = use_color(opts.color, sys.stdout)
    reports = [  # chunks made as they are written: the findings are read back, not held
        (ci.render_chunks(result, fmt, color=painted and output is None, quiet=opts.quiet), output)
        for fmt, output in targets
    ]
    if opts.statistics:
        table = ci.statistics(result, quiet=opts.quiet)
        on_stdout = [i for i, (_, output) in enumerate(targets) if output is None]
        if on_stdout and targets[on_stdout[0]][0] == ci.Format.TEXT:
            reports[on_stdout[0]] = (table, None)
        else:
            click.echo(table, nl=False, err=True)
    for text, output in reports:
        emit(text, output, color=painted if output is None else None)
    if any(fmt == ci.Format.GITHUB for fmt, _ in targets):
        _step_summary(result)
    if not opts.quiet and (line := ci.fixable_line(result)):
        say(line)
    settle()
    if opts.exit_zero:
        sys.exit(EXIT_OK)
    sys.exit(EXIT_FINDINGS if fixed and opts.exit_non_zero_on_fix else result.exit_code)


def _fix_summary(opts: CheckOptions, result) -> bool:
    """Say on stderr what a fix did (``--show-fixes``: per file); with ``--diff``, print
    the diff and exit (1 when there is something to fix), with ``--fix-only`` exit (2
    when a file could not be written, 1 with ``--exit-non-zero-on-fix`` when one was).
    True when a file was written."""
    from brainmigrate.reports import fix as fix_report  # a plain check does not load it

    if opts.show_fixes:
        for line in fix_report.listing(result.fixes, done=not opts.diff):
            say(line)
    listed = not (opts.quiet or opts.show_fixes)
    for line in fix_report.summary(result, diff=opts.diff, quiet=opts.quiet, listed=listed):
        say(line)
    if opts.diff:
        sys.stdout.buffer.write(fix_report.unified_diff(result.edits))
        sys.stdout.flush()
        sys.exit(EXIT_FINDINGS if result.edits and not opts.exit_zero else EXIT_OK)
    if opts.fix_only:
        settle()
        if len(result.written) < len(result.edits):
            sys.exit(EXIT_FAULT)
        sys.exit(EXIT_FINDINGS if result.written and opts.exit_non_zero_on_fix else EXIT_OK)
    return bool(result.written)


def _step_summary(result) -> None:
    """Append to ``$GITHUB_STEP_SUMMARY`` (when set) the findings the annotations leave
    out (``github.github_step_summary``); a file that cannot be written is a warning."""
    from brainmigrate.reports import github

    step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
    extra = github.github_step_summary(result) if step_summary else None
    if extra:
        try:
            with open(step_summary, "a", encoding="utf-8") as handle:
                handle.write(extra)
        except OSError as exc:
            say(f"brainmigrate: warning: GITHUB_STEP_SUMMARY: {exc}")
