"""The commands that read the store: ``export``, ``search`` and ``show``."""

from __future__ import annotations

import sys

import click

from brainmigrate.cli.options import (
    EXPORT_FORMATS,
    PATH,
    anchor_roots_option,
    format_option,
    kind_filter,
    plus_kind_option,
    scope_filter,
    store_option,
    task_pattern_option,
    voiced,
)
from brainmigrate.cli.runtime import Failure, guarded, note, refuse_overwrites, say, voice
from brainmigrate.errors import EXIT_FINDINGS
from brainmigrate.shapes import to_json

#: The export options that apply to one target only, with it.
_TARGET_ONLY = {
    "plus_kind": "brain",
    "task_pattern": "brain",
    "type_map": "knowledge",
    "index_budget": "memory",
    "total_budget": "memory",
    "fit": "memory",
}


@click.command("export")
@store_option()
@click.option(
    "--to", "fmt", required=True, type=click.Choice(EXPORT_FORMATS), help="Target format."
)
@click.option(
    "--output",
    required=True,
    type=PATH,
    help="File (jsonl; '-' for stdout) or folder (brain, knowledge, memory) to write.",
)
@scope_filter()
@kind_filter
@click.option(
    "--status",
    type=click.Choice(["active", "all"]),
    default="all",
    show_default=True,
    help="'active' leaves out stale and superseded facts.",
)
@plus_kind_option(
    "brain: write '+' for this kind in every file (import the result with the same "
    "--plus-kind). Default: as the importer reads '+' by the file's name."
)
@task_pattern_option("brain: the --task-pattern the store was imported with.")
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
@voiced
@guarded
def export_cmd(ctx, store, fmt, output, **given):
    """Export the fact store as jsonl, brain notes, knowledge entries or a memory folder.

    Nothing is written when the export fails (exit 2); summary and notes go to stderr.
    Exit 1: the other facts were written, but facts the target cannot hold were left out
    (each named on stderr).
    """
    from brainmigrate import exports as export
    from brainmigrate.reports.summaries import export_summary

    for name, target in _TARGET_ONLY.items():
        if fmt != target and ctx.get_parameter_source(name).name != "DEFAULT":
            flag = "--" + name.replace("_", "-")
            raise click.UsageError(f"{flag} applies to --to {target} only; leave it out")
    refuse_overwrites([("--output", output)], store)
    try:
        result = export.export(store, fmt, output, export.ExportOptions(**given))
    except export.ExportError as exc:
        raise Failure(str(exc)) from None
    if result.text is not None:
        click.echo(result.text, nl=False)
    lines = export_summary(result, fmt, output)
    if voice().quiet:  # only the facts left out, which fail the export
        lines = [export.refusal(e) for e in result.refused]
    for line in lines:
        say(line)
    if result.refused:
        sys.exit(EXIT_FINDINGS)


class QueryCommand(click.Command):
    """A command whose words may start with one "-": such a word that is none of its
    options (``-webhook``, ``-x``) is a query word, wherever it stands. A word starting
    with "--" that is none of its options (``--limt``) is refused as click refuses an
    unknown option (``click.NoSuchOption``, with the nearest option's name). ``-h`` and
    ``--help`` ask for help, as in every command; after ``--`` every word is a query
    word."""

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
            if arg.startswith("--") and name not in names:
                raise click.NoSuchOption(name, possibilities=sorted(names), ctx=ctx)
            if arg.startswith("-") and arg != "-" and name not in names:
                words.append(arg)  # a query word, not an option
                continue
            kept.append(arg)
            if arg in takes_value and rest:
                kept.append(rest.pop(0))  # the option's value, whatever it starts with
        return super().parse_args(ctx, [*kept, "--", *words] if words else kept)


@click.command("search", cls=QueryCommand)
@click.argument("query", nargs=-1)
@store_option()
@click.option(
    "--anchor",
    metavar="TEXT",
    help="Only facts anchored to this file or symbol (Foo.kt, src/Foo.kt, Foo, Foo.parse, "
    "src/Foo.kt#Foo.parse); without a query, newest first.",
)
@scope_filter()
@kind_filter
@click.option(
    "--limit", type=click.IntRange(1, 30), default=5, show_default=True, help="Most hits."
)
@click.option("--all", "include_all", is_flag=True, help="Also superseded facts.")
@anchor_roots_option
@format_option(["text", "json"], "One line per hit, or JSON.")
@voiced
@guarded
def search_cmd(query, store, anchor, scopes, kinds, limit, include_all, roots, fmt):
    """Full-text search (BM25 over stemmed words); one line per hit, best first.

    Any text is a query (quote it, or give several words); a word starting with one '-'
    is a word, not an option (-h asks for help); a word starting with '--' must be an
    option (put such words after '--' to search for them). Task ids (TER-160) and numbers
    are found as written; a fact id (k12) is the first hit. The hits' anchors are read
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
    hits = search.search(
        store, " ".join(query), scopes, kinds, limit, include_all, anchor=anchor, roots=roots
    )
    if fmt == "json":
        click.echo(to_json({"hits": [h.to_dict() for h in hits]}, indent=2))
        return
    for hit in hits:
        click.echo(hit.line)
    if not hits:
        note("no facts match")


@click.command("show")
@click.argument("fact_id")
@store_option()
@anchor_roots_option
@format_option(["text", "json"], "Output format.")
@voiced
@guarded
def show_cmd(fact_id, store, roots, fmt):
    """Show one fact (k17 or 17) with its anchors and provenance.

    Its anchors are read again (a stale fact shows status stale with the reason); each
    says whether it is fingerprinted, when and at which commit.
    """

    from brainmigrate import search

    try:
        fact = search.show(store, fact_id, roots=roots)
    except search.NotFound as exc:
        raise Failure(str(exc)) from None
    if fmt == "json":
        click.echo(to_json(fact, indent=2))
    else:
        click.echo(search.render_fact(fact), nl=False)
