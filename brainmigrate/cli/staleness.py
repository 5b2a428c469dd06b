"""The commands that read anchors again: ``stale`` (list and record stale facts) and
``verify`` (fingerprint facts that hold now)."""

from __future__ import annotations

import sys

import click

from brainmigrate.cli.options import (
    STALE_FORMATS,
    anchor_cache_option,
    anchor_roots_option,
    dry_run_option,
    format_option,
    kind_filter,
    output_option,
    scope_filter,
    store_option,
    voiced,
)
from brainmigrate.cli.runtime import (
    Failure,
    emit,
    guarded,
    note,
    refuse_overwrites,
    voice,
    writable_output,
)

#: The formats that list every fact looked at, fresh ones too (``stale.stale(every=)``).
EVERY = ("json", "junit")


@click.command("stale")
@store_option("SQLite fact store to read and record the states in.")
@anchor_roots_option
@scope_filter()
@kind_filter
@dry_run_option("Read and report; record nothing in the store.")
@format_option(
    STALE_FORMATS,
    "Report format (github, sarif, markdown, junit, gitlab: each stale fact at its notes line).",
)
@output_option
@anchor_cache_option
@voiced
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
    writable_output(output)
    result = stale.stale(
        store, roots, scopes, kinds, dry_run=dry_run, cache_dir=cache_dir, every=fmt in EVERY
    )
    emit(
        report.render(result, fmt, quiet=voice().quiet, store=store),
        output,
        changed=lambda: _recorded(store, result),
    )
    sys.exit(result.exit_code)


def _recorded(store: str, result) -> str | None:
    """What ``stale`` changed in the store, in words (None: nothing), for a report that
    could not be written after it (``runtime.unwritten``)."""
    if not (result.recorded or result.moved):
        return None
    said = [f"{result.recorded} status{'es' if result.recorded != 1 else ''} recorded"]
    if result.moved:
        said.append(f"{result.moved} anchor{'s' if result.moved != 1 else ''} moved to new lines")
    return f"the store {store} was updated ({', '.join(said)})"


@click.command("verify")
@click.argument("ids", nargs=-1)
@store_option("SQLite fact store to record the fingerprints in.")
@click.option("--all", "every", is_flag=True, help="Every fact with an anchor.")
@scope_filter("The facts of this scope; repeat or comma-separate; 'area' means every area:*.")
@anchor_roots_option
@anchor_cache_option
@voiced
@guarded
def verify_cmd(ids, store, every, scopes, roots, cache_dir):
    """Record that facts hold now: fingerprint their anchors with the commit and time.

    Exit 0: every fact verified; 1: a fact was refused (an anchor is gone: the reason is
    printed, that fact is left as it was); 2: could not run.
    """
    from brainmigrate import search, stale
    from brainmigrate.reports.summaries import verify_counts, verify_lines

    try:
        numbers = [search.parse_id(i) for i in ids]
    except search.NotFound as exc:
        raise Failure(str(exc)) from None
    result = stale.verify(
        store, numbers, every=every, scopes=scopes, roots=roots, cache_dir=cache_dir
    )
    for line in verify_lines(result):
        click.echo(line)
    note(verify_counts(result))
    sys.exit(result.exit_code)
