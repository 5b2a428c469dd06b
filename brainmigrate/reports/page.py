"""What the HTML audit page shows beyond the report dict: the header (version, time,
command line, store), a link per notes file, and the stale states of the store's facts
when it holds fingerprints (docs/reference.md "The report")."""

from __future__ import annotations

import functools
import os
import shlex
from collections import Counter
from pathlib import Path
from urllib.parse import quote

from brainmigrate.errors import BrainmigrateError
from brainmigrate.fingerprints import STATES, UNREACHABLE, now_utc


def page(result, output: str | None, cache_dir=None) -> dict:
    """The page's extra values for an import (``merge.run.RunResult``) whose report goes to
    ``output`` (None or ``-``: stdout, read from the current folder):

    ``version``, ``time`` (UTC, ISO 8601 to the second), ``command`` (``command_line``),
    ``store``; ``href``: a function giving a notes file (as the report names it) its
    relative URL from the report's folder, or None (``href``); ``stale`` (``stale_states``) and
    ``stale_note`` (why there are no states, else ``""``).
    """
    from brainmigrate import __version__

    folder = os.path.dirname(os.path.abspath(output)) if output not in (None, "-") else "."
    states, note = stale_states(result, cache_dir)
    return {
        "version": __version__,
        "time": now_utc(),
        "command": command_line(result.store),
        "store": result.store,
        "href": functools.partial(href, folder=folder),
        "stale": states,
        "stale_note": note,
    }


def href(path: str, folder: str) -> str | None:
    """A relative URL from ``folder`` to the file at ``path`` (both as the run names them,
    relative to the current folder or absolute), ``/``-separated and percent-encoded; a
    file on another drive gets a ``file:`` URL; None when no file is there (notes read from
    standard input), so the page links nothing. No ``#L<n>`` fragment: a browser showing a
    local file has no line anchors, so the link opens the file and its text names the line."""
    target = os.path.abspath(path)
    if not os.path.isfile(target):
        return None
    try:
        rel = os.path.relpath(target, os.path.abspath(folder))
    except ValueError:  # another drive (Windows): no relative path
        return Path(target).as_uri()
    return quote(rel.replace(os.sep, "/"))


def command_line(store: str | None) -> str:
    """The running command as parsed (``brainmigrate import notes/ --root .``), shell-quoted:
    the arguments and the options given on the command line, in the command's order, and
    ``--store`` with the store's path when it was not given; ``brainmigrate import`` when
    no click command is running."""
    import click

    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return "brainmigrate import"
    words = ["brainmigrate", *ctx.command_path.split()[1:]]
    args: list[str] = []
    given = set()
    for p in ctx.command.params:
        source = ctx.get_parameter_source(p.name)
        if source is None or source.name != "COMMANDLINE":
            continue
        given.add(p.name)
        values = ctx.params.get(p.name)
        if isinstance(p, click.Argument):
            args += [str(v) for v in (values if isinstance(values, (list, tuple)) else [values])]
            continue
        words += _option_words(p, values)
    if "store" not in given and store:
        words += ["--store", str(store)]
    return shlex.join(words + args)


def _option_words(p, value) -> list[str]:
    """The words of option ``p`` given as ``value`` on the command line."""
    if p.is_flag and not p.count:
        if value == p.flag_value or value is True:
            return [p.opts[0]]
        return [p.secondary_opts[0]] if p.secondary_opts else []
    if p.count:
        return [p.opts[0]] * int(value or 0)
    values = value if p.multiple else [value]
    return [w for v in values for w in (p.opts[0], str(v))]


def stale_states(result, cache_dir=None) -> tuple[dict | None, str]:
    """The stale state of each anchored fact of the store an import wrote (SPEC.md
    §Staleness) as ``({"counts": {state: facts}, "facts": {"k12": (state, reason)}}, "")``
    (the reason of an unreachable fact is why its root cannot be read),
    or ``(None, why)`` for a dry run, a store that holds no fingerprints, or one whose
    anchors no root can read. Read exactly as ``brainmigrate stale --dry-run`` with no
    ``--root`` reads them (``stale.stale``, recording nothing): each anchor in the root
    recorded with it, not in the import's ``--root``s, so an anchor whose recorded root is
    missing is ``unreachable``, never "file gone" because another root lacks the file."""
    from brainmigrate import stale, stores

    if result.dry_run or not result.store or not os.path.exists(result.store):
        return None, "Dry run: no store was written, so no fingerprints to read again."
    try:  # the store was written already: a failure here costs the page its states only
        with stores.reader(Path(result.store)) as r:
            fingerprinted = r.version() >= 2 and bool(r.anchored_files())
        if not fingerprinted:
            return None, (
                "The store holds no fingerprints: run brainmigrate verify (or import"
                " --verify) to record them, then the page shows which facts are stale."
            )
        checked = stale.stale(result.store, (), dry_run=True, cache_dir=cache_dir)
    except BrainmigrateError as exc:
        return None, f"Stale states not read: {exc}"
    counts = Counter({s: 0 for s in (*STATES, UNREACHABLE)})
    facts = {}
    for fc in checked.facts:
        counts[fc.state] += 1
        why = fc.reason or ""
        if fc.state == UNREACHABLE and fc.anchors:  # as stale's text report words it
            why = fc.anchors[0].reason or ""
        facts[fc.fact.key] = (fc.state, why)
    return {"counts": dict(counts), "facts": facts}, ""
