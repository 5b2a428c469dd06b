"""What ``check --fix`` and ``--diff`` print (docs/check.md, "Fixing moved paths"): a line
per fix and per citation left, the count line, and the unified diff of ``--diff``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from brainmigrate.escapes import diff_name
from brainmigrate.fix import FileEdit, Fix, FixResult, Left, split_lines
from brainmigrate.fsutil import printable
from brainmigrate.shapes import one_line, plural

#: How each kind of fix was found, as its line says (``Fix.how``).
HOW = {
    "git-rename": "renamed in git history",
    "same-content": "the only file of that name, content unchanged in git",
    "same-name": "the only file of that name (unsafe: content not compared)",
    "same-files": "the only folder of that name, holding every file the old one held in git",
    "same-folder": "the only folder of that name (unsafe: its files not compared)",
}


def unified_diff(edits: Sequence[FileEdit], context: int = 3) -> bytes:
    """A unified diff of ``edits`` that ``patch -p1`` applies in the current folder:
    ``a/`` and ``b/`` names relative to it, quoted as git quotes them (``_header``: a name
    with a line break forges no header or hunk), lines compared and shown as bytes (CRLF, a
    BOM and invalid bytes as they are), ``\\ No newline at end of file`` where due.

    A fix rewrites text inside lines, never a line end: the lines are compared one for
    one, in linear time (``difflib`` matches many equal lines in quadratic time or
    worse); hunks are grouped with ``context`` lines as ``difflib`` groups them."""
    out: list[bytes] = []
    for edit in edits:
        a, b = split_lines(edit.before), split_lines(edit.after)
        name = Path(os.path.relpath(edit.path)).as_posix()
        out.append(_header(b"--- ", b"a/", name) + _header(b"+++ ", b"b/", name))
        for group in _groups(_opcodes(a, b), context):
            first, last = group[0], group[-1]
            out.append(
                f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@\n".encode()
            )
            for tag, i1, i2, j1, j2 in group:
                if tag == "equal":
                    out.extend(_diff_line(b" ", x) for x in a[i1:i2])
                    continue
                out.extend(_diff_line(b"-", x) for x in a[i1:i2])
                out.extend(_diff_line(b"+", x) for x in b[j1:j2])
    return b"".join(out)


def _header(sign: bytes, prefix: bytes, name: str) -> bytes:
    """A ``---``/``+++`` line as git writes it: the name quoted by git's rules
    (``escapes.diff_name``), and a tab after a name with a space in it, so ``patch`` reads
    the name up to the tab and no further."""
    label = diff_name(prefix, os.fsencode(name))
    return sign + label + (b"\t" if b" " in label else b"") + b"\n"


Opcode = tuple[str, int, int, int, int]


def _opcodes(a: list[bytes], b: list[bytes]) -> list[Opcode]:
    """``difflib``'s opcodes of ``a`` to ``b``: ``equal`` and ``replace`` runs of lines
    compared one for one when both hold as many lines (every fix); else ``difflib``'s."""
    if len(a) != len(b):
        from difflib import SequenceMatcher

        return SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    codes: list[Opcode] = []
    start = 0
    for i in range(1, len(a) + 1):
        if i == len(a) or (a[i] == b[i]) != (a[start] == b[start]):
            codes.append(("equal" if a[start] == b[start] else "replace", start, i, start, i))
            start = i
    return codes


def _groups(codes: list[Opcode], n: int) -> list[list[Opcode]]:
    """The hunks of ``codes`` with ``n`` lines of context, as
    ``difflib.SequenceMatcher.get_grouped_opcodes`` makes them."""
    if not codes:
        codes = [("equal", 0, 1, 0, 1)]
    if codes[0][0] == "equal":
        tag, i1, i2, j1, j2 = codes[0]
        codes[0] = tag, max(i1, i2 - n), i2, max(j1, j2 - n), j2
    if codes[-1][0] == "equal":
        tag, i1, i2, j1, j2 = codes[-1]
        codes[-1] = tag, i1, min(i2, i1 + n), j1, min(j2, j1 + n)
    groups: list[list[Opcode]] = []
    group: list[Opcode] = []
    for tag, i1, i2, j1, j2 in codes:
        if tag == "equal" and i2 - i1 > n + n:  # a long run without changes ends a hunk
            group.append((tag, i1, min(i2, i1 + n), j1, min(j2, j1 + n)))
            groups.append(group)
            group = []
            i1, j1 = max(i1, i2 - n), max(j1, j2 - n)
        group.append((tag, i1, i2, j1, j2))
    if group and not (len(group) == 1 and group[0][0] == "equal"):
        groups.append(group)
    return groups


def _diff_line(sign: bytes, line: bytes) -> bytes:
    if line.endswith(b"\n"):
        return sign + line
    return sign + line + b"\n\\ No newline at end of file\n"


def _range(start: int, stop: int) -> str:
    length = stop - start
    if length == 1:
        return f"{start + 1}"
    return f"{start + 1 if length else start},{length}"


def describe(fix: Fix) -> str:
    """``file:line:col: fixed OLD -> NEW (how)``, for the summary on stderr."""
    return f"{fix.file}:{fix.line}:{fix.col}: {fix.old} -> {fix.new} ({HOW[fix.how]})"


def describe_left(left: Left) -> str:
    """``file:line:col: left PATH: why``."""
    return f"{left.file}:{left.line}:{left.col}: left {printable(left.path)}: {left.reason}"


def summary(
    result: FixResult, *, diff: bool, quiet: bool = False, listed: bool = True
) -> list[str]:
    """Lines for stderr: each fix (when ``listed``) and each citation left (not when
    ``quiet``), the file notes, then one count line (not when ``quiet``); each
    ``shapes.one_line``."""
    out = [one_line(describe(f)) for f in result.fixes] if listed and not quiet else []
    out += [] if quiet else [one_line(describe_left(left)) for left in result.left]
    out += [one_line(f"brainmigrate: note: {n}") for n in result.notes]
    if quiet:  # -q: the findings left are the report (ruff's -q)
        return out
    files = len({f.file for f in result.fixes})
    verb = "Would fix" if diff else "Fixed"
    out.append(
        f"{verb} {plural(len(result.fixes), 'citation')} in {plural(files, 'file')};"
        f" {len(result.left)} left"
    )
    return out


def listing(fixes: Sequence[Fix], *, done: bool) -> list[str]:
    """``--show-fixes``: ``Fixed N citations in M files:`` (``Would fix`` when not
    ``done``), then per file ``- FILE:`` and a line ``LINE:COL: OLD -> NEW (how)`` per
    fix, in file, line and column order; nothing when there are no ``fixes``."""
    if not fixes:
        return []
    by_file: dict[str, list[Fix]] = {}
    for f in sorted(fixes, key=lambda f: (f.file, f.line, f.col)):
        by_file.setdefault(f.file, []).append(f)
    n, files = len(fixes), len(by_file)
    out = [
        f"{'Fixed' if done else 'Would fix'} {plural(n, 'citation')} in {plural(files, 'file')}:"
    ]
    for name, items in by_file.items():
        out.append(one_line(f"- {name}:"))
        out += [one_line(f"    {f.line}:{f.col}: {f.old} -> {f.new} ({HOW[f.how]})") for f in items]
    return out
