"""Languages the index understands: file extensions, query texts, lazily compiled queries.

Query texts live as data in ``queries/<language>.scm``. A line ``; include: <file>`` pulls
in a shared file (``_js_common``, ``_c_common``) before the rest of the text. Each query
uses the capture convention ``@def.<kind>`` (declaration node, its fine kind), ``@name``,
``@body`` (optional body node) and, for Go methods, ``@receiver``.
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from brainmigrate.digests import blake2b
from brainmigrate.patterns import lazy

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

_INCLUDE = lazy(r"^;\s*include:\s*(\S+)\s*$", re.MULTILINE)


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


#: Per language, the shapes a type or function declaration of a name takes in the source
#: bytes (``NAME`` stands for the name). A file is parsed for a name only when one matches:
#: a prefilter before tree-sitter, as loose as need be to miss no declaration the query
#: finds of category ``type`` or ``function`` (the ones a name anchors to; SPEC §Anchors 3).
#: A test checks that on real trees it gives what parsing every file gives.
_KEYWORD_LINE = r"\b(?:{kw})\b[^\n]*\bNAME\b"  # a keyword, then the name on the same line
DECLARATION_SHAPES: dict[str, list[str]] = {
    "python": [r"\b(?:class|def)\s+NAME\b"],
    # func N, func (r *T[K]) N, type N; in a grouped `type ( ... )`, an interface's method
    # list or a struct: the name first on its line, then a type, `=`, `[`, `(` or `*`
    "go": [
        r"\bfunc\s*(?:\([^)]*\)\s*)?NAME\b",
        r"\btype\s+NAME\b",
        r"(?:^|(?<=\n))[ \t]*NAME[ \t]*(?:=|\[|\(|\*|[A-Za-z_])",
        r"[{;]\s*NAME\s*\(",  # a method of an inline interface{ Name(...) }
    ],
    "kotlin": [_KEYWORD_LINE.format(kw="class|interface|object|typealias|fun|constructor")],
    "java": [r"\b(?:class|interface|enum|record)\s+NAME\b", r"\bNAME\s*\("],
    "csharp": [
        _KEYWORD_LINE.format(kw="class|interface|struct|record|enum|delegate"),
        r"\bNAME\s*(?:<[^>\n]*>\s*)?\(",
    ],
    "typescript": [
        _KEYWORD_LINE.format(kw="class|interface|type|enum|function"),
        r"\bNAME\s*\??\s*[:=(<]",
    ],
    "rust": [r"\b(?:struct|enum|union|trait|type|fn)\s+NAME\b"],
    "ruby": [_KEYWORD_LINE.format(kw="class|def")],
    "swift": [
        _KEYWORD_LINE.format(
            kw="class|struct|enum|protocol|actor|extension|typealias|func|init|deinit"
        )
    ],
    "php": [r"\b(?:class|interface|trait|enum|function)\s+&?\s*NAME\b"],
    "scala": [_KEYWORD_LINE.format(kw="class|object|trait|enum|type|def|given")],
    "c": [
        _KEYWORD_LINE.format(kw="struct|union|enum|typedef"),
        r"\bNAME\s*[(;\[)]",
        r"[}*)(]\s*NAME\b",
    ],
}
DECLARATION_SHAPES["tsx"] = DECLARATION_SHAPES["javascript"] = DECLARATION_SHAPES["typescript"]
DECLARATION_SHAPES["cpp"] = [
    _KEYWORD_LINE.format(kw="struct|union|enum|typedef|class|using|namespace"),
    *DECLARATION_SHAPES["c"][1:],
]
_PLAIN_NAME = lazy(r"[A-Za-z_][A-Za-z0-9_]*")
#: Names the index gives declarations that have none in the source (``extract``).
IMPLIED_NAMES = frozenset({"Companion", "constructor", "init", "deinit"})


#: A shape is looked for only in the lines around each mention of the name: this many
#: before the mention's line (a keyword or a receiver on a line of its own) and after it.
SHAPE_LINES_BEFORE = 3
SHAPE_LINES_AFTER = 1
#: Lines around a mention longer than this (minified code): the whole file is searched.
SHAPE_WINDOW_MAX = 8192


@functools.cache
def declaration_shape(language: str, name: str):
    """A test of a file's bytes: may it declare ``name`` as a type or function?

    ``None`` when there is no prefilter for the language or the name (not made of ASCII
    word characters, or a name the index gives a declaration that has none): then every
    file that mentions the name is parsed.

    The shapes are searched for in the lines around each mention of the name
    (:data:`SHAPE_LINES_BEFORE`, :data:`SHAPE_LINES_AFTER`), not in the whole file: a
    regular expression with no literal start scans a file at 20 MB/s, ``bytes.find`` at
    GB/s. What is found there is found in the whole file too (no shape looks ahead).
    """
    shapes = DECLARATION_SHAPES.get(language)
    if shapes is None or not _PLAIN_NAME.fullmatch(name) or name in IMPLIED_NAMES:
        return None
    text = "|".join(f"(?:{shape.replace('NAME', name)})" for shape in shapes)
    search = re.compile(text.encode("ascii")).search
    needle = name.encode("ascii")

    def test(data: bytes) -> bool:
        at = data.find(needle)
        line = -1
        while at >= 0:
            start = data.rfind(b"\n", 0, at) + 1
            if start != line:  # (mentions on one line share their lines)
                line = lo = start
                for _ in range(SHAPE_LINES_BEFORE):
                    if lo == 0:
                        break
                    lo = data.rfind(b"\n", 0, lo - 1) + 1
                hi = at
                for _ in range(SHAPE_LINES_AFTER + 1):
                    hi = data.find(b"\n", hi) + 1
                    if hi == 0:
                        hi = len(data)
                        break
                if hi - lo > SHAPE_WINDOW_MAX:
                    return search(data) is not None
                if search(data, lo, hi) is not None:
                    return True
            at = data.find(needle, at + len(needle))
        return False

    return test


#: Per language, where the declaration query need not look, as ``(depth, markers)``: a
#: cursor looks for declarations starting at most ``depth`` levels below the file's root,
#: and deeper only inside the top-level nodes that hold a syntax error or a marker. A
#: marker is a regular expression that starts with a keyword and matches as a whole word.
#: The rows are those of a query over the whole tree (a test compares); most of a file
#: (function bodies) is never visited. In Go, a declaration deeper than a top-level
#: ``type`` spec is a local ``type``, a field of a ``struct {…}`` or a method of an
#: ``interface {…}``; an empty ``struct{}`` or ``interface{}`` declares nothing.
QUERY_PRUNING: dict[str, tuple[int, tuple[str, ...]]] = {
    "go": (2, ("type", r"struct(?!\s*\{\s*\})", r"interface(?!\s*\{\s*\})")),
}


@functools.cache
def query_pruning(language: str) -> tuple[int, tuple[re.Pattern[bytes], ...]] | None:
    """:data:`QUERY_PRUNING` of ``language``, each marker compiled with a ``\\b`` after it
    (the caller checks the byte before: a keyword first is searched for fast), or ``None``."""
    found = QUERY_PRUNING.get(language)
    if found is None:
        return None
    depth, markers = found
    return depth, tuple(re.compile(m.encode("ascii") + rb"\b") for m in markers)


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
    """Cache namespace: extractor version, size limit, the installed tree-sitter libraries
    (``installed_build``), query texts.

    A cache written under another namespace is discarded. Shape: 32 hex characters.
    """
    h = blake2b(digest_size=16)
    h.update(f"{extractor_version}|{max_bytes}|".encode())
    for package in ("tree_sitter", "tree_sitter_language_pack"):
        h.update(f"{package}={installed_build(package)}|".encode("utf-8", "surrogateescape"))
    for lang in sorted(LANGUAGES):
        h.update(lang.encode() + b"\0" + query_text(lang).encode() + b"\0")
    return h.hexdigest()


def installed_build(package: str) -> str:
    """What tells one installation of ``package`` from another, without importing it:
    the name, size and modification time (ns) of each entry of its folder and of its
    ``bindings`` folder (compiled grammars), sorted. Installing another version rewrites
    them. ``?`` when the package is not found.

    Cheaper than ``importlib.metadata.version`` (35 ms: importing it and scanning every
    distribution), which ``index`` and name lookups used to pay at start-up (issue 14).
    """
    import importlib.util

    spec = importlib.util.find_spec(package)
    folders = list(spec.submodule_search_locations or []) if spec else []
    if not folders:
        return "?"
    parts = []
    for folder in (folders[0], os.path.join(folders[0], "bindings")):
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    if entry.name != "__pycache__":
                        st = entry.stat(follow_symlinks=False)
                        parts.append(f"{entry.name}:{st.st_size}:{st.st_mtime_ns}")
        except OSError:
            continue
    return ",".join(sorted(parts))


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
