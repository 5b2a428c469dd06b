"""A cached tree-sitter declaration index of one checkout ("root").

Public API::

    from brainmigrate.codeindex import CodeIndex, Declaration, RootError, resolve_symbol

    idx = CodeIndex(root, cache_dir=None, *, use_cache=True, max_bytes=1_000_000, workers=2)
        # RootError (a ValueError) when root is missing or not a folder
    idx.root                                     # resolved root Path
    idx.listing_way -> "git" | "scandir"
    idx.files() -> list[str]                     # root-relative POSIX paths, sorted
    idx.files_named(name) -> list[str]           # sorted paths whose basename == name (NFC)
    idx.declarations_of(names) -> dict[str, list[Declaration]]
        # lazy: byte search of uncached source files, parses only files naming one of them
        # (in a pool of `workers` processes when many files are uncached); no digests
        # (None) unless idx.lookup_digests is set
    idx.lookup(name) -> list[Declaration]        # full index after build(), else lazy
    idx.build(progress=None) -> IndexSummary     # every source file, no digests; progress
    idx.summary() -> IndexSummary                # last build (RuntimeError before any)
    idx.summary_dict() -> dict                   # IndexSummary.to_dict(), JSON-able
    idx.read_files(paths) -> {path: FileState | None}  # declarations + digests, as now
        # (a file cached without digests, by a build or lookup, is parsed again with them)
    idx.has_error(path) -> bool | None           # parse tree of path held syntax errors
    idx.parse_count                              # files parsed by this object so far
    idx.cache_path, idx.cache_status             # cache file (None: no cache) and its state
    resolve_symbol(decls) -> ("unique" | "ambiguous" | "none", [Declaration, ...])

Files are listed with ``git ls-files`` in a work tree, else by a scandir walk honouring
.gitignore (:mod:`.listing`). Languages and their queries: :mod:`.languages` and the
``queries/*.scm`` files (Python, Kotlin, Java, TypeScript, TSX, JavaScript, Go, Rust, C#,
C, C++, Ruby, Swift, PHP, Scala; ``.h`` is C++ when the root holds C++ sources). The cache
(:mod:`.cache`) lives in ``cache_dir``, else ``$BRAINMIGRATE_CACHE_DIR``, else
``$XDG_CACHE_HOME/brainmigrate``, else ``~/.cache/brainmigrate``; one file per root, entries
keyed by (size, mtime_ns). A cache that cannot be written leaves the index working
without one (``cache_status`` starts with ``"disabled:"``).
"""

from .index import CodeIndex
from .listing import ListedFile
from .model import (
    Declaration,
    FileState,
    IndexSummary,
    LanguageCount,
    RootError,
    SkippedFile,
    category_of,
)
from .resolve import resolve_symbol

__all__ = [
    "CodeIndex",
    "Declaration",
    "FileState",
    "IndexSummary",
    "LanguageCount",
    "ListedFile",
    "RootError",
    "SkippedFile",
    "category_of",
    "resolve_symbol",
]
