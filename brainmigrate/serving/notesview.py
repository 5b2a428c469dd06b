"""What an editor is shown of one notes buffer (``brainmigrate server``, docs/editors.md):
the findings ``check`` gives for its unsaved text (``check_text``), the edit
``--fix`` would make of each, and every citation with its place and what it resolved to.

No editor protocol here (``serving.lsp`` speaks it): lines and columns are 1-based, in
code points, as ``check`` reports them; an ``end`` is the column after the text.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from brainmigrate.model import Anchor, Segment
from brainmigrate.read.files import is_excluded
from brainmigrate.read.names import camelcase_names
from brainmigrate.read.notation import split_trailer
from brainmigrate.read.run import ImportOptions
from brainmigrate.read.tokens import tokens
from brainmigrate.rules import Finding, Hint

if TYPE_CHECKING:  # check is loaded when a buffer is checked, not at start-up
    from brainmigrate import check

#: The file name endings of notes files a folder is walked for (``read.files``).
NOTES_SUFFIXES = (".md", ".mdc")


def check_text(
    path: str | os.PathLike,
    text: str,
    options: ImportOptions,
    fail_on: str = "error",
    *,
    fixes: bool = True,
    name: str | None = None,
    **settings,
) -> check.CheckResult:
    """Check the notes ``text`` (an editor's unsaved buffer) as ``check.run_check`` checks the
    file ``path``: read as that file (its notation, scope and folder, cited paths relative
    to it; findings name it as ``name``, default ``path``), from a temporary copy
    (``unsaved``), with ``settings`` the keyword arguments ``check`` gives ``run_check``
    (``baseline``, ``exclude``, ``select``, ``file_ignores``). With ``fixes``, a gone
    citation ``--fix`` would rewrite carries its ``fix.Fix`` (``CheckResult.fix_of``).
    Raises what ``check.run_check`` raises."""
    from brainmigrate import check

    with unsaved(path, text, options, name) as (copy, read):
        result = check.run_check([copy], read, fail_on, **settings)
        if fixes and result.tally().by_code().get("BM101"):
            from brainmigrate import fix  # only a check with gone citations plans fixes

            result = fix.fixable(result, [copy], read, settings.get("exclude", ()))
        return result


@contextlib.contextmanager
def unsaved(
    path: str | os.PathLike, text: str, options: ImportOptions, name: str | None = None
) -> Iterator[tuple[str, ImportOptions]]:
    """``(copy, options)``: a temporary file holding ``text`` (UTF-8) and ``options`` that
    read it as the notes file ``path`` named ``name`` (default ``path``;
    ``ImportOptions.names``, as standard input is read); the file is removed afterwards."""
    import tempfile

    name, shown = os.fspath(path), name
    suffix = os.path.splitext(name)[1] or ".md"
    with tempfile.TemporaryDirectory(prefix="brainmigrate-unsaved-") as folder:
        copy = os.path.join(folder, f"notes{suffix}")
        with open(copy, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        yield copy, replace(options, names={**options.names, copy: shown or name})


@dataclass(frozen=True)
class Given:
    """The server's command line: ``--config``, ``--isolated``, ``--root``, ``--cache-dir``."""

    config_file: str | None = None
    isolated: bool = False
    roots: tuple[str, ...] = ()
    cache_dir: str | None = None


@dataclass(frozen=True)
class Spot:
    """A citation in the buffer at ``line``, ``col`` up to ``end``: its ``state``
    (``anchor``, or a finding's: ``gone``, ``outside``, ``unresolved``, ``ignored``,
    ``ambiguous``; ``past-end`` or ``no-heading``, an anchored file whose line form or
    fragment BM204/BM205 warns of, the warning in ``reason``), the anchor it resolved to
    (its ``root`` an absolute folder), its line form ``lines``, a gone path's "moved?"
    ``hint``, why a path is ``outside`` (``reason``) and an ambiguous name's
    ``candidates``."""

    line: int
    col: int
    end: int
    text: str
    state: str
    anchor: Anchor | None = None
    lines: tuple[int, int] | None = None
    hint: Hint | None = None
    reason: str = ""
    candidates: tuple[str, ...] = ()

    def target(self) -> tuple[str, int] | None:
        """``(absolute file, 1-based line)`` the spot leads to (a file or a declaration
        that anchors; a line past the file's end leads to its top), or None."""
        a = self.anchor
        if a is None or a.kind == "folder":
            return None
        first = (a.lines or (1, 1))[0] if a.kind == "symbol" else (self.lines or (1, 1))[0]
        return os.path.join(a.root, a.path), first


@dataclass
class View:
    """One buffer checked: its ``findings`` (not suppressed), the ``fixes`` ``--fix`` would
    make (``fix.Fix`` by ``(line, col)``), its ``spots`` in order, and ``error``: why the
    buffer could not be checked (then nothing else is set)."""

    findings: list[Finding] = field(default_factory=list)
    fixes: dict = field(default_factory=dict)
    spots: list[Spot] = field(default_factory=list)
    error: str | None = None

    def __post_init__(self) -> None:
        self._by_line: dict[int, list[Spot]] | None = None

    def spot_at(self, line: int, col: int) -> Spot | None:
        """The spot at 1-based ``line`` holding column ``col`` (its end included): a look-up
        in the spots by line, made once (a buffer's findings ask it once each)."""
        if self._by_line is None:
            self._by_line = {}
            for s in self.spots:
                self._by_line.setdefault(s.line, []).append(s)
        for s in self._by_line.get(line, ()):
            if s.col <= col <= s.end:
                return s
        return None

    def end_of(self, f: Finding) -> int | None:
        """The column after what finding ``f`` is about (its fix's old text, else its
        citation's), or None."""
        fix = self.fixes.get((f.line, f.col))
        if fix is not None:
            return fix.col + len(fix.old)
        at = self.spot_at(f.line or 0, f.col or 0) if f.col else None
        return at.end if at is not None and at.col == f.col else None


def settings_for(path: str, given: Given, workspace: str | None):
    """The ``config.Settings`` for the notes file ``path`` (absolute): ``--config`` or
    ``--isolated`` as given, else the configuration ``check`` finds from the file's folder
    up (``config.load``); ``--root`` and ``--cache-dir`` in place. With no root given or
    configured, the editor's workspace folder (else the current folder). Raises
    ``config.ConfigError``."""
    from brainmigrate import config

    folder = os.path.dirname(path)
    if given.config_file or given.isolated:
        settings = config.load(config_file=given.config_file, isolated=given.isolated)
    else:
        settings = config.load(folder)
    roots = given.roots or (() if settings.roots else (workspace or os.getcwd(),))
    return settings.override(roots=roots, cache_dir=given.cache_dir)


def is_notes(path: str, settings, workspace: str | None) -> bool:
    """True when ``check`` reads ``path`` (absolute) as a notes file: one the walk's
    ``include`` globs take (``files.walk_matcher``: the settings' ``include``, default
    ``files.default_include()``: ``.cursorrules``, ``.windsurfrules`` …) or a ``*.md`` or
    ``*.mdc`` file, that no ``exclude`` glob leaves out; both matched against the path
    below the configuration's folder (else the workspace's, else the current one), as
    ``check`` matches them (``files.relative``). A bad ``include`` glob takes none."""
    from brainmigrate.read.files import InputError, relative, walk_matcher

    if settings.source:
        base = os.path.dirname(os.path.abspath(settings.source))
    else:
        base = workspace or os.getcwd()
    shown = relative(path, base)
    if not path.lower().endswith(NOTES_SUFFIXES):
        try:
            if not walk_matcher(settings.include)(shown):
                return False
        except InputError:
            return False
    return not is_excluded(shown, settings.excludes)


def shown_name(path: str) -> str:
    """The name ``check`` run in the server's folder gives the notes file ``path``
    (absolute): the path from the current folder when the file lies below it, else
    ``path``."""
    here = os.getcwd()
    return os.path.relpath(path, here) if path.startswith(here + os.sep) else path


def analyse(path: str, text: str, settings) -> View:
    """The ``View`` of notes ``text`` read as the file ``path``, checked as ``check``
    checks it: ``check_text`` with the ``run_check`` arguments ``check`` gives it
    (``fail_on``, ``baseline``, ``exclude``, ``select``, ``per-file-ignores``), the file
    named as ``check`` run in the server's folder names it (``shown_name``). Findings the
    baseline holds are kept (``Finding.baselined``), suppressed ones left out. Raises
    what ``check_text`` and ``cli.reading.read_options`` raise."""
    from brainmigrate import rules
    from brainmigrate.cli.reading import read_options

    options = read_options(settings, "fast", {}, None)
    selection = rules.Selection(settings.select, settings.extend_select, settings.ignore)
    result = check_text(
        path,
        text,
        options,
        settings.fail_on,
        name=shown_name(path),
        baseline=str(settings.baseline) if settings.baseline else None,
        exclude=settings.excludes,
        select=selection,
        file_ignores=settings.file_ignores,
    )
    findings = [f for f in result.findings if not f.suppressed]
    fixes = {(fx.line, fx.col): fx for fx in (result.fixes or {}).values()}
    hints = {(f.line, f.col): f.hint for f in findings if f.hint is not None}
    warned = {(f.line, f.col): f for f in findings if f.code in PLACE_WARNINGS}
    spots = list(_spots(result.facts.resolved(), text.split("\n"), hints, warned))
    return View(findings, fixes, spots)


#: The state of a file citation that anchored with a warning about its line form or
#: fragment (the file is there, the place in it is not), by the warning's code.
PLACE_WARNINGS = {"BM204": "past-end", "BM205": "no-heading"}


def _spots(resolved, lines: list[str], hints: dict, warned: dict):
    """The spots of each fact's citations: a token of the fact's lines at a citation's
    place is that citation; one whose path an anchor of the fact ends with, or a
    CamelCase name a declaration anchors, is that anchor (in the state of a BM204/BM205
    at its place, ``warned``, when there is one). The lines are split into tokens as the
    resolver splits them: a backtick span with spaces is one token when the fact
    anchored its path (``tokens``' ``holds``)."""
    for fact, res in resolved:
        if res is None:
            continue
        cites = {(c.line, c.col): c for c in res.citations}
        files = [a for a in res.anchors if a.kind != "symbol"]
        symbols = {a.symbol: a for a in res.anchors if a.kind == "symbol"}
        last = min(max(fact.line, fact.last_line), len(lines))
        segments = [Segment(n, 1, lines[n - 1].rstrip("\r")) for n in range(fact.line, last + 1)]
        holds = functools.partial(_anchor_of, files=files)
        for tok in tokens(segments, lambda text, holds=holds: holds(text) is not None):
            whole = tok.whole or tok.text
            end = tok.end or tok.col + len(whole)
            c = cites.pop((tok.line, tok.col), None)
            if c is not None:
                hint = hints.get((c.line, c.col))
                yield Spot(tok.line, tok.col, end, c.name, c.state, None, c.lines, hint, c.reason,
                           c.candidates)  # fmt: skip
                continue
            anchor = _anchor_of(tok.text, files)
            if anchor is not None:
                w = warned.get((tok.line, tok.col))
                if w is not None:
                    state, cited = (
                        PLACE_WARNINGS[w.code],
                        lines[tok.line - 1][tok.col - 1 : end - 1],
                    )
                    yield Spot(tok.line, tok.col, end, cited, state, anchor, reason=w.message)
                else:
                    yield Spot(tok.line, tok.col, end, tok.text, "anchor", anchor, tok.lines)
                continue
            for name in camelcase_names(whole):
                anchor = symbols.get(name)
                at = whole.find(name)
                if anchor is not None and at >= 0:
                    col = tok.col + at
                    yield Spot(tok.line, col, col + len(name), name, "anchor", anchor)
        for c in cites.values():  # a citation no token of this pass found (a reference)
            yield Spot(c.line, c.col, c.col + len(c.name), c.name, c.state, None, c.lines,
                       hints.get((c.line, c.col)), c.reason, c.candidates)  # fmt: skip


def _anchor_of(text: str, files: list[Anchor]) -> Anchor | None:
    """The file or folder anchor whose path the cited path ``text`` ends with (``./``,
    ``../`` and ``@`` dropped), or None."""
    text = text.replace("\\", "/").lstrip("@")
    while text.startswith(("./", "../")):
        text = text.partition("/")[2]
    text = text.rstrip("/")
    if not text:
        return None
    for a in files:
        path = a.path.rstrip("/")
        if path == text or path.endswith("/" + text):
            return a
    return None


def _suppression(line: str) -> tuple[str, str, list[str]] | None:
    """``(body, inside, codes)`` of a notes ``line`` ending with a suppression comment
    (``allow-gone`` is ``BM101``), or None."""
    from brainmigrate.read.facts import ALLOW

    body, inside = split_trailer(line)
    allow = ALLOW.fullmatch(inside) if inside is not None else None
    if allow is None:
        return None
    codes = ["BM101"] if allow.group("what") else allow.group("codes").replace(",", " ").split()
    return body, inside, [c.upper() for c in codes]


def ignore_edit(
    line: str, code: str | Sequence[str], drop: Collection[str] = ()
) -> tuple[int, int, str] | None:
    """The edit that makes the notes ``line`` waive ``code`` (one code or several, docs/check.md,
    "check"): ``(start, end, text)``, 0-based code-point columns of the line, ``end`` not
    included. A line without a trailer gets `` <!-- brainmigrate: ignore CODE -->``; one
    ending with such a suppression gets the codes added to it (``allow-gone`` is ``ignore
    BM101``), the codes in ``drop`` (unused ones) taken out of it; None when the line
    waives every code already or ends with another comment (a date: a line has one
    trailer, SPEC.md §Notation)."""
    from brainmigrate.rules import waived_by

    wanted = [code] if isinstance(code, str) else list(code)
    line = line.rstrip("\r")
    body, inside = split_trailer(line)
    if inside is None:
        at = len(line.rstrip())
        return at, at, f" <!-- brainmigrate: ignore {', '.join(wanted)} -->"
    held = _suppression(line)
    if held is None:
        return None
    codes = [c for c in held[2] if c not in drop]
    added = [c for c in wanted if waived_by(c, frozenset(codes)) is None]
    if not added:
        return None
    new = f"<!-- brainmigrate: ignore {', '.join(codes + added)} -->"
    return len(body), len(line.rstrip()), new


def unused_edit(line: str, subject: str) -> tuple[int, int, str] | None:
    """The edit that removes from the notes ``line`` the unused suppression ``subject``
    (a BM401's: ``ignore CODE`` or ``allow-gone``), as ``(start, end, text)`` in 0-based
    code-point columns: the code taken out of the comment, or the whole comment (and the
    blanks before it) when it was the comment's only one. None when the line's trailer
    holds no such suppression."""
    held = _suppression(line.rstrip("\r"))
    if held is None:
        return None
    body, _, codes = held
    line = line.rstrip("\r")
    end = len(line.rstrip())
    entry = "BM101" if subject.lower() == "allow-gone" else subject.split()[-1].upper()
    if entry not in codes:
        return None
    left = [c for c in codes if c != entry]
    if not left or subject.lower() == "allow-gone":
        start = len(body.rstrip())
        return start, end, ""
    return len(body), end, f"<!-- brainmigrate: ignore {', '.join(left)} -->"
