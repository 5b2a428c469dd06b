"""Settings of ``brainmigrate`` from a configuration file (docs/check.md, Configuration).

Found as ruff finds its own (``find``): from a folder upward to the repository root (the
first folder holding ``.git``; the file system root when there is none), the first folder
with ``.brainmigrate.toml`` (keys at the top level) or ``pyproject.toml`` with a
``[tool.brainmigrate]`` table. ``check`` and ``import`` look from each notes file
(``cli.configs``), the other commands from the current folder. When one folder holds
both, ``.brainmigrate.toml`` is used and ``Settings.notes`` says so. ``--config FILE``
names the file instead; ``--isolated`` reads none. Keys:

=======================  ========================================  =======================
key                      value                                     command-line option
=======================  ========================================  =======================
roots                    list of folders, first wins               ``--root``
scope                    scope of every fact                       ``--scope``
task-pattern             regular expression                        ``--task-pattern``
plus-kind                one of the kinds (``environment`` …)      ``--plus-kind``
cache-dir                folder of the declaration index cache     ``--cache-dir``
exclude                  list of globs of notes files to skip      ``--exclude``
extend-exclude           more globs, added to ``exclude``          ``--extend-exclude``
fail-on                  ``error``, ``warning`` or ``info``        ``--fail-on``
baseline                 baseline file                             ``--baseline``
select                   finding codes or prefixes to report       ``--select``
extend-select            codes or prefixes added to ``select``     ``--extend-select``
ignore                   codes or prefixes not to report           ``--ignore``
markdown                 list of globs of Markdown notes files     ``--notation`` (all or none)
extend                   another configuration file, its keys      none
                         taken where this file gives none
per-file-ignores         table of globs of notes files to lists    none
                         of codes or prefixes not to report there
extend-per-file-ignores  more such globs, added to                 none
                         ``per-file-ignores``
include                  globs of the notes files a folder gives   (``files.default_include``)
force-exclude            true: ``exclude`` drops named files too   ``--force-exclude``
respect-gitignore        false: walked folders give git-ignored    ``--no-respect-gitignore``
                         notes files too (default true)
=======================  ========================================  =======================

Paths in the file (``roots``, ``baseline``, ``cache-dir``, ``extend``) are relative to the
folder of the file that holds them. ``extend`` names a file of either form (a
``pyproject.toml`` with the table, or keys at the top level); its own ``extend`` is
followed in turn, a cycle is a ``ConfigError`` naming the files; an ``extend-*`` key adds
to the extended file's. ``markdown`` names the notes files read as Markdown notes (SPEC.md
§Notation, Markdown notes; default ``markdown_notes.DEFAULT_GLOBS``: ``CLAUDE.md``,
``AGENTS.md``, ``**/.cursor/rules/*.mdc`` …; ``[]`` reads every file as brain notation);
``--notation markdown|brain`` reads every file one way instead. ``exclude``, ``include``
and ``per-file-ignores`` globs match a notes file's path below the folder of the file
(``read.files.relative``, as ruff's project root), never the path as typed; a
``per-file-ignores`` glob matches as an ``exclude`` glob does (``read.files.is_excluded``),
its codes checked as ``ignore``'s, and the findings it leaves out are not reported.
Options given on the command line override the file. An unknown key or a bad value is a
``ConfigError`` naming the file and the key (the CLI exits 2).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from reprlib import recursive_repr

from brainmigrate import inputs
from brainmigrate.codes import CODES, LEVELS
from brainmigrate.configfiles import SOURCES, ConfigError, _parse, _shown, find
from brainmigrate.model import KINDS
from brainmigrate.patterns import lazy

__all__ = ["SOURCES", "ConfigError", "Settings", "find", "load", "parse"]

KEYS = (
    "baseline",
    "cache-dir",
    "exclude",
    "extend",
    "extend-exclude",
    "extend-per-file-ignores",
    "extend-select",
    "fail-on",
    "force-exclude",
    "ignore",
    "include",
    "markdown",
    "per-file-ignores",
    "plus-kind",
    "respect-gitignore",
    "roots",
    "scope",
    "select",
    "task-pattern",
)
#: A finding code or a prefix of one, as ``select`` and ``ignore`` take them (``BM1``).
CODE_PREFIX = lazy(r"BM[0-9]{0,3}")


@dataclass(frozen=True, kw_only=True, init=False, repr=False, eq=False)
class Settings:
    """What a command runs with; ``source`` names the file the values came from (or None)
    and ``notes`` what a person should know about how it was found.

    ``select`` is None for every code; ``exclude`` and ``extend_exclude`` are both applied.
    ``markdown`` is None for the default globs of Markdown notes files.
    """

    roots: tuple[str, ...] = ()
    task_pattern: str | None = None
    plus_kind: str | None = None
    fail_on: str = "error"
    exclude: tuple[str, ...] = ()
    baseline: str | None = None
    source: str | None = None
    scope: str | None = None
    cache_dir: str | None = None
    extend_exclude: tuple[str, ...] = ()
    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    #: the file ``roots`` came from (None: the command line, or none given)
    roots_from: str | None = None
    markdown: tuple[str, ...] | None = None
    #: ``(glob, codes)`` pairs: findings of those codes (or prefixes) in notes files the
    #: glob matches are not reported
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    extend_per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    #: ``include`` (None: today's ``*.md``/``*.mdc``), ``force-exclude``, ``respect-gitignore``
    include: tuple[str, ...] | None = None
    force_exclude: bool = False
    respect_gitignore: bool = True

    # --- generated by tools/records.py from the fields above; do not edit ---
    # fmt: off
    def __init__(
        self, *, roots=(), task_pattern=None, plus_kind=None, fail_on="error", exclude=(),
        baseline=None, source=None, scope=None, cache_dir=None, extend_exclude=(), select=None,
        extend_select=(), ignore=(), notes=(), roots_from=None, markdown=None, per_file_ignores=(),
        extend_per_file_ignores=(), include=None, force_exclude=False, respect_gitignore=True,
    ) -> None:
        object.__setattr__(self, "roots", roots)
        object.__setattr__(self, "task_pattern", task_pattern)
        object.__setattr__(self, "plus_kind", plus_kind)
        object.__setattr__(self, "fail_on", fail_on)
        object.__setattr__(self, "exclude", exclude)
        object.__setattr__(self, "baseline", baseline)
        object.__setattr__(self, "source", source)
        object.__setattr__(self, "scope", scope)
        object.__setattr__(self, "cache_dir", cache_dir)
        object.__setattr__(self, "extend_exclude", extend_exclude)
        object.__setattr__(self, "select", select)
        object.__setattr__(self, "extend_select", extend_select)
        object.__setattr__(self, "ignore", ignore)
        object.__setattr__(self, "notes", notes)
        object.__setattr__(self, "roots_from", roots_from)
        object.__setattr__(self, "markdown", markdown)
        object.__setattr__(self, "per_file_ignores", per_file_ignores)
        object.__setattr__(self, "extend_per_file_ignores", extend_per_file_ignores)
        object.__setattr__(self, "include", include)
        object.__setattr__(self, "force_exclude", force_exclude)
        object.__setattr__(self, "respect_gitignore", respect_gitignore)

    @recursive_repr()
    def __repr__(self) -> str:
        return (
            f"{self.__class__.__qualname__}(roots={self.roots!r}, "
            f"task_pattern={self.task_pattern!r}, plus_kind={self.plus_kind!r}, "
            f"fail_on={self.fail_on!r}, exclude={self.exclude!r}, baseline={self.baseline!r}, "
            f"source={self.source!r}, scope={self.scope!r}, cache_dir={self.cache_dir!r}, "
            f"extend_exclude={self.extend_exclude!r}, select={self.select!r}, "
            f"extend_select={self.extend_select!r}, ignore={self.ignore!r}, notes={self.notes!r}, "
            f"roots_from={self.roots_from!r}, markdown={self.markdown!r}, "
            f"per_file_ignores={self.per_file_ignores!r}, "
            f"extend_per_file_ignores={self.extend_per_file_ignores!r}, include={self.include!r}, "
            f"force_exclude={self.force_exclude!r}, respect_gitignore={self.respect_gitignore!r})"
        )

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return (
                self.roots, self.task_pattern, self.plus_kind, self.fail_on, self.exclude,
                self.baseline, self.source, self.scope, self.cache_dir, self.extend_exclude,
                self.select, self.extend_select, self.ignore, self.notes, self.roots_from,
                self.markdown, self.per_file_ignores, self.extend_per_file_ignores, self.include,
                self.force_exclude, self.respect_gitignore,
            ) == (
                other.roots, other.task_pattern, other.plus_kind, other.fail_on, other.exclude,
                other.baseline, other.source, other.scope, other.cache_dir, other.extend_exclude,
                other.select, other.extend_select, other.ignore, other.notes, other.roots_from,
                other.markdown, other.per_file_ignores, other.extend_per_file_ignores,
                other.include, other.force_exclude, other.respect_gitignore,
            )
        return NotImplemented

    def __hash__(self) -> int:
        return hash((
            self.roots, self.task_pattern, self.plus_kind, self.fail_on, self.exclude,
            self.baseline, self.source, self.scope, self.cache_dir, self.extend_exclude,
            self.select, self.extend_select, self.ignore, self.notes, self.roots_from,
            self.markdown, self.per_file_ignores, self.extend_per_file_ignores, self.include,
            self.force_exclude, self.respect_gitignore,
        ))
    # fmt: on
    # --- end generated ---

    def check_roots(self) -> None:
        """Raise ``ConfigError`` naming the file and key when ``roots`` came from a file and
        one of them is no folder (a typo there read as a bad --root before)."""
        if self.roots_from is None:
            return
        for root in self.roots:
            if not os.path.isdir(root):  # (False for a path too long, not an error)
                what = "is not a folder" if os.path.lexists(root) else "no such folder"
                raise ConfigError(
                    f"{self.roots_from}: key 'roots': {root}: {what} (a path there is"
                    " relative to the file's folder); fix the file or pass --root"
                )

    @property
    def file_ignores(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """Every ``(glob, codes)`` pair: ``per_file_ignores`` then
        ``extend_per_file_ignores``."""
        return self.per_file_ignores + self.extend_per_file_ignores

    @property
    def excludes(self) -> tuple[str, ...]:
        """Every exclude glob: ``exclude`` then ``extend_exclude``."""
        return self.exclude + self.extend_exclude

    def override(
        self,
        *,
        roots: Iterable[str] = (),
        task_pattern: str | None = None,
        plus_kind: str | None = None,
        fail_on: str | None = None,
        baseline: str | None = None,
        scope: str | None = None,
        cache_dir: str | None = None,
        exclude: Iterable[str] = (),
        extend_exclude: Iterable[str] = (),
        select: Iterable[str] = (),
        extend_select: Iterable[str] = (),
        ignore: Iterable[str] = (),
        force_exclude: bool | None = None,
        respect_gitignore: bool | None = None,
    ) -> Settings:
        """These settings with every option given on the command line (not empty) in place.

        ``roots``, ``exclude`` and ``select`` replace the file's; ``extend_exclude``,
        ``extend_select`` and ``ignore`` add to it. Raises ``ConfigError`` for a code that
        is no code or prefix.
        """
        given = {
            "roots": tuple(roots),
            "task_pattern": task_pattern,
            "plus_kind": plus_kind,
            "fail_on": fail_on,
            "baseline": baseline,
            "scope": scope,
            "cache_dir": cache_dir,
            "exclude": tuple(exclude),
            "select": _codes(split_list(select), "--select"),
        }
        out = replace(self, **{k: v for k, v in given.items() if v})
        if given["roots"]:
            out = replace(out, roots_from=None)
        if respect_gitignore is not None:
            out = replace(out, respect_gitignore=respect_gitignore)
        if force_exclude is not None:  # --force-exclude/--no-force-exclude
            out = replace(out, force_exclude=force_exclude)
        return replace(
            out,
            extend_exclude=out.extend_exclude + tuple(extend_exclude),
            extend_select=out.extend_select + _codes(split_list(extend_select), "--extend-select"),
            ignore=out.ignore + _codes(split_list(ignore), "--ignore"),
        )


def split_list(values: Iterable[str]) -> tuple[str, ...]:
    """Values of a repeatable option, each also split at commas (``--select BM1,BM2``)."""
    return tuple(v.strip() for value in values for v in value.split(",") if v.strip())


def _every_code(values: tuple[str, ...]) -> tuple[str, ...]:
    """``ALL`` (ruff's word for every rule) as the prefix of every code, ``BM``."""
    return tuple("BM" if v.upper() == "ALL" else v for v in values)


def _codes(values: tuple[str, ...], where: str) -> tuple[str, ...]:
    values = _every_code(values)
    for value in values:
        if not CODE_PREFIX.fullmatch(value):
            raise ConfigError(
                f"{where}: {value!r} is not a finding code or prefix (BM101, BM1, BM)"
            )
    return values


def load(
    folder: str | os.PathLike | None = None,
    *,
    config_file: str | os.PathLike | None = None,
    isolated: bool = False,
) -> Settings:
    """The settings that apply in ``folder`` (default: the current folder), found by
    ``find``; defaults when there is no file or with ``isolated``. ``config_file`` names the
    file to read instead (a ``pyproject.toml`` must hold ``[tool.brainmigrate]``). A file's
    ``extend`` names another whose keys it takes where it gives none (``_extended``).

    Raises ``ConfigError`` for a missing ``config_file``, invalid TOML, an unknown key or a
    bad value (the message names the file and the key), a missing extended file or a
    cycle of ``extend``.
    """
    if isolated:
        return Settings()
    note = ""
    if config_file is not None:
        path = Path(config_file)
        table = SOURCES[1][1] if path.name == "pyproject.toml" else None
        if not path.exists():
            raise ConfigError(f"--config {config_file}: no such file; check the path")
    else:
        try:
            path, table, note = find(folder)
        except LookupError:
            return Settings()
    data, where = _read(path, table, config_file)
    if data is None:
        return Settings()
    base = path.absolute().parent
    data = _extended(data, where, base, (path.absolute(),))
    settings = parse(data, where, base=base)
    return replace(settings, notes=(note,)) if note else settings


def _read(path: Path, table, config_file=None) -> tuple[dict | None, str]:
    """``(settings table, where)`` of the file at ``path``: ``table`` (None: its top level;
    for a ``config_file`` that is no ``pyproject.toml``, whichever it holds,
    ``_table_of``); None when a found ``pyproject.toml`` lacks the table. ``where`` names
    the file (and table) for messages. Raises ``ConfigError``."""
    name = _shown(path)
    import tomllib

    try:
        data = _parse(path)
    except inputs.NotAFile as exc:
        fix = "or pass --config with a file" if config_file is not None else "or pass --isolated"
        raise ConfigError(
            f"{name}: {exc.strerror}, not a file; replace it with a configuration file {fix}"
        ) from None
    except inputs.TooLarge as exc:
        raise ConfigError(f"{name}: {exc.strerror}; fix the file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{name}: cannot read it ({exc}); make it readable") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{name}: not valid TOML ({exc}); fix the file") from None
    except ConfigError as exc:
        raise ConfigError(f"{name}{exc}; fix the file") from None
    where = name
    if config_file is not None and table is None:
        table = _table_of(data, config_file)
    if table is not None:
        for key in table:
            data = data.get(key) if isinstance(data, dict) else None
        where = f"{name} [{'.'.join(table)}]"
        if data is None:
            if config_file is not None:
                raise ConfigError(
                    f"--config {config_file}: has no [tool.brainmigrate] table; add one or name"
                    " another file"
                )
            return None, where
        if not isinstance(data, dict):
            raise ConfigError(f"{where}: not a table; make it a table of settings")
    return data, where


#: The keys whose values are paths relative to the file's folder.
PATH_KEYS = ("roots", "baseline", "cache-dir")


def _extended(data: dict, where: str, base: Path, chain: tuple[Path, ...]) -> dict:
    """``data`` (the table of the file ``chain[-1]``, in folder ``base``) over the keys of
    the file its ``extend`` names (relative to ``base``; that file's own ``extend``
    followed in turn): its keys win, an ``extend-*`` key adds to the extended file's.
    The extended file's paths are made relative to ``base``, and it is checked on its own
    (``parse``) so that a bad value names it. Raises ``ConfigError`` for a missing file or
    a cycle, naming the files."""
    if "extend" not in data:
        return data
    own = dict(data)
    value = _string(own.pop("extend"), "extend", where)
    at = _relative_to(None, where)
    target = Path(at(value, "extend"))
    target = (target if target.is_absolute() else base / target).absolute()
    if target in chain or target.resolve() in {c.resolve() for c in chain}:
        cycle = " -> ".join(_shown(p) for p in (*chain, target))
        raise ConfigError(f"{where}: key 'extend': a cycle ({cycle}); remove one extend")
    if target.is_dir():
        raise ConfigError(
            f"{where}: key 'extend': {value}: is a folder; name a configuration file in it"
            f" ({_shown(target / '.brainmigrate.toml')} or {_shown(target / 'pyproject.toml')})"
        )
    if not target.is_file():
        raise ConfigError(
            f"{where}: key 'extend': {value}: no such file (a path there is relative to the"
            " file's folder); fix the path"
        )
    table = SOURCES[1][1] if target.name == "pyproject.toml" else None
    theirs, there = _read(target, table, _shown(target) if table is None else None)
    if theirs is None:
        raise ConfigError(
            f"{where}: key 'extend': {value}: has no [tool.brainmigrate] table; add one or"
            " extend another file"
        )
    theirs = _extended(theirs, there, target.parent, (*chain, target))
    parse(theirs, there, base=target.parent)  # a bad value there names that file
    merged = _rebased(theirs, target.parent, base)
    for key, v in own.items():
        if key.startswith("extend-") and key in merged:
            old = merged[key]
            merged[key] = (
                {**old, **v}
                if isinstance(old, dict) and isinstance(v, dict)
                else (old + v if isinstance(old, list) and isinstance(v, list) else v)
            )
        else:
            merged[key] = v
    return merged


def _rebased(data: dict, there: Path, here: Path) -> dict:
    """``data`` with its paths (``PATH_KEYS``, relative to folder ``there``) made relative
    to folder ``here``; an absolute path or one starting with ``~`` stays."""

    def moved(value):
        if not isinstance(value, str) or value.startswith("~") or os.path.isabs(value):
            return value
        return os.path.normpath(os.path.relpath(there / value, here))

    out = dict(data)
    for key in PATH_KEYS:
        if key in out:
            value = out[key]
            out[key] = [moved(v) for v in value] if isinstance(value, list) else moved(value)
    return out


def _table_of(data: dict, config_file) -> tuple[str, ...] | None:
    """The table a ``--config`` file that is no ``pyproject.toml`` keeps its settings in:
    ``[tool.brainmigrate]`` when it holds one (as ruff's ``--config`` takes a
    ``pyproject.toml``-like file of any name), else None (its top level). Raises
    ``ConfigError`` for a file holding both."""
    tool = data.get("tool")
    if not (isinstance(tool, dict) and "brainmigrate" in tool):
        if isinstance(tool, dict) and not any(k in KEYS for k in data):
            raise ConfigError(
                f"--config {config_file}: has no [tool.brainmigrate] table; add one or name"
                " another file"
            )
        return None
    others = sorted(k for k in data if k in KEYS)  # (a pyproject.toml copy holds [project])
    if others:
        raise ConfigError(
            f"--config {config_file}: holds [tool.brainmigrate] and settings at its top level"
            f" ({others[0]}); keep one of them"
        )
    return SOURCES[1][1]


def parse(data: dict, where: str = "configuration", base: Path | None = None) -> Settings:
    """Settings from a parsed table; ``where`` prefixes error messages; paths are relative
    to folder ``base`` (default: the current folder). Raises ``ConfigError``."""
    unknown = sorted(set(data) - set(KEYS))
    if unknown:
        raise ConfigError(
            f"{where}: unknown key {unknown[0]!r}; remove it or use one of {', '.join(KEYS)}"
        )
    at = _relative_to(base, where)
    values: dict = {"source": where}
    if "roots" in data:
        values["roots"] = tuple(at(r, "roots") for r in _strings(data["roots"], "roots", where))
        values["roots_from"] = where
        if not values["roots"]:
            raise ConfigError(f"{where}: key 'roots' is []; name at least one folder")
    if "include" in data:
        values["include"] = _strings(data["include"], "include", where)
    for key in ("force-exclude", "respect-gitignore"):
        if key in data and not isinstance(data[key], bool):
            raise ConfigError(f"{where}: key {key!r} is {data[key]!r}; give true or false")
        if key in data:
            values[key.replace("-", "_")] = data[key]
    if "markdown" in data:
        value = data["markdown"]
        values["markdown"] = () if value == [] else _strings(value, "markdown", where)
    for key in ("exclude", "extend-exclude"):
        if key in data:
            values[key.replace("-", "_")] = _strings(data[key], key, where)
    for key in ("select", "extend-select", "ignore"):
        if key in data:
            codes = _strings(data[key], key, where)
            codes = _codes(codes, f"{where}: key {key!r}")
            values[key.replace("-", "_")] = codes
    for key in ("per-file-ignores", "extend-per-file-ignores"):
        if key in data:
            values[key.replace("-", "_")] = _file_ignores(data[key], key, where)
    if "task-pattern" in data:
        values["task_pattern"] = _string(data["task-pattern"], "task-pattern", where)
        try:
            re.compile(values["task_pattern"])
        except re.error as exc:
            raise ConfigError(
                f"{where}: key 'task-pattern' is not a valid regular expression ({exc}); fix it"
            ) from None
    if "scope" in data:
        values["scope"] = _string(data["scope"], "scope", where)
    if "baseline" in data:
        values["baseline"] = at(_string(data["baseline"], "baseline", where), "baseline")
    if "cache-dir" in data:
        values["cache_dir"] = at(_string(data["cache-dir"], "cache-dir", where), "cache-dir")
    if "plus-kind" in data:
        values["plus_kind"] = _choice(data["plus-kind"], "plus-kind", KINDS, where)
    if "fail-on" in data:
        values["fail_on"] = _choice(data["fail-on"], "fail-on", LEVELS, where)
    return Settings(**values)


def _file_ignores(value, key: str, where: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The ``(glob, codes)`` pairs of a ``per-file-ignores`` table (``{"glob" = ["BM105"]}``),
    in the file's order. Raises ``ConfigError`` naming the file and the key."""
    if not isinstance(value, dict):
        raise ConfigError(
            f"{where}: key {key!r} is {value!r}; give a table of globs to lists of codes"
            ' ({ "notes/old/*.md" = ["BM101"] })'
        )
    out = []
    for glob, codes in value.items():
        if not glob.strip():
            raise ConfigError(f"{where}: key {key!r}: a blank glob; name the notes files")
        codes = _codes(_strings(codes, f"{key}.{glob}", where), f"{where}: key {key!r}")
        for code in codes:  # as ``ignore``'s codes (``rules.Selection``)
            if not any(known.startswith(code) for known in CODES):
                raise ConfigError(
                    f"{where}: key {key!r}: {code!r} matches no finding code; give one of"
                    f" {', '.join(CODES)}"
                )
        out.append((glob, codes))
    return tuple(out)


def _relative_to(base: Path | None, where: str):
    """A function ``at(value, key)`` that makes a path of the file (relative to ``base``,
    its folder) one that works from the current folder: a leading ``~`` or ``~user`` is
    that home folder (also in a file of the current folder), an absolute path stays as it
    is. A home folder of a user the system does not know raises ``ConfigError`` naming
    the file (``where``) and the key, rather than naming a folder ``~nouser`` there."""
    prefix = None if base is None or base == Path.cwd().absolute() else _shown(base)

    def at(value: str, key: str) -> str:
        if "\0" in value:
            raise ConfigError(
                f"{where}: key {key!r}: holds a NUL character, which no file name can; fix the file"
            )
        if value.startswith("~"):
            expanded = os.path.expanduser(value)
            if expanded.startswith("~"):
                user = value[1:].split("/", 1)[0]
                who = f"no such user {user!r}" if user else "no home folder (HOME is not set)"
                raise ConfigError(f"{where}: key {key!r}: {value}: {who}; fix the file")
            value = expanded
        if prefix is None or os.path.isabs(value):
            return value
        return os.path.normpath(os.path.join(prefix, value))

    return at


def _string(value, key: str, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{where}: key {key!r} is {value!r}; give a non-blank string")
    return value


def _strings(value, key: str, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ConfigError(f"{where}: key {key!r} is {value!r}; give a list of non-blank strings")
    return tuple(value)


def _choice(value, key: str, choices: tuple[str, ...], where: str) -> str:
    if value not in choices:
        raise ConfigError(f"{where}: key {key!r} is {value!r}; give one of {', '.join(choices)}")
    return value
