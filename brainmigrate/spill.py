"""An append-only sequence kept in an unnamed temporary file.

A run keeps something for every fact it reads (the fact, what it names, the merge's
entries), but reads each back only in order. Keeping them in memory makes a run's peak
grow with its input; a ``Spill`` keeps only one batch in memory and the rest in a
temporary file in ``TMPDIR`` that the system removes when it is closed, or when the
process ends, however it ends.
"""

from __future__ import annotations

import pickle
import tempfile
from collections.abc import Iterable, Iterator
from typing import Any, BinaryIO

#: Items pickled together: large enough that pickling is cheap per item, small enough
#: that a batch is a few hundred kilobytes.
BATCH = 1024


class Spill:
    """A list that only grows and is read in order: ``append``, ``extend``, ``len``, iterate.

    Items must be picklable; an item read back is a copy of the one appended (the last,
    unwritten batch is read as it is). Several iterations may run at once; appending
    while iterating is not supported. Small spills never touch the disk.
    """

    def __init__(self, items: Iterable[Any] = (), batch: int | None = None) -> None:
        self._batch = batch or BATCH
        self._buffer: list[Any] = []
        self._file: BinaryIO | None = None
        self._spans: list[tuple[int, int]] = []  # (offset, size) of each batch written
        self._end = 0
        self._len = 0
        self.extend(items)

    def append(self, item: Any) -> None:
        self._buffer.append(item)
        self._len += 1
        if len(self._buffer) >= self._batch:
            self._flush()

    def extend(self, items: Iterable[Any]) -> None:
        for item in items:
            self.append(item)

    def _flush(self) -> None:
        if self._file is None:
            self._file = tempfile.TemporaryFile(prefix="brainmigrate-")  # noqa: SIM115 (lives as long as the spill)
        data = pickle.dumps(self._buffer, protocol=pickle.HIGHEST_PROTOCOL)
        self._file.seek(self._end)
        self._file.write(data)
        self._spans.append((self._end, len(data)))
        self._end += len(data)
        self._buffer = []

    def __len__(self) -> int:
        return self._len

    def __bool__(self) -> bool:
        return self._len > 0

    def __iter__(self) -> Iterator[Any]:
        buffer = self._buffer
        for offset, size in list(self._spans):
            self._file.seek(offset)
            yield from pickle.loads(self._file.read(size))
        yield from buffer

    def close(self) -> None:
        """Remove the temporary file; the spill is empty afterwards."""
        if self._file is not None:
            self._file.close()
            self._file = None
        self._buffer, self._spans, self._end, self._len = [], [], 0, 0
