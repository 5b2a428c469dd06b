"""What one command line has done so far, in one object (``state``): the files written
whole, the store committed, whether it was terminated and whether it is settled.

The writers set it as each step lands (``writers`` records an output, the store its
commit); the CLI resets it for each command line and reads it when an interrupt stops
the run, to say in one line what is already whole. Nothing here imports anything, so
every stage may use it.
"""

from __future__ import annotations


class RunState:
    """The state of the command line being run (``state``, reset by ``reset``).

    ``written``: what the run wrote that a user asked for (an ``--output``, an export, a
    notes file ``check --fix`` rewrote, a baseline), as shown paths, in order, each
    recorded with the signals held in the step that put it in place. ``committed``: the
    store the last import transaction committed to (its path as given), else None.
    ``terminated``: SIGTERM stopped the run (exit 143, not Ctrl-C's 130). ``settled``:
    the command has closed everything it opened, so ``__main__.run`` may freeze what is
    left before the interpreter's teardown (``gc.freeze``). ``swept``: the folders
    (device, inode) whose leftovers of killed runs ``writers.sweep`` removed already.
    """

    __slots__ = ("committed", "settled", "swept", "terminated", "written")

    def __init__(self) -> None:
        self.written: list[str] = []
        self.committed: str | None = None
        self.terminated = False
        self.settled = False
        self.swept: set[tuple[int, int]] = set()

    def reset(self) -> None:
        """Forget what an earlier command line did (tests run several in one process)."""
        self.written.clear()
        self.committed = None
        self.terminated = False
        self.settled = False
        self.swept.clear()


#: The one run state of this process.
state = RunState()
