"""CodeIndex: the cached declaration index of one root (see the package docstring)."""

from __future__ import annotations

import os
import stat
import time
import unicodedata
from collections.abc import Callable, Iterable
from pathlib import Path

from brainmigrate import inputs

from . import cache as cachemod
from .extract import EXTRACTOR_VERSION, rows_to_declarations
from .languages import CPP_MARKERS, extension_of, language_for, namespace
from .listing import ListedFile, list_files
from .model import (
    Declaration,
    FileState,
    IndexSummary,
    LanguageCount,
    RootError,
    SkippedFile,
)
from .parse import DEFAULT_MAX_BYTES, Parsed, parse_many, read_and_extract
from .scan import MISSES, SHAPE_SKIP, known_misses, misses_entry, scan


def _warn(message: str, *args) -> None:
    """A warning on this module's logger (``logging`` is loaded only to say one)."""
    import logging

    logging.getLogger(__name__).warning(message, *args)


Progress = Callable[[int, int], object]


def _undigested(entry: cachemod.Entry) -> bool:
    """Whether a cached entry is of a file parsed without its digests (``read_and_extract``
    with ``digests=False``: rows, no file digest); a skipped file's entry holds none to take."""
    return entry[6] is not None and entry[8] is None


class CodeIndex:
    """Tree-sitter declarations of one checkout (``root``), cached on disk per file.

    Args:
        root: the checkout folder.
        cache_dir: folder of the cache files; default :func:`.cache.default_cache_dir`.
        use_cache: ``False`` keeps everything in memory only.
        max_bytes: source files larger than this are skipped (default 1 MB).
        workers: processes of the pool used when many files need parsing, or reading for a
            name lookup (default 2).

    Raises:
        RootError: ``root`` does not exist or is not a folder.

    The file listing is taken on first use and kept for the object's life (a snapshot);
    :meth:`build` takes it again.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        cache_dir: Path | None = None,
        *,
        use_cache: bool = True,
        max_bytes: int = DEFAULT_MAX_BYTES,
        workers: int = 2,
    ) -> None:
        given = Path(os.path.expanduser(root))  # ``~nouser`` left as it is, as ``not_a_root``
        if not given.exists():
            raise RootError(f"root {str(root)!r} does not exist")
        if not given.is_dir():
            raise RootError(f"root {str(root)!r} is not a folder")
        self.root = given.resolve()
        self.max_bytes = max_bytes
        self.workers = max(1, workers)
        self.cache_path: Path | None = (
            cachemod.cache_file(
                Path(cache_dir) if cache_dir else cachemod.default_cache_dir(), self.root
            )
            if use_cache
            else None
        )
        self.cache_status = "disabled: off" if not use_cache else "not loaded"
        #: Files parsed by this object so far (all builds and lookups).
        self.parse_count = 0
        #: Name lookups parse only files holding a declaration shape of a name (False:
        #: every file that mentions one; the same anchors, more parsing).
        self.shapes = True
        #: Files a name lookup read and did not parse: no declaration shape of the names.
        self.shape_skips = 0
        #: Name lookups take the digests of the files they parse, as ``read_files`` does
        #: (False: none, the quicker parse): for a caller that goes on to read the digests
        #: of the files it looks names up in (``import --verify``), which then parses none
        #: of them twice.
        self.lookup_digests = False
        self._listing_way = ""
        self._listing: list[ListedFile] | None = None
        self._by_basename: dict[str, list[str]] | None = None
        self._entries: dict[str, cachemod.Entry] = {}
        self._cache_loaded = False
        self._dirty = False
        self._fresh: set[str] = set()  # paths whose entry matches the current listing
        self._complete = False  # every source file is fresh (after build)
        self._by_name: dict[str, list[str]] | None = None
        self._last: IndexSummary | None = None

    # --- listing -----------------------------------------------------------------------

    def _list(self, refresh: bool = False) -> list[ListedFile]:
        if self._listing is None or refresh:
            cache_dir = self.cache_path.parent if self.cache_path is not None else None
            self._listing_way, self._listing = list_files(self.root, cache_dir)
            self._by_basename = None
            self._fresh.clear()
            self._complete = False
            self._by_name = None
        return self._listing

    @property
    def listing_way(self) -> str:
        """How the files were listed: ``"git"`` or ``"scandir"`` (lists them if not yet done)."""
        self._list()
        return self._listing_way

    def files(self) -> list[str]:
        """Root-relative POSIX paths of all regular files, sorted (see :mod:`.listing`)."""
        return [f.path for f in self._list()]

    def files_named(self, name: str) -> list[str]:
        """Sorted paths whose last segment equals ``name`` (both compared after Unicode NFC)."""
        if self._by_basename is None:
            index: dict[str, list[str]] = {}
            for f in self._list():
                base = unicodedata.normalize("NFC", f.path.rpartition("/")[2])
                index.setdefault(base, []).append(f.path)
            self._by_basename = index
        return list(self._by_basename.get(unicodedata.normalize("NFC", name), ()))

    def _sources(self) -> list[tuple[ListedFile, str]]:
        listing = self._list()
        cpp = any(extension_of(f.path) in CPP_MARKERS for f in listing)
        out = []
        for f in listing:
            lang = language_for(f.path, cpp)
            if lang is not None:
                out.append((f, lang))
        return out

    # --- cache -------------------------------------------------------------------------

    def _namespace(self) -> str:
        return namespace(EXTRACTOR_VERSION, self.max_bytes)

    def _load_cache(self) -> None:
        if self._cache_loaded:
            return
        self._cache_loaded = True
        if self.cache_path is None:
            return
        files, status = cachemod.load(self.cache_path, self._namespace(), self.root)
        self.cache_status = (
            status if files is not None or status == "created" else f"{status}; rebuilt"
        )
        if files is not None:
            self._entries = files
        else:
            self._dirty = True

    def _save_cache(self) -> None:
        if self.cache_path is None or not self._dirty:
            return
        listed = {f.path for f in self._list()}
        keep = {p: e for p, e in self._entries.items() if p in listed or p == MISSES}
        try:
            cachemod.save(self.cache_path, self._namespace(), self.root, keep)
        except OSError as exc:
            self.cache_status = (
                f"disabled: cannot write {self.cache_path.parent} ({exc.strerror or exc})"
            )
            _warn("declaration cache not written: %s", self.cache_status)
            self.cache_path = None
            return
        self._dirty = False

    def _fresh_entry(
        self, f: ListedFile, language: str, digests: bool = False, content: bytes | None = None
    ) -> cachemod.Entry | None:
        """The cached entry of ``f`` when it still matches the file, else ``None``;
        ``digests``: also None for a file parsed without its digests (``build`` and name
        lookups take none, ``read_files`` needs them); ``content``: the file's
        ``cache.content_hash`` as the caller read it, also None when the entry's differs
        (an edit of the same size whose mtime was put back)."""
        if content is not None:
            kept = self._entries.get(f.path)
            if type(kept) is tuple and len(kept) == 9 and kept[3] and kept[3] != content:
                self._fresh.discard(f.path)
                return None
        if f.path in self._fresh:
            entry = self._entries[f.path]
            return None if digests and _undigested(entry) else entry
        entry = self._entries.get(f.path)
        if (
            type(entry) is not tuple
            or len(entry) != 9
            or entry[0] != f.size
            or entry[1] != f.mtime_ns
            or entry[4] != language
            or (digests and _undigested(entry))
        ):
            return None
        if entry[2]:  # racy: trust only after comparing the content
            try:
                with inputs.opened(self.root / f.path) as fh:
                    data = fh.read(self.max_bytes + 1)
            except OSError:
                return None
            if cachemod.content_hash(data) != entry[3]:
                return None
            if time.time_ns() - f.mtime_ns >= cachemod.RACY_NS:
                entry = (*entry[:2], False, *entry[3:])
                self._entries[f.path] = entry
                self._dirty = True
        self._fresh.add(f.path)
        return entry

    def _store(self, path: str, entry: cachemod.Entry) -> None:
        self._entries[path] = entry
        self._fresh.add(path)
        self._dirty = True
        self._by_name = None
        if entry[6] is not None:
            self.parse_count += 1

    # --- lookups -----------------------------------------------------------------------

    def _name_index(self) -> dict[str, list[str]]:
        if self._by_name is None:
            index: dict[str, list[str]] = {}
            for path in sorted(self._fresh):
                rows = self._entries[path][6]
                for name in {r[0] for r in rows or ()}:
                    index.setdefault(name, []).append(path)
            self._by_name = index
        return self._by_name

    def _declarations_named(self, name: str) -> list[Declaration]:
        out: list[Declaration] = []
        for path in self._name_index().get(name, ()):
            entry = self._entries[path]
            rows = [r for r in entry[6] if r[0] == name]
            out.extend(rows_to_declarations(rows, path, entry[4]))
        return out

    def declarations_of(self, names: Iterable[str]) -> dict[str, list[Declaration]]:
        """Declarations of each name, parsing only files that may declare one of them.

        Returns ``{name: [Declaration, …]}`` for every name asked that is declared (a name
        declared nowhere is absent), each list sorted by (path, first line, name line). All
        kinds and categories are returned; :func:`.resolve.resolve_symbol` picks the anchor.

        Files whose cached entry is still fresh are answered from the cache. Every other
        source file is read and tested for the names' bytes; only the files that hold one
        of the names in the shape of a type or function declaration (``shapes``; a regular
        expression per language, ``languages.DECLARATION_SHAPES``) are parsed (and cached),
        without digests unless ``lookup_digests`` (the declarations' digests are then None:
        ``read_files`` gives them). So what a name anchors to (``resolve_symbol``) is what
        parsing every file that mentions it gives; fields, variables and other kinds are
        found in the files that are parsed (or cached) only. So the cost grows with the
        names asked, not with the checkout (beyond one read of the uncached files). Up to
        ``scan.FEW_NAMES`` names are searched for one by one; more (a large run of notes
        names thousands) are matched against the set of a file's identifier-like words, in
        one pass a file. Where ``grep`` is on PATH it picks the files holding a name's bytes
        first, and only those are read. More than ``scan.SCAN_POOL_THRESHOLD`` files to
        read are shared out to a pool of ``workers`` processes (:mod:`.scan`).
        """
        wanted = names if isinstance(names, (set, frozenset)) else set(names)
        wanted = wanted - {""} if "" in wanted else wanted
        if not wanted:
            return {}
        self._load_cache()
        if not self._complete:
            known = known_misses(self._entries, wanted, self.shapes)
            todo = [
                (f, lang)
                for f, lang in self._sources()
                if self._fresh_entry(f, lang) is None
                and f.size <= self.max_bytes
                and known.get(f.path) != (f.size, f.mtime_ns, lang)
            ]
            missed = []
            for (f, lang), (entry, outcome) in zip(todo, self._scan(todo, wanted), strict=True):
                if outcome == SHAPE_SKIP:
                    self.shape_skips += 1
                elif outcome:
                    _warn("cannot read %s: %s", f.path, outcome)
                if entry is not None:
                    self._store(f.path, entry)
                elif outcome in ("", SHAPE_SKIP):
                    missed.append((f.path, f.size, f.mtime_ns, lang))
            misses = misses_entry(known, wanted, self.shapes, missed)
            if misses != self._entries.get(MISSES):
                self._entries[MISSES] = misses
                self._dirty = True
            self._save_cache()
        result: dict[str, list[Declaration]] = {}
        for name in sorted(wanted):
            found = self._declarations_named(name)
            if found:
                result[name] = found
        return result

    def _scan(self, todo: list[tuple[ListedFile, str]], names: set[str]) -> list:
        """:func:`.scan.scan` of the files of ``todo``, in order."""
        items = [(f.path, lang, f.size, f.mtime_ns) for f, lang in todo]
        return scan(
            str(self.root),
            items,
            names,
            self.shapes,
            self.max_bytes,
            self.workers,
            self.lookup_digests,
        )

    def lookup(self, name: str) -> list[Declaration]:
        """Declarations named ``name``: from the full index after :meth:`build`, else lazily."""
        if self._complete:
            return self._declarations_named(name)
        return self.declarations_of([name]).get(name, [])

    def language_of(self, rel: str) -> str | None:
        """The index's language name for root-relative ``rel`` (None for a file it does not
        read); a ``.h`` file is C++ when the root holds C++ sources (``language_for``)."""
        cpp = extension_of(rel) == ".h" and any(
            extension_of(f.path) in CPP_MARKERS for f in self._list()
        )
        return language_for(rel, cpp)

    def read_files(
        self, paths: Iterable[str], *, cached: bool = True, hashes: dict[str, bytes] | None = None
    ) -> dict[str, FileState | None]:
        """Declarations and staleness digest of each of ``paths`` (root-relative POSIX),
        as the file is now: ``{path: FileState}``, None for a path that is no regular
        source file of a language the index reads (or cannot be read or parsed).

        Each file is stat-ed; a cached entry that still matches and holds digests is used,
        every other file is parsed once with its digests (in the process pool when there
        are many, as ``build`` does) and cached with them (``build`` and name lookups take
        none: a file they parsed is parsed again here, once). The listing is not taken,
        except to tell a ``.h`` file's language and when the cache is saved.
        ``cached=False`` parses every file and neither loads nor writes the cache: quicker
        for a few files of a large root (loading its cache costs as much as parsing a
        handful of files). ``hashes`` gives the ``cache.content_hash`` of paths the caller
        has read: a cached entry of other bytes is parsed again, whatever its stat says.
        """
        if not cached:
            return self._parse_uncached(paths)
        self._load_cache()
        wanted = list(dict.fromkeys(paths))
        found: dict[str, tuple[ListedFile, str]] = {}
        todo: list[tuple[ListedFile, str]] = []
        cpp: bool | None = None
        for rel in wanted:
            if extension_of(rel) == ".h" and cpp is None:
                cpp = any(extension_of(f.path) in CPP_MARKERS for f in self._list())
            lang = language_for(rel, bool(cpp))
            if lang is None:
                continue
            st = self._regular(rel)
            if st is None:
                continue
            f = ListedFile(rel, st.st_size, st.st_mtime_ns)
            found[rel] = (f, lang)
            content = hashes.get(rel) if hashes else None
            if self._fresh_entry(f, lang, digests=True, content=content) is None:
                todo.append((f, lang))
        for rel, entry, reason in self._parse_many(todo, digests=True):
            if entry is not None:
                self._store(rel, entry)
            elif reason is not None:
                _warn("cannot read %s: %s", rel, reason)
        out: dict[str, FileState | None] = dict.fromkeys(wanted)
        for rel, (_f, lang) in found.items():
            entry = self._entries.get(rel) if rel in self._fresh else None
            if entry is not None and entry[6] is not None:
                out[rel] = FileState(tuple(rows_to_declarations(entry[6], rel, lang)), entry[8])
        if todo:  # (saving takes the listing, which starts a new snapshot: done last)
            self._save_cache()
        return out

    def _regular(self, rel: str) -> os.stat_result | None:
        """The stat of root-relative ``rel`` when it is a regular file, else None."""
        try:
            st = os.stat(self.root / rel)
        except (OSError, ValueError):
            return None
        return st if stat.S_ISREG(st.st_mode) else None

    def _parse_uncached(self, paths: Iterable[str]) -> dict[str, FileState | None]:
        out: dict[str, FileState | None] = {}
        for rel in dict.fromkeys(paths):
            out[rel] = None
            lang = language_for(rel, False)
            if lang is None:
                continue
            st = self._regular(rel)
            if st is None:
                continue
            entry, _ = read_and_extract(
                str(self.root / rel), lang, st.st_size, st.st_mtime_ns, self.max_bytes
            )
            if entry is not None and entry[6] is not None:
                self.parse_count += 1
                out[rel] = FileState(tuple(rows_to_declarations(entry[6], rel, lang)), entry[8])
        return out

    def link_target(self, path: str) -> str | None:
        """The root-relative path of the file ``path`` is a symbolic link to (through any
        chain of links), or None when ``path`` is no link or points out of the root."""
        full = os.path.join(self.root, path)
        if not os.path.islink(full):
            return None
        target = os.path.relpath(os.path.realpath(full), self.root)
        if target.startswith(".." + os.sep) or target == ".." or os.path.isabs(target):
            return None
        return target.replace(os.sep, "/")

    def has_error(self, path: str) -> bool | None:
        """Whether the parse tree of ``path`` held syntax errors; ``None`` if not parsed yet."""
        entry = self._entries.get(path)
        return bool(entry[5]) if entry is not None and path in self._fresh else None

    # --- full build --------------------------------------------------------------------

    def build(self, progress: Progress | None = None) -> IndexSummary:
        """Index every source file of the root (cached files are not parsed again).

        Retakes the listing, parses what is new or changed (in a pool of ``workers``
        processes, fork start method, when more than ``parse.POOL_THRESHOLD`` files need
        it) without digests (``read_files`` takes them where read), saves the cache and
        returns an :class:`IndexSummary`. ``progress(done, total)`` is called with counts of
        source files. Unreadable files are logged and listed as
        skipped; a cache that cannot be written is reported in ``cache_status``.
        """
        t0 = time.perf_counter()
        self._list(refresh=True)
        self._load_cache()
        sources = self._sources()
        total = len(sources)
        skipped: list[SkippedFile] = []
        todo: list[tuple[ListedFile, str]] = []
        hits = cached = 0  # cached: also the files a cached entry says were skipped
        for f, lang in sources:
            entry = self._fresh_entry(f, lang)
            if entry is None:
                todo.append((f, lang))
            else:
                cached += 1
                hits += entry[6] is not None
        if progress is not None:
            progress(cached, total)
        parsed_before = self.parse_count
        done = cached

        def one_done() -> None:
            nonlocal done
            done += 1
            if progress is not None:
                progress(done, total)

        for rel, entry, reason in self._parse_many(todo, one_done, digests=False):
            if entry is not None:
                self._store(rel, entry)
            elif reason is not None:
                _warn("cannot read %s: %s", rel, reason)
                skipped.append(SkippedFile(rel, reason))
        self._complete = True
        self._save_cache()

        counts: dict[str, list[int]] = {}
        error_files = []
        for f, lang in sources:
            if f.path not in self._fresh:
                continue
            entry = self._entries[f.path]
            if entry[6] is None:
                skipped.append(SkippedFile(f.path, entry[7] or "skipped"))
                continue
            c = counts.setdefault(lang, [0, 0, 0])
            c[0] += 1
            c[1] += len(entry[6])
            if entry[5]:
                c[2] += 1
                error_files.append(f.path)
        skipped.sort(key=lambda s: s.path)
        by_language = {lang: LanguageCount(*c) for lang, c in sorted(counts.items())}
        self._last = IndexSummary(
            root=str(self.root),
            listing=self._listing_way,
            files=len(self._list()),
            by_language=by_language,
            declarations=sum(c.declarations for c in by_language.values()),
            parsed=self.parse_count - parsed_before,
            cache_hits=hits,
            skipped=tuple(skipped),
            error_files=tuple(sorted(error_files)),
            seconds=time.perf_counter() - t0,
            cache_path=str(self.cache_path) if self.cache_path else None,
            cache_status=self.cache_status,
        )
        return self._last

    def _parse_many(
        self,
        todo: list[tuple[ListedFile, str]],
        done: Callable[[], object] | None = None,
        *,
        digests: bool,
    ) -> list[Parsed]:
        """:func:`.parse.parse_many` of the files of ``todo``, in order (in a pool of
        ``workers`` processes when there are many), with their digests or without;
        ``done()`` is called once a file."""
        items = [
            (f.path, str(self.root / f.path), lang, f.size, f.mtime_ns, self.max_bytes, digests)
            for f, lang in todo
        ]
        return parse_many(items, self.workers, done)

    def summary(self) -> IndexSummary:
        """The summary of the last :meth:`build`.

        Raises:
            RuntimeError: :meth:`build` has not run yet.
        """
        if self._last is None:
            raise RuntimeError("build() has not run yet")
        return self._last

    def summary_dict(self) -> dict[str, object]:
        """``summary().to_dict()``: JSON-able summary of the last build."""
        return self.summary().to_dict()
