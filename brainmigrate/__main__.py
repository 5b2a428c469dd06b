"""``python -m brainmigrate`` and the ``brainmigrate`` script.

``--version`` alone is answered here, before the command line library is imported (it is
most of a short run's start-up); every other command line goes to ``cli.main``.

Python's cyclic garbage collector is kept from what start-up makes (modules, classes,
functions: they live as long as the process): it is off while the command line library
is imported, and what that made is frozen (``gc.freeze``), so later collections do not
walk it again. A command that ends *settled* (``cli.runtime.settle``, read from
``runstate.state``) freezes everything before the process ends, so the interpreter's last
collections at exit have nothing to walk. Neither changes what a run does or prints.
"""

import sys


def run() -> None:
    """The ``brainmigrate`` command: the same output as ``cli.main`` for every argument."""
    if sys.argv[1:] == ["--version"]:
        from brainmigrate import __version__

        sys.stdout.write(f"brainmigrate, version {__version__}\n")
        sys.stdout.flush()
        sys.exit(0)
    import gc
    import signal

    enabled = gc.isenabled()
    gc.disable()
    try:
        from brainmigrate import cli
        from brainmigrate.cli.runtime import terminate
        from brainmigrate.runstate import state
    finally:
        gc.freeze()
        if enabled:
            gc.enable()
    signal.signal(signal.SIGTERM, terminate)
    _buffered_stdout()
    try:
        cli.main()
    except SystemExit:
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
