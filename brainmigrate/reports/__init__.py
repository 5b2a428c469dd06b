"""Reports of a run: a JSON-able dict (SPEC.md §Report) and templates that render it.

``report(result)`` builds the dict every format starts from; ``render(data, fmt)`` turns it
into text. JSON is ``json.dumps`` of the dict; every other format is one jinja2 template in
``templates/`` (``<format>.j2``), so adding a format is adding a template.
"""

from __future__ import annotations

import contextlib
import os
from collections import Counter
from collections.abc import Iterator
from functools import cache
from typing import TYPE_CHECKING

from brainmigrate.escapes import markdown
from brainmigrate.model import KINDS, MARKERS, SKIP_REASONS
from brainmigrate.shapes import noun, one_line, plural, report_fact, to_json

if TYPE_CHECKING:  # jinja2 is imported when a template is first rendered (start-up)
    import jinja2

#: ``schema_version`` of the import report (SPEC.md §Report).
IMPORT_SCHEMA = 1
#: Formats ``import`` renders.
FORMATS = ("text", "json", "markdown", "html")

COUNTS = ("lines", "fact_lines", "continuations", "blank", "skipped")
#: The report's lists of entries a run made while merging, in report order.
ENTRIES = (
    "gone",
    "outside",
    "unresolved",
    "ignored",
    "ambiguous",
    "merged",
    "removed",
    "renamed",
)


def report(result, with_facts: bool = True, entries: str = "list") -> dict:
    """The JSON report of an import (``merge.run.RunResult``), keys per SPEC.md §Report.

    ``with_facts=False`` leaves ``facts`` empty (its count stays in ``totals``), for
    renderers that do not show facts one by one. ``entries`` says how the lists of
    ``ENTRIES`` come: ``list`` (lists of dicts), ``none`` (empty lists, counts kept;
    ``json_chunks`` streams them) or ``stream`` (the run's own sequences, read back from
    their temporary files on each iteration, and ``facts`` made again; for
    ``render_chunks``, so a large run never holds them).
    ``removed``: the stored facts no longer in the notes (``merge.sync.removed``). Counts
    ``by_kind``, ``by_marker``, ``superseded``, ``citing_gone`` are over the facts after
    merging; per file and in total ``lines == fact_lines + continuations + blank +
    skipped``; each ``files`` entry names its ``notation`` (SPEC.md §Notation).
    """
    roots = {r.name: r.index for r in result.roots}
    files = []
    totals = dict.fromkeys(COUNTS, 0)
    skipped = Counter({r: 0 for r in SKIP_REASONS})
    for st in result.files:
        entry = {"path": st.path, "scope": st.scope, "notation": st.notation}
        for key in COUNTS:
            entry[key] = getattr(st, key)
            totals[key] += entry[key]
        entry["skipped_by_reason"] = {r: st.skipped_by_reason.get(r, 0) for r in SKIP_REASONS}
        entry["merged"] = st.merged
        entry["already_imported"] = st.already_imported
        entry["gone"] = st.gone
        skipped.update(st.skipped_by_reason)
        files.append(entry)
    facts: list | _Facts = []
    keep = with_facts and entries != "stream"
    if with_facts and entries == "stream":
        facts = _Facts(result, roots)
    by_kind = Counter({k: 0 for k in KINDS})
    by_marker = Counter({m: 0 for m in MARKERS})
    actions: Counter = Counter()
    superseded = provenance = 0
    for rec in result.facts:  # one pass: the facts may be read back from a temporary file
        action = rec.action()
        provenance += len(rec.new_provenance)
        by_kind[rec.kind] += 1
        by_marker[rec.marker] += 1
        actions[action] += 1
        superseded += rec.status == "superseded"
        if keep:
            facts.append(report_fact(rec, roots, action))
    return {
        "schema_version": IMPORT_SCHEMA,
        "dry_run": result.dry_run,
        "sync": result.sync,
        "store": result.store,
        "roots": [r.label for r in result.roots],
        "totals": {
            "files": len(files),
            **totals,
            "facts": len(result.facts),
            "merged": len(result.merged) - result.merged.known,
            "already_imported": result.merged.known,
            "superseded": superseded,
            "removed": len(result.removed),
            "renamed": len(result.renamed),
            "citing_gone": len({g["fact"] for g in result.gone}),
            "added": actions.get("added", 0),
            "updated": actions.get("updated", 0),
            "unchanged": actions.get("unchanged", 0),
            "provenance_added": provenance,
            **{key: len(getattr(result, key)) for key in ENTRIES[:5]},
            "warnings": len(result.warnings),
            "by_kind": dict(by_kind),
            "by_marker": dict(by_marker),
            "skipped_by_reason": {r: skipped[r] for r in SKIP_REASONS},
        },
        "files": files,
        "facts": facts,
        **{key: _entries(getattr(result, key), entries) for key in ENTRIES},
        "warnings": _warnings(result.warnings, entries),
    }


class _Facts:
    """A report's facts as dicts, made again from the run's facts on each iteration."""

    def __init__(self, result, roots: dict[str, int]) -> None:
        self._result, self._roots = result, roots

    def __len__(self) -> int:
        return len(self._result.facts)

    def __iter__(self) -> Iterator[dict]:
        for rec in self._result.facts:
            yield report_fact(rec, self._roots, rec.action())


class _Dicts:
    """A report's warnings as dicts, made again from the run's own (spilled) warnings on
    each iteration."""

    def __init__(self, items) -> None:
        self._items = items

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[dict]:
        for d in self._items:
            yield d.to_dict()


def _warnings(items, how: str):
    """The warnings as ``report``'s ``entries`` says: ``list`` of dicts, ``stream``
    (``_Dicts``), ``none`` (empty: ``json_chunks`` streams them)."""
    if how == "stream":
        return _Dicts(items)
    return [d.to_dict() for d in items] if how == "list" else []


def _entries(items, how: str):
    if how == "stream":
        return items
    return list(items) if how == "list" else []


def json_chunks(result) -> Iterator[str]:
    """The JSON report of ``report(result)``, as text chunks made while they are written.

    The facts, the entries (gone, outside, unresolved, ignored, ambiguous, merged) and the
    warnings, the report's bulk, are
    made and encoded one at a time, one per line, so a large run never holds them all as
    dicts or as one string. Parses to ``report(result)``.
    """
    data = report(result, with_facts=False, entries="none")
    roots = {r.name: r.index for r in result.roots}
    yield "{\n"
    last = len(data) - 1
    for i, (key, value) in enumerate(data.items()):
        yield f"  {to_json(key)}: "
        if key == "facts":
            yield from _stream(report_fact(rec, roots, rec.action()) for rec in result.facts)
        elif key in ENTRIES:
            yield from _stream(getattr(result, key))
        elif key == "warnings":
            yield from _stream(d.to_dict() for d in result.warnings)
        else:
            yield to_json(value, indent=2).replace("\n", "\n  ")
        yield ",\n" if i < last else "\n"
    yield "}\n"


def _stream(items) -> Iterator[str]:
    """A JSON list of ``items``, one item a line, indented as a report key's value."""
    first = True
    for item in items:
        yield ("[\n    " if first else ",\n    ") + to_json(item)
        first = False
    yield "[]" if first else "\n  ]"


@cache
def environment() -> jinja2.Environment:
    """The one jinja2 environment of every report template (``templates/*.j2``).

    HTML templates turn autoescaping on themselves; Markdown ones escape each value from
    input with the ``md`` filter (``escapes.markdown``); every value printed is ``one_line``
    (check's CI templates use an environment of their own, ``findings.environment``).
    Compiled templates are kept in the user cache folder (``template_cache_dir``), so a run
    loads them instead of compiling them again.
    """
    import jinja2

    return make_environment(jinja2.PackageLoader("brainmigrate.reports", "templates"))


def template_cache_dir():
    """Where compiled templates are kept: ``templates`` in the cache folder
    (``$BRAINMIGRATE_CACHE_DIR``, else ``$XDG_CACHE_HOME/brainmigrate``, else
    ``~/.cache/brainmigrate``)."""
    from brainmigrate.fsutil import user_cache_dir

    return user_cache_dir() / "templates"


def make_environment(loader, cache_dir=None) -> jinja2.Environment:
    """A report environment reading templates with ``loader``; compiled templates are
    cached in ``cache_dir`` (default ``template_cache_dir()``), keyed by template name and
    checked against the template's text, so an edited template is compiled again. A
    folder that cannot be made or written leaves the environment working without a cache.
    """
    import jinja2

    env = jinja2.Environment(
        loader=loader,
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
        finalize=one_line,
        bytecode_cache=_bytecode_cache(cache_dir or template_cache_dir()),
    )
    env.filters["count"] = lambda items: sum(1 for _ in items)  # length without a list
    env.filters["md"] = markdown
    env.filters["plural"] = plural  # {{ n | plural("fact") }}: 1 fact, 2 facts
    env.filters["noun"] = noun  # {{ n | noun("fact") }}: fact, facts
    return env


def _bytecode_cache(folder):
    """A jinja2 ``FileSystemBytecodeCache`` in ``folder`` that never fails a run: a cache
    file that cannot be read is a miss, one that cannot be written is left unwritten."""
    from jinja2 import FileSystemBytecodeCache

    class QuietCache(FileSystemBytecodeCache):
        def load_bytecode(self, bucket) -> None:
            from brainmigrate import inputs  # a FIFO there is refused, never waited on

            try:
                with inputs.opened(self._get_cache_filename(bucket)) as f:
                    bucket.load_bytecode(f)
            except (OSError, ValueError, EOFError):
                bucket.reset()

        def dump_bytecode(self, bucket) -> None:
            with contextlib.suppress(OSError):
                super().dump_bytecode(bucket)

    try:
        os.makedirs(folder, exist_ok=True)
    except OSError:
        return None
    return QuietCache(str(folder), "%s.jinja2-cache")


def render(data: dict, fmt: str) -> str:
    """Render a report dict as ``fmt``: ``json`` or the name of a template in ``templates/``.

    Raises ``ValueError`` for an unknown format.
    """
    if fmt == "json":
        return to_json(data, indent=2) + "\n"
    return "".join(render_chunks(data, fmt))


def render_chunks(
    data: dict, fmt: str, hints: dict[str, str] | None = None, page: dict | None = None
) -> Iterator[str]:
    """Render a report dict with the template ``fmt`` (not ``json``), as chunks made while
    they are written; ``hints`` (``gone_hints``) gives gone paths their "moved?" hint (in
    the text, Markdown and HTML reports); ``page`` (``page.page``) the HTML page's header,
    links to the notes files and stale states (without it the page says neither). Raises
    ``ValueError`` for an unknown format."""
    from jinja2 import TemplateNotFound

    try:
        template = environment().get_template(f"{fmt}.j2")
    except TemplateNotFound:
        raise ValueError(f"unknown report format {fmt!r}") from None
    view = {**_view(data), "page": page} if fmt == "html" else None
    return template.generate(r=data, v=view, hints=hints or {})


def import_chunks(
    result, fmt: str, output: str | None, cache_dir=None, quiet: bool = False
) -> Iterator[str]:
    """The report of an import (``merge.run.RunResult``) as ``fmt`` (not ``json``), streamed
    (``report(…, "stream")``), with the "moved?" hints of its gone paths and, for ``html``,
    the page's header, links and stale states (``page.page``) for a page written to
    ``output`` (None or ``-``: stdout); ``quiet`` (``-q``) leaves the text report's counts
    and files out."""
    from brainmigrate.reports.page import page

    data = report(result, fmt != "text", "stream")
    data["quiet"] = quiet
    hints = gone_hints(result, cache_dir)
    extra = page(result, output, cache_dir) if fmt == "html" else None
    return render_chunks(data, fmt, hints, extra)


def gone_hints(result, cache_dir=None) -> dict[str, str]:
    """The "moved?" hint ``check`` gives each gone path of an import (``merge.run.RunResult``),
    as text (``moved? app/New.kt (renamed in git history)``); paths without one are left
    out. Reads git's history and the first root's file list once (``check.MoveHints``)."""
    from brainmigrate.hints import MoveHints

    if not len(result.gone):
        return {}
    hints = MoveHints(result.roots, cache_dir, result.notes.name_index)
    out = {}
    for g in result.gone:
        if g["path"] not in out:
            hint = hints.hint(g["path"])
            out[g["path"]] = hint.describe() if hint else ""
    return {path: text for path, text in out.items() if text}


def _view(data: dict) -> dict:
    """What the HTML page's charts and tables look up, counted in one pass over the facts
    (a template filter per scope or per citation would be quadratic): ``scopes`` as
    ``(scope, {kind: facts}, facts)`` sorted by scope, ``most`` (the largest scope's
    facts, at least 1), ``anchors`` (anchors per root index) and ``text`` (text of each
    fact a gone citation names)."""
    per_scope: dict[str, Counter] = {}
    anchors: Counter = Counter()
    gone = {g["fact"] for g in data["gone"]}
    text = {}
    for f in data["facts"]:
        per_scope.setdefault(f["scope"], Counter())[f["kind"]] += 1
        anchors.update(a["root"] for a in f["anchors"])
        if f["id"] in gone:
            text[f["id"]] = f["text"]
    scopes = [(s, per_scope[s], sum(per_scope[s].values())) for s in sorted(per_scope)]
    most = max([1] + [n for _, _, n in scopes])
    return {"scopes": scopes, "most": most, "anchors": anchors, "text": text}


def index_report(summary, declared: dict[str, list], aliases=None) -> dict:
    """The report of ``brainmigrate index``: the build summary and, per name asked, where it
    is declared and how it would anchor (SPEC.md §Anchors 3; ``aliases`` as
    ``resolve_symbol`` takes it)."""
    from brainmigrate.codeindex import resolve_symbol

    data = {"schema_version": IMPORT_SCHEMA, **summary.to_dict()}
    data["names"] = {}
    for name, decls in declared.items():
        state, chosen = resolve_symbol(decls, aliases) if decls else ("none", [])
        data["names"][name] = {
            "anchor": state,
            "declarations": [
                {
                    "path": d.path,
                    "lines": list(d.lines),
                    "kind": d.kind,
                    "category": d.category,
                    "container": d.container,
                    "language": d.language,
                }
                for d in decls
            ],
            "chosen": [d.path for d in chosen],
        }
    return data
