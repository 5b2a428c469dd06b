"""Link-ish sources of cited paths (SPEC.md §Anchors): HTML ``href``/``src`` values,
reference-style links, ``file:`` URLs, and the parts of repository URLs and git remotes.

Pure text functions, each linear in its input (tests/test_linear.py); ``tokens`` turns
what they find into tokens, the resolver matches URL parts against a root's remotes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import NamedTuple

from brainmigrate.patterns import lazy
from brainmigrate.read import notation

# ------------------------------------------------------------------------------ HTML

#: A tag's start: ``<`` and a tag name (``<a``, ``<img``, ``<source``).
_TAG = lazy(r"<[A-Za-z][A-Za-z0-9-]*(?=[\s/>]|$)")
#: An attribute's name after whitespace (or a ``/`` of ``<img/src=...>``).
_ATTR_NAME = lazy(r"[\s/]+([^\s\"'<>/=]+)")
_EQUALS = lazy(r"\s*=\s*")
_UNQUOTED = lazy(r"[^\s\"'=<>`]+")
#: Attributes whose value is a link target (SPEC.md §Anchors).
LINK_ATTRIBUTES = frozenset({"href", "src"})


def may_hold_html(text: str) -> bool:
    """Cheap pre-test for ``html_targets``: a ``<`` and an ``=`` (linear, in C)."""
    return "<" in text and "=" in text


def html_targets(text: str) -> list[tuple[int, int, int, int]]:
    """The ``href``/``src`` attribute values of the HTML tags in ``text`` (SPEC.md §Anchors:
    "the value of an href or src attribute of an HTML tag written in a fact").

    Returns, in order, ``(start, end, blank_start, blank_end)`` 0-based: ``text[start:end]``
    is the value as written (quoted with ``"`` or ``'``, spaces and all, or unquoted), and
    ``[blank_start, blank_end)`` the value with its quotes. Attribute names are matched
    without case (``HREF=``). A quote left open ends the scan of the line (its value runs
    past the line: no value). Empty values are left out. Linear: each character is read a
    bounded number of times.
    """
    out: list[tuple[int, int, int, int]] = []
    n = len(text)
    pos = 0
    while pos < n:
        tag = _TAG.search(text, pos)
        if tag is None:
            break
        i = tag.end()
        while i < n:
            attr = _ATTR_NAME.match(text, i)
            if attr is None:
                break
            name = attr.group(1).lower()
            i = attr.end()
            eq = _EQUALS.match(text, i)
            if eq is None or eq.end() == i and text[i : i + 1] != "=":
                continue
            i = eq.end()
            if i < n and text[i] in "\"'":
                close = text.find(text[i], i + 1)
                if close < 0:
                    return out  # an open quote: nothing more on this line is a tag
                start, end, blank = i + 1, close, (i, close + 1)
                i = close + 1
            else:
                value = _UNQUOTED.match(text, i)
                if value is None:
                    break
                start, end = value.span()
                blank = (start, end)
                i = end
            if name in LINK_ATTRIBUTES and end > start:
                out.append((start, end, *blank))
        pos = max(i, tag.end())
    return out


# ------------------------------------------------------------------------------ references

#: A bracketed text and an optional second bracket: ``[text]``, ``[text][label]``,
#: ``[text][]``. Brackets do not nest (a ``[`` or ``]`` ends the text).
_REFERENCE = lazy(r"\[([^\[\]\n]*)\](?:\[([^\[\]\n]*)\])?")
#: A backtick span (as tokens.py reads one): no reference is read inside it.
_CODE = lazy(r"`[^`\n]+`")


def reference_links(text: str, references: Mapping[str, str]) -> list[tuple[int, int, str]]:
    """The reference-style links of ``text`` that cite a definition of ``references``
    (SPEC.md §Anchors, "Reference-style links").

    ``references`` maps a label normalized by ``notation.link_label`` to the definition's target as
    written. Returns, in order, ``(start, end, target)``: ``text[start:end]`` is the whole
    reference (a full ``[text][label]``, a collapsed ``[label][]``, a shortcut ``[label]``,
    each also after ``!``, the ``!`` left out). A full reference looks up its second label,
    the other two their text; a shortcut counts only when its label is defined and it is
    not followed by ``(`` (an inline link), ``[`` or ``:`` (a definition). A bracket right
    after ``[`` or ``\\`` or right before ``]`` (``[[wiki]]``, ``\\[x]``) and a footnote
    ``[^1]`` are no references, nor is a bracket inside a backtick span (code). Labels no
    definition holds cite nothing. Linear.
    """
    out: list[tuple[int, int, str]] = []
    if not references or "[" not in text:
        return out
    n = len(text)
    code = [m.span() for m in _CODE.finditer(text)] if "`" in text else []
    at = 0  # the first code span that may hold the next match (matches come in order)
    for m in _REFERENCE.finditer(text):
        start, end = m.span()
        while at < len(code) and code[at][1] <= start:
            at += 1
        if at < len(code) and code[at][0] < start:
            continue  # inside a backtick span: code, no link
        if start > 0 and text[start - 1] in "[\\":
            continue
        if end < n and text[end] == "]":
            continue
        second = m.group(2)
        if second is None:
            if end < n and text[end] in "([:":
                continue
            label = m.group(1)
        elif second.strip():
            label = second
        else:
            label = m.group(1)
        if not label.strip() or label.lstrip().startswith("^"):
            continue
        target = references.get(notation.link_label(label))
        if target:
            out.append((start, end, target))
    return out


# ------------------------------------------------------------------------------ file URLs

_DRIVE = lazy(r"/[A-Za-z]:(?:[/\\]|$)")


def file_url_path(text: str) -> int | None:
    """Where the absolute path a ``file:`` URL names starts in ``text``, or None when
    ``text`` is no ``file:`` URL (SPEC.md §Anchors: "a file: URL is the absolute path it
    names").

    ``file:///home/u/x.py`` → the offset of ``/home/u/x.py``; ``file:///D:/dev/x.php`` and
    ``file:/D:/dev/x.php`` → of ``D:/dev/x.php``; ``file://localhost/srv/x`` → of
    ``/srv/x``; ``file://host/share/x`` → of ``//host/share/x`` (a UNC path);
    ``file:/home/x`` → of ``/home/x``. The path is left as written: its ``%XX`` escapes
    are decoded by the lookup, which tries a path once more percent-decoded.
    """
    if text[:5].lower() != "file:":
        return None
    at = 5
    if text.startswith("//", at):
        host_end = text.find("/", at + 2)
        host = text[at + 2 : host_end if host_end >= 0 else len(text)]
        if host == "" or host.lower() == "localhost":
            if host_end < 0:
                return None
            at = host_end
        # else: //host/share… as written
    if at >= len(text) or text[at] != "/":
        return None
    if _DRIVE.match(text, at):
        at += 1
    return at


# ------------------------------------------------------------------------------ URLs

#: A URL's start: a scheme and ``://`` (SPEC.md §Anchors 1: "URLs (scheme://…)").
URL_START = lazy(r"[A-Za-z][A-Za-z0-9+.\-]*://")
_SCP_REMOTE = lazy(r"(?:[^@/\s]+@)?(?P<host>[^:/\s]+):(?P<path>(?!//)[^\s]+)")


class RepoUrl(NamedTuple):
    """A URL that names a file or folder of a hosted repository (``repo_url_parts``)."""

    host: str
    owner: str
    repo: str
    path: str
    ref: str


def _host(netloc: str) -> str:
    """``netloc`` without user info and port, lower-case, without a leading ``www.``."""
    host = netloc.rsplit("@", 1)[-1]
    # an IPv6 literal keeps its colons
    host = host[: host.find("]") + 1] if host.startswith("[") else host.split(":", 1)[0]
    host = host.lower()
    return host[4:] if host.startswith("www.") else host


def _repo_name(name: str) -> str:
    name = name.lower()
    return name[:-4] if name.endswith(".git") else name


def repo_url_parts(url: str) -> RepoUrl | None:
    """``(host, owner, repo, path, ref)`` of a URL into a hosted repository, or None
    (SPEC.md §Anchors 1, "Links into the root's own repository").

    The forms: ``https://HOST/o/r/blob/REF/PATH``, ``…/tree/REF/PATH``, ``…/raw/REF/PATH``,
    GitLab's ``…/-/blob/REF/PATH`` (also ``/-/tree/``, ``/-/raw/``; the owner may be a group
    path ``g/sub``) and ``https://raw.githubusercontent.com/o/r/REF/PATH`` (host given as
    ``github.com``). ``http:`` counts as ``https:``. REF is one segment. ``host``, ``owner``
    and ``repo`` are lower-case, ``repo`` without ``.git``, host without user info, port
    or ``www.`` (as ``remote_parts`` gives them); ``path`` is as written after REF (no
    leading ``/``, a trailing ``/`` kept, ``%XX`` escapes kept), with any ``?query`` and
    ``#fragment`` dropped. None when no PATH follows REF.
    """
    m = re.match(r"(?i:https?)://([^/?#\s]+)/([^?#\s]*)", url)
    if m is None:
        return None
    host = _host(m.group(1))
    parts = m.group(2).split("/")
    if host == "raw.githubusercontent.com":
        if len(parts) < 4 or not all(parts[:3]) or not parts[3]:
            return None
        return RepoUrl(
            "github.com", parts[0].lower(), _repo_name(parts[1]), _rest(parts, 3), parts[2]
        )
    for i, part in enumerate(parts):
        if part not in ("blob", "tree", "raw") or i + 2 >= len(parts):
            continue
        owner_end = i - 1 if i >= 1 and parts[i - 1] == "-" else i
        if owner_end < 2 or not all(parts[:owner_end]) or not parts[i + 1]:
            continue
        path = _rest(parts, i + 2)
        if not path:
            return None
        owner = "/".join(parts[: owner_end - 1]).lower()
        return RepoUrl(host, owner, _repo_name(parts[owner_end - 1]), path, parts[i + 1])
    return None


def _rest(parts: list[str], start: int) -> str:
    return "/".join(parts[start:])


def remote_parts(remote: str) -> tuple[str, str, str] | None:
    """``(host, owner, repo)`` of a git remote URL, or None (SPEC.md §Anchors 1: remotes
    compared without case and without ``.git``).

    The forms: ``https://host/o/r(.git)`` (also ``http:``, ``git:``,
    ``ssh://git@host[:port]/o/r``) and scp-like ``git@host:o/r(.git)`` (not ``C:/…``, a
    drive). All three parts lower-case; host without user info, port or ``www.``;
    ``repo`` without ``.git`` and trailing ``/``; ``owner`` may be a group path
    (``group/sub``). None for a local path or a URL with fewer than two path
    segments.
    """
    remote = remote.strip()
    m = URL_START.match(remote)
    if m is not None:
        if m.group().lower() == "file://":
            return None
        rest = remote[m.end() :]
        slash = rest.find("/")
        if slash < 0:
            return None
        host, path = _host(rest[:slash]), rest[slash + 1 :]
    else:
        scp = _SCP_REMOTE.fullmatch(remote)
        if scp is None or len(scp.group("host")) < 2:
            return None  # no remote, or a Windows drive (C:/git/o/r), as git reads it
        host, path = _host(scp.group("host")), scp.group("path")
    segments = [s for s in path.split("?", 1)[0].split("#", 1)[0].split("/") if s]
    if len(segments) < 2 or not host:
        return None
    repo = _repo_name(segments[-1])
    if not repo:
        return None
    return host, "/".join(segments[:-1]).lower(), repo


def names_target(label: str, target: str) -> bool:
    """Whether a link's ``label`` (``[pkg/realtime/AGENTS.md](../../x/pkg/realtime/AGENTS.md)``)
    only shows its target: the label, without backticks, is the target's path or a tail of
    it at a ``/``. Such a label is no second citation."""
    shown = label.strip("`").replace("\\", "/")
    while shown.startswith("./"):
        shown = shown[2:]
    path = target.strip().strip("<>").replace("\\", "/")
    if not shown or "/" not in shown:
        return False
    return path == shown or path.endswith("/" + shown)
