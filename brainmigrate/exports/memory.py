"""The ``memory`` export: ``MEMORY.md`` (one line per topic) and one topic file per scope,
within byte budgets; ``fit`` leaves out what does not fit, by priority, and says what.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence

from brainmigrate.escapes import one_line
from brainmigrate.exports.common import (
    INDEX_NAME,
    ExportError,
    ExportOptions,
    ExportResult,
    _cap,
)
from brainmigrate.exports.files import scope_stems
from brainmigrate.model import KINDS, FactRecord
from brainmigrate.read.notation import fold
from brainmigrate.shapes import plural

_KIND_RANK = {"blocker": 0, "decision": 1}

_STATUS_RANK = {"active": 0, "stale": 1, "superseded": 2}


def priority(facts: Iterable[FactRecord]) -> list[FactRecord]:
    """Facts in the order ``fit`` keeps them: blockers, decisions, the rest; active, stale,
    superseded; newest ``created`` first (none last), then the higher id."""
    newest = sorted(facts, key=lambda r: (r.created or "", r.id), reverse=True)
    return sorted(newest, key=lambda r: (_KIND_RANK.get(r.kind, 2), _STATUS_RANK.get(r.status, 3)))


def _index_line(scope: str, name: str, counts: Counter) -> str:
    summary = ", ".join(f"{counts[k]} {k}" for k in KINDS if counts[k])
    return f"- {_scope(scope)}: {summary}, see {name}\n"


def _topic_head(scope: str) -> str:
    return f"# {_scope(scope)}\n\n"


def _scope(scope: str) -> str:
    """A scope as the index and a topic's heading show it: on one line (``fold``), its
    control characters as U+FFFD (a scope made of a notes file's name may hold an ESC,
    which would recolour the terminal that shows the file)."""
    return one_line(fold(scope)) or "(no scope)"


def _topic_line(rec: FactRecord) -> str:
    state = ""
    if rec.status == "stale":
        state = " (stale" + (f": {rec.status_reason}" if rec.status_reason else "") + ")"
    elif rec.status != "active":
        state = f" ({rec.status})"
    return f"- {rec.key} {rec.kind}{state}: {fold(rec.text)}\n"


def memory_files(facts: Sequence[FactRecord], options: ExportOptions, result: ExportResult) -> dict:
    """``MEMORY.md`` and one topic file per scope (seed 004), within the byte budgets.

    Facts are taken in ``priority`` order while both budgets hold; what does not fit is
    left out. Without ``options.fit`` anything left out fails the export with the plan;
    with it, ``result.left_out`` lists exactly what was left out. The index has one line
    per topic (``- area:docker: 1 blocker, 4 environment, see docker.md``); a topic file
    has a heading and one line per fact, in priority order.
    """
    if options.index_budget < 0 or options.total_budget < 0:
        raise ExportError("--index-budget and --total-budget are byte counts (0 or more)")
    names = {s: f"{n}.md" for s, n in scope_stems({r.scope for r in facts}, ["memory"]).items()}
    counts: dict[str, Counter] = defaultdict(Counter)
    index_lines: dict[str, str] = {}
    kept: dict[str, list[FactRecord]] = defaultdict(list)
    index_size = total = 0
    left: list[dict] = []
    for rec in priority(facts):
        line = _topic_line(rec).encode()
        old = index_lines.get(rec.scope, "")
        new_counts = counts[rec.scope].copy()
        new_counts[rec.kind] += 1
        new = _index_line(rec.scope, names[rec.scope], new_counts)
        d_index = len(new.encode()) - len(old.encode())
        d_topic = len(line) + (0 if old else len(_topic_head(rec.scope).encode()))
        if (
            index_size + d_index <= options.index_budget
            and total + d_index + d_topic <= options.total_budget
        ):
            counts[rec.scope] = new_counts
            index_lines[rec.scope] = new
            kept[rec.scope].append(rec)
            index_size += d_index
            total += d_index + d_topic
        else:
            left.append(
                {
                    "id": rec.key,
                    "scope": rec.scope,
                    "kind": rec.kind,
                    "status": rec.status,
                    "bytes": len(line),
                }
            )
    files = {INDEX_NAME: "".join(index_lines[s] for s in sorted(index_lines, key=names.get))}
    for scope, recs in kept.items():
        files[names[scope]] = _topic_head(scope) + "".join(_topic_line(r) for r in recs)
    sizes = {name: len(text.encode()) for name, text in files.items()}
    result.sizes = {
        "index": sizes[INDEX_NAME],
        "total": sum(sizes.values()),
        "index_budget": options.index_budget,
        "total_budget": options.total_budget,
    }
    if left and not options.fit:
        need_index = sum(
            len(_index_line(s, names[s], Counter(r.kind for r in facts if r.scope == s)).encode())
            for s in {r.scope for r in facts}
        )
        need_total = (
            need_index
            + sum(len(_topic_head(s).encode()) for s in {r.scope for r in facts})
            + sum(len(_topic_line(r).encode()) for r in facts)
        )
        ids = [f"{e['id']} ({e['kind']}, {e['status']}, {e['bytes']} B)" for e in left]
        raise ExportError(
            f"the facts do not fit the memory budgets: {INDEX_NAME} would be {need_index} "
            f"bytes (--index-budget {options.index_budget}), all files {need_total} bytes "
            f"(--total-budget {options.total_budget}); nothing written. To fit, these "
            f"{len(left)} of {len(facts)} facts would have to go: {', '.join(_cap(ids))}. "
            "Pass --fit to leave them out, raise the budgets, or narrow the export with "
            "--scope, --kind or --status active"
        )
    result.left_out = left
    _note_tasks(kept, result)
    return files


def _note_tasks(kept: dict[str, list[FactRecord]], result: ExportResult) -> None:
    """The note naming the facts written whose task is lost (their text does not name
    it; a topic line holds the text alone): said, never lost in silence."""
    untold = [r.key for recs in kept.values() for r in recs if not _shows_task(r)]
    if untold:
        result.notes.append(
            f"{plural(len(untold), 'fact')} {'loses its' if len(untold) == 1 else 'lose their'}"
            " task id: a memory topic line holds the text alone, which does not name it"
            f" (export --to jsonl or knowledge to keep it): {', '.join(_cap(untold))}"
        )


def _shows_task(rec: FactRecord) -> bool:
    """Whether ``rec``'s task (``put --task``, or a store's) is read back from its text:
    no task, or every word of it in the text."""
    text = fold(rec.text)
    return not rec.task or all(t in text for t in rec.task.split(" "))
