"""Which token texts are cited paths, and of what kind (SPEC.md §Anchors 1 and 2): pure
text, no file system. The resolver asks what the roots know about a ``"maybe"``.

Every function here is linear in its input (tests/test_linear.py).
"""

from __future__ import annotations

from brainmigrate.patterns import lazy

#: File names that are paths without an extension (SPEC.md §Anchors 1).
FILE_NAMES = frozenset(
    """Makefile GNUmakefile makefile Dockerfile Containerfile Jenkinsfile Vagrantfile Gemfile
    Rakefile Procfile Pipfile Brewfile Podfile Justfile justfile LICENSE LICENCE COPYING
    NOTICE AUTHORS CODEOWNERS README CHANGELOG CONTRIBUTING""".split()
)
#: The kinds ``cited_path`` and ``cited_link`` tell.
PATH_KINDS = ("file", "folder", "maybe")

_EXTENSION = lazy(r"[A-Za-z][A-Za-z0-9]*")
_SCHEME = lazy(r"[A-Za-z][A-Za-z0-9+.\-]+:")
_SCP = lazy(r"[^/@]+@[^/:]+:")
_BAZEL = lazy(r"(?:@[\w.\-]*)?//")
_NOT_PATH_CHARS = frozenset("*${}<>")
#: A ``\\`` that separates the segments of a Windows path: before a letter or digit.
_WINDOWS_SEP = lazy(r"\\[A-Za-z0-9]")
#: A Markdown backslash escape: ``\\`` before ASCII punctuation (``\\_``, ``\\-``, ``\\[``).
_MD_ESCAPE = lazy(r"\\(?=[!-/:-@\[-`{-~])")
#: A segment starting ``:name``: a route's parameter (``users/:id/edit``), no file.
_ROUTE_PARAM = lazy(r"(?:^|/):[A-Za-z_]")
#: A printf conversion that is no ``%XX`` escape: a placeholder (``%s``, ``%05d``).
_PRINTF = lazy(r"%(?![0-9A-Fa-f]{2})[-+ #0]*[0-9]*(?:\.[0-9]+)?[sdifuxXoeEgGc]")
#: A segment that is an ellipsis: a part of the path left out.
_ELIDED = lazy(r"(?:^|/)(?:\.{3,}|\u2026)(?:/|$)")
_ENV_VAR = lazy(r"(?:^|/)%[A-Za-z_][A-Za-z0-9_]*%(?:/|$)")


def has_extension(name: str) -> bool:
    """True when ``name`` ends in a dot, a letter, then letters or digits (``x.kt``)."""
    dot = name.rfind(".")
    return dot >= 0 and _EXTENSION.fullmatch(name, dot + 1) is not None


def _no_path(text: str) -> bool:
    """The not-a-path filters of SPEC.md §Anchors 1 on a POSIX text: a URL (``scheme://``,
    ``www.``, ``user@host:path``), ``* $ { } < >``, a ``%NAME%`` segment, a Bazel label.
    Where SPEC is silent, placeholders too: a path with an elided segment (``...`` or
    ``…``: ``webview-ui/.../validate.ts``, a glob in all but its spelling) and one starting
    ``path/to/`` (``path/to/test.py``, the stock example)."""
    if _NOT_PATH_CHARS.intersection(text):
        return True
    if ("..." in text or "…" in text) and _ELIDED.search(text):
        return True
    if text[:8].lower() == "path/to/":
        return True
    if ":" in text and (_SCHEME.match(text) or _ROUTE_PARAM.search(text)):
        return True  # data:image/png;base64,… ; localhost:3000/x ; src/:id.py (a route)
    if "%" in text and _PRINTF.search(text):
        return True  # a printf placeholder (src/%s.py); %XX escapes stay paths
    if text.startswith("www.") or "://" in text or _SCP.match(text):
        return True  # a URL, also inside a token (href="https://…", --url=https://…)
    if "%" in text and _ENV_VAR.search(text):
        return True
    return ":" in text and _BAZEL.match(text) is not None


def _names_something(posix: str) -> bool:
    """Whether a segment other than ``.``, ``..`` and empty ones is left (``/``, ``./``
    and ``../..`` name no file or folder of a root)."""
    return any(part not in ("", ".", "..") for part in posix.split("/"))


def cited_path(text: str) -> tuple[str, str] | None:
    """``(posix, kind)`` when ``text`` is a cited path by its shape, else None (SPEC.md
    §Anchors 1).

    ``posix`` is ``text`` with ``\\`` as ``/``. ``kind`` is:

    * ``"file"``: it holds ``/`` and its last segment has an extension or is a listed file
      name (``src/x.py``, ``docker/Dockerfile``);
    * ``"folder"``: it holds ``/`` and ends in ``/``; ``posix`` is given without the
      trailing ``/`` (``tools/legacy-import/`` → ``tools/legacy-import``);
    * ``"maybe"``: it holds ``/`` but its last segment has no extension (``bin/dev``,
      ``.husky/pre-push``, ``and/or``, ``origin/main``): a cited path only when a root
      knows it (the resolver asks).

    None when it holds no ``/``, when a not-a-path filter holds (a URL, ``* $ { } < >``, a
    ``%NAME%`` segment, a Bazel label), or when only ``.``, ``..`` and empty segments are
    left (``/``, ``./``, ``../``).
    """
    text = posix_of(text)
    if "/" not in text or _no_path(text):
        return None
    if text.endswith("/"):
        posix = text.rstrip("/")
        return (posix, "folder") if _names_something(posix) else None
    last = text[text.rfind("/") + 1 :]
    if has_extension(last) or last in FILE_NAMES:
        return text, "file"
    return (text, "maybe") if _names_something(text) else None


def posix_of(text: str) -> str:
    """``text`` with ``/`` for each Windows separator ``\\`` (SPEC.md §Anchors 1). Where SPEC
    is silent: in a text with no ``\\`` before a letter or digit (so no Windows path), a
    ``\\`` before ASCII punctuation is a Markdown escape and is dropped (``src/my\\_file.py``
    is ``src/my_file.py``, ``\\_\\_init\\_\\_.py`` is ``__init__.py``), and so is a last ``\\``
    (a hard line break)."""
    if "\\" not in text:
        return text
    if _WINDOWS_SEP.search(text) is None:
        text = _MD_ESCAPE.sub("", text)
        if text.endswith("\\"):
            text = text[:-1]
    return text.replace("\\", "/")


def cited_link(text: str) -> tuple[str, str] | None:
    """``(posix, kind)`` of a link target (a Markdown link's, ``mdc:``, an HTML
    ``href``/``src`` value, a reference's definition), else None (SPEC.md §Anchors 1: a
    link target without a scheme is a cited path even without ``/``).

    As ``cited_path``, and without ``/``: ``"file"`` for a name with an extension or a
    listed file name (``0021-ledger.md``, ``Makefile``), ``"maybe"`` for any other name
    (``setup``, ``app-shared``: SPEC.md §Anchors 2 anchors it as a folder a root holds).
    None for a target with a scheme (``mailto:``, ``https:``), an e-mail address, a
    ``www.`` host, ``* $ { } < >``, an in-page ``#fragment`` or ``?query``, and ``.``/``..``.
    """
    cited = cited_path(text)
    if cited is not None or "/" in text or "\\" in text:
        return cited  # a "/" text cited_path refused stays refused
    if not text or "@" in text or text.startswith(("www.", "#", "?", "[")):
        return None  # ([y]: a reference's definition naming another label is no path)
    if _SCHEME.match(text) or _NOT_PATH_CHARS.intersection(text) or text in (".", ".."):
        return None
    return (text, "file") if has_extension(text) or text in FILE_NAMES else (text, "maybe")


def path_like(text: str) -> str | None:
    """The POSIX form of ``text`` if it is a cited path of kind ``"file"`` (``cited_path``),
    else None (SPEC.md §Anchors 1).

    A cited path holds ``/`` (``\\`` counts as ``/``) and its last segment has an extension
    or is a listed file name (Makefile, Dockerfile, LICENSE ...). Not paths: URLs
    (``scheme://``, ``www.``, ``user@host:path``), tokens with ``* $ { } < >`` (globs,
    variables, placeholders), tokens with a ``%NAME%`` segment (Windows variables) and
    Bazel labels.
    """
    cited = cited_path(text)
    return cited[0] if cited is not None and cited[1] == "file" else None


def link_path(text: str) -> str | None:
    """A link target as a cited path of kind ``"file"`` (``cited_link``), else None: as
    ``path_like``, and also without ``/`` when it names a file (``0021-ledger.md``)."""
    cited = cited_link(text)
    return cited[0] if cited is not None and cited[1] == "file" else None


def glob_edge(raw: str) -> bool:
    """Whether ``raw``'s edge ``*`` make it a glob, not emphasis: ``*`` then ``/`` at its
    start (``**/skills/**``), or ``/`` then more ``*`` at its end than at its start
    (``src/*``, ``` `src/**` ```; ``**tools/**`` is a bold folder)."""
    core = raw.strip("`")
    head = len(core) - len(core.lstrip("*"))
    if head and core[head : head + 1] == "/":
        return True
    core = core.rstrip(".,;:!?)]\"'")
    tail = len(core) - len(core.rstrip("*"))
    return bool(tail) and core[-tail - 1 : -tail] == "/" and tail != head
