"""The short summaries a command prints after its work: what an export wrote and left
out, what ``verify`` fingerprinted and refused. Each is text without a newline at its
end, for the CLI to print where it says."""

from __future__ import annotations

from brainmigrate.shapes import one_line, plural


def export_summary(result, fmt: str, output: str) -> list[str]:
    """Lines for stderr after an export (``exports.ExportResult`` of format ``fmt`` to
    ``output``): the counts of facts and files (not when the jsonl went to stdout), the
    memory budgets, notes, other files left alone, facts left out by ``--fit`` and those
    the target cannot hold (``exports.refusal`` names each)."""
    from brainmigrate.exports import refusal

    lines: list[str] = []
    files = f"{plural(len(result.files), 'file')}, " if fmt != "jsonl" else ""
    if result.text is None:
        lines.append(
            f"exported {plural(result.facts - len(result.left_out) - len(result.refused), 'fact')}"
            f" to {output} as {fmt}: "
            f"{files}{len(result.written)} written, "
            f"{len(result.files) - len(result.written)} unchanged"
        )
    if result.sizes:
        s = result.sizes
        lines.append(
            f"  MEMORY.md {s['index']} of {s['index_budget']} bytes; "
            f"all files {s['total']} of {s['total_budget']} bytes"
        )
    lines += [f"  note: {note}" for note in result.notes]
    if result.others:
        lines.append(f"  left alone: {plural(len(result.others), 'other file')} in {output}")
    if result.left_out:
        lines.append(f"  left out by --fit: {plural(len(result.left_out), 'fact')}")
        lines += [
            f"    {e['id']} {e['kind']} {e['scope']} {e['status']} ({e['bytes']} bytes)"
            for e in result.left_out
        ]
    if result.refused:
        refused = plural(len(result.refused), "fact")
        lines.append(f"  left out, {fmt} cannot hold them as they are: {refused}")
        lines += [f"    {refusal(e)}" for e in result.refused]
    return lines


def verify_lines(result) -> list[str]:
    """Lines for stdout after ``verify`` (``stale.VerifyResult``): each fact verified with
    its count of anchors fingerprinted, then each fact refused with the reason."""
    lines = [
        f"k{fid} verified: {plural(len(anchors), 'anchor')} fingerprinted"
        for fid, anchors in result.verified.items()
    ]
    lines += [f"k{fid} refused: {reason}" for fid, reason in result.refused.items()]
    return [one_line(line) for line in lines]  # a path in a reason forges no line


def verify_counts(result) -> str:
    """The line for stderr after ``verify``: how many facts were verified and refused."""
    return f"verified {len(result.verified)}, refused {len(result.refused)}"
