"""The baseline file of ``check --baseline``: which findings it accepts (by fingerprint and
count), reading and writing it (atomically), and meeting a run's findings with it.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from brainmigrate import inputs
from brainmigrate.fsutil import located, shown
from brainmigrate.read.files import InputError
from brainmigrate.rules import CHECK_SCHEMA, RULES, Finding, Findings
from brainmigrate.shapes import shorten
from brainmigrate.writers import Outside, under, write_file


@dataclass(frozen=True, slots=True)
class BaselineEntry:
    """A finding the baseline accepts: ``fingerprint`` and ``count``; ``file`` the notes
    file it was found in, as the run named it ("" in a baseline written before entries
    named their file, or for a finding on a root): a run over some files meets only the
    entries of the files it read (``in_run``). The rest is for people."""

    fingerprint: str
    code: str
    scope: str
    path: str
    text: str
    count: int = 1
    file: str = ""

    def to_dict(self) -> dict:
        """The entry as the baseline file holds it."""
        return {
            "code": self.code,
            "count": self.count,
            "file": self.file,
            "fingerprint": self.fingerprint,
            "path": self.path,
            "scope": self.scope,
            "text": self.text,
        }


@dataclass(frozen=True, slots=True)
class BaselineStatus:
    """How the findings met the baseline at ``path``: ``matched`` findings it holds,
    ``vanished`` entries no finding matched; ``updated`` when this run wrote it."""

    path: str
    updated: bool
    matched: int
    vanished: tuple[BaselineEntry, ...] = ()


class BaselineError(InputError):
    """The baseline file is missing, unreadable, or not a brainmigrate baseline."""


def baseline_entries(findings: Sequence[Finding]) -> list[BaselineEntry]:
    """Baseline entries for ``findings`` (suppressed ones left out): one per notes file and
    fingerprint, with its count."""
    counts: Counter[tuple[str, str]] = Counter()
    first: dict[tuple[str, str], Finding] = {}
    for f in findings:
        if not f.suppressed:
            key = (f.file or "", f.fingerprint)
            counts[key] += 1
            first.setdefault(key, f)
    return [
        BaselineEntry(
            fp, f.code, f.scope, f.subject, f.fact_text or f.message, counts[file, fp], file
        )
        for (file, fp), f in first.items()
    ]


def _order(e: BaselineEntry) -> tuple:
    return (e.code, e.scope, e.path, e.text, e.file, e.fingerprint)


def in_run(
    entries: Sequence[BaselineEntry], files: Sequence[str], scopes: Iterable[str]
) -> tuple[list[BaselineEntry], list[BaselineEntry]]:
    """``entries`` split into the run's and the others (those of notes files it did not
    read, kept as they are). An entry is the run's when its ``file`` is one of ``files``
    (compared as normalized paths, or as the same file named from another folder:
    ``fsutil.located``) or names a file that no longer exists (no run can read it
    again); an entry without a file (a baseline written before entries named their file,
    a finding on a root) when its scope is one of ``scopes``, the run's, or it has none."""
    read = {os.path.normpath(f) for f in files}
    real: set[str] | None = None
    scopes = set(scopes)
    mine, others = [], []
    for e in entries:
        if e.file:
            if os.path.normpath(e.file) in read:
                ours = True
            else:  # the same file named from another folder, or gone: every run's
                real = {os.path.realpath(f) for f in files} if real is None else real
                where = located(e.file)
                ours = where is None or where in real
        else:
            ours = not e.scope or e.scope in scopes
        (mine if ours else others).append(e)
    return mine, others


def write_baseline(
    path: str | os.PathLike,
    findings: Sequence[Finding],
    kept: Sequence[BaselineEntry] = (),
    within: str | os.PathLike | None = None,
) -> None:
    """Write the baseline of ``findings`` to ``path`` (JSON, sorted, atomic:
    ``writers.write_file``), with the ``kept`` entries (those of notes files the run did not
    read) as they were. With ``within`` (the folder of the configuration file that named
    ``path``), the file's real path must lie below that folder: a committed symlink that
    leads out is refused.

    Raises ``BaselineError`` when it cannot be written, or leads out of ``within``.
    """
    entries = sorted([*baseline_entries(findings), *kept], key=_order)
    data = {
        "schema_version": CHECK_SCHEMA,
        "tool": "brainmigrate check",
        "entries": [e.to_dict() for e in entries],
    }
    try:
        text = json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
        write_file(path, text.encode("utf-8"), output=True, within=within)
    except Outside:
        raise BaselineError(
            outside_message(path, within)
            or f"--baseline {shown(os.fspath(path))}: its folder changed while it was written;"
            " nothing written, run again"
        ) from None
    except OSError as exc:
        raise BaselineError(
            f"--baseline {os.fspath(path)}: cannot write ({exc.strerror or exc}); pass"
            " --baseline with a writable path"
        ) from None


def outside_message(path: str | os.PathLike, within: str | os.PathLike | None) -> str | None:
    """The one-line error for a baseline ``path`` named by the configuration file in the
    folder ``within`` whose real path lies outside that folder (a committed symlink that
    leads out), or None when it stays inside (or ``within`` is None)."""
    if within is None:
        return None
    real, base = os.path.realpath(path), os.path.realpath(within)
    if under(real, base):
        return None
    folder = os.path.dirname(os.path.abspath(path))  # (abspath: ``..`` taken away)
    linked = os.path.islink(path) or os.path.realpath(folder) != folder
    fix = "replace the symlink by the file" if linked else "name a file in that folder"
    return (
        f"--baseline {shown(os.fspath(path))}: leads to {shown(real)}, outside {shown(base)},"
        f" the folder of the configuration file that names it; nothing written ({fix}, or"
        " pass --baseline on the command line)"
    )


def read_baseline(path: str | os.PathLike) -> list[BaselineEntry]:
    """The entries of the baseline file at ``path``, every field checked where it enters:
    ``schema_version`` the number 1, ``entries`` a list of objects, each with a non-empty
    ``fingerprint`` string, a ``count`` that is a whole number of 1 or more (default 1) and
    strings for ``code``, ``scope``, ``path``, ``text`` and ``file`` (default ""), ``code``
    a finding code of ``codes.CODES`` when given (it reaches every report). Raises
    ``BaselineError`` naming the entry and the field."""
    name = os.fspath(path)
    fix = "fix it, or remove it and write a new one with --update-baseline"
    data = _baseline_json(path, name, fix)
    if not isinstance(data, dict):
        raise BaselineError(
            f"--baseline {name}: not a brainmigrate baseline (a JSON object with"
            f" schema_version {CHECK_SCHEMA}); {fix}"
        )
    version = data.get("schema_version", _ABSENT)
    if type(version) is not int or version != CHECK_SCHEMA:
        raise BaselineError(
            f"--baseline {name}: schema_version is {_json_value(version)}, not"
            f" {CHECK_SCHEMA}; {fix}"
        )
    items = data.get("entries", [])
    if not isinstance(items, list):
        raise BaselineError(
            f"--baseline {name}: entries is {_json_value(items)}, not a list; {fix}"
        )
    entries = []
    for n, item in enumerate(items, 1):
        where = f"--baseline {name}: entry {n}"
        if not isinstance(item, dict):
            raise BaselineError(f"{where} is {_json_value(item)}, not an object; {fix}")
        fp = item.get("fingerprint", _ABSENT)
        if not isinstance(fp, str) or not fp:
            raise BaselineError(
                f"{where}: fingerprint is {_json_value(fp)}, not a non-empty string; {fix}"
            )
        count = item.get("count", 1)
        if type(count) is not int or count < 1:
            raise BaselineError(
                f"{where}: count is {_json_value(count)}, not a whole number of 1 or more; {fix}"
            )
        fields = []
        for key in ("code", "scope", "path", "text", "file"):
            value = item.get(key, "")
            if not isinstance(value, str):
                raise BaselineError(f"{where}: {key} is {_json_value(value)}, not a string; {fix}")
            fields.append(value)
        code, scope, cited, text, file = fields
        if code and code not in RULES:
            raise BaselineError(
                f"{where}: code is {_json_value(code)}, not a finding code (docs/check.md,"
                f' "Finding codes"); {fix}'
            )
        entries.append(BaselineEntry(fp, code, scope, cited, text, count, file))
    return entries


def _baseline_json(path: str | os.PathLike, name: str, fix: str):
    """The JSON value the baseline file at ``path`` holds (read bounded: ``inputs``).
    Raises ``BaselineError`` for a file that is not one, too large, unreadable, not UTF-8,
    not JSON, too deeply nested or holding a number too long to read."""
    try:
        text = inputs.read_bounded(path, inputs.SMALL_FILE_MAX, "a baseline").decode("utf-8")
        fault = inputs.structure_fault(text, "json")
        data = json.loads(text) if fault is None else None
    except inputs.NotAFile as exc:
        raise BaselineError(
            f"--baseline {name}: {exc.strerror}, not a file; pass --baseline with a baseline file"
        ) from None
    except inputs.TooLarge as exc:
        raise BaselineError(f"--baseline {name}: {exc.strerror}; {fix}") from None
    except FileNotFoundError:
        raise BaselineError(
            f"--baseline {name}: no such file; create it with --update-baseline"
        ) from None
    except OSError as exc:
        raise BaselineError(
            f"--baseline {name}: cannot read it ({exc.strerror or exc}); pass --baseline with"
            " a readable baseline file"
        ) from None
    except UnicodeDecodeError as exc:
        raise BaselineError(f"--baseline {name}: not UTF-8 ({exc.reason}); {fix}") from None
    except json.JSONDecodeError as exc:
        raise BaselineError(f"--baseline {name}: not JSON ({exc}); {fix}") from None
    except (ValueError, RecursionError) as exc:  # an integer too long to convert …
        fault = inputs.structure_fault(text, "json", numbers=True)
        if fault is None:
            raise BaselineError(f"--baseline {name}: not JSON ({exc}); {fix}") from None
    if fault is not None:
        line, col, reason = fault
        raise BaselineError(f"--baseline {name}:{line}:{col}: {reason}; {fix}")
    return data


_ABSENT = object()


def _json_value(value) -> str:
    """A value of a JSON file as a message shows it: as JSON, cut to 40 characters, printable."""
    if value is _ABSENT:
        return "missing"
    try:
        text = json.dumps(value)  # (inf, which 1e400 reads as, is "Infinity")
    except ValueError:  # pragma: no cover - json.loads gives only what it can dump
        text = repr(value)
    return shorten(text, 40)


def apply_baseline(
    findings: Sequence[Finding],
    entries: Sequence[BaselineEntry],
    path: str,
    others: Sequence[BaselineEntry] = (),
) -> tuple[Findings, BaselineStatus]:
    """Mark the findings the baseline holds (each entry covers ``count`` findings, in
    order): ``entries`` (the run's files', ``in_run``) first, then ``others`` (a fact moved
    in from a file the run did not read keeps its entry). Entries of ``entries`` left
    over are ``vanished``; ``others`` never are. Suppressed findings are never matched.
    The findings come back as a new ``rules.Findings`` (in a temporary file), in order."""
    left, elsewhere = Counter(), Counter()
    for e in entries:
        left[e.fingerprint] += e.count
    for e in others:
        elsewhere[e.fingerprint] += e.count
    out, matched = Findings(), 0
    for f in findings:
        if not f.suppressed:
            pool = left if left[f.fingerprint] > 0 else elsewhere
            if pool[f.fingerprint] > 0:
                pool[f.fingerprint] -= 1
                matched += 1
                f = replace(f, baselined=True)
        out.append(f)
    vanished = []
    for e in entries:
        if left[e.fingerprint] > 0:
            vanished.append(replace(e, count=min(e.count, left[e.fingerprint])))
            left[e.fingerprint] -= vanished[-1].count
    return out, BaselineStatus(path, False, matched, tuple(vanished))
