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
    shown (None: no file, the defaults) and its absolute ``folder`` (None likewise)."""

    settings: Settings
    paths: tuple[str, ...]
    file: str | None
    folder: str | None


def groups(
    paths: Sequence[str],
    config_file: str | None,
    isolated: bool,
    quiet: bool = False,
    roots_said: bool = False,
    stdin_filename: str | None = None,
    **given,
) -> list[Group]:
    """The PATHS grouped by the configuration that applies to each (one group with
    ``--config`` or ``--isolated``): for a notes file (and a folder given), the nearest
    folder at or above it holding a configuration (``config.find``, which stops at the
    repository root); with none there, the one found from the current folder, else the
    defaults. A folder holding a nearer configuration below it is split into its notes
    files. A configuration other than the current folder's that names no ``roots`` has
    its own folder as the root, as a run in that folder would. Groups are in the order
    of their first PATH; ``given`` are the command line's overrides (``Settings.override``).
    Standard input (``-``) takes the configuration of ``stdin_filename`` (as if the notes
    were there), else the current folder's. Under ``--verbose`` each configuration is
    said (``reading.load_settings``), with its roots when ``roots_said``.
    Raises ``ConfigError`` as ``config.load``, ``click.UsageError`` for ``--config`` with
    ``--isolated``."""
    from brainmigrate import config

    if config_file or isolated:
        s = load_settings(config_file, isolated, quiet, roots_said=roots_said, **given)
        folder = os.path.dirname(os.path.abspath(config_file)) if config_file else None
        return [Group(s, tuple(paths), config_file, folder)]
    finder = _Finder(config, stdin_filename)
    keyed: dict[Path | None, list[str]] = {}
    for path in paths:
        for part in finder.parts(path):
            keyed.setdefault(finder.nearest(part), []).append(part)
    if len(keyed) == 1:  # one configuration: the PATHS as given, as before
        keyed = {next(iter(keyed)): list(paths)}
    out = []
    for key, members in keyed.items():
        folder = None if key is None else os.fspath(key.parent)
        s = load_settings(None, False, quiet, roots_said=False, folder=folder, **given)
        if key is not None and key != finder.home and not s.roots:
            s = replace(s, roots=(_shown(folder),), roots_from=None)
        if roots_said:
            verbose(f"brainmigrate: roots: {', '.join(s.roots or ('.',))}")
        out.append(Group(s, tuple(members), None if key is None else _shown(key), folder))
    return out


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

    def parts(self, path: str) -> list[str]:
        """``path``, or the notes files of a folder below which another configuration
        applies (a file that cannot be listed is left to the run to report)."""
        if path == "-" or not os.path.isdir(path) or not self._holds_below(path):
            return [path]
        from brainmigrate.read.files import InputError, notes_files

        try:
            return [os.fspath(f) for _, f in notes_files([path])]
        except InputError:
            return [path]

    def _holds_below(self, folder: str) -> bool:
        from brainmigrate.config import SOURCES
        from brainmigrate.read.files import SKIP_DIRS

        names = {name for name, _ in SOURCES}
        own = self.nearest(folder)
        for top, dirs, files in os.walk(folder):
            dirs[:] = [d for d in dirs if d not in SKIP_DIRS]
            if top != folder and names & set(files) and self._find(top) not in (own, None):
                return True
        return False


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
    from brainmigrate.cli.reading import notes_paths, with_include

    read = notes_paths(tuple(paths))
    found = groups(read, *args, **given)
    if not paths:
        found = [g._replace(settings=with_include(g.settings)) for g in found]
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

#: What one check report is made with; groups differing in one are refused.
CHECK_KEYS = (("fail_on", "--fail-on"), ("baseline", "--baseline"))


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
    """One ``CheckResult`` of the checks of several groups (their ``fail_on`` and baseline
    file are one, ``refuse_mixed``): files, facts and findings one group after the other
    (each group's findings in their own order), the baseline's counts added up. One
    result is returned as it is."""
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
