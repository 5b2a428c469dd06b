"""``brainmigrate check --fix`` and ``--diff``: rewrite the citations of files that moved
(docs/check.md, "Fixing moved paths").

A gone citation (BM101) is rewritten only when its new place is certain
(``certain_move``): git's history renamed the path (``hints.MoveHints``, followed through
later renames), or, failing git, the first root holds exactly one file of that name and
git says its content is what the old path last held. ``unsafe`` drops that content proof;
the "closest path" guess is never applied.

The rewrite works on the bytes of each line: the path's characters, found at the
citation's line and column (code points of the line as ``check`` decoded it), are replaced
by the new path written in the same form (``rewritten``); every other byte of the file
stays. Files are written atomically with their mode kept, only when their bytes changed,
and never when they changed on disk since they were read.
"""

from __future__ import annotations

import dataclasses
import errno
import os
import posixpath
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote, unquote

from brainmigrate import check, importer, inputs, line_edits, rules
from brainmigrate.folder_moves import certain_folder_move, is_folder_text, names_folder
from brainmigrate.fsutil import shown
from brainmigrate.git import last_held, run_git
from brainmigrate.hints import Move, MoveHints
from brainmigrate.line_edits import split_lines
from brainmigrate.moved_lines import shifted
from brainmigrate.paths import PathResolver
from brainmigrate.read.files import notes_files, select_files
from brainmigrate.read.lines import WIDE_BOMS
from brainmigrate.read.run import ImportOptions
from brainmigrate.read.tokens import Token, link_path, path_like
from brainmigrate.rewrites import Given, link_out, read_only, rewrite
from brainmigrate.roots import Root, is_absolute, normalize
from brainmigrate.writers import folder_below

#: The largest notes file ``--fix`` and ``--diff`` rewrite (each is read whole, with its
#: lines and their edits: a few times its size in memory).
FIX_MAX = 64 << 20
_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")
#: Characters a percent-escaped path keeps as they are (RFC 3986 ``pchar`` and ``/``).
_SAFE = "/-._~!$&'()*+,;=:@"


@dataclass(frozen=True, slots=True)
class Fix:
    """A citation rewritten (or, with ``--diff``, to be): at ``file:line:col``, ``old``
    as written becomes ``new``; ``how`` the new place is known (``git-rename``,
    ``same-content``, ``same-name``)."""

    file: str
    line: int
    col: int
    old: str
    new: str
    how: str


@dataclass(frozen=True, slots=True)
class Left:
    """A gone citation left as it is, at ``file:line:col``, and why."""

    file: str
    line: int
    col: int
    path: str
    reason: str


@dataclass(frozen=True, slots=True)
class FileEdit:
    """A notes file's bytes ``before`` and ``after`` its fixes; ``path`` is the file to
    write (symlinks resolved), ``display`` its name in reports."""

    display: str
    path: str
    before: bytes
    after: bytes


@dataclass
class FixResult:
    """What ``plan_fixes``/``run_fix`` did: ``fixes`` applied (or planned), ``left`` gone
    citations not fixed, ``edits`` per changed file, ``notes`` file-level messages (a file
    left alone), ``written`` the files written, ``check`` the check run after writing."""

    fixes: list[Fix] = field(default_factory=list)
    left: list[Left] = field(default_factory=list)
    edits: list[FileEdit] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    written: list[str] = field(default_factory=list)
    check: check.CheckResult | None = None


# ------------------------------------------------------------------------------ running


def run_fix(
    paths: Sequence[str | os.PathLike],
    options: ImportOptions,
    fail_on: str = "error",
    *,
    write: bool,
    unsafe: bool = False,
    baseline: str | os.PathLike | None = None,
    update_baseline: bool = False,
    exclude: Sequence[str] = (),
    select: rules.Selection | None = None,
    baseline_folder: str | os.PathLike | None = None,
    file_ignores: Sequence = (),
) -> FixResult:
    """Check ``paths``, plan the fixes of their gone citations, and with ``write`` apply
    them and check again (``FixResult.check``, whose exit code is what remains).

    Only files whose real path lies under one of ``paths`` as they were when the run
    started are written (``apply``). Without ``write`` nothing is written (``--diff``).
    Arguments as ``check.run_check``;
    the baseline is read (and with ``update_baseline`` written) only by the check after
    the fixes. Raises what ``check.run_check`` raises.
    """
    given = Given(paths if write else ())  # the PATHS as they are now, before any work
    try:
        first = check.run_check(
            paths, options, fail_on, exclude=exclude, select=select, file_ignores=file_ignores
        )
        result, files = _planned(first.findings, paths, options, exclude, unsafe)
        if write:
            apply(result, given, files)
            result.check = check.run_check(
                paths,
                options,
                fail_on,
                baseline=baseline,
                update_baseline=update_baseline,
                exclude=exclude,
                select=select,
                baseline_folder=baseline_folder,
                file_ignores=file_ignores,
            )
    finally:
        given.close()
    return result


def _planned(findings, paths, options: ImportOptions, exclude, unsafe: bool):
    """``(plan_fixes of findings, the notes files by display name)``, as ``run_fix``
    plans them."""
    roots = importer.make_roots(options.roots)
    kept, _ = select_files(paths, exclude, options.names, options.files)
    files = dict(notes_files(kept, names=options.names, rules=options.files))
    hints = MoveHints(roots, options.cache_dir)
    cache = importer.cache_folder(options.cache_dir)
    return plan_fixes(findings, files, roots, hints, unsafe=unsafe, cache_dir=cache), files


def fixable(
    result: check.CheckResult,
    paths: Sequence[str | os.PathLike],
    options: ImportOptions,
    exclude: Sequence[str] = (),
) -> check.CheckResult:
    """``result`` with ``fixes``: the edit ``--fix`` would make of each finding it fixes,
    keyed by the finding's ``(file, line, col)`` (``Fix``), made by the planner ``--fix``
    and ``--diff`` use (``plan_fixes``), so a finding is marked fixable exactly when
    ``--fix`` fixes it. Writes nothing; ``result`` itself when no finding is a gone
    citation (nothing is planned, git is not asked)."""
    if not any(code == "BM101" and not s for code, _, s, _ in result.tally().counts()):
        return result
    planned, _ = _planned(result.findings, paths, options, exclude, unsafe=False)
    kept = _writable(planned.edits, paths)  # the files --fix would write, no others
    fixes = {(f.file, f.line, f.col): f for f in planned.fixes if f.file in kept}
    return dataclasses.replace(result, fixes=fixes)


def _writable(edits: Sequence[FileEdit], paths: Sequence[str | os.PathLike]) -> set[str]:
    """The display names of the edited files ``write_edits`` would write: under one of the
    PATHS (a symlink leading out is left alone) and not read-only."""
    bases = Given(paths)
    try:
        out = set()
        for e in edits:
            try:
                mode = os.stat(e.path).st_mode
            except OSError:
                continue
            if bases.holding(e.path) is not None and not read_only(None, e.path, mode):
                out.add(e.display)
        return out
    finally:
        bases.close()


def plan_fixes(
    findings: Sequence[rules.Finding],
    files: dict[str, Path],
    roots: Sequence[Root],
    hints: MoveHints,
    *,
    unsafe: bool = False,
    cache_dir: str | os.PathLike | None = None,
) -> FixResult:
    """The fixes of the gone citations (BM101, not suppressed) among ``findings``:
    ``files`` maps a finding's file (display name) to the notes file. Reads the notes
    files and git (each root's history from ``cache_dir`` when the check kept it there);
    writes nothing."""
    out = FixResult()
    resolver = PathResolver(roots, cache_dir=cache_dir)
    by_file: dict[str, list[rules.Finding]] = {}
    for f in findings:
        if f.code == "BM101" and not f.suppressed and f.line is not None and f.col is not None:
            by_file.setdefault(f.file, []).append(f)
    for display, found in by_file.items():
        path = files.get(display)
        if path is None:  # pragma: no cover - every finding's file is a notes file read
            continue
        _plan_file(display, path, found, resolver, hints, unsafe, out)
    return out


def _plan_file(display, path, found, resolver, hints, unsafe, out: FixResult) -> None:
    def leave(f: rules.Finding, reason: str) -> None:
        out.left.append(Left(display, f.line, f.col, f.subject, reason))

    real = os.path.realpath(path)
    from brainmigrate.sources.detect import json_store

    if json_store(real):  # its lines are JSON, not notes: a rewrite could break them
        for f in found:
            leave(f, "a JSON store file is not rewritten; fix its line by hand")
        return
    try:
        before = inputs.read_bounded(real, FIX_MAX, "a notes file --fix rewrites")
    except inputs.TooLarge as exc:
        out.notes.append(f"{display}: {exc.strerror}; left alone (fix it by hand)")
        for f in found:
            leave(f, "the notes file is too large to rewrite")
        return
    except OSError as exc:
        out.notes.append(f"{display}: cannot read it ({exc.strerror or exc}); left alone")
        for f in found:
            leave(f, "the notes file cannot be read")
        return
    if any(before.startswith(bom) for bom, _, _ in WIDE_BOMS):
        out.notes.append(
            f"{display}: UTF-16 or UTF-32 notes are not rewritten; save it as UTF-8 to fix it"
        )
        for f in found:
            leave(f, "the notes file is not UTF-8")
        return
    lines = split_lines(before)
    by_line: dict[int, list[rules.Finding]] = {}
    for f in line_edits.at_definitions(found, lines):
        by_line.setdefault(f.line, []).append(f)
    where = _Where(display, os.path.dirname(real), resolver, hints, unsafe, {})
    for number, on_line in by_line.items():
        if number > len(lines):
            for f in on_line:
                leave(f, "the notes file changed since it was read")
            continue
        lines[number - 1] = _plan_line(lines[number - 1], number, on_line, where, out)
    after = b"".join(lines)
    if after != before:
        out.edits.append(FileEdit(display, real, before, after))


@dataclass(frozen=True, slots=True)
class _Where:
    """What planning a notes file's lines shares: its display name and folder, the
    resolver, the move hints, ``unsafe``, and ``read`` the moved files' bytes read so far
    (``moved_lines.shifted``)."""

    display: str
    folder: str
    resolver: PathResolver
    hints: MoveHints
    unsafe: bool
    read: dict


#: The longest line form ``moved_lines.line_form`` reads after a path (``:123456789-
#: 123456789`` and the character it looks at after it), with room to spare.
_LINE_FORM_SPAN = 32


def _plan_line(raw: bytes, number: int, found, where: _Where, out: FixResult) -> bytes:
    """Plan the fixes of ``found`` (the findings of line ``number``, in order) on the line
    ``raw``; returns the line's bytes with them. The line is decoded and read into tokens
    once, and its rewrites read back together (``line_edits.reading_back``): linear in
    the line's length however many citations it holds."""
    content, lead = line_edits.content(raw, number)
    text, offsets = line_edits.decode(content)
    at_col = line_edits.tokens_by_col(text, number)
    plans: list[tuple[Token, tuple[str, str, Move]] | str] = []
    for f in found:
        tok = line_edits.token_at(at_col.get(f.col, ()), f.subject)
        if tok is None:
            plans.append("the notes file changed since it was read")
            continue
        p = _replacement(f.subject, tok, where.folder, where.resolver, where.hints, where.unsafe)
        plans.append(p if isinstance(p, str) else (tok, p))
    rewrites = [
        (f.col - 1, f.col - 1 + len(p[0].text), p[1][0])
        for f, p in zip(found, plans, strict=True)
        if not isinstance(p, str)
    ]
    kept = line_edits.reading_back(text, number, rewrites)
    edits: list[tuple[int, int, bytes]] = []
    index = -1  # of the finding's rewrite in rewrites
    for f, p in zip(found, plans, strict=True):
        index += not isinstance(p, str)
        if isinstance(p, str) or index not in kept:
            reason = p if isinstance(p, str) else _kept_out(p[1][0])
            out.left.append(Left(where.display, f.line, f.col, f.subject, reason))
            continue
        (tok, (new, how, target)), start = p, f.col - 1
        end = start + len(tok.text)
        a, b = offsets[start], offsets[end]
        edits.append((lead + a, lead + b, new.encode("utf-8")))
        old_text = tok.text
        lines_now = None
        if target.kind != "folder":
            after = text[end : end + _LINE_FORM_SPAN]
            lines_now = shifted(after, target.root, target.old, target.path, where.read)
        if lines_now is not None:  # the cited lines stand elsewhere in the moved file
            length, form = lines_now
            edits.append((lead + b, lead + offsets[end + length], form.encode("utf-8")))
            old_text, new = tok.text + text[end : end + length], new + form
        out.fixes.append(Fix(where.display, f.line, f.col, old_text, new, how))
    return line_edits.edited(raw, edits)


def _kept_out(new: str) -> str:
    """Why a rewrite to ``new`` that would not read back is left."""
    return (
        f"its new place {new} cannot stand in a citation (a line break, tab or"
        " space would cut it); edit the note by hand"
    )


def _replacement(
    subject: str, tok: Token, folder: str, resolver: PathResolver, hints, unsafe: bool
) -> tuple[str, str, Move] | str:
    """``(new text, how, move)`` for the citation ``tok`` of the gone path ``subject`` in a notes
    file in ``folder``, or the reason it is left. Read as ``check`` reads it: relative to
    the roots, and a Markdown link target also relative to the notes file's folder. A
    citation written with a trailing ``/`` is a folder: only a folder's move applies."""
    if is_folder_text(tok.text) and not subject.endswith("/"):
        subject += "/"
    readings: list[tuple[str, str | None]] = [(subject, None)]
    if tok.link and not is_absolute(subject):
        base = next((b for r in resolver.roots if (b := r.relative(folder)) is not None), None)
        beside = normalize(f"{base}/{subject}" if base else subject) if base is not None else None
        if beside and beside != subject:
            readings.append((beside, base))
    reason = None
    for cited, base in readings:
        move = certain_move(cited, hints, unsafe)
        if isinstance(move, str):
            reason = reason or move
            continue
        target, how = move
        if base is None:
            new = rewritten(tok.text, target.old, target.path)
        else:
            new = _beside(tok.text, base, target.path)
        if new is None:
            reason = f"written in a form --fix does not rewrite; it moved to {target.path}"
        elif target.kind == "folder":
            if is_folder_text(tok.text) and not is_folder_text(new):
                new += "\\" if "\\" in tok.text else "/"  # a folder stays written as one
            if names_folder(new, tok.link, folder, target):
                return new, how, target
            reason = f"{new} would not name {target.path}/ in the root it was found in"
        elif not _names(resolver, new, tok.link, folder, target):
            reason = f"{new} would not name {target.path} in the root it was found in"
        else:
            return new, how, target
    return reason or "no new place is known"


def _beside(written: str, base: str, new: str) -> str:
    """``new`` (root-relative) as a link relative to the notes folder ``base`` (also
    root-relative) writes it: ``./``, ``\\`` and percent escapes kept as in ``written``."""
    rel = posixpath.relpath(new, base or ".")
    unified = written.replace("\\", "/")
    if unified.startswith("./") and not rel.startswith("../"):
        rel = "./" + rel
    if _PERCENT.search(written):
        rel = quote(rel, safe=_SAFE)
    return rel.replace("/", "\\") if "\\" in written else rel


def _names(resolver: PathResolver, new: str, link: bool, folder: str, target) -> bool:
    """Whether ``check`` reads the citation ``new`` as the file ``target`` names: in the
    roots and the readings relative to the notes ``folder`` (``PathResolver.resolve``)."""
    cited = link_path(new) if link else path_like(new)
    if cited is None:
        return False
    near = link or cited.startswith(("./", "../"))
    hit = resolver.resolve(cited, folder, near=near, link=link)
    if hit is None or hit[0] != "found":
        return False
    return hit[1] == target.root.index and _same(hit[2], target.path)


def certain_move(subject: str, hints: MoveHints, unsafe: bool) -> tuple[Move, str] | str:
    """``(move, how)`` for the gone path ``subject`` when its new place is certain, else
    the reason it is not: a git rename; one file of the same name whose content git says
    the old path last held (``same-content``); with ``unsafe``, one file of the same name
    (``same-name``). A path with ``%XX`` escapes is also tried percent-decoded.

    A folder (``subject`` ending in ``/``, or one git held files under) is certain when
    git renamed every file it last held into one other folder (``git-rename``), or the
    first root's only other folder of its name holds every one of them at the same path
    (``same-files``); with ``unsafe``, the only folder of its name (``same-folder``)."""
    tries = [subject]
    if _PERCENT.search(subject) and unquote(subject) != subject:
        tries.append(unquote(subject))
    reason = "no new place is known"
    for cited in tries:
        move = hints.locate(cited, similar=False)
        if move is None:
            continue
        if move.how == "git-rename":
            return move, "git-rename"
        if move.kind == "folder":
            certain = certain_folder_move(move, unsafe)
            if isinstance(certain, str):
                reason = certain
                continue
            return certain
        if same_content(move.root, move.old, move.path):
            return move, "same-content"
        if unsafe:
            return move, "same-name"
        reason = (
            f"the only file of that name is {move.path}, but git does not show it holds"
            " what the old path held (--unsafe-fixes applies it)"
        )
    return reason


def same_content(root: Root, old: str, new: str) -> bool:
    """Whether the file ``new`` (relative to ``root``) holds, as git stores it, what the
    path ``old`` last held in the history of ``root``'s checkout: in ``HEAD``, else in the
    parent of the last commit that touched it (the one that deleted it). False outside
    git."""
    rev = last_held(root.path, old)
    held = run_git(root.path, "rev-parse", "--verify", "-q", f"{rev}:./{old}") if rev else None
    if not held:
        return False
    now = run_git(root.path, "hash-object", "--", new)
    return now is not None and now.strip() == held.strip()


def rewritten(written: str, old: str, new: str) -> str | None:
    """The citation ``written`` with its tail naming ``old`` (root-relative) replaced by
    ``new``, in the same form: what stands before the tail (``./``, an absolute root, a
    ``~`` folder) stays, ``\\`` separators stay ``\\``, a percent-escaped tail is escaped
    again; a trailing ``/`` (a folder) stays. None when no tail of ``written`` names
    ``old``."""
    core = written.rstrip("/\\") or written
    end = written[len(core) :]
    written = core
    unified = written.replace("\\", "/")
    old_nfc = unicodedata.normalize("NFC", old)
    for i in [0, *(k + 1 for k, c in enumerate(unified) if c == "/")]:
        tail = unified[i:]
        if unicodedata.normalize("NFC", tail) == old_nfc:
            repl = new
        elif "%" in tail and unicodedata.normalize("NFC", unquote(tail)) == old_nfc:
            repl = quote(new, safe=_SAFE)
        else:
            continue
        if "\\" in written[i:] or ("/" not in written[i:] and "\\" in written):
            repl = repl.replace("/", "\\")
        return written[:i] + repl + end
    return None


def apply(
    result: FixResult,
    given: Sequence[str | os.PathLike] | None = None,
    listed: dict[str, Path] | None = None,
) -> None:
    """Write each edited file (``rewrites.rewrite``: locked, read again right before it is
    replaced, mode, owner and hard links kept, a read-only file refused), only when its
    real path lies under one of the PATHS ``given`` (a PATH that is a file counts as
    itself; resolved when this is called, so ``run_fix`` calls it with the PATHS as they
    were at its start through ``Given``); ``listed`` maps an edit's display name to the
    path it was listed by, for the note that names a symlink leading out. Without
    ``given``, each file's own folder is where it may be written. A file left alone moves
    its fixes to ``left``, with a note."""
    bases = given if isinstance(given, Given) else Given(given)
    for edit in result.edits:
        found = bases.holding(edit.path)
        if found is None:
            listed_as = (listed or {}).get(edit.display, Path(edit.display))
            link, leads = link_out(listed_as, edit.path)
            what = "a symlink" if link == os.fspath(listed_as) else f"{shown(link)} is a symlink"
            result.notes.append(
                f"{shown(edit.display)}: {what} to {shown(leads)}, outside the paths given;"
                " left alone (replace the symlink by the file, or pass its target as a PATH)"
            )
            _undo(result, edit, None, "leads outside the paths given")
            continue
        try:
            with folder_below(*found, os.path.dirname(edit.path)) as fd:
                why = rewrite(
                    fd, os.path.basename(edit.path), edit.before, edit.after, shown(edit.display)
                )
        except OSError as exc:
            swapped = exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.ENOENT, errno.EXDEV)
            why = (
                "its folder changed since it was read (a symlink or no folder there now)"
                if swapped
                else f"its folder cannot be opened ({exc.strerror or exc})",
                "is in a folder that changed since it was read",
            )
            why = (f"{why[0]}; left alone, run --fix again", why[1])
        if why is not None:
            _undo(result, edit, *why)
            continue
        result.written.append(edit.display)


def _undo(result: FixResult, edit: FileEdit, note: str | None, why: str) -> None:
    if note is not None:
        result.notes.append(f"{edit.display}: {note}")
    keep = []
    for fx in result.fixes:
        if fx.file == edit.display:
            result.left.append(Left(fx.file, fx.line, fx.col, fx.old, f"the file {why}"))
        else:
            keep.append(fx)
    result.fixes = keep


def _same(a: str, b: str) -> bool:
    return unicodedata.normalize("NFC", a) == unicodedata.normalize("NFC", b)
