"""A name lookup's reading of uncached source files: which of them may declare a name.

Every uncached source file is read (where ``grep`` is on PATH, only those it says hold a
name's bytes) and tested for the names; only a file holding one in the shape of a
declaration (``languages.DECLARATION_SHAPES``) is parsed. :func:`scan` does a lookup's
files, in this process or, past :data:`SCAN_POOL_THRESHOLD` files, in forked workers too.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from brainmigrate import inputs
from brainmigrate.patterns import lazy

from . import cache as cachemod
from .languages import declaration_shape
from .parse import pool_size, read_and_extract

#: What :func:`scan_file` reads: (root-relative path, language, size, mtime_ns).
Item = tuple[str, str, int, int]
#: What :func:`scan_file` gives: (entry or None, outcome).
Scanned = tuple[cachemod.Entry | None, str]


def scan(
    root: str,
    items: list[Item],
    names: set[str],
    shapes: bool,
    max_bytes: int,
    workers: int,
    digests: bool = False,
) -> list[Scanned]:
    """:func:`scan_file` of each of ``items``, in order. Of more than
    :data:`GREP_MIN_FILES` files, where grep is found, only those it says hold a
    name's bytes are read (:func:`grep_holders`); the others mention none. With more
    than :data:`SCAN_POOL_THRESHOLD` files to read (:data:`SCAN_POOL_PICKED` picked by
    grep), this process and ``workers - 1`` forked ones each read, test and parse a
    share of them. The files parsed take their digests only with ``digests``."""
    setup = (root, frozenset(names), shapes, max_bytes, digests)
    held = (
        grep_holders(root, [it[0] for it in items], names) if len(items) > GREP_MIN_FILES else None
    )
    if held is not None:  # only these can mention a name: read and test them alone
        picked = [i for i, it in enumerate(items) if it[0] in held]
        found: list[Scanned] = [(None, "")] * len(items)
        scanned = _scan_items(setup, [items[i] for i in picked], SCAN_POOL_PICKED, workers)
        for i, result in zip(picked, scanned, strict=True):
            found[i] = result
        return found
    return _scan_items(setup, items, SCAN_POOL_THRESHOLD, workers)


def _scan_items(
    setup: tuple[str, frozenset[str], bool, int, bool],
    items: list[Item],
    threshold: int,
    workers: int,
) -> list[Scanned]:
    processes = pool_size(len(items), threshold, workers)
    if processes < 2:
        return [scan_file(item) for item in _scanning_with(setup, items)]
    from . import parallel  # only for a large uncached root (start-up)

    # Task k takes every n-th file from k on: the heavy files of one folder (generated
    # type tables, say) are spread over the tasks, so that the processes end together.
    # The same pool as a build's (a worker that dies fails the lookup, never hangs it);
    # the workers are forked while the setup is in place, so they inherit it.
    n = processes * 16
    tasks = [(k, items[k::n]) for k in range(n)]
    out: list[Scanned] = [(None, "")] * len(items)
    for k, results in _scanning_with(setup, parallel.run_ordered(_scan_chunk, tasks, processes)):
        out[k::n] = results
    return out


#: More uncached source files than this for a name lookup: they are read, tested and
#: parsed in a process pool (reading and testing 2,000 Go files costs about as much as
#: parsing the few that declare the names).
SCAN_POOL_THRESHOLD = 400
#: More files than this picked by grep (each holds a name's bytes; most are parsed, the
#: costly part): shared out to the pool as well.
SCAN_POOL_PICKED = 32
#: :func:`scan_file` outcome of a file that mentions a name in no declaration shape.
SHAPE_SKIP = "shape"
#: What :func:`scan_file` needs besides the file: (root, mentions, shapes, max_bytes,
#: digests).
_scanning: tuple[str, Callable[[bytes], list[str]], bool, int, bool] | None = None


def _scan_setup(
    root: str, names: frozenset[str], shapes: bool, max_bytes: int, digests: bool
) -> None:
    global _scanning
    _scanning = (root, mentions(names), shapes, max_bytes, digests)


def _scanning_with(setup: tuple[str, frozenset[str], bool, int, bool], work: list):
    """``work``, item by item, with :func:`_scan_setup` done for this process meanwhile."""
    _scan_setup(*setup)
    try:
        yield from work
    finally:
        _scan_setup("", frozenset(), False, 0, False)


def scan_file(item: Item) -> Scanned:
    """Read one uncached source file and parse it when it may declare one of the names
    (:func:`_scan_setup`), without digests unless the setup asks for them (a name lookup
    reads none; ``read_files`` takes them). Returns ``(entry, outcome)``: ``entry`` when
    parsed (or a skip worth caching); ``outcome`` is ``""``, :data:`SHAPE_SKIP` (the file
    mentions a name, in no declaration shape) or why the file could not be read."""
    assert _scanning is not None
    root, mentions, shapes, max_bytes, digests = _scanning
    rel, language, size, mtime_ns = item
    abspath = os.path.join(root, rel)
    try:
        with inputs.opened(abspath) as fh:
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
    entry, _reason = read_and_extract(
        abspath, language, size, mtime_ns, max_bytes, data, digests=digests
    )
    return entry, ""


def _scan_chunk(
    task: tuple[int, list[tuple[str, str, int, int]]],
) -> tuple[int, list[tuple[cachemod.Entry | None, str]]]:
    k, items = task
    return k, [scan_file(item) for item in items]


#: The key of the declaration cache's entry holding the files name lookups found no
#: declaration in: ``(shapes, names, {path: (size, mtime_ns)})`` (NUL: no path's name).
MISSES = "\0misses"


def known_misses(entries: dict, names: set[str], shapes: bool) -> dict:
    """``{path: (size, mtime_ns, language)}`` of the files a lookup of names including
    all of ``names`` (with the same ``shapes``) read and found none of them declared in: a
    file still of that size and mtime, read as the same language (a ``.h`` file is C or
    C++ by what else the root holds), declares none of them (read again, it is parsed by
    the same rule, so it gives the same answer). Empty when no such lookup is kept."""
    kept = entries.get(MISSES)
    if type(kept) is not tuple or len(kept) != 3 or kept[0] is not shapes:
        return {}
    if type(kept[2]) is not dict or type(kept[1]) is not tuple or not names <= set(kept[1]):
        return {}
    return kept[2]


def misses_entry(known: dict, names: set[str], shapes: bool, missed) -> tuple:
    """The ``MISSES`` entry after a lookup of ``names`` that read the files ``missed``
    (``(path, size, mtime_ns, language)``) and found none declared, kept for ``names``:
    with what was ``known`` for a wider lookup (a file that declares none of the wider
    names declares none of these), never the other way (the files read now were searched
    for ``names`` only). A file modified less than ``RACY_NS`` ago is not kept (an edit in
    the same tick would keep its mtime)."""
    from .cache import RACY_NS

    soon = time.time_ns() - RACY_NS
    made = {p: (size, mtime, lang) for p, size, mtime, lang in missed if mtime < soon}
    return (shapes, tuple(sorted(names)), {**known, **made})


#: Paths given to one grep run (its argument list stays far below ARG_MAX).
GREP_BATCH = 2000
#: Up to this many files to read, Python reads and searches them (about 0.2 ms a file)
#: rather than start grep (2-3 ms): a small tree gets no slower.
GREP_MIN_FILES = 100


def grep_holders(root: str, paths: list[str], names: set[str]) -> set[str] | None:
    """Which of ``paths`` (relative to ``root``) hold the bytes of one of ``names``, by
    ``grep -lF``: a superset of the files :func:`mentions` finds in them (it sees whole
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
                [grep, "-l", "-F", "-D", "skip", "--null", *patterns, "--", *batch],
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
_WORD = lazy(r"[A-Za-z0-9_$]+")
_WORDS = lazy(rb"[A-Za-z0-9_$]+")


def mentions(names: set[str]):
    """A function of a file's bytes: which of ``names`` do they hold, in sorted order
    (the order their declaration shapes are then tested in: the work a file costs is the
    same whatever the hash seed)? Names made only of ASCII word characters (and ``$``) are
    matched as whole words once there are many; others are searched for as bytes."""
    if len(names) <= FEW_NAMES:
        needles = [(n, n.encode("utf-8")) for n in sorted(names)]
        return lambda data: [n for n, b in needles if b in data]
    words = {n.encode("ascii") for n in names if _WORD.fullmatch(n)}
    others = [(n, n.encode("utf-8")) for n in sorted(names) if not _WORD.fullmatch(n)]

    def mentioned(data: bytes) -> list[str]:
        found = [w.decode("ascii") for w in words.intersection(_WORDS.findall(data))]
        return sorted(found + [n for n, b in others if b in data])

    return mentioned
