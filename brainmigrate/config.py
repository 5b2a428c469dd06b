"""Settings of ``brainmigrate check`` from a configuration file (docs/check.md, Configuration).

Looked for in one folder (the current one by default): ``.brainmigrate.toml`` (keys at the
top level) first, else ``[tool.brainmigrate]`` in ``pyproject.toml``. Keys:

============  =========================================  ===========================
key           value                                      command-line option
============  =========================================  ===========================
roots         list of folders, first wins                ``--root``
task-pattern  regular expression                         ``--task-pattern``
plus-kind     one of the kinds (``environment`` …)       ``--plus-kind``
fail-on       ``error``, ``warning`` or ``info``         ``--fail-on``
exclude       list of globs of notes files to skip       (none)
baseline      baseline file                              ``--baseline``
============  =========================================  ===========================

Options given on the command line override the file. An unknown key or a bad value is a
``ConfigError`` naming the key (the CLI exits 2).
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path

from brainmigrate.importer import InputError
from brainmigrate.model import KINDS

#: Severity levels ``fail-on`` accepts, highest first.
LEVELS = ("error", "warning", "info")
#: Where settings are looked for, in this order: (file name, table or None for top level).
SOURCES = ((".brainmigrate.toml", None), ("pyproject.toml", ("tool", "brainmigrate")))
KEYS = ("baseline", "exclude", "fail-on", "plus-kind", "roots", "task-pattern")


class ConfigError(InputError):
    """The configuration file cannot be read, or holds an unknown key or a bad value."""


@dataclass(frozen=True)
class Settings:
    """What ``check`` runs with; ``source`` names the file the values came from (or None)."""

    roots: tuple[str, ...] = ()
    task_pattern: str | None = None
    plus_kind: str | None = None
    fail_on: str = "error"
    exclude: tuple[str, ...] = ()
    baseline: str | None = None
    source: str | None = None

    def override(
        self,
        *,
        roots: tuple[str, ...] = (),
        task_pattern: str | None = None,
        plus_kind: str | None = None,
        fail_on: str | None = None,
        baseline: str | None = None,
    ) -> Settings:
        """These settings with every option given on the command line (not empty) in place."""
        given = {
            "roots": tuple(roots),
            "task_pattern": task_pattern,
            "plus_kind": plus_kind,
            "fail_on": fail_on,
            "baseline": baseline,
        }
        return replace(self, **{k: v for k, v in given.items() if v})


def load(folder: str | os.PathLike | None = None) -> Settings:
    """Read the settings of ``folder`` (default: the current folder); defaults when no file.

    Raises ``ConfigError`` for invalid TOML, an unknown key or a bad value (the message
    names the file and the key).
    """
    base = Path(folder) if folder is not None else Path.cwd()
    for name, table in SOURCES:
        path = base / name
        if not path.is_file():
            continue
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{name}: cannot read it ({exc}); make it readable") from None
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{name}: not valid TOML ({exc}); fix the file") from None
        where = name
        if table is not None:
            for key in table:
                data = data.get(key) if isinstance(data, dict) else None
            if data is None:
                continue
            where = f"{name} [{'.'.join(table)}]"
            if not isinstance(data, dict):
                raise ConfigError(f"{where}: not a table; make it a table of settings")
        return parse(data, where)
    return Settings()


def parse(data: dict, where: str = "configuration") -> Settings:
    """Settings from a parsed table; ``where`` prefixes error messages. Raises ``ConfigError``."""
    unknown = sorted(set(data) - set(KEYS))
    if unknown:
        raise ConfigError(
            f"{where}: unknown key {unknown[0]!r}; remove it or use one of {', '.join(KEYS)}"
        )
    values: dict = {"source": where}
    if "roots" in data:
        values["roots"] = _strings(data["roots"], "roots", where)
        if not values["roots"]:
            raise ConfigError(f"{where}: key 'roots' is []; name at least one folder")
    if "exclude" in data:
        values["exclude"] = _strings(data["exclude"], "exclude", where)
    if "task-pattern" in data:
        values["task_pattern"] = _string(data["task-pattern"], "task-pattern", where)
        try:
            re.compile(values["task_pattern"])
        except re.error as exc:
            raise ConfigError(
                f"{where}: key 'task-pattern' is not a valid regular expression ({exc}); fix it"
            ) from None
    if "baseline" in data:
        values["baseline"] = _string(data["baseline"], "baseline", where)
    if "plus-kind" in data:
        values["plus_kind"] = _choice(data["plus-kind"], "plus-kind", KINDS, where)
    if "fail-on" in data:
        values["fail_on"] = _choice(data["fail-on"], "fail-on", LEVELS, where)
    return Settings(**values)


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
