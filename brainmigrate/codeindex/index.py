"""CodeIndex: the cached declaration index of one root (see the package docstring)."""

from __future__ import annotations

import os
import pickle
import re
import stat
import time
import unicodedata
from collections.abc import Callable, Iterable
from pathlib import Path

from . import cache as cachemod
from .extract import EXTRACTOR_VERSION, extract_file, rows_to_declarations
from .languages import (
    CPP_MARKERS,
    declaration_shape,
    extension_of,
    language_for,
    namespace,
    parser_and_query,
)
from .listing import ListedFile, list_files
from .model import (
    Declaration,
    FileState,
    IndexSummary,
    LanguageCount,
    RootError,
    SkippedFile,
)


def _warn(message: str, *args) -> None:
    """A warning on this module's logger (``logging`` is loaded only to say one)."""
    import logging

    logging.getLogger(__name__).warning(message, *args)


#: Default size limit: larger source files (minified, generated) are skipped.
DEFAULT_MAX_BYTES = 1_000_000
#: Bytes looked at for a NUL to call a file binary.
BINARY_PROBE = 8192
#: More files than this to (re)parse in one build use a process pool.
POOL_THRESHOLD = 200

Progress = Callable[[int, int], object]


def _read_and_extract(
    abspath: str, language: str, size: int, mtime_ns: int, max_bytes: int, data: bytes | None = None
) -> tuple[cachemod.Entry | None, str | None]:
    """Read (unless ``data`` is given), check and parse one file.

    Returns ``(entry, None)`` for a parsed file, ``(entry, reason)`` for a skipped one
    whose skip is worth caching (binary, too large), ``(None, reason)`` for an unreadable
    file (not cached, tried again next time).
    """
    if size > max_bytes:
        reason = f"too large ({size} bytes > {max_bytes})"
        return (size, mtime_ns, False, b"", language, False, None, reason, None), reason
    if data is None:
        try:
            with open(abspath, "rb") as fh:
                data = fh.read(max_bytes + 1)
        except OSError as exc:
            return None, f"unreadable: {exc.strerror or exc}"
    racy = time.time_ns() - mtime_ns < cachemod.RACY_NS
    chash = cachemod.content_hash(data)
    if b"\0" in data[:BINARY_PROBE]:
        return (size, mtime_ns, racy, chash, language, False, None, "binary", None), "binary"
    if len(data) > max_bytes:
        reason = f"too large (over {max_bytes} bytes)"
        return (size, mtime_ns, False, b"", language, False, None, reason, None), reason
    has_error, rows, fdigest = extract_file(data, language)
    return (size, mtime_ns, racy, chash, language, has_error, rows, None, fdigest), None


def _pool_work(
    item: tuple[str, str, str, int, int, int],
) -> tuple[str, cachemod.Entry | None, str | None]:
    rel, abspath, language, size, mtime_ns, max_bytes = item
    entry, reason = _read_and_extract(abspath, language, size, mtime_ns, max_bytes)
    return rel, entry, reason


def _pool_task(items: list[tuple[str, str, str, int, int, int]]) -> bytes:
    """:func:`_pool_work` of each of ``items`` in a worker, pickled without a memo
    (cache.dumps: the pool's own pickling of the rows costs a worker as much again). An
    exception of one file takes its result's place (so the first in file order is raised)."""
    out: list = []
    for item in items:
        try:
            out.append(_pool_work(item))
        except Exception as exc:  # noqa: BLE001 - raised again by the parent, in order
            out.append((item[0], _picklable(exc), None))
    return cachemod.dumps(out)


def _picklable(exc: Exception) -> Exception:
    """``exc`` when it survives pickling, else a RuntimeError with its type and message."""
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:  # noqa: BLE001 - any failure means: send text instead
        return RuntimeError(f"{type(exc).__name__}: {exc}")
    return exc


def _byte_groups(sizes: list[int], count: int) -> list[list[int]]:
    """Indices of ``sizes`` grouped into about ``count`` tasks of similar total size,
    largest files first (a large file is a task of its own; small ones are batched, which
    saves the per-task cost). Deterministic for the same sizes."""
    order = sorted(range(len(sizes)), key=lambda i: (-sizes[i], i))
    target = max(1, sum(sizes) // max(1, count))
    groups: list[list[int]] = []
    current: list[int] = []
    total = 0
    for i in order:
        current.append(i)
        total += sizes[i]
        if total >= target:
            groups.append(current)
            current, total = [], 0
    if current:
        groups.append(current)
    return groups


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
        given = Path(root).expanduser()
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
            self._listing_way, self._listing = list_files(self.root)
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
        keep = {p: e for p, e in self._entries.items() if p in listed}
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

    def _fresh_entry(self, f: ListedFile, language: str) -> cachemod.Entry | None:
        """The cached entry of ``f`` when it still matches the file, else ``None``."""
        if f.path in self._fresh:
            return self._entries[f.path]
        entry = self._entries.get(f.path)
        if (
            type(entry) is not tuple
            or len(entry) != 9
            or entry[0] != f.size
            or entry[1] != f.mtime_ns
            or entry[4] != language
        ):
            return None
        if entry[2]:  # racy: trust only after comparing the content
            try:
                with open(self.root / f.path, "rb") as fh:
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
        expression per language, ``languages.DECLARATION_SHAPES``) are parsed (and cached).
        So what a name anchors to (``resolve_symbol``) is what parsing every file that
        mentions it gives; fields, variables and other kinds are found in the files that
        are parsed (or cached) only. So the cost grows with the names asked, not
        with the checkout (beyond one read of the uncached files). Up to ``FEW_NAMES``
        names are searched for one by one; more (a large run of notes names thousands) are
        matched against the set of a file's identifier-like words, in one pass a file.
        Where ``grep`` is on PATH it picks the files holding a name's bytes first, and
        only those are read. More than ``SCAN_POOL_THRESHOLD`` files to read are shared
        out to a pool of ``workers`` processes.
        """
        wanted = names if isinstance(names, (set, frozenset)) else set(names)
        wanted = wanted - {""} if "" in wanted else wanted
        if not wanted:
            return {}
        self._load_cache()
        if not self._complete:
            todo = [
                (f, lang)
                for f, lang in self._sources()
                if self._fresh_entry(f, lang) is None and f.size <= self.max_bytes
            ]
            for (f, _lang), (entry, outcome) in zip(todo, self._scan(todo, wanted), strict=True):
                if outcome == SHAPE_SKIP:
                    self.shape_skips += 1
                elif outcome:
                    _warn("cannot read %s: %s", f.path, outcome)
                if entry is not None:
                    self._store(f.path, entry)
            self._save_cache()
        result: dict[str, list[Declaration]] = {}
        for name in sorted(wanted):
            found = self._declarations_named(name)
            if found:
                result[name] = found
        return result

    def _scan(
        self, todo: list[tuple[ListedFile, str]], names: set[str]
    ) -> list[tuple[cachemod.Entry | None, str]]:
        """:func:`_scan_file` of each of ``todo``, in order. Of more than
        :data:`GREP_MIN_FILES` files, where grep is found, only those it says hold a
        name's bytes are read (:func:`_grep_holders`); the others mention none. With more
        than :data:`SCAN_POOL_THRESHOLD` files to read (:data:`SCAN_POOL_PICKED` picked by
        grep), this process and ``workers - 1`` forked ones each read, test and parse a
        share of them."""
        items = [(f.path, lang, f.size, f.mtime_ns) for f, lang in todo]
        held = (
            _grep_holders(str(self.root), [it[0] for it in items], names)
            if len(items) > GREP_MIN_FILES
            else None
        )
        if held is not None:  # only these can mention a name: read and test them alone
            picked = [i for i, it in enumerate(items) if it[0] in held]
            found: list[tuple[cachemod.Entry | None, str]] = [(None, "")] * len(items)
            scanned = self._scan_items([items[i] for i in picked], names, SCAN_POOL_PICKED)
            for i, result in zip(picked, scanned, strict=True):
                found[i] = result
            return found
        return self._scan_items(items, names, SCAN_POOL_THRESHOLD)

    def _scan_items(
        self, items: list[tuple[str, str, int, int]], names: set[str], threshold: int
    ) -> list[tuple[cachemod.Entry | None, str]]:
        setup = (str(self.root), frozenset(names), self.shapes, self.max_bytes)
        processes = self._processes(len(items), threshold)
        if processes < 2:
            return [_scan_file(item) for item in _scanning_with(setup, items)]
        from . import parallel  # only for a large uncached root (start-up)

        # Task k takes every n-th file from k on: the heavy files of one folder (generated
        # type tables, say) are spread over the tasks, so that the processes end together.
        # The same pool as a build's (a worker that dies fails the lookup, never hangs it);
        # the workers are forked while the setup is in place, so they inherit it.
        n = processes * 16
        tasks = [(k, items[k::n]) for k in range(n)]
        out: list[tuple[cachemod.Entry | None, str]] = [(None, "")] * len(items)
        for k, results in _scanning_with(
            setup, parallel.run_ordered(_scan_chunk, tasks, processes)
        ):
            out[k::n] = results
        return out

    def lookup(self, name: str) -> list[Declaration]:
        """Declarations named ``name``: from the full index after :meth:`build`, else lazily."""
        if self._complete:
            return self._declarations_named(name)
        return self.declarations_of([name]).get(name, [])

    def read_files(
        self, paths: Iterable[str], *, cached: bool = True
    ) -> dict[str, FileState | None]:
        """Declarations and staleness digest of each of ``paths`` (root-relative POSIX),
        as the file is now: ``{path: FileState}``, None for a path that is no regular
        source file of a language the index reads (or cannot be read or parsed).

        Each file is stat-ed; a cached entry that still matches is used, every other file
        is parsed once (in the process pool when there are many, as ``build`` does) and
        cached. The listing is not taken, except to tell a ``.h`` file's language and when
        the cache is saved. ``cached=False`` parses every file and neither loads nor
        writes the cache: quicker for a few files of a large root (loading its cache costs
        as much as parsing a handful of files).
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
            if self._fresh_entry(f, lang) is None:
                todo.append((f, lang))
        for rel, entry, reason in self._parse_many(todo):
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
            entry, _ = _read_and_extract(
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
        processes, fork start method, when more than :data:`POOL_THRESHOLD` files need it),
        saves the cache and returns an :class:`IndexSummary`. ``progress(done, total)`` is
        called with counts of source files. Unreadable files are logged and listed as
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

        for rel, entry, reason in self._parse_many(todo, one_done):
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
        self, todo: list[tuple[ListedFile, str]], done: Callable[[], object] | None = None
    ) -> list[tuple[str, cachemod.Entry | None, str | None]]:
        """:func:`_pool_work` of each of ``todo``, in the order of ``todo``; ``done()`` is
        called once a file. More than :data:`POOL_THRESHOLD` files (and more than one
        usable CPU): in a pool of forked processes (:mod:`.parallel`)."""
        items = [
            (f.path, str(self.root / f.path), lang, f.size, f.mtime_ns, self.max_bytes)
            for f, lang in todo
        ]
        processes = self._processes(len(items), POOL_THRESHOLD)
        if processes < 2:
            out = []
            for item in items:
                out.append(_pool_work(item))
                if done is not None:
                    done()
            return out
        from . import parallel  # only for a large build (start-up)

        # Compile the needed queries once here: forked workers inherit them.
        for lang in sorted({lang for _f, lang in todo}):
            parser_and_query(lang)
        results: list = [None] * len(items)
        groups = _byte_groups([it[3] for it in items], processes * 24)
        tasks = [[items[i] for i in group] for group in groups]
        for group, blob in zip(
            groups, parallel.run_ordered(_pool_task, tasks, processes), strict=True
        ):
            for i, result in zip(group, pickle.loads(blob), strict=True):
                results[i] = result
                if done is not None:
                    done()
        for result in results:
            if isinstance(result[1], BaseException):
                raise result[1]  # the error the in-process way raises, at its place
        return results

    def _processes(self, count: int, threshold: int) -> int:
        """Processes to share ``count`` files out to: 1 (this one) up to ``threshold``
        files, else ``workers``, at most the usable CPUs, when fork is available."""
        if count <= threshold or self.workers < 2:
            return 1
        from . import parallel

        n = min(self.workers, parallel.usable_cpus())
        return n if n > 1 and parallel.fork_available() else 1

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


#: More uncached source files than this for a name lookup: they are read, tested and
#: parsed in a process pool (reading and testing 2,000 Go files costs about as much as
#: parsing the few that declare the names).
SCAN_POOL_THRESHOLD = 400
#: More files than this picked by grep (each holds a name's bytes; most are parsed, the
#: costly part): shared out to the pool as well.
SCAN_POOL_PICKED = 32
#: :func:`_scan_file` outcome of a file that mentions a name in no declaration shape.
SHAPE_SKIP = "shape"
#: What :func:`_scan_file` needs besides the file: (root, mentions, shapes, max_bytes).
_scanning: tuple[str, Callable[[bytes], list[str]], bool, int] | None = None


def _scan_setup(root: str, names: frozenset[str], shapes: bool, max_bytes: int) -> None:
    global _scanning
    _scanning = (root, _mentions(names), shapes, max_bytes)


def _scanning_with(setup: tuple[str, frozenset[str], bool, int], work: list):
    """``work``, item by item, with :func:`_scan_setup` done for this process meanwhile."""
    _scan_setup(*setup)
    try:
        yield from work
    finally:
        _scan_setup("", frozenset(), False, 0)


def _scan_file(item: tuple[str, str, int, int]) -> tuple[cachemod.Entry | None, str]:
    """Read one uncached source file and parse it when it may declare one of the names
    (:func:`_scan_setup`). Returns ``(entry, outcome)``: ``entry`` when parsed (or a
    skip worth caching); ``outcome`` is ``""``, :data:`SHAPE_SKIP` (the file mentions a name,
    in no declaration shape) or why the file could not be read."""
    assert _scanning is not None
    root, mentions, shapes, max_bytes = _scanning
    rel, language, size, mtime_ns = item
    abspath = os.path.join(root, rel)
    try:
        with open(abspath, "rb") as fh:
            data = fh.read(max_bytes + 1)
    except OSError as exc:
        return None, str(exc.strerror or exc)
    named = mentions(data)
    if not named:
        return None, ""
    if shapes and not any(
        (shape := declaration_shape(language, name)) is None or shape(data) for name in named
    ):
        return None, SHAPE_SKIP
    entry, _reason = _read_and_extract(abspath, language, size, mtime_ns, max_bytes, data)
    return entry, ""


def _scan_chunk(
    task: tuple[int, list[tuple[str, str, int, int]]],
) -> tuple[int, list[tuple[cachemod.Entry | None, str]]]:
    k, items = task
    return k, [_scan_file(item) for item in items]


#: Paths given to one grep run (its argument list stays far below ARG_MAX).
GREP_BATCH = 2000
#: Up to this many files to read, Python reads and searches them (about 0.2 ms a file)
#: rather than start grep (2-3 ms): a small tree gets no slower.
GREP_MIN_FILES = 100


def _grep_holders(root: str, paths: list[str], names: set[str]) -> set[str] | None:
    """Which of ``paths`` (relative to ``root``) hold the bytes of one of ``names``, by
    ``grep -lF``: a superset of the files :func:`_mentions` finds in them (it sees whole
    files, substrings; a name with a line break is searched for by its lines), so
    testing only these gives the same answer. ``None`` when grep is missing, fails or
    cannot read a file: the caller reads every file (and says which cannot be read).

    grep searches the bytes in one pass for all names, without reading them into
    Python: 30 MB of Go for 20 names takes it 0.05 s, Python 0.33 s.
    """
    import shutil
    import subprocess

    grep = shutil.which("grep")
    if grep is None or not paths or any("\0" in n for n in names):
        return None
    patterns = [arg for n in sorted(names) for arg in ("-e", n)]
    env = {**os.environ, "LC_ALL": "C"}
    held: set[str] = set()
    for at in range(0, len(paths), GREP_BATCH):
        batch = paths[at : at + GREP_BATCH]
        try:
            done = subprocess.run(
                [grep, "-l", "-F", "--null", *patterns, "--", *batch],
                cwd=root,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                check=False,
            )
        except OSError:
            return None
        if done.returncode not in (0, 1):  # 2: a file could not be read, or grep failed
            return None
        held.update(os.fsdecode(p) for p in done.stdout.split(b"\0") if p)
    return held


#: Up to this many names, a file is searched for each name's bytes; beyond, its words are
#: collected once and looked up (a search per name per file grows as names x files).
FEW_NAMES = 32
_WORD = re.compile(r"[A-Za-z0-9_$]+")
_WORDS = re.compile(rb"[A-Za-z0-9_$]+")


def _mentions(names: set[str]):
    """A function of a file's bytes: which of ``names`` do they hold? Names made only of
    ASCII word characters (and ``$``) are matched as whole words once there are many;
    others are searched for as bytes."""
    if len(names) <= FEW_NAMES:
        needles = [(n, n.encode("utf-8")) for n in names]
        return lambda data: [n for n, b in needles if b in data]
    words = {n.encode("ascii") for n in names if _WORD.fullmatch(n)}
    others = [(n, n.encode("utf-8")) for n in names if not _WORD.fullmatch(n)]

    def mentioned(data: bytes) -> list[str]:
        found = [w.decode("ascii") for w in words.intersection(_WORDS.findall(data))]
        return found + [n for n, b in others if b in data]

    return mentioned
