"""Pure readers of what a root's own files say about its paths (SPEC.md §Anchors 1).

No file system here: each function takes text and returns a table. (A git remote's and a
repository URL's parts are ``links.remote_parts``/``links.repo_url_parts``.)

* ``aliases`` — a ``tsconfig.json``/``jsconfig.json``'s ``compilerOptions.paths`` patterns
  with one ``*``, made root-relative (``"@/*": ["./src/*"]`` → ``("@/", "", ("src/",))``);
* ``package_name`` — the ``name`` of a ``package.json``;
* ``heading_anchors`` — the fragments a Markdown file answers to (GitHub's heading slugs,
  ``-1``/``-2`` for repeats, ``id``/``name`` attributes, ``{#id}``).
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Iterable

#: An alias: text before the ``*``, text after it, root-relative targets (each as the text
#: before and after its own ``*``).
Alias = tuple[str, str, tuple[tuple[str, str], ...]]


def loose_json(text: str) -> object | None:
    """``text`` parsed as JSON with ``//`` and ``/* */`` comments and trailing commas
    allowed (as TypeScript reads ``tsconfig.json``); None when it is no JSON then."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            i = j + 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        elif c == ",":
            j = i + 1
            while j < n and text[j] in " \t\r\n":
                j += 1
            if j < n and text[j] in "}]":
                i += 1  # a trailing comma
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    try:
        return json.loads("".join(out))
    except (ValueError, RecursionError):
        return None


def _star(pattern: str) -> tuple[str, str] | None:
    if pattern.count("*") != 1:
        return None
    before, _, after = pattern.partition("*")
    return before, after


def aliases(text: str, folder: str = "") -> list[Alias]:
    """The path aliases of a ``tsconfig.json`` or ``jsconfig.json`` in root-relative folder
    ``folder``: patterns with one ``*`` under ``compilerOptions.paths``, their targets
    relative to ``compilerOptions.baseUrl`` (else to the file's folder), made root-relative;
    targets that climb above the root are dropped. Longest pattern first (as TypeScript
    picks the longest prefix). Per SPEC.md §Anchors 1 "Aliases and workspace packages"."""
    data = loose_json(text)
    options = data.get("compilerOptions") if isinstance(data, dict) else None
    if not isinstance(options, dict) or not isinstance(options.get("paths"), dict):
        return []
    base_url = options.get("baseUrl")
    base = posixpath.join(folder, base_url) if isinstance(base_url, str) else folder
    out: list[Alias] = []
    for pattern, targets in options["paths"].items():
        star = _star(pattern) if isinstance(pattern, str) else None
        if star is None or not star[0] or not isinstance(targets, list):
            continue
        made = []
        for target in targets:
            parts = _star(target) if isinstance(target, str) else None
            if parts is None:
                continue
            head = posixpath.normpath(posixpath.join(base or ".", parts[0] or "."))
            if head == ".." or head.startswith("../") or head.startswith("/"):
                continue
            head = "" if head == "." else head
            if parts[0].endswith("/") or not parts[0]:
                head = head + "/" if head else ""
            made.append((head, parts[1]))
        if made:
            out.append((star[0], star[1], tuple(made)))
    out.sort(key=lambda a: -len(a[0]))
    return out


def package_name(text: str) -> str | None:
    """The ``name`` of a ``package.json``, or None."""
    data = loose_json(text)
    name = data.get("name") if isinstance(data, dict) else None
    return name if isinstance(name, str) and name else None


# ------------------------------------------------------------------------------ headings

_ATX = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*\Z")
_SETEXT = re.compile(r" {0,3}(?:=+|-+)[ \t]*\Z")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_ATTR_ID = re.compile(r"\{#([^\s}]+)[^}]*\}\s*\Z")
_HTML_ID = re.compile(r"""\b(?:id|name)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))""")
_TAGS = re.compile(r"<[^>\n]*>")
_IMAGES = re.compile(r"!\[[^\]]*\]\([^)]*\)")
_LINKS = re.compile(r"\[([^\]]*)\]\([^)]*\)")
#: A line that starts a list item, a quote or a table row: no setext heading's text.
_BLOCK_START = re.compile(r" {0,3}(?:[-*+>|]|\d+[.)])(?:\s|\Z)")
_SLUG_DROP = re.compile(r"[^\w\- ]")


def slug(text: str) -> str:
    """GitHub's slug of a heading's text: images dropped (they hold no text, so a badge
    after the title leaves its space: ``Choosing a task [![chat](b.svg)](url)`` is
    ``choosing-a-task-``), inline links read as their text, HTML tags dropped, lower case,
    characters other than letters, digits, ``-``, ``_`` and spaces removed, spaces to
    ``-`` (SPEC.md §Anchors 1 "Lines and fragments are checked")."""
    text = _LINKS.sub(r"\1", _IMAGES.sub("", _TAGS.sub("", text.strip())))
    return _SLUG_DROP.sub("", text.lower()).replace(" ", "-")


def heading_anchors(lines: Iterable[str]) -> frozenset[str]:
    """Every fragment a Markdown file's lines answer to: each heading's slug (ATX and
    setext headings outside fenced code; a repeat gets ``-1``, ``-2`` …), each ``{#id}``
    attribute and each HTML ``id``/``name`` attribute value."""
    seen: dict[str, int] = {}
    out: set[str] = set()
    fence = ""
    previous = ""

    def add(text: str) -> None:
        explicit = _ATTR_ID.search(text)
        if explicit:
            out.add(explicit.group(1))
            text = text[: explicit.start()]
        base = slug(text)
        count = seen.get(base, 0)
        seen[base] = count + 1
        out.add(base if count == 0 else f"{base}-{count}")

    for raw in lines:
        line = raw.rstrip("\r\n")
        m = _FENCE.match(line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = ""
            previous = ""
            continue
        if m:
            fence = m.group(1)
            previous = ""
            continue
        for hit in _HTML_ID.finditer(line):
            out.add(next(g for g in hit.groups() if g is not None))
        atx = _ATX.match(line)
        if atx:
            add(atx.group(2) or "")
            previous = ""
            continue
        if previous and _SETEXT.match(line):
            add(previous)
            previous = ""
            continue
        previous = "" if _BLOCK_START.match(line) else line.strip()
    out.discard("")
    return frozenset(out)
