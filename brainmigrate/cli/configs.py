"""Which configuration each notes file is read with (docs/check.md, Configuration): the
nearest one at or above the file, as ruff finds its own, and what ``check`` and
``import`` do when the PATHS given fall under several.

``groups`` splits the PATHS by the configuration file that applies to them; ``check``
runs once per group and ``join_checks``/``join_fixes`` make one result of the runs;
``import`` writes one store, so ``for_import`` refuses groups that would read the notes
differently.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace
from itertools import chain
from pathlib import Path
from typing import NamedTuple

from brainmigrate.check import CheckedFacts, CheckResult
from brainmigrate.cli.reading import load_settings
from brainmigrate.cli.runtime import Failure, verbose
from brainmigrate.config import Settings


class Group(NamedTuple):
    """Notes PATHS read with one configuration: its ``settings`` (the command line's
    options in place), the ``paths`` in command-line order, the configuration ``file`` as
    shown (None: no file, the defaults), its absolute ``folder`` (None likewise), and
    ``skip``, the absolute folders below its PATHS that a nearer configuration reads (its
    walks leave them out: ``files.FileRules.skip``)."""

    settings: Settings
    paths: tuple[str, ...]
    file: str | None
    folder: str | None
    skip: tuple[str, ...] = ()


def groups(
    paths: Sequence[str],
    config_file: str | None,
    isolated: bool,
    quiet: bool = False,
    roots_said: bool = False,
    stdin_filename: str | None = None,
    walk_include: bool = False,
    **given,
) -> list[Group]:
    """The PATHS grouped by the configuration that applies to each (one group with
    ``--config`` or ``--isolated``): for a notes file (and a folder given), the nearest
    folder at or above it holding a configuration (``config.find``, which stops at the
    repository root); with none there, the one found from the current folder, else the
    defaults. A folder holding a nearer configuration below it stays a walk: each of
    those configurations' groups walks its own folder under it, the folder's own group
    the rest (``Group.skip``), each with its own file rules (``include``, ``exclude`` on
    walked files, ``respect-gitignore``); a part that gives no notes file is dropped
    (all of them: the folder is kept, for the run to report). A configuration other
    than the current folder's that names no ``roots`` has its own folder as the root,
    as a run in that folder would. Groups are in the order of their first PATH;
    ``given`` are the command line's overrides (``Settings.override``); with
    ``walk_include`` (a run given no PATH) every group's ``include`` defaults to
    ``files.default_include()`` (``reading.with_include``). Standard input (``-``) takes
    the configuration of ``stdin_filename`` (as if the notes were there), else the
    current folder's. Under ``--verbose`` each configuration is said
    (``reading.load_settings``), with its roots when ``roots_said``.
    Raises ``ConfigError`` as ``config.load``, ``click.UsageError`` for ``--config`` with
    ``--isolated``."""
    from brainmigrate import config
    from brainmigrate.cli.reading import with_include

    if config_file or isolated:
        folder = os.path.dirname(os.path.abspath(config_file)) if config_file else None
        given = _anchored(given, folder)
        s = load_settings(config_file, isolated, quiet, roots_said=roots_said, **given)
        s = with_include(s) if walk_include else s
        return [Group(s, tuple(paths), config_file, folder)]
    finder = _Finder(config, stdin_filename)
    keyed: dict[Path | None, list[str]] = {}
    skips: dict[Path | None, list[str]] = {}
    split: set[tuple[Path | None, str]] = set()
    for path in paths:
        parts = finder.parts(path)
        for key, part, skip in parts:
            keyed.setdefault(key, []).append(part)
            skips.setdefault(key, []).extend(skip)
            if len(parts) > 1:
                split.add((key, part))
    out = []
    for key, members in keyed.items():
        folder = None if key is None else os.fspath(key.parent)
        s = load_settings(
            None, False, quiet, roots_said=False, folder=folder, **_anchored(given, folder)
        )
        s = with_include(s) if walk_include else s
        if key is not None and key != finder.home and not s.roots:
            s = replace(s, roots=(_shown(folder),), roots_from=None)
        if roots_said:
            verbose(f"brainmigrate: roots: {', '.join(s.roots or ('.',))}")
        shown = None if key is None else _shown(key)
        out.append(Group(s, tuple(members), shown, folder, tuple(dict.fromkeys(skips[key]))))
    return _walked(out, split, keyed) if split else out


def _anchored(given: dict, folder: str | None) -> dict:
    """``given`` with the ``--exclude``/``--extend-exclude`` globs (typed from the current
    folder) made relative to ``folder``, the configuration's, whose globs are matched below
    it (``files.relative``): ``app/notes/drafts/*`` is ``notes/drafts/*`` for
    ``app/.brainmigrate.toml``; a glob that does not start inside ``folder`` stays."""
    if folder is None:
        return given
    prefix = _shown(folder).replace(os.sep, "/")
    starts = [os.path.abspath(folder).replace(os.sep, "/").rstrip("/") + "/"]
    if prefix != "." and not prefix.startswith("../"):  # (typed from inside: as it is)
        starts.append(prefix + "/")

    def rebased(glob: str) -> str:
        bare = glob.removeprefix("./")
        for start in starts:
            if bare.startswith(start) and len(bare) > len(start):
                return bare[len(start) :]
        return glob

    out = dict(given)
    for name in ("exclude", "extend_exclude"):
        if out.get(name):
            out[name] = tuple(rebased(g) for g in out[name])
    return out


def _walked(found: list[Group], split: set, keyed: dict) -> list[Group]:
    """``found`` without the parts of a split folder that give no notes file with their
    group's rules (``groups``); when every part is empty, the first group keeps its own."""
    from brainmigrate.cli.reading import file_rules
    from brainmigrate.read.files import InputError, notes_files

    out = []
    for key, group in zip(keyed, found, strict=True):
        rules = file_rules(group.settings, group.skip)
        kept = []
        for part in group.paths:
            if (key, part) in split:
                try:
                    notes_files([part], rules=rules)
                except InputError as exc:
                    if str(exc).startswith(f"{part}: "):  # none there (a bad glob is raised)
                        continue
                    raise
            kept.append(part)
        if kept:
            out.append(group._replace(paths=tuple(kept)))
    return out or found[:1]


class _Finder:
    """``config.find`` for notes paths, each folder asked once."""

    def __init__(self, config, stdin_filename: str | None = None) -> None:
        self._config = config
        self._found: dict[str, Path | None] = {}
        self.home = self._find(os.getcwd())
        self._stdin = stdin_filename

    def _find(self, folder: str) -> Path | None:
        folder = os.path.abspath(folder)
        if folder not in self._found:
            try:
                self._found[folder] = self._config.find(folder)[0].absolute()
            except LookupError:
                self._found[folder] = None
        return self._found[folder]

    def nearest(self, path: str) -> Path | None:
        """The configuration file of notes ``path`` (a folder: its own), else ``home``."""
        if path == "-":
            if not self._stdin:
                return self.home
            path = self._stdin
        folder = path if os.path.isdir(path) else os.path.dirname(path) or "."
        return self._find(folder) or self.home

    def parts(self, path: str) -> list[tuple[Path | None, str, list[str]]]:
        """``(configuration, part, skip)`` of ``path``: one (``path``, nothing skipped),
        or for a folder below which other configurations apply, the folder with those
        configurations' folders skipped, then each of those folders (named below
        ``path``) with the ones nearer still skipped, in walk order."""
        own = self.nearest(path)
        if path == "-" or not os.path.isdir(path):
            return [(own, path, [])]
        below = self._below(path, own)
        if not below:
            return [(own, path, [])]
        out = [(own, path, [os.path.abspath(d) for d, _ in below])]
        for i, (top, key) in enumerate(below):
            inner = [os.path.abspath(d) for d, _ in below[i + 1 :] if _inside(d, top)]
            part = os.path.normpath(os.path.join(path, os.path.relpath(top, path)))
            out.append((key, part, inner))
        return out

    def _below(self, folder: str, own: Path | None) -> list[tuple[str, Path]]:
        """The folders under ``folder`` whose nearest configuration is their own and not
        ``own`` (each with it), in walk order."""
        from brainmigrate.config import SOURCES
        from brainmigrate.read.files import SKIP_DIRS

        names = {name for name, _ in SOURCES}
        found = []
        for top, dirs, files in os.walk(folder):
            dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
            if top == folder or not names & set(files):
                continue
            key = self._find(top)
            if key is not None and key != own and os.path.samefile(key.parent, top):
                found.append((top, key))
        return found


def _inside(path: str, folder: str) -> bool:
    """Whether ``path`` lies below ``folder`` (both as walked)."""
    return os.path.abspath(path).startswith(os.path.abspath(folder).rstrip(os.sep) + os.sep)


def written_over(found: list[Group]) -> tuple[list[str], object]:
    """``(notes, rules)`` for ``runtime.refuse_overwrites``: one group's PATHS and file
    rules as they are; several groups' notes files, each listed with its own rules
    (``Group.skip`` too), and no rules (each file named). Raises ``InputError`` as
    ``files.notes_files``."""
    from brainmigrate.cli.reading import file_rules
    from brainmigrate.read.files import notes_files

    if len(found) == 1:
        return list(found[0].paths), file_rules(found[0].settings, found[0].skip)
    listed = []
    for group in found:
        named = [p for p in group.paths if p != "-"]
        rules = file_rules(group.settings, group.skip)
        listed += [os.fspath(f) for _, f in notes_files(named, rules=rules)] if named else []
    return listed, None


def _shown(path) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:  # another drive
        return os.fspath(path)


def _under(group: Group) -> str:
    """Where a group's notes are, for a message: its configuration's folder, else its
    first PATH."""
    if group.folder is None:
        return group.paths[0]
    shown = _shown(group.folder)
    return "./" if shown == "." else shown.rstrip("/") + "/"


def of_paths(
    paths: Sequence[str], keys: Sequence[tuple[str, str]], how: str, *args, **given
) -> tuple[tuple[str, ...], list[Group]]:
    """``(paths, groups)`` of a run over notes PATHS: the PATHS read
    (``reading.notes_paths``: quoted globs expanded; none, the current folder), grouped by
    ``groups(paths, *args, **given)``; with no PATH, each group walks the current folder
    for its ``include`` globs (``reading.with_include``). Groups that differ in ``keys``
    are refused (``refuse_mixed``, with ``how``). Raises what those raise."""
    from brainmigrate.cli.reading import notes_paths

    read = notes_paths(tuple(paths))
    found = groups(read, *args, walk_include=not paths, **given)
    refuse_mixed(found, keys, how)
    return read, found


def refuse_mixed(found: list[Group], keys: Sequence[tuple[str, str]], how: str) -> None:
    """Raise ``Failure`` when two groups differ in one of ``keys`` (``(field of
    Settings, option that makes them equal)``), naming both configuration files;
    ``how`` says what else to do ("import them apart")."""
    first = found[0]
    for other in found[1:]:
        for key, option in keys:
            if getattr(first.settings, key) != getattr(other.settings, key):
                files = f"{first.file or 'no configuration'}, {other.file or 'no configuration'}"
                raise Failure(
                    f"notes under {_under(first)} and {_under(other)} have different"
                    f" {key.replace('_', '-')} ({files}); {how} or pass {option}"
                )


#: What one import reads notes with; groups differing in one are refused.
IMPORT_KEYS = (
    ("roots", "--root"),
    ("scope", "--scope"),
    ("task_pattern", "--task-pattern"),
    ("plus_kind", "--plus-kind"),
    ("markdown", "--notation"),
    ("cache_dir", "--cache-dir"),
)

#: What one check report is made with; groups differing in one are refused. Each group
#: meets its own baseline (``join_checks``).
CHECK_KEYS = (("fail_on", "--fail-on"),)


class JoinedFacts(CheckedFacts):
    """The facts of several checks, one after the other."""

    def __init__(self, parts: Sequence) -> None:
        self._parts = tuple(parts)

    def __len__(self) -> int:
        return sum(len(p) for p in self._parts)

    def distinct(self) -> int:
        """The facts each check's lines make, added up (checks read different files)."""
        return sum(p.distinct() if isinstance(p, CheckedFacts) else len(p) for p in self._parts)

    def __iter__(self):
        return chain.from_iterable(self._parts)


def join_checks(results: Sequence[CheckResult]) -> CheckResult:
    """One ``CheckResult`` of the checks of several groups (their ``fail_on`` is one,
    ``refuse_mixed``): files, facts and findings one group after the other (each group's
    findings in their own order, met with its own baseline), the baselines' counts added
    up under their paths (each once, joined by ``", "``). One result is returned as it
    is."""
    if len(results) == 1:
        return results[0]
    from brainmigrate.rules import Findings

    findings = Findings(chain.from_iterable(r.findings for r in results))
    for r in results:
        if isinstance(r.findings, Findings):
            r.findings.close()
    statuses = [r.baseline for r in results if r.baseline is not None]
    status = None
    if statuses:
        status = replace(
            statuses[0],
            path=", ".join(dict.fromkeys(s.path for s in statuses)),
            updated=any(s.updated for s in statuses),
            matched=sum(s.matched for s in statuses),
            vanished=tuple(chain.from_iterable(s.vanished for s in statuses)),
        )
    plans = [r.fixes for r in results if r.fixes is not None]
    return CheckResult(
        tuple(chain.from_iterable(r.files for r in results)),
        JoinedFacts([r.facts for r in results]),
        findings,
        results[0].fail_on,
        status,
        tuple(chain.from_iterable(r.excluded for r in results)),
        fixes={k: v for plan in plans for k, v in plan.items()} if plans else None,
    )


def join_fixes(results: Sequence):
    """One ``fix.FixResult`` of the fixes of several groups, their checks joined."""
    if len(results) == 1:
        return results[0]
    from brainmigrate.fix import FixResult

    checks = [r.check for r in results]
    return FixResult(
        fixes=[f for r in results for f in r.fixes],
        left=[f for r in results for f in r.left],
        edits=[e for r in results for e in r.edits],
        notes=[n for r in results for n in r.notes],
        written=[w for r in results for w in r.written],
        check=join_checks(checks) if all(c is not None for c in checks) else None,
    )
