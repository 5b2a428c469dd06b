"""Reading and parsing source files for the index: one file, or many in a process pool.

A file becomes a cache entry (``cache.Entry``): parsed, or a skip worth caching (binary,
too large). :func:`parse_many` parses a build's or a ``read_files`` call's files in this
process, or, past :data:`POOL_THRESHOLD` files, in forked workers (:mod:`.parallel`).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from brainmigrate import inputs

from . import cache as cachemod
from .extract import extract_file
from .languages import parser_and_query

#: Default size limit: larger source files (minified, generated) are skipped.
DEFAULT_MAX_BYTES = 1_000_000
#: Bytes looked at for a NUL to call a file binary.
BINARY_PROBE = 8192
#: More files than this to (re)parse in one build use a process pool.
POOL_THRESHOLD = 200

#: What :func:`parse_one` reads: (root-relative path, absolute path, language, size,
#: mtime_ns, max_bytes, digests: whether to take the digests, ``read_and_extract``).
Item = tuple[str, str, str, int, int, int, bool]
#: What :func:`parse_one` gives: (root-relative path, entry or None, skip reason or None).
Parsed = tuple[str, cachemod.Entry | None, str | None]


def read_and_extract(
    abspath: str,
    language: str,
    size: int,
    mtime_ns: int,
    max_bytes: int,
    data: bytes | None = None,
    *,
    digests: bool = True,
) -> tuple[cachemod.Entry | None, str | None]:
    """Read (unless ``data`` is given), check and parse one file; ``digests=False`` takes
    no digest (``extract.extract_file``): the entry's rows and file digest hold None.

    Returns ``(entry, None)`` for a parsed file, ``(entry, reason)`` for a skipped one
    whose skip is worth caching (binary, too large), ``(None, reason)`` for an unreadable
    file (not cached, tried again next time).
    """
    if size > max_bytes:
        reason = f"too large ({size} bytes > {max_bytes})"
        return (size, mtime_ns, False, b"", language, False, None, reason, None), reason
    if data is None:
        try:
            with inputs.opened(abspath) as fh:
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
    has_error, rows, fdigest = extract_file(data, language, digests=digests)
    return (size, mtime_ns, racy, chash, language, has_error, rows, None, fdigest), None


def parse_one(item: Item) -> Parsed:
    """:func:`read_and_extract` of one :data:`Item`, with its path."""
    rel, abspath, language, size, mtime_ns, max_bytes, digests = item
    entry, reason = read_and_extract(abspath, language, size, mtime_ns, max_bytes, digests=digests)
    return rel, entry, reason


def _pool_task(items: list[Item]) -> bytes:
    """:func:`parse_one` of each of ``items`` in a worker, pickled without a memo
    (cache.dumps: the pool's own pickling of the rows costs a worker as much again). An
    exception of one file takes its result's place (so the first in file order is raised)."""
    out: list = []
    for item in items:
        try:
            out.append(parse_one(item))
        except Exception as exc:  # noqa: BLE001 - raised again by the parent, in order
            out.append((item[0], _picklable(exc), None))
    return cachemod.dumps(out)


def _picklable(exc: Exception) -> Exception:
    """``exc`` when it survives pickling, else a RuntimeError with its type and message."""
    import pickle  # (in a pool's worker only)

    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:  # noqa: BLE001 - any failure means: send text instead
        return RuntimeError(f"{type(exc).__name__}: {exc}")
    return exc


def byte_groups(sizes: list[int], count: int) -> list[list[int]]:
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


def pool_size(count: int, threshold: int, workers: int) -> int:
    """Processes to share ``count`` files out to: 1 (this one) up to ``threshold``
    files, else ``workers``, at most the usable CPUs, when fork is available."""
    if count <= threshold or workers < 2:
        return 1
    from . import parallel

    n = min(workers, parallel.usable_cpus())
    return n if n > 1 and parallel.fork_available() else 1


def parse_many(
    items: list[Item], workers: int, done: Callable[[], object] | None = None
) -> list[Parsed]:
    """:func:`parse_one` of each of ``items``, in their order; ``done()`` is called once a
    file. More than :data:`POOL_THRESHOLD` files (and more than one usable CPU): in a pool
    of up to ``workers`` forked processes (:mod:`.parallel`). An exception parsing a file
    is raised as the in-process way raises it, at its place."""
    processes = pool_size(len(items), POOL_THRESHOLD, workers)
    if processes < 2:
        out = []
        for item in items:
            out.append(parse_one(item))
            if done is not None:
                done()
        return out
    import pickle

    from . import parallel  # only for a large build (start-up)

    # Compile the needed queries once here: forked workers inherit them.
    for lang in sorted({it[2] for it in items}):
        parser_and_query(lang)
    results: list = [None] * len(items)
    groups = byte_groups([it[3] for it in items], processes * 24)
    tasks = [[items[i] for i in group] for group in groups]
    for group, blob in zip(groups, parallel.run_ordered(_pool_task, tasks, processes), strict=True):
        for i, result in zip(group, pickle.loads(blob), strict=True):
            results[i] = result
            if done is not None:
                done()
    for result in results:
        if isinstance(result[1], BaseException):
            raise result[1]  # the error the in-process way raises, at its place
    return results
