"""Choosing the anchor of a CamelCase name among its declarations (SPEC §Anchors 3)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .model import Declaration


def resolve_symbol(
    decls: Sequence[Declaration], aliases: Callable[[str], str | None] | None = None
) -> tuple[str, list[Declaration]]:
    """Decide what a name's declarations anchor to, per SPEC §Anchors point 3.

    Type declarations (category ``"type"``) are looked at first; only when none exists do
    functions and methods (category ``"function"``) count; other kinds never do. Returns:

    * ``("unique", [d])`` when the chosen declarations all lie in one file; ``d`` is the
      first of them by (name line, first line);
    * ``("ambiguous", [d1, d2, …])`` when they lie in several files: the first declaration
      of each file, sorted by path;
    * ``("none", [])`` when nothing qualifies.

    ``aliases(path)`` says which file a path is a symbolic link to (a root-relative path),
    or None when it is no link: the declarations of a link and of the file it points to
    are one file's, so a class in ``pg.py`` and its alias ``pg_alias.py -> pg.py`` is
    unique, at ``pg.py``. Asked only when the declarations lie in several files.

    Raises:
        ValueError: the declarations do not all have the same name.
    """
    if len({d.name for d in decls}) > 1:
        raise ValueError("resolve_symbol expects declarations of a single name")
    chosen = [d for d in decls if d.category == "type"] or [
        d for d in decls if d.category == "function"
    ]
    if not chosen:
        return "none", []
    first: dict[str, Declaration] = {}
    for d in sorted(chosen, key=lambda d: (d.path, d.name_line, d.lines)):
        first.setdefault(d.path, d)
    if len(first) > 1 and aliases is not None:
        for path in list(first):
            target = aliases(path)
            if target is not None and target in first:  # a link to a file also declaring it
                del first[path]
    if len(first) == 1:
        return "unique", list(first.values())
    return "ambiguous", list(first.values())
