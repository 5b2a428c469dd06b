"""Languages the index understands: file extensions, query texts, lazily compiled queries.

Query texts live as data in ``queries/<language>.scm``. A line ``; include: <file>`` pulls
in a shared file (``_js_common``, ``_c_common``) before the rest of the text. Each query
uses the capture convention ``@def.<kind>`` (declaration node, its fine kind), ``@name``,
``@body`` (optional body node) and, for Go methods, ``@receiver``.
"""

from __future__ import annotations

import functools
import hashlib
import re
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Parser, Query

QUERY_DIR = Path(__file__).with_name("queries")

#: Lower-cased file extension -> tree-sitter language name. ``.h`` is decided per root by
#: :func:`language_for` (C++ when the root holds C++ sources, else C).
EXTENSIONS: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".kt": "kotlin",
    ".kts": "kotlin",
    ".java": "java",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".go": "go",
    ".rs": "rust",
    ".cs": "csharp",
    ".rb": "ruby",
    ".c": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hpp": "cpp",
    ".hh": "cpp",
    ".hxx": "cpp",
    ".swift": "swift",
    ".php": "php",
    ".scala": "scala",
    ".sc": "scala",
}

#: Extensions whose presence in a root makes ``.h`` headers C++.
CPP_MARKERS = frozenset({".cc", ".cpp", ".cxx", ".hpp", ".hh", ".hxx"})

#: Language name -> query file stem (tsx shares the TypeScript query).
QUERY_FILE = {lang: lang for lang in set(EXTENSIONS.values())} | {"tsx": "typescript"}

LANGUAGES = frozenset(QUERY_FILE)

_INCLUDE = re.compile(r"^;\s*include:\s*(\S+)\s*$", re.MULTILINE)


def extension_of(path: str) -> str:
    """Lower-cased extension of a POSIX path's last segment, with the dot ('' if none)."""
    base = path.rpartition("/")[2]
    dot = base.rfind(".")
    return base[dot:].lower() if dot > 0 else ""


def language_for(path: str, headers_are_cpp: bool) -> str | None:
    """Tree-sitter language name for ``path``, or ``None`` when it is not a source file."""
    ext = extension_of(path)
    if ext == ".h":
        return "cpp" if headers_are_cpp else "c"
    return EXTENSIONS.get(ext)


@functools.cache
def query_text(language: str) -> str:
    """Full query text of a language, shared files included.

    Raises:
        KeyError: the language is not one of :data:`LANGUAGES`.
    """
    stem = QUERY_FILE[language]
    text = (QUERY_DIR / f"{stem}.scm").read_text(encoding="utf-8")
    parts = [
        (QUERY_DIR / f"{m.group(1)}.scm").read_text(encoding="utf-8")
        for m in _INCLUDE.finditer(text)
    ]
    return "\n".join([*parts, text])


@functools.cache
def namespace(extractor_version: int, max_bytes: int) -> str:
    """Cache namespace: extractor version, size limit, library versions, query texts.

    A cache written under another namespace is discarded. Shape: 32 hex characters.
    """
    import importlib.metadata  # when a cache is read or written (start-up)

    h = hashlib.blake2b(digest_size=16)
    h.update(f"{extractor_version}|{max_bytes}|".encode())
    for dist in ("tree-sitter", "tree-sitter-language-pack"):
        try:
            h.update(f"{dist}={importlib.metadata.version(dist)}|".encode())
        except importlib.metadata.PackageNotFoundError:
            h.update(f"{dist}=?|".encode())
    for lang in sorted(LANGUAGES):
        h.update(lang.encode() + b"\0" + query_text(lang).encode() + b"\0")
    return h.hexdigest()


@functools.cache
def parser_and_query(language: str) -> tuple[Parser, Query]:
    """A parser and the compiled declaration query of ``language`` (compiled once, on first use).

    Compiling costs 1–75 ms per language, so it is deferred until a file of the language is
    met. Raises ``KeyError`` for an unknown language.
    """
    from tree_sitter import Query
    from tree_sitter_language_pack import get_language, get_parser

    text = query_text(language)
    return get_parser(language), Query(get_language(language), text)
