"""The configuration files of ``brainmigrate`` (docs/check.md, Configuration): which one
applies in a folder (``find``, as ruff finds its own) and reading one, bounded
(``_parse``); ``config`` makes settings of what they hold."""

from __future__ import annotations

import os
from pathlib import Path

from brainmigrate import inputs
from brainmigrate.read.files import InputError

#: Where settings are looked for, in this order: (file name, table or None for top level).
SOURCES = ((".brainmigrate.toml", None), ("pyproject.toml", ("tool", "brainmigrate")))


class ConfigError(InputError):
    """The configuration file cannot be read, or holds an unknown key or a bad value."""


def find(start: str | os.PathLike | None = None) -> tuple[Path, tuple[str, ...] | None, str]:
    """The configuration file that applies in folder ``start`` (default: the current one):
    ``(path, table or None, note)``; ``note`` is "" unless the folder also holds the other
    file. Raises ``LookupError`` when there is none."""
    base = Path(start if start is not None else Path.cwd()).absolute()
    for folder in (base, *base.parents):
        found = [(folder / name, table) for name, table in SOURCES if _holds(folder / name, table)]
        if found:
            path, table = found[0]
            note = ""
            if len(found) > 1:
                note = (
                    f"{_shown(path)} is used; [tool.brainmigrate] in "
                    f"{_shown(found[1][0])} is ignored (one folder holds both)"
                )
            return path, table, note
        if (folder / ".git").exists():
            break
    raise LookupError("no configuration file")


def _holds(path: Path, table: tuple[str, ...] | None) -> bool:
    """True when ``path`` is a file and, for a table, the file holds it (a file that cannot
    be read or parsed is taken, so its error is reported: a FIFO or device too, refused
    unread, never skipped)."""
    if not path.exists() or path.is_dir():
        return False
    if table is None or not path.is_file():
        return True

    try:
        data = _parse(path)
    except (OSError, ValueError, RecursionError, ConfigError):
        return True
    for key in table:
        data = data.get(key) if isinstance(data, dict) else None
    return data is not None


def _parse(path: Path) -> dict:
    """The TOML document of the file at ``path``, read through ``inputs.read_bounded``
    (at most ``inputs.SMALL_FILE_MAX`` bytes). Raises what the read raises,
    ``UnicodeDecodeError``, ``tomllib.TOMLDecodeError``, and ``ConfigError`` holding what
    follows the file's name (``":line:col: reason"``) for nesting past
    ``inputs.MAX_DEPTH`` or an integer too long to convert (``inputs.structure_fault``).
    """
    import tomllib

    text = inputs.read_bounded(path, inputs.SMALL_FILE_MAX, "a configuration file")
    text = text.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")  # as read_text
    fault = inputs.structure_fault(text, "toml")
    if fault is None:
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            raise
        except (ValueError, RecursionError) as exc:
            fault = inputs.structure_fault(text, "toml", numbers=True)
            if fault is None:
                raise ConfigError(f": not valid TOML ({exc})") from None
    line, col, reason = fault
    raise ConfigError(f":{line}:{col}: {reason}")


def _shown(path: Path) -> str:
    """``path`` as a person reads it: relative to the current folder when below or beside it."""
    try:
        return os.path.relpath(path)
    except ValueError:  # another drive
        return str(path)
