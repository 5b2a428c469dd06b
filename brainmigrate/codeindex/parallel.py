"""Work shared out to forked processes, results given back in a fixed order.

Imported only when a build has enough files to parse that a pool pays for its start-up
(``concurrent.futures`` and ``multiprocessing`` cost 10-15 ms to import).

:func:`run_ordered` runs ``func`` over task arguments in a
:class:`concurrent.futures.ProcessPoolExecutor` (fork start method): unlike
``multiprocessing.Pool``, a worker that dies (killed, out of memory, a crash in a grammar)
fails the run with ``BrokenProcessPool`` instead of leaving it waiting forever. The
workers ignore SIGINT: on Ctrl-C this process cancels the tasks not started, waits for the
running ones (one task each) and re-raises ``KeyboardInterrupt``, so no process is left
behind. On Linux a worker whose parent is killed (SIGTERM, SIGKILL) is killed too.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any


def usable_cpus() -> int:
    """CPUs this process may run on (``os.sched_getaffinity``; ``os.cpu_count`` where that
    is missing) that the machine's other work leaves idle (less the 1-minute load average,
    rounded, where the system tells it), at least 1. A pool's workers on CPUs other
    processes keep busy only wait for them: on 2 cores at a load of 6, a cold check of
    jabref's tree took 8% more CPU time and 20% more wall time with its scan pool."""
    try:
        cpus = max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        cpus = max(1, os.cpu_count() or 1)
    try:
        busy = round(os.getloadavg()[0])
    except (AttributeError, OSError):
        busy = 0
    return max(1, cpus - busy)


def fork_available() -> bool:
    """Whether the fork start method exists here (not on Windows)."""
    import multiprocessing

    return "fork" in multiprocessing.get_all_start_methods()


def _worker_setup(parent: int) -> None:
    """In a worker: ignore SIGINT (the parent handles Ctrl-C), and on Linux be killed when
    the parent dies (SIGKILL cannot be caught: the worker would wait for tasks forever)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # the parent died before that: nothing to work for
        os._exit(1)


def run_ordered(func: Callable[[Any], Any], tasks: Sequence[Any], processes: int) -> Iterator[Any]:
    """``func(task)`` for each of ``tasks`` in ``processes`` forked workers, yielded in the
    order of ``tasks`` (each as soon as it and every earlier one are done).

    ``func`` must be a module-level function; tasks and results are pickled. An exception
    raised by ``func`` is raised here, at its task's place in the order. Raises
    ``concurrent.futures.process.BrokenProcessPool`` when a worker dies.
    """
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    executor = ProcessPoolExecutor(
        max_workers=processes,
        mp_context=get_context("fork"),
        initializer=_worker_setup,
        initargs=(os.getpid(),),
    )
    try:
        futures = [executor.submit(func, task) for task in tasks]
        for future in futures:
            yield future.result()
    finally:
        # Normal end: the workers are idle and exit. Ctrl-C, an error, or a caller that
        # stopped early: tasks not started are dropped, running ones end, then the
        # workers exit; nothing is left running.
        executor.shutdown(wait=True, cancel_futures=True)
