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

from brainmigrate.cli.check_options import check_options, reader_of
from brainmigrate.cli.options import notes_options
from brainmigrate.cli.reading import (
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
    force_exclude: bool | None
    respect_gitignore: bool | None
    add_ignore: bool
    source: str | None

    @property
    def fixing(self) -> bool:
        """``--fix``, ``--fix-only`` or ``--diff``: the run plans fixes (and loads ``fix``)."""
        return self.fix or self.diff or self.fix_only


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
    come from .brainmigrate.toml or [tool.brainmigrate] in pyproject.toml, the nearest at
    or above each notes file; options given here override them.
    """
    from brainmigrate.read.files import NoNotes

    opts = CheckOptions(**given)
    _refuse_usage(opts)
    named = opts.paths
    try:
        opts, targets, found = _configure(opts)
        if opts.add_ignore:
            _add_ignore(opts, found)
        result = _run_groups(opts, found)
    except NoNotes:
        if named:
            raise
        # no PATH (the check-all hook) in a checkout that keeps no notes: nothing to flag
        say("brainmigrate: warning: no notes files under the current folder; nothing checked")
        settle()
        sys.exit(EXIT_OK)
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
    """``(opts, targets, groups)``: ``opts`` with the PATHS read (``reading.notes_paths``:
    globs expanded, the current folder for none); the reports to write (``ci.plan``:
    ``(format, output or None)``), each output checked before any work; the PATHS grouped
    by the configuration that applies to them (``configs.groups``, the options in place),
    each with the finding codes it selects; each group's findings meet its own baseline
    (a group that names none, none). Says on stderr what ``--verbose`` asks for;
    raises ``click.UsageError``, ``Failure`` (groups with another fail-on) or
    ``fsutil.OutputError``/``Clash`` (exit 2)."""
    from brainmigrate import rules
    from brainmigrate.cli import configs
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
    given = {name: getattr(opts, name) for name in overrides}
    given["stdin_filename"] = opts.stdin_filename
    paths, found = configs.of_paths(
        opts.paths,
        configs.CHECK_KEYS,
        "check them apart",
        opts.config_file,
        opts.isolated,
        opts.quiet,
        **given,
    )
    opts = opts._replace(paths=paths)
    out = []
    for group in found:
        s = group.settings
        selection = rules.Selection(s.select, s.extend_select, s.ignore)
        if opts.verbose:
            which = f" (for {', '.join(group.paths)})" if len(found) > 1 else ""
            say(f"brainmigrate: configuration: {s.source or 'none'}{which}")
            say(f"brainmigrate: roots: {', '.join(s.roots or ('.',))}")
            say(f"brainmigrate: codes: {', '.join(selection.codes()) or 'none'}")
        out.append((group, selection))
    baselines = list(dict.fromkeys(str(g.settings.baseline) for g in found if g.settings.baseline))
    if opts.update_baseline and not baselines:
        raise click.UsageError("--update-baseline needs a baseline file: add --baseline FILE")
    written = [(f"--format {fmt.value} --output", output) for fmt, output in targets]
    if opts.update_baseline:
        written[:0] = [("--baseline", b) for b in _distinct(baselines)]
    read_baselines = [] if opts.update_baseline else baselines
    outputs = any(path not in (None, "-") for _, path in written)
    notes, rules = configs.written_over(found) if outputs else (opts.paths, None)
    refuse_overwrites(
        written,
        notes=notes,
        baseline=read_baselines[0] if read_baselines else None,
        configs=[group.file for group in found if group.file],
        rules=rules,
    )
    if read_baselines[1:]:
        from brainmigrate.fsutil import refuse_clashes

        files = [(option, path) for option, path in written if path not in (None, "-")]
        refuse_clashes(files, [("the baseline", b) for b in read_baselines[1:]])
    return opts, targets, out


def _distinct(paths: list[str]) -> list[str]:
    """``paths`` with each file once (two spellings of one file written once)."""
    seen, out = set(), []
    for p in paths:
        real = os.path.realpath(p)
        if real not in seen:
            seen.add(real)
            out.append(p)
    return out


def _baseline_folder(opts: CheckOptions, group) -> str | None:
    """The folder of the configuration file that named the baseline ``--update-baseline``
    writes (None when ``--baseline`` was typed, or nothing is written): the file must stay
    below it. Raises ``BaselineError`` (exit 2) before any work when it leads out."""
    settings = group.settings
    if not opts.update_baseline or opts.baseline is not None or not settings.baseline:
        return None
    from brainmigrate.baseline import BaselineError, outside_message

    folder = group.folder
    if folder is None:  # pragma: no cover - a baseline from no file is typed
        return None
    message = outside_message(settings.baseline, folder)
    if message is not None:
        raise BaselineError(message)
    return folder


def _run_groups(opts: CheckOptions, found):
    """``_run`` of each group's PATHS (``-`` read from standard input once), joined into
    one result (``configs.join_checks``/``join_fixes``)."""
    from brainmigrate.cli import configs

    with stdin_notes(opts.paths, opts.stdin_filename) as (paths, names):
        read = dict(zip(opts.paths, paths, strict=True))
        results = [
            _run(opts, group, selection, tuple(read.get(p, p) for p in group.paths), names)
            for group, selection in found
        ]
    return (configs.join_fixes if opts.fixing else configs.join_checks)(results)


def _add_ignore(opts: CheckOptions, found) -> None:
    """``--add-ignore``: write the suppressions of the findings left in each group's
    notes (``suppress``, with the group's settings), say on stderr what was added and what
    was left alone, and exit: 0, or 2 when a file that needed a comment could not be
    written."""
    from brainmigrate import suppress

    added, written, left = 0, set(), False
    with notes_progress(opts.no_progress or opts.quiet) as progress:
        for group, selection in found:
            s = group.settings
            source = reader_of(opts.source, opts.notation)
            options = read_options(s, opts.parser, {}, progress, source, group.skip)
            done = suppress.add_ignores(
                group.paths,
                options,
                s.fail_on,
                baseline=s.baseline,
                exclude=s.excludes,
                select=selection,
                file_ignores=s.file_ignores,
            )
            for note in done.notes:
                say(f"brainmigrate: warning: {note}")
            added, left = added + done.added, left or bool(done.left)
            written.update(done.written)
    if not opts.quiet:
        from brainmigrate.shapes import plural

        say(f"Added {plural(added, 'suppression')} to {plural(len(written), 'file')}")
    settle()
    sys.exit(EXIT_FAULT if left else EXIT_OK)


def _run(opts: CheckOptions, group, selection, paths, names):
    """The check (``check.CheckResult``) or, with ``--fix``/``--diff``, the fix
    (``fix.FixResult``) of one group's notes ``paths`` (``names``: their display names)."""
    from brainmigrate import check

    settings = group.settings
    within = _baseline_folder(opts, group)
    with notes_progress(opts.no_progress or opts.quiet) as progress:
        source = reader_of(opts.source, opts.notation)
        options = read_options(settings, opts.parser, names, progress, source, group.skip)
        kwargs = {
            "baseline": settings.baseline,
            "update_baseline": opts.update_baseline and bool(settings.baseline),
            "exclude": settings.excludes,
            "select": selection,
            "baseline_folder": within,
            "file_ignores": settings.file_ignores,
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
    """Say on stderr what a fix did (``--show-fixes``: per file, under one count line,
    then what is left); with ``--diff``, print
    the diff and exit (1 when there is something to fix), with ``--fix-only`` exit (2
    when a file could not be written, 1 with ``--exit-non-zero-on-fix`` when one was).
    True when a file was written."""
    from brainmigrate.reports import fix as fix_report  # a plain check does not load it

    if opts.show_fixes:
        for line in fix_report.listing(result.fixes, done=not opts.diff):
            say(line)
    listed = not (opts.quiet or opts.show_fixes)
    lines = fix_report.summary(result, diff=opts.diff, quiet=opts.quiet, listed=listed)
    if opts.show_fixes and result.fixes and not opts.quiet:  # the listing said the count
        from brainmigrate.shapes import plural

        lines[-1] = f"{plural(len(result.left), 'citation')} left"
    for line in lines:
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
