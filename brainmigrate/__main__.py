"""``python -m brainmigrate`` and the ``brainmigrate`` script.

``--version`` alone is answered here, before the command line library is imported (it is
most of a short run's start-up); every other command line goes to ``cli.main``. The module
of the command the line names and the library it runs (``cli.load``; every command's module
for a line that names none, such as ``--help``) are imported here too, under the start-up
handlers and with the garbage collector paused, as below.

Python's cyclic garbage collector is kept from what start-up makes (modules, classes,
functions: they live as long as the process): it is off while the command line library
is imported, and what that made is frozen (``gc.freeze``), so later collections do not
walk it again. A command that ends *settled* (``cli.runtime.settle``, read from
``runstate.state``) freezes everything before the process ends, so the interpreter's last
collections at exit have nothing to walk. Neither changes what a run does or prints.

Ctrl-C (or SIGTERM) before ``cli.main`` has its own handlers in place (while click and
the command are still imported, the first ~50 ms) ends the run with the same one line and
exit code as later, never a traceback: while the imports run, the handler (``_early``)
writes that line and ends the process at once (nothing is written yet), so the interrupt
is never an exception that an import's clean-up could swallow (CPython reports one raised
in its module-lock callback as "Exception ignored" and the run went on, exit 0). ``run``
also catches an interrupt around everything it does (``_stopped``), and this module
imports nothing slow before it.
"""

import _signal
import sys


def run() -> None:
    """The ``brainmigrate`` command: the same output as ``cli.main`` for every argument;
    an interrupt before the command's own handlers are in place ends it as ``_stopped``."""
    try:
        _run()
    except KeyboardInterrupt:
        _stopped()
    finally:
        # CPython remembers a KeyboardInterrupt that ended code run from a string (the
        # methods a dataclass, an enum or a namedtuple makes at import are) even when it
        # was caught later, and under ``python -m`` then ends the process by SIGINT, not
        # with the exit code the run chose; running a string clears what it remembers.
        exec("None")


def _stopped() -> None:
    """End a run that Ctrl-C (exit 130) or SIGTERM (143) stopped outside the command's own
    handlers: before the command had begun nothing was written yet, so the line is the
    one ``cli.runtime.interrupted`` prints then (and once something was written, that
    function says what). Written with ``os.write`` (click may be half imported); a second Ctrl-C
    while it is written is ignored."""
    import contextlib
    import os
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    runstate = sys.modules.get("brainmigrate.runstate")
    if runstate and (runstate.state.written or runstate.state.committed):
        # (an interrupt that slipped past the command's handlers late in a run: the run
        # had begun, and its line names what is already written)
        from brainmigrate.cli.runtime import interrupted

        interrupted()
    terminated = bool(runstate and runstate.state.terminated)
    what = "terminated" if terminated else "interrupted"
    line = f"brainmigrate: {what} (a store and every output are written whole or not at all)\n"
    with contextlib.suppress(OSError):
        os.write(2, line.encode())
    sys.exit(143 if terminated else 130)


def _early(signum, frame) -> None:
    """The SIGINT and SIGTERM handler while the command is imported: nothing is written yet,
    so write the one line and end the process now (exit 130, or 143 for SIGTERM)."""
    import os

    term = signum == _signal.SIGTERM
    what = "terminated" if term else "interrupted"
    line = f"brainmigrate: {what} (a store and every output are written whole or not at all)\n"
    try:
        os.write(2, line.encode())
    finally:
        os._exit(143 if term else 130)


def _run() -> None:
    """``run`` without the interrupt handling around it."""
    if sys.argv[1:] == ["--version"]:
        from brainmigrate import __version__

        sys.stdout.write(f"brainmigrate, version {__version__}\n")
        sys.stdout.flush()
        sys.exit(0)
    # the handlers first, through ``_signal`` (loaded with the interpreter): importing
    # ``signal`` (enum, functools: about 4 ms) before them left a window where Ctrl-C landed
    # in an import's module-lock callback, was printed as "Exception ignored", and the
    # run went on to exit 0
    _signal.signal(_signal.SIGINT, _early)
    _signal.signal(_signal.SIGTERM, _early)
    import gc
    import signal

    enabled = gc.isenabled()
    gc.disable()
    try:
        from brainmigrate import cli
        from brainmigrate.cli.runtime import terminate
        from brainmigrate.runstate import state

        cli.load(sys.argv[1:])
    finally:
        gc.freeze()
        if enabled:
            gc.enable()
    signal.signal(signal.SIGTERM, terminate)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    _buffered_stdout()
    try:
        cli.main()
    except SystemExit:
        # the run has ended and said how: a Ctrl-C from now on changes neither
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        if state.settled:
            gc.freeze()
        raise


def _buffered_stdout() -> None:
    """Put a buffer under stdout when it has none (``python -u``, ``PYTHONUNBUFFERED``, as
    many CI images set). Unbuffered, a report written in one piece to a pipe whose reader
    goes away (``| head``) is cut short in silence: the kernel takes part of it, and the
    text layer drops the rest without an error, so the command ended with its own exit code
    instead of 141. A buffer writes all or raises. Every write is still flushed at once
    (``click.echo`` flushes), so nothing waits in the buffer."""
    import io

    raw = getattr(sys.stdout, "buffer", None)
    if isinstance(raw, io.FileIO):
        sys.stdout = io.TextIOWrapper(
            io.BufferedWriter(raw),
            encoding=sys.stdout.encoding,
            errors=sys.stdout.errors,
            write_through=True,
        )


if __name__ == "__main__":
    run()
