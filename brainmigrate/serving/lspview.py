"""What a checked notes buffer (``notesview.View``) is in the protocol's terms, for
``serving.lsp``: its lines and positions (``Buffer``: 0-based lines, columns in the code
units agreed), its diagnostics, code actions and hovers.
"""

from __future__ import annotations

import re

from lsprotocol import types

from brainmigrate.rules import HINT_HOW
from brainmigrate.serving.notesview import View, ignore_edit, unused_edit

#: LSP severities by finding severity.
SEVERITY = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "info": types.DiagnosticSeverity.Information,
}

#: The protocol's diagnostic, made of a finding (its severity is the finding's, by
#: ``SEVERITY``), not ``model.Diagnostic``, whose severity only ``codes`` sets.
lsp_diagnostic = types.Diagnostic


#: A line break by the protocol's rule: ``\n``, ``\r\n`` or ``\r``, nothing else.
LINE_BREAK = re.compile(r"\r\n|\r|\n")


def changed(text: str, change: types.TextDocumentContentChangePartial, codec=None) -> str:
    """``text`` with the incremental ``change`` made, its range read by the protocol's
    rule (lines end at ``LINE_BREAK`` only, columns in the agreed code units: ``codec``,
    None for UTF-16; a position past a line's end is its end, past the last line the
    text's end). pygls places such a change by ``str.splitlines``, which also ends lines
    at U+2028, U+000C, U+0085 …, where the editor does not."""
    starts = [0] + [m.end() for m in LINE_BREAK.finditer(text)]
    units = Buffer("", codec).units

    def offset(p: types.Position) -> int:
        if p.line >= len(starts):
            return len(text)
        begin = starts[p.line]
        end = starts[p.line + 1] if p.line + 1 < len(starts) else len(text)
        line, count = text[begin:end].rstrip("\r\n"), 0
        for i, ch in enumerate(line):
            if count >= p.character:
                return begin + i
            count += units(ch)
        return begin + len(line)

    start, end = offset(change.range.start), offset(change.range.end)
    return text[:start] + change.text + text[max(start, end) :]


class Buffer:
    """A document's lines (``\n``-split, a line's ``\r`` dropped) and the position
    encoding the client and the server agreed on (pygls' ``PositionCodec``; None:
    UTF-16, the protocol's default)."""

    def __init__(self, text: str, codec=None) -> None:
        self.lines = [ln.removesuffix("\r") for ln in text.split("\n")]
        self.codec = codec

    def line(self, number: int) -> str:
        """1-based line ``number``, or "" past the end."""
        return self.lines[number - 1] if 0 < number <= len(self.lines) else ""

    def units(self, text: str) -> int:
        if self.codec is not None:
            return self.codec.client_num_units(text)
        return len(text.encode("utf-16-le")) // 2

    def range(self, line: int, col: int, end: int) -> types.Range:
        """The LSP range of 1-based ``line``, code-point columns ``col`` to ``end``
        (1-based, ``end`` excluded)."""
        text = self.line(line)
        return types.Range(
            start=types.Position(line=line - 1, character=self.units(text[: col - 1])),
            end=types.Position(line=line - 1, character=self.units(text[: end - 1])),
        )

    def column(self, position: types.Position) -> int:
        """The 1-based code-point column of an LSP ``position``."""
        text, units = self.line(position.line + 1), 0
        for i, ch in enumerate(text):
            if units >= position.character:
                return i + 1
            units += self.units(ch)
        return len(text) + 1


def diagnostic_of(view: View, f, lines: Buffer) -> types.Diagnostic:
    """The LSP diagnostic of finding ``f``: its line and column, to the end of what it is
    about (else the end of its line; a finding of no line is at 0:0). The message is the
    one ``check`` prints (``Finding.full_message``: with its "moved?" hint); one the
    baseline holds is Information, tagged `` [baseline]`` as ``check`` tags it."""
    message = f.full_message
    severity = SEVERITY.get(f.severity, types.DiagnosticSeverity.Information)
    if f.baselined:
        message, severity = f"{message} [baseline]", types.DiagnosticSeverity.Information
    if not f.line:
        where = types.Range(start=types.Position(0, 0), end=types.Position(0, 0))
    else:
        text = lines.line(f.line)
        col = f.col or 1
        end = view.end_of(f) or len(text) + 1
        where = lines.range(f.line, col, max(end, col))
    return lsp_diagnostic(
        range=where,
        message=message,
        severity=severity,
        code=f.code,
        source="brainmigrate",
    )


def diagnostics(view: View, lines: Buffer) -> list[types.Diagnostic]:
    """The diagnostics of ``view``: one per finding; a buffer that could not be checked
    has one error at 0:0 giving the reason."""
    if view.error is not None:
        at = types.Range(start=types.Position(0, 0), end=types.Position(0, 0))
        return [
            lsp_diagnostic(
                range=at,
                message=view.error,
                severity=types.DiagnosticSeverity.Error,
                source="brainmigrate",
            )
        ]
    return [diagnostic_of(view, f, lines) for f in view.findings]


def code_actions(view: View, uri: str, lines: Buffer, first: int, last: int) -> list:
    """The quick fixes of the findings on 0-based lines ``first`` to ``last``: the edit
    ``--fix`` makes of a fixable one; for an unused suppression (BM401) "Remove the unused
    suppression"; and per line "Ignore CODE on this line" once per code of the findings on
    a fact's line, with one "Ignore CODE, CODE on this line" more when there are several
    (``notesview.ignore_edit``, ``notesview.unused_edit``)."""
    fixes: dict[int, list[types.CodeAction]] = {}
    waivable: dict[int, dict[str, list]] = {}
    unused: dict[int, set[str]] = {}
    for f in view.findings:
        if not f.line or not first <= f.line - 1 <= last:
            continue
        diag = diagnostic_of(view, f, lines)
        made = fixes.setdefault(f.line, [])
        fix = view.fixes.get((f.line, f.col))
        if fix is not None:
            edit = types.TextEdit(range=lines.range(fix.line, fix.col, fix.col + len(fix.old)),
                                  new_text=fix.new)  # fmt: skip
            made.append(_action(f"Replace {fix.old} with {fix.new} ({fix.how})", uri, edit, diag))
        if f.code == "BM401":
            made.extend(_unused_action(f, uri, lines, diag))
            if f.subject.lower().startswith("ignore "):
                unused.setdefault(f.line, set()).add(f.subject.split()[-1].upper())
        elif f.fact_line is not None:
            waivable.setdefault(f.line, {}).setdefault(f.code, []).append(diag)
    out: list[types.CodeAction] = []
    for line, made in sorted(fixes.items()):
        waive = _ignore_actions(line, waivable.get(line, {}), uri, lines, unused.get(line, ()))
        out += made + waive
    return out


def _unused_action(f, uri: str, lines: Buffer, diag) -> list[types.CodeAction]:
    """ "Remove the unused suppression" of BM401 ``f``: on the fact's line or, for a fact
    of several lines, the first of them whose trailer holds it."""
    number = f.line
    while True:
        text = lines.line(number)
        cut = unused_edit(text, f.subject)
        if cut is not None:
            start, end, new = cut
            edit = types.TextEdit(range=lines.range(number, start + 1, end + 1), new_text=new)
            title = f"Remove the unused suppression '{f.subject}'"
            return [_action(title, uri, edit, diag)]
        number += 1
        if number > len(lines.lines) or not lines.line(number).strip():
            return []
        if lines.line(number).lstrip().startswith(("- ", "+ ", "* ")):
            return []


def _ignore_actions(line: int, codes: dict, uri: str, lines: Buffer, unused=()) -> list:
    """ "Ignore CODE on this line" once per code of ``codes`` (code: its diagnostics), and
    one "Ignore CODE, CODE on this line" of them all when there are several; the codes of
    the line's suppression that a BM401 says are ``unused`` are dropped from it (kept, the
    edit would leave that BM401)."""
    text, out = lines.line(line), []
    groups = [[code] for code in codes]
    if len(codes) > 1:
        groups.append(list(codes))
    for group in groups:
        waive = ignore_edit(text, group, drop=unused)
        if waive is None:
            continue
        start, end, new = waive
        edit = types.TextEdit(range=lines.range(line, start + 1, end + 1), new_text=new)
        diags = [d for code in group for d in codes[code]]
        title = f"Ignore {', '.join(group)} on this line"
        out.append(_action(title, uri, edit, diags, preferred=False))
    return out


def _action(title, uri, edit, diag, preferred: bool = True) -> types.CodeAction:
    return types.CodeAction(
        title=title,
        kind=types.CodeActionKind.QuickFix,
        diagnostics=diag if isinstance(diag, list) else [diag],
        is_preferred=preferred,
        edit=types.WorkspaceEdit(changes={uri: [edit]}),
    )


def hover_text(spot) -> str:
    """The hover of a citation (Markdown): what it resolved to or its state."""
    a = spot.anchor
    if a is not None and spot.state != "anchor":  # the file is there, the place is not
        return f"**{spot.text}**: {spot.reason}\n\nfile `{a.path}`, root `{a.root}`"
    if a is not None and a.kind == "symbol":
        lines = f", lines {a.lines[0]}-{a.lines[1]}" if a.lines else ""
        return (
            f"**{spot.text}**: anchor, declaration `{a.symbol}` in `{a.path}`{lines}\n\n"
            f"root `{a.root}`"
        )
    if a is not None:
        lines = ""
        if spot.lines:
            first, last = spot.lines
            lines = f", line {first}" if first == last else f", lines {first}-{last}"
        return f"**{spot.text}**: anchor, {a.kind} `{a.path}`{lines}\n\nroot `{a.root}`"
    said = {
        "gone": "gone: no root holds it",
        "outside": f"outside every root ({spot.reason})",
        "unresolved": "unresolved: nothing of it is in any root",
        "ignored": "ignored: git ignores it (a runtime or build file)",
        "ambiguous": "ambiguous: " + ", ".join(f"`{c}`" for c in spot.candidates[:5]),
    }.get(spot.state, spot.state)
    text = f"**{spot.text}**: {said}"
    if spot.hint is not None:
        text += f"\n\nmoved? `{spot.hint.path}` ({HINT_HOW[spot.hint.how]})"
    return text
