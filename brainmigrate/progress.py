"""Progress of long runs on a terminal: one status line on stderr, redrawn in place.

``Progress`` draws; ``enabled`` says when to (a terminal, ``CI`` unset, no
``--no-progress``). Counts come as ``(done, total)``: the rate, and so the ETA, is measured
from the first count of a stage, so work done before it (listing a 50k-file tree, cache
hits counted at once) neither stalls the bar at 0 % nor makes the ETA days long.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import TextIO

#: At most this many redraws a second.
RATE = 10.0
#: No ETA is shown before a stage has run this many seconds (too little to measure).
SETTLE = 1.0


def enabled(stream: TextIO, asked: bool = True) -> bool:
    """True when progress should be drawn on ``stream``: ``asked`` (no ``--no-progress``),
    a terminal, and not in CI (``CI`` unset)."""
    isatty = getattr(stream, "isatty", None)
    return asked and bool(isatty and isatty()) and not os.environ.get("CI")


def duration(seconds: float) -> str:
    """``m:ss``, or ``h:mm:ss`` from an hour."""
    s = int(seconds + 0.5)
    h, rest = divmod(s, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02}:{s:02}" if h else f"{m}:{s:02}"


class Progress:
    """A status line on ``stream``: ``show`` a text, or ``count`` ``done`` of ``total`` with
    a percentage and an ETA. ``clock`` is ``time.monotonic`` (tests pass their own)."""

    def __init__(self, stream: TextIO, clock: Callable[[], float] = time.monotonic) -> None:
        self.stream = stream
        self.clock = clock
        self._stage = ""
        self._start: tuple[float, int] | None = None  # (time, done) of the stage's first count
        self._drawn = 0.0
        self._width = 0

    def show(self, text: str, *, force: bool = False) -> None:
        """Draw ``text`` in place of the line (at most ``RATE`` times a second unless
        ``force``)."""
        now = self.clock()
        if not force and now - self._drawn < 1 / RATE:
            return
        self._drawn = now
        pad = " " * max(0, self._width - len(text))
        self.stream.write(f"\r{text}{pad}")
        self.stream.flush()
        self._width = len(text)

    def count(
        self, stage: str, done: int, total: int, unit: str = "files", extra: str = ""
    ) -> None:
        """Draw ``stage: done/total unit (pct %)``, then ``extra`` and the ETA."""
        now = self.clock()
        if stage != self._stage:
            self._stage, self._start = stage, (now, done)
        text = f"{stage}: {done:,}/{total:,} {unit}"
        if total:
            text += f" ({100 * done // total} %)"
        if extra:
            text += f", {extra}"
        eta = self.eta(done, total, now)
        if eta is not None:
            text += f", ETA {duration(eta)}"
        self.show(text, force=done >= total)

    def eta(self, done: int, total: int, now: float) -> float | None:
        """Seconds left at the stage's rate so far, or None while it cannot be told."""
        if self._start is None:
            return None
        t0, d0 = self._start
        if done <= d0 or now - t0 < SETTLE or done >= total:
            return None
        return (total - done) * (now - t0) / (done - d0)

    def close(self) -> None:
        """Clear the line (reports follow on stdout and stderr)."""
        if self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
            self._width = 0
