"""``check``'s own options (after the shared notes options), in the order ``--help``
lists them, and ``--explain``, which prints a code's documentation and refuses the options
that act on files (``EXPLAIN_WITH`` are the ones it takes)."""

from __future__ import annotations

import click

from brainmigrate.cli.options import (
    CHECK_FORMATS,
    LEVELS,
    PATH,
    not_blank,
    voice_options,
)


def _codes_option(name: str, help: str):
    return click.option(name, callback=not_blank, multiple=True, metavar="CODES", help=help)


def _readers() -> list[str]:
    from brainmigrate.sources import READERS

    return list(READERS)


def reader_of(source: str | None, notation: str | None) -> str | None:
    """The reader of every PATH: ``--from`` (as ``import --from``: a notes reader or a
    store's), else ``--notation``; the two naming different readers are refused
    (``Failure``, exit 2), as ``import`` refuses them."""
    if source is not None and notation is not None and source != notation:
        from brainmigrate.cli.runtime import Failure

        raise Failure(f"--from {source} and --notation {notation} disagree; pass one of them")
    return source or notation


#: ``check``'s own options, after the notes options, in the order ``--help`` lists them.
CHECK_OPTIONS = [
    click.option(
        "--from",
        "source",
        type=click.Choice(_readers()),
        default=None,
        help="Reader of every PATH, as for import: notes (brain, markdown) or a store;"
        " default: each file detected.",
    ),
    click.option(
        "--force-exclude/--no-force-exclude",
        default=None,
        help="Apply --exclude and --extend-exclude to files named as PATHS too (as "
        "pre-commit passes them); without it they drop only files found in folders. "
        "Default: the config's force-exclude, else off.",
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


#: The options ``--explain`` goes with: how it prints, not what it reads or writes.
EXPLAIN_WITH = ("explain", "quiet", "verbose", "color")


class ExplainOption(click.Option):
    """``--explain``: refused, before anything is read, beside a PATH or any option but
    ``EXPLAIN_WITH`` (``--fix``, ``--diff``, ``--add-ignore`` … act on files it would leave
    alone; clap's ``conflicts_with`` for ruff's options): one usage error naming them."""

    def handle_parse_result(self, ctx, opts, args):
        if opts.get(self.name) is not None and not ctx.resilient_parsing:
            by_name = {p.name: p for p in ctx.command.params}
            given = [
                name
                for name, value in opts.items()
                if name not in EXPLAIN_WITH
                and name in by_name
                and not by_name[name].value_is_missing(value)  # PATHS: none given
            ]
            if given:
                shown = [
                    "PATHS" if isinstance(by_name[n], click.Argument) else by_name[n].opts[-1]
                    for n in given
                ]
                listed = ", ".join(shown[:-1]) + " and " if len(shown) > 1 else ""
                raise click.UsageError(
                    f"--explain prints a code's documentation and reads or writes no notes;"
                    f" leave out {listed}{shown[-1]}, or --explain",
                    ctx,
                )
        return super().handle_parse_result(ctx, opts, args)


CHECK_OPTIONS.append(
    click.option(
        "--explain",
        cls=ExplainOption,
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
