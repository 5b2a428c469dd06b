"""The command that writes facts: ``put`` (one fact, or a JSON list of facts)."""

from __future__ import annotations

import re
import sys

import click

from brainmigrate.cli.options import (
    PATH,
    anchor_cache_option,
    format_option,
    root_option,
    store_option,
    voiced,
)
from brainmigrate.cli.runtime import Failure, guarded
from brainmigrate.model import KINDS

#: What ``put`` imports to run, before its first line is read (``cli.load``).
LIBRARY = ("brainmigrate.put",)


@click.command("put")
@click.argument("text", nargs=-1)
@click.option(
    "--scope",
    help="What the fact is about: repo, area:NAME, file:PATH, symbol:[PATH#]NAME or task:ID.",
)
@click.option(
    "--kind",
    type=click.Choice(KINDS),
    help="The kind of fact (default: other for a new fact; an update keeps the stored kind).",
)
@click.option("--task", help="The task the fact comes from (TER-167); default: the text's first.")
@click.option("--run", help="The run that wrote it.")
@click.option(
    "--anchor",
    "anchors",
    multiple=True,
    metavar="TEXT",
    help="Code the fact holds for: src/Foo.kt, src/Foo.kt#Foo.parse or Foo.parse; repeat.",
)
@click.option(
    "--supersedes",
    multiple=True,
    metavar="ID",
    help="A fact this one replaces (taken out of search); repeat.",
)
@click.option("--related", multiple=True, metavar="ID", help="A related fact; repeat.")
@click.option("--verify", is_flag=True, help="Fingerprint the anchors now.")
@click.option(
    "--json",
    "json_file",
    type=PATH,
    metavar="FILE",
    help="Read the facts from JSON (one fact object or {\"facts\": [...]}); '-' for stdin.",
)
@root_option(
    "Checkout the anchors are in (default: the current folder); repeat, first "
    "holding the path wins."
)
@store_option("SQLite fact store to write (created when missing).")
@format_option(["text", "json"], "One line per fact, or JSON.")
@anchor_cache_option
@voiced
@guarded
def put_cmd(text, scope, json_file, roots, store, fmt, cache_dir, **given):
    """Write one fact: a near-identical fact of the same scope is updated, else it is added.

    Exit 0: written; 2: could not (the reason is printed; nothing is written).
    """
    from brainmigrate import put

    if json_file is not None:
        given_too = [k for k, v in given.items() if v not in (None, False, ())]
        if text or scope or given_too:
            named = ["--" + k.removesuffix("s") if k == "anchors" else "--" + k for k in given_too]
            also = ", ".join(["TEXT"] * bool(text) + ["--scope"] * bool(scope) + named)
            raise click.UsageError(
                f"--json FILE holds the facts whole; give their fields there, not {also}"
            )
        facts, many = _from_file(json_file)
    else:
        if not text or scope is None:
            raise click.UsageError("give the fact's TEXT and --scope (or --json FILE)")
        facts, many = [_fact(" ".join(text), scope, **given)], False
    try:
        answers = put.put(store, facts, roots=roots, cache_dir=cache_dir)
    except put.PutError as exc:
        if json_file is None:
            raise Failure(_as_options(str(exc))) from None
        raise Failure(f"{'standard input' if json_file == '-' else json_file}: {exc}") from None
    _say(answers, many, fmt)


def _fact(text, scope, kind, task, run, anchors, supersedes, related, verify):
    """The fact the options give (``put.NewFact``)."""
    from brainmigrate import put

    given = tuple(put.AnchorText.from_text(a) for a in anchors)
    return put.NewFact(text, scope, kind, task, run, given, supersedes, related, verify)


#: A field a message about a fact starts with, and the option or argument that gave it.
_OPTION_OF = {"text": "TEXT", "anchors": "--anchor", "root": "--root"}
_FIELD = re.compile(r"^([a-z]+)(?:\[[0-9]+\])?(?:\.[a-z]+)?(?=:)")


def _as_options(message: str) -> str:
    """``anchors[0]: …`` -> ``--anchor: …``: a message about a fact given by options
    names the option (``put.PutError`` names the JSON field)."""
    return _FIELD.sub(lambda m: _OPTION_OF.get(m.group(1), f"--{m.group(1)}"), message, 1)


def _from_file(name: str):
    """The facts of ``put --json NAME`` and whether it gave a list (``{"facts": …}``)."""
    from brainmigrate import inputs, put

    shown = "standard input" if name == "-" else name
    try:
        if name == "-":
            data = sys.stdin.buffer.read(inputs.SMALL_FILE_MAX + 1)
            if len(data) > inputs.SMALL_FILE_MAX:
                raise Failure("--json -: more than 16 MB; put fewer facts at a time")
        else:
            data = inputs.read_bounded(name, inputs.SMALL_FILE_MAX, "a facts file")
        value = put.decode_json(data, shown)
    except put.PutError as exc:
        raise Failure(str(exc)) from None
    except FileNotFoundError:
        raise Failure(f"--json {name}: no such file or folder; check the path") from None
    except OSError as exc:
        raise Failure(f"--json {name}: {exc.strerror}; pass --json with a JSON file") from None
    try:
        return put.from_json(value), isinstance(value, dict) and "facts" in value
    except put.PutError as exc:
        raise Failure(f"{shown}: {exc}") from None


def _say(answers, many: bool, fmt: str) -> None:
    from brainmigrate.shapes import to_json

    if fmt == "json":
        dicts = [a.to_dict() for a in answers]
        click.echo(to_json({"answers": dicts} if many else dicts[0], indent=2))
        return
    for a in answers:
        tail = f" (replaced {a.replaced})" if a.replaced else ""
        click.echo(f"{a.action} {a.line}{tail}")
